"""Seed 002's nu / lam grid search (Sec. 7), per environment family, on tuning seeds.

Sec. 7: "fixed values of nu and lam with the best parameter values using grid search over
{0.01, 0.1, 1, 10, 100}".  ``config/neural_logistic_tuning.yaml`` holds the grid: experiments
named ``tune_<family>_<environment>`` whose algorithms are labelled
``<algorithm>_nu<nu>_lam<lam>`` (one per grid pair, with the paper grid's other parameters)
plus ``random`` (uniform random, the normaliser), on seeds disjoint from the evaluation seeds.

:func:`choose` picks, per family and algorithm, the pair with the lowest mean over the
family's environments of ``cumulative regret at the horizon / uniform random's`` (each
environment weighs the same whatever its scale; ties go to the first pair in grid order, the
smaller nu, then the smaller lam).  The rows come from Snakemake's tidy tables
(:func:`read_tables`, ``results/<run>/tables/tune_*.csv``) or from an in-process run of the grid
(:func:`run_grid`, for a reduced run without per-job overhead).  No published table enters:
the choice is the argmin of our own runs.

Diverged pairs: where gradient descent diverges (corners of the grid: a large ``lam`` with a large
learning rate) a run's scores become NaN and the run stops, recorded as diverged
(:func:`banditbench.simulation.job.run_cell`).  A pair with a diverged run, on any seed of any of the
family's environments, has no score (NaN in the rows; :func:`read_tables` reads the tidy tables' ``diverged``
column, :func:`run_grid` the runs): :func:`choose` never chooses it and lists it under ``diverged``.
"""

from __future__ import annotations

import csv
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

#: the paper's grid for both nu and lam (Sec. 7)
GRID = (0.01, 0.1, 1, 10, 100)
LABEL = re.compile(r"^(?P<algorithm>.+)_nu(?P<nu>[0-9.e+-]+)_lam(?P<lam>[0-9.e+-]+)$")
EXPERIMENT = re.compile(r"^tune_(?P<family>[a-z0-9]+)_(?P<environment>.+)$")
NORMALISER = "random"


def parse_label(label: str) -> tuple[str, float, float] | None:
    """``neurallog_ucb1_nu0.1_lam10`` -> ``("neurallog_ucb1", 0.1, 10.0)``; None for another label."""
    m = LABEL.match(label)
    return None if m is None else (m["algorithm"], float(m["nu"]), float(m["lam"]))


def family_of(experiment: str) -> tuple[str, str]:
    m = EXPERIMENT.match(experiment)
    if m is None:
        raise ValueError(f"{experiment!r} is not a tuning experiment (tune_<family>_<environment>)")
    return m["family"], m["environment"]


def read_tables(paths: Iterable[str | Path]) -> list[tuple[str, str, float]]:
    """``(experiment, algorithm, mean cumulative regret at the last horizon)`` from tidy tables; NaN for a
    cell with a diverged seed (the tables' ``diverged`` column, :mod:`banditbench.analysis.aggregate`)."""
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            records = [r for r in csv.DictReader(f) if r["metric"] == "cumulative_regret"]
        last: dict[tuple[str, str], tuple[int, float]] = {}
        for r in records:
            key, t = (r["experiment"], r["algorithm"]), int(float(r["t"]))
            diverged = float(r.get("diverged") or 0) > 0 or r["mean"] == ""
            if key not in last or t > last[key][0]:
                last[key] = (t, math.nan if diverged else float(r["mean"]))
        rows += [(e, a, v) for (e, a), (_, v) in last.items()]
    return rows


