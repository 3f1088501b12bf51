"""Log files of the pipeline's script rules: what ran, what it said, and why it failed.

Snakemake tells a failed rule's user to "check log file(s)"; :func:`rule_log` makes
that log hold the answer: the ``banditbench`` that ran (version and path, so a run
can never silently mix two code versions) and, when the rule fails, the full
traceback (the shell rules' ``2> {log}`` gives the same for ``banditbench run-one``).  An error
whose message says all there is to say (``quiet``: a download that no source could give) is written
to the log and to the rule's output as that message, without a traceback, and ends the script with
exit status 1; so is a write that failed because the disk is full or read-only
(:func:`storage_problem`).
"""

from __future__ import annotations

import errno
import logging
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .. import __version__

log = logging.getLogger("banditbench")

#: set ("1") by the workflow when banditbench's console shows the run (src/snakemake_logger_plugin_banditbench):
#: it shows a failed job's one-line error from the job's log, so the job does not print it to its standard
#: output as well (which Snakemake's own console shows, and a terminal would show twice)
CONSOLE_VAR = "BANDITBENCH_CONSOLE"


#: why a write failed when the storage, not the code, is at fault
_STORAGE_ERRORS = {
    errno.ENOSPC: ("no space left on device (the disk is full)", "free space"),
    errno.EDQUOT: ("disk quota exceeded", "free space"),
    errno.EROFS: ("read-only file system", "make it writable"),
}


def storage_problem(err: BaseException, ours: bool = True) -> str | None:
    """One line for a write that failed because the disk is full (or over quota) or read-only, saying that
    a rerun resumes and, for the pipeline's own writes (``ours``), that nothing half-written is kept;
    ``None`` for any other error.  Not ``ours``: a write of Snakemake's (a job's benchmark file, removing a
    failed job's outputs), which the console words with this line (src/snakemake_logger_plugin_banditbench)."""
    if not isinstance(err, OSError) or err.errno not in _STORAGE_ERRORS:
        return None
    why, fix = _STORAGE_ERRORS[err.errno]
    where = f"cannot write {err.filename}" if err.filename else "cannot write"
    whole = (
        "; nothing half-written is kept (every file is written under a temporary name and renamed when whole)"
        if ours
        else ""
    )
    return f"{where}: {why}{whole}: {fix}, then run snakemake again, which resumes where it stopped"


def provenance() -> str:
    """One line naming the running banditbench: version and source folder."""
    return f"banditbench {__version__} from {Path(__file__).resolve().parents[1]}"


@contextmanager
def rule_log(
    path: str | os.PathLike, rule: str, quiet: tuple[type[BaseException], ...] = ()
) -> Iterator[logging.Logger]:
    """Send the block's logging to ``path`` (created with its folder), starting with :func:`provenance`;
    an exception leaving the block is logged with its traceback, then re-raised, except one of the
    ``quiet`` types: its message is logged and printed to stderr, and the process exits with status 1."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(
        filename=path, level=logging.INFO, force=True, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    log.info("rule %s: %s", rule, provenance())
    try:
        yield log
    except quiet as err:
        log.error("rule %s failed: %s", rule, err)
        print(err, file=sys.stderr)
        raise SystemExit(1) from None
    except OSError as err:
        message = storage_problem(err)  # a full or read-only disk: one line, not a traceback
        if message is None:
            log.exception("rule %s failed", rule)
            raise
        log.error("rule %s failed: %s", rule, message)
        print(f"rule {rule}: {message}", file=sys.stderr)
        raise SystemExit(1) from None
    except BaseException:
        log.exception("rule %s failed", rule)
        raise
