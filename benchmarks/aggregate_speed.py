"""Aggregation time of the knapsack paper grid (config/knapsack.yaml), before and after the per-seed table.

*Before*: the aggregation as it was before the per-seed Parquet table (the modules
``banditbench/analysis/aggregate.py`` and ``resultio.py`` at commit ``--before``, loaded from git): each
result file read
and checked in one process, the statistics built cell by cell in Python, CSV/Markdown/LaTeX written.
*After*: :func:`banditbench.analysis.aggregate.aggregate_experiment` as the pipeline runs it — the
files read (and checked, provenance included) by ``--workers`` processes into the per-seed table,
written as Parquet, every table computed from it — with 1 worker and with ``--workers``.

The grid's result files are written first, one per run of every experiment of the config (12,800 at
the config's 200 seeds; ``--seeds`` for fewer), each with its own cell, seed and provenance in the
format the simulate jobs write.  Their series are real: each cell's comes from one simulated seed of
``knapsack_synthetic`` with the same algorithm, delay and budget (the car experiment's cells reuse
them: same metrics and lengths, so the files have the sizes of real ones; simulating the whole grid
takes about an hour on 2 cores and is not what is measured).  The files are read once before timing,
so every variant reads from the page cache.

    .venv/bin/python benchmarks/aggregate_speed.py [--seeds 200] [--workers 2] [--before COMMIT] [--dir DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from banditbench.analysis.aggregate import aggregate_experiment  # noqa: E402
from banditbench.configuration.grid import load_config_file, load_grid  # noqa: E402
from banditbench.storage.provenance import collect  # noqa: E402
from banditbench.storage.resultio import save_result  # noqa: E402
from banditbench.simulation.job import run_cell  # noqa: E402

#: the last commit whose aggregation read the result files without the per-seed table
BEFORE = "b80a176~1"


def _module_at(commit: str, file: str, name: str):
    """``src/banditbench/<file>`` as of ``commit``, imported as module ``name`` of the current package."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:src/banditbench/{file}"], check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / Path(file).name
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_before(commit: str):
    """The aggregation module as of ``commit`` with the result reader of that commit (its other
    relative imports resolve to today's config, errors, pages)."""
    module = _module_at(commit, "analysis/aggregate.py", "banditbench.analysis._aggregate_before")
    module.load_result = _module_at(commit, "resultio.py", "banditbench._resultio_before").load_result
    return module


def write_grid(grid, out: Path) -> dict[str, list[str]]:
    """One result file per run of the grid, series from one simulated seed per synthetic cell."""
    source = grid.experiments["knapsack_synthetic"]
    series = {}
    for alg in source.algorithms:
        for delay in source.delays:
            for budget in source.budget_labels:
                cell = grid.cell("knapsack_synthetic", alg, delay, budget, 0)
                series[(alg, delay, budget)] = run_cell(cell)[0]
    provenance = collect()
    runs = {}
    for name in grid.experiments:
        runs[name] = []
        for job in grid.jobs(name):
            cell = grid.cell(name, job["algorithm"], job["delay"], job["budget"], job["seed"])
            data = series[(job["algorithm"], job["delay"], job["budget"])]
            path = out / "runs" / name / job["algorithm"] / job["delay"] / job["budget"] / f"{job['seed']}.npz"
            meta = {
                "cell": cell,
                "seed": int(job["seed"]),
                "metrics": ["reward", "regret", "cost", "active"],
                "summary": {"tau": 1000.0 + int(job["seed"])},
            }
            save_result(path, data, meta, {"wall_time_s": 0.5}, provenance)
            runs[name].append(str(path))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "config" / "knapsack.yaml"))
    parser.add_argument("--seeds", type=int, default=None, help="seeds per cell (default: the config's)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--dir", default=None, help="where the result files go (default: a temporary folder)")
    args = parser.parse_args()

    config = load_config_file(args.config)
    config["seeds"] = args.seeds
    grid = load_grid(config)
    before = load_before(args.before)
    out = Path(args.dir or tempfile.mkdtemp(prefix="aggregate_speed_"))
    start = time.perf_counter()
    runs = write_grid(grid, out)
    total = sum(map(len, runs.values()))
    print(f"{total} result files written in {time.perf_counter() - start:.0f} s to {out}")
    for paths in runs.values():  # page cache warm for every variant
        for p in paths:
            Path(p).read_bytes()

    print(
        f"{'experiment':<20} {'runs':>6} {'before s':>9} {'after, 1 worker s':>18} "
        f"{f'after, {args.workers} workers s':>20} {'ratio 1w':>9} {f'ratio {args.workers}w':>9}"
    )
    totals = [0.0, 0.0, 0.0]
    for name, paths in runs.items():
        exp = grid.experiments[name]
        horizons = list(exp.table_horizons)
        main_metric = f"cumulative_{exp.plot_metric}"
        tables = out / "tables"
        tables.mkdir(exist_ok=True)
        files = [tables / f"{name}.{ext}" for ext in ("csv", "md", "tex", "curves.csv")]
        times = []
        t0 = time.perf_counter()
        before.aggregate_experiment(paths, name, horizons, *files, main_metric)
        times.append(time.perf_counter() - t0)
        for workers in (1, args.workers):
            t0 = time.perf_counter()
            aggregate_experiment(
                paths, name, horizons, *files, main_metric, seeds_file=tables / f"{name}.parquet", workers=workers
            )
            times.append(time.perf_counter() - t0)
        totals = [a + b for a, b in zip(totals, times)]
        print(
            f"{name:<20} {len(paths):>6} {times[0]:>9.1f} {times[1]:>18.1f} {times[2]:>20.1f} "
            f"{times[0] / times[1]:>9.2f} {times[0] / times[2]:>9.2f}"
        )
    print(
        f"{'all':<20} {total:>6} {totals[0]:>9.1f} {totals[1]:>18.1f} {totals[2]:>20.1f} "
        f"{totals[0] / totals[1]:>9.2f} {totals[0] / totals[2]:>9.2f}"
    )


if __name__ == "__main__":
    main()
