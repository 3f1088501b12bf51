"""Regret against compute: each algorithm's final value of the experiment's plot metric against its CPU seconds per seed.

Per experiment and per (delay, budget) setting, one point per algorithm:

* y — the experiment's plot metric (``cumulative_<plot_metric>``, e.g. the cumulative regret) at the final
  horizon, exactly the tidy table's row (``results/<run>/tables/<experiment>.csv``: ``mean``, ``ci_low``,
  ``ci_high``, ``n``; the experiment's interval, Student-t at its ``ci_level``);
* x — the CPU seconds one seed costs, from the timing every result file records (its ``timing`` member,
  ``cpu_time_s``: the process CPU time, ``time.process_time``, from building the seed's environment and policy
  to the end of its run; :mod:`banditbench.simulation.runner`), as the aggregation gathers it into the
  experiment's per-seed timing table (``results/<run>/tables/<experiment>.timing.parquet``,
  :func:`banditbench.analysis.seedtable.collect_runs`).

**How a job's CPU time is divided among its seeds.**  A simulate job runs a block of seeds.  On the
single-seed path (the cheap families, and any block the seed-batched engine declines) the seeds run one after
the other and each seed's own CPU time is measured and recorded.  On the seed-batched path the block's seeds
(and, in a ``lockstep_variants`` job, its algorithms' seeds too) advance in lockstep through one batched
computation, so no seed's own share can be measured: the runner divides the block's CPU time equally among its
members (``timing["batched_block"]`` members) and records that share for each.  The time a job spends outside
the simulations — process start, imports, writing files (``overhead_s`` of the timing table,
:mod:`banditbench.analysis.timing`) — is left out: it depends on how many seeds a job holds
(``seeds_per_job``), not on the algorithm.

**The interval on the CPU axis.**  The point is the mean CPU time per seed over the cell's seeds.  Seeds that
share a seed-batched block carry one measurement between them (the same share), so the interval is a
Student-t interval at the experiment's ``ci_level`` over the independent measurements — one per seed on the
single-seed path, one per block on the seed-batched path (``cpu_measurements``) — centred on that mean.  With
fewer than two measurements (every seed of the cell in one seed-batched block, the usual case for the neural
families) there is no interval on that axis, and the table says so (``cpu_n = 1``).  A result file written
before results recorded their CPU time has none (NaN); such a cell's point is left out of the figure and its
table row says ``not recorded``.

One-time costs inside a simulation are charged to the seed that paid them: the compiled engines' numba
compilation on first use (cached on disk after, so it falls on the first job of a machine to need it) and a
module's first import inside the run.  They leave the mean per seed a fair share of the job but widen the
interval where seeds are measured one by one (the Lipschitz experiments of the default grid show it).

Outputs: a tidy CSV (``results/<run>/compute/<experiment>.csv``), Markdown, LaTeX (``tab:<run>-<experiment>-compute``)
and HTML tables (display names from ``plot.names``, negative numbers with U+2212), and a figure (PDF, PNG; one
panel per budget and delay setting, log CPU axis by default) through the figure machinery of
:mod:`banditbench.analysis.plots` (no clipping, TrueType fonts, the legend under the axes).
"""

from __future__ import annotations

import html
import io
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..configuration.grid import DEFAULT_CI_LEVEL
from ..storage.resultio import atomic_write_bytes
from . import latex
from . import plots as _plots
from .aggregate import ci_percent, number, read_tidy, t_quantile
from .pages import html_page
from .seedtable import read_timing

#: one row per seed: its cell's labels, the seed, its CPU seconds and the measurement it belongs to
SEED_COLUMNS = ["algorithm", "delay", "budget", "seed", "cpu_s", "measurement", "batched_block"]
#: the tidy table: the final metric (as the tidy table has it) and the CPU seconds per seed with their interval
COLUMNS = [
    "experiment",
    "algorithm",
    "delay",
    "budget",
    "metric",
    "t",
    "mean",
    "ci_low",
    "ci_high",
    "n",
    "cpu_s",
    "cpu_low",
    "cpu_high",
    "cpu_n",
    "cpu_seeds",
    "level",
]


