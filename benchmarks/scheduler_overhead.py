"""Snakemake's own CPU while jobs queue: its default rate limit against the profiles' setting.

Snakemake's scheduler (9.x) arms a ``threading.Timer`` of the rate limiter's timespan
(``--max-jobs-per-timespan``, default ``100/1s``) after every scheduling pass that leaves ready
jobs waiting, and every finished job starts another such chain; each pass re-runs the job
selection over the ready jobs and checks their inputs.  ``profiles/default`` counts the same
rate over a minute (``6000/1m``) and the Snakefile cancels the timers when the run ends.

The same grid (a config file, default ``config.yaml``) runs twice in this invocation, each in a
fresh copy of the project with its prepared data built beforehand (untimed): once with
Snakemake's default ``100/1s``, once with the profile's setting.  Reported per variant: wall
time, the CPU time of the Snakemake process alone and of it with all its jobs (``getrusage``),
and the number of job-selection passes (counted by wrapping ``JobScheduler.job_selector`` in the
measured process).  On a shared machine absolute times move with the load (printed); compare the
two rows of one invocation.

    python benchmarks/scheduler_overhead.py [--config config.yaml] [--cores 2] [--seeds N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from job_overhead import children_cpu, make_project, prepare_data, project_env

ROOT = Path(__file__).resolve().parents[1]

#: runs Snakemake in this process, counting the scheduler's job selections; prints a JSON line at the end
LAUNCHER = r"""
import json, resource, sys
from snakemake.scheduling import job_scheduler
passes = [0]
select = job_scheduler.JobScheduler.job_selector
def counted(self, *args, **kwargs):
    passes[0] += 1
    return select(self, *args, **kwargs)
job_scheduler.JobScheduler.job_selector = counted
from snakemake.cli import main
try:
    main(sys.argv[1:])
finally:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print("SCHEDULER " + json.dumps({"passes": passes[0], "cpu": usage.ru_utime + usage.ru_stime}), flush=True)
"""


def profile_rate() -> str:
    profile = yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text())
    return profile["max-jobs-per-timespan"]


def run_variant(work: Path, cores: int, rate: str) -> dict:
    cpu, start = children_cpu(), time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-c", LAUNCHER, "--cores", str(cores), "--quiet", "--max-jobs-per-timespan", rate],
        cwd=work,
        capture_output=True,
        text=True,
        env=project_env(work),
    )
    wall = time.perf_counter() - start
    if run.returncode:
        raise SystemExit(f"snakemake failed ({rate}):\n{run.stderr[-3000:]}")
    line = re.search(r"^SCHEDULER (.*)$", run.stdout, re.M)
    stats = json.loads(line.group(1))
    return {"wall": wall, "total_cpu": children_cpu() - cpu, "snakemake_cpu": stats["cpu"], "passes": stats["passes"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="config.yaml")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=None, help="override every experiment's number of seeds")
    args = ap.parse_args()
    config = yaml.safe_load((ROOT / args.config).read_text())
    if args.seeds is not None:
        config["seeds"] = args.seeds
    rows = []
    with tempfile.TemporaryDirectory(prefix="banditbench-scheduler-") as tmp:
        for label, rate in (("Snakemake's default", "100/1s"), ("profiles/default", profile_rate())):
            work = make_project(Path(tmp) / f"v{len(rows)}", config)
            prepare_data(work, config, args.cores)
            load = os.getloadavg()[0]
            stats = run_variant(work, args.cores, rate)
            rows.append((label, rate, stats, load))
            print(f"  {label} ({rate}): {stats}, load {load:.1f}", flush=True)
    base = rows[0][2]
    print(f"\n{args.config}, {args.cores} cores")
    print(
        "| rate limit | job selections | Snakemake CPU [s] | all CPU [s] | wall [s] | wall vs default | load (1 min) |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, rate, s, load in rows:
        print(
            f"| {label}: `{rate}` | {s['passes']} | {s['snakemake_cpu']:.1f} | {s['total_cpu']:.1f} | {s['wall']:.1f} "
            f"| {s['wall'] / base['wall']:.2f}x | {load:.1f} |"
        )


if __name__ == "__main__":
    main()
