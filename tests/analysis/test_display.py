"""Figures and tables that go into a paper as they are (issue 49): the ``display`` block's names in every table
format (the CSVs keep the labels) and figure, a sweep's variants in shades of their algorithm's colour, and the
sweep figure and table (the swept parameter's value on the x axis, the tidy table's numbers)."""

from __future__ import annotations

import colorsys

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb, to_rgba

from banditbench.analysis import aggregate, paired, sweeps
from banditbench.analysis.plots import PlotStyle, curves_figure

DISPLAY = {
    "experiments": {"exp_one": "Linear utility"},
    "delays": {"geometric_mean50_M20": "Geometric, M = 20"},
    "budgets": {"75": "small budget"},
    "metrics": {"cumulative_regret": "Regret R(t)"},
}
NAMES = {"ldb_df": "LDB-DF"}


def _tidy(algorithms=("ldb_df", "random"), delays=("none", "geometric_mean50_M20"), budgets=("75", "225")):
    rows = []
    for i, alg in enumerate(algorithms):
        for j, delay in enumerate(delays):
            for k, budget in enumerate(budgets):
                for t in (50, 100):
                    mean = 1.0 + i + 10 * j + 100 * k + t / 1000
                    rows.append(
                        {"experiment": "exp_one", "algorithm": alg, "delay": delay, "budget": budget, "t": t}
                        | {"metric": "cumulative_regret", "mean": mean, "ci_low": mean - 0.5, "ci_high": mean + 0.5}
                        | {"n": 4, "sd": 0.3, "min": mean - 1, "max": mean + 1, "median": mean, "q1": mean, "q3": mean}
                    )
    return pd.DataFrame(rows)


def test_every_table_format_shows_the_display_names_and_the_csv_keeps_the_labels(tmp_path):
    tidy = _tidy()
    headline = aggregate.named(aggregate.headline_table(tidy, "cumulative_regret", display=DISPLAY), NAMES)
    tables = {"cumulative_regret at T = 100": headline}
    tables.update(
        {m: aggregate.with_display(aggregate.named(w, NAMES), DISPLAY) for m, w in aggregate.human_tables(tidy).items()}
    )
    md = aggregate.to_markdown(tables, "exp_one", display=DISPLAY)
    tex = aggregate.to_latex(tables, "exp_one", run="r", display=DISPLAY)
    page = aggregate.to_html(tables, "exp_one", display=DISPLAY)
    assert md.startswith("# Linear utility\n") and "## Regret R(t) at T = 100" in md
    assert "| LDB-DF |" in md and "| random |" in md and "| ldb_df |" not in md
    assert "Geometric, M = 20, small budget" in md and "none, B = 225" in md  # columns: delay and budget names
    assert "| Geometric, M = 20 | small budget | LDB-DF |" in md  # rows of the per-metric table
    assert "geometric_mean50_M20" not in md
    assert r"\caption{Linear utility: Regret R(t) at T = 100." in tex and "LDB-DF" in tex
    assert r"\label{tab:r-exp-one}" in tex  # the labels stay the labels'
    assert "<h1>Linear utility</h1>" in page and "Geometric, M = 20" in page and "LDB-DF" in page
    # the paired tables name the settings too
    diffs = pd.DataFrame(
        [
            {"experiment": "exp_one", "a": "ldb_df", "b": "random", "delay": d, "budget": "75", "t": 100}
            | {"metric": "cumulative_regret", "better": "lower", "mean": -1.0, "ci_low": -2.0, "ci_high": 0.0}
            | {"sd": 1.0, "n": 4, "a_better": 0.75, "tied": 0.0, "interval": "t", "level": 0.95, "diverged": 0}
            for d in ("none", "geometric_mean50_M20")
        ]
    )
    ptables = paired.human_tables(diffs, "ci", NAMES, DISPLAY)
    assert list(next(iter(ptables.values())).columns) == ["none", "Geometric, M = 20"]
    assert list(next(iter(ptables.values())).index) == ["LDB-DF − random"]
    # their headings name the experiment and the metric by their display names; the LaTeX labels keep the labels
    text = paired.caption(diffs, "ci", DISPLAY)
    assert "the per-seed difference of Regret R(t) between" in text
    md = paired.to_markdown(ptables, "exp_one", text, DISPLAY)
    tex = paired.to_latex(ptables, "exp_one", text, "r", DISPLAY)
    phtml = paired.to_html(ptables, "exp_one", text, DISPLAY)
    assert md.startswith("# Linear utility: paired comparisons\n")
    assert "## A − B, Regret R(t) at T = 100\n" in md and "## A − B, Regret R(t) by horizon\n" in md
    assert r"\caption{Linear utility: A − B, Regret R(t) at T = 100. A − B: the per-seed".replace("−", "$-$") in tex
    assert r"\label{tab:r-exp-one-paired}" in tex and r"\label{tab:r-exp-one-paired-by-horizon}" in tex
    assert "<title>Linear utility: paired comparisons</title>" in phtml
    assert "<h1>Linear utility: paired comparisons</h1>" in phtml and "<h2>A − B, Regret R(t) by horizon</h2>" in phtml
    assert "exp_one" not in md + tex.replace("tab:r-exp-one", "") + phtml and "cumulative_regret" not in md + phtml
    # without display names, the labels
    plain = paired.to_markdown(paired.human_tables(diffs, "ci"), "exp_one", paired.caption(diffs))
    assert plain.startswith("# exp_one: paired comparisons\n") and "## A − B, cumulative_regret at T = 100" in plain
    # the CSV (aggregate_experiment writes the tidy frame as it is) keeps the labels
    assert set(tidy["delay"]) == {"none", "geometric_mean50_M20"}


