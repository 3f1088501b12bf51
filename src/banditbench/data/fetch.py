"""Checksummed download of registered datasets: local cache, then mirror, then canonical URLs.

For every file of a dataset (:mod:`banditbench.data.catalog`), in this order:

1. the local cache ``<cache_dir>/<path>`` (default ``data/raw/``) — used if its
   checksum matches; a corrupt cached file is deleted;
2. the mirror named by the environment variable ``BANDITBENCH_DATA_MIRROR`` (or
   the ``mirror`` argument): a directory, a ``file://`` URL or an ``http(s)://``
   base URL whose layout is the registry paths (the layout of ``shared/datasets``);
3. the registered URLs, canonical first.

Every copy is checked against the registered sha256 / MD5 (for a file whose checksum is
not published, the one pinned in the config's ``dataset_checksums``: without a pin nothing
is fetched, :func:`banditbench.data.catalog.expected_hash`) before it is moved
into place: a copy or download (:class:`pooch.HTTPDownloader`) goes to a temporary file next to
its place, deleted when the transfer breaks or the checksum differs.  Each URL is tried
``1 + retries`` times, a mirror directory once; when every source fails, :class:`DataFetchError` names
the dataset and every source tried, one line each with what went wrong there (for a copy that
arrived but was not the file, its actual checksum and size: a truncated mirror file is told apart
from a wrong pin), and how to place the file by hand.  The download rule prints that message, not a
traceback (workflow/scripts/data_fetch.py).
A cached copy of a pinned file that differs from its pin is not deleted (the pin may be
the mistake): the error names both checksums and the config key.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Mapping
from urllib.parse import unquote, urlparse

from ..storage.resultio import umask_mode
from .catalog import PIN_KEY, Dataset, RemoteFile, expected_hash, get_dataset
from .verify import file_digest, file_hash

log = logging.getLogger(__name__)

MIRROR_ENV = "BANDITBENCH_DATA_MIRROR"
DEFAULT_CACHE = Path("data/raw")


class DataFetchError(RuntimeError):
    """A registered file could not be obtained with a matching checksum from any source."""


class ChecksumMismatch(ValueError):
    """A copy from one source arrived whole but is not the registered file: its actual checksum and size."""

    def __init__(self, known_hash: str, actual: str, size: int) -> None:
        super().__init__(f"checksum mismatch: got {actual} ({size:,} bytes), not {known_hash}")
        self.actual, self.size = actual, size


def checksum_matches(path: Path, known_hash: str, cached: bool = True) -> bool:
    """Whether the file has the checksum (``cached``: by size and mtime, :mod:`banditbench.data.verify`)."""
    alg, expected = known_hash.split(":", 1)
    return (file_digest(path, alg) if cached else file_hash(path, alg)) == expected


def _mirror_location(mirror: str, rel: str) -> tuple[str, str]:
    """``("dir", path)`` or ``("url", url)`` of ``rel`` inside the mirror."""
    parsed = urlparse(mirror)
    if parsed.scheme in ("http", "https"):
        return "url", mirror.rstrip("/") + "/" + rel
    base = unquote(parsed.path) if parsed.scheme == "file" else mirror
    return "dir", str(Path(base) / rel)


def _verified_into_place(tmp: Path, target: Path, known_hash: str) -> None:
    """Rename the copy ``tmp`` to ``target`` if it has ``known_hash``; else :class:`ChecksumMismatch`
    (with the copy's actual checksum and size)."""
    alg = known_hash.split(":", 1)[0]
    actual = f"{alg}:{file_hash(tmp, alg)}"
    if actual != known_hash:
        raise ChecksumMismatch(known_hash, actual, tmp.stat().st_size)
    os.replace(tmp, target)


def _copy_verified(src: Path, target: Path, known_hash: str) -> None:
    """Copy ``src`` to a temporary file next to ``target``, verify, then rename into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        _verified_into_place(Path(tmp), target, known_hash)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _download(url: str, target: Path, known_hash: str, timeout: float) -> None:
    """Download ``url`` to a temporary file next to ``target`` (pooch's HTTP downloader), verify, then
    rename into place; a broken transfer or a mismatch leaves nothing behind."""
    import pooch

    downloader = pooch.HTTPDownloader(progressbar=False, timeout=timeout)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    try:
        downloader(url, tmp, None)
        _verified_into_place(Path(tmp), target, known_hash)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _reason(exc: BaseException) -> str:
    """What went wrong with one source, on one line: a mismatch as it is, a failed connection by its
    cause (the host that could not be resolved or reached), anything else as ``Type: message``."""
    if isinstance(exc, ChecksumMismatch):
        return str(exc)
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    resolve = re.search(r"Failed to resolve '([^']+)'", text)
    if resolve:
        return f"{type(exc).__name__}: cannot resolve host {resolve.group(1)!r} (no network?)"
    # the last host named is the one that refused or timed out (the proxy's, when one is used)
    failed = re.search(r".*host='([^']+)', port=(\d+)\).*?(Connection refused|timed out)", text)
    if failed:
        via = " (the proxy)" if "ProxyError" in text else ""
        return f"{type(exc).__name__}: {failed.group(1)}:{failed.group(2)}{via}: {failed.group(3).lower()}"
    return text


def fetch_file(
    dataset: Dataset,
    remote: RemoteFile,
    cache_dir: str | os.PathLike = DEFAULT_CACHE,
    mirror: str | None = None,
    retries: int = 1,
    timeout: float = 60.0,
    checksums: Mapping[str, str] | None = None,
) -> Path:
    """Return the verified local copy of one registered file (see the module docstring);
    ``checksums``: the config's ``dataset_checksums``."""
    known_hash = expected_hash(dataset, remote, checksums)
    target = Path(cache_dir) / remote.path
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_file():
        if checksum_matches(target, known_hash):
            return target
        if remote.known_hash is None:
            alg = known_hash.split(":", 1)[0]
            raise DataFetchError(
                f"dataset {dataset.name!r}: {target} has {alg}:{file_digest(target, alg)}, not the {known_hash} "
                f"pinned by {PIN_KEY}.{dataset.name}; if the pin is right the file is damaged (delete it and run "
                f"again), otherwise correct the pin. The file was left in place."
            )
        log.warning("%s: cached %s does not match %s; deleting it", dataset.name, target, known_hash)
        target.unlink()
    mirror = os.environ.get(MIRROR_ENV) if mirror is None else mirror
    sources: list[tuple[str, str]] = []
    if mirror:
        sources.append(_mirror_location(mirror, remote.path))
    sources.extend(("url", url) for url in remote.urls)
    failures: list[str] = []
    for kind, where in sources:
        if kind == "dir" and not Path(where).is_file():
            failures.append(f"{where}: not in the mirror directory")
            continue
        attempts = 1 if kind == "dir" else 1 + retries  # a local copy gives the same bytes again
        for attempt in range(attempts):
            try:
                if kind == "dir":
                    _copy_verified(Path(where), target, known_hash)
                else:
                    _download(where, target, known_hash, timeout)
                os.chmod(target, umask_mode())  # temporary files are created 0600
                log.info("%s: %s <- %s", dataset.name, target, where)
                return target
            except Exception as exc:  # network errors, HTTP errors, checksum mismatches: try again / next source
                reason = _reason(exc)
                log.warning("%s: %s failed (attempt %d/%d): %s", dataset.name, where, attempt + 1, attempts, reason)
                if attempt == attempts - 1:
                    failures.append(f"{where}: {reason}")
    tried = "\n".join(f"  - {f}" for f in failures)
    raise DataFetchError(
        f"dataset {dataset.name!r} ({dataset.title}): could not obtain {remote.path} with {known_hash}"
        f"{f' (pinned by {PIN_KEY}.{dataset.name})' if remote.known_hash is None else ''}.\n"
        f"Tried:\n{tried}\n"
        f"To place the file by hand, download it from {remote.urls[0]} and save it as {target} "
        f"(it must have {known_hash}), or set {MIRROR_ENV} to a directory or base URL that holds "
        f"{remote.path}."
    )


def fetch(
    name: str | Dataset,
    cache_dir: str | os.PathLike = DEFAULT_CACHE,
    mirror: str | None = None,
    retries: int = 1,
    timeout: float = 60.0,
    checksums: Mapping[str, str] | None = None,
) -> list[Path]:
    """Fetch every file of a registered dataset; return their verified local paths (``checksums``: the
    config's ``dataset_checksums``, needed for a dataset whose checksum is not published)."""
    dataset = name if isinstance(name, Dataset) else get_dataset(name)
    return [fetch_file(dataset, f, cache_dir, mirror, retries, timeout, checksums) for f in dataset.files]
