"""Publication plots: cumulative curves with confidence bands.

The bands are the curves table's Student-t intervals, computed by the aggregation at the
experiment's ``ci_level`` (default 95 %, stated in the figure title when given).

:func:`plot_curves`: one panel per (budget, delay) — budgets in rows, delays in
columns — and one line per algorithm, coloured consistently across panels; dueling experiments get a
row with the self-duel rate under each budget's panels, and ``plot_seeds`` experiments every seed's
curve faintly behind the means.
:func:`plot_panels`: chosen algorithms side by side (an experiment's ``panel_plots``,
e.g. each NVLDB variant against its NLDB counterpart, seed 001 Figs. E.5–E.7), one
panel per named group and (budget, delay).  Written as PDF (vector) and PNG.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path
from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ..storage.resultio import atomic_write_bytes  # noqa: E402
from .aggregate import ci_percent, read_tidy  # noqa: E402


def _label(metric: str) -> str:
    return metric.replace("_", " ")


def _title(title: str, ci_level: float | None) -> str:
    return title if ci_level is None else f"{title} (bands: {ci_percent(ci_level)} % CI)"


def _metric_curves(curves: str | Path | pd.DataFrame, metric: str, source: object = None) -> pd.DataFrame:
    """``metric``'s rows of a curves table (a frame, or the file ``curves`` read); ``source`` names it in
    the error (default ``curves``)."""
    df = read_tidy(curves, "curves table") if not isinstance(curves, pd.DataFrame) else curves
    df = df[df["metric"] == metric]
    if df.empty:
        raise ValueError(f"no curve for metric {metric!r} in {curves if source is None else source}")
    return df.assign(budget=df["budget"].astype(str))


def _draw(ax, curve: pd.DataFrame, colour, style: str, label: str) -> None:
    """One algorithm's mean curve and its confidence band."""
    curve = curve.sort_values("t")
    ax.plot(curve["t"], curve["mean"], color=colour, ls=style, lw=1.6, label=label)
    ax.fill_between(curve["t"], curve["ci_low"], curve["ci_high"], color=colour, alpha=0.2, lw=0)


def below_zero_note(df: pd.DataFrame) -> str | None:
    """A line for a figure whose bands reach below 0 where no seed's value did (the curves' ``min``):
    a symmetric Student-t interval over few seeds does not know that the metric cannot be negative."""
    if "min" not in df.columns:
        return None
    crossing = df[(df["ci_low"] < 0) & (df["min"] >= 0)]
    if crossing.empty:
        return None
    n = int(crossing["n"].min())
    return (
        f"Bands reaching below 0 do so where no seed's value did: a symmetric Student-t interval over "
        f"n = {n} seeds does not know that the metric cannot be negative."
    )


def _note(fig, df: pd.DataFrame) -> float:
    """Write :func:`below_zero_note` at the figure's foot, wrapped to its width; return its height in inches."""
    note = below_zero_note(df)
    if not note:
        return 0.0
    text = textwrap.fill(note, width=max(40, int(15 * fig.get_figwidth())))  # 7-point characters per line
    fig.text(0.01, 0.005, text, fontsize=7, ha="left", va="bottom", color="0.3")
    return 0.12 * (text.count("\n") + 1) + 0.05


def _save(fig, outputs: Sequence[str | Path]) -> None:
    for out in outputs:
        buf = io.BytesIO()
        fmt = Path(out).suffix.lstrip(".")
        fig.savefig(buf, format=fmt, dpi=150, metadata={"CreationDate": None} if fmt == "pdf" else None)
        atomic_write_bytes(out, buf.getvalue())
    plt.close(fig)


#: the running rate drawn under the main metric's panels when the curves hold it (dueling experiments:
#: the share of self-duels, banditbench.envs.preference)
RATE_CURVE = "per_round_self_duel"


def _draw_seeds(ax, seeds: pd.DataFrame, colour) -> None:
    """One faint line per seed (a per-seed table's rows of one algorithm, metric and setting)."""
    for _, run in seeds.groupby("seed", observed=True, sort=False):
        run = run.sort_values("t")
        ax.plot(run["t"], run["value"], color=colour, lw=0.5, alpha=0.25, zorder=1)