def seed_cpu(timing: pd.DataFrame) -> pd.DataFrame:
    """One row per run of the experiment's per-seed timing table (:func:`~banditbench.analysis.seedtable.collect_runs`,
    ``results/<run>/tables/<experiment>.timing.parquet``), as :data:`SEED_COLUMNS`: its CPU seconds (NaN where its
    file records none) and the measurement it shares with other seeds (its seed-batched block, else itself)."""
    out = timing[["algorithm", "delay", "budget", "seed", "cpu_time_s", "measurement", "batched_block"]]
    return out.rename(columns={"cpu_time_s": "cpu_s"}).astype({"algorithm": str, "delay": str, "budget": str})


def cpu_statistics(seeds: pd.DataFrame, ci_level: float = DEFAULT_CI_LEVEL) -> pd.DataFrame:
    """Per (algorithm, delay, budget): the mean CPU seconds per seed (``cpu_s``), the Student-t interval over the
    independent measurements (``cpu_low``, ``cpu_high``; NaN with fewer than two), their number (``cpu_n``) and
    the number of seeds (``cpu_seeds``); see the module docstring."""
    out = []
    for (alg, delay, budget), cell in seeds.groupby(["algorithm", "delay", "budget"], sort=False):
        mean = float(cell["cpu_s"].mean()) if cell["cpu_s"].notna().all() else float("nan")
        measured = cell.groupby("measurement", sort=False)["cpu_s"].first().to_numpy(dtype=float)
        k = len(measured)
        low = high = float("nan")
        if k > 1 and np.isfinite(mean):
            half = float(t_quantile(0.5 + ci_level / 2, k - 1) * measured.std(ddof=1) / np.sqrt(k))
            low, high = mean - half, mean + half
        out.append((alg, delay, budget, mean, low, high, k, len(cell)))
    return pd.DataFrame(
        out, columns=["algorithm", "delay", "budget", "cpu_s", "cpu_low", "cpu_high", "cpu_n", "cpu_seeds"]
    )


def compute_table(
    tidy: pd.DataFrame | str | Path, seeds: pd.DataFrame, metric: str, ci_level: float = DEFAULT_CI_LEVEL
) -> pd.DataFrame:
    """The tidy regret-against-compute table (:data:`COLUMNS`): ``metric``'s rows of the tidy table at its final
    horizon, as they are, joined with :func:`cpu_statistics` of ``seeds`` (:func:`seed_cpu`)."""
    tidy = read_tidy(tidy) if not isinstance(tidy, pd.DataFrame) else tidy
    rows = tidy[tidy["metric"] == metric]
    if rows.empty:
        raise ValueError(f"no rows for metric {metric!r} in the tidy table; have {sorted(set(tidy['metric']))}")
    final = rows[rows["t"] == rows["t"].max()].astype({"algorithm": str, "delay": str, "budget": str})
    cpu = cpu_statistics(seeds, ci_level)
    table = final.merge(cpu, on=["algorithm", "delay", "budget"], how="left", validate="one_to_one")
    missing = table[table["cpu_seeds"].isna()]
    if len(missing):
        cells = missing[["algorithm", "delay", "budget"]].to_records(index=False).tolist()
        raise ValueError(f"no timing for the cells {cells} of the tidy table: the runs given are not its runs")
    table = table.assign(level=ci_level, cpu_n=table["cpu_n"].astype(int), cpu_seeds=table["cpu_seeds"].astype(int))
    return table[COLUMNS].reset_index(drop=True)


# --- the human tables ----------------------------------------------------------------------------------


def _seconds(x: float) -> str:
    """CPU seconds as the tables print them: three significant digits (at least none, at most six decimals)."""
    if not np.isfinite(x):
        return "not recorded"
    digits = 2 - int(np.floor(np.log10(abs(x)))) if x else 2
    return number(x, min(6, max(0, digits)))


def _cells(row) -> tuple[str, str]:
    metric = number(row["mean"]) + (f" ± {number(row['ci_high'] - row['mean'])}" if np.isfinite(row["ci_high"]) else "")
    cpu = _seconds(row["cpu_s"])
    if np.isfinite(row["cpu_s"]) and np.isfinite(row["cpu_high"]):
        cpu += f" ± {_seconds(row['cpu_high'] - row['cpu_s'])}"
    return metric, cpu