def run_grid(
    config: Mapping,
    experiments: Sequence[str],
    seeds: Sequence[int],
    horizon: int | None,
    jobs: int = 1,
    cache: str | Path | None = None,
    block: int | None = None,
) -> list[tuple[str, str, float]]:
    """Run every algorithm of the tuning experiments in-process (``jobs`` worker processes) and
    return ``(experiment, algorithm, mean cumulative regret over seeds)``, NaN where a seed diverged (also
    NaN in ``cache``, so a resumed run keeps it).  ``horizon`` (None: the
    config's) overrides the config's as ``--config horizon=...`` would; ``seeds`` replaces each
    experiment's seed list (the top-level ``seeds`` override would give 0, 1, ...: evaluation seeds).
    ``cache``: a CSV of finished runs, appended as they finish and read back (runs already in it
    are not repeated), so an interrupted run resumes.  The runs of one experiment and algorithm family
    that differ only in the parameters its seed-batched implementation takes per member (``nu``, ``lam``)
    and the seed play in lockstep, at most ``block`` (None: all of them) per block
    (:func:`member_blocks`, :func:`banditbench.simulation.job.run_members`): each run's result is the one it
    gives alone, bit for bit on one machine."""
    from ..configuration.grid import load_grid

    kept = {name: {**config["experiments"][name], "seeds": [int(s) for s in seeds]} for name in experiments}
    grid = load_grid({**config, "horizon": horizon, "experiments": kept})
    cells = []
    for name in experiments:
        exp = grid.experiments[name]
        (delay,), (budget,) = exp.delays, exp.budget_labels
        cells += [
            (name, alg, grid.cell(name, alg, delay, budget, seed)) for alg in exp.algorithms for seed in exp.seeds
        ]
    for name in experiments:  # a missing prepared dataset stops here, before any run
        for path in grid.data_files(name):
            if not Path(path).exists():
                raise FileNotFoundError(
                    f"{name}: prepared dataset {path} does not exist; build it with `snakemake --cores 1 {path}`"
                )
    done: dict[tuple[str, str, int], float] = {}
    if cache is not None and Path(cache).exists():
        with open(cache, newline="") as f:
            done = {
                (r["experiment"], r["algorithm"], int(r["seed"])): float(r["cumulative_regret"])
                for r in csv.DictReader(f)
                if r["experiment"] in grid.experiments
                and int(r["horizon"]) == grid.experiments[r["experiment"]].horizon
            }
    todo = [(n, a, c) for n, a, c in cells if (n, a, int(c["seed"])) not in done]
    blocks = member_blocks(todo, block)
    out = open(cache, "a", newline="") if cache is not None else None
    try:
        if out is not None and out.tell() == 0:
            out.write("experiment,algorithm,seed,horizon,cumulative_regret\n")
        if jobs > 1:
            import multiprocessing

            pool = multiprocessing.get_context("spawn").Pool(jobs)
            results = pool.imap(_final_regrets, [[c for _, _, c in b] for b in blocks], chunksize=1)
        else:
            pool, results = None, map(_final_regrets, [[c for _, _, c in b] for b in blocks])
        for members, totals in zip(blocks, results):  # each block recorded as it finishes
            for (name, alg, cell), total in zip(members, totals):
                done[(name, alg, int(cell["seed"]))] = total
                if out is not None:
                    out.write(f"{name},{alg},{cell['seed']},{cell['horizon']},{total!r}\n")
            if out is not None:
                out.flush()
        if pool is not None:
            pool.close()
            pool.join()
    finally:
        if out is not None:
            out.close()
    sums: dict[tuple[str, str], list[float]] = defaultdict(list)
    for name, alg, cell in cells:
        sums[(name, alg)].append(done[(name, alg, int(cell["seed"]))])
    return [(e, a, sum(v) / len(v)) for (e, a), v in sums.items()]


def member_blocks(
    runs: Sequence[tuple[str, str, Mapping]], block: int | None = None
) -> list[list[tuple[str, str, Mapping]]]:
    """Group ``(experiment, label, cell)`` runs into blocks for :func:`banditbench.simulation.job.run_members`:
    one block per :func:`~banditbench.simulation.runner.lockstep_key` (experiment, delay, budget, policy and
    policy parameters other than its seed-batched engine's ``per_member``), cut into blocks of at most ``block`` runs;
    runs of a policy without a seed-batched implementation are blocks of one."""
    from ..simulation.job import SEED_BATCHED, engine
    from ..simulation.runner import lockstep_key

    groups: dict[tuple, list[tuple[str, str, Mapping]]] = {}
    for run in runs:
        name, label, cell = run
        if engine([cell]) != SEED_BATCHED:
            groups[(name, label, int(cell["seed"]))] = [run]
            continue
        groups.setdefault(lockstep_key(cell), []).append(run)
    size = block or max((len(g) for g in groups.values()), default=1)
    return [g[i : i + size] for g in groups.values() for i in range(0, len(g), size)]


def _final_regrets(cells: Sequence[Mapping]) -> list[float]:
    """Cumulative regret of each run of one block, played with one BLAS thread, as a simulate job
    plays it (``workflow/rules/simulate.smk``): results are bit-identical only for a fixed thread
    count, and the pool's workers share the cores (several BLAS threads per worker made the linear
    baselines on MNIST's 490 features 27x slower)."""
    from threadpoolctl import threadpool_limits

    from ..simulation.job import run_members

    with threadpool_limits(limits=1):
        # a diverged run (its line printed by the runner) has no regret: NaN, never chosen
        return [
            math.nan if meta.get("diverged") else float(series["regret"].sum())
            for series, meta, _ in run_members(cells)
        ]


