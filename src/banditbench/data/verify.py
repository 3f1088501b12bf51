"""Checks of the data files the pipeline reads, cached by size and modification time.

* Raw files (downloads under ``data/raw/``) are checked against their registered
  checksum every time the pipeline uses them (:func:`verify_raw`: preprocessing,
  oracle fitting, the fetcher's cache), so a file edited after its download is
  never used.  A file whose checksum is not published is checked against the one pinned in
  the config's ``dataset_checksums`` (``checksums``), and is not read without one.
  Hashing is paid once per version of a file: the digest is cached
  in ``data/.checksums.json`` with the file's size and modification time.
* Before any job, :func:`quarantine_corrupt` checks the raw files present, the
  prepared files (``data/processed/``, ``data/oracles/``) an experiment grid reads,
  with the same cache, and the grid's result files (``results/runs/``: layout, every
  member's CRC, checksums, the run its path names; :func:`verify_result`), cached the
  same way in ``results/.checked.json``.  A corrupt one is renamed ``<name>.corrupt``
  (kept for inspection, never read) so that Snakemake rebuilds it, in the same run,
  before any job that needs it: a corrupt intermediate never makes a simulation fail
  and lose its previous result, and a corrupt result never reaches aggregation.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Mapping

from ..errors import ConfigError, CorruptFileError
from .registry import DATASETS, PIN_KEY, RemoteFile, expected_hash

#: the cache of verified files, inside the project's data folder (created only where data/ exists)
CACHE = Path("data/.checksums.json")
#: the cache of verified result files, inside the results folder (created only where results/ exists)
RESULTS_CACHE = Path("results/.checked.json")


class _Cache:
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
            from ..resultio import atomic_write_bytes

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


def file_digest(path: str | os.PathLike, alg: str, cache: _Cache | None = None) -> str:
    """``alg`` digest (hex) of the file at ``path``, cached by size and modification time."""
    own = cache is None
    cache = cache or _Cache()
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


def verify_raw(path: str | os.PathLike, cache: _Cache | None = None,
               checksums: Mapping[str, str] | None = None) -> None:
    """Check a raw file against its registered checksum (or the one ``checksums``, the config's
    ``dataset_checksums``, pins); a :class:`~banditbench.errors.CorruptFileError` names the file, the
    dataset and both checksums."""
    found = registered(path)
    if found is None:
        raise ConfigError(f"{path}: not a registered raw file (banditbench.data.registry)")
    dataset, remote = found
    if not Path(path).is_file():
        raise ConfigError(f"{path}: raw file of dataset {dataset!r} missing; fetch it first "
                          f"(banditbench.data.fetch or the Snakemake download rules)")
    alg, expected = expected_hash(DATASETS[dataset], remote, checksums).split(":", 1)
    got = file_digest(path, alg, cache)
    if got != expected and remote.known_hash is None:
        raise CorruptFileError(f"{path}: raw file of dataset {dataset!r} has {alg} {got}, not the {expected} pinned "
                               f"by {PIN_KEY}.{dataset}; if the pin is right the file is damaged (delete it and "
                               f"run snakemake again to download it), otherwise correct the pin")
    if got != expected:
        raise CorruptFileError(f"{path}: raw file of dataset {dataset!r} has {alg} {got}, not the registered "
                               f"{expected} (edited or damaged after its download); delete it and run "
                               f"snakemake again to download it")


def verify_prepared(path: str) -> None:
    """Read a prepared file (processed dataset or oracle, canonically named) as a job would, checking
    its contents and that it is the file its name says; raises what the loaders raise."""
    from .files import load_npz
    from .paths import (CAR_ORACLE, CLASSIFIER_OPTIONS, PROMPT_ORACLE_OPTIONS, parse_key,
                        parse_preprocess_key, parse_replay_key, replay_dataset_of)
    from .preprocess import load_prepared

    parts = path.split("/")
    stem = parts[-1].removesuffix(".npz")
    if replay_dataset_of(path) is not None:
        identity = {"dataset": parts[2], "options": parse_replay_key(stem)}
        load_npz(path, "prepared replay data", required=("features", "click"), expect=identity)
    elif parts[:2] == ["data", "processed"] and len(parts) == 4:
        load_prepared(path, parts[2], parse_preprocess_key(parts[2], stem))
    elif parts[:3] == ["data", "oracles", "classifiers"] and len(parts) == 6:
        identity = {"dataset": parts[3], "preprocessing": parse_preprocess_key(parts[3], parts[4]),
                    "options": parse_key(CLASSIFIER_OPTIONS, stem, path)}
        load_npz(path, "classifier oracle", required=("probabilities",), expect=identity)
    elif parts[:3] == ["data", "oracles", "prompts"] and len(parts) == 5:
        identity = {"task": parts[3], "options": parse_key(PROMPT_ORACLE_OPTIONS, stem, path)}
        load_npz(path, "prompt oracle", required=("features", "utility"), expect=identity)
    elif path == CAR_ORACLE:
        load_npz(path, "car oracle", required=("contexts", "theta", "logit_theta"), expect={"dataset": "car"})


def verify_result(path: str | os.PathLike) -> None:
    """Read a result file as aggregation does: its layout, every member's CRC-32, its checksums
    (which cover every member) and that it holds the run its path names
    (``results/runs/<experiment>/<algorithm>/<delay>/<budget>/<seed>.npz``); raises
    :class:`~banditbench.errors.CorruptFileError` naming the file."""
    from ..resultio import identity_from_path, load_result

    load_result(path, identity_from_path(path))


def _quarantine(path: Path, reason: str) -> str:
    """Move a corrupt file aside as ``<name>.corrupt``; one line saying why and where it went (for the
    caller to print: the Snakefile prints it as a warning)."""
    target = path.with_name(path.name + ".corrupt")
    os.replace(path, target)
    reason = re.sub(r"; delete it and (re-run|rebuild|run).*$", "", " ".join(reason.split()))
    message = f"{reason}; moved to {target}, {path} is rebuilt before it is used"
    return message


def quarantine_corrupt(data_files: Iterable[str], raw_dir: str = "data/raw",
                       checksums: Mapping[str, str] | None = None, results: Iterable[str] = (),
                       moved_results: list[str] | None = None) -> list[str]:
    """Check every registered raw file present under ``raw_dir`` (one without a published checksum
    only if ``checksums`` pins one), every existing file of ``data_files`` and every existing result
    file of ``results`` (:func:`verify_result`); move each corrupt one aside (``<name>.corrupt``).
    Returns one line per file moved, and appends the results moved to ``moved_results`` (the
    Snakefile has them rebuilt in the same run).  Cached: a file already checked in its current
    version (size and modification time) costs a ``stat``."""
    messages = []
    cache = _Cache()
    for dataset in DATASETS.values():
        if dataset.pinned and dataset.name not in (checksums or {}):
            continue                    # nothing to check it against; it is not read without a pin
        for remote in dataset.files:
            path = Path(raw_dir) / remote.path
            if path.is_file():
                try:
                    verify_raw(path, cache, checksums)
                except CorruptFileError as err:
                    messages.append(_quarantine(path, str(err)))
    for name in dict.fromkeys(data_files):
        path = Path(name)
        if not path.is_file():
            continue
        try:
            cache.get(path, "verified", lambda: verify_prepared(name) or "ok")
        except (CorruptFileError, ConfigError) as err:
            messages.append(_quarantine(path, str(err)))
    cache.save()
    checked = _Cache(RESULTS_CACHE, key=lambda path: os.path.abspath(path))
    for name in dict.fromkeys(results):
        path = Path(name)
        try:
            checked.get(path, "verified", lambda: verify_result(name) or "ok")
        except FileNotFoundError:
            continue                    # not run yet
        except CorruptFileError as err:
            messages.append(_quarantine(path, str(err)))
            if moved_results is not None:
                moved_results.append(name)
    checked.save()
    return messages