def test_figures_name_panels_axes_and_legends_by_their_display_names():
    tidy = _tidy()
    fig = curves_figure(tidy, "cumulative_regret", "exp_one", style={"names": NAMES, "display": DISPLAY})
    titles = [ax.get_title().replace("\n", " ") for ax in fig.axes]
    assert titles == [
        "no delay, small budget",
        "Geometric, M = 20, small budget",
        "no delay, B\u00a0=\u00a0225",
        "Geometric, M = 20, B\u00a0=\u00a0225",
    ]
    assert fig.axes[0].get_ylabel().replace("\n", " ") == "Regret R(t)"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["LDB-DF", "random"]
    assert fig._suptitle is None
    # no display names: readable defaults, never a label cut inside a word
    delays = ("geometric_mean20_M50_with_a_window", "none")
    fig = curves_figure(_tidy(delays=delays, budgets=("none",)), "cumulative_regret", "e")
    title = fig.axes[0].get_title()
    assert title.replace("\n", " ") == "geometric mean20 M50 with a window" and "\n" in title  # wrapped
    assert title.split() == ["geometric", "mean20", "M50", "with", "a", "window"]  # between words only
    assert fig.axes[1].get_title() == "no delay"
    assert fig.axes[0].get_ylabel().replace("\n", " ") == "cumulative regret"


def _hue(colour) -> float:
    return colorsys.rgb_to_hsv(*to_rgb(colour))[0]


def test_a_sweeps_variants_are_shades_of_their_algorithms_colour():
    labels = ["ldb_df", "ldb_df.lam-0.25", "ldb_df.lam-1", "ldb_df.lam-4", "random", "x.b-1"]
    style = PlotStyle.of(
        {"variant_of": {a: "ldb_df" for a in labels[1:4]} | {"x.b-1": "x"}, "colors": {"random": "black"}}
    )
    colours = style.colours(labels)
    parent = colours["ldb_df"]
    assert to_rgba(parent) == to_rgba("tab:blue")  # the algorithm keeps its own colour
    variants = [colours[a] for a in labels[1:4]]
    for colour in variants:
        assert _hue(colour) == pytest.approx(_hue(parent), abs=1e-6)  # same hue
        assert to_rgba(colour) != to_rgba(parent)
    assert len({to_rgba(c) for c in variants}) == 3  # distinct shades
    value = [colorsys.rgb_to_hsv(*to_rgb(c))[2] * (1 - colorsys.rgb_to_hsv(*to_rgb(c))[1]) for c in variants]
    assert value == sorted(value, reverse=True)  # lightest first, in the sweep's order
    assert to_rgba(colours["random"]) == to_rgba("black")
    # a variant whose algorithm is not drawn: a shade of the colour that algorithm would have (the next free one)
    assert _hue(colours["x.b-1"]) == pytest.approx(_hue("tab:orange"), abs=1e-6)
    # without variant_of every label has a tab10 colour of its own
    plain = PlotStyle.of({}).colours(labels[:3])
    assert [to_rgba(c) for c in plain.values()] == [to_rgba(c) for c in ("tab:blue", "tab:orange", "tab:green")]


SWEEPS = {
    "ldb_df": {
        "parameters": ["lam"],
        "members": {"ldb_df": {"lam": 1.0}, "ldb_df.lam-0.1": {"lam": 0.1}, "ldb_df.lam-30": {"lam": 30}},
    }
}


