"""Prepared-data and oracle files: ``.npz`` arrays plus a JSON ``meta`` member, written atomically, checked when read.

Every file under ``data/processed/`` and ``data/oracles/`` has this form and is
built by a Snakemake rule from its path alone, so a missing file is an error that
names the file and the command that builds it.  Light on purpose (numpy only):
environments read these files in every simulation job.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ConfigError, CorruptFileError
from ..storage.resultio import atomic_write_bytes
from ..storage.zipcheck import check_layout

#: the key of a file's meta that records the CRC-32 of each array member (removed by :func:`load_npz`)
CRC_KEY = "_crc32"


#: where a job's data inputs lie, by the path the configuration names them (:func:`use_inputs`)
_LOCATED: dict[tuple[str, ...], str] = {}


def use_inputs(paths: Sequence[str | os.PathLike]) -> None:
    """Read the data files named in the configuration from the job's own input files ``paths``.

    Snakemake hands a job its inputs where they are available to it: under a default storage
    provider (executors without a shared file system) that is a local copy of the stored file,
    ``.snakemake/storage/<provider>/<prefix>/data/processed/...``, not ``data/processed/...``.
    An input whose path ends with the configured path (component by component) is read instead.
    """
    for path in paths:
        parts = Path(os.path.normpath(path)).parts
        for start in range(len(parts)):
            _LOCATED.setdefault(parts[start:], str(path))


def located(path: str | os.PathLike) -> str:
    """The job's input file for the configured ``path`` (:func:`use_inputs`), else ``path`` itself."""
    return _LOCATED.get(Path(os.path.normpath(path)).parts, str(path)) if _LOCATED else str(path)


def rule_target(path: str | os.PathLike) -> str | None:
    """The path (relative to the project) by which a rule of the pipeline builds the file that the
    configuration names ``path``, or ``None`` where no rule builds it (a file the user supplies)."""
    from ..params import data_file_path
    from .paths import buildable

    target = data_file_path(str(path))
    return target if target is not None and buildable(target) else None


def rebuild_advice(path: str | os.PathLike, what: str, advice: str | None = None, missing: bool = False) -> str:
    """What to do about a missing or damaged file that the configuration names ``path``: the ``snakemake``
    command that (re)builds it where a rule does, else ``advice`` (what the reader knows, e.g. the config
    key naming it), else replacing it."""
    target = rule_target(path)
    if target is not None:
        return f"{'build it' if missing else 'delete it and rebuild it'} with `snakemake --cores 1 {target}`"
    if advice:
        return advice
    return f"no rule of the pipeline builds it: {'put' if missing else 'replace it with'} a valid {what}" + (
        " there, or point the config at one" if missing else ", or point the config at one"
    )


def save_npz(path: str | os.PathLike, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> None:
    """Write ``arrays`` and ``meta`` (as sorted JSON) to an uncompressed ``.npz``, atomically.  The meta
    records the CRC-32 of every array member (under :data:`CRC_KEY`), so that :func:`load_npz` refuses
    a member replaced by another array (which zip's own CRC, stored with it, does not catch)."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    with zipfile.ZipFile(buf) as zf:
        crcs = {info.filename: info.CRC for info in zf.infolist()}
    buf = io.BytesIO()
    np.savez(buf, **arrays, meta=np.array(json.dumps({**meta, CRC_KEY: crcs}, sort_keys=True)))
    atomic_write_bytes(path, buf.getvalue())


def load_npz(
    path: str | os.PathLike,
    what: str,
    required: Sequence[str] = (),
    expect: Mapping[str, Any] | None = None,
    advice: str | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Arrays and meta of a file written by :func:`save_npz`, checked.

    ``what`` says what the file is (for the messages).  A missing file is a
    :class:`~banditbench.errors.ConfigError`; a file that is truncated or garbled (every
    member's CRC-32 is checked as it is read), lacks one of the ``required`` arrays, holds
    a non-finite number, or whose meta differs from ``expect`` (e.g. another dataset's or
    another option set's file copied over it) is a :class:`~banditbench.errors.CorruptFileError`.
    Each names the file and what to do (:func:`rebuild_advice`: the command that rebuilds it where a rule
    of the pipeline builds it, else ``advice``).
    """
    configured, path = path, located(path)  # the advice names the configured path: the rule's target
    if Path(path).is_dir():
        raise ConfigError(f"{path}: is a directory, not a {what}; {rebuild_advice(configured, what, advice)}")
    if not Path(path).is_file():
        raise ConfigError(f"{path}: {what} does not exist; {rebuild_advice(configured, what, advice, missing=True)}")
    rebuild = rebuild_advice(configured, what, advice)
    try:
        arrays, meta = _read(path)
    except Exception as err:  # BadZipFile, CRC errors, zlib.error, short reads, bad headers, bad JSON, ...
        raise CorruptFileError(f"{path}: {what} is unreadable ({type(err).__name__}: {err}); {rebuild}") from None
    missing = sorted(set(required) - set(arrays))
    if missing:
        raise CorruptFileError(f"{path}: {what} lacks {missing}; {rebuild}")
    wrong = {k: meta.get(k) for k, v in (expect or {}).items() if meta.get(k) != v}
    if wrong:
        raise CorruptFileError(
            f"{path}: {what} was built for {wrong}, not for "
            f"{ {k: expect[k] for k in wrong} } (a file copied over it?); {rebuild}"
        )
    for name, arr in arrays.items():
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            raise CorruptFileError(f"{path}: {what} holds non-finite values in {name!r}; {rebuild}")
    return arrays, meta


def _read(path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Arrays and meta of an ``.npz``, its layout (:func:`banditbench.storage.zipcheck.check_layout`), every
    member's CRC-32 and the recorded CRCs (files written before they were recorded have none) checked."""
    with open(path, "rb") as fh:
        check_layout(fh, os.fstat(fh.fileno()).st_size)
        fh.seek(0)
        with np.load(fh, allow_pickle=False) as data:
            names = data.zip.namelist()
            if len(set(names)) != len(names):
                raise ValueError(f"duplicate member names {sorted(names)}")
            arrays = {k: data[k] for k in data.files if k != "meta"}
            meta = json.loads(str(data["meta"])) if "meta" in data.files else {}
            crcs = {info.filename: info.CRC for info in data.zip.infolist() if info.filename != "meta.npy"}
    if not isinstance(meta, dict):
        raise ValueError(f"meta is a JSON {type(meta).__name__}, not an object")
    recorded = meta.pop(CRC_KEY, None)
    if recorded is not None and recorded != crcs:
        changed = sorted(set(recorded) ^ set(crcs) | {k for k in set(recorded) & set(crcs) if recorded[k] != crcs[k]})
        raise ValueError(f"members {changed} are not those written with it (replaced, added or removed)")
    return arrays, meta
