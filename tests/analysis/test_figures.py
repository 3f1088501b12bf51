"""Figures a researcher can put in a paper (issue 35): every figure kind — the curves (several delays and
budgets, the self-duel row, many long labels, the footnote), the panel plots and the paired differences
(a long title, long labels such as ``alg1 − ideal_policy_with_a_long_name``) — at the default size, one
column and two columns, is saved with every text inside the image and clear of the plotting areas, with
TrueType fonts in the PDF (no Type 3: IEEE's and ACM's checkers refuse them), the same bytes every time,
and the ``plot`` block's display names, colours, line styles and log axes."""

from __future__ import annotations

import re
import struct

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba

from banditbench.analysis import paired, plots
from banditbench.analysis.plots import DPI, PlotStyle, curves_figure, panel_figure

LONG = [
    "ideal_policy_with_a_long_name",
    "NVLDB-UCB-ASYM-with-algorithm-1s-variance-estimate",
    "cd_exp3_reconstructed_from_the_papers_appendix",
    "ldb_df",
    "ldb_zero_extra.lam-2.beta-0.5",
    "random_pair_baseline_drawn_uniformly_at_random",
    "x" * 60,
]
DELAYS = ["none", "geometric_mean20_M50_with_a_window", "uniform_1_100"]
BUDGETS = ["300", "900"]
TITLE = (
    "knapsack_synthetic_with_a_long_experiment_name: paired differences A − B of the cumulative reward "
    "between every algorithm and the reference, at every budget"
)
STYLES = {
    "default": None,
    "single": {"width": "single", "title": True, "self_duels": True},
    "double": {"width": "double", "xscale": "log", "yscale": "log", "title": True, "self_duels": True},
    "auto": {"width": "auto", "title": True, "self_duels": True},
}
T = np.unique(np.geomspace(1, 2000, 60).astype(int))


def _curves(labels=LONG, delays=DELAYS, budgets=BUDGETS, rate=True) -> pd.DataFrame:
    """A curves table: every (algorithm, delay, budget), ``cumulative_regret`` whose band reaches below 0
    early (the footnote) and, with ``rate``, the self-duel rate (the row under each budget's panels)."""
    rows = []
    for i, alg in enumerate(labels):
        for delay in delays:
            for budget in budgets:
                mean = (1 + i) * np.sqrt(T) + 1
                for metric, m, half in (("cumulative_regret", mean, 0.2 * mean + 3), ("per_round_self_duel", 0.5, 0.1)):
                    if metric == "per_round_self_duel" and not rate:
                        continue
                    rows.append(
                        pd.DataFrame(
                            {"experiment": "e", "algorithm": alg, "delay": delay, "budget": budget, "t": T}
                            | {"metric": metric, "mean": m, "ci_low": m - half, "ci_high": m + half, "n": 5}
                            | {"sd": 1.0, "min": 0.0, "max": 2 * m, "median": m, "q1": m, "q3": m}
                        )
                    )
    return pd.concat(rows, ignore_index=True)


def _differences(reference="alg1", others=LONG[:4], budgets=BUDGETS) -> pd.DataFrame:
    rows = []
    for i, b in enumerate(others):
        for delay in DELAYS[:2]:
            for budget in budgets:
                mean = (i - 1.5) * np.sqrt(T)
                rows.append(
                    pd.DataFrame(
                        {"experiment": "e", "a": reference, "b": b, "delay": delay, "budget": budget, "t": T}
                        | {"metric": "cumulative_reward", "better": "higher", "mean": mean}
                        | {"ci_low": mean - 5, "ci_high": mean + 5, "sd": 3.0, "n": 200, "a_better": 0.5}
                        | {"tied": 0.0, "interval": "t", "level": 0.95}
                    )
                )
    return pd.concat(rows, ignore_index=True)


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def _texts(fig):
    """Every text the figure shows: titles, axis labels, tick labels, legends, the footnote."""
    out = [t for t in [fig._suptitle, *fig.texts] if t is not None]
    for legend in fig.legends:
        out += legend.get_texts()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        out += [ax.title, ax.xaxis.label, ax.yaxis.label]
        for axis in (ax.xaxis, ax.yaxis):  # the ticks drawn: those within the view limits
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if low - 1e-9 * abs(high - low) <= tick.get_loc() <= high + 1e-9 * abs(high - low):
                    out += [tick.label1, tick.label2]
        if ax.get_legend() is not None:
            out += ax.get_legend().get_texts()
    return [t for t in out if t.get_visible() and t.get_text().strip()]


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 - 1 and b.x0 < a.x1 - 1 and a.y0 < b.y1 - 1 and b.y0 < a.y1 - 1


