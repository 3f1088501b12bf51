"""The ``plot`` block (issue 35): display names, colours and line styles per algorithm label, log axes and the
figure's width, top level and per experiment; labels, colours and mathtext checked when the grid is planned,
each refusal a ConfigError naming the key; a slice drops the entries naming what it cut."""

import pytest

from banditbench.analysis.plots import PlotStyle
from banditbench.configuration.grid import load_grid
from banditbench.errors import ConfigError


def _config(plot=None, duel_plot=None, display=None, **top):
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
    top = {**top, **({"display": display} if display is not None else {})}
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


# --- the display block (issue 49): names given once, every key checked ----------------------------------


def test_the_display_block_is_resolved_per_experiment_and_plot_names_stay_its_alias():
    config = _config(
        plot={"names": {"ldb_df": "LDB-DF (plot)"}},
        display={
            "experiments": {"duel": "Dueling", "lip": "Lipschitz"},
            "algorithms": {"dlpp": "DLPP"},
            "delays": {"none": "No delay"},
            "metrics": {"cumulative_regret": "Regret", "regret": "instant regret"},
        },
    )
    config["experiments"]["duel"]["budgets"] = [None]
    config["experiments"]["duel"]["display"] = {"algorithms": {"ldb_zero": "LDB-0"}, "delays": {"none": "none at all"}}
    grid = load_grid(config)
    duel, lip = grid.experiments["duel"], grid.experiments["lip"]
    assert duel.plot["names"] == {"ldb_df": "LDB-DF (plot)", "ldb_zero": "LDB-0"}  # plot.names: an alias
    assert duel.plot["display"]["delays"] == {"none": "none at all"}  # the experiment's own wins
    assert duel.plot["display"]["experiments"] == {"duel": "Dueling"} and duel.display_name() == "Dueling"
    assert lip.display == {
        "experiments": {"lip": "Lipschitz"},
        "delays": {"none": "No delay"},
        "metrics": {"cumulative_regret": "Regret", "regret": "instant regret"},
        "algorithms": {"dlpp": "DLPP"},
    }
    assert lip.plot["names"] == {"dlpp": "DLPP"} and "ldb_df" not in lip.plot["names"]
    # a metric's name as the figures' titles and the report's captions give it (readable without one)
    assert (
        lip.metric_name("cumulative_regret") == "Regret"
        and lip.metric_name("per_round_regret") == "average instant regret"
    )
    assert duel.metric_name("cumulative_weak_regret") == "cumulative weak regret"


@pytest.mark.parametrize(
    "display, own, message",
    [
        ({"experiments": {"dul": "x"}}, None, r"^display\.experiments\.dul: 'dul' is not an experiment of any"),
        ({"algorithms": {"ldb_dff": "x"}}, None, r"^display\.algorithms\.ldb_dff: 'ldb_dff' is not an algorithm"),
        ({"delays": {"geometric": "x"}}, None, r"^display\.delays\.geometric: 'geometric' is not a delay setting"),
        ({"budgets": {75: "x"}}, None, r"^display\.budgets\.75: 75 is not a budget of any experiment"),
        ({"metrics": {"cumulative_regert": "x"}}, None, r"^display\.metrics\.cumulative_regert: .* is not a metric"),
        (None, {"experiments": {"lip": "x"}}, r"^experiments\.duel\.display\.experiments\.lip: 'lip' is not an exp"),
        (None, {"algorithms": {"dlpp": "x"}}, r"^experiments\.duel\.display\.algorithms\.dlpp: 'dlpp' is not an alg"),
        (None, {"delays": {"uniform": "x"}}, r"^experiments\.duel\.display\.delays\.uniform: 'uniform' is not a delay"),
        (None, {"metrics": {"reward": "x"}}, r"^experiments\.duel\.display\.metrics\.reward: 'reward' is not a metric"),
        (
            None,
            {"algorithms": {"ldb_df": r"$\frac{1$"}},
            r"^experiments\.duel\.display\.algorithms\.ldb_df: .* mathtext",
        ),
        ({"delay": {}}, None, r"^display: Additional properties are not allowed \('delay'"),
        ({"delays": {"none": ""}}, None, r"^display\.delays\.none: "),
        ({"algorithms": {"ldb_df": "A"}}, None, r"^display\.algorithms\.ldb_df: 'A', but the plot block's names"),
    ],
)
def test_a_wrong_display_key_is_refused_in_one_line_naming_it(display, own, message):
    config = _config(plot={"names": {"ldb_df": "B"}}, display=display)
    if own is not None:
        config["experiments"]["duel"]["display"] = own
    with pytest.raises(ConfigError, match=message) as err:
        load_grid(config)
    assert "\n" not in str(err.value)


def test_a_slice_drops_the_display_names_of_what_it_cut():
    display = {"experiments": {"duel": "D"}, "algorithms": {"ldb_df": "L"}, "metrics": {"weak_regret": "W"}}
    grid = load_grid(_config(display=display, only_experiments="lip"))
    assert grid.experiments["lip"].display == {}
    with pytest.raises(ConfigError, match=r"^display\.delays\.nope: "):
        load_grid(_config(display={"delays": {"nope": "x"}}, only_experiments="lip"))


def test_a_sweep_lists_its_algorithm_and_variants_with_the_swept_values():
    grid = load_grid(_config(only_experiments="duel", override="ldb_df.lam=0.25,4"))
    exp = grid.experiments["duel"]
    sweeps = exp.sweeps()
    assert list(sweeps) == ["ldb_df"] and sweeps["ldb_df"]["parameters"] == ["lam"]
    members = sweeps["ldb_df"]["members"]
    assert list(members) == ["ldb_df", "ldb_df.lam-0.25", "ldb_df.lam-4"]
    assert members["ldb_df.lam-0.25"] == {"lam": 0.25} and members["ldb_df.lam-4"] == {"lam": 4}
    assert members["ldb_df"]["lam"] not in (0.25, 4)  # the algorithm's own (default) value
    assert exp.plot["variant_of"] == {"ldb_df.lam-0.25": "ldb_df", "ldb_df.lam-4": "ldb_df"}
    assert load_grid(_config()).experiments["duel"].sweeps() == {}
