"""Per-job result files: a deterministic ``.npz`` written atomically, checked when read.

A result holds one float64 array per logged per-round metric, a JSON ``meta``
member (resolved configuration cell, package version, seed, environment
summary) and a ``checksum`` member: the sha256 of these.  They are byte-identical
for the same configuration and seed: zip entries carry a fixed timestamp.  The
members that differ between two runs of the same job (:data:`VARYING`) are a JSON
``timing`` member (wall time), a JSON ``provenance`` member (what produced the result:
commit, versions, CPU, BLAS kernel, host; :mod:`banditbench.storage.provenance`) and
``run_checksum``, the sha256 of ``checksum``, ``timing`` and ``provenance``, so that a
change to any member is caught.  The file
is written to a temporary name in the same folder and renamed into place, so a
killed job never leaves a truncated result, and it gets the permissions the umask
gives any new file (not ``mkstemp``'s 0600).

:func:`load_result` refuses a file that is truncated or garbled (it names the file
and what is wrong) or whose checksum does not match, and, given the run it should
hold (:func:`run_identity`), a file that holds another run — e.g. seed 0's result
copied over seed 1's.  :func:`summarize_files` reads many results' provenance members
into a :class:`banditbench.storage.provenance.Summary`.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from ..errors import CorruptFileError
from .provenance import Summary, collect
from .zipcheck import check_layout, read_member

_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
META, TIMING, CHECKSUM = "meta", "timing", "checksum"
#: the seconds a result's ``timing`` member records for its seed's whole run (the process CPU time and the wall
#: time, :mod:`banditbench.simulation.runner`; a seed-batched block's shared equally among its members)
TIMED_SECONDS = ("cpu_time_s", "wall_time_s")
PROVENANCE, RUN_CHECKSUM = "provenance", "run_checksum"
#: the members that differ between two runs of the same job (all others are byte-identical)
VARYING = (TIMING, PROVENANCE, RUN_CHECKSUM)
#: the cell keys that say which run a result is (with the budget as its label)
IDENTITY = ("experiment", "algorithm", "delay", "budget", "seed")
#: the version of what a result file holds and how: part of every per-seed result's address
#: (:func:`banditbench.storage.cells.cell_digest`), so a new version never reads or replaces an older one's
#: results.  2: results addressed by their content (``<budget>/<cell>/<seed>.npz``).  3: the NDB family trains its
#: networks in float32 (``precision``) and NVLDB's training runs in place, so a result differs from format 2's in
#: its last bits (issue 48)
RESULT_FORMAT = 3


#: from this many result files on, worker processes read them (fewer: a worker's start costs more than it saves)
PARALLEL_READ_FROM = 200
#: the ``{budget}`` label of an experiment without a budget (:func:`budget_label`)
NO_BUDGET = "none"


def reading_threads(n_runs: int, most: int = 4) -> int:
    """Cores an aggregation job asks for: ``most`` when its ``n_runs`` result files are read by worker
    processes (from :data:`PARALLEL_READ_FROM` on), else 1 (one process reads them all)."""
    return most if n_runs >= PARALLEL_READ_FROM else 1


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


def budget_label(budget: float | None) -> str:
    """The ``{budget}`` wildcard and table label of a budget (``none`` without one).

    Injective and always a valid wildcard value: a whole number is written in full
    (``1000000``, not ``1e+06``), any other number by its shortest round-trip
    representation without ``+`` (``0.5``, ``1e-07``, ``1.5e20``).
    """
    if budget is None:
        return NO_BUDGET
    value = float(budget)
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value).replace("+", "")


def run_identity(cell: Mapping[str, Any]) -> dict[str, str]:
    """Which run a resolved cell is: experiment, algorithm, delay and budget labels, seed (as strings,
    as they appear in a result's path)."""
    return {
        "experiment": str(cell["experiment"]),
        "algorithm": str(cell["algorithm"]),
        "delay": str(cell["delay_label"]),
        "budget": budget_label(cell["budget"]),
        "seed": str(cell["seed"]),
    }


def identity_from_path(path: str | os.PathLike) -> dict[str, str]:
    """The run a result path names: ``.../<experiment>/<algorithm>/<delay>/<budget>/<cell>/<seed>.npz``
    (:data:`banditbench.storage.cells.CELL_DIR`; the ``<cell>`` digest says no label)."""
    parts = Path(path).with_suffix("").parts[-6:]
    return dict(zip(IDENTITY, parts[:4] + parts[5:]))


def _json_bytes(value: Any) -> bytes:
    return _npy_bytes(np.frombuffer(json.dumps(value, sort_keys=True).encode(), dtype=np.uint8))


def _run_digest(members: Mapping[str, bytes]) -> bytes:
    return _npy_bytes(
        np.frombuffer(_digest({k: members[k] for k in (CHECKSUM, TIMING, PROVENANCE)}).encode(), dtype=np.uint8)
    )


def save_result(
    path,
    series: Mapping[str, np.ndarray],
    meta: Mapping[str, Any],
    timing: Mapping[str, Any],
    provenance: Mapping[str, Any] | None = None,
) -> None:
    """Write a result file; ``provenance`` defaults to this process's (:func:`banditbench.storage.provenance.collect`)."""
    if provenance is None:
        provenance = collect()
    members = {name: _npy_bytes(np.asarray(arr, dtype=np.float64)) for name, arr in sorted(series.items())}
    members[META] = _json_bytes(meta)
    members[CHECKSUM] = _npy_bytes(np.frombuffer(_digest(members).encode(), dtype=np.uint8))
    members[TIMING] = _json_bytes(timing)
    members[PROVENANCE] = _json_bytes(provenance)
    members[RUN_CHECKSUM] = _run_digest(members)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    atomic_write_bytes(path, buf.getvalue())


def _read_members(path, only: frozenset | None = None) -> dict[str, bytes]:
    """The members of a result file (those named in ``only``), each checked (size, CRC-32, the end of
    its compressed data), after a check of the file's layout (:mod:`banditbench.storage.zipcheck`); any damage
    is a :class:`~banditbench.errors.CorruptFileError` naming the file."""
    try:
        with open(path, "rb") as fh:
            entries = check_layout(fh, os.fstat(fh.fileno()).st_size)
            if entries is None:  # over 4 GiB: no result is
                raise ValueError("a zip64 file, not a result file")
            names = [entry.name for entry in entries]
            if len(set(names)) != len(names):
                raise ValueError(f"duplicate member names {sorted(names)}")
            return {
                entry.name.removesuffix(".npy"): read_member(fh, entry)
                for entry in entries
                if only is None or entry.name.removesuffix(".npy") in only
            }
    except FileNotFoundError:
        raise CorruptFileError(f"{path}: result file does not exist") from None
    except Exception as err:  # truncated, garbled: BadZipFile, zlib.error, struct.error, NotImplementedError, ...
        raise CorruptFileError(
            f"{path}: unreadable result file ({type(err).__name__}: {err}); delete it and re-run its job"
        ) from None


#: the headers numpy writes for the 1-d arrays of a result (float64 series, uint8 JSON and digests):
#: read without numpy's general header parser (a Python literal_eval per member, a third of reading a result)
_HEADER = re.compile(rb"\{'descr': '(<f8|\|u1)', 'fortran_order': False, 'shape': \((\d+),\), \} *\n")
_ITEMSIZE = {b"<f8": 8, b"|u1": 1}


def _array(path, name: str, data: bytes) -> np.ndarray:
    if data[:8] == b"\x93NUMPY\x01\x00" and len(data) >= 10:
        end = 10 + int.from_bytes(data[8:10], "little")
        match = _HEADER.fullmatch(data, 10, end)
        if match and len(data) - end == _ITEMSIZE[match.group(1)] * int(match.group(2)):
            return np.frombuffer(data, dtype=match.group(1).decode(), offset=end).copy()
    try:  # any other header, or a size that does not match: numpy's reader (and its errors)
        return np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
    except Exception as err:  # a bad header, a short read, an absurd shape
        raise CorruptFileError(
            f"{path}: member {name!r} of the result file is not an array ({type(err).__name__}: {err})"
        ) from None


def load_result(path, expect: Mapping[str, str] | None = None) -> tuple[dict[str, np.ndarray], dict, dict]:
    """Return ``(series, meta, timing)`` of a result file, checked (:func:`load_run` without the provenance)."""
    return load_run(path, expect, _provenance_too=False)[:3]


def load_run(
    path, expect: Mapping[str, str] | None = None, _provenance_too: bool = True
) -> tuple[dict[str, np.ndarray], dict, dict, dict | None]:
    """Return ``(series, meta, timing, provenance)`` of a result file, checked, from one read of it
    (``provenance`` as :func:`load_provenance` reads it: None for a file written before results recorded it).

    A :class:`~banditbench.errors.CorruptFileError` names the file when it cannot be read,
    lacks a member, fails its checksum (or ``run_checksum``: timing and provenance), has series
    of another length than its horizon or, with ``expect`` (:func:`run_identity` of the run it should hold),
    holds another run.
    """
    members = _read_members(path)
    missing = sorted({META, TIMING, CHECKSUM} - set(members))
    if missing:
        raise CorruptFileError(
            f"{path}: result file lacks {missing} (written by an older banditbench, or "
            f"not a result file); delete it and re-run its job"
        )
    _check_run_digest(path, members)
    members.pop(RUN_CHECKSUM, None)  # checked: not part of the returned result
    prov_bytes = members.pop(PROVENANCE, None)
    stored = _array(path, CHECKSUM, members.pop(CHECKSUM)).tobytes().decode(errors="replace")
    timing_bytes = members.pop(TIMING)
    if _digest(members) != stored:
        raise CorruptFileError(
            f"{path}: checksum mismatch (the file was changed after its job wrote it); delete it and re-run its job"
        )
    try:
        meta = json.loads(_array(path, META, members.pop(META)).tobytes().decode())
        timing = json.loads(_array(path, TIMING, timing_bytes).tobytes().decode())
        cell = meta["cell"]
        found = run_identity(cell)
        horizon = int(cell["horizon"])
    except CorruptFileError:
        raise
    except Exception as err:  # not JSON, not UTF-8, not a cell: KeyError, TypeError, UnicodeDecodeError, ...
        raise CorruptFileError(f"{path}: result metadata unreadable ({type(err).__name__}: {err})") from None
    if expect is not None:
        wrong = {k: (found[k], str(v)) for k, v in expect.items() if found.get(k) != str(v)}
        if wrong:
            said = ", ".join(f"{k} {got!r} instead of {want!r}" for k, (got, want) in wrong.items())
            raise CorruptFileError(
                f"{path}: holds another run ({said}), e.g. a file copied over it; delete it and re-run its job"
            )
    series = {name: _array(path, name, data) for name, data in members.items()}
    bad = sorted(name for name, arr in series.items() if arr.shape != (horizon,))
    if bad:
        raise CorruptFileError(f"{path}: series {bad} do not have the run's {horizon} rounds")
    return series, meta, timing, (_provenance(path, prov_bytes) if _provenance_too and prov_bytes else None)


def _check_run_digest(path, members: Mapping[str, bytes]) -> None:
    """Check ``run_checksum`` (over ``checksum``, ``timing`` and ``provenance``); a file written before
    results recorded their provenance has neither member."""
    has = [name for name in (PROVENANCE, RUN_CHECKSUM) if name in members]
    if len(has) == 1:
        lacks = RUN_CHECKSUM if has == [PROVENANCE] else PROVENANCE
        raise CorruptFileError(f"{path}: result file lacks [{lacks!r}]; delete it and re-run its job")
    if has and members[RUN_CHECKSUM] != _run_digest(members):
        raise CorruptFileError(
            f"{path}: checksum mismatch in its timing or provenance (the file was changed "
            f"after its job wrote it); delete it and re-run its job"
        )


def load_provenance(path) -> dict | None:
    """The ``provenance`` member of a result file (:mod:`banditbench.storage.provenance`), checked against
    ``run_checksum``; ``None`` for a file written before results recorded it.  Reads only the small
    members, not the series (whose own checksum :func:`load_result` checks)."""
    members = _read_members(path, frozenset((CHECKSUM, TIMING, PROVENANCE, RUN_CHECKSUM)))
    missing = sorted({TIMING, CHECKSUM} - set(members))
    if missing:
        raise CorruptFileError(
            f"{path}: result file lacks {missing} (written by an older banditbench, or "
            f"not a result file); delete it and re-run its job"
        )
    _check_run_digest(path, members)
    if PROVENANCE not in members:
        return None
    return _provenance(path, members[PROVENANCE])


def stored_cell_and_run(path) -> tuple[dict | None, str | None]:
    """The cell a result file holds and the run that made it (its provenance's ``run``), read from its small
    members without the series: ``(None, None)`` for a file that cannot be read (the pre-job check moves those
    aside), a run of ``None`` for a file that records none."""
    try:
        members = _read_members(path, frozenset((META, PROVENANCE)))
        cell = json.loads(_array(path, META, members[META]).tobytes().decode())["cell"]
        prov = _provenance(path, members[PROVENANCE]) if PROVENANCE in members else {}
    except Exception:  # damaged: not this check's to name
        return None, None
    return cell, prov.get("run")


def _provenance(path, data: bytes) -> dict:
    """The ``provenance`` member's JSON object (its bytes checked by ``run_checksum`` already)."""
    try:
        prov = json.loads(_array(path, PROVENANCE, data).tobytes().decode())
    except (ValueError, TypeError) as err:
        raise CorruptFileError(f"{path}: provenance unreadable ({type(err).__name__}: {err})") from None
    if not isinstance(prov, dict):
        raise CorruptFileError(f"{path}: provenance is not a JSON object")
    return prov


def summarize_files(
    paths: Iterable[str | os.PathLike], root: str | os.PathLike | None = None
) -> tuple[Summary, list[str]]:
    """Read the provenance member of each result file (:func:`load_provenance`, checked, no series
    read); return the :class:`banditbench.storage.provenance.Summary` and the messages of damaged files.

    A file's experiment is the folder its path names
    (``<experiment>/<algorithm>/<delay>/<budget>/<cell>/<seed>.npz``), below ``root`` if given.
    """
    summary, damaged = Summary(), []
    for path in paths:
        try:
            prov = load_provenance(path)
        except CorruptFileError as err:
            damaged.append(str(err))
            continue
        parts = Path(path).relative_to(root).parts if root is not None else Path(path).parts
        summary.add(prov, parts[-6] if len(parts) >= 6 else "")
    return summary, damaged
