"""Aggregate per-job result files into tables and curves.

Every per-round metric ``m`` logged by an environment becomes the cumulative
series ``cumulative_m``; metrics listed in an experiment's ``per_round_metrics``
also give ``per_round_m``, the running average ``cumulative_m(t) / t`` (seed 001's
``R(T)/T``, Tables E.2–E.3, whose rows are algorithms and columns horizons in the
per-metric tables below); scalar run summaries (e.g. a stopping time) are
reported at the final horizon under their own name.  Statistics across seeds:
mean and a Student-t confidence interval at the experiment's ``ci_level`` (default
95 %; NaN bounds when only one seed).

Outputs
-------
* tidy CSV — columns ``experiment, algorithm, delay, budget, t, metric, mean,
  ci_low, ci_high, n`` (the stable interface described in README.md, "Outputs");
* Markdown, LaTeX and HTML (the page ``snakemake --report`` shows) — first a headline table in the layout of the papers'
  result tables (seed 003 App. D Table 1, seed 004 Tables 1–2): the main
  metric at the final horizon, one row per algorithm, one column per delay
  setting and budget; for experiments whose seeds are spread over tasks (the
  prompt benchmark) the same broken down by task; then one table per metric, rows (delay, budget,
  algorithm), columns the table horizons.  Cells are ``mean ± half-width``;
* curves CSV — the same statistics on a grid of at most ``curve_points``
  rounds (always including the horizon), read by the plots.
"""

from __future__ import annotations

import html
import io
import logging
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..config import DEFAULT_CI_LEVEL, budget_label
from ..errors import CorruptFileError
from ..resultio import atomic_write_bytes, identity_from_path, load_result
from .pages import html_page

log = logging.getLogger(__name__)
COLUMNS = ["experiment", "algorithm", "delay", "budget", "t", "metric", "mean", "ci_low", "ci_high", "n"]