def _check_saved(fig, tmp_path, name):
    """Save ``fig`` as PNG and PDF and check what a paper needs of them; return the PDF's bytes."""
    png, pdf = tmp_path / f"{name}.png", tmp_path / f"{name}.pdf"
    width, height = fig.get_figwidth(), fig.get_figheight()
    plots._save(fig, [png, pdf])
    renderer = FigureCanvasAgg(fig).get_renderer()  # closing the figure took its canvas; the layout stays
    fig.draw_without_rendering()  # the labels' positions as drawn at the figure's own dpi
    # the image is the figure: nothing reached past its edges, so the save kept its size
    saved = _png_size(png)
    assert abs(saved[0] - width * DPI) <= 1 and abs(saved[1] - height * DPI) <= 1, (saved, width, height)
    box = fig.bbox  # pixels, at the figure's own dpi
    texts = _texts(fig)
    assert len(texts) > 10
    for text in texts:
        extent = text.get_window_extent(renderer)
        inside = (
            box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1 and box.y0 - 1 <= extent.y0 and extent.y1 <= box.y1 + 1
        )
        assert inside, f"{name}: {text.get_text()!r} at {extent} lies outside the figure {box}"
    tight = fig.get_tightbbox(renderer)
    assert tight.x0 >= -0.01 and tight.y0 >= -0.01 and tight.x1 <= width + 0.01 and tight.y1 <= height + 0.01
    # the legend, the footnote and the title keep off the plotting areas and off each other
    areas = [ax.get_window_extent(renderer) for ax in fig.axes if ax.get_visible()]
    outside = [leg.get_window_extent(renderer) for leg in fig.legends]
    outside += [t.get_window_extent(renderer) for t in {fig._suptitle, *fig.texts} if t is not None]
    for extent in outside:
        assert not any(_overlap(extent, area) for area in areas), f"{name}: {extent} covers a plotting area"
    for i, a in enumerate(outside):
        assert not any(_overlap(a, b) for b in outside[i + 1 :]), f"{name}: {a} overlaps another text"
    # each axes' title keeps to its own column, each y label to its own row
    for part in ("title", "yaxis.label"):
        extents = [
            ax.title.get_window_extent(renderer) if part == "title" else ax.yaxis.label.get_window_extent(renderer)
            for ax in fig.axes
            if ax.get_visible() and (ax.get_title() if part == "title" else ax.get_ylabel())
        ]
        for i, a in enumerate(extents):
            assert not any(_overlap(a, b) for b in extents[i + 1 :]), f"{name}: two panels' {part}s overlap"
    data = pdf.read_bytes()
    assert b"/Subtype /Type3" not in data and b"/Type3" not in data, f"{name}: the PDF embeds a Type 3 font"
    assert re.search(rb"/Subtype /(TrueType|CIDFontType2)", data), f"{name}: no TrueType font in the PDF"
    return png.read_bytes(), data


@pytest.mark.parametrize("size", list(STYLES))
def test_curves_fit_their_image_with_many_long_labels_delays_and_budgets(tmp_path, size):
    fig = curves_figure(_curves(), "cumulative_regret", TITLE, ci_level=0.95, style=STYLES[size])
    assert any("Bands reaching below 0" in t.get_text().replace("\n", " ") for t in fig.texts)  # the footnote
    rows = 2 if size != "default" else 1  # the self-duel row under each budget's panels, when asked for
    assert len(fig.axes) == rows * len(BUDGETS) * len(DELAYS)
    assert (fig._suptitle is None) == (size == "default")  # no title unless asked
    _check_saved(fig, tmp_path, f"curves_{size}")
    legend = fig.legends[0]
    assert [re.sub(r"\s+", "", t.get_text()) for t in legend.get_texts()] == LONG  # whole, wrapped at most
    assert fig.axes[0].get_xscale() == ("log" if size == "double" else "linear")


