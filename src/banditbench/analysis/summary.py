"""Summary tables across experiments (config ``summary_tables``), e.g. seed 002's Table 2.

A summary table has one row per configured experiment (with a group and a label, e.g.
the swept parameter and its value), one column per algorithm, and in each cell the
table's metric at that experiment's final horizon, ``mean ± half-width`` of the
experiments' Student-t intervals (their common ``ci_level``), read from the
experiments' tidy tables (``results/<run>/tables/<experiment>.csv``).  The ``bold`` best
cells of each row (by mean; ties with the last of them included) are set in bold, as
the paper's tables do.  Written as CSV (one line per cell, with a ``bold`` column),
Markdown, LaTeX (labelled ``tab:<run>-summary-<name>``) and an HTML page for the report, the algorithms and the
metric by their display names (the first row's experiment's ``display``; the CSV keeps the labels); negative
numbers with a true minus (:func:`banditbench.analysis.aggregate.number`).
"""

from __future__ import annotations

import html
import io
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..configuration.display import Names
from ..storage.resultio import atomic_write_bytes
from . import latex
from .aggregate import ci_percent, number, read_tidy
from .pages import html_page


def summary_cells(table: Mapping[str, Any], tidy_files: Mapping[str, str | Path]) -> pd.DataFrame:
    """One line per (row, algorithm): ``row, group, label, experiment, algorithm, mean, ci_low, ci_high,
    n, diverged, t, bold`` for ``table`` (:meth:`banditbench.configuration.grid.SummaryTable.as_params`), reading each
    experiment's tidy table from ``tidy_files[experiment]``."""
    where = f"summary_tables.{table['name']}"
    tidy = {name: read_tidy(tidy_files[name]) for name in dict.fromkeys(r["experiment"] for r in table["rows"])}
    lines = []
    for i, row in enumerate(table["rows"]):
        df = tidy[row["experiment"]]
        df = df[(df["delay"] == row["delay"]) & (df["budget"] == row["budget"])]
        final = df[df["t"] == df["t"].max()]
        cells = final[final["metric"] == table["metric"]].set_index("algorithm")
        if cells.empty:
            raise ValueError(
                f"{where}.metric: {table['metric']!r} is not in the table of experiment "
                f"{row['experiment']!r} ({tidy_files[row['experiment']]}); it has "
                f"{sorted(set(final['metric']))}"
            )
        missing = [a for a in table["algorithms"] if a not in cells.index]
        if missing:
            raise ValueError(
                f"{where}.rows.{i}: the table of experiment {row['experiment']!r} "
                f"({tidy_files[row['experiment']]}) has no row for {missing}; re-run its aggregation"
            )
        means = cells.loc[list(table["algorithms"]), "mean"].to_numpy(dtype=float)
        bold = _best(means, table["better"], table["bold"])
        for alg, is_bold in zip(table["algorithms"], bold):
            c = cells.loc[alg]
            lines.append(
                {
                    "row": i,
                    "group": row["group"],
                    "label": row["label"],
                    "experiment": row["experiment"],
                    "algorithm": alg,
                    "mean": c["mean"],
                    "ci_low": c["ci_low"],
                    "ci_high": c["ci_high"],
                    "n": int(c["n"]),
                    "diverged": int(c.get("diverged", 0) or 0),
                    "t": int(c["t"]),
                    "bold": bool(is_bold),
                }
            )
    return pd.DataFrame(lines)


def _best(means: np.ndarray, better: str, count: int) -> np.ndarray:
    """Which of ``means`` are among the ``count`` best (``better``: higher or lower); ties included."""
    if count == 0:
        return np.zeros(len(means), dtype=bool)
    signed = means if better == "higher" else -means
    signed = np.where(np.isnan(signed), -np.inf, signed)  # a cell whose every seed diverged is never best
    threshold = np.sort(signed)[::-1][min(count, len(signed)) - 1]
    return signed >= threshold


def _text(line: Mapping[str, Any], decimals: int) -> str:
    diverged = int(line.get("diverged", 0) or 0)
    if diverged:  # seeds left out of the mean (banditbench.analysis.aggregate)
        if int(line["n"]) == 0:
            return f"diverged ({diverged} of {diverged} seeds)"
        return _text({**line, "diverged": 0}, decimals) + f" ({diverged} of {int(line['n']) + diverged} seeds diverged)"
    mean, high = line["mean"], line["ci_high"]
    if np.isnan(high):
        return number(mean, decimals)
    return f"{number(mean, decimals)} ± {number(high - mean, decimals)}"


