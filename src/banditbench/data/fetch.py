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
into place (downloads go through :func:`pooch.retrieve` with a
:class:`pooch.HTTPDownloader`, which writes to a temporary file and deletes it
when the transfer breaks or the checksum differs).  Each source is tried
``1 + retries`` times; when every source fails, :class:`DataFetchError` names
the dataset, every URL tried with its error, and how to place the file by hand.
A cached copy of a pinned file that differs from its pin is not deleted (the pin may be
the mistake): the error names both checksums and the config key.
"""

from __future__ import annotations

import logging
import os
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


def _copy_verified(src: Path, target: Path, known_hash: str) -> None:
    """Copy ``src`` to a temporary file next to ``target``, verify, then rename into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        if not checksum_matches(Path(tmp), known_hash, cached=False):
            raise ValueError(f"checksum mismatch: {src} does not have {known_hash}")
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _download(url: str, target: Path, known_hash: str, timeout: float) -> None:
    import pooch

    downloader = pooch.HTTPDownloader(progressbar=False, timeout=timeout)
    pooch.retrieve(url, known_hash=known_hash, fname=target.name, path=str(target.parent), downloader=downloader)


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
        for attempt in range(1 + retries):
            try:
                if kind == "dir":
                    _copy_verified(Path(where), target, known_hash)
                else:
                    _download(where, target, known_hash, timeout)
                os.chmod(target, umask_mode())  # temporary files are created 0600
                log.info("%s: %s <- %s", dataset.name, target, where)
                return target
            except Exception as exc:  # network errors, HTTP errors, checksum mismatches: try again / next source
                target.unlink(missing_ok=True)
                reason = f"{type(exc).__name__}: {exc}".strip()
                log.warning("%s: %s failed (attempt %d/%d): %s", dataset.name, where, attempt + 1, 1 + retries, reason)
                if attempt == retries:
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