def human_table(table: pd.DataFrame, names: Mapping[str, str] | None = None) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the human tables: delay, budget (when any), algorithm by its display name, the metric
    at T (``mean ± half-width``), the CPU seconds per seed (``mean ± half-width``) and the seeds per measurement."""
    names = names or {}
    budgets = set(table["budget"]) != {"none"}
    metric, t = str(table["metric"].iloc[0]), int(table["t"].iloc[0])
    head = ["delay", *(["budget"] if budgets else []), "algorithm", f"{metric} at T = {t}", "CPU s per seed", "seeds"]
    body = []
    for _, row in table.iterrows():
        value, cpu = _cells(row)
        seeds = f"{row['cpu_seeds']} in {row['cpu_n']} measurement{'s' if row['cpu_n'] != 1 else ''}"
        body.append(
            [
                row["delay"],
                *([row["budget"]] if budgets else []),
                names.get(row["algorithm"], row["algorithm"]),
                value,
                cpu,
                seeds,
            ]
        )
    return head, body


def caption(table: pd.DataFrame) -> str:
    """What the tables show, as their header says it."""
    level = ci_percent(float(table["level"].iloc[0]))
    metric = str(table["metric"].iloc[0])
    return (
        f"Final {metric.replace('_', ' ')} (mean ± {level} % Student-t CI half-width over n = {int(table['n'].max())} "
        f"seeds, as the experiment's tables) against the CPU seconds one seed costs (mean ± {level} % Student-t CI "
        "half-width over the independent measurements: one per seed, or one per seed-batched block, whose CPU "
        "time is shared equally among its seeds; none with a single measurement). CPU time of the simulation "
        "itself, as each result file records it; process start, imports and file writes are left out."
    )


def to_markdown(table: pd.DataFrame, experiment: str, names: Mapping[str, str] | None = None) -> str:
    head, body = human_table(table, names)
    lines = [f"# {experiment}: regret against compute", "", caption(table), ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in body]
    return "\n".join(lines) + "\n"


def to_latex(table: pd.DataFrame, experiment: str, names: Mapping[str, str] | None = None, run: str = "") -> str:
    """One ``table`` float labelled ``tab:<run>-<experiment>-compute``; display names' mathtext as math."""
    head, body = human_table(table, names)
    pos = head.index("algorithm")
    body = [[latex.name(x) if i == pos else x for i, x in enumerate(row)] for row in body]
    align = "l" * (pos + 1) + "r" * (len(head) - pos - 1)
    key = latex.label(run, experiment, "compute")
    return latex.table(f"{experiment}: regret against compute. {caption(table)}", head, body, align, key=key)


def to_html(table: pd.DataFrame, experiment: str, names: Mapping[str, str] | None = None) -> str:
    head, body = human_table(table, names)
    frame = pd.DataFrame(body, columns=head)
    parts = [
        f"<h1>{html.escape(experiment)}: regret against compute</h1>",
        f"<p>{html.escape(caption(table))}</p>",
        frame.to_html(index=False, escape=True, border=0),
    ]
    return html_page(f"{experiment}: regret against compute", "\n".join(parts))


# --- the figure ----------------------------------------------------------------------------------------


