"""One validation pass whatever the slice (issue 38): numbers are finite and integers are integers in every
schema-checked block, labels can become file names, and a slice never switches a check off."""

import copy
import math

import pytest

from banditbench.configuration.grid import load_grid
from banditbench.errors import ConfigError


def _config(**top):
    duel = {
        "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
        "horizon": 40,
        "seeds": 2,
        "seeds_per_job": 2,
        "table_horizons": [20, 40],
        "algorithms": {"ldb_df": {"policy": "ldb_df"}, "random": {"policy": "random_pair"}},
        "delays": {"none": {"kind": "none"}},
    }
    lip = {
        "environment": {"name": "lipschitz", "params": {"function": "triangle", "noise_sigma": 0.01}},
        "horizon": 40,
        "seeds": 2,
        "algorithms": {"delayed_zooming": {"policy": "delayed_zooming"}, "dlpp": {"policy": "dlpp"}},
        "delays": {"none": {"kind": "none"}},
    }
    return {"experiments": {"duel": duel, "lip": lip}, **top}


def _refused(config) -> str:
    with pytest.raises(ConfigError) as err:
        load_grid(config)
    return str(err.value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize(
    "path",
    [
        ("ci_level",),
        ("claims_alpha",),
        ("experiments", "duel", "ci_level"),
        ("experiments", "duel", "delays", "none", "mean"),
        ("experiments", "duel", "budgets"),
        ("paired", "resamples"),
    ],
)
def test_nan_and_infinity_are_refused_in_every_numeric_option_naming_its_key(path, bad):
    config = _config()
    if path[-1] == "mean":
        config["experiments"]["duel"]["delays"]["none"] = {"kind": "geometric", "mean": bad}
    elif path[-1] == "budgets":
        config["experiments"]["duel"]["budgets"] = [bad]
    else:
        node = config
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = bad
    message = _refused(config)
    assert ".".join(path) in message and ("finite" in message or "integer" in message), message


@pytest.mark.parametrize(
    "key, value",
    [("seeds", 2.0), ("horizon", 40.0), ("seeds_per_job", 2.0), ("seeds", True), ("table_horizons", [20.0, 40])],
)
def test_float_typed_and_boolean_integers_are_refused_naming_the_key(key, value):
    config = _config()
    config["experiments"]["duel"][key] = value
    message = _refused(config)
    assert f"experiments.duel.{key}" in message and "integer" in message, message
    if isinstance(value, float):
        assert "(write 2)" in message or "(write 40)" in message
    top = _config(seeds=2.0)
    assert "seeds: must be an integer, got 2.0 (write 2)" in _refused(top)


@pytest.mark.parametrize("value", ["true", "yes", "1"])
def test_a_boolean_key_given_a_string_is_refused_naming_the_key_and_the_spelling(value):
    """``snakemake --config lockstep_variants=true`` hands over the string 'true' (only True / False are booleans)."""
    message = _refused(_config(lockstep_variants=value))
    assert message.startswith("lockstep_variants: must be true or false") and f"{value!r}" in message, message
    assert "on the command line: True or False" in message


@pytest.mark.parametrize(
    "label, says",
    [
        ("ldb\n", "white space"),
        ("ldb_" + "x" * 300, "304 characters long; at most 100"),
        ("ldb/df", "does not match"),
        (" ldb", "white space"),
    ],
)
def test_labels_that_cannot_become_file_names_are_refused(label, says):
    config = _config()
    config["experiments"]["duel"]["algorithms"][label] = {"policy": "ldb_df"}
    message = _refused(config)
    assert "experiments.duel.algorithms" in message and says in message, message
    long_variant = _config(override="ldb_df.beta=" + "1" * 120)
    assert "variant label" in _refused(long_variant) and "at most 100" in _refused(long_variant)


def test_a_paired_pair_is_checked_even_when_the_experiment_holds_one_algorithm():
    config = _config()
    del config["experiments"]["duel"]["algorithms"]["random"]
    config["experiments"]["duel"]["paired"] = {"pairs": [["ldb_df", "ldb_dff"]]}
    assert "experiments.duel.paired.pairs.0: 'ldb_dff' is not an algorithm" in _refused(config)
    config["experiments"]["duel"]["paired"] = {"reference": "rando"}
    assert "experiments.duel.paired.reference: 'rando' is not an algorithm" in _refused(config)


@pytest.mark.parametrize(
    "slice_",
    [{"only_algorithms": "ldb_df"}, {"only_experiments": "lip"}, {"only_algorithms": "dlpp,delayed_zooming"}],
)
def test_a_slice_never_prunes_a_name_that_never_existed(slice_):
    """A slice drops the pairs, summary rows, panels and claims naming what it cut; a typo is refused as in
    the unsliced grid, whatever the slice keeps."""
    typo_pair = _config(**slice_)
    typo_pair["experiments"]["duel"]["paired"] = {"pairs": [["random", "ldb_dff"]]}
    typo_panel = _config(**slice_)
    typo_panel["experiments"]["duel"]["panel_plots"] = {"p": {"caption": "c", "panels": {"a": ["ldb_dff"]}}}
    typo_row = _config(**slice_)
    typo_row["summary_tables"] = {
        "s": {"metric": "cumulative_regret", "better": "lower", "rows": [{"experiment": "dule", "label": "x"}]}
    }
    typo_claim = _config(**slice_)
    typo_claim["claims"] = {
        "c": {"paper": "000", "where": "Sec. 5", "quote": "q", "experiment": "duel", "metric": "cumulative_regret",
              "a": "ldb_dff", "b": "random", "relation": "less"}
    }  # fmt: skip
    for config, says in [(typo_pair, "ldb_dff"), (typo_panel, "ldb_dff"), (typo_row, "dule"), (typo_claim, "ldb_dff")]:
        unsliced = {k: v for k, v in copy.deepcopy(config).items() if k not in slice_}
        assert says in _refused(unsliced)
        if slice_.get("only_experiments") == "lip" or slice_.get("only_algorithms") == "dlpp,delayed_zooming":
            if config is not typo_row:
                continue  # the experiment holding the typo is cut whole: its references go with it
        assert says in _refused(config), (slice_, config)


def test_a_slice_still_drops_what_it_cut():
    config = _config(only_algorithms="ldb_df")
    config["experiments"]["duel"]["paired"] = {"pairs": [["ldb_df", "random"]]}
    config["claims"] = {
        "c": {"paper": "000", "where": "Sec. 5", "quote": "q", "experiment": "duel", "metric": "cumulative_regret",
              "a": "ldb_df", "b": "random", "relation": "less"}
    }  # fmt: skip
    grid = load_grid(config)
    assert grid.experiments["duel"].paired is None and grid.claims == {}


def test_overriding_a_parameter_twice_is_refused_naming_it():
    for override in ("ldb_df.beta=0.5 ldb_df.beta=2", "ldb_df.beta=0.5 duel/ldb_df.beta=2"):
        message = _refused(_config(override=override))
        assert "override.1:" in message and "ldb_df.beta" in message and "second time (already 0.5)" in message
    assert load_grid(_config(override="ldb_df.beta=0.5 ldb_df.lam=2")).experiments["duel"].algorithms == [
        "ldb_df",
        "ldb_df.beta-0.5.lam-2",
        "random",
    ]
