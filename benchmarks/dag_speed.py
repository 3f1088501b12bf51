"""How long Snakemake takes to plan a grid (``snakemake -n``), per job, as the grid grows.

The knapsack paper grid (config/knapsack.yaml: 2 experiments x 4 algorithms x 2 delays
x 4 budgets = 64 cells) is planned with 16, 47 and 200 seeds and one seed per job
(1,024 / 3,008 / 12,800 simulate jobs; 200 seeds is the paper grid), and once with
its ``seeds_per_job`` defaults.  Each dry run is a fresh ``snakemake -n`` process in
a fresh copy of the project: the time includes Snakemake's start (~2 s) and config
validation.  Reported: wall and CPU time (CPU does not grow with other processes'
load) and both per job.  ``--reference REV`` plans the same grids with the project
as of git revision REV (e.g. the commit before source closures were cached) in the
same invocation, for a ratio; ``--reference-max-jobs`` bounds its (slow) sizes.

    python benchmarks/dag_speed.py [--reference 62bccc0] [--reference-max-jobs 3100]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SEEDS = (16, 47, 200)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def dry_run(project: Path, config: dict) -> tuple[float, float, int]:
    """(wall s, CPU s, simulate jobs) of ``snakemake -n`` on ``config`` in a copy of ``project``."""
    with tempfile.TemporaryDirectory(prefix="banditbench-dag-") as tmp:
        work = Path(tmp)
        for item in ("Snakefile", "src", "workflow", "config", "envs", "profiles"):
            if (project / item).exists():
                (shutil.copytree if (project / item).is_dir() else shutil.copy2)(project / item, work / item)
        (work / "config.yaml").write_text(yaml.safe_dump(config))
        cpu, start = _children_cpu(), time.perf_counter()
        run = subprocess.run(
            [sys.executable, "-m", "snakemake", "-n", "--cores", "1"],
            cwd=work,
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(work / "src")),
        )
        wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if run.returncode:
        raise SystemExit(f"dry run failed in {project}:\n{run.stderr[-3000:]}")
    jobs = sum(
        int(line.split()[-1]) for line in run.stdout.split("Job stats:")[1].splitlines() if line.startswith("simulate")
    )
    return wall, cpu, jobs


def grid(project: Path, seeds: int | None, one_per_job: bool) -> dict:
    config = yaml.safe_load((project / "config" / "knapsack.yaml").read_text())
    for spec in config["experiments"].values():
        if seeds is not None:
            spec["seeds"] = seeds
        if one_per_job:
            spec.pop("seeds_per_job", None)  # the default: one seed per job
    return config


def checkout(rev: str, dest: Path) -> Path:
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", help="git revision to compare with (same grids, same invocation)")
    ap.add_argument("--reference-max-jobs", type=int, default=3100)
    args = ap.parse_args()

    rows = []
    with tempfile.TemporaryDirectory(prefix="banditbench-ref-") as tmp:
        reference = checkout(args.reference, Path(tmp)) if args.reference else None
        for seeds in SEEDS:
            wall, cpu, jobs = dry_run(ROOT, grid(ROOT, seeds, True))
            ref = None
            if reference is not None and jobs <= args.reference_max_jobs:
                ref = dry_run(reference, grid(reference, seeds, True))
            rows.append((f"{seeds} seeds, 1 seed/job", jobs, wall, cpu, ref))
            print(
                f"{rows[-1][0]}: {jobs} jobs, {wall:.1f} s wall, {cpu:.1f} s CPU"
                + (f"; {args.reference}: {ref[0]:.1f} s wall, {ref[1]:.1f} s CPU" if ref else "")
                + f" (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
        wall, cpu, jobs = dry_run(ROOT, grid(ROOT, None, False))
        rows.append(("200 seeds, the grid's seeds_per_job", jobs, wall, cpu, None))

    head = "| grid | simulate jobs | wall [s] | CPU [s] | CPU per job [ms] |"
    if args.reference:
        head += f" {args.reference} CPU [s] | ratio (CPU) |"
    print("\n" + head)
    print("|" + "---|" * (head.count("|") - 1))
    for label, jobs, wall, cpu, ref in rows:
        line = f"| {label} | {jobs:,} | {wall:.1f} | {cpu:.1f} | {1000 * cpu / jobs:.2f} |"
        if args.reference:
            line += f" {ref[1]:.1f} | {ref[1] / cpu:.1f}x |" if ref else " | |"
        print(line)
    print(f"\n(load average at the end: {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
