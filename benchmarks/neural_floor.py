"""The neural grids against the arithmetic floor of one CPU core (issue 48), before and after, in one run.

Three jobs as the paper grids run them, each a whole ``banditbench run-block`` process (imports, building, rounds,
result files) with one thread, timed by its CPU time (``getrusage`` of the child: a busy machine inflates it far
less than wall time):

* ``e3``: seed 001's Table E.3 cell (``vdb_square_d20_T10000``, NVLDB-UCB-ASYM), one seed a job;
* ``ndb_df``: seed 000's ``delayed_dueling_quadratic`` cell, NDB-DF with geometric delays (mean 20, window 50),
  a job's block of 10 seeds;
* ``neurallog``: seed 002's ``synthetic_h1`` cell, NeuralLog-UCB-2, a job's block of 10 seeds, with the algorithms
  its lockstep group holds where the tree's config plays them in one job (``lockstep_variants``: NeuralLog-TS-2);

at a shorter horizon than the paper's (``--horizons``).  Each job runs on this tree and, with ``--before TREE``,
on another checkout's ``src`` (e.g. a ``git worktree`` of an older commit), alternately, ``--repeats`` times; the
table gives the median CPU seconds per seed of each and their ratio.  Per cell it also prints the FLOPs per seed
from :mod:`flop_model` (the products this tree's rounds perform, by definition), the rate they were done at, its share of
this core's matmul peak (measured here: ``numpy`` products of 1,024 x 1,024 in the training's precision, one
thread), and the projected CPU-hours of the paper table the cell belongs to: the measured CPU per seed scaled to
the paper's horizon by the model's FLOPs (NVLDB, NDB: their time is the products'), or by rounds (NeuralLog: its
rounds are interpreter-bound), times the table's runs of that family.

    python benchmarks/neural_floor.py [--before /path/to/old/checkout] [--cells e3 ndb_df neurallog]
                                      [--horizons e3=2000 ndb_df=500 neurallog=500] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
import flop_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Cell:
    """A paper grid's job: its config, experiment, algorithm, delay, seeds a job, the paper table's horizon and runs
    of this family (algorithms x delays x seeds), and how its time scales with the horizon."""

    config: str
    experiment: str
    algorithm: str
    delay: str
    seeds: int
    paper_horizon: int
    table_runs: int
    table: str
    scales_by: str  # "flops" or "rounds"


CELLS = {
    # Table E.3: six NVLDB variants x 20 seeds at T = 10,000
    "e3": Cell(
        "variance_dueling",
        "vdb_square_d20_T10000",
        "NVLDB-UCB-ASYM",
        "none",
        1,
        10_000,
        120,
        "seed 001 Table E.3",
        "flops",
    ),
    # Fig. 1b's quadratic panel: NDB-DF and three delay baselines x three delays x 10 seeds at T = 2,000
    "ndb_df": Cell(
        "delayed_dueling",
        "delayed_dueling_quadratic",
        "ndb_df",
        "geometric_mean20_M50",
        10,
        2_000,
        120,
        "seed 000 Fig. 1b (quadratic)",
        "flops",
    ),
    # Table 2's h1 row: NeuralLog-UCB-1/2, TS-1/2 and NCBF-UCB x 10 seeds at T = 2,000
    "neurallog": Cell(
        "neural_logistic", "synthetic_h1", "neurallog_ucb2", "none", 10, 2_000, 50, "seed 002 synthetic h1", "rounds"
    ),
}


def job_cells(cell: Cell, horizon: int, tree: Path) -> list[dict]:
    """The cells one job of ``tree``'s paper grid plays for ``cell``'s algorithm: its lockstep group where that
    tree's config plays one (``lockstep_variants``), else the algorithm alone."""
    from banditbench.configuration.grid import load_config_file, load_grid

    config = load_config_file(tree / "config" / f"{cell.config}.yaml")
    grid = load_grid({**config, "claims_files": []})
    group = (cell.algorithm,)
    if grid.lockstep_variants:
        group = next(g for g in grid.variant_groups(cell.experiment) if cell.algorithm in g)
    return [
        {**json.loads(grid.cell_json(cell.experiment, algorithm, cell.delay, "none", None)), "horizon": horizon}
        for algorithm in group
    ]


def run_job(tree: Path, cells: list[dict], seeds: int) -> float:
    """CPU seconds per run (cell x seed) of one ``run-block`` process of ``seeds`` seeds of ``cells`` on ``tree``'s
    sources."""
    with tempfile.TemporaryDirectory() as out:
        outputs = [str(Path(out) / f"{i}-{seed}.npz") for i in range(len(cells)) for seed in range(seeds)]
        command = [sys.executable, "-m", "banditbench", "run-block", "--cell", *map(json.dumps, cells), "--seeds"]
        command += [str(seed) for seed in range(seeds)] + ["--outputs", *outputs]
        env = {**os.environ, **THREADS, "PYTHONPATH": str(tree / "src")}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, env=env, check=True, cwd=out, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / len(outputs)


