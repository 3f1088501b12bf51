"""Checksums of the raw data files the pipeline reads, cached by size and modification time.

* Raw files (downloads under ``data/raw/``) are checked against their registered
  checksum every time the pipeline uses them (:func:`verify_raw`: preprocessing,
  oracle fitting, the fetcher's cache), so a file edited after its download is
  never used.  A file whose checksum is not published is checked against the one pinned in
  the config's ``dataset_checksums`` (``checksums``), and is not read without one.
  Hashing is paid once per version of a file: the digest is cached
  in ``data/.checksums.json`` with the file's size and modification time.
* The pre-job check of prepared and result files, which uses this module's cache, is
  :mod:`banditbench.data.quarantine`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable, Mapping

from ..errors import ConfigError, CorruptFileError
from ..storage.resultio import atomic_write_bytes
from .catalog import DATASETS, PIN_KEY, RemoteFile, expected_hash

#: the cache of verified files, inside the project's data folder (created only where data/ exists)
CACHE = Path("data/.checksums.json")


class Cache:
    """Values computed from a file (its digest, "verified"), valid while its size and mtime stay;
    kept in ``file`` (default :data:`CACHE`) under each file's ``key`` (default: its resolved path)."""

    def __init__(self, file: Path | None = None, key: Callable[[Path], str] | None = None) -> None:
        self.file = CACHE if file is None else file
        self.key = key or (lambda path: str(path.resolve()))
        self.entries = self._read()
        self.changed: dict[str, dict] = {}

    def _read(self) -> dict:
        try:
            return json.loads(self.file.read_text())
        except (OSError, ValueError):
            return {}

    def get(self, path: Path, kind: str, compute: Callable[[], str]) -> str:
        stat = path.stat()
        key = self.key(path)
        entry = self.entries.get(key, {})
        if entry.get("size") != stat.st_size or entry.get("mtime_ns") != stat.st_mtime_ns:
            entry = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
        if kind not in entry:
            entry = {**entry, kind: compute()}
            self.entries[key] = self.changed[key] = entry
        return entry[kind]

    def save(self) -> None:
        """Merge what was computed into the cache file (re-read: parallel jobs may have added entries)."""
        if self.changed and self.file.parent.is_dir():
            merged = {k: v for k, v in {**self._read(), **self.changed}.items() if os.path.exists(k)}
            atomic_write_bytes(self.file, json.dumps(merged, indent=0, sort_keys=True).encode())
            self.changed = {}


def file_hash(path: str | os.PathLike, alg: str) -> str:
    """``alg`` digest (hex) of the file at ``path``, computed."""
    h = hashlib.new(alg)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_digest(path: str | os.PathLike, alg: str, cache: Cache | None = None) -> str:
    """``alg`` digest (hex) of the file at ``path``, cached by size and modification time."""
    own = cache is None
    cache = cache or Cache()
    digest = cache.get(Path(path), alg, lambda: file_hash(path, alg))
    if own:
        cache.save()
    return digest


def registered(path: str | os.PathLike) -> tuple[str, RemoteFile] | None:
    """The registered (dataset, file) whose registry path ends the given path, if any."""
    posix = Path(path).as_posix()
    for dataset in DATASETS.values():
        for remote in dataset.files:
            if posix == remote.path or posix.endswith("/" + remote.path):
                return dataset.name, remote
    return None


def verify_raw(path: str | os.PathLike, cache: Cache | None = None, checksums: Mapping[str, str] | None = None) -> None:
    """Check a raw file against its registered checksum (or the one ``checksums``, the config's
    ``dataset_checksums``, pins); a :class:`~banditbench.errors.CorruptFileError` names the file, the
    dataset and both checksums."""
    found = registered(path)
    if found is None:
        raise ConfigError(f"{path}: not a registered raw file (banditbench.data.catalog)")
    dataset, remote = found
    if not Path(path).is_file():
        raise ConfigError(
            f"{path}: raw file of dataset {dataset!r} missing; fetch it first "
            f"(banditbench.data.fetch or the Snakemake download rules)"
        )
    alg, expected = expected_hash(DATASETS[dataset], remote, checksums).split(":", 1)
    got = file_digest(path, alg, cache)
    if got != expected and remote.known_hash is None:
        raise CorruptFileError(
            f"{path}: raw file of dataset {dataset!r} has {alg} {got}, not the {expected} pinned "
            f"by {PIN_KEY}.{dataset}; if the pin is right the file is damaged (delete it and "
            f"run snakemake again to download it), otherwise correct the pin"
        )
    if got != expected:
        raise CorruptFileError(
            f"{path}: raw file of dataset {dataset!r} has {alg} {got}, not the registered "
            f"{expected} (edited or damaged after its download); delete it and run "
            f"snakemake again to download it"
        )
