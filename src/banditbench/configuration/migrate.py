"""Move per-seed results of the older layout into their cell folders (``banditbench migrate-results``).

Before results were addressed by their content, a cell's results lay in
``results/runs/<experiment>/<algorithm>/<delay>/<budget>/<seed>.npz``; now they lie one folder deeper, in the
cell's digest folder (:data:`banditbench.storage.cells.CELL_DIR`).  :func:`migrate` reads each older
file's cell from its own metadata, computes its folder and moves it there (a rename: the bytes and the
modification time stay, so Snakemake sees a finished job and re-runs nothing), with the benchmark file of the
job that wrote it (copied where one job's seeds now lie in two cell folders, as when a slice with another
horizon had replaced some of a run's seeds).  A file that cannot be read, whose policy or environment is not
registered here, or whose new place is taken stays where it is, with one line saying why.  Running it again
moves nothing.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError, CorruptFileError
from ..storage.resultio import IDENTITY, load_result, load_run, save_result
from ..storage.cells import block_label, cell_dir, describe_cell


@dataclass
class Migration:
    """What :func:`migrate` did (or, as a dry run, would do): one line per moved file, per file left."""

    moved: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


@dataclass
class _Move:
    path: Path  # the result file, in the older layout
    folder: Path  # its cell folder
    bench: Path  # the benchmark file of the job that wrote it, where the older layout kept it
    timing: dict
    cell: dict


def older_results(root: Path) -> list[Path]:
    """The result files of the older layout under ``root`` (``<experiment>/<algorithm>/<delay>/<budget>/<seed>.npz``)."""
    return sorted(p for p in root.glob("*/*/*/*/*.npz") if p.stem.isdigit() and p.is_file())


def _plan(root: Path, done: Migration) -> list[_Move]:
    moves = []
    for path in older_results(root):
        parts = path.relative_to(root).with_suffix("").parts
        try:
            _, meta, timing = load_result(path, dict(zip(IDENTITY, parts)))
            folder = root.joinpath(*Path(cell_dir(meta["cell"])).parts[2:])  # CELL_DIR without results/runs/
        except (CorruptFileError, ConfigError) as err:
            done.left.append(f"{path}: left where it is: {err}")
            continue
        if (folder / path.name).exists():
            done.left.append(f"{path}: left where it is: {folder / path.name} exists already")
            continue
        name = timing.get("benchmark") or f"{block_label(tuple(timing.get('block', [int(path.stem)])))}.benchmark.tsv"
        moves.append(_Move(path, folder, Path(os.path.normpath(path.parent / name)), timing, meta["cell"]))
    return moves


def migrate(root: str | os.PathLike = "results/runs", dry_run: bool = False) -> Migration:
    """Move every result of the older layout under ``root`` (the per-seed results folder) into its cell folder."""
    root, done = Path(root), Migration()
    moves = _plan(root, done)
    # a benchmark file goes to the cell folders of the results beside it; a result of a lockstep job that lay
    # elsewhere (timing["benchmark"]: relative to its own folder) is rewritten to point at its new place
    homes: dict[Path, list[Path]] = {}
    for move in moves:
        if move.path.parent == move.bench.parent:
            homes.setdefault(move.bench, [])
            if move.folder not in homes[move.bench]:
                homes[move.bench].append(move.folder)
    for move in moves:
        target = move.folder / move.path.name
        done.moved.append(f"{move.path} -> {target}")
        if dry_run:
            continue
        move.folder.mkdir(parents=True, exist_ok=True)
        home = (homes.get(move.bench) or [move.folder])[0]
        if "benchmark" in move.timing and home != move.folder:
            series, meta, timing, provenance = load_run(move.path)
            stat = move.path.stat()
            timing["benchmark"] = os.path.relpath(home / move.bench.name, move.folder)
            save_result(target, series, meta, timing, provenance or {})
            os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # still as old as the job that wrote it
            move.path.unlink()
        else:
            os.replace(move.path, target)
        describe_cell(move.folder, move.cell)
    for bench, folders in homes.items():
        kept = bench.with_name(bench.name.removesuffix(".benchmark.tsv") + ".benchmark.kept.tsv")
        for measured in (bench, kept):
            if measured.is_file() and not dry_run:
                for folder in folders:
                    if not (folder / measured.name).exists():
                        shutil.copy2(measured, folder / measured.name)
                measured.unlink()
    return done
