"""A sweep's figure and table: the final value of the main metric against the swept parameter's value.

An experiment has sweeps when ``override`` varies an algorithm's parameter over several values (each value a
variant of the algorithm, :mod:`banditbench.configuration.slicing`); :meth:`ExperimentGrid.experiments[e].sweeps
<banditbench.configuration.grid.Experiment.sweeps>` gives, per algorithm with variants, the parameters they
change and each member's values (the algorithm's own included, at its configured or default value).

:func:`sweep_table` reads the experiment's tidy table: one row per member, delay and budget, the main metric at
the final horizon, the swept parameter's value in ``value`` (the first parameter the variants change; the
others, when a sweep crosses several, in ``others``, and each of their combinations is a line of its own) —
the numbers are the tidy table's, unchanged.  :func:`sweep_figure` draws one line per algorithm, setting (delay
and budget) and combination of the other parameters: mean ± the interval as error bars against the value (a log
axis for positive values spanning a factor 20 or more; values that are not numbers placed evenly, in the sweep's
order).  :func:`write_sweeps` writes the CSV (labels), Markdown, LaTeX and HTML (display names: one table per
algorithm and combination, rows the values, columns the settings) and the figure (PDF and PNG).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..configuration.display import Names
from ..storage.resultio import atomic_write_bytes
from . import latex
from .aggregate import _cell, ci_percent, csv_bytes, read_tidy, settings, spread_note
from .pages import html_page

#: the sweep table's columns (then the tidy table's statistics)
COLUMNS = ["experiment", "algorithm", "parameter", "value", "others", "member", "delay", "budget", "t", "metric"]


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) or value is None else str(value)


def sweep_table(tidy: str | Path | pd.DataFrame, sweeps: Mapping[str, Mapping[str, Any]], metric: str) -> pd.DataFrame:
    """The rows of ``metric`` at the final horizon of every sweep's members (module docstring): ``algorithm``
    the algorithm swept, ``member`` the row's own label, ``parameter`` and ``value`` the swept parameter,
    ``others`` the other swept parameters' values (``lam = 1``; empty for a sweep of one parameter)."""
    df = read_tidy(tidy, "tidy table") if not isinstance(tidy, pd.DataFrame) else tidy
    df = df[(df["metric"] == metric) & (df["t"] == df["t"].max())]
    rows = []
    for parent, sweep in sweeps.items():
        parameter, rest = sweep["parameters"][0], sweep["parameters"][1:]
        for member, values in sweep["members"].items():
            cells = df[df["algorithm"] == member]
            if cells.empty:
                raise ValueError(f"no {metric!r} rows for {member!r} (a member of the sweep of {parent!r})")
            others = ", ".join(f"{p} = {_text(values[p])}" for p in rest)
            rows.append(
                cells.rename(columns={"algorithm": "member"}).assign(
                    algorithm=parent, parameter=parameter, value=_text(values[parameter]), others=others
                )
            )
    if not rows:
        raise ValueError("no sweep: no algorithm of the experiment has variants")
    out = pd.concat(rows, ignore_index=True)
    return out[COLUMNS + [c for c in out.columns if c not in COLUMNS]]


def _numbers(values: Sequence[str]) -> list[float] | None:
    try:
        return [float(v) for v in values]
    except ValueError:
        return None


def _order(values: Sequence[str]) -> list[str]:
    """The values in order: by number when they all are numbers, else as the sweep gives them."""
    unique = list(dict.fromkeys(values))
    numbers = _numbers(unique)
    return [v for _, v in sorted(zip(numbers, unique))] if numbers is not None else unique


def _lines(table: pd.DataFrame):
    """(algorithm, others, delay, budget) -> its rows in value order."""
    for key, rows in table.groupby(["algorithm", "others", "delay", "budget"], sort=False):
        order = _order(list(rows["value"]))
        yield key, rows.set_index("value").loc[order].reset_index()


