"""Publication plots: cumulative curves with confidence bands.

The bands are the curves table's Student-t intervals, computed by the aggregation at the
experiment's ``ci_level`` (default 95 %; another level is stated in a small note under the figure, or in
its title when it has one).

:func:`plot_curves`: one panel per (budget, delay) — budgets in rows, delays in
columns — and one line per algorithm, coloured consistently across panels; dueling experiments get a
row with the self-duel rate under each budget's panels with ``plot.self_duels``, and ``plot_seeds``
experiments every seed's curve faintly behind the means.
:func:`plot_panels`: chosen algorithms side by side (an experiment's ``panel_plots``,
e.g. each NVLDB variant against its NLDB counterpart, seed 001 Figs. E.5–E.7), one
panel per named group and (budget, delay).  Written as PDF (vector) and PNG.

How a figure looks is the experiment's ``plot`` block (:class:`PlotStyle`: display names, colours and
line styles per algorithm label, log axes, a one- or two-column width, the font size, a title or none);
what it calls things, its ``display`` names (:mod:`banditbench.configuration.display`: panel titles name
the delay and budget settings, the y axis the metric).  The defaults are a paper's: one column wide
(3.5 inches), no title, a sweep's variants in shades of their algorithm's colour.  The layout
cannot clip: the axes are placed by matplotlib's constrained layout, titles and the footnote are
wrapped to the width they have (panel titles between words only, in a smaller font where a word
is wider than its panel), the legend goes under the axes in as many columns as fit (a panel's
own legend under its panel when it would cover much of it), and the figure grows by the legend's and
the footnote's measured height; should any text still reach past the edge, the file is saved with
``bbox_inches="tight"``.  PDFs embed TrueType (Type 42) fonts, which the IEEE and ACM checkers
accept (Type 3 fonts they refuse); files are byte-reproducible (no creation date).
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.transforms import offset_copy  # noqa: E402

from ..configuration.display import Names  # noqa: E402
from ..storage.resultio import atomic_write_bytes  # noqa: E402
from .aggregate import ci_percent, read_tidy  # noqa: E402

#: figure widths in inches of ``plot.width: single`` and ``double``: a column and the text width of the
#: IEEE two-column layout (ACM's are 3.33 and 7.0 inches: give those as numbers); ``auto``: 3.6 inches a panel
WIDTHS = {"single": 3.5, "double": 7.16, "auto": None}
#: the width of a figure whose ``plot`` block gives none: one column
DEFAULT_WIDTH = "single"
#: ``plot.styles`` values and the matplotlib line styles they name
LINE_STYLES = {"solid": "-", "dashed": "--", "dashdot": "-.", "dotted": ":", "-": "-", "--": "--", "-.": "-.", ":": ":"}
#: the default line styles, in order (identical curves, e.g. every delay-aware variant under no delay, stay visible)
DEFAULT_STYLES = ("-", "--", "-.", ":")
#: the rc settings every figure is saved under: TrueType (Type 42) fonts in PDF and PostScript, not Type 3
FONT_RC = {"pdf.fonttype": 42, "ps.fonttype": 42}
#: resolution of the PNG files
DPI = 150
#: white space kept at the figure's edges around the legend and the footnote, in inches
_PAD = 0.06


@dataclass(frozen=True)
class PlotStyle:
    """How a figure looks: an experiment's resolved ``plot`` block (:attr:`banditbench.configuration.grid.Experiment.plot`).

    ``names``, ``colors``, ``styles``: per algorithm label its display name (legends, the paired
    figure's ``A − B``), its colour (any matplotlib colour) and line style; labels not named keep their
    label, the default colours (``tab10``, skipping those configured) and line styles; a variant
    (``variant_of``: label -> its algorithm) not given a colour gets a shade of its algorithm's.  ``xscale`` /
    ``yscale``: ``linear`` or ``log`` (the paired differences, which change sign, get ``symlog`` for a
    log y axis).  ``width``: inches, or ``single`` (the default) / ``double`` (:data:`WIDTHS`); None
    (``auto``) sizes the figure by its panels (3.6 inches each).  ``height``: inches of one row of panels
    (default: from the panels' width).  ``font_size``: points of the axes' text (default 8 with a
    ``width``, else 10; titles one point larger, legends one smaller).  ``title``: False (none), True (the
    figure's own) or a text.  ``self_duels``: whether the curves figure has the self-duel rate row.
    ``display``: what the figure calls experiments, delays, budgets and metrics (:class:`Names`, with
    readable defaults).
    """

    names: Mapping[str, str] = field(default_factory=dict)
    colors: Mapping[str, str] = field(default_factory=dict)
    styles: Mapping[str, str] = field(default_factory=dict)
    xscale: str = "linear"
    yscale: str = "linear"
    width: float | None = WIDTHS[DEFAULT_WIDTH]
    height: float | None = None
    font_size: float | None = None
    title: bool | str = False
    self_duels: bool = False
    variant_of: Mapping[str, str] = field(default_factory=dict)
    display: Names = field(default_factory=lambda: Names(figure=True))

    @classmethod
    def of(cls, plot: "PlotStyle | Mapping[str, Any] | None" = None) -> "PlotStyle":
        """A style from a ``plot`` block (a mapping, as the rules pass it), a style, or None (the defaults)."""
        if isinstance(plot, PlotStyle):
            return plot
        plot = dict(plot or {})
        width = plot.get("width", DEFAULT_WIDTH)
        return cls(
            names=dict(plot.get("names") or {}),
            colors=dict(plot.get("colors") or {}),
            styles={k: LINE_STYLES[v] for k, v in (plot.get("styles") or {}).items()},
            xscale=plot.get("xscale") or "linear",
            yscale=plot.get("yscale") or "linear",
            width=None if WIDTHS.get(width, width) is None else float(WIDTHS.get(width, width)),
            height=None if plot.get("height") is None else float(plot["height"]),
            font_size=None if plot.get("font_size") is None else float(plot["font_size"]),
            title=plot.get("title", False),
            self_duels=bool(plot.get("self_duels", False)),
            variant_of=dict(plot.get("variant_of") or {}),
            display=Names.of(plot.get("display"), figure=True),
        )

    def heading(self, title: str, how: Sequence[str] = ()) -> str | None:
        """The figure's title: None without ``title``; ``title`` (the figure's own: the rules give the experiment's
        display name) with ``how`` (what the bands and lines are) in parentheses; or the configured text."""
        if self.title is False:
            return None
        if isinstance(self.title, str):
            return self.title
        return title + (f"\n({'; '.join(how)})" if how else "")

    def note(self, how: Sequence[str], ci_level: float | None) -> str | None:
        """Without a title, what a reader needs that the caption may not say: a band's confidence level other
        than 95 %, and ``how``'s other entries (faint lines are single seeds); None when nothing."""
        if self.title is not False:
            return None
        lines = [h for h in how if not h.startswith("bands: ")]
        if ci_level is not None and abs(ci_level - 0.95) > 1e-12:
            lines.insert(0, f"bands: {ci_percent(ci_level)} % CI")
        return ("; ".join(lines).capitalize() + ".") if lines else None

    @property
    def size(self) -> float:
        """The axes' font size in points."""
        return self.font_size or (8.0 if self.width else 10.0)

    def name(self, label: str) -> str:
        return self.names.get(label, label)

    def colours(self, labels: Sequence[str]) -> dict[str, Any]:
        """Each label's colour: the configured one, else the next ``tab10`` colour no label is configured with;
        a variant's (:attr:`variant_of`) not configured, a shade of its algorithm's (:func:`shades`), which
        takes no colour of its own."""
        variants = {a: self.variant_of[a] for a in labels if a in self.variant_of and a not in self.colors}
        base = list(dict.fromkeys(variants.get(a, a) for a in labels))
        taken = {to_rgba(c) for c in self.colors.values()}
        free = (c for c in (plt.get_cmap("tab10")(i % 10) for i in range(10 + 10 * len(base))) if c not in taken)
        colours = {label: self.colors[label] if label in self.colors else next(free) for label in base}
        for parent in dict.fromkeys(variants.values()):
            members = [a for a in labels if variants.get(a) == parent]
            colours.update(zip(members, shades(colours[parent], len(members))))
        return {label: colours[label] for label in labels}

    def line_styles(self, labels: Sequence[str]) -> dict[str, str]:
        return {label: self.styles.get(label, DEFAULT_STYLES[i % 4]) for i, label in enumerate(labels)}

    def row_height(self, ncols: int) -> float:
        """Inches of one row of ``ncols`` panels, before their titles wrap or legends go under them."""
        if self.width is None:
            return self.height or 2.9
        return self.height or min(2.9, max(1.5, 0.75 * self.width / ncols + 0.3))

    def figsize(self, ncols: int, rows: float) -> tuple[float, float]:
        """Width and height (before the legend and footnote) of ``ncols`` panels to a row and ``rows``
        rows (a fraction for a short row)."""
        width = 3.6 * ncols + 0.6 if self.width is None else self.width
        return width, self.row_height(ncols) * rows + 0.45

    def scale(self, ax, y: bool = True, signed: bool = False) -> None:
        """Apply the axes' scales; ``signed`` data (differences) get ``symlog`` for a log y axis."""
        ax.set_xscale(self.xscale)
        if y and self.yscale != "linear":
            ax.set_yscale("symlog" if signed else self.yscale)


def shades(colour, n: int) -> list[tuple[float, float, float, float]]:
    """``n`` shades of ``colour`` (same hue): the first half lighter (mixed with white, the lightest first),
    the rest darker (mixed with black), none the colour itself, for a sweep's variants around their
    algorithm in the order the sweep gives them."""
    r, g, b, a = to_rgba(colour)
    light = (n + 1) // 2
    factors = [0.6 - 0.35 * i / max(1, light - 1) for i in range(light)] if n > 1 else [0.45]
    factors += [-0.25 - 0.3 * i / max(1, n - light - 1) for i in range(n - light)]
    out = []
    for f in factors:
        mix = (lambda c: c + f * (1 - c)) if f > 0 else (lambda c: c * (1 + f))
        out.append((mix(r), mix(g), mix(b), a))
    return out


def _label(metric: str) -> str:
    return metric.replace("_", " ")


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


# --- layout ---------------------------------------------------------------------------------------


def _figure(style: PlotStyle, nrows: int, ncols: int, rows: float, **kwargs):
    """A figure of ``nrows`` x ``ncols`` axes under constrained layout, sized by ``style``."""
    return plt.subplots(nrows, ncols, figsize=style.figsize(ncols, rows), squeeze=False, layout="constrained", **kwargs)


#: a line's pieces for wrapping: runs of white space, and words cut after ``_ . / -`` (labels' separators)
_PIECES = re.compile(r"\s+|[^\s_./-]*[_./-]+|[^\s_./-]+")


def _fill(line: str, n: int) -> str:
    """``line`` wrapped to lines of at most ``n`` characters, broken at spaces (dropped) or after the
    separators of labels (``ideal_policy_`` / ``with_a_long_name``); a piece longer than ``n`` is cut."""
    out, current = [], ""
    for piece in _PIECES.findall(line):
        if piece.isspace():
            current += " " if current else ""
            continue
        if current and len(current) + len(piece) > n:
            out.append(current.rstrip())
            current = ""
        while len(piece) > n:
            out.append(piece[:n])
            piece = piece[n:]
        current += piece
    return "\n".join(out + ([current.rstrip()] if current.strip() else []))


def _fill_words(line: str, n: int) -> str:
    """``line`` wrapped to lines of at most ``n`` characters, broken at spaces only (a longer word on a line
    of its own)."""
    out: list[str] = []
    for word in (w for w in line.split(" ") if w):  # not str.split(): a no-break space joins
        if out and len(out[-1]) + 1 + len(word) <= n:
            out[-1] += " " + word
        else:
            out.append(word)
    return "\n".join(out)


def _wrap(text, max_px: float, renderer, along: str = "width", words: bool = False) -> None:
    """Wrap ``text`` (a matplotlib Text; its text as first set, kept as ``_unwrapped``) with :func:`_fill`
    until its extent ``along`` its width (or height, for a rotated label) is at most ``max_px``.  With
    ``words``, only between words (:func:`_fill_words`), and in a smaller font (down to 5 points) while a
    word is still too wide.  Text with mathtext (``$``) is left whole."""
    raw = getattr(text, "_unwrapped", None) or text.get_text()
    text._unwrapped = raw
    text.set_text(raw)
    if "$" in raw or not raw.strip():
        return
    extent = lambda: getattr(text.get_window_extent(renderer), along)  # noqa: E731
    lines = raw.split("\n")
    if words:  # the fewest lines at which every line fits, then a smaller font while a word does not
        for n in range(max(len(line) for line in lines), 0, -1):
            text.set_text("\n".join(_fill_words(line, n) for line in lines))
            if extent() <= max_px:
                break
        while extent() > max_px and text.get_fontsize() > 5:
            text.set_fontsize(text.get_fontsize() - 0.5)
        return
    n = max(len(line) for line in lines)
    while extent() > max_px and n > 6:
        n = max(6, int(n * 0.9))
        text.set_text("\n".join(_fill(line, n) for line in lines))


def _legend_labels(labels: Sequence[str], max_px: float, fontsize: float, renderer, fig) -> list[str]:
    """``labels``, each wrapped to fit ``max_px`` less a legend handle's width."""
    out = []
    for label in labels:
        text = fig.text(0, 0, label, fontsize=fontsize)
        _wrap(text, max_px - 3.5 * fontsize * fig.dpi / 72, renderer)
        out.append(text.get_text())
        text.remove()
    return out


def _fitting_legend(make, n: int, max_px: float, renderer, most: int = 5):
    """The legend ``make(ncol)`` with the most columns (at most ``most``) whose width fits ``max_px``."""
    for ncol in range(min(n, most), 0, -1):
        legend = make(ncol)
        if ncol == 1 or legend.get_window_extent(renderer).width <= max_px:
            return legend
        legend.remove()
    return None


def _legend_below(ax, renderer, width_px: float, size: float) -> float:
    """Move ``ax``'s legend under its tick labels and x label, in as many columns as fit ``width_px``;
    return its height in inches."""
    handles, labels = ax.get_legend_handles_labels()
    ax.get_legend().remove()
    fig = ax.get_figure()
    box, tight = ax.get_window_extent(renderer), ax.get_tightbbox(renderer)
    drop = (box.y0 - tight.y0) * 72 / fig.dpi + 2  # points from the axes' bottom to below its labels
    labels = _legend_labels(labels, width_px, size, renderer, fig)
    anchor = offset_copy(ax.transAxes, fig=fig, y=-drop, units="points")
    legend = _fitting_legend(
        lambda ncol: ax.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, 0),
            bbox_transform=anchor,
            ncol=ncol,
            frameon=False,
            fontsize=size,
        ),
        len(labels),
        width_px,
        renderer,
        most=3,
    )
    return legend.get_window_extent(renderer).height / fig.dpi + 2 / 72