def _log_ticks(ax) -> None:
    """Plain numbers (``0.05``, ``2``) at 1, 2, 3 and 5 times the powers of ten of a log axis spanning less than a
    decade, 1, 2 and 5 times below two decades, the powers alone otherwise; no labels on the minor ticks (which
    crowd a short axis)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    low, high = ax.get_xlim()
    span = high / low if low > 0 else np.inf
    subs = (1.0, 2.0, 3.0, 5.0) if span < 10 else (1.0, 2.0, 5.0) if span < 100 else (1.0,)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=20))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def compute_figure(
    table: pd.DataFrame,
    title: str,
    style: Any = None,
    xscale: str = "log",
):
    """One panel per (budget, delay) setting, one point per algorithm at (CPU seconds per seed, final metric)
    with its intervals on both axes where it has them; CPU axis ``xscale`` (``log`` by default).  Drawn and laid
    out with :mod:`banditbench.analysis.plots` (``style``: the experiment's ``plot`` block)."""
    plots = _plots
    style = plots.PlotStyle.of(style)
    settings = list(dict.fromkeys(zip(table["budget"], table["delay"])))
    algorithms = list(dict.fromkeys(table["algorithm"]))
    colours = style.colours(algorithms)
    markers = "osD^vP*Xh<>p"
    ncols = min(len(settings), 3 if style.width is None or style.width > 5 else 2)
    nrows = -(-len(settings) // ncols)
    fig, axes = plots._figure(style, nrows, ncols, nrows)
    metric = str(table["metric"].iloc[0])
    missing = []
    for k, (budget, delay) in enumerate(settings):
        ax = axes[k // ncols][k % ncols]
        cell = table[(table["budget"] == budget) & (table["delay"] == delay)]
        for i, alg in enumerate(algorithms):
            row = cell[cell["algorithm"] == alg]
            if row.empty:
                continue
            row = row.iloc[0]
            if not np.isfinite(row["cpu_s"]):
                missing.append(style.name(alg))
                continue
            x, y = row["cpu_s"], row["mean"]
            xerr = None
            if np.isfinite(row["cpu_high"]):
                # a log axis has no place for a bound at or below 0: the bar then stops at a tenth of the mean
                low = max(row["cpu_low"], x / 10) if xscale == "log" else row["cpu_low"]
                xerr = [[x - low], [row["cpu_high"] - x]]
            yerr = [[y - row["ci_low"]], [row["ci_high"] - y]] if np.isfinite(row["ci_high"]) else None
            ax.errorbar(
                [x],
                [y],
                xerr=xerr,
                yerr=yerr,
                fmt=markers[i % len(markers)],
                color=colours[alg],
                ms=5,
                capsize=2,
                lw=1.0,
                label=style.name(alg),
            )
        ax.set_xscale(xscale)
        if style.yscale != "linear":
            ax.set_yscale(style.yscale)
        ax.set_title(plots._setting(delay, budget), fontsize=style.size)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=style.size - 1)
        ax.set_xlabel("CPU seconds per seed", fontsize=style.size)
        if k % ncols == 0:
            ax.set_ylabel(f"{plots._label(metric)} at T = {int(table['t'].iloc[0])}", fontsize=style.size)
        ax.margins(x=0.15, y=0.1)
        if xscale == "log":
            _log_ticks(ax)
    for k in range(len(settings), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    handles, labels = plots.legend_entries(fig)
    level = ci_percent(float(table["level"].iloc[0]))
    note = f"Bars: {level} % CI on each axis where there are two or more measurements."
    if missing:
        note += f" No CPU time recorded for: {', '.join(dict.fromkeys(missing))}."
    plots._finish(fig, style, title, handles, labels, note)
    return fig


def write_compute(
    timing: str | Path | pd.DataFrame,
    tidy: str | Path,
    experiment: str,
    metric: str,
    csv: str | Path,
    markdown: str | Path,
    latex_file: str | Path,
    html_file: str | Path,
    plots: Sequence[str | Path] = (),
    ci_level: float = DEFAULT_CI_LEVEL,
    plot: Mapping[str, Any] | None = None,
    run: str = "",
    xscale: str = "log",
) -> pd.DataFrame:
    """Write the regret-against-compute table (CSV, Markdown, LaTeX, HTML) and figure of one experiment from its
    per-seed timing table ``timing`` (a path or the frame) and its tidy table ``tidy``; return the table."""
    timing = read_timing(timing) if not isinstance(timing, pd.DataFrame) else timing
    table = compute_table(tidy, seed_cpu(timing), metric, ci_level)
    names = dict((plot or {}).get("names") or {})
    buf = io.StringIO()
    table.to_csv(buf, index=False, float_format="%.10g")
    atomic_write_bytes(csv, buf.getvalue().encode())
    atomic_write_bytes(markdown, to_markdown(table, experiment, names).encode())
    atomic_write_bytes(latex_file, to_latex(table, experiment, names, run).encode())
    atomic_write_bytes(html_file, to_html(table, experiment, names).encode())
    if plots:
        _plots._save(
            compute_figure(table, f"{experiment}: {metric.replace('_', ' ')} against compute", plot, xscale), plots
        )
    return table
