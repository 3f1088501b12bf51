"""Prepared-data and oracle files: ``.npz`` arrays plus a JSON ``meta`` member, written atomically.

Every file under ``data/processed/`` and ``data/oracles/`` has this form and is
built by a Snakemake rule from its path alone, so a missing file is an error that
names the file and the command that builds it.  Light on purpose (numpy only):
environments read these files in every simulation job.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ConfigError
from ..resultio import atomic_write_bytes


def save_npz(path: str | os.PathLike, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> None:
    """Write ``arrays`` and ``meta`` (as sorted JSON) to an uncompressed ``.npz``, atomically."""
    buf = io.BytesIO()
    np.savez(buf, **arrays, meta=np.array(json.dumps(meta, sort_keys=True)))
    atomic_write_bytes(path, buf.getvalue())


def load_npz(path: str | os.PathLike, what: str,
             required: Sequence[str] = ()) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Arrays and meta of a file written by :func:`save_npz`.

    ``what`` says what the file is (for the messages); a missing file, or one without
    the ``required`` arrays, is a :class:`~banditbench.errors.ConfigError` naming it.
    """
    if not Path(path).is_file():
        raise ConfigError(f"{path}: {what} does not exist; build it with `snakemake --cores 1 {path}` "
                          f"(the data rules of workflow/rules/)")
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files if k != "meta"}
        meta = json.loads(str(data["meta"])) if "meta" in data.files else {}
    missing = sorted(set(required) - set(arrays))
    if missing:
        raise ConfigError(f"{path}: {what} lacks {missing}; delete it and rebuild it with `snakemake {path}`")
    return arrays, meta