def _fit_panels(fig, style: PlotStyle, renderer, panel_legends: bool) -> float:
    """Wrap each visible axes' title to the width its column leaves it and its y label to its planned
    height; with ``panel_legends``, move a legend that would cover much of its panel under it.  Return
    the inches the rows need on top of their planned height (more title lines, legends under panels)."""
    shown = [ax for ax in fig.axes if ax.get_visible() and ax.get_subplotspec() is not None]
    if not shown:
        return 0.0
    grid = shown[0].get_subplotspec().get_gridspec()
    nrows, ncols = grid.get_geometry()
    ratios = grid.get_height_ratios() or [1.0] * nrows
    inch = fig.dpi
    # a panel's share of the width, less its tick labels and the gap to the next (the first column's y
    # label is counted in the figure's margin)
    column = fig.get_figwidth() / ncols
    title_px = (column - 0.45) * inch
    axes_px = (fig.get_figwidth() - 0.35) / ncols * inch - 0.5 * inch
    extra = [0.0] * nrows
    for ax in shown:
        row = ax.get_subplotspec().rowspan.start
        planned = style.row_height(ncols) * ratios[row] / max(ratios)
        before = ax.title.get_window_extent(renderer).height
        _wrap(ax.title, title_px, renderer, words=True)
        grown = (ax.title.get_window_extent(renderer).height - before) / inch if ax.get_title() else 0.0
        # a y label may run past its axes' height, not into the next row's
        _wrap(ax.yaxis.label, max(0.5, planned - (0.3 if ax.get_title() else 0.0) - 0.2) * inch, renderer, "height")
        under = 0.0
        legend = ax.get_legend()
        if panel_legends and legend is not None:
            box = legend.get_window_extent(renderer)
            if box.width > 0.5 * axes_px or box.height > 0.4 * (planned - 0.7) * inch:
                under = _legend_below(ax, renderer, max(axes_px, title_px), style.size - 2)
        extra[row] = max(extra[row], grown + under)
    return sum(extra)


