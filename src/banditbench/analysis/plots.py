"""Publication plots: cumulative curves with confidence bands.

The bands are the curves table's Student-t intervals, computed by the aggregation at the
experiment's ``ci_level`` (default 95 %, stated in the figure title when given).

One panel per (budget, delay) — budgets in rows, delays in columns — and one
line per algorithm, coloured consistently across panels.  Written as PDF
(vector) and PNG.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ..resultio import atomic_write_bytes  # noqa: E402
from .aggregate import ci_percent, read_tidy  # noqa: E402


def _label(metric: str) -> str:
    return metric.replace("_", " ")


def plot_curves(curves: str | Path | pd.DataFrame, metric: str, title: str, outputs: Sequence[str | Path],
                ci_level: float | None = None) -> None:
    df = read_tidy(curves, "curves table") if not isinstance(curves, pd.DataFrame) else curves
    df = df[df["metric"] == metric]
    if df.empty:
        raise ValueError(f"no curve for metric {metric!r} in {curves}")
    df = df.assign(budget=df["budget"].astype(str))
    delays = list(dict.fromkeys(df["delay"]))
    budgets = list(dict.fromkeys(df["budget"]))
    algorithms = list(dict.fromkeys(df["algorithm"]))
    colours = {a: plt.get_cmap("tab10")(i % 10) for i, a in enumerate(algorithms)}
    # identical curves (e.g. every delay-aware variant under no delay) stay visible
    styles = {a: ("-", "--", "-.", ":")[i % 4] for i, a in enumerate(algorithms)}
    fig, axes = plt.subplots(len(budgets), len(delays), figsize=(3.6 * len(delays) + 0.6, 2.9 * len(budgets) + 0.6),
                             squeeze=False, sharex=True)
    for r, budget in enumerate(budgets):
        for c, delay in enumerate(delays):
            ax = axes[r][c]
            cell = df[(df["delay"] == delay) & (df["budget"] == budget)]
            for alg in algorithms:
                d = cell[cell["algorithm"] == alg].sort_values("t")
                if d.empty:
                    continue
                ax.plot(d["t"], d["mean"], color=colours[alg], ls=styles[alg], lw=1.6, label=alg)
                ax.fill_between(d["t"], d["ci_low"], d["ci_high"], color=colours[alg], alpha=0.2, lw=0)
            heading = f"delay: {delay}" + (f", budget: {budget}" if budget != "none" else "")
            ax.set_title(heading, fontsize=10)
            ax.grid(alpha=0.3)
            if r == len(budgets) - 1:
                ax.set_xlabel("round t")
            if c == 0:
                ax.set_ylabel(_label(metric))
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 5), frameon=False, fontsize=9)
    fig.suptitle(title if ci_level is None else f"{title} (bands: {ci_percent(ci_level)} % CI)", fontsize=11)
    fig.tight_layout(rect=(0, 0.08 if len(budgets) == 1 else 0.05, 1, 1))
    for out in outputs:
        buf = io.BytesIO()
        fmt = Path(out).suffix.lstrip(".")
        fig.savefig(buf, format=fmt, dpi=150, metadata={"CreationDate": None} if fmt == "pdf" else None)
        atomic_write_bytes(out, buf.getvalue())
    plt.close(fig)