def mean_ci(values: np.ndarray, level: float = DEFAULT_CI_LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and Student-t CI at confidence ``level`` along axis 0 (rows are seeds)."""
    values = np.asarray(values, dtype=float)
    n = values.shape[0]
    mean = values.mean(axis=0)
    if n < 2:
        nan = np.full_like(mean, np.nan)
        return mean, nan, nan
    half = stats.t.ppf(0.5 + level / 2, n - 1) * values.std(axis=0, ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half


def _task_name(cell, summary) -> str | None:
    """The task a run played, for environments that spread seeds over tasks (``task_index`` in the summary)."""
    if "task_index" not in summary:
        return None
    index = int(summary["task_index"])
    tasks = cell["environment"].get("params", {}).get("tasks")
    return str(tasks[index]) if tasks and index < len(tasks) else f"task {index}"


def check_runs(runs: Iterable[str], experiment: str, remove_corrupt: bool = False) -> list:
    """Load every run, each checked against the run its path names
    (``results/runs/<experiment>/<algorithm>/<delay>/<budget>/<seed>.npz``) and against its checksum.

    Every bad file is reported at once, in one :class:`~banditbench.errors.CorruptFileError`; with
    ``remove_corrupt`` they are deleted too, so that the next ``snakemake`` run rebuilds exactly
    them (a corrupt result is never aggregated).
    """
    loaded, bad = [], []
    for path in runs:
        expect = identity_from_path(path)
        if expect.get("experiment") != experiment:
            raise ValueError(f"{path}: not a run of experiment {experiment!r} "
                             f"(expected results/runs/{experiment}/<algorithm>/<delay>/<budget>/<seed>.npz)")
        try:
            loaded.append((path, *load_result(path, expect)))
        except CorruptFileError as err:
            bad.append((path, err))
    if bad:
        if remove_corrupt:
            for path, _ in bad:
                Path(path).unlink(missing_ok=True)
        what = (f"removed {len(bad)} corrupt result file(s); run snakemake again to rebuild them"
                if remove_corrupt else f"{len(bad)} corrupt result file(s); delete them and re-run their jobs")
        raise CorruptFileError("\n".join(str(err) for _, err in bad) + f"\n{what}")
    return loaded


def _load_groups(loaded: list, per_round: Sequence[str] = ()):
    """Group checked runs (:func:`check_runs`) by (algorithm, delay, budget); return series stacks,
    summaries and each run's task."""
    series = defaultdict(lambda: defaultdict(list))
    summaries = defaultdict(lambda: defaultdict(list))
    tasks = defaultdict(list)
    horizons = set()
    for path, data, meta, _ in loaded:
        cell = meta["cell"]
        key = (cell["algorithm"], cell["delay_label"], budget_label(cell["budget"]))
        horizons.add(int(cell["horizon"]))
        for name in meta.get("metrics", sorted(data)):  # the environment's order: primary metric first
            series[key][f"cumulative_{name}"].append(np.cumsum(data[name]))
        for name in per_round:
            if name not in data:
                raise ValueError(f"{path}: per-round metric {name!r} is not in the run (it has {sorted(data)})")
            series[key][f"per_round_{name}"].append(np.cumsum(data[name]) / np.arange(1, len(data[name]) + 1))
        for name, value in meta.get("summary", {}).items():
            summaries[key][name].append(float(value))
        tasks[key].append(_task_name(cell, meta.get("summary", {})))
    if len(horizons) > 1:
        raise ValueError(f"runs of one experiment have different horizons {sorted(horizons)}; re-run the stale jobs")
    return series, summaries, tasks


def _check_complete(series) -> None:
    """Every (algorithm, delay, budget) group must have the same number of seeds."""
    counts = {key: len(next(iter(m.values()))) for key, m in series.items()}
    if len(set(counts.values())) > 1:
        raise ValueError(f"unequal number of seeds per cell: {counts}")


def aggregate_runs(runs: Sequence[str], experiment: str, horizons: Sequence[int], curve_points: int = 300,
                   per_round: Sequence[str] = (), remove_corrupt: bool = False,
                   ci_level: float = DEFAULT_CI_LEVEL) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the tidy table and the curves table of one experiment's runs (checked: :func:`check_runs`)."""
    if not runs:
        raise ValueError(f"experiment {experiment!r}: no run files to aggregate")
    groups = _load_groups(check_runs(runs, experiment, remove_corrupt), per_round)
    return _statistics(groups, experiment, horizons, curve_points, ci_level)


def _statistics(groups, experiment: str, horizons: Sequence[int], curve_points: int = 300,
                ci_level: float = DEFAULT_CI_LEVEL) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tidy table and the curves table of grouped runs (:func:`_load_groups`)."""
    series, summaries, _ = groups
    _check_complete(series)
    rows, curve_rows = [], []
    for (alg, delay, budget), metrics in series.items():  # config order
        for metric, stacks in metrics.items():
            arr = np.vstack(stacks)
            T = arr.shape[1]
            too_far = [h for h in horizons if h > T]
            if too_far:
                raise ValueError(f"table horizons {too_far} exceed the runs' horizon {T}")
            idx = np.asarray(horizons, dtype=int) - 1
            mean, lo, hi = mean_ci(arr[:, idx], ci_level)
            for h, m, a, b in zip(horizons, mean, lo, hi):
                rows.append((experiment, alg, delay, budget, int(h), metric, m, a, b, arr.shape[0]))
            grid = np.unique(np.linspace(1, T, min(curve_points, T)).round().astype(int))
            cm, clo, chi = mean_ci(arr[:, grid - 1], ci_level)
            curve_rows += [(experiment, alg, delay, budget, int(t), metric, m, a, b, arr.shape[0])
                           for t, m, a, b in zip(grid, cm, clo, chi)]
        for name, values in summaries[(alg, delay, budget)].items():
            m, a, b = mean_ci(np.asarray(values)[:, None], ci_level)
            rows.append((experiment, alg, delay, budget, int(T), name, m[0], a[0], b[0], len(values)))
    return pd.DataFrame(rows, columns=COLUMNS), pd.DataFrame(curve_rows, columns=COLUMNS)


def task_table(groups, metric: str, ci_level: float = DEFAULT_CI_LEVEL) -> pd.DataFrame | None:
    """``metric`` at the final horizon per task (rows algorithms, columns delay and task) of grouped runs
    (:func:`_load_groups`), for experiments whose seeds are spread over tasks (seed 000's prompt
    benchmark); None for any other experiment."""
    series, _, tasks = groups
    rows = []
    for (alg, delay, budget), metrics in series.items():
        if metric not in metrics or None in tasks[(alg, delay, budget)]:
            return None
        final = np.array([s[-1] for s in metrics[metric]])
        names = np.array(tasks[(alg, delay, budget)])
        for task in dict.fromkeys(names):
            m, lo, hi = mean_ci(final[names == task][:, None], ci_level)
            rows.append({"algorithm": alg, "setting": f"{delay}, {task}", "mean": m[0], "ci_high": hi[0]})
    if not rows:
        return None
    df = pd.DataFrame(rows)
    df["cell"] = df.apply(_cell, axis=1)
    return df.pivot_table(index="algorithm", columns="setting", values="cell", aggfunc="first", sort=False)


def read_tidy(path: str | Path, what: str = "tidy table") -> pd.DataFrame:
    """A table in the tidy long format (:data:`COLUMNS`: the tables CSV, the curves CSV), checked; a
    :class:`~banditbench.errors.CorruptFileError` names the file and what is wrong."""
    rebuild = "delete it and run snakemake again to rebuild it"
    try:
        df = pd.read_csv(path, dtype={"algorithm": str, "delay": str, "budget": str, "experiment": str})
    except FileNotFoundError:
        raise CorruptFileError(f"{path}: {what} does not exist") from None
    except (ValueError, OSError, UnicodeDecodeError) as err:      # pandas' parser errors are ValueErrors
        raise CorruptFileError(f"{path}: {what} is unreadable ({type(err).__name__}: {err}); {rebuild}") from None
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise CorruptFileError(f"{path}: {what} lacks the columns {missing}; {rebuild}")
    for column in ("t", "mean", "ci_low", "ci_high", "n"):
        # ci_low / ci_high are empty with one seed; the others always hold a number
        if not pd.api.types.is_numeric_dtype(df[column]) or (column in ("t", "mean", "n") and df[column].isna().any()):
            raise CorruptFileError(f"{path}: {what} has missing or non-numeric values in column {column!r}; "
                                   f"{rebuild}")
    return df


def _cell(row) -> str:
    if np.isnan(row["ci_high"]):
        return f"{row['mean']:.2f}"
    return f"{row['mean']:.2f} ± {row['ci_high'] - row['mean']:.2f}"


def headline_table(tidy: pd.DataFrame, metric: str) -> pd.DataFrame:
    """``metric`` at the final horizon: rows algorithms, columns the delay and budget settings that vary."""
    df = tidy[(tidy["metric"] == metric) & (tidy["t"] == tidy["t"].max())]
    if df.empty:
        raise ValueError(f"no rows for metric {metric!r}; have {sorted(set(tidy['metric']))}")
    varying = [c for c in ("delay", "budget") if df[c].nunique() > 1] or ["delay"]
    labels = df[varying].astype(str).agg(", ".join, axis=1)
    if "budget" in varying:
        labels = labels.str.replace(r"(^|, )(\d[\d.e+-]*)$", r"\1B = \2", regex=True)
    df = df.assign(cell=df.apply(_cell, axis=1), setting=labels)
    return df.pivot_table(index="algorithm", columns="setting", values="cell", aggfunc="first", sort=False)


def human_tables(tidy: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """One wide table per metric: rows (delay, budget, algorithm), columns ``t = ...``."""
    out = {}
    for metric, df in tidy.groupby("metric", sort=False):
        df = df.assign(cell=df.apply(_cell, axis=1), horizon=df["t"].map(lambda t: f"t = {t}"))
        wide = df.pivot_table(index=["delay", "budget", "algorithm"], columns="horizon", values="cell",
                              aggfunc="first", sort=False)
        wide = wide[sorted(wide.columns, key=lambda c: int(c.split("= ")[1]))]
        out[metric] = wide
    return out


def _labels(idx) -> tuple:
    return idx if isinstance(idx, tuple) else (idx,)


def ci_percent(level: float) -> str:
    """A confidence level as the tables write it: 0.95 -> ``95``, 0.999 -> ``99.9``."""
    return f"{100 * level:g}"


def to_markdown(tables: dict[str, pd.DataFrame], experiment: str, ci_level: float = DEFAULT_CI_LEVEL) -> str:
    lines = [f"# {experiment}", "", f"Mean ± {ci_percent(ci_level)} % CI half-width across seeds.", ""]
    for metric, wide in tables.items():
        lines += [f"## {metric}", ""]
        wide = wide.rename_axis(index=[n or "" for n in wide.index.names])
        head = list(wide.index.names) + list(wide.columns)
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for idx, row in wide.iterrows():
            lines.append("| " + " | ".join([*map(str, _labels(idx)), *map(str, row.values)]) + " |")
        lines.append("")
    return "\n".join(lines)


def tex_escape(s: str) -> str:
    return str(s).replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")


def to_latex(tables: dict[str, pd.DataFrame], experiment: str, ci_level: float = DEFAULT_CI_LEVEL) -> str:
    parts = []
    for metric, wide in tables.items():
        wide = wide.rename_axis(index=[n or "" for n in wide.index.names])
        head = list(wide.index.names) + list(wide.columns)
        body = [" & ".join(tex_escape(h) for h in head) + r" \\ \midrule"]
        for idx, row in wide.iterrows():
            cells = [*map(str, _labels(idx)), *(str(v).replace("±", r"$\pm$") for v in row.values)]
            body.append(" & ".join(tex_escape(c) if "$" not in c else c for c in cells) + r" \\")
        parts.append("\n".join([
            r"\begin{table}[t]", r"\centering",
            rf"\caption{{{tex_escape(experiment)}: {tex_escape(metric)} (mean $\pm$ {ci_percent(ci_level)}\% CI).}}",
            r"\begin{tabular}{" + "l" * len(wide.index.names) + "r" * len(wide.columns) + "}",
            r"\toprule", *body, r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]))
    return "\n".join(parts)


def to_html(tables: dict[str, pd.DataFrame], experiment: str, description: str = "",
            ci_level: float = DEFAULT_CI_LEVEL) -> str:
    """A self-contained page of the same tables (escaped; one ``<table>`` per metric)."""
    body = [f"<h1>{html.escape(experiment)}</h1>"]
    if description:
        body.append(f"<p>{html.escape(description)}</p>")
    body.append(f"<p>Mean ± {ci_percent(ci_level)} % CI half-width across seeds.</p>")
    for metric, wide in tables.items():
        flat = wide.rename_axis(columns=None).reset_index()
        body += [f"<h2>{html.escape(metric)}</h2>", flat.to_html(index=False, escape=True, border=0, na_rep="")]
    return html_page(experiment, "\n".join(body))


def _csv_bytes(df: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    df.to_csv(buf, index=False, float_format="%.10g")
    return buf.getvalue().encode()


def aggregate_experiment(runs: Sequence[str], experiment: str, horizons: Sequence[int], csv: str | Path,
                         markdown: str | Path, latex: str | Path, curves: str | Path,
                         main_metric: str, per_round: Sequence[str] = (), remove_corrupt: bool = False,
                         html_file: str | Path | None = None, description: str = "",
                         ci_level: float = DEFAULT_CI_LEVEL) -> pd.DataFrame:
    """Aggregate ``runs`` and write all table files atomically; return the tidy table.

    ``main_metric`` (e.g. ``cumulative_regret``) is the metric of the headline table;
    ``per_round`` lists the per-round metrics also reported as running averages;
    ``remove_corrupt`` as for :func:`check_runs`;
    ``html_file`` (optional) gets the tables as an HTML page, headed by ``description``;
    ``ci_level`` is the confidence level of every interval (tables and curves).
    """
    if not runs:
        raise ValueError(f"experiment {experiment!r}: no run files to aggregate")
    groups = _load_groups(check_runs(runs, experiment, remove_corrupt), per_round)
    tidy, curve_df = _statistics(groups, experiment, horizons, ci_level=ci_level)
    final_t = int(tidy["t"].max())
    tables = {f"{main_metric} at T = {final_t}": headline_table(tidy, main_metric)}
    per_task = task_table(groups, main_metric, ci_level)
    if per_task is not None:
        tables[f"{main_metric} at T = {final_t}, by task"] = per_task
    tables.update(human_tables(tidy))
    atomic_write_bytes(csv, _csv_bytes(tidy))
    atomic_write_bytes(curves, _csv_bytes(curve_df))
    atomic_write_bytes(markdown, to_markdown(tables, experiment, ci_level).encode())
    atomic_write_bytes(latex, to_latex(tables, experiment, ci_level).encode())
    if html_file is not None:
        atomic_write_bytes(html_file, to_html(tables, experiment, description, ci_level).encode())
    log.info("aggregated %d runs of %s into %d rows", len(runs), experiment, len(tidy))
    return tidy
