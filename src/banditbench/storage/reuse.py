"""Finished simulations survive a rebuild of their data: checksums decide, not modification times.

Snakemake re-runs a job when an input is newer than its outputs, and every job downstream of a job
it runs, whatever the bytes.  So a prepared dataset deleted (or moved aside as damaged) mid-grid, or
rebuilt on its own, re-ran every finished simulation that read it, although preprocessing rebuilds
the same bytes.  Here:

* every result records, in its ``provenance`` member, the sha256 of its job's source files
  (``sources``: the files Snakemake gives the job as code inputs, :func:`banditbench.registry.job_sources`)
  and of each data file it read (``inputs``);
* when the run starts (the Snakefile's ``onstart``: the jobs are planned, none has run), the results of
  every simulate job that Snakemake is about to re-run are kept (hard-linked) in :data:`KEPT`
  (:func:`keep`), before Snakemake deletes them as it starts the job;
* a simulate job (``banditbench run-block``) whose every output has a kept copy of the same run, from
  the same cell, the same sources and data files with the same bytes, puts them back instead of
  simulating (:func:`take_back`), dated now (newer than the rebuilt data: the next run has nothing to
  do).  Otherwise it deletes the kept copies and simulates.

A job that is forced (``--forceall``, ``--forcerun``, ``--force``: the user asked for the simulation),
or re-run because its software environment changed (``--use-conda``), keeps nothing.  The job that puts results back is not the one Snakemake's ``benchmark:`` file of
the block measured: the simulation's measurement is kept next to it as ``<block>.benchmark.kept.tsv``,
which the timing table reads (:mod:`banditbench.analysis.timing`), until the block is simulated again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ..errors import CorruptFileError
from .resultio import atomic_write_bytes, identity_from_path, load_run

#: where the planning process keeps finished results that their simulate jobs may put back
KEPT = Path(".snakemake/banditbench/kept")


def kept_path(output: str | os.PathLike) -> Path:
    return KEPT / os.path.normpath(output)


def kept_benchmark(bench: Path) -> Path:
    """Where the measurement of the simulation that wrote a block's results is kept when they are put back."""
    return bench.with_name(bench.name.removesuffix(".benchmark.tsv") + ".benchmark.kept.tsv")


# --- what a result was computed from --------------------------------------------------------------------


def sources_digest(cell: Mapping) -> str:
    """sha256 over the contents of the cell's job sources (the code Snakemake re-runs the job for)."""
    from .. import registry

    registry.use_plugins(cell.get("plugins", ()), add=True)
    files = registry.job_sources(cell["environment"]["name"], cell["policy"]["name"])
    h = hashlib.sha256()
    for digest in sorted(hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in files):
        h.update(digest.encode())
    return "sha256:" + h.hexdigest()


def _data_key(path: str | os.PathLike) -> str:
    """A data file's path from its ``data/`` folder on (a job may be handed a copy elsewhere)."""
    parts = Path(os.path.normpath(path)).parts
    starts = [i for i, part in enumerate(parts) if part == "data"]
    return "/".join(parts[starts[-1] :]) if starts else "/".join(parts)


def inputs_digest(inputs: Iterable[str | os.PathLike]) -> dict[str, str]:
    """``{data/...: sha256:<hex>}`` of a job's data files (cached by size and mtime, data/.checksums.json)."""
    from ..data.verify import Cache, file_digest

    cache = Cache()
    digests = {_data_key(path): "sha256:" + file_digest(path, "sha256", cache) for path in inputs}
    try:
        cache.save()
    except OSError:  # a read-only (shared) or full data folder: the digests are computed again next time
        pass
    return dict(sorted(digests.items()))


def facts(cell: Mapping, inputs: Iterable[str | os.PathLike]) -> dict:
    """What a simulate job's results are computed from, beyond the cell: recorded in their provenance."""
    return {"sources": sources_digest(cell), "inputs": inputs_digest(inputs)}


# --- the planning process -------------------------------------------------------------------------------


