"""Wall time of a full paper grid, projected from a measured subset of its jobs.

The full grids take CPU-hours, so this script runs every cell of a grid (experiment x
algorithm x delay x budget) with only ``--seeds`` seeds (one simulate job per cell)
through Snakemake on ``--cores`` cores, then projects the whole grid with its
``seeds_per_job`` defaults.  Everything is measured in CPU seconds, which do not
grow when other processes share the machine (wall times do; they are printed too):

* ``sim[cell]``   mean simulation CPU time of one seed of a cell (the result files'
  ``timing.cpu_time_s``);
* ``job``         CPU per simulate job outside the simulations (process start,
  imports, set-up, file writes, Snakemake's work per job): the CPU time of the whole
  Snakemake run (itself and all its children, ``getrusage``) minus the seeds'
  simulation CPU minus the CPU of planning the subset (a dry run), per job;
* ``plan``        CPU of a dry run of the full grid (parse, validation, DAG);
* ``gather``      CPU of aggregation, plots, timing summaries and run information
  over the finished subset (a second Snakemake run), plus, for the full grid, two
  reads (aggregate, timing) of each further result file at the measured cost of a read.

Projection for ``c`` cores: ``plan + max(longest job, (sum over cells of seeds x
sim[cell] + jobs x job) / c) + gather / min(c, experiments)`` (an experiment's
aggregation is one job); a cluster is ``c`` = the number of jobs run at once
(``jobs: 200`` in profiles/slurm), to which the scheduler's latency per DAG level
adds (not modelled: ~1 min per level with status checks every 40 s or more).

    python benchmarks/grid_timing.py --family lipschitz [--experiments ...] [--seeds 2] [--cores 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

from job_overhead import make_project, prepare_data, project_env  # benchmarks/, the script's folder

from banditbench.configuration.grid import load_grid
from banditbench.storage.cells import RESULT_PATH
from banditbench.storage.resultio import load_result

ROOT = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def snakemake(work: Path, cores: int, *args) -> tuple[float, float]:
    """Run Snakemake in ``work``; return (wall s, CPU s of it and all its children)."""
    cpu, start = _children_cpu(), time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", str(cores), *args, "--quiet"],
        cwd=work,
        capture_output=True,
        text=True,
        env=project_env(work),
    )
    if run.returncode:
        raise SystemExit(f"snakemake {' '.join(args)} failed:\n{run.stderr[-3000:]}")
    return time.perf_counter() - start, _children_cpu() - cpu


def hms(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", required=True, help="config/<family>.yaml")
    ap.add_argument("--experiments", nargs="*", default=[], help="only these experiments of the grid")
    ap.add_argument("--seeds", type=int, default=2, help="seeds per cell in the measured subset")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--project", type=int, nargs="*", default=[2, 16, 200], help="core counts to project for")
    args = ap.parse_args()

    full = yaml.safe_load((ROOT / "config" / f"{args.family}.yaml").read_text())
    if args.experiments:
        full["experiments"] = {n: e for n, e in full["experiments"].items() if n in args.experiments}
    grid = load_grid(full)
    subset = yaml.safe_load(yaml.safe_dump(full))
    for spec in subset["experiments"].values():
        spec["seeds"], spec["seeds_per_job"] = args.seeds, args.seeds
    runs_full = sum(len(list(grid.jobs(n))) for n in grid.experiments)
    jobs_full = sum(
        len(e.algorithms) * len(e.delays) * len(e.budgets) * len(e.seed_blocks) for e in grid.experiments.values()
    )

    with tempfile.TemporaryDirectory(prefix="banditbench-grid-") as tmp:
        work = make_project(Path(tmp) / "subset", subset)
        prepare_data(work, subset, args.cores)
        targets = [
            RESULT_PATH.format(**job) for n in load_grid(subset).experiments for job in load_grid(subset).jobs(n)
        ]
        load = os.getloadavg()[0]
        _, plan_subset = snakemake(work, args.cores, "-n", *targets)
        wall, cpu = snakemake(work, args.cores, *targets)
        gather_wall, gather = snakemake(work, args.cores)  # tables, plots, timing of the subset
        sim = defaultdict(list)
        for target in targets:
            _, meta, timing = load_result(work / target)
            c = meta["cell"]
            sim[(c["experiment"], c["algorithm"], c["delay_label"], c["budget"])].append(timing["cpu_time_s"])
        start = time.process_time()
        for target in targets:
            load_result(work / target)
        read = (time.process_time() - start) / len(targets)
        plan_wall, plan = snakemake(make_project(Path(tmp) / "full", full), args.cores, "-n")

    jobs_subset = len(sim)
    sim_cpu = sum(sum(v) for v in sim.values())
    per_job = (cpu - sim_cpu - plan_subset) / jobs_subset
    gather_full = gather + 2 * read * (runs_full - len(targets))
    mean = {k: sum(v) / len(v) for k, v in sim.items()}
    sim_full = sum(
        mean[(n, a, d, b)] * len(e.seeds)
        for n, e in grid.experiments.items()
        for a in e.algorithms
        for d in e.delays
        for b in e.budgets
    )
    longest = max(
        mean[(n, a, d, b)] * e.seeds_per_job + per_job
        for n, e in grid.experiments.items()
        for a in e.algorithms
        for d in e.delays
        for b in e.budgets
    )
    work_cpu = sim_full + jobs_full * per_job

    print(
        f"{args.family}: {runs_full} runs in {jobs_full} simulate jobs "
        f"({', '.join(f'{n}: {e.seeds_per_job} seeds/job' for n, e in grid.experiments.items())})"
    )
    print(
        f"subset: {len(targets)} runs in {jobs_subset} jobs on {args.cores} cores, load {load:.1f} -> "
        f"{os.getloadavg()[0]:.1f}: wall {wall:.1f} s, CPU {cpu:.1f} s (simulation {sim_cpu:.1f} s, "
        f"planning {plan_subset:.1f} s), aggregation etc. {gather_wall:.1f} s wall / {gather:.1f} s CPU, "
        f"reading a result file {1000 * read:.1f} ms CPU"
    )
    for name, exp in grid.experiments.items():
        cells = [v for k, v in mean.items() if k[0] == name]
        cheapest = min(cells) * exp.seeds_per_job
        print(
            f"  {name}: simulation CPU per seed {min(cells):.3f} to {max(cells):.3f} s (cell means); "
            f"a job of {exp.seeds_per_job} seeds of the cheapest cell: {cheapest:.1f} s + {per_job:.2f} s "
            f"outside the simulations ({per_job / (cheapest + per_job):.1%})"
        )
    print(
        f"per job outside the simulations: {per_job:.2f} s CPU "
        f"({per_job * jobs_full / work_cpu:.1%} of the full grid's job CPU with its seeds_per_job)"
    )
    print(
        f"full grid: simulation {sim_full / 3600:.2f} CPU-h, jobs {work_cpu / 3600:.2f} CPU-h, "
        f"planning (dry run) {plan:.1f} s CPU / {plan_wall:.1f} s wall, longest job {longest:.0f} s CPU, "
        f"aggregation etc. {gather_full:.0f} s CPU\n"
    )
    print("| cores | projected wall |")
    print("|---|---|")
    for c in args.project:
        t = plan + max(longest, work_cpu / c) + gather_full / min(c, len(grid.experiments))
        print(f"| {c} | {hms(t)} |")


if __name__ == "__main__":
    main()