def _finish(
    fig,
    style: PlotStyle,
    title: str | None,
    handles=(),
    labels=(),
    note: str | None = None,
    panel_legends: bool = False,
) -> None:
    """Lay out a figure without clipping: ``title`` (None: none) wrapped to the width, the panels' titles and y labels
    wrapped to theirs (:func:`_fit_panels`), the legend (``handles``, ``labels``) under the axes in as many
    columns as fit, ``note`` under it in small grey type wrapped to the width; the figure grows by what
    the wrapped text, the legends and the note need, measured, and the constrained layout places the
    axes in what is left when the figure is saved."""
    size = style.size
    renderer = fig.canvas.get_renderer()
    width_px = (fig.get_figwidth() - 2 * _PAD) * fig.dpi
    grow = _fit_panels(fig, style, renderer, panel_legends)
    if title:
        suptitle = fig.suptitle(title, fontsize=size + 1)
        one_line = suptitle.get_window_extent(renderer).height * (1 / max(1, title.count("\n") + 1))
        _wrap(suptitle, width_px, renderer)
        grow += (suptitle.get_window_extent(renderer).height - one_line) / fig.dpi
    else:
        grow -= 0.25  # the room figsize keeps for a title
    legend = None
    if labels:
        labels = _legend_labels(labels, width_px, size - 1, renderer, fig)
        legend = _fitting_legend(
            lambda ncol: fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False, fontsize=size - 1),
            len(labels),
            width_px,
            renderer,
        )
    text = None
    if note:
        text = fig.text(0, 0, note, fontsize=size - 3, ha="left", va="bottom", color="0.3")
        _wrap(text, width_px, renderer)
    legend_in = legend.get_window_extent(renderer).height / fig.dpi if legend else 0.0
    note_in = text.get_window_extent(renderer).height / fig.dpi if text else 0.0
    foot = (legend_in + _PAD if legend else 0.0) + (note_in + _PAD if text else 0.0)
    height = math.ceil((fig.get_figheight() + grow + foot + (_PAD if foot else 0.0)) * DPI) / DPI
    fig.set_figheight(height)
    if text:
        text.set_position((_PAD / fig.get_figwidth(), _PAD / height))
    if legend:
        legend.set_bbox_to_anchor((0.5, (_PAD + (note_in + _PAD if text else 0.0)) / height), fig.transFigure)
    if foot:
        fig.get_layout_engine().set(rect=(0, (foot + _PAD) / height, 1, 1 - (foot + _PAD) / height))


