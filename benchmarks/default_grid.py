"""The default grid's wall and CPU time on a fresh clone, at two commits, in one invocation.

What a new user meets after ``make install``: each revision is cloned into a fresh folder (its own
``config.yaml``, profiles and ``src/``), its install-time step run as ``make install`` runs it
(``banditbench precompile`` where the revision has it: the Lipschitz family's numba functions
into the clone's cache, timed apart), then ``snakemake --cores N`` through the clone's default
profile.  Reported per revision: the precompile time, the run's wall time and the CPU time of
Snakemake and all its jobs (``getrusage``), the simulate jobs' CPU (their ``benchmark:`` files)
and the rest (gathering, Snakemake itself), and the number of jobs per rule kind.  The runs go
one after the other, in the order given; on a shared machine compare the rows of one invocation
(the load is printed with each).

    python benchmarks/default_grid.py [--revisions 8955236 HEAD] [--cores 2]
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from job_overhead import children_cpu

ROOT = Path(__file__).resolve().parents[1]


def clone(revision: str, dest: Path) -> str:
    subprocess.run(["git", "clone", "-q", str(ROOT), str(dest)], check=True)
    subprocess.run(["git", "checkout", "-q", revision], cwd=dest, check=True)
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=dest, check=True, capture_output=True, text=True
    ).stdout.strip()


def env_of(work: Path) -> dict:
    return dict(os.environ, PYTHONPATH=str(work / "src"))


def precompile(work: Path) -> float | None:
    """Seconds of ``banditbench precompile`` in the clone, None where the revision has no such command."""
    if "precompile" not in (work / "src" / "banditbench" / "cli.py").read_text():
        return None
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "banditbench", "precompile"], cwd=work, env=env_of(work), check=True, capture_output=True
    )
    return time.perf_counter() - start


def simulate_cpu(work: Path) -> float:
    total = 0.0
    for path in (work / "results" / "runs").rglob("*.benchmark.tsv"):
        with path.open() as f:
            total += float(list(csv.DictReader(f, delimiter="\t"))[-1]["cpu_time"])
    return total


def jobs_per_rule(log: str) -> Counter:
    rules = re.findall(r"^\s*(?:local)?rule (\w+):", log, re.M)
    return Counter("simulate" if r.startswith("simulate_") else r for r in rules if r != "all")


def run_grid(work: Path, cores: int) -> dict:
    load = os.getloadavg()[0]
    cpu, start = children_cpu(), time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", str(cores)],
        cwd=work,
        env=env_of(work),
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if run.returncode:
        raise SystemExit(f"snakemake failed in {work}:\n{run.stderr[-3000:]}")
    total = children_cpu() - cpu
    sim = simulate_cpu(work)
    return {
        "load": load,
        "wall": wall,
        "cpu": total,
        "simulate": sim,
        "rest": total - sim,
        "jobs": jobs_per_rule(run.stdout + run.stderr),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--revisions", nargs="+", default=["HEAD"], help="git revisions of this checkout, in order")
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="default-grid-") as tmp:
        for i, revision in enumerate(args.revisions):
            work = Path(tmp) / f"r{i}"
            commit = clone(revision, work)
            compiled = precompile(work)
            result = run_grid(work, args.cores)
            rows.append((revision, commit, compiled, result))
            print(f"{revision} ({commit}): {result['wall']:.1f} s wall, {result['cpu']:.1f} s CPU", flush=True)
    print(f"\n`snakemake --cores {args.cores}` on the default grid of a fresh clone, one after the other:\n")
    print("| revision | precompile [s] | load | wall [s] | CPU [s] | simulate jobs' CPU [s] | the rest [s] | jobs |")
    print("|---|---|---|---|---|---|---|---|")
    first = rows[0][3]
    for revision, commit, compiled, r in rows:
        ratio = "" if r is first else f" ({first['wall'] / r['wall']:.2f}×)"
        jobs = ", ".join(f"{rule} {n}" for rule, n in sorted(r["jobs"].items()))
        print(
            f"| {revision} ({commit}) | {'—' if compiled is None else f'{compiled:.1f}'} | {r['load']:.1f} | "
            f"{r['wall']:.1f}{ratio} | {r['cpu']:.1f} | {r['simulate']:.1f} | {r['rest']:.1f} | {jobs} |"
        )


if __name__ == "__main__":
    main()
