"""Aggregate per-job result files into tables and curves.

Every per-round metric ``m`` logged by an environment becomes the cumulative
series ``cumulative_m``; metrics listed in an experiment's ``per_round_metrics``
also give ``per_round_m``, the running average ``cumulative_m(t) / t`` (seed 001's
``R(T)/T``, Tables E.2–E.3, whose rows are algorithms and columns horizons in the
per-metric tables below); scalar run summaries (e.g. a stopping time) are
reported at the final horizon under their own name.  Statistics across seeds:
mean and a Student-t confidence interval at the experiment's ``ci_level`` (default
95 %; NaN bounds when only one seed), the standard deviation and the extremes.  They are
computed from the experiment's per-seed table (:mod:`banditbench.analysis.seedtable`, written
as ``results/<run>/tables/<experiment>.parquet``), which the aggregation builds first.

Outputs
-------
* tidy CSV — columns ``experiment, algorithm, delay, budget, t, metric, mean,
  ci_low, ci_high, n`` (the stable interface described in docs/getting-started.md, "Outputs"), then
  ``sd, min, max, median, q1, q3``;
* Markdown, LaTeX and HTML (the page ``snakemake --report`` shows) — first a headline table in the layout of the papers'
  result tables (seed 003 App. D Table 1, seed 004 Tables 1–2): the main
  metric at the final horizon, one row per algorithm, one column per delay
  setting and budget; for experiments whose seeds are spread over tasks (the
  prompt benchmark) the same broken down by task; then one table per metric, rows (delay, budget,
  algorithm), columns the table horizons.  Cells are ``mean ± half-width`` of the interval,
  ``mean ± sd`` with the experiment's ``spread: sd``, ``mean ± half-width (sd S)`` with
  ``spread: both``, or ``mean ± half-width (med M [Q1, Q3])`` with ``spread: quantiles``, the header
  saying which (and which regret a regret metric is) and over how many
  seeds; an interval that reaches below 0 although no seed's value does (a symmetric t interval
  over few seeds, on a metric that cannot be negative) is marked ``†`` and the header says why.
  Algorithms are shown by their display names (the experiment's ``display.algorithms`` or ``plot.names``), the
  experiment, delay settings, budgets and metrics by theirs (``display``: :func:`settings`, :func:`shown_title`;
  the CSVs keep the labels), negative numbers
  with a true minus (U+2212, ``$-$`` in LaTeX), and each LaTeX table is labelled
  ``tab:<run>-<experiment>`` (the headline), ``...-by-task`` and ``...-<metric>`` (:func:`table_key`);
* curves CSV — the same statistics on a grid of at most ``curve_points``
  rounds (always including the horizon), read by the plots.

Diverged runs (a policy whose scores, estimates or confidence widths became NaN or infinite: the run stopped
at that round, :func:`banditbench.simulation.job.run_cell`) are never averaged: every statistic of a cell
leaves its diverged seeds out (``n`` counts the others) and the column ``diverged`` counts them; a human
table's cell adds ``(k of n seeds diverged)``, or reads ``diverged (n of n seeds)`` when none is left (its
mean empty in the CSV), and the header says why (:data:`DIVERGED_NOTE`).
"""

from __future__ import annotations

import html
import io
import logging
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.special import stdtrit

from ..configuration.display import Names
from ..configuration.grid import DEFAULT_CI_LEVEL
from ..errors import CorruptFileError
from ..storage.resultio import atomic_write_bytes
from . import latex
from .pages import html_page
from .seedtable import (
    CURVE_POINTS,
    collect_runs,
    collect_seeds,
    curve_grid,
    default_workers,
    diverged_runs,
    write_parquet,
)