def legend_entries(fig) -> tuple[list, list[str]]:
    """The handles and labels of every visible axes' lines, each label once, in the order drawn."""
    entries: dict[str, Any] = {}
    for ax in fig.axes:
        if ax.get_visible():
            for handle, label in zip(*ax.get_legend_handles_labels()):
                entries.setdefault(label, handle)
    return list(entries.values()), list(entries)


def overflow(fig) -> bool:
    """Whether anything drawn reaches past the figure's edges (then :func:`_save` saves the tight box)."""
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    eps = 1.0 / fig.dpi
    return box.x0 < -eps or box.y0 < -eps or box.x1 > fig.get_figwidth() + eps or box.y1 > fig.get_figheight() + eps


def _save(fig, outputs: Sequence[str | Path]) -> None:
    """Write ``fig`` to each of ``outputs`` (the suffix names the format) atomically and close it: PDFs
    with TrueType fonts (:data:`FONT_RC`) and no creation date, so that the bytes are reproducible;
    the figure's own size unless some text reaches past its edges, then the tight box around everything."""
    with plt.rc_context(FONT_RC):
        fig.draw_without_rendering()
        tight = {"bbox_inches": "tight", "pad_inches": _PAD} if overflow(fig) else {}
        if fig.get_layout_engine() is not None:
            fig.set_layout_engine("none")  # laid out: every file gets this layout, computed once
        # the layout's last bits vary with what was measured before (the text metrics' caches): placed on a
        # grid of a millionth of the figure, the axes put every text at the same place every time
        for ax in fig.axes:
            ax.set_position([round(v, 6) for v in ax.get_position().bounds])
        for out in outputs:
            buf = io.BytesIO()
            fmt = Path(out).suffix.lstrip(".")
            fig.savefig(buf, format=fmt, dpi=DPI, metadata={"CreationDate": None} if fmt == "pdf" else None, **tight)
            atomic_write_bytes(out, buf.getvalue())
    plt.close(fig)


