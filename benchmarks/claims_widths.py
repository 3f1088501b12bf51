"""Widths of the claims' confidence sequences on the project's shapes of paired differences.

The default interval of a claim (:mod:`banditbench.numerics.sequential`) is chosen by this table: the median
width, as a share of the range of ``A - B``, of the running intersection after n seeds, over ``--repetitions``
sequences per shape, for the hedged-capital betting CS (truncation c = 1/2 and 3/4), the empirical-Bernstein
CS (PrPl-EB) and, for reference, the Gaussian t-CS (which does not use the range)::

    .venv/bin/python benchmarks/claims_widths.py --repetitions 200

and ``--seed-001-calibration 2000`` instead calibrates (:mod:`banditbench.analysis.calibrate`) seed 001's 24 measured
NVLDB - NLDB pairs, each method's false-separation rates of a zero mean under looks up to 10, 40 and 200 seeds.

Shapes, on the range [-1, 1] (width W = 2): normal differences whose standard deviation is 0.03 %, 0.5 % and 2 %
of W (the 25th, 50th and 90th percentiles over the committed docs/runs claims, their Gaussian half-widths read
back to a standard deviation, on the ranges the environments declare), 10 % of W (a noisy per-round metric), and
seed 001's measured Statlog differences NVLDB - NLDB of per-round average regret (docs/papers/seed-001-measured.csv,
six variants, 20 seeds each, resampled; range [-s, s] with s = logit(0.7), rescaled to [-1, 1]): most seeds within
0.01 of 0, one in about eight locked in at +-0.1 to 0.2.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd

from banditbench.numerics import sequential

ROOT = Path(__file__).resolve().parents[1]
LOOKS = (5, 10, 20, 50, 100, 200)


def _statlog() -> np.ndarray:
    data = pd.read_csv(ROOT / "docs/papers/seed-001-measured.csv")
    rows = data[(data.experiment == "vdb_uci_statlog") & (data.metric == "per_round_average_regret")]
    table = rows.pivot_table(index="seed", columns="algorithm", values="value")
    variants = [c.removeprefix("NVLDB-") for c in table.columns if c.startswith("NVLDB-")]
    pooled = np.concatenate([(table[f"NVLDB-{v}"] - table[f"NLDB-{v}"]).to_numpy() for v in variants])
    return pooled / math.log(0.7 / 0.3)  # onto [-1, 1]


def shapes(rng: np.random.Generator, n: int, reps: int) -> dict[str, np.ndarray]:
    statlog = _statlog()
    out = {
        f"normal, sd {100 * r:g} % of W": np.clip(rng.normal(0, 2 * r, (n, reps)), -1, 1)
        for r in (0.0003, 0.005, 0.02, 0.1)
    }
    out["seed 001 Statlog NVLDB - NLDB"] = rng.choice(statlog, (n, reps))
    return out


def widths(x: np.ndarray, method: str, truncation: float = 0.5, alpha: float = 0.05) -> list[float]:
    """Median width of the running intersection at each look (share of the range's width 2)."""
    default, sequential.TRUNCATION = sequential.TRUNCATION, truncation
    out = []
    for n in LOOKS:
        bounds = None if method == sequential.GAUSSIAN else (-1.0, 1.0)
        low, high = sequential.confidence_sequence(x[:n], alpha, bounds, method=method, running=True)
        out.append(float(np.median(np.maximum(high - low, 0.0)) / 2))
    sequential.TRUNCATION = default
    return out


def seed_001_calibration(resamples: int) -> None:
    """``banditbench claims calibrate`` on seed 001's measured Statlog differences (24 NVLDB - NLDB pairs: four
    Statlog readings x six variants, per-round average regret at T = 200, 20 seeds, range [-s, s]), under looks up
    to 10, 40 and 200 seeds: each method's false-separation rates over the pairs."""
    from banditbench.analysis.calibrate import calibrate

    data = pd.read_csv(ROOT / "docs/papers/seed-001-measured.csv")
    data = data[(data.metric == "per_round_average_regret") & data.experiment.str.startswith("vdb_uci_statlog")]
    s = math.log(0.7 / 0.3)
    claims, differences = [], []
    for experiment, rows in data.groupby("experiment"):
        table = rows.pivot_table(index="seed", columns="algorithm", values="value")
        for variant in [c.removeprefix("NVLDB-") for c in table.columns if c.startswith("NVLDB-")]:
            d = (table[f"NVLDB-{variant}"] - table[f"NLDB-{variant}"]).dropna()
            claim = f"{experiment}: {variant}"
            claims.append({"claim": claim, "alpha": 0.05, "method": "", "range_low": -s, "range_high": s})
            differences += [{"claim": claim, "seed": int(k), "difference": float(v)} for k, v in d.items()]
    tolerance = 0.05 + 3 * math.sqrt(0.05 * 0.95 / resamples)
    for n_max in (10, 40, 200):
        rates = calibrate(pd.DataFrame(claims), pd.DataFrame(differences), n_max, resamples)
        for method in sequential.METHODS:
            r = rates[method]
            print(
                f"up to {n_max} seeds, {method}: mean {r.mean():.4f}, max {r.max():.4f}, "
                f"{int((r > tolerance).sum())} of {len(r)} pairs above {tolerance:.4f}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=47)
    parser.add_argument(
        "--seed-001-calibration", type=int, metavar="RESAMPLES", help="instead, calibrate seed 001's 24 pairs"
    )
    args = parser.parse_args(argv)
    if args.seed_001_calibration:
        seed_001_calibration(args.seed_001_calibration)
        return 0
    rng = np.random.default_rng(args.seed)
    methods = [
        ("betting, c = 1/2", sequential.BETTING, 0.5),
        ("betting, c = 3/4", sequential.BETTING, 0.75),
        ("PrPl-EB", sequential.EMPIRICAL_BERNSTEIN, 0.5),
        ("Gaussian t-CS", sequential.GAUSSIAN, 0.5),
    ]
    print("| shape | CS | " + " | ".join(f"n = {n}" for n in LOOKS) + " |")
    print("|---|---|" + "---|" * len(LOOKS))
    for name, x in shapes(rng, max(LOOKS), args.repetitions).items():
        for label, method, c in methods:
            cells = " | ".join(f"{w:.3g}" for w in widths(x, method, c))
            print(f"| {name} | {label} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
