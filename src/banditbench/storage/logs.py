"""Log files of the pipeline's script rules: what ran, what it said, and why it failed.

Snakemake tells a failed rule's user to "check log file(s)"; :func:`rule_log` makes
that log hold the answer: the ``banditbench`` that ran (version and path, so a run
can never silently mix two code versions) and, when the rule fails, the full
traceback (the shell rules' ``2> {log}`` gives the same for ``banditbench run-one``).
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .. import __version__

log = logging.getLogger("banditbench")


def provenance() -> str:
    """One line naming the running banditbench: version and source folder."""
    return f"banditbench {__version__} from {Path(__file__).resolve().parents[1]}"


@contextmanager
def rule_log(path: str | os.PathLike, rule: str) -> Iterator[logging.Logger]:
    """Send the block's logging to ``path`` (created with its folder), starting with :func:`provenance`;
    an exception leaving the block is logged with its traceback, then re-raised."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(
        filename=path, level=logging.INFO, force=True, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    log.info("rule %s: %s", rule, provenance())
    try:
        yield log
    except BaseException:
        log.exception("rule %s failed", rule)
        raise