# --- the figures ---------------------------------------------------------------------------------

#: the running rate drawn under the main metric's panels when the curves hold it (dueling experiments:
#: the share of self-duels, banditbench.envs.preference)
RATE_CURVE = "per_round_self_duel"


def _draw_seeds(ax, seeds: pd.DataFrame, colour) -> None:
    """One faint line per seed (a per-seed table's rows of one algorithm, metric and setting)."""
    for _, run in seeds.groupby("seed", observed=True, sort=False):
        run = run.sort_values("t")
        ax.plot(run["t"], run["value"], color=colour, lw=0.5, alpha=0.25, zorder=1)


def _setting(delay, budget, style: PlotStyle | None = None, delays: int = 2, budgets: int = 2) -> str:
    """A panel's title: its delay's and budget's display names (:meth:`Names.setting`; ``delays`` and
    ``budgets``: how many the figure has, only the one that varies is named)."""
    return (style or PlotStyle()).display.setting(delay, budget, delays, budgets)


def plot_curves(
    curves: str | Path | pd.DataFrame,
    metric: str,
    title: str,
    outputs: Sequence[str | Path],
    ci_level: float | None = None,
    seeds: pd.DataFrame | None = None,
    style: PlotStyle | Mapping[str, Any] | None = None,
) -> None:
    """Write :func:`curves_figure` to ``outputs``."""
    _save(curves_figure(curves, metric, title, ci_level, seeds, style), outputs)


