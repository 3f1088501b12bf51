"""A simulate job's runs: ``banditbench run-one`` and ``run-block`` (and the tuning's blocks) run through here; the
simulation itself is :mod:`banditbench.simulation.runner`'s.

* the engine that plays them (:func:`engine`, the one place that decides): the seed-batched engine for members
  whose policy declares it, the compiled one for a run whose policy declares that, the reference loop otherwise.
  The seed-batched engine may still decline a block (``Policy.batch`` returns None, a replay environment skips an
  event), whose members then run one after the other (:func:`iter_members`), and the compiled one an environment
  (``Policy.run_compiled`` answers False), whose run the reference loop then plays (:func:`~.runner.simulate`).
"""

from __future__ import annotations

import sys
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from . import runner

#: the engines :func:`engine` names: the reference loop of ``observe`` and ``act``, and the two a policy may declare
#: (:data:`banditbench.api.ENGINES`)
REFERENCE, COMPILED, SEED_BATCHED = "reference", "compiled", "seed-batched"

#: one run's ``(series, meta, timing)``, ready for :func:`banditbench.storage.resultio.save_result`
Result = tuple[dict[str, np.ndarray], dict, dict]

# --- the engine -------------------------------------------------------------------------------------------


def engine(cells: Sequence[Mapping[str, Any]], batched: bool = True) -> str:
    """The engine that plays ``cells`` (one cell, or a block's members): the only place that decides (issue 46).

    :data:`SEED_BATCHED` when their policy declares it (``Policy.engines``) and ``batched`` (false: the seed-batched
    engine declined them, or a single-seed run is asked for); else :data:`COMPILED` when it declares that; else
    :data:`REFERENCE`."""
    declared = runner.policy_class(cells[0]).engines
    if batched and SEED_BATCHED in declared:
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
