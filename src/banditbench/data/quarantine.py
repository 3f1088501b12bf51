"""The pre-job check of the files the pipeline reads and writes.

Before any job, :func:`quarantine_corrupt` checks the raw files present, the
prepared files (``data/processed/``, ``data/oracles/``) an experiment grid reads,
with the same cache, and the grid's result files (``results/runs/``: layout, every
member's CRC, checksums, the run its path names; :func:`verify_result`), cached the
same way in ``results/.checked.json``.  A corrupt one is renamed ``<name>.corrupt``
(kept for inspection, never read) so that Snakemake rebuilds it before any job that
needs it: a corrupt intermediate never makes a simulation fail and lose its previous
result, and a corrupt result never reaches aggregation.  A result is rebuilt in the same
run (the Snakefile removes the tables that read it); a raw or prepared file when a job
next reads it (Snakemake leaves a missing input of finished jobs missing), and its line
says so and names the command that rebuilds it now.  A corrupt file in a folder that
cannot be written (read-only) cannot be moved aside: :class:`Unmovable` names it, says
why, and stops the run.

The raw files' checksums and the cache are :mod:`banditbench.data.verify`'s.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Mapping

from ..errors import ConfigError, CorruptFileError
from ..storage.resultio import identity_from_path, load_result
from .files import load_npz
from .paths import (
    CAR_ORACLE,
    CLASSIFIER_OPTIONS,
    PROMPT_ORACLE_OPTIONS,
    parse_key,
    parse_preprocess_key,
    parse_replay_key,
    replay_dataset_of,
)
from .preprocess import load_prepared
from .catalog import DATASETS
from .verify import Cache, verify_raw

#: the cache of verified result files, inside the results folder (created only where results/ exists)
RESULTS_CACHE = Path("results/.checked.json")


def verify_prepared(path: str) -> None:
    """Read a prepared file (processed dataset or oracle, canonically named) as a job would, checking
    its contents and that it is the file its name says; raises what the loaders raise."""
    parts = path.split("/")
    stem = parts[-1].removesuffix(".npz")
    if replay_dataset_of(path) is not None:
        identity = {"dataset": parts[2], "options": parse_replay_key(stem)}
        load_npz(path, "prepared replay data", required=("features", "click"), expect=identity)
    elif parts[:2] == ["data", "processed"] and len(parts) == 4:
        load_prepared(path, parts[2], parse_preprocess_key(parts[2], stem))
    elif parts[:3] == ["data", "oracles", "classifiers"] and len(parts) == 6:
        identity = {
            "dataset": parts[3],
            "preprocessing": parse_preprocess_key(parts[3], parts[4]),
            "options": parse_key(CLASSIFIER_OPTIONS, stem, path),
        }
        load_npz(path, "classifier oracle", required=("probabilities",), expect=identity)
    elif parts[:3] == ["data", "oracles", "prompts"] and len(parts) == 5:
        identity = {"task": parts[3], "options": parse_key(PROMPT_ORACLE_OPTIONS, stem, path)}
        load_npz(path, "prompt oracle", required=("features", "utility"), expect=identity)
    elif path == CAR_ORACLE:
        load_npz(path, "car oracle", required=("contexts", "theta", "logit_theta"), expect={"dataset": "car"})


def verify_result(path: str | os.PathLike) -> None:
    """Read a result file as aggregation does: its layout, every member's CRC-32, its checksums
    (which cover every member) and that it holds the run its path names
    (``results/runs/<experiment>/<algorithm>/<delay>/<budget>/<cell>/<seed>.npz``); raises
    :class:`~banditbench.errors.CorruptFileError` naming the file."""
    load_result(path, identity_from_path(path))


class Unmovable(CorruptFileError):
    """Corrupt files that could not be moved aside (one line each); ``moved``: the lines of those that were."""

    def __init__(self, lines: list[str], moved: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.moved = moved


def unwritable(folder: Path, err: OSError) -> str:
    """Why nothing can be written in ``folder``, from the error a write there raised: read-only (a
    read-only file system, or no write permission), full, or the error itself."""
    if err.errno == errno.EROFS:
        return f"{folder} is read-only (a read-only file system)"
    if err.errno in (errno.EACCES, errno.EPERM):
        return f"{folder} is read-only (no permission to write there)"
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{folder} is full ({err.strerror.lower()})"
    return f"{folder}: {err.strerror or err}"


def _quarantine(path: Path, reason: str, kind: str) -> str:
    """Move a corrupt file aside as ``<name>.corrupt``; one line saying why, where it went and when it is
    rebuilt (for the caller to print: the Snakefile prints it as a warning).  ``kind``: ``result`` (the
    Snakefile has it rebuilt in this run), ``raw`` or ``prepared`` (rebuilt when a job next reads it:
    Snakemake leaves a missing input of finished jobs missing).  A file that cannot be moved (its folder
    is read-only) stops the run: :class:`~banditbench.errors.CorruptFileError` says both."""
    target = path.with_name(path.name + ".corrupt")
    reason = re.sub(r"; delete it and (re-run|rebuild|run).*$", "", " ".join(reason.split()))
    try:
        os.replace(path, target)
    except OSError as err:
        raise CorruptFileError(
            f"{reason}; this damaged file cannot be moved aside: {unwritable(path.parent, err)}; "
            f"make the folder writable (or delete the file) and run again"
        ) from None
    if kind == "result":
        return f"{reason}; moved to {target}, {path} is rebuilt before it is used"
    again = "downloaded again" if kind == "raw" else "rebuilt"
    return (
        f"{reason}; moved to {target}; {path} is {again} when a job next reads it (now: `snakemake --cores 1 {path}`)"
    )


def _save(cache: Cache) -> None:
    """Save a check cache where its folder can be written (a read-only or full one keeps the old cache: it
    only saves work)."""
    try:
        cache.save()
    except OSError:
        pass


#: moves a corrupt file aside: (path, the error, its kind) -> whether it could be moved
_Move = Callable[[Path, Exception, str], bool]


def _check_raw(raw_dir: str, checksums: Mapping[str, str] | None, cache: Cache, move: _Move) -> None:
    """Verify every registered raw file present under ``raw_dir`` (one without a published checksum only if
    ``checksums`` pins one); ``move`` each corrupt one aside."""
    for dataset in DATASETS.values():
        if dataset.pinned and dataset.name not in (checksums or {}):
            continue  # nothing to check it against; it is not read without a pin
        for remote in dataset.files:
            path = Path(raw_dir) / remote.path
            if path.is_file():
                try:
                    verify_raw(path, cache, checksums)
                except CorruptFileError as err:
                    move(path, err, "raw")


def _check_results(results: Iterable[str], move: _Move, moved_results: list[str] | None) -> None:
    """Verify every existing result file of ``results`` (cached by absolute path); ``move`` each corrupt one
    aside, appending those moved to ``moved_results``."""
    checked = Cache(RESULTS_CACHE, key=lambda path: os.path.abspath(path))
    for name in dict.fromkeys(results):
        path = Path(name)
        try:
            checked.get(path, "verified", lambda: verify_result(name) or "ok")
        except FileNotFoundError:
            continue  # not run yet
        except NotADirectoryError:
            blocking = next(p for p in reversed(path.parents) if p.is_file())
            raise ConfigError(
                f"{blocking} is a file where the pipeline keeps a folder of results ({name} goes under it): "
                f"move it away or remove it, then run again"
            ) from None
        except CorruptFileError as err:
            if move(path, err, "result") and moved_results is not None:
                moved_results.append(name)
    _save(checked)


def quarantine_corrupt(
    data_files: Iterable[str],
    raw_dir: str = "data/raw",
    checksums: Mapping[str, str] | None = None,
    results: Iterable[str] = (),
    moved_results: list[str] | None = None,
) -> list[str]:
    """Check every registered raw file present under ``raw_dir`` (one without a published checksum
    only if ``checksums`` pins one), every existing file of ``data_files`` and every existing result
    file of ``results`` (:func:`verify_result`); move each corrupt one aside (``<name>.corrupt``).
    Returns one line per file moved, and appends the results moved to ``moved_results`` (the
    Snakefile has them rebuilt in the same run).  Cached: a file already checked in its current
    version (size and modification time) costs a ``stat``.  Raises :class:`Unmovable` after the
    check when a corrupt file could not be moved aside (its folder is read-only)."""
    messages: list[str] = []
    unmovable: list[str] = []

    def move(path: Path, err: Exception, kind: str) -> bool:
        try:
            messages.append(_quarantine(path, str(err), kind))
            return True
        except CorruptFileError as stuck:
            unmovable.append(str(stuck))
            return False

    cache = Cache()
    _check_raw(raw_dir, checksums, cache, move)
    for name in dict.fromkeys(data_files):
        path = Path(name)
        if not path.is_file():
            continue
        try:
            cache.get(path, "verified", lambda: verify_prepared(name) or "ok")
        except (CorruptFileError, ConfigError) as err:
            move(path, err, "prepared")
    _save(cache)
    _check_results(results, move, moved_results)
    if unmovable:
        raise Unmovable(unmovable, messages)
    return messages