def _grid(cells: pd.DataFrame, table: Mapping[str, Any]) -> tuple[list[str], list[list[tuple[str, bool]]]]:
    """Header and body of the table: ``(text, bold)`` per cell; a group is written on its first row only."""
    has_group = any(r["group"] for r in table["rows"])
    names = Names.of(table.get("display"))
    head = (["parameter", "value"] if has_group else ["experiment"]) + [names.algorithm(a) for a in table["algorithms"]]
    body, previous = [], None
    for _, row in cells.groupby("row", sort=False):
        first = row.iloc[0]
        if has_group:
            lead = [first["group"] if first["group"] != previous else "", first["label"]]
            previous = first["group"]
        else:
            lead = [first["label"]]
        body.append(
            [(str(x), False) for x in lead]
            + [(_text(line, table["decimals"]), bool(line["bold"])) for _, line in row.iterrows()]
        )
    return head, body


def _caption(table: Mapping[str, Any], t_values: list[int]) -> str:
    horizon = f"T = {t_values[0]}" if len(set(t_values)) == 1 else "each experiment's final horizon"
    text = (
        f"{Names.of(table.get('display')).metric(table['metric'])} at {horizon}: mean ± {ci_percent(table['ci_level'])} % CI half-width across seeds; "
        f"in bold the best {table['bold']} of each row ({table['better']} is better)."
    )
    return f"{table['description']} {text}".strip()


def to_markdown(cells: pd.DataFrame, table: Mapping[str, Any]) -> str:
    head, body = _grid(cells, table)
    lines = [
        f"# {table['name']}",
        "",
        _caption(table, list(cells["t"])),
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    lines += ["| " + " | ".join(f"**{s}**" if b else s for s, b in row) + " |" for row in body]
    return "\n".join(lines) + "\n"


def to_latex(cells: pd.DataFrame, table: Mapping[str, Any], run: str = "") -> str:
    """The table as a ``table`` float (:func:`banditbench.analysis.latex.table`) labelled
    ``tab:<run>-summary-<name>``, its best cells in bold; everything escaped."""
    head, body = _grid(cells, table)
    n_lead = len(head) - len(table["algorithms"])
    head = head[:n_lead] + [latex.name(h) for h in head[n_lead:]]  # display names' mathtext as math
    rows = [[latex.Tex(rf"\textbf{{{latex.escape(s)}}}") if b else s for s, b in row] for row in body]
    align = "l" * n_lead + "r" * len(table["algorithms"])
    key = latex.label(run, "summary", table["name"])
    return latex.table(_caption(table, list(cells["t"])), head, rows, align, key=key)


def to_html(cells: pd.DataFrame, table: Mapping[str, Any]) -> str:
    head, body = _grid(cells, table)
    rows = ["<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    rows += [
        "<tr>"
        + "".join(f"<td><b>{html.escape(s)}</b></td>" if b else f"<td>{html.escape(s)}</td>" for s, b in row)
        + "</tr>"
        for row in body
    ]
    page = [
        f"<h1>{html.escape(table['name'])}</h1>",
        f"<p>{html.escape(_caption(table, list(cells['t'])))}</p>",
        "<table>",
        *rows,
        "</table>",
    ]
    return html_page(table["name"], "\n".join(page))


def write_summary_table(
    table: Mapping[str, Any],
    tidy_files: Mapping[str, str | Path],
    csv: str | Path,
    markdown: str | Path,
    latex: str | Path,
    html_file: str | Path,
    run: str = "",
) -> pd.DataFrame:
    """Build ``table`` from the experiments' tidy tables and write its four files atomically (``run``: for
    the LaTeX label)."""
    cells = summary_cells(table, tidy_files)
    buf = io.StringIO()
    cells.to_csv(buf, index=False, float_format="%.10g")
    atomic_write_bytes(csv, buf.getvalue().encode())
    atomic_write_bytes(markdown, to_markdown(cells, table).encode())
    atomic_write_bytes(latex, to_latex(cells, table, run).encode())
    atomic_write_bytes(html_file, to_html(cells, table).encode())
    return cells