log = logging.getLogger(__name__)
COLUMNS = ["experiment", "algorithm", "delay", "budget", "t", "metric", "mean", "ci_low", "ci_high", "n"]
#: further columns of the tidy tables: standard deviation, extremes, median and quartiles over the seeds
EXTRA_COLUMNS = ["sd", "min", "max", "median", "q1", "q3"]
#: what the human tables show after the mean: the interval's half-width, the standard deviation, both,
#: or the half-width then the median and quartiles (results that are bimodal over the seeds)
SPREADS = ("ci", "sd", "both", "quantiles")
#: marks a cell whose interval reaches below 0 while no seed's value does
BELOW_ZERO = "†"
#: the minus sign of the human tables' numbers (LaTeX: ``$-$``); the CSVs keep ASCII
MINUS = "\u2212"
#: the tidy tables' last column: the seeds of the cell whose run diverged, left out of its statistics
DIVERGED_COLUMN = "diverged"
#: the header line of tables with a diverged cell
DIVERGED_NOTE = (
    "Diverged: a run whose policy's scores, estimates or confidence widths became NaN or infinite stopped at "
    "that round (its job's log names it: 'banditbench: diverged: ...'); such seeds are left out of the cell's "
    "mean, interval and n, and the cell says how many diverged ('k of n seeds diverged'; "
    "'diverged (n of n seeds)' when none is left)."
)
_FLAG = "_diverged_seed"


def t_quantile(p, df):
    """Student-t quantile (``scipy.stats.t.ppf``, the same numbers) through ``scipy.special.stdtrit``,
    which spares each aggregation job the ~1.5 s import of ``scipy.stats``."""
    return stdtrit(df, p)


