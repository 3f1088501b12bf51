"""Which code a process runs: a fingerprint of the banditbench sources, independent of their location.

The Snakefile compares the fingerprint of the ``banditbench`` it imported with that of the
workflow's own ``src/banditbench`` instead of comparing paths: an executor without a shared
file system deploys the workflow's sources into a fresh folder on each node (or a container
ships an installed copy), and the same code there is accepted, while different code is refused.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

#: the files that make up the package's code (compiled caches and build metadata excluded)
CODE_SUFFIXES = (".py", ".yaml")


def fingerprint(package_dir: str | os.PathLike | None = None) -> str:
    """sha256 over the relative paths and bytes of the package's ``.py`` and ``.yaml`` files, sorted.

    ``package_dir`` defaults to the imported ``banditbench`` package's folder.
    """
    root = Path(package_dir if package_dir is not None else Path(__file__).resolve().parents[1])
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no banditbench sources there")
    h = hashlib.sha256()
    files = sorted(
        p for p in root.rglob("*") if p.suffix in CODE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts
    )
    for path in files:
        rel = path.relative_to(root).as_posix().encode()
        data = path.read_bytes()
        h.update(len(rel).to_bytes(4, "big") + rel + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()