def keep(results: Iterable[str]) -> int:
    """Make :data:`KEPT` hold exactly ``results`` (hard links, or copies where links are not possible)."""
    wanted = {kept_path(r): Path(r) for r in results}
    if KEPT.is_dir():
        for path in sorted(KEPT.rglob("*"), reverse=True):  # files before their folders
            if path.is_dir():
                if not any(path.iterdir()):
                    path.rmdir()
            elif path not in wanted:
                path.unlink(missing_ok=True)
    for kept, result in wanted.items():
        try:
            if kept.exists() and os.path.samestat(kept.stat(), result.stat()):
                continue
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.unlink(missing_ok=True)
            try:
                os.link(result, kept)
            except OSError:
                shutil.copy2(result, kept)
        except OSError:
            kept.unlink(missing_ok=True)  # nothing kept: its job simulates
    return len(wanted)


# --- the simulate job -----------------------------------------------------------------------------------


def why_not(result: Path, cell: Mapping, seed: int, made_from: Mapping) -> str | None:
    """Why a result file (a kept copy, or one in place) is not the run of ``cell`` and ``seed`` computed from
    ``made_from`` (:func:`facts`), or None if it is: it loads checked, holds that cell and seed, and its provenance
    records the same sources and data bytes.  The Python API (:mod:`banditbench.workbench`) reuses such a result."""
    try:
        _, meta, _, provenance = load_run(result, identity_from_path(result))
    except CorruptFileError as err:
        return str(err)
    if meta["cell"] != {**cell, "seed": seed}:
        return "another cell"
    if provenance is None or any(provenance.get(k) != v for k, v in made_from.items()):
        return "other sources or data"
    return None


def _put(kept: Path, output: Path) -> None:
    """Move a kept result into place (by a copy renamed into place where they lie on two file systems)."""
    try:
        os.replace(kept, output)
    except OSError:
        atomic_write_bytes(output, kept.read_bytes())
        kept.unlink()


def _kept(cells, seeds, outputs, made_from) -> list[tuple[Path, str, Mapping, int, Mapping]]:
    """``(kept copy, output, cell, seed, facts)`` of every output of a simulate job."""
    return [
        (kept_path(output), output, cell, seed, facts)
        for cell, files, facts in zip(cells, outputs, made_from)
        for output, seed in zip(files, seeds)
    ]


def reusable(
    cells: Sequence[Mapping], seeds: Sequence[int], outputs: Sequence[Sequence[str]], made_from: Sequence[Mapping]
) -> bool:
    """Whether every output of these cells has a kept copy of the same run, computed from the same cell and
    facts (:func:`take_back` would put them back)."""
    jobs = _kept(cells, seeds, outputs, made_from)
    return all(k.is_file() for k, *_ in jobs) and not any(why_not(k, c, s, f) for k, _, c, s, f in jobs)


def take_back(
    cells: Sequence[Mapping],
    seeds: Sequence[int],
    outputs: Sequence[Sequence[str]],
    made_from: Sequence[Mapping],
    benchmark: Path | None = None,
) -> list[str] | None:
    """Put back the kept results of a simulate job (its ``cells``, one or a lockstep group, each with its
    ``outputs`` per seed and :func:`facts`) if every output has one of the same run computed from the same cell
    and facts; one log line each.  None if not: the kept copies of its outputs are deleted, and so is a kept
    measurement of ``benchmark`` (the job simulates)."""
    jobs = _kept(cells, seeds, outputs, made_from)
    if reusable(cells, seeds, outputs, made_from):
        if benchmark is not None and benchmark.is_file() and not kept_benchmark(benchmark).exists():
            shutil.copy2(benchmark, kept_benchmark(benchmark))
        lines = []
        for k, output, _, _, facts in jobs:
            data = ", ".join(f"{p} {d[:15]}..." for p, d in facts["inputs"].items())
            _put(k, Path(output))
            os.utime(output)  # newer than the rebuilt data it was computed from
            lines.append(
                f"{output}: put back as it was, not simulated again: computed from this cell, these sources"
                + (f" and data files with the same bytes ({data})" if data else "")
            )
        return lines
    for k, *_ in jobs:
        k.unlink(missing_ok=True)
    if benchmark is not None:
        kept_benchmark(benchmark).unlink(missing_ok=True)
    return None