def mean_ci(values: np.ndarray, level: float = DEFAULT_CI_LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and Student-t CI at confidence ``level`` along axis 0 (rows are seeds)."""
    values = np.asarray(values, dtype=float)
    n = values.shape[0]
    mean = values.mean(axis=0)
    if n < 2:
        nan = np.full_like(mean, np.nan)
        return mean, nan, nan
    half = t_quantile(0.5 + level / 2, n - 1) * values.std(axis=0, ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half


def aggregate_runs(
    runs: Sequence[str],
    experiment: str,
    horizons: Sequence[int],
    curve_points: int = CURVE_POINTS,
    per_round: Sequence[str] = (),
    remove_corrupt: bool = False,
    ci_level: float = DEFAULT_CI_LEVEL,
    workers: int = 1,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the tidy table and the curves table of one experiment's runs (read and checked by
    :func:`~banditbench.analysis.seedtable.collect_seeds`)."""
    seeds = collect_seeds(runs, experiment, horizons, per_round, remove_corrupt, curve_points, workers)
    return seed_statistics(seeds, ci_level, curve_points)


def _check_complete(seeds: pd.DataFrame) -> None:
    """Every (algorithm, delay, budget) cell must have the same seeds."""
    per_cell = seeds.groupby(["algorithm", "delay", "budget"], observed=True, sort=False)["seed"].nunique()
    if per_cell.nunique() > 1:
        counts = {key: int(n) for key, n in per_cell.items()}
        raise ValueError(f"unequal number of seeds per cell: {counts}")


def without_diverged(seeds: pd.DataFrame) -> pd.DataFrame:
    """``seeds`` with the values of diverged runs NaN (pandas' statistics skip them, ``count`` leaves them out)
    and a 0/1 flag per row that :func:`_group_stats` sums into the column ``diverged``."""
    diverged = diverged_runs(seeds)
    values = np.where(diverged, np.nan, seeds["value"].to_numpy()) if diverged.any() else seeds["value"]
    return seeds.assign(value=values, **{_FLAG: diverged.astype(np.int64)})


def _group_stats(df: pd.DataFrame, ci_level: float) -> pd.DataFrame:
    """Mean, Student-t interval, standard deviation, extremes, median and quartiles over the seeds of
    each (cell, t, metric) that did not diverge, and the number that did (:func:`without_diverged`)."""
    if _FLAG not in df.columns:
        df = without_diverged(df)
    groups = df.groupby(["experiment", "algorithm", "delay", "budget", "t", "metric"], observed=True, sort=False)
    grouped = groups["value"]
    g = grouped.agg(["mean", "std", "count", "min", "max"])
    for name, level in (("q1", 0.25), ("median", 0.5), ("q3", 0.75)):
        g[name] = grouped.quantile(level)  # aligned on the groups' keys
    g[DIVERGED_COLUMN] = groups[_FLAG].sum()
    g = g.reset_index()
    n = g["count"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.where(n > 1, t_quantile(0.5 + ci_level / 2, np.maximum(n - 1, 1)), np.nan)
        half = q * g["std"].to_numpy() / np.sqrt(n)
    out = g.assign(ci_low=g["mean"] - half, ci_high=g["mean"] + half, n=n, sd=g["std"])
    out = out[COLUMNS + EXTRA_COLUMNS + [DIVERGED_COLUMN]]
    for column in ("experiment", "algorithm", "delay", "budget", "metric"):
        out[column] = out[column].astype(str)
    return out.reset_index(drop=True)


def seed_statistics(
    seeds: pd.DataFrame, ci_level: float = DEFAULT_CI_LEVEL, curve_points: int = CURVE_POINTS
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tidy table (the table horizons, run summaries at the final one) and the curves table (the
    series on the curve grid) of a per-seed table (:mod:`banditbench.analysis.seedtable`)."""
    _check_complete(seeds)
    seeds = without_diverged(seeds)
    T = int(seeds["t"].max())
    metric = seeds["metric"].astype("category")  # one test per metric name, not per row
    series = np.array([str(c).startswith(("cumulative_", "per_round_")) for c in metric.cat.categories], dtype=bool)[
        metric.cat.codes.to_numpy()
    ]
    tidy = _group_stats(seeds[seeds["table_horizon"].to_numpy() & series | ~series], ci_level)
    curves = _group_stats(seeds[series & seeds["t"].isin(curve_grid(T, curve_points)).to_numpy()], ci_level)
    return tidy, curves


def task_table(
    seeds: pd.DataFrame, metric: str, ci_level: float = DEFAULT_CI_LEVEL, spread: str = "ci"
) -> pd.DataFrame | None:
    """``metric`` at the final horizon per task (rows algorithms, columns delay and task) of a per-seed
    table, for experiments whose seeds are spread over tasks (seed 000's prompt benchmark); None for
    any other experiment."""
    if "task" not in seeds.columns or seeds["task"].isna().any():
        return None
    final = seeds[(seeds["metric"] == metric) & (seeds["t"] == seeds["t"].max())]
    if final.empty:
        return None
    df = without_diverged(final.assign(setting=final["delay"].astype(str) + ", " + final["task"].astype(str)))
    groups = df.groupby(["algorithm", "setting"], observed=True, sort=False)
    stats_ = groups["value"].agg(["mean", "std", "count", "min"])
    stats_[DIVERGED_COLUMN] = groups[_FLAG].sum()
    stats_ = stats_.reset_index()
    n = stats_["count"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        half = (
            np.where(n > 1, t_quantile(0.5 + ci_level / 2, np.maximum(n - 1, 1)), np.nan) * stats_["std"] / np.sqrt(n)
        )
    stats_ = stats_.assign(ci_low=stats_["mean"] - half, ci_high=stats_["mean"] + half, sd=stats_["std"])
    stats_["cell"] = [_cell(row, spread) for _, row in stats_.iterrows()]
    stats_["algorithm"] = stats_["algorithm"].astype(str)
    return stats_.pivot_table(index="algorithm", columns="setting", values="cell", aggfunc="first", sort=False)


def read_tidy(path: str | Path, what: str = "tidy table") -> pd.DataFrame:
    """A table in the tidy long format (:data:`COLUMNS`: the tables CSV, the curves CSV), checked; a
    :class:`~banditbench.errors.CorruptFileError` names the file and what is wrong."""
    rebuild = "delete it and run snakemake again to rebuild it"
    try:
        df = pd.read_csv(path, dtype={"algorithm": str, "delay": str, "budget": str, "experiment": str})
    except FileNotFoundError:
        raise CorruptFileError(f"{path}: {what} does not exist") from None
    except (ValueError, OSError, UnicodeDecodeError) as err:  # pandas' parser errors are ValueErrors
        raise CorruptFileError(f"{path}: {what} is unreadable ({type(err).__name__}: {err}); {rebuild}") from None
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise CorruptFileError(f"{path}: {what} lacks the columns {missing}; {rebuild}")
    for column in ("t", "mean", "ci_low", "ci_high", "n"):
        # ci_low / ci_high are empty with one seed; the others always hold a number, but for the mean of a
        # cell whose every seed diverged (n = 0)
        missing = df[column].isna()
        if column == "mean" and DIVERGED_COLUMN in df.columns:
            missing &= df["n"] != 0
        if not pd.api.types.is_numeric_dtype(df[column]) or (column in ("t", "mean", "n") and missing.any()):
            raise CorruptFileError(f"{path}: {what} has missing or non-numeric values in column {column!r}; {rebuild}")
    return df


def _below_zero(row) -> bool:
    """The interval reaches below 0 although every seed's value is >= 0 (e.g. cumulative regret)."""
    low, least = row.get("ci_low", np.nan), row.get("min", np.nan)
    return bool(np.isfinite(low) and np.isfinite(least) and low < 0 <= least)


def number(x: float, decimals: int = 2) -> str:
    """``x`` as the human tables print it: ``decimals`` places, a negative one with :data:`MINUS`."""
    return f"{x:.{decimals}f}".replace("-", MINUS)


def _cell(row, spread: str = "ci") -> str:
    diverged = int(row.get(DIVERGED_COLUMN, 0) or 0)
    if diverged:
        n = int(row.get("n", row.get("count", 0)) or 0)
        if n == 0:
            return f"diverged ({diverged} of {diverged} seeds)"
        return _cell({**row, DIVERGED_COLUMN: 0}, spread) + f" ({diverged} of {n + diverged} seeds diverged)"
    sd = row.get("sd", np.nan)
    if spread == "sd":
        return number(row["mean"]) if not np.isfinite(sd) else f"{number(row['mean'])} ± {number(sd)}"
    if np.isnan(row["ci_high"]):
        return number(row["mean"])
    cell = f"{number(row['mean'])} ± {number(row['ci_high'] - row['mean'])}" + (
        f" {BELOW_ZERO}" if _below_zero(row) else ""
    )
    if spread == "both" and np.isfinite(sd):
        cell += f" (sd {number(sd)})"
    if spread == "quantiles" and np.isfinite(row.get("median", np.nan)):
        cell += f" (med {number(row['median'])} [{number(row['q1'])}, {number(row['q3'])}])"
    return cell


def spread_note(spread: str, ci_level: float, n: int | None = None, interval: str = "Student-t") -> str:
    """What a table's ``±`` means, as its header says it."""
    seeds = f" over n = {n} seeds" if n else " across seeds"
    if spread == "sd":
        return f"Mean ± standard deviation{seeds}."
    if spread == "both":
        return (
            f"Mean ± {ci_percent(ci_level)} % {interval} CI half-width{seeds}; "
            f"(sd S): the standard deviation across the seeds."
        )
    if spread == "quantiles":
        return (
            f"Mean ± {ci_percent(ci_level)} % {interval} CI half-width{seeds}; "
            f"(med M [Q1, Q3]): the median and the lower and upper quartiles across the seeds (where the "
            f"seeds split into groups, the mean lies between them and the quartiles show the split)."
        )
    return f"Mean ± {ci_percent(ci_level)} % {interval} CI half-width{seeds}."


#: what the dueling environments' regret metrics are (banditbench.envs.preference), for the tables' headers
REGRET_NAMES = {
    "regret": "the total regret of both arms, per round 2 u* - u_1 - u_2 (seed 000's regret; seed 001's "
    "'cumulative total regret', App. E Figs. E.10 and E.11(b))",
    "average_regret": "the average regret, per round (2 u* - u_1 - u_2) / 2 (seed 001, Sec. 3.1; its Figs. 2, "
    "E.1-E.9, E.11(a))",
    "weak_regret": "the weak regret, per round u* - max(u_1, u_2) (seed 001, Sec. 3.1)",
}
#: what the dueling environments' other per-round and summary metrics are, for the tables' headers
METRIC_NOTES = {
    "cumulative_self_duel": "the number of rounds up to t whose two arms were the same arm (self-duels)",
    "per_round_self_duel": "the share of rounds up to t whose two arms were the same arm (self-duels: a "
    "duel of an arm with itself carries no information for a learner driven by the "
    "difference of the two arms' features)",
    "late_self_duel_rate": "the share of self-duels in the run's last 10 % of rounds (near 1: the learner "
    "has locked onto one arm)",
    "late_regret_rate": "the mean per-round regret (2 u* - u_1 - u_2) over the run's last 10 % of rounds "
    "(where the run ends up: 0 once it duels the best arm)",
}


def metric_note(metric: str) -> str | None:
    """What a table's metric is, when it is a regret the dueling environments log (``cumulative_M`` is
    R(t), ``per_round_M`` R(t)/t) or one of :data:`METRIC_NOTES`; None for other metrics."""
    for prefix, what in (
        ("per_round_", "R(t)/t, the running average of"),
        ("cumulative_", "R(t), the sum over rounds of"),
    ):
        if metric.startswith(prefix) and metric[len(prefix) :] in REGRET_NAMES:
            return f"{metric}: {what} {REGRET_NAMES[metric[len(prefix) :]]}."
    return f"{metric}: {METRIC_NOTES[metric]}." if metric in METRIC_NOTES else None


def below_zero_note(n: int | None, ci_level: float) -> str:
    """Why a ``†`` cell's interval reaches below 0."""
    q = f"{t_quantile(0.5 + ci_level / 2, n - 1) / np.sqrt(n):.2f}" if n and n > 1 else "many"
    return (
        f"{BELOW_ZERO} the interval reaches below 0, a value no seed reached (every seed's value is >= 0): "
        f"a Student-t interval is symmetric about the mean and does not know the metric's bound; with "
        f"n = {n} seeds its half-width is {q} standard deviations, so a few seeds far above the rest "
        f"stretch it below 0."
    )


def settings(df: pd.DataFrame, display: Mapping[str, Any] | None = None) -> pd.Series:
    """Each row's setting as a table's column names it: its delay's and its budget's display names
    (``display``; a budget without one ``B = 75``), of those that vary (the delay when neither does)."""
    names = Names.of(display)
    varying = [c for c in ("delay", "budget") if df[c].nunique() > 1] or ["delay"]

    def label(row) -> str:
        parts = [names.delay(str(row["delay"]))] if "delay" in varying else []
        budget = str(row["budget"])
        parts += [budget if budget == "none" else names.budget(budget)] if "budget" in varying else []
        return ", ".join(parts)

    return df.apply(label, axis=1) if len(df) else pd.Series([], dtype=str, index=df.index)


def shown_title(title: str, display: Mapping[str, Any] | None = None) -> str:
    """A table's title (``cumulative_regret at T = 600``) with its metric's display name (``display.metrics``)."""
    metric, sep, rest = str(title).partition(" ")
    return Names.of(display).metric(metric) + sep + rest


def with_display(wide: pd.DataFrame, display: Mapping[str, Any] | None) -> pd.DataFrame:
    """``wide`` with the labels of its ``delay`` and ``budget`` index levels replaced by the display names
    ``display`` gives them (others keep their labels)."""
    display = display or {}
    for level, kind in (("delay", "delays"), ("budget", "budgets")):
        given = {k: v for k, v in Names.of(display).names.get(kind, {}).items()}
        if given and level in (wide.index.names or []):
            wide = wide.rename(index=given, level=level)
    return wide


def headline_table(
    tidy: pd.DataFrame, metric: str, spread: str = "ci", display: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """``metric`` at the final horizon: rows algorithms, columns the delay and budget settings that vary
    (:func:`settings`)."""
    df = tidy[(tidy["metric"] == metric) & (tidy["t"] == tidy["t"].max())]
    if df.empty:
        raise ValueError(f"no rows for metric {metric!r}; have {sorted(set(tidy['metric']))}")
    df = df.assign(cell=[_cell(row, spread) for _, row in df.iterrows()], setting=settings(df, display))
    return df.pivot_table(index="algorithm", columns="setting", values="cell", aggfunc="first", sort=False)


#: run summaries named so describe the instance, not the algorithm (e.g. a knapsack budget's ``T v*``):
#: the headline table shows each as one more row, beside the algorithms it bounds
INSTANCE_PREFIX = "instance_"


def with_instance_rows(
    headline: pd.DataFrame, tidy: pd.DataFrame, display: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """``headline`` followed by one row per ``instance_*`` summary (its mean over the cell's runs)."""
    rows = []
    for name in dict.fromkeys(m for m in tidy["metric"] if str(m).startswith(INSTANCE_PREFIX)):
        table = headline_table(tidy.assign(ci_high=np.nan), name, display=display)  # a constant: the value alone
        rows.append(table.iloc[[0]].rename(index={table.index[0]: name.removeprefix(INSTANCE_PREFIX)}))
    return pd.concat([headline, *rows]) if rows else headline


def human_tables(tidy: pd.DataFrame, spread: str = "ci") -> dict[str, pd.DataFrame]:
    """One wide table per metric: rows (delay, budget, algorithm), columns ``t = ...``."""
    out = {}
    for metric, df in tidy.groupby("metric", sort=False):
        df = df.assign(cell=[_cell(row, spread) for _, row in df.iterrows()], horizon=df["t"].map(lambda t: f"t = {t}"))
        wide = df.pivot_table(
            index=["delay", "budget", "algorithm"], columns="horizon", values="cell", aggfunc="first", sort=False
        )
        wide = wide[sorted(wide.columns, key=lambda c: int(c.split("= ")[1]))]
        out[metric] = wide
    return out


def _labels(idx) -> tuple:
    return idx if isinstance(idx, tuple) else (idx,)


def named(wide: pd.DataFrame, names: Mapping[str, str] | None, level: str = "algorithm") -> pd.DataFrame:
    """``wide`` with the labels of its index ``level`` replaced by their display names (``plot.names``);
    a ValueError if two rows then share a name."""
    if not names:
        return wide
    out = wide.rename(index=dict(names), level=level)
    if out.index.has_duplicates:
        raise ValueError(f"plot.names gives two algorithms of one table the same display name: {dict(names)}")
    return out


def table_key(run: str, experiment: str, title: str) -> str:
    """The ``\\label`` of an experiment's table titled ``title``: ``tab:<run>-<experiment>`` for the headline
    (``M at T = N``), then ``-by-task`` for its breakdown by task, else ``-<metric>``."""
    return latex.label(run, experiment, re.sub(r"^\S+ at T = \d+", "", title))


def ci_percent(level: float) -> str:
    """A confidence level as the tables write it: 0.95 -> ``95``, 0.999 -> ``99.9``."""
    return f"{100 * level:g}"


def _notes(tables: dict[str, pd.DataFrame], ci_level: float, spread: str, n: int | None) -> list[str]:
    """The header lines of a set of tables: what ``±`` means, and why a ``†`` cell reaches below 0."""
    notes = [spread_note(spread, ci_level, n)]
    metrics = dict.fromkeys(str(key).split(" at T = ")[0] for key in tables)
    notes += [note for note in map(metric_note, metrics) if note]
    if any(BELOW_ZERO in str(v) for wide in tables.values() for v in np.ravel(wide.to_numpy())):
        notes.append(below_zero_note(n, ci_level))
    if any("diverged" in str(v) for wide in tables.values() for v in np.ravel(wide.to_numpy())):
        notes.append(DIVERGED_NOTE)
    return notes


def to_markdown(
    tables: dict[str, pd.DataFrame],
    experiment: str,
    ci_level: float = DEFAULT_CI_LEVEL,
    spread: str = "ci",
    n: int | None = None,
    display: Mapping[str, Any] | None = None,
) -> str:
    lines = [f"# {Names.of(display).experiment(experiment)}", ""]
    for note in _notes(tables, ci_level, spread, n):
        lines += [note, ""]
    for metric, wide in tables.items():
        lines += [f"## {shown_title(metric, display)}", ""]
        wide = wide.rename_axis(index=[n or "" for n in wide.index.names])
        head = list(wide.index.names) + list(wide.columns)
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for idx, row in wide.iterrows():
            lines.append("| " + " | ".join([*map(str, _labels(idx)), *map(str, row.values)]) + " |")
        lines.append("")
    return "\n".join(lines)


def tex_escape(s: str) -> str:
    """``s`` as LaTeX that prints it (:func:`banditbench.analysis.latex.escape`)."""
    return latex.escape(s)


def to_latex(
    tables: dict[str, pd.DataFrame],
    experiment: str,
    ci_level: float = DEFAULT_CI_LEVEL,
    spread: str = "ci",
    n: int | None = None,
    run: str = "",
    display: Mapping[str, Any] | None = None,
) -> str:
    """One ``table`` float per table (:func:`banditbench.analysis.latex.table`, labelled by :func:`table_key`):
    labels, cells and the caption (the experiment, the table and the header's notes) escaped, display names'
    mathtext as math (:func:`banditbench.analysis.latex.name`), a ``†`` cell's mark superscript."""
    notes = " ".join(_notes(tables, ci_level, spread, n))
    parts = []
    for metric, wide in tables.items():
        wide = wide.rename_axis(index=[n or "" for n in wide.index.names])
        head = list(wide.index.names) + list(wide.columns)
        shown = [latex.name if level == "algorithm" else str for level in wide.index.names]
        body = [[*(f(x) for f, x in zip(shown, _labels(idx))), *row.values] for idx, row in wide.iterrows()]
        align = "l" * len(wide.index.names) + "r" * len(wide.columns)
        key = table_key(run, experiment, metric)
        caption = f"{Names.of(display).experiment(experiment)}: {shown_title(metric, display)}. {notes}"
        parts.append(latex.table(caption, head, body, align, key=key))
    return "\n".join(parts)


def to_html(
    tables: dict[str, pd.DataFrame],
    experiment: str,
    description: str = "",
    ci_level: float = DEFAULT_CI_LEVEL,
    spread: str = "ci",
    n: int | None = None,
    display: Mapping[str, Any] | None = None,
) -> str:
    """A self-contained page of the same tables (escaped; one ``<table>`` per metric)."""
    body = [f"<h1>{html.escape(Names.of(display).experiment(experiment))}</h1>"]
    if description:
        body.append(f"<p>{html.escape(description)}</p>")
    body += [f"<p>{html.escape(note)}</p>" for note in _notes(tables, ci_level, spread, n)]
    for metric, wide in tables.items():
        flat = wide.rename_axis(columns=None).reset_index()
        body += [
            f"<h2>{html.escape(shown_title(metric, display))}</h2>",
            flat.to_html(index=False, escape=True, border=0, na_rep=""),
        ]
    return html_page(experiment, "\n".join(body))


def csv_bytes(df: pd.DataFrame) -> bytes:
    """A table as its CSV file holds it (the tidy, curves and paired tables)."""
    buf = io.StringIO()
    df.to_csv(buf, index=False, float_format="%.10g")
    return buf.getvalue().encode()


def tables_from_seeds(
    seeds: pd.DataFrame,
    experiment: str,
    main_metric: str,
    ci_level: float = DEFAULT_CI_LEVEL,
    spread: str = "ci",
    names: Mapping[str, str] | None = None,
    display: Mapping[str, Any] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame], int]:
    """The tidy table, the curves table, the human tables (algorithms by their display ``names``, delays
    and budgets by ``display``'s) and the number of seeds per cell, all from the per-seed table ``seeds``."""
    tidy, curve_df = seed_statistics(seeds, ci_level)
    final_t = int(tidy["t"].max())
    headline = named(headline_table(tidy, main_metric, spread, display), names)
    tables = {f"{main_metric} at T = {final_t}": with_instance_rows(headline, tidy, display)}
    per_task = task_table(seeds, main_metric, ci_level, spread)
    if per_task is not None:
        tables[f"{main_metric} at T = {final_t}, by task"] = named(per_task, names)
    tables.update(
        {metric: with_display(named(wide, names), display) for metric, wide in human_tables(tidy, spread).items()}
    )
    return tidy, curve_df, tables, int(tidy["n"].max())


def aggregate_experiment(
    runs: Sequence[str],
    experiment: str,
    horizons: Sequence[int],
    csv: str | Path,
    markdown: str | Path,
    latex: str | Path,
    curves: str | Path,
    main_metric: str,
    per_round: Sequence[str] = (),
    remove_corrupt: bool = False,
    html_file: str | Path | None = None,
    description: str = "",
    ci_level: float = DEFAULT_CI_LEVEL,
    seeds_file: str | Path | None = None,
    timing_file: str | Path | None = None,
    spread: str = "ci",
    workers: int | None = None,
    run: str = "",
    names: Mapping[str, str] | None = None,
    display: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Aggregate ``runs`` and write all table files atomically; return the tidy table.

    The runs are read once into the per-seed table (:func:`~banditbench.analysis.seedtable.collect_seeds`,
    by ``workers`` processes, default the CPUs available), written to ``seeds_file`` (Parquet) when
    given, and their recorded times into the per-seed timing table, ``timing_file`` (Parquet: what the compute
    tables and timing claims read); every other table is computed from the per-seed table.
    ``main_metric`` (e.g. ``cumulative_regret``) is the metric of the headline table;
    ``per_round`` lists the per-round metrics also reported as running averages;
    ``remove_corrupt`` as for :func:`~banditbench.analysis.seedtable.collect_seeds`;
    ``html_file`` (optional) gets the tables as an HTML page, headed by ``description``;
    ``ci_level`` is the confidence level of every interval (tables and curves);
    ``spread`` what the human tables show after the mean (``ci``: the interval's half-width, ``sd``;
    ``both``: the half-width, then ``(sd S)``);
    ``run`` names the run in the LaTeX tables' labels (:func:`table_key`); ``names`` (``plot.names``)
    the algorithms' display names in the Markdown, LaTeX and HTML tables (the CSVs keep the labels), ``display``
    (the ``display`` block's other names) the experiment's, the delays', budgets' and metrics' there.
    """
    if spread not in SPREADS:
        raise ValueError(f"spread must be one of {SPREADS}, got {spread!r}")
    seeds, timing = collect_runs(
        runs, experiment, horizons, per_round, remove_corrupt, workers=default_workers() if workers is None else workers
    )
    if seeds_file is not None:
        write_parquet(seeds, seeds_file)
    if timing_file is not None:
        write_parquet(timing, timing_file)
    tidy, curve_df, tables, n = tables_from_seeds(seeds, experiment, main_metric, ci_level, spread, names, display)
    atomic_write_bytes(csv, csv_bytes(tidy))
    atomic_write_bytes(curves, csv_bytes(curve_df))
    atomic_write_bytes(markdown, to_markdown(tables, experiment, ci_level, spread, n, display).encode())
    atomic_write_bytes(latex, to_latex(tables, experiment, ci_level, spread, n, run, display).encode())
    if html_file is not None:
        page = to_html(tables, experiment, description, ci_level, spread, n, display)
        atomic_write_bytes(html_file, page.encode())
    log.info("aggregated %d runs of %s into %d rows", len(runs), experiment, len(tidy))
    return tidy