def curves_figure(
    curves: str | Path | pd.DataFrame,
    metric: str,
    title: str,
    ci_level: float | None = None,
    seeds: pd.DataFrame | None = None,
    style: PlotStyle | Mapping[str, Any] | None = None,
):
    """One panel per (budget, delay), one mean curve with its band per algorithm; under each budget's
    panels a row with the self-duel rate (:data:`RATE_CURVE`) where the curves hold it and ``style.self_duels``
    asks for it; with ``seeds``
    (the experiment's per-seed table, :mod:`banditbench.analysis.seedtable`) every seed's curve faintly
    behind its algorithm's mean.  ``style``: the experiment's ``plot`` block (:class:`PlotStyle`)."""
    style = PlotStyle.of(style)
    all_curves = read_tidy(curves, "curves table") if not isinstance(curves, pd.DataFrame) else curves
    df = _metric_curves(all_curves, metric, curves)
    rate = all_curves[all_curves["metric"] == RATE_CURVE].assign(budget=lambda d: d["budget"].astype(str))
    if not style.self_duels:
        rate = rate.iloc[:0]
    delays = list(dict.fromkeys(df["delay"]))
    budgets = list(dict.fromkeys(df["budget"]))
    algorithms = list(dict.fromkeys(df["algorithm"]))
    colours, styles = style.colours(algorithms), style.line_styles(algorithms)
    rows = [(budget, name) for budget in budgets for name in ([metric, RATE_CURVE] if len(rate) else [metric])]
    heights = [1.0 if name == metric else 0.45 for _, name in rows]
    fig, axes = _figure(
        style, len(rows), len(delays), sum(heights), sharex=True, gridspec_kw={"height_ratios": heights}
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
                _draw(ax, d, colours[alg], styles[alg], style.name(alg))
            style.scale(ax, y=name == metric)
            if name == metric:
                ax.set_title(_setting(delay, budget, style, len(delays), len(budgets)), fontsize=style.size)
            else:
                ax.set_ylim(-0.03, 1.03)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=style.size - 1)
            if r == len(rows) - 1:
                ax.set_xlabel("round t", fontsize=style.size)
            if c == 0:
                ax.set_ylabel(style.display.metric(metric) if name == metric else "self-duel rate", fontsize=style.size)
    handles, labels = legend_entries(fig)
    how = [f"bands: {ci_percent(ci_level)} % CI"] if ci_level is not None else []
    how += ["faint lines: single seeds"] if seeds is not None else []
    note = "\n".join(n for n in (style.note(how, ci_level), below_zero_note(df)) if n) or None
    _finish(fig, style, style.heading(title, how), handles, labels, note)
    return fig


