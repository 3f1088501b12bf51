"""Does the network's precision change the regret?  float32 against float64 on the same seeds (issue 48).

Runs a paper cell's algorithms (``--experiment``, default seed 000's ``delayed_dueling_quadratic`` with geometric
delays of mean 20, window 50: NDB-DF, NDB-Ignore, NDB-Heuristic and NDB-Zero) on the seed-batched engine, what a
simulate job runs, once with ``precision: float32`` and once with ``float64``, on seeds 0 .. ``--seeds`` - 1 (the
same environments, delays and initial draws: only the network's rounding differs), at ``--horizon``.  Per
algorithm and pooled over them, it prints the mean cumulative regret at the horizon of each precision and the
paired difference ``R_float32 - R_float64`` per seed: its mean, a 95 % t-interval, and the mean relative to the
float64 regret.  The precision is left at float32 (the family's default) where every interval contains 0 and
the difference is small against the regret.

    python benchmarks/precision_regret.py [--horizon 500] [--seeds 20] [--delay geometric_mean20_M50]
                                          [--algorithms ndb_df ndb_ignore ndb_heuristic ndb_zero_extra]
                                          [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from banditbench.configuration.grid import load_config_file, load_grid  # noqa: E402
from banditbench.simulation.runner import run_seed_batched  # noqa: E402


def t_interval(diffs: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95 % Student-t interval of paired differences."""
    from scipy.stats import t

    n = len(diffs)
    mean, half = float(diffs.mean()), float(t.ppf(0.975, n - 1) * diffs.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="config/delayed_dueling.yaml")
    ap.add_argument("--experiment", default="delayed_dueling_quadratic")
    ap.add_argument("--delay", default="geometric_mean20_M50")
    ap.add_argument("--algorithms", nargs="+", default=["ndb_df", "ndb_ignore", "ndb_heuristic", "ndb_zero_extra"])
    ap.add_argument("--horizon", type=int, default=500)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--block", type=int, default=10, help="seeds per seed-batched block (a job's)")
    ap.add_argument("--json", help="write the per-seed regrets to this file")
    args = ap.parse_args()
    config = load_config_file(args.config)
    config.update(horizon=args.horizon)
    grid = load_grid(config)
    regret: dict[str, dict[str, np.ndarray]] = {}
    cpu: dict[str, float] = {"float32": 0.0, "float64": 0.0}
    for algorithm in args.algorithms:
        cell = json.loads(grid.cell_json(args.experiment, algorithm, args.delay, "none", None))
        regret[algorithm] = {}
        for precision in ("float32", "float64"):
            one = {**cell, "policy": {**cell["policy"], "params": {**cell["policy"]["params"], "precision": precision}}}
            totals = []
            for start in range(0, args.seeds, args.block):
                seeds = range(start, min(start + args.block, args.seeds))
                began = time.process_time()
                results = run_seed_batched([{**one, "seed": s} for s in seeds])
                cpu[precision] += time.process_time() - began
                totals += [float(r[0]["regret"].sum()) for r in results]
            regret[algorithm][precision] = np.array(totals)
    print(
        f"{args.experiment}, delay {args.delay}, T = {args.horizon}, seeds 0-{args.seeds - 1}, seed-batched blocks "
        f"of {args.block}; cumulative regret at T"
    )
    print("| algorithm | float64 | float32 | float32 - float64 (mean, 95 % t-interval) | relative |")
    print("|---|---|---|---|---|")
    rows = list(regret.items()) + [
        ("pooled", {p: np.concatenate([r[p] for r in regret.values()]) for p in ("float32", "float64")})
    ]
    for name, r in rows:
        mean, low, high = t_interval(r["float32"] - r["float64"])
        ref = float(r["float64"].mean())
        print(
            f"| {name} | {ref:.2f} | {r['float32'].mean():.2f} | {mean:+.2f} [{low:+.2f}, {high:+.2f}] | "
            f"{mean / ref:+.2%} [{low / ref:+.2%}, {high / ref:+.2%}] |"
        )
    print(f"CPU of the runs: float32 {cpu['float32']:.1f} s, float64 {cpu['float64']:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({a: {p: v.tolist() for p, v in r.items()} for a, r in regret.items()}, f, indent=1)


if __name__ == "__main__":
    main()
