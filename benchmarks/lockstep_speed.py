"""Lockstep across variants (``lockstep_variants``): one seed-batched block of all of a cell's variants against
one block per variant, in one run, on the device asked for.

Instance: seed 001's Table E.3 cell (``vdb_square_d20_T10000``: 10 (Theta^T x)^2, d = 20, K = 5, width 32,
20 Adam steps per round), its six NVLDB variants, ``--seeds`` seeds each, over ``--horizon`` rounds, one
thread.  Prints the wall time of the six blocks of S seeds (what six jobs run one after the other), of the one
block of 6 S (what one lockstep job runs) and their ratio, and checks that every run's series are the same in
both.  Usage::

    python benchmarks/lockstep_speed.py --horizon 300 --seeds 4 [--device cuda]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from threadpoolctl import threadpool_limits

from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.simulation.runner import run_seed_batched

EXPERIMENT = "vdb_square_d20_T10000"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--horizon", type=int, default=300)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = ap.parse_args()
    config = load_config_file("config/variance_dueling.yaml")
    config.update(horizon=args.horizon, device=args.device)
    grid = load_grid(config)
    variants = [a for a in grid.experiments[EXPERIMENT].algorithms if a.startswith("NVLDB")]
    cells = [json.loads(grid.cell_json(EXPERIMENT, a, "none", "none", None)) for a in variants]
    seeds = list(range(args.seeds))
    with threadpool_limits(1):
        start = time.perf_counter()
        alone = [result for cell in cells for result in run_seed_batched([{**cell, "seed": s} for s in seeds])]
        separate = time.perf_counter() - start
        start = time.perf_counter()
        together = run_seed_batched([{**cell, "seed": seed} for cell in cells for seed in seeds])
        lockstep = time.perf_counter() - start
    same = all(
        np.array_equal(a[0][name], b[0][name]) for a, b in zip(alone, together) for name in a[0]
    )  # block independence
    print(
        f"{EXPERIMENT}, T = {args.horizon}, {len(variants)} NVLDB variants x {args.seeds} seeds on {args.device}, "
        f"one thread: {len(variants)} blocks of {args.seeds} {separate:.1f} s, one block of "
        f"{len(variants) * args.seeds} {lockstep:.1f} s, ratio {lockstep / separate:.2f}; "
        f"series {'identical' if same else 'DIFFERENT'}"
    )


if __name__ == "__main__":
    main()
