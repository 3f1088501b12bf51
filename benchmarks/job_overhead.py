"""Per-job overhead of the simulate jobs: Snakemake, one seed or a block of seeds per job, against a pool.

The same runs (cells x seeds of a paper grid, at the paper's horizon) are executed
three ways on ``--cores`` workers, one after the other in this invocation:

* ``pool`` -- a ``multiprocessing`` pool (spawned workers, one per core, each importing
  banditbench once) running ``run_cell`` and writing the result files: the cost of the
  simulations themselves;
* ``snakemake, 1 seed/job`` -- ``snakemake --cores N`` with ``seeds_per_job: 1``: one
  process (start, imports, set-up) and one Snakemake job per seed;
* ``snakemake, B seeds/job`` -- the same with the grid's ``seeds_per_job`` (or ``--block``).

Reported per variant: wall time, its ratio to the pool's, and the overhead share
``1 - pool / variant`` (the part of the wall time that is not simulation); and the
same for CPU time (the variant's processes and all their children, ``getrusage``),
which unlike wall time does not grow when other processes load the machine.  Every
variant runs in a fresh copy of the project; data a grid needs (the car oracle) is
built beforehand and not timed.  On a shared machine absolute times move with the
load (printed with each row); compare the ratios of one invocation, the CPU ones first.

    python benchmarks/job_overhead.py --family knapsack --experiments knapsack_synthetic \\
        --delays geometric_mean20 --budgets 900 --seeds 50 [--block 50] [--cores 2] [--skip-single]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from banditbench.configuration.grid import load_grid
from banditbench.storage.cells import RESULT_PATH

ROOT = Path(__file__).resolve().parents[1]

THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
if (ROOT.parent / "shared" / "datasets").is_dir():  # real data (the car oracle) from the offline mirror
    os.environ.setdefault("BANDITBENCH_DATA_MIRROR", str(ROOT.parent / "shared" / "datasets"))


def subset_config(family: str, experiments, delays, budgets, algorithms, seeds: int, block: int | None) -> dict:
    """The family's paper grid restricted to the named experiments / delays / budgets / algorithms."""
    config = yaml.safe_load((ROOT / "config" / f"{family}.yaml").read_text())
    exps = config["experiments"]
    for name in list(exps):
        if experiments and name not in experiments:
            del exps[name]
            continue
        spec = exps[name]
        spec["seeds"] = seeds
        if block is not None:
            spec["seeds_per_job"] = block
        for key, keep in (("delays", delays), ("algorithms", algorithms)):
            if keep:
                spec[key] = {k: v for k, v in spec[key].items() if k in keep}
        if budgets and spec.get("budgets"):
            spec["budgets"] = [b for b in spec["budgets"] if format(b, "g") in budgets]
    if not exps:
        raise SystemExit(f"no experiment of config/{family}.yaml left after the selection")
    # the paper's claims name algorithms and settings the subset leaves out: the runs are what is timed here
    config.pop("claims", None)
    config.pop("claims_files", None)
    return config


def run_files(config: dict) -> list[tuple[dict, str]]:
    grid = load_grid(config)
    out = []
    for name in grid.experiments:
        for job in grid.jobs(name):
            path = RESULT_PATH.format(**job)
            out.append((grid.cell(job["experiment"], job["algorithm"], job["delay"], job["budget"], job["seed"]), path))
    return out


def _worker_init(workdir: str) -> None:
    os.environ.update(THREADS)
    os.chdir(workdir)
    import banditbench.simulation.runner  # noqa: F401  (imports paid once per worker)


def _run(item) -> float:
    from banditbench.storage.resultio import save_result
    from banditbench.simulation.job import run_cell

    cell, path = item
    series, meta, timing = run_cell(cell)
    save_result(path, series, meta, timing)
    return timing["cpu_time_s"]


def make_project(dest: Path, config: dict) -> Path:
    dest.mkdir(parents=True)
    for item in ("Snakefile", "src", "workflow", "config", "envs", "profiles"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dest / item)
    (dest / "config.yaml").write_text(yaml.safe_dump(config))
    return dest


def project_env(work: Path) -> dict:
    """The environment of a Snakemake run in a copy of the project: the copy's src/ first on
    PYTHONPATH (the Snakefile refuses another checkout's banditbench)."""
    return dict(os.environ, PYTHONPATH=str(work / "src"))