@pytest.mark.parametrize("size", list(STYLES))
def test_panels_fit_their_image_with_long_titles_and_labels(tmp_path, size):
    curves = _curves(rate=False, budgets=["none"])
    panels = {
        "each variance-aware variant against its variance-unaware counterpart": LONG[:3],
        "short": LONG[3:5],
        "the baselines": LONG[5:],
        "one more group of algorithms drawn side by side": LONG[1:4],
    }
    fig = panel_figure(curves, "cumulative_regret", panels, TITLE, ci_level=0.95, style=STYLES[size])
    assert sum(ax.get_visible() for ax in fig.axes) == len(panels) * len(DELAYS)
    _check_saved(fig, tmp_path, f"panels_{size}")
    # every visible panel's legend names its algorithms; long ones lie under the panel, not on it
    for ax in fig.axes:
        if ax.get_visible():
            legend = ax.get_legend()
            assert legend is not None
            assert legend.get_window_extent().y1 <= ax.get_window_extent().y0 or len(legend.get_texts()) <= 2


@pytest.mark.parametrize("size", list(STYLES))
def test_paired_differences_fit_their_image_and_name_the_pairs_by_display_name(tmp_path, size):
    style = dict(STYLES[size] or {}) | {"names": {"alg1": "Algorithm 1 (ours)", "ldb_df": "LDB-DF"}}
    fig = paired.differences_figure(_differences(), TITLE, style)
    _check_saved(fig, tmp_path, f"paired_{size}")
    labels = [re.sub(r"\s+", " ", t.get_text()) for t in fig.legends[0].get_texts()]
    # wrapped labels join with a space where they were cut; compare without white space
    expected = [f"Algorithm 1 (ours) − {name}" for name in ["ideal_policy_with_a_long_name", *LONG[1:3], "LDB-DF"]]
    assert [s.replace(" ", "") for s in labels] == [s.replace(" ", "") for s in expected]
    assert "alg1 − ideal_policy_with_a_long_name" not in labels
    if size == "double":  # differences change sign: a symmetric log axis
        assert fig.axes[0].get_yscale() == "symlog" and fig.axes[0].get_xscale() == "log"


def test_a_figure_is_the_same_bytes_every_time(tmp_path):
    first = _check_saved(curves_figure(_curves(), "cumulative_regret", TITLE, 0.95), tmp_path, "a")
    second = _check_saved(curves_figure(_curves(), "cumulative_regret", TITLE, 0.95), tmp_path, "b")
    assert first == second
    third = _check_saved(paired.differences_figure(_differences(), TITLE, {"width": 3.33}), tmp_path, "c")
    assert third == _check_saved(paired.differences_figure(_differences(), TITLE, {"width": 3.33}), tmp_path, "d")


def test_widths_fonts_and_the_rc_settings_stay_local(tmp_path):
    import matplotlib

    before = {k: matplotlib.rcParams[k] for k in plots.FONT_RC}
    for width, inches in (("single", 3.5), ("double", 7.16), (3.33, 3.33)):
        fig = curves_figure(_curves(LONG[:2], DELAYS[:2], ["none"]), "cumulative_regret", "e", style={"width": width})
        assert fig.get_figwidth() == pytest.approx(inches)
        assert fig.axes[0].title.get_fontsize() == 8
        plots._save(fig, [tmp_path / "w.pdf"])
    assert {k: matplotlib.rcParams[k] for k in plots.FONT_RC} == before  # set for the save only
    fig = curves_figure(_curves(LONG[:2], DELAYS[:2], ["none"]), "cumulative_regret", "e", style={"font_size": 6})
    assert fig.axes[0].title.get_fontsize() == 6 and fig.get_figwidth() == pytest.approx(3.5)  # one column
    fig = curves_figure(_curves(LONG[:2], DELAYS[:2], ["none"]), "cumulative_regret", "e", style={"width": "auto"})
    assert fig.axes[0].title.get_fontsize() == 10 and fig.get_figwidth() == pytest.approx(3.6 * 2 + 0.6)