def plot_curves(
    curves: str | Path | pd.DataFrame,
    metric: str,
    title: str,
    outputs: Sequence[str | Path],
    ci_level: float | None = None,
    seeds: pd.DataFrame | None = None,
) -> None:
    """One panel per (budget, delay), one mean curve with its band per algorithm; under each budget's
    panels a row with the self-duel rate (:data:`RATE_CURVE`) where the curves hold it; with ``seeds``
    (the experiment's per-seed table, :mod:`banditbench.analysis.seedtable`) every seed's curve faintly
    behind its algorithm's mean."""
    all_curves = read_tidy(curves, "curves table") if not isinstance(curves, pd.DataFrame) else curves
    df = _metric_curves(all_curves, metric, curves)
    rate = all_curves[all_curves["metric"] == RATE_CURVE].assign(budget=lambda d: d["budget"].astype(str))
    delays = list(dict.fromkeys(df["delay"]))
    budgets = list(dict.fromkeys(df["budget"]))
    algorithms = list(dict.fromkeys(df["algorithm"]))
    colours = {a: plt.get_cmap("tab10")(i % 10) for i, a in enumerate(algorithms)}
    # identical curves (e.g. every delay-aware variant under no delay) stay visible
    styles = {a: ("-", "--", "-.", ":")[i % 4] for i, a in enumerate(algorithms)}
    rows = [(budget, name) for budget in budgets for name in ([metric, RATE_CURVE] if len(rate) else [metric])]
    heights = [1.0 if name == metric else 0.45 for _, name in rows]
    fig, axes = plt.subplots(
        len(rows),
        len(delays),
        figsize=(3.6 * len(delays) + 0.6, 2.9 * sum(heights) + 0.6),
        squeeze=False,
        sharex=True,
        gridspec_kw={"height_ratios": heights},
    )
    if seeds is not None:
        seeds = seeds[seeds["metric"] == metric].assign(budget=lambda d: d["budget"].astype(str))
    for r, (budget, name) in enumerate(rows):
        data = df if name == metric else rate
        for c, delay in enumerate(delays):
            ax = axes[r][c]
            cell = data[(data["delay"] == delay) & (data["budget"] == budget)]
            for alg in algorithms:
                d = cell[cell["algorithm"] == alg]
                if d.empty:
                    continue
                if seeds is not None and name == metric:
                    _draw_seeds(
                        ax,
                        seeds[(seeds["algorithm"] == alg) & (seeds["delay"] == delay) & (seeds["budget"] == budget)],
                        colours[alg],
                    )
                _draw(ax, d, colours[alg], styles[alg], alg)
            if name == metric:
                ax.set_title(f"delay: {delay}" + (f", budget: {budget}" if budget != "none" else ""), fontsize=10)
            else:
                ax.set_ylim(-0.03, 1.03)
            ax.grid(alpha=0.3)
            if r == len(rows) - 1:
                ax.set_xlabel("round t")
            if c == 0:
                ax.set_ylabel(_label(metric) if name == metric else "self-duel rate")
    handles, labels = axes[0][0].get_legend_handles_labels()
    height = fig.get_figheight()
    note_inches = _note(fig, df)
    fig.legend(
        handles,
        labels,
        loc="lower center",
        ncol=min(len(labels), 5),
        frameon=False,
        fontsize=9,
        bbox_to_anchor=(0.5, note_inches / height),
    )
    how = [f"bands: {ci_percent(ci_level)} % CI"] if ci_level is not None else []
    how += ["faint lines: single seeds"] if seeds is not None else []
    fig.suptitle(title + (f"\n({'; '.join(how)})" if how else ""), fontsize=11)
    legend_inches = 0.2 * -(-len(labels) // 5) + 0.15  # the legend's rows of 9-point text, and a margin
    fig.tight_layout(rect=(0, min(0.45, (legend_inches + note_inches) / height), 1, 1))
    _save(fig, outputs)


def plot_panels(
    curves: str | Path | pd.DataFrame,
    metric: str,
    panels: Mapping[str, Sequence[str]],
    title: str,
    outputs: Sequence[str | Path],
    ci_level: float | None = None,
) -> None:
    """Write :func:`panel_figure` to ``outputs``."""
    _save(panel_figure(curves, metric, panels, title, ci_level=ci_level), outputs)


def panel_figure(
    curves: str | Path | pd.DataFrame,
    metric: str,
    panels: Mapping[str, Sequence[str]],
    title: str,
    columns: int = 3,
    ci_level: float | None = None,
):
    """One panel per entry of ``panels`` (title -> algorithm labels) and (budget, delay), at most
    ``columns`` to a row (unused axes hidden); the i-th label of every panel has the i-th colour."""
    df = _metric_curves(curves, metric)
    missing = sorted({a for labels in panels.values() for a in labels} - set(df["algorithm"]))
    if missing:
        raise ValueError(f"no {metric!r} curve for algorithm(s) {missing} in {curves}")
    settings = list(dict.fromkeys(zip(df["budget"], df["delay"])))
    cells = [(name, labels, budget, delay) for budget, delay in settings for name, labels in panels.items()]
    ncols = min(columns, len(cells))
    nrows = -(-len(cells) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols + 0.6, 3.0 * nrows + 0.6), squeeze=False, sharex=True)
    for k, (name, labels, budget, delay) in enumerate(cells):
        ax = axes[k // ncols][k % ncols]
        cell = df[(df["delay"] == delay) & (df["budget"] == budget)]
        for i, alg in enumerate(labels):
            _draw(ax, cell[cell["algorithm"] == alg], plt.get_cmap("tab10")(i % 10), ("-", "--", "-.", ":")[i % 4], alg)
        heading = name + (
            "" if len(settings) == 1 else f" (delay: {delay}" + (f", budget: {budget})" if budget != "none" else ")")
        )
        ax.set_title(heading, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
        if k + ncols >= len(cells):
            ax.set_xlabel("round t")
        if k % ncols == 0:
            ax.set_ylabel(_label(metric))
    for k in range(len(cells), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    fig.suptitle(_title(title, ci_level), fontsize=11)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    _note(fig, df[df["algorithm"].isin({a for labels in panels.values() for a in labels})])
    return fig