def prepare_data(work: Path, config: dict, cores: int) -> None:
    """Build the prepared data the runs read (untimed)."""
    files = sorted({f for name in load_grid(config).experiments for f in load_grid(config).data_files(name)})
    if files:
        run = subprocess.run(
            [sys.executable, "-m", "snakemake", "--cores", str(cores), *files, "--quiet"],
            cwd=work,
            capture_output=True,
            text=True,
            env=project_env(work),
        )
        if run.returncode:
            raise SystemExit(f"building {files} failed:\n{run.stderr[-3000:]}")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_pool(work: Path, runs, cores: int) -> tuple[float, float, float]:
    """(wall s, CPU s of the workers, simulation CPU s of the runs)."""
    cpu, start = children_cpu(), time.perf_counter()
    pool = multiprocessing.get_context("spawn").Pool(cores, initializer=_worker_init, initargs=(str(work),))
    sim = sum(pool.map(_run, runs, chunksize=1))
    pool.close()
    pool.join()  # reaped workers count in RUSAGE_CHILDREN
    return time.perf_counter() - start, children_cpu() - cpu, sim


def time_snakemake(work: Path, config: dict, runs, cores: int) -> tuple[float, float]:
    """(wall s, CPU s of Snakemake and all its jobs)."""
    (work / "config.yaml").write_text(yaml.safe_dump(config))
    targets = [path for _, path in runs]
    cpu, start = children_cpu(), time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", str(cores), *targets, "--quiet"],
        cwd=work,
        capture_output=True,
        text=True,
        env=project_env(work),
    )
    wall = time.perf_counter() - start
    if run.returncode:
        raise SystemExit(f"snakemake failed:\n{run.stderr[-3000:]}")
    return wall, children_cpu() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", required=True, help="config/<family>.yaml")
    ap.add_argument("--experiments", nargs="*", default=[])
    ap.add_argument("--algorithms", nargs="*", default=[])
    ap.add_argument("--delays", nargs="*", default=[])
    ap.add_argument("--budgets", nargs="*", default=[])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--block", type=int, help="seeds per job of the blocked variant (default: the grid's)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument(
        "--skip-single", action="store_true", help="leave out the 1-seed-per-job variant (the longest to time)"
    )
    args = ap.parse_args()

    base = subset_config(args.family, args.experiments, args.delays, args.budgets, args.algorithms, args.seeds, None)
    runs = run_files(base)
    one = subset_config(args.family, args.experiments, args.delays, args.budgets, args.algorithms, args.seeds, 1)
    blocked = subset_config(
        args.family, args.experiments, args.delays, args.budgets, args.algorithms, args.seeds, args.block
    )
    blocks = {n: e.seeds_per_job for n, e in load_grid(blocked).experiments.items()}
    n_jobs = sum(
        len(e.algorithms) * len(e.delays) * len(e.budgets) * len(e.seed_blocks)
        for e in load_grid(blocked).experiments.values()
    )
    print(
        f"{args.family}: {len(runs)} runs ({', '.join(f'{n}: {b} seeds/job' for n, b in blocks.items())}), "
        f"{args.cores} cores",
        flush=True,
    )

    rows = []
    with tempfile.TemporaryDirectory(prefix="banditbench-overhead-") as tmp:
        variants = [
            ("pool (1 process per core)", None, args.cores),
            ("snakemake, 1 seed/job", one, len(runs)),
            ("snakemake, seed blocks", blocked, n_jobs),
        ]
        for label, config, jobs in variants[::2] if args.skip_single else variants:
            work = make_project(Path(tmp) / f"v{len(rows)}", base)
            prepare_data(work, base, args.cores)
            load = os.getloadavg()[0]
            if config is None:
                wall, cpu, sim = time_pool(work, runs, args.cores)
            else:
                wall, cpu = time_snakemake(work, config, runs, args.cores)
            rows.append((label, jobs, wall, cpu, load))
            print(f"  {label}: {wall:.1f} s wall, {cpu:.1f} s CPU (load {load:.1f})", flush=True)
    pool_wall, pool_cpu = rows[0][2], rows[0][3]
    print(f"\nsimulation CPU time of the {len(runs)} runs: {sim:.1f} s")
    print(
        "| variant | jobs | CPU [s] | CPU vs pool | wall [s] | wall vs pool | overhead share (CPU / wall) "
        "| load (1 min) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label, jobs, wall, cpu, load in rows:
        print(
            f"| {label} | {jobs} | {cpu:.1f} | {cpu / pool_cpu:.2f}x | {wall:.1f} | {wall / pool_wall:.2f}x "
            f"| {max(0.0, 1 - sim / cpu):.0%} / {max(0.0, 1 - pool_wall / wall):.0%} | {load:.1f} |"
        )


if __name__ == "__main__":
    main()
