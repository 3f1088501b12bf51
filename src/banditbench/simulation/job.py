"""A simulate job, from its cells to its result files: ``banditbench run-one`` and ``run-block`` (and the tuning's
blocks) run through here; the simulation itself is :mod:`banditbench.simulation.runner`'s.

* its cells: a resolved cell given as JSON (:func:`cell_argument`), or picked from a config
  (:func:`banditbench.configuration.grid.config_cell`);
  a block's members are its cells, each with each of its seeds, cell by cell;
* the engine that plays them (:func:`engine`, the one place that decides): the seed-batched engine for members
  whose policy declares it, the compiled one for a run whose policy declares that, the reference loop otherwise.
  The seed-batched engine may still decline a block (``Policy.batch`` returns None, a replay environment skips an
  event), whose members then run one after the other (:func:`iter_members`), and the compiled one an environment
  (``Policy.run_compiled`` answers False), whose run the reference loop then plays (:func:`~.runner.simulate`);
* its results put back where a kept copy was computed from the same cell, sources and data bytes
  (:mod:`banditbench.storage.reuse`), or saved with their provenance and the cell folder's ``cell.json``
  (:func:`block_job`, :func:`run_one`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from ..errors import ConfigError
from . import runner

#: the engines :func:`engine` names: the reference loop of ``observe`` and ``act``, and the two a policy may declare
#: (:data:`banditbench.api.ENGINES`)
REFERENCE, COMPILED, SEED_BATCHED = "reference", "compiled", "seed-batched"

#: one run's ``(series, meta, timing)``, ready for :func:`banditbench.storage.resultio.save_result`
Result = tuple[dict[str, np.ndarray], dict, dict]

#: what a resolved cell (``--cell``) must hold
CELL_KEYS = frozenset({"experiment", "algorithm", "delay_label", "horizon", "environment", "policy", "delay"})


# --- the job's cells ------------------------------------------------------------------------------------


def cell_argument(text: str) -> dict:
    """A resolved cell given as JSON (``--cell``), its keys checked."""
    try:
        cell = json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(f"--cell: not valid JSON ({err})") from None
    if not isinstance(cell, dict):
        raise ConfigError(f"--cell: a resolved cell is a JSON object, got {type(cell).__name__}")
    missing = sorted(CELL_KEYS - set(cell))
    if missing:
        raise ConfigError(f"--cell: the cell lacks {missing}")
    return cell


# --- the engine -------------------------------------------------------------------------------------------


def engine(cells: Sequence[Mapping[str, Any]], batched: bool = True) -> str:
    """The engine that plays ``cells`` (one cell, or a block's members): the only place that decides (issue 46).

    :data:`SEED_BATCHED` when their policy declares it (``Policy.engines``), it wins for this many members on the
    cells' device (:meth:`~banditbench.api.SeedBatched.wins`: a one-seed NVLDB job on a CPU takes the single-seed
    path) and ``batched`` (false: the seed-batched engine declined them, or a single-seed run is asked for); else
    :data:`COMPILED` when it declares that; else :data:`REFERENCE`."""
    declared = runner.policy_class(cells[0]).engines
    seed_batched = declared.get(SEED_BATCHED)
    device = cells[0]["policy"].get("params", {}).get("device", "cpu")
    if batched and seed_batched is not None and seed_batched.wins(len(cells), device):
        return SEED_BATCHED
    return COMPILED if COMPILED in declared else REFERENCE


def _fall_back(cell: Mapping[str, Any], why: str) -> None:
    """One line on stderr (the simulate job's log) when a cell asked for ``device: cuda`` runs its seeds one
    at a time on the CPU instead (the single-seed path always runs there)."""
    if cell["policy"].get("params", {}).get("device") == "cuda":
        print(
            f"banditbench: {cell.get('experiment')}/{cell.get('algorithm')} ({cell['policy']['name']}): "
            f"device 'cuda' asked for, but {why}: its seeds run one at a time on the CPU",
            file=sys.stderr,
            flush=True,
        )


# --- running members --------------------------------------------------------------------------------------


def iter_members(cells: Sequence[Mapping[str, Any]], progress: bool = False) -> Iterator[Result]:
    """Each member's result, in order, as it is played on the engine :func:`engine` names: a seed-batched block at
    once (:func:`~.runner.run_seed_batched`), or the members one after the other (:func:`~.runner.run_single_seed`,
    ``progress`` a progress bar), as when the seed-batched engine declines the block.  The members share one
    :func:`~.runner.lockstep_key` (checked by the caller)."""
    chosen = engine(cells)
    if chosen == SEED_BATCHED:
        try:
            results = runner.run_seed_batched(cells)
        except runner.Declined as why:
            _fall_back(cells[0], str(why))
            chosen = engine(cells, batched=False)
        else:
            yield from results
            return
    else:
        _fall_back(cells[0], "its policy has no seed-batched path")
    for cell in cells:
        yield runner.run_single_seed(cell, progress, compiled=chosen == COMPILED)


def _odd_member(cells: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The first of ``cells`` that cannot share a seed-batched block with the first (its lockstep key differs)."""
    key = runner.lockstep_key(cells[0])
    return next((cell for cell in cells[1:] if runner.lockstep_key(cell) != key), None)


def run_members(cells: Sequence[Mapping[str, Any]], progress: bool = False) -> list[Result]:
    """:func:`run_block` for a block of full cells (each with its ``seed``) that may also differ in what their
    family's batched engine takes per member (:func:`~.runner.lockstep_key`): the policy parameters of its
    ``per_member`` (e.g. seed 002's ``nu`` and ``lam``, a hyperparameter grid played in lockstep), and the policy
    class within one ``family`` (seed 001's pair rules and weightings); any other difference is a ``ValueError``.
    A member's result does not depend on the other members."""
    odd = _odd_member(cells)
    if odd is not None:
        declared = runner.policy_class(cells[0]).engines.get(SEED_BATCHED)
        free = sorted(declared.per_member if declared else ())
        raise ValueError(
            f"run_members: {odd['algorithm']!r} seed {odd['seed']} differs from the block's first member "
            f"in more than the seed, the lockstep family's policy and {free or 'no policy parameter'}"
        )
    return list(iter_members(cells, progress))


def run_block(cell: Mapping[str, Any], seeds: Sequence[int]) -> list[Result]:
    """Run the seeds ``seeds`` of one cell; one ``(series, meta, timing)`` per seed (:func:`run_members`).

    A policy with the seed-batched engine plays all the seeds in lockstep (:func:`~.runner.run_seed_batched`), each
    seed's result independent of the block but not the single-seed path's bit for bit (``meta["engine"]`` says
    which ran); other policies, and a block the seed-batched engine declines, run one seed after the other."""
    return run_members([{**cell, "seed": seed} for seed in seeds])


def run_cell(cell: Mapping[str, Any], progress: bool = False) -> Result:
    """Run one cell on the single-seed path (:func:`~.runner.run_single_seed`, the compiled engine where
    :func:`engine` names it): for a policy with the seed-batched engine, the reference that engine (what
    ``banditbench run-block`` and ``run-one`` run) is tested against."""
    return runner.run_single_seed(cell, progress, compiled=engine([cell], batched=False) == COMPILED)


# --- the commands' jobs -------------------------------------------------------------------------------------


def run_one(cell: Mapping[str, Any], output: str | None, progress: bool) -> Result:
    """``banditbench run-one``: the cell's run, as a simulate job plays it (a block of one: the same bytes), saved
    to ``output`` if given; a file it cannot write (other than on a full or read-only disk) is a
    :class:`~banditbench.errors.ConfigError` naming it."""
    from ..storage.logs import storage_problem
    from ..storage.resultio import save_result

    (result,) = iter_members([cell], progress)
    if output:
        try:
            save_result(output, *result)
        except OSError as err:
            if storage_problem(err) is not None:
                raise
            raise ConfigError(f"--output: cannot write {output}: {err.strerror or err}") from None
    return result


def block_job(cells: Sequence[dict], seeds: Sequence[int], outputs: Sequence[str], inputs: Sequence[str]) -> None:
    """``banditbench run-block``: the seeds ``seeds`` of ``cells`` (one, or several that one seed-batched block can
    hold: ``lockstep_variants``), one result file each in ``outputs`` (cell by cell), from the data files
    ``inputs``.  The job's log names the code that ran; outputs whose kept copies were computed from the same cell,
    sources and data bytes are put back (:func:`_put_back`), the others simulated and saved (:func:`_save`)."""
    from ..storage.cells import block_label
    from ..data.files import use_inputs
    from ..storage import reuse
    from ..storage.logs import provenance

    odd = _odd_member(cells)
    if odd is not None:
        raise ConfigError(
            f"run-block: --cell {odd['algorithm']!r} cannot share a block with {cells[0]['algorithm']!r}: "
            "several cells must differ only in the algorithm label, a policy of the same seed-batched family "
            "and its per_member parameters"
        )
    n = len(seeds)
    if len(outputs) != len(cells) * n:
        raise ConfigError(
            f"run-block: {len(cells)} cell(s) x {n} seeds but {len(outputs)} output files "
            "(one per cell and seed, cell by cell)"
        )
    files = [list(outputs[i * n : (i + 1) * n]) for i in range(len(cells))]
    use_inputs(inputs)
    print(provenance(), file=sys.stderr)  # the job's log names the code that ran
    # what the results are computed from (recorded in their provenance)
    made_from = [reuse.facts(cell, inputs) for cell in cells]
    # the block names the job's benchmark file (banditbench.analysis.timing); a job of several cells
    # (lockstep_variants) has one, next to its first cell's results
    benchmark = Path(outputs[0]).parent / f"{block_label(tuple(seeds))}.benchmark.tsv"
    shared = benchmark if len(cells) > 1 else None
    cells, files, made_from = _put_back(cells, seeds, files, made_from, benchmark)
    if not cells:
        return
    results = iter_members([{**cell, "seed": seed} for cell in cells for seed in seeds])
    for paths, facts in zip(files, made_from):
        for output in paths:
            _save(output, next(results), facts, seeds, shared)


def _put_back(
    cells: Sequence[dict], seeds: Sequence[int], files: list[list[str]], made_from: list[dict], benchmark: Path
) -> tuple[list[dict], list[list[str]], list[dict]]:
    """Put back the kept results of the job's outputs that are theirs (:mod:`banditbench.storage.reuse`, one log
    line each); the cells, outputs and facts left to simulate (none when every output was put back).  A lockstep
    job puts back the members whose kept results are theirs (a member's result does not depend on its block) and
    simulates the others as a smaller block."""
    from ..storage import reuse

    cells, files, made_from = list(cells), list(files), list(made_from)
    if len(cells) > 1 and not reuse.reusable(cells, seeds, files, made_from):
        back = [reuse.reusable([c], seeds, [o], [f]) for c, o, f in zip(cells, files, made_from)]
        for cell, paths, facts in ((c, o, f) for c, o, f, b in zip(cells, files, made_from, back) if b):
            print("\n".join(reuse.take_back([cell], seeds, [paths], [facts])), file=sys.stderr)
        cells, files, made_from = ([x for x, b in zip(xs, back) if not b] for xs in (cells, files, made_from))
    kept = reuse.take_back(cells, seeds, files, made_from, benchmark)
    if kept is not None:
        print("\n".join(kept), file=sys.stderr)
        return [], [], []
    return cells, files, made_from


def _save(output: str, result: Result, made_from: Mapping, seeds: Sequence[int], benchmark: Path | None) -> None:
    """Save one result of a block with its provenance (``made_from``: the sources and data it was computed from),
    its timing naming the block and, for a job of several cells, the job's ``benchmark`` file; then the cell
    folder's readable index, ``cell.json``.  A failed write that names no file (a full disk) names ``output``."""
    from ..storage.cells import describe_cell
    from ..storage.provenance import collect
    from ..storage.resultio import save_result

    series, meta, timing = result
    timing = {**timing, "block": list(seeds)}
    if benchmark is not None:
        timing["benchmark"] = os.path.relpath(benchmark, Path(output).parent)
    try:
        save_result(output, series, meta, timing, {**collect(), **made_from})
    except OSError as err:
        if err.filename is None:
            raise OSError(err.errno, err.strerror, output) from err
        raise
    describe_cell(Path(output).parent, meta["cell"])