def matmul_peak(dtype) -> float:
    """GFLOP/s of this core's best 1,024 x 1,024 product in ``dtype`` (one thread)."""
    a = np.random.default_rng(0).standard_normal((1024, 1024)).astype(dtype)
    best = float("inf")
    with threadpool_limits(1):
        for _ in range(7):
            start = time.process_time()
            a @ a
            best = min(best, time.process_time() - start)
    return 2 * 1024**3 / best / 1e9


def network(policy, arm_dim: int) -> flop_model.Network:
    """The network as the engines compute it: a symmetric input ``[x; x] / sqrt(2)`` folded into the first layer."""
    if getattr(policy.net, "symmetric", False):
        return flop_model.folded(policy.net.shapes, arm_dim)
    return flop_model.Network(tuple(policy.net.shapes))


def flops_per_seed(name: str, cell: dict, horizon: int) -> tuple[int, str]:
    """:mod:`flop_model`'s FLOPs of one seed of ``cell`` over ``horizon`` rounds (this tree's code), and the
    training's precision."""
    from banditbench.simulation.runner import build

    policy = build({**cell, "seed": 0})[1]
    trainer, params = policy.trainer, cell["environment"]["params"]
    precision = str(trainer.current.dtype).removeprefix("torch.")
    net = network(policy, params["dimension"])
    if name == "e3":
        rounds = lambda t: flop_model.nvldb_round(net, t, trainer.steps, trainer.due(t), len(policy.theta0))  # noqa: E731
    elif name == "ndb_df":
        kept = type(policy).batch([policy]).gram.shape[-1]  # the coordinates the engine keeps V^{-1} in
        rounds = lambda t: flop_model.ndb_round(net, t, trainer.steps, params["n_arms"], kept)  # noqa: E731
    else:
        rounds = lambda t: flop_model.neurallog_round(net, t, trainer.steps, trainer.due(t), trainer.batch)  # noqa: E731
    return flop_model.per_seed(rounds, horizon), precision


def measure(name: str, horizon: int, trees: dict[str, Path], repeats: int, peaks: dict[str, float]) -> str:
    """One table row: ``name``'s job on each tree, alternately ``repeats`` times (both see the same load)."""
    spec = CELLS[name]
    jobs = {tree: job_cells(spec, horizon, path) for tree, path in trees.items()}
    cell = jobs["after"][0]
    times = {tree: [] for tree in trees}
    for _ in range(repeats):
        for tree, path in trees.items():
            times[tree].append(run_job(path, jobs[tree], spec.seeds))
    flops, precision = flops_per_seed(name, cell, horizon)
    paper_flops, _ = flops_per_seed(name, cell, spec.paper_horizon)
    scale = paper_flops / flops if spec.scales_by == "flops" else spec.paper_horizon / horizon
    cpu = {tree: statistics.median(runs) for tree, runs in times.items()}
    hours = {tree: f"{seconds * scale * spec.table_runs / 3600:.2f}" for tree, seconds in cpu.items()}
    rate = flops / cpu["after"] / 1e9  # the model counts this tree's products
    before = cpu.get("before")
    ratio = "" if before is None else f"{before / cpu['after']:.2f}x"
    return (
        f"| {name} | {horizon:,} | {'' if before is None else f'{before:.2f}'} | {cpu['after']:.2f} | {ratio} | "
        f"{flops / 1e9:.2f} | {rate:.1f} | {rate / peaks[precision]:.0%} of {precision} | {spec.table} "
        f"(T = {spec.paper_horizon:,}, {spec.table_runs} runs) | {hours.get('before', '')} | {hours['after']} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, help="another checkout to compare with (its src/ is imported)")
    ap.add_argument("--cells", nargs="+", default=list(CELLS), choices=list(CELLS))
    ap.add_argument("--horizons", nargs="+", default=["e3=2000", "ndb_df=500", "neurallog=500"])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    horizons = {k: int(v) for k, v in (item.split("=") for item in args.horizons)}
    trees = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    peaks = {"float32": matmul_peak(np.float32), "float64": matmul_peak(np.float64)}
    print(f"one core's matmul peak: float32 {peaks['float32']:.1f} GFLOP/s, float64 {peaks['float64']:.1f} GFLOP/s")
    print(
        "| cell | T | CPU s per seed, before | after | ratio | GFLOP per seed | GFLOP/s | share of peak | paper table "
        "| projected CPU-hours, before | after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.cells:
        print(measure(name, horizons[name], trees, args.repeats, peaks), flush=True)


if __name__ == "__main__":
    main()
