"""Per-job result files: a deterministic ``.npz`` written atomically.

A result holds one float64 array per logged per-round metric, a JSON ``meta``
member (resolved configuration cell, package version, seed, environment
summary) and a JSON ``timing`` member (wall time).  Everything but ``timing``
is byte-identical for the same configuration and seed: zip entries carry a
fixed timestamp.  The file is written to a temporary name in the same folder
and renamed into place, so a killed job never leaves a truncated result.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
META, TIMING = "meta", "timing"


def _npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return buf.getvalue()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_result(path, series: Mapping[str, np.ndarray], meta: Mapping[str, Any], timing: Mapping[str, Any]) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        members = {name: np.asarray(arr, dtype=np.float64) for name, arr in sorted(series.items())}
        members[META] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
        members[TIMING] = np.frombuffer(json.dumps(timing, sort_keys=True).encode(), dtype=np.uint8)
        for name, arr in members.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, _npy_bytes(arr))
    atomic_write_bytes(path, buf.getvalue())


def load_result(path) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, Any]]:
    """Return ``(series, meta, timing)`` of a result file."""
    with np.load(path, allow_pickle=False) as z:
        series = {k: z[k] for k in z.files if k not in (META, TIMING)}
        meta = json.loads(z[META].tobytes().decode())
        timing = json.loads(z[TIMING].tobytes().decode())
    return series, meta, timing