def test_the_sweep_table_and_figure_put_the_values_on_the_x_axis_with_the_tidy_tables_numbers(tmp_path):
    tidy = _tidy(algorithms=("ldb_df", "ldb_df.lam-0.1", "ldb_df.lam-30", "random"), budgets=("none",))
    tidy.to_csv(tmp_path / "tidy.csv", index=False, float_format="%.10g")  # as the aggregation writes it
    out = {ext: tmp_path / f"s.{ext}" for ext in ("csv", "md", "tex", "html", "pdf", "png")}
    table = sweeps.write_sweeps(
        tmp_path / "tidy.csv", SWEEPS, "cumulative_regret", "exp_one", out["csv"], out["md"], out["tex"],
        out["html"], [out["pdf"], out["png"]], 0.95, {"names": NAMES, "display": DISPLAY}, "r",
    )  # fmt: skip
    written = pd.read_csv(out["csv"])
    tidy = pd.read_csv(tmp_path / "tidy.csv")
    final = tidy[tidy["t"] == 100].set_index(["algorithm", "delay"])
    assert len(written) == 3 * 2 and set(written["member"]) == set(SWEEPS["ldb_df"]["members"])
    for _, row in written.iterrows():
        expected = final.loc[(row["member"], row["delay"])]
        assert (row["mean"], row["ci_low"], row["ci_high"]) == (
            expected["mean"], expected["ci_low"], expected["ci_high"]
        )  # fmt: skip
        assert row["algorithm"] == "ldb_df" and row["parameter"] == "lam"
        assert float(row["value"]) == SWEEPS["ldb_df"]["members"][row["member"]]["lam"]
    md = out["md"].read_text()
    assert "# Linear utility: sweep" in md and "## LDB-DF: lam" in md
    assert "| lam | no delay | Geometric, M = 20 |" not in md and "| lam | none | Geometric, M = 20 |" in md
    # rows in the values' order, the cells the tidy table's mean ± half-width
    assert md.index("| 0.1 |") < md.index("| 1.0 |") < md.index("| 30 |")
    cell = final.loc[("ldb_df.lam-30", "geometric_mean50_M20")]
    assert f"| 30 | {cell['mean'] - 10:.2f} ± 0.50 | {cell['mean']:.2f} ± 0.50 |" in md
    tex = out["tex"].read_text()
    assert r"\label{tab:r-exp-one-sweep}" in tex and r"\toprule" in tex
    assert out["pdf"].read_bytes().startswith(b"%PDF") and out["png"].read_bytes()[:4] == b"\x89PNG"
    # the figure: one line per setting, x the values in order, y the means
    fig = sweeps.sweep_figure(table, 0.95, {"names": NAMES, "display": DISPLAY})
    ax = fig.axes[0]
    assert ax.get_xlabel() == "lam" and ax.get_xscale() == "log"  # positive values over a factor 300
    assert [c.get_label() for c in ax.containers] == ["LDB-DF, no delay", "LDB-DF, Geometric, M = 20"]
    lines = [c.lines[0] for c in ax.containers]  # each error bar container's data line
    for line, delay in zip(lines, ("none", "geometric_mean50_M20")):
        assert list(line.get_xdata()) == [0.1, 1.0, 30.0]
        expected = [final.loc[(m, delay)]["mean"] for m in ("ldb_df.lam-0.1", "ldb_df", "ldb_df.lam-30")]
        assert list(line.get_ydata()) == pytest.approx(expected)
    assert "Regret R(t) at T = 100" in ax.get_ylabel().replace("\n", " ")


def test_a_sweep_of_values_that_are_not_numbers_places_them_in_order():
    members = {"a": {"mode": "reset"}, "a.mode-keep": {"mode": "keep"}, "a.mode-true": {"mode": True}}
    tidy = _tidy(algorithms=tuple(members), delays=("none",), budgets=("none",))
    table = sweeps.sweep_table(tidy, {"a": {"parameters": ["mode"], "members": members}}, "cumulative_regret")
    assert list(table["value"]) == ["reset", "keep", "true"]
    fig = sweeps.sweep_figure(table)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["reset", "keep", "true"]
    assert list(ax.get_lines()[0].get_xdata()) == [0, 1, 2]
    with pytest.raises(ValueError, match="no 'cumulative_regret' rows for 'a.mode-x'"):
        sweeps.sweep_table(
            tidy, {"a": {"parameters": ["mode"], "members": {"a.mode-x": {"mode": 1}}}}, "cumulative_regret"
        )
    assert np.isfinite(table["mean"]).all()
