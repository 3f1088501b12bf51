"""The ``plot`` block (issue 35): display names, colours and line styles per algorithm label, log axes and the
figure's width, top level and per experiment; labels, colours and mathtext checked when the grid is planned,
each refusal a ConfigError naming the key; a slice drops the entries naming what it cut."""

import pytest

from banditbench.analysis.plots import PlotStyle
from banditbench.configuration.grid import load_grid
from banditbench.errors import ConfigError


def _config(plot=None, duel_plot=None, **top):
    duel = {
        "environment": {"name": "synthetic_dueling", "params": {"dimension": 4, "n_arms": 5}},
        "horizon": 40,
        "seeds": 2,
        "algorithms": {"ldb_df": {"policy": "ldb_df"}, "ldb_zero": {"policy": "ldb_zero"}},
        "delays": {"none": {"kind": "none"}},
    }
    lip = {
        "environment": {"name": "lipschitz", "params": {"function": "triangle", "noise_sigma": 0.01}},
        "horizon": 40,
        "seeds": 2,
        "algorithms": {"delayed_zooming": {"policy": "delayed_zooming"}, "dlpp": {"policy": "dlpp"}},
        "delays": {"none": {"kind": "none"}},
    }
    if duel_plot is not None:
        duel["plot"] = duel_plot
    return {"experiments": {"duel": duel, "lip": lip}, **({"plot": plot} if plot is not None else {}), **top}


def test_the_top_level_block_is_overridden_by_the_experiments_key_by_key_and_label_by_label():
    grid = load_grid(
        _config(
            plot={"names": {"ldb_df": "LDB-DF", "dlpp": "DLPP"}, "colors": {"dlpp": "black"}, "width": "single"},
            duel_plot={"names": {"ldb_zero": "LDB-0"}, "styles": {"ldb_df": "dotted"}, "xscale": "log", "width": 7},
        )
    )
    assert grid.experiments["duel"].plot == {
        "width": 7,
        "xscale": "log",
        "names": {"ldb_df": "LDB-DF", "ldb_zero": "LDB-0"},
        "styles": {"ldb_df": "dotted"},
    }
    assert grid.experiments["lip"].plot == {"width": "single", "names": {"dlpp": "DLPP"}, "colors": {"dlpp": "black"}}
    style = PlotStyle.of(grid.experiments["duel"].plot)
    assert (style.width, style.xscale, style.styles, style.name("ldb_zero")) == (7.0, "log", {"ldb_df": ":"}, "LDB-0")
    assert PlotStyle.of(grid.experiments["lip"].plot).width == 3.5
    assert load_grid(_config()).experiments["duel"].plot == {}


@pytest.mark.parametrize(
    "plot, duel_plot, message",
    [
        ({"names": {"ldb_dff": "x"}}, None, r"^plot\.names\.ldb_dff: 'ldb_dff' is not an algorithm of any experiment"),
        (
            None,
            {"colors": {"dlpp": "red"}},
            r"^experiments\.duel\.plot\.colors\.dlpp: 'dlpp' is not an algorithm of this",
        ),
        (None, {"styles": {"nope": "dotted"}}, r"^experiments\.duel\.plot\.styles\.nope: 'nope' is not an algorithm"),
        (
            None,
            {"colors": {"ldb_df": "blurple"}},
            r"^experiments\.duel\.plot\.colors\.ldb_df: 'blurple' is not a colour",
        ),
        ({"names": {"dlpp": r"$\frac{1$"}}, None, r"^plot\.names\.dlpp: '.*' is not valid mathtext"),
        (None, {"styles": {"ldb_df": "wavy"}}, r"^experiments\.duel\.plot\.styles\.ldb_df: 'wavy' is not one of"),
        ({"width": "triple"}, None, r"^plot\.width: 'triple' is not valid"),
        ({"width": 0}, None, r"^plot\.width: "),
        ({"xscale": "symlog"}, None, r"^plot\.xscale: 'symlog' is not one of"),
        ({"names": {"dlpp": ""}}, None, r"^plot\.names\.dlpp: "),
        ({"colour": {}}, None, r"^plot: Additional properties are not allowed \('colour'"),
        (None, {"names": {"ldb_df": 3}}, r"^experiments\.duel\.plot\.names\.ldb_df: 3 is not of type 'string'"),
    ],
)
def test_a_wrong_entry_is_refused_naming_its_key(plot, duel_plot, message):
    with pytest.raises(ConfigError, match=message):
        load_grid(_config(plot, duel_plot))


def test_mathtext_and_a_lone_dollar_sign_are_display_names():
    grid = load_grid(_config({"names": {"dlpp": r"$\epsilon$-DLPP", "ldb_df": "costs $"}}))
    assert grid.experiments["lip"].plot["names"] == {"dlpp": r"$\epsilon$-DLPP"}
    assert grid.experiments["duel"].plot["names"] == {"ldb_df": "costs $"}


def test_a_slice_drops_the_entries_naming_what_it_cut_and_still_refuses_a_typo():
    plot = {"names": {"ldb_df": "LDB-DF", "dlpp": "DLPP"}, "colors": {"ldb_zero": "C3"}}
    grid = load_grid(_config(plot, {"names": {"ldb_zero": "LDB-0"}}, only_experiments="lip"))
    assert list(grid.experiments) == ["lip"] and grid.experiments["lip"].plot == {"names": {"dlpp": "DLPP"}}
    grid = load_grid(_config(plot, {"names": {"ldb_zero": "LDB-0"}}, only_algorithms="ldb_df,dlpp"))
    assert grid.experiments["duel"].plot == {"names": {"ldb_df": "LDB-DF"}}
    with pytest.raises(ConfigError, match=r"^plot\.names\.ldb_dff: 'ldb_dff' is not an algorithm"):
        load_grid(_config({"names": {"ldb_dff": "x"}}, only_experiments="lip"))
    with pytest.raises(ConfigError, match=r"^experiments\.duel\.plot\.names\.nope: "):
        load_grid(_config(None, {"names": {"nope": "x"}}, only_algorithms="ldb_df"))