def choose(rows: Iterable[tuple[str, str, float]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{family: {algorithm: {"nu", "lam", "score"}}}`` (module docstring).

    A row whose value is NaN is a diverged run: its pair is never chosen, and the algorithm's entry lists
    such pairs as ``"diverged": [[nu, lam], ...]`` (grid order; the key only where one diverged).  When
    every pair diverged, ``nu``, ``lam`` and ``score`` are None (:func:`as_yaml` says so, :func:`apply_choice`
    keeps the config's values)."""
    regret: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)  # family -> (environment, label)
    for experiment, label, value in rows:
        family, environment = family_of(experiment)
        regret[family][(environment, label)] = value
    chosen: dict[str, dict[str, dict[str, float]]] = {}
    for family, table in sorted(regret.items()):
        environments = sorted({env for env, _ in table})
        for env in environments:
            if (env, NORMALISER) not in table:
                raise ValueError(f"tune_{family}_{env}: no {NORMALISER!r} run to normalise by")
            if not table[(env, NORMALISER)] > 0:
                raise ValueError(
                    f"tune_{family}_{env}: uniform random has no regret; the environment cannot rank "
                    f"pairs (leave it out of the tuning grid)"
                )
        scores: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
        diverged: dict[str, list[list[float]]] = defaultdict(list)
        labels = {label for _, label in table}
        for label in labels:
            parsed = parse_label(label)
            if parsed is None:
                continue
            algorithm, nu, lam = parsed
            missing = [env for env in environments if (env, label) not in table]
            if missing:
                raise ValueError(
                    f"{label}: no run in tune_{family}_{missing[0]} (every environment of a family runs the same grid)"
                )
            score = sum(table[(env, label)] / table[(env, NORMALISER)] for env in environments) / len(environments)
            if math.isnan(score):  # a diverged run on some seed of some environment
                diverged[algorithm].append([nu, lam])
                continue
            scores[algorithm].append((nu, lam, score))
        chosen[family] = {}
        for algorithm in sorted(set(scores) | set(diverged)):
            entries = scores.get(algorithm)
            if entries:
                best = min(sorted(entries), key=lambda e: e[2])  # grid order breaks ties
                entry: dict[str, Any] = {"nu": best[0], "lam": best[1], "score": round(best[2], 4)}
            else:
                entry = {"nu": None, "lam": None, "score": None}
            if diverged.get(algorithm):
                entry["diverged"] = sorted(diverged[algorithm])
            chosen[family][algorithm] = entry
    return chosen


def diverged_text(pairs: Sequence[Sequence[float]]) -> str:
    """``nu 100 lam 0.01, nu 100 lam 0.1``: the diverged pairs of :func:`choose`."""
    return ", ".join(f"nu {nu:g} lam {lam:g}" for nu, lam in pairs)


def as_yaml(chosen: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    lines = []
    for family, algorithms in chosen.items():
        lines.append(f"{family}:")
        for algorithm, v in algorithms.items():
            diverged = v.get("diverged")
            if v["nu"] is None:
                lines.append(f"  {algorithm}: null   # every (nu, lam) pair diverged: none chosen")
                continue
            note = f"; diverged, never chosen: {diverged_text(diverged)}" if diverged else ""
            lines.append(
                f"  {algorithm}: {{nu: {v['nu']:g}, lam: {v['lam']:g}}}   # regret / random {v['score']:.4f}{note}"
            )
    return "\n".join(lines) + "\n"


#: experiment name prefixes -> the tuning family whose values they take (module docstring)
FAMILY_OF_EXPERIMENT = (("synthetic_", "synthetic"), ("dim_", "synthetic"), ("real_", "real"), ("obd_", "real"))
#: suffixes of named variants that take their paper form's tuned values (``*_reference`` keeps its own)
VARIANTS = ("_adam", "_scaled_dim", "_network")
_EXPERIMENT_LINE = re.compile(r"^  (?P<name>[a-z0-9_]+):\s*$")
_ALGORITHM_LINE = re.compile(r"^\s+(?P<label>[a-z0-9_]+): \{policy: [a-z0-9_]+, params: \{.*\}\}\s*$")


def apply_choice(text: str, chosen: Mapping[str, Mapping[str, Mapping[str, float]]]) -> str:
    """``text`` (a paper-grid config, e.g. ``config/neural_logistic.yaml``) with every tuned row's ``nu``
    and ``lam`` set to ``chosen`` (:func:`choose`): a row labelled ``<algorithm>`` or
    ``<algorithm><variant suffix>`` (:data:`VARIANTS`) of an experiment whose name starts with one of
    :data:`FAMILY_OF_EXPERIMENT`'s prefixes takes its family's values; ``*_reference`` rows and
    other lines are kept as they are.  Line by line, so comments and anchors stay."""
    out, family = [], None
    for line in text.splitlines(keepends=True):
        m = _EXPERIMENT_LINE.match(line)
        if m:
            family = next((f for prefix, f in FAMILY_OF_EXPERIMENT if m["name"].startswith(prefix)), None)
        m = _ALGORITHM_LINE.match(line)
        if m and family in chosen:
            label = m["label"]
            base = next((label[: -len(v)] for v in VARIANTS if label.endswith(v)), label)
            values = chosen[family].get(base)
            if (
                values is not None
                and values.get("nu") is not None
                and re.search(r"\bnu: ", line)
                and re.search(r"\blam: ", line)
            ):
                line = re.sub(r"\bnu: [^,}]+", f"nu: {values['nu']:g}", line)
                line = re.sub(r"\blam: [^,}]+", f"lam: {values['lam']:g}", line)
        out.append(line)
    return "".join(out)
