"""``banditbench claims calibrate RUN``: how often each claim's interval would separate a zero mean, on its own data.

A committed claims run (``benchmarks/claims_run.py``) keeps three files in ``docs/runs``: ``RUN.json`` (how it was
made: the ``--until-decided`` command, its ``--start-seeds``, ``--step`` and ``--max-seeds``), ``RUN.csv`` (a row
per claim: its ``alpha`` and the range of ``A - B``, ``range_low`` and ``range_high``) and ``RUN.differences.csv``
(each claim's per-seed paired differences, in seed order: :func:`banditbench.analysis.claims.differences_table`).

For each claim the differences are recentred to a zero mean and resampled with replacement (a bootstrap of the
claim's own distribution of seeds, with the null hypothesis true), ``resamples`` sequences of the run's largest
number of seeds, and each method judges every sequence under the run's stopping rule: looks at ``--start-seeds``,
then every ``--step`` seeds up to ``--max-seeds``, stopping at the first look whose verdict separates
(:func:`banditbench.analysis.claims.until_decided`).  The verdict at a look is read on the running intersection of
the confidence sequence over every seed so far, which only narrows, so a sequence separates at some look exactly
when the intersection over all ``--max-seeds`` seeds excludes 0: that one interval is computed.  The share of
sequences that separate is the claim's false-separation rate under that method, with its Monte-Carlo standard
error ``sqrt(r (1 - r) / resamples)``.

The bounded methods use the claim's range shifted with the data (``[lo - mean, hi - mean]``: the recentred
differences lie there, a range of the same width), so the rate is the method's on the claim's shape.  Methods:
``betting`` (the default), ``empirical-bernstein`` and ``gaussian-t`` (:mod:`banditbench.numerics.sequential`).
A valid method stays at or below ``alpha`` up to the Monte-Carlo error on every claim; the Gaussian t-CS exceeds it
where the differences are skewed or bimodal at few seeds.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..numerics.sequential import BETTING, EMPIRICAL_BERNSTEIN, GAUSSIAN, METHODS, confidence_sequence

#: where the committed claims runs are (relative to the working directory)
RUNS = Path("docs") / "runs"
#: resampled sequences per claim and method
RESAMPLES = 2000


@dataclass(frozen=True)
class Schedule:
    """The looks of a claims run: seeds at the first look (None: each experiment's configured seeds), seeds added
    per look, and the most seeds an experiment gets."""

    start: int | None
    step: int
    max_seeds: int

    def describe(self) -> str:
        """``looks at 10, then every 10 seeds up to 200 seeds``."""
        first = f"{self.start} seeds" if self.start else "each experiment's configured seeds"
        return f"looks at {first}, then every {self.step} seeds up to {self.max_seeds}"


def schedule(command: str) -> Schedule:
    """The look schedule of a ``banditbench claims ... --until-decided`` command line."""
    words = shlex.split(command)

    def option(name: str, default: int | None = None) -> int | None:
        return int(words[words.index(name) + 1]) if name in words else default

    if "--until-decided" not in words or option("--max-seeds") is None:
        raise ConfigError(f"not a claims run with --until-decided and --max-seeds: {command!r}")
    return Schedule(option("--start-seeds"), option("--step", 5), option("--max-seeds"))


def read_run(name: str, folder: str | Path = RUNS) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """A committed claims run's ``NAME.json``, ``NAME.csv`` and ``NAME.differences.csv``; a missing file, or a CSV
    recorded before the ranges were kept, is a :class:`ConfigError` saying so."""
    base = Path(folder) / name
    paths = [base.with_name(f"{name}{suffix}") for suffix in (".json", ".csv", ".differences.csv")]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise ConfigError(
            f"claims run {name!r}: no {', '.join(missing)}: recorded before runs kept their per-seed differences "
            f"(benchmarks/claims_run.py writes them); re-record it"
        )
    results = pd.read_csv(paths[1], dtype={"paper": str})
    if not {"range_low", "range_high"} <= set(results.columns):
        raise ConfigError(f"{paths[1]}: no range_low / range_high columns (recorded before the ranges were kept)")
    return json.loads(paths[0].read_text()), results, pd.read_csv(paths[2])


def false_separation(
    d: np.ndarray, bounds, alpha: float, method: str, n_max: int, resamples: int, rng: np.random.Generator
) -> float:
    """Share of ``resamples`` bootstrap sequences of ``n_max`` recentred differences whose running intersection
    excludes 0 (module docstring); NaN for a bounded method without a range."""
    d = np.asarray(d, dtype=float)
    centre = d.mean()
    x = rng.choice(d - centre, size=(n_max, resamples))
    if method == GAUSSIAN:
        low, high = confidence_sequence(x, alpha, method=GAUSSIAN, running=True)
    else:
        if bounds is None or not np.all(np.isfinite(bounds)):
            return float("nan")
        shifted = (min(bounds[0] - centre, x.min()), max(bounds[1] - centre, x.max()))  # rounding of the shift
        low, high = confidence_sequence(x, alpha, shifted, method=method, running=True)
    return float(((low > 0) | (high < 0)).mean())


def calibrate(
    results: pd.DataFrame, differences: pd.DataFrame, n_max: int, resamples: int = RESAMPLES, seed: int = 0
) -> pd.DataFrame:
    """One row per claim with at least 2 differences: its n, alpha, method and each method's false-separation rate
    (columns :data:`~banditbench.numerics.sequential.METHODS`)."""
    rows = []
    by_claim = {cid: group["difference"].to_numpy() for cid, group in differences.groupby("claim", sort=False)}
    for i, r in enumerate(results.itertuples(index=False)):
        d = by_claim.get(r.claim)
        if d is None or len(d) < 2:
            continue
        bounds = (r.range_low, r.range_high)
        rates = {
            method: false_separation(
                d, bounds, float(r.alpha), method, n_max, resamples, np.random.default_rng([seed, i])
            )
            for method in METHODS
        }
        rows.append({"claim": r.claim, "n": len(d), "alpha": float(r.alpha), "method": r.method, **rates})
    return pd.DataFrame(rows, columns=["claim", "n", "alpha", "method", *METHODS])


def report(table: pd.DataFrame, looks: Schedule, resamples: int) -> str:
    """The per-claim rates and, per method, their mean, maximum and the claims above alpha + 3 Monte-Carlo errors."""
    alpha = float(table["alpha"].iloc[0]) if len(table) else 0.05
    tolerance = alpha + 3 * np.sqrt(alpha * (1 - alpha) / resamples)
    names = {BETTING: "betting (default)", EMPIRICAL_BERNSTEIN: "PrPl-EB", GAUSSIAN: "Gaussian t-CS"}
    lines = [
        f"False separations of a zero mean: each claim's differences recentred and resampled {resamples} times, "
        f"{looks.describe()}, alpha {alpha:g} (alpha + 3 Monte-Carlo errors: {tolerance:.4f})",
        "",
        "| claim | n | its method | " + " | ".join(names[m] for m in METHODS) + " |",
        "|---|---|---|" + "---|" * len(METHODS),
    ]
    for r in table.to_dict("records"):
        cells = " | ".join("" if np.isnan(r[m]) else f"{r[m]:.4f}" for m in METHODS)
        lines.append(f"| {r['claim']} | {r['n']} | {r['method']} | {cells} |")
    lines.append("")
    for method in METHODS:
        rates = table[method].dropna()
        if rates.empty:
            continue
        above = int((rates > tolerance).sum())
        lines.append(
            f"{names[method]}: mean {rates.mean():.4f}, max {rates.max():.4f}, {above} of {len(rates)} claims above "
            f"{tolerance:.4f}"
        )
    return "\n".join(lines) + "\n"


def calibrate_run(
    name: str, folder: str | Path = RUNS, resamples: int = RESAMPLES, seed: int = 0
) -> tuple[pd.DataFrame, str]:
    """:func:`calibrate` on a committed run (:func:`read_run`) under its look schedule, with its :func:`report`."""
    meta, results, differences = read_run(name, folder)
    looks = schedule(meta["command"])
    table = calibrate(results, differences, looks.max_seeds, resamples, seed)
    return table, report(table, looks, resamples)
