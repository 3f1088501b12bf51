"""Per-job result files: a deterministic ``.npz`` written atomically, checked when read.

A result holds one float64 array per logged per-round metric, a JSON ``meta``
member (resolved configuration cell, package version, seed, environment
summary), a JSON ``timing`` member (wall time) and a ``checksum`` member: the
sha256 of every other member but ``timing``.  Everything but ``timing`` is
byte-identical for the same configuration and seed: zip entries carry a fixed
timestamp.  The file is written to a temporary name in the same folder and
renamed into place, so a killed job never leaves a truncated result, and it gets
the permissions the umask gives any new file (not ``mkstemp``'s 0600).

:func:`load_result` refuses a file that is truncated or garbled (it names the file
and what is wrong) or whose checksum does not match, and, given the run it should
hold (:func:`run_identity`), a file that holds another run — e.g. seed 0's result
copied over seed 1's.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .errors import CorruptFileError

_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
META, TIMING, CHECKSUM = "meta", "timing", "checksum"
#: the cell keys that say which run a result is (with the budget as its label)
IDENTITY = ("experiment", "algorithm", "delay", "budget", "seed")


def _npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return buf.getvalue()


def umask_mode() -> int:
    """The permission bits the process's umask gives a new file (``0o666 & ~umask``)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to a temporary file next to ``path`` and rename it into place (umask permissions)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, umask_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _digest(members: Mapping[str, bytes]) -> str:
    """sha256 over the named members (sorted), each as ``name``, its length and its bytes."""
    h = hashlib.sha256()
    for name in sorted(members):
        h.update(name.encode() + b"\0" + len(members[name]).to_bytes(8, "big") + members[name])
    return h.hexdigest()


def run_identity(cell: Mapping[str, Any]) -> dict[str, str]:
    """Which run a resolved cell is: experiment, algorithm, delay and budget labels, seed (as strings,
    as they appear in a result's path)."""
    from .config import budget_label

    return {"experiment": str(cell["experiment"]), "algorithm": str(cell["algorithm"]),
            "delay": str(cell["delay_label"]), "budget": budget_label(cell["budget"]), "seed": str(cell["seed"])}


def identity_from_path(path: str | os.PathLike) -> dict[str, str]:
    """The run a result path names: ``.../<experiment>/<algorithm>/<delay>/<budget>/<seed>.npz``."""
    parts = Path(path).with_suffix("").parts[-5:]
    return dict(zip(IDENTITY, parts))


def save_result(path, series: Mapping[str, np.ndarray], meta: Mapping[str, Any], timing: Mapping[str, Any]) -> None:
    members = {name: _npy_bytes(np.asarray(arr, dtype=np.float64)) for name, arr in sorted(series.items())}
    members[META] = _npy_bytes(np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8))
    members[CHECKSUM] = _npy_bytes(np.frombuffer(_digest(members).encode(), dtype=np.uint8))
    members[TIMING] = _npy_bytes(np.frombuffer(json.dumps(timing, sort_keys=True).encode(), dtype=np.uint8))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    atomic_write_bytes(path, buf.getvalue())


def _read_members(path) -> dict[str, bytes]:
    try:
        with zipfile.ZipFile(path) as zf:
            return {name.removesuffix(".npy"): zf.read(name) for name in zf.namelist()}
    except FileNotFoundError:
        raise CorruptFileError(f"{path}: result file does not exist") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError) as err:   # truncated, garbled
        raise CorruptFileError(f"{path}: unreadable result file ({type(err).__name__}: {err})") from None


def _array(path, name: str, data: bytes) -> np.ndarray:
    try:
        return np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
    except (ValueError, EOFError, OSError) as err:
        raise CorruptFileError(f"{path}: member {name!r} of the result file is not an array ({err})") from None


def load_result(path, expect: Mapping[str, str] | None = None) -> tuple[dict[str, np.ndarray], dict, dict]:
    """Return ``(series, meta, timing)`` of a result file, checked.

    A :class:`~banditbench.errors.CorruptFileError` names the file when it cannot be read,
    lacks a member, fails its checksum, has series of another length than its horizon or,
    with ``expect`` (:func:`run_identity` of the run it should hold), holds another run.
    """
    members = _read_members(path)
    missing = sorted({META, TIMING, CHECKSUM} - set(members))
    if missing:
        raise CorruptFileError(f"{path}: result file lacks {missing} (written by an older banditbench, or "
                               f"not a result file); delete it and re-run its job")
    stored = _array(path, CHECKSUM, members.pop(CHECKSUM)).tobytes().decode(errors="replace")
    timing_bytes = members.pop(TIMING)
    if _digest(members) != stored:
        raise CorruptFileError(f"{path}: checksum mismatch (the file was changed after its job wrote it); "
                               f"delete it and re-run its job")
    try:
        meta = json.loads(_array(path, META, members.pop(META)).tobytes().decode())
        timing = json.loads(_array(path, TIMING, timing_bytes).tobytes().decode())
        cell = meta["cell"]
        found = run_identity(cell)
        horizon = int(cell["horizon"])
    except (ValueError, KeyError, TypeError) as err:
        raise CorruptFileError(f"{path}: result metadata unreadable ({type(err).__name__}: {err})") from None
    if expect is not None:
        wrong = {k: (found[k], str(v)) for k, v in expect.items() if found.get(k) != str(v)}
        if wrong:
            said = ", ".join(f"{k} {got!r} instead of {want!r}" for k, (got, want) in wrong.items())
            raise CorruptFileError(f"{path}: holds another run ({said}), e.g. a file copied over it; "
                                   f"delete it and re-run its job")
    series = {name: _array(path, name, data) for name, data in members.items()}
    bad = sorted(name for name, arr in series.items() if arr.shape != (horizon,))
    if bad:
        raise CorruptFileError(f"{path}: series {bad} do not have the run's {horizon} rounds")
    return series, meta, timing