def sweep_figure(table: pd.DataFrame, ci_level: float | None = None, style=None):
    """One panel per swept parameter, one line per algorithm, setting and combination of the other swept
    parameters: the final value's mean with its interval as error bars against the parameter's value.
    ``style``: the experiment's ``plot`` block (:class:`banditbench.analysis.plots.PlotStyle`; the parent's
    colour, a setting's line style and marker)."""
    from .plots import DEFAULT_STYLES, PlotStyle, _figure, _finish, legend_entries

    style = PlotStyle.of(style)
    parameters = list(dict.fromkeys(table["parameter"]))
    fig, axes = _figure(style, 1, len(parameters), 1)
    colours = style.colours(list(dict.fromkeys(table["algorithm"])))
    settings_ = list(dict.fromkeys(zip(table["delay"], table["budget"].astype(str))))
    nd, nb = len({d for d, _ in settings_}), len({b for _, b in settings_})
    combos = list(dict.fromkeys(table["others"]))
    markers = "osD^v<>"
    metric = str(table["metric"].iloc[0])
    for ax, parameter in zip(axes[0], parameters):
        part = table[table["parameter"] == parameter]
        values = _order(list(part["value"]))
        numbers = _numbers(values)
        log = numbers is not None and min(numbers) > 0 and max(numbers) / min(numbers) >= 20
        for (alg, others, delay, budget), rows in _lines(part):
            k = settings_.index((delay, str(budget)))
            x = [float(v) for v in rows["value"]] if numbers is not None else [values.index(v) for v in rows["value"]]
            label = style.name(alg)
            if len(settings_) > 1:
                label += f", {style.display.setting(delay, budget, nd, nb)}"
            if others:
                label += f" ({others})"
            mean = rows["mean"].to_numpy(float)
            low, high = rows["ci_low"].to_numpy(float), rows["ci_high"].to_numpy(float)
            err = np.vstack([mean - low, high - mean])
            ax.errorbar(
                x,
                mean,
                yerr=None if np.isnan(err).all() else np.nan_to_num(err),
                color=colours[alg],
                ls=DEFAULT_STYLES[(k + combos.index(others)) % 4],
                marker=markers[k % len(markers)],
                ms=4,
                lw=1.4,
                capsize=2.5,
                label=label,
            )
        if log:
            ax.set_xscale("log")
        if numbers is None:
            ax.set_xticks(range(len(values)), values)
        ax.set_xlabel(parameter, fontsize=style.size)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=style.size - 1)
    t = int(table["t"].max())
    axes[0][0].set_ylabel(f"{style.display.metric(metric)} at T = {t}", fontsize=style.size)
    handles, labels = legend_entries(fig)
    how = [f"bars: {ci_percent(ci_level)} % CI"] if ci_level is not None else []
    note = None
    if style.title is False and ci_level is not None and abs(ci_level - 0.95) > 1e-12:
        note = f"Bars: {ci_percent(ci_level)} % CI."
    _finish(
        fig,
        style,
        style.heading(f"{style.display.experiment(str(table['experiment'].iloc[0]))}: sweep", how),
        handles,
        labels,
        note,
    )
    return fig


def human_tables(table: pd.DataFrame, display: Mapping[str, Any] | None = None, names=None) -> dict[str, pd.DataFrame]:
    """One table per algorithm, parameter and combination of the other swept parameters: rows the values, columns
    the settings (:func:`banditbench.analysis.aggregate.settings`), cells mean ± half-width; titled by the
    algorithm's display name (``names``), the parameter and the combination."""
    shown = Names.of({**(display or {}), "algorithms": dict(names or {})})
    out = {}
    df = table.assign(cell=[_cell(row) for _, row in table.iterrows()], setting=settings(table, display))
    for (alg, parameter, others), rows in df.groupby(["algorithm", "parameter", "others"], sort=False):
        wide = rows.pivot_table(index="value", columns="setting", values="cell", aggfunc="first", sort=False)
        wide = wide.loc[_order(list(rows["value"]))].rename_axis(index=parameter, columns=None)
        out[f"{shown.algorithm(alg)}: {parameter}" + (f" ({others})" if others else "")] = wide
    return out


def _head_body(wide: pd.DataFrame):
    head = [wide.index.name or "", *wide.columns]
    return head, [[idx, *row.values] for idx, row in wide.iterrows()]


def write_sweeps(
    tidy: str | Path | pd.DataFrame,
    sweeps: Mapping[str, Mapping[str, Any]],
    metric: str,
    experiment: str,
    csv: str | Path,
    markdown: str | Path,
    latex_file: str | Path,
    html_file: str | Path,
    plots: Sequence[str | Path] = (),
    ci_level: float = 0.95,
    plot: Mapping[str, Any] | None = None,
    run: str = "",
) -> pd.DataFrame:
    """Write the sweep table (CSV, with labels; Markdown, LaTeX and HTML, with display names) and figure of
    ``experiment`` (``plot``: its resolved ``plot`` block, display names included); return the table."""
    from .plots import _save

    plot = dict(plot or {})
    table = sweep_table(tidy, sweeps, metric)
    names = Names.of(plot.get("display"))
    tables = human_tables(table, plot.get("display"), plot.get("names"))
    n = int(table["n"].max())
    t = int(table["t"].max())
    what = f"{names.metric(metric)} at T = {t} against the swept parameter's value."
    note = spread_note("ci", ci_level, n)
    title = f"{names.experiment(experiment)}: sweep"
    atomic_write_bytes(csv, csv_bytes(table))
    lines = [f"# {title}", "", what, "", note, ""]
    for heading, wide in tables.items():
        head, body = _head_body(wide)
        lines += [f"## {heading}", "", "| " + " | ".join(map(str, head)) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(map(str, row)) + " |" for row in body] + [""]
    atomic_write_bytes(markdown, "\n".join(lines).encode())
    parts = []
    for i, (heading, wide) in enumerate(tables.items()):
        head, body = _head_body(wide)
        key = latex.label(run, experiment, "sweep", *([i + 1] if len(tables) > 1 else []))
        caption = latex.Tex(f"{latex.escape(title)}, {latex.name(heading)}. {latex.escape(what + ' ' + note)}")
        parts.append(latex.table(caption, head, body, "l" + "r" * len(wide.columns), key=key))
    atomic_write_bytes(latex_file, "\n".join(parts).encode())
    page = [f"<h1>{html.escape(title)}</h1>", f"<p>{html.escape(what)}</p>", f"<p>{html.escape(note)}</p>"]
    for heading, wide in tables.items():
        flat = wide.reset_index()
        page += [f"<h2>{html.escape(heading)}</h2>", flat.to_html(index=False, escape=True, border=0, na_rep="")]
    atomic_write_bytes(html_file, html_page(title, "\n".join(page)).encode())
    if plots:
        _save(sweep_figure(table, ci_level, plot), plots)
    return table