def test_names_colours_styles_and_scales_of_the_plot_block(tmp_path):
    labels = ["ldb_df", "ldb_ignore", "random"]
    style = {
        "names": {"ldb_df": "LDB-DF", "random": "uniform pairs"},
        "colors": {"random": "black", "ldb_df": "tab:blue"},
        "styles": {"random": "dotted"},
        "xscale": "log",
        "yscale": "log",
    }
    fig = curves_figure(_curves(labels, ["none"], ["none"], rate=False), "cumulative_regret", "e", style=style)
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines) == ["LDB-DF", "ldb_ignore", "uniform pairs"]
    assert to_rgba(lines["uniform pairs"].get_color()) == to_rgba("black")
    assert to_rgba(lines["LDB-DF"].get_color()) == to_rgba("tab:blue")
    # the unconfigured label takes the first tab10 colour no label is configured with (tab:blue is taken)
    assert to_rgba(lines["ldb_ignore"].get_color()) == to_rgba("tab:orange")
    assert lines["uniform pairs"].get_linestyle() == ":" and lines["LDB-DF"].get_linestyle() == "-"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["LDB-DF", "ldb_ignore", "uniform pairs"]
    # panels: the configured colour wins over the i-th colour; paired: the other algorithm's colour and style
    panel = panel_figure(
        _curves(labels, ["none"], ["none"], rate=False), "cumulative_regret", {"p": ["random", "ldb_ignore"]}, "e",
        style=style,
    )  # fmt: skip
    first = [ax for ax in panel.axes if ax.get_visible()][0].get_lines()[0]
    assert first.get_label() == "uniform pairs" and to_rgba(first.get_color()) == to_rgba("black")
    diff = paired.differences_figure(_differences("ldb_df", ["ldb_ignore", "random"], ["none"]), "e", style)
    pair_lines = {line.get_label(): line for line in diff.axes[0].get_lines() if line.get_label()[0] != "_"}
    assert to_rgba(pair_lines["LDB-DF − uniform pairs"].get_color()) == to_rgba("black")
    assert pair_lines["LDB-DF − uniform pairs"].get_linestyle() == ":"
    assert PlotStyle.of(style).name("nope") == "nope"


def test_text_past_the_edge_is_saved_in_the_tight_box(tmp_path):
    """The safety net: should any text still reach past an edge, the file holds all of it."""
    fig = curves_figure(_curves(LONG[:2], ["none"], ["none"], rate=False), "cumulative_regret", "e")
    fig.text(1.02, 0.5, "a note placed past the right edge")
    assert plots.overflow(fig)
    png = tmp_path / "o.png"
    width = fig.get_figwidth()
    plots._save(fig, [png])
    assert _png_size(png)[0] > width * DPI


def _media_box(pdf: bytes) -> tuple[float, float]:
    """A one-page PDF's page size in points, from its /MediaBox."""
    boxes = re.findall(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", pdf)
    assert len(boxes) == 1, boxes
    return float(boxes[0][0]), float(boxes[0][1])


def test_the_default_grids_figures_are_one_column_wide_without_a_title_and_with_display_names(tmp_path):
    """Every experiment of config.yaml, its plot block resolved as the workflow resolves it: the PDF's page is
    3.5 inches (252 points) wide, no title is drawn, the legend and panel titles show the display names."""
    from banditbench.configuration.grid import load_config_file, load_grid

    config = load_config_file("config.yaml")
    grid = load_grid(config)
    config["display"] = {
        "algorithms": {a: f"Alg {a.upper()}" for e in grid.experiments.values() for a in e.algorithms},
        "delays": {
            d: f"Delay {i}" for i, d in enumerate(dict.fromkeys(d for e in grid.experiments.values() for d in e.delays))
        },
    }
    grid = load_grid(config)
    for name, exp in grid.experiments.items():
        metric = f"cumulative_{exp.plot_metric}"
        curves = _curves(exp.algorithms, exp.delays, exp.budget_labels, rate=True).assign(
            metric=lambda d: d["metric"].replace("cumulative_regret", metric)
        )
        fig = curves_figure(curves, metric, name, ci_level=exp.ci_level, style=dict(exp.plot))
        _png, pdf = _check_saved(fig, tmp_path, name)
        width, _height = _media_box(pdf)
        assert width == pytest.approx(72 * 3.5), name
        assert fig._suptitle is None, name
        assert len(fig.axes) == len(exp.delays) * len(exp.budget_labels), name  # no self-duel row by default
        legend = [re.sub(r"\s+", " ", t.get_text()) for t in fig.legends[0].get_texts()]
        assert legend == [f"Alg {a.upper()}" for a in exp.algorithms], name
        titles = [ax.get_title().replace("\n", " ") for ax in fig.axes]
        assert all(t.startswith("Delay ") or "B\u00a0=" in t for t in titles), (name, titles)
        assert not any("_" in t for t in titles), (name, titles)