def plot_panels(
    curves: str | Path | pd.DataFrame,
    metric: str,
    panels: Mapping[str, Sequence[str]],
    title: str,
    outputs: Sequence[str | Path],
    ci_level: float | None = None,
    style: PlotStyle | Mapping[str, Any] | None = None,
) -> None:
    """Write :func:`panel_figure` to ``outputs``."""
    _save(panel_figure(curves, metric, panels, title, ci_level=ci_level, style=style), outputs)


def panel_figure(
    curves: str | Path | pd.DataFrame,
    metric: str,
    panels: Mapping[str, Sequence[str]],
    title: str,
    columns: int = 3,
    ci_level: float | None = None,
    style: PlotStyle | Mapping[str, Any] | None = None,
):
    """One panel per entry of ``panels`` (title -> algorithm labels) and (budget, delay), at most
    ``columns`` to a row (fewer in a figure of a ``style.width`` that leaves a panel under 1.6 inches; unused
    axes hidden); the i-th label of every panel has the i-th colour (unless
    ``style`` gives the label one).  Each panel's legend lies inside it when small, else under it."""
    style = PlotStyle.of(style)
    df = _metric_curves(curves, metric)
    missing = sorted({a for labels in panels.values() for a in labels} - set(df["algorithm"]))
    if missing:
        raise ValueError(f"no {metric!r} curve for algorithm(s) {missing} in {curves}")
    settings = list(dict.fromkeys(zip(df["budget"], df["delay"])))
    cells = [(name, labels, budget, delay) for budget, delay in settings for name, labels in panels.items()]
    # a figure of a given width: panels at least 1.6 inches wide
    ncols = min(columns, len(cells), max(1, int(style.width // 1.6)) if style.width else columns)
    nrows = -(-len(cells) // ncols)
    fig, axes = _figure(style, nrows, ncols, nrows, sharex=True)
    for k, (name, labels, budget, delay) in enumerate(cells):
        ax = axes[k // ncols][k % ncols]
        cell = df[(df["delay"] == delay) & (df["budget"] == budget)]
        colours, styles = style.colours(labels), style.line_styles(labels)
        for alg in labels:
            _draw(ax, cell[cell["algorithm"] == alg], colours[alg], styles[alg], style.name(alg))
        heading = name + (
            ""
            if len(settings) == 1
            else f" ({_setting(delay, budget, style, len({d for _, d in settings}), len({b for b, _ in settings}))})"
        )
        style.scale(ax)
        ax.set_title(heading, fontsize=style.size)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=style.size - 1)
        ax.legend(fontsize=style.size - 2, frameon=False)
        if k + ncols >= len(cells):
            ax.set_xlabel("round t", fontsize=style.size)
            ax.xaxis.set_tick_params(labelbottom=True)  # above an empty slot: sharex hid them
        if k % ncols == 0:
            ax.set_ylabel(style.display.metric(metric), fontsize=style.size)
    for k in range(len(cells), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    shown = df[df["algorithm"].isin({a for labels in panels.values() for a in labels})]
    how = [f"bands: {ci_percent(ci_level)} % CI"] if ci_level is not None else []
    note = "\n".join(n for n in (style.note(how, ci_level), below_zero_note(shown)) if n) or None
    _finish(fig, style, style.heading(title, how), note=note, panel_legends=True)
    return fig
