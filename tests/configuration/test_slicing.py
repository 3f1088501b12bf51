"""Slicing a grid from the command line (banditbench.configuration.slicing): only_experiments, only_algorithms, override."""

import pandas as pd
import pytest

from banditbench.configuration.grid import load_grid
from banditbench.errors import ConfigError
from banditbench.configuration.slicing import variant_label


def _config(**top):
    dueling = {
        "environment": {"name": "synthetic_dueling", "params": {"dimension": 4, "n_arms": 5}},
        "horizon": 40,
        "seeds": 2,
        "seeds_per_job": 2,
        "table_horizons": [20, 40],
        "algorithms": {
            "ldb_df": {"policy": "ldb_df"},
            "ldb_zero": {"policy": "ldb_zero", "params": {"lam": 1.0}},
            "random": {"policy": "random_pair"},
        },
        "delays": {"none": {"kind": "none"}},
        "panel_plots": {"side": {"caption": "c", "panels": {"p": ["ldb_df", "ldb_zero"]}}},
    }
    lipschitz = {
        "environment": {"name": "lipschitz", "params": {"function": "triangle", "noise_sigma": 0.01}},
        "horizon": 40,
        "seeds": 2,
        "algorithms": {"delayed_zooming": {"policy": "delayed_zooming"}, "dlpp": {"policy": "dlpp"}},
        "delays": {"none": {"kind": "none"}},
    }
    return {
        "experiments": {"duel": dueling, "lip": lipschitz},
        "summary_tables": {
            "s": {"metric": "cumulative_regret", "better": "lower", "rows": [{"experiment": "duel", "label": "x"}]}
        },
        **top,
    }


def test_only_experiments_and_only_algorithms_cut_the_grid():
    grid = load_grid(_config(only_experiments="duel"))
    assert list(grid.experiments) == ["duel"] and grid.summary_tables["s"].experiments == ["duel"]
    grid = load_grid(_config(only_algorithms=["ldb_df", "dlpp"]))
    assert {n: e.algorithms for n, e in grid.experiments.items()} == {"duel": ["ldb_df"], "lip": ["dlpp"]}
    assert grid.experiments["duel"].paired is None  # one algorithm left: no pairs
    assert grid.experiments["duel"].panel_plots["side"]["panels"] == {"p": ["ldb_df"]}
    # an experiment left without algorithms is dropped, with the summary tables reading it
    grid = load_grid(_config(only_algorithms="dlpp,delayed_zooming"))
    assert list(grid.experiments) == ["lip"] and grid.summary_tables == {}
    # the unsliced grid is unchanged
    assert list(load_grid(_config()).experiments) == ["duel", "lip"]


def test_an_override_runs_a_variant_under_its_own_label_next_to_the_configured_algorithm():
    grid = load_grid(_config(override="ldb_zero.lam=2.5 duel/ldb_df.beta=0.5"))
    duel = grid.experiments["duel"]
    assert duel.algorithms == ["ldb_df", "ldb_df.beta-0.5", "ldb_zero", "ldb_zero.lam-2.5", "random"]
    assert grid.cell("duel", "ldb_zero.lam-2.5", "none", "none", 0)["policy"] == {
        "name": "ldb_zero",
        "params": {"lam": 2.5},
    }
    assert grid.cell("duel", "ldb_zero", "none", "none", 0)["policy"]["params"] == {"lam": 1.0}
    assert grid.cell("duel", "ldb_df.beta-0.5", "none", "none", 0)["policy"]["params"] == {"beta": 0.5}
    # a variant is compared with the algorithm it varies, the others with the reference
    assert ["ldb_zero", "ldb_zero.lam-2.5"] in duel.paired["pairs"] and ["ldb_df", "ldb_zero"] in duel.paired["pairs"]
    # distinct result paths: the label is the {algorithm} wildcard
    paths = {job["algorithm"] for job in grid.jobs("duel")}
    assert {"ldb_zero", "ldb_zero.lam-2.5"} <= paths
    # only_algorithms may keep the variant alone, or a configured algorithm with its variants
    grid = load_grid(_config(override="ldb_zero.lam=2.5", only_algorithms="ldb_zero.lam-2.5,ldb_df"))
    assert grid.experiments["duel"].algorithms == ["ldb_df", "ldb_zero.lam-2.5"]
    grid = load_grid(_config(override=["ldb_zero.lam=2.5", "ldb_zero.beta=2"], only_algorithms="ldb_zero"))
    assert grid.experiments["duel"].algorithms == ["ldb_zero", "ldb_zero.beta-2.lam-2.5"]
    assert variant_label("a", {"w": [1, 2], "flag": True, "x": 1e-5}) == "a.flag-true.w-_1_2_.x-1e-05"


@pytest.mark.parametrize(
    "top, message",
    [
        (
            {"only_experiments": "duel,nope"},
            "only_experiments: 'nope' is not an experiment of this config; configured: ['duel', 'lip']",
        ),
        ({"only_algorithms": "ldb_dff"}, "only_algorithms: 'ldb_dff' is not an algorithm of any experiment"),
        ({"only_algorithms": ","}, "only_algorithms: names no algorithms"),
        (
            {"override": "ldb_dff.lam=2"},
            "override.0: 'ldb_dff.lam=2' names algorithm 'ldb_dff', which is not an algorithm",
        ),
        (
            {"override": "ldb_df.lamda=2"},
            "override.0: 'lamda' is not a parameter of policy 'ldb_df' (algorithm 'ldb_df' "
            "of experiment 'duel') (did you mean 'lam'?); its parameters:",
        ),
        ({"override": "ldb_df.lam 2"}, "override.0: 'ldb_df.lam' is not ALGORITHM.PARAMETER=VALUE"),
        (
            {"override": "lip/ldb_df.lam=2"},
            "override.0: 'lip/ldb_df.lam=2' names algorithm 'ldb_df', which is not an algorithm of experiment 'lip'",
        ),
        (
            {"only_experiments": "lip", "override": "duel/ldb_df.lam=2"},
            "override.0: 'duel/ldb_df.lam=2' names experiment 'duel', which is not kept",
        ),
        ({"override": "ldb_df.lam=-1"}, "experiments.duel.algorithms.ldb_df.lam--1.params.lam: "),
        ({"only_experiments": 3}, "only_experiments: 3 is not valid"),
    ],
)
def test_a_bad_name_or_value_is_refused_naming_its_key(top, message):
    with pytest.raises(ConfigError) as err:
        load_grid(_config(**top))
    assert message in str(err.value)


@pytest.mark.slow
def test_slicing_keys_work_from_the_command_line_and_never_overwrite_configured_results(tmp_path):
    from smk import copy_project, smk

    config = _config()
    config["experiments"]["duel"]["delays"]["geo"] = {"kind": "geometric", "mean": 3, "window": 6}
    config["summary_tables"]["s"]["rows"][0]["delay"] = "geo"
    work = copy_project(tmp_path, config)
    first = smk(work, "--quiet", "--config", "only_experiments=duel", "only_algorithms=ldb_df,ldb_zero")
    assert first.returncode == 0, first.stderr[-3000:]
    (configured,) = (work / "results/runs/duel/ldb_zero/geo/none").glob("*/0.npz")
    stamp = configured.stat().st_mtime_ns
    assert not (work / "results/runs/lip").exists() and not (work / "results/runs/duel/random").exists()

    run = smk(
        work,
        "--quiet",
        "--config",
        "only_experiments=duel",
        "only_algorithms=ldb_df,ldb_zero",
        "override=ldb_zero.lam=3",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert configured.stat().st_mtime_ns == stamp  # the configured result is untouched
    (variant,) = (work / "results/runs/duel/ldb_zero.lam-3/geo/none").glob("*/1.npz")
    from banditbench.storage.resultio import load_result

    assert load_result(variant)[1]["cell"]["policy"]["params"] == {"lam": 3}
    # each slice has its own run folder: the first slice's tables are not overwritten by the second's
    slices = {p.name: pd.read_csv(p / "tables/duel.csv") for p in (work / "results").glob("default.slice-*")}
    assert len(slices) == 2 and not (work / "results/default").exists()
    (first_slice,) = [t for t in slices.values() if "ldb_zero.lam-3" not in set(t["algorithm"])]
    assert set(first_slice["algorithm"]) == {"ldb_df", "ldb_zero"}
    (out,) = [work / "results" / name for name, t in slices.items() if "ldb_zero.lam-3" in set(t["algorithm"])]
    tidy = pd.read_csv(out / "tables/duel.csv")
    assert set(tidy["algorithm"]) == {"ldb_df", "ldb_zero", "ldb_zero.lam-3"}
    seeds = pd.read_parquet(out / "tables/duel.parquet")
    assert set(seeds["algorithm"]) == {"ldb_df", "ldb_zero", "ldb_zero.lam-3"} and set(seeds["seed"]) == {0, 1}
    paired = pd.read_csv(out / "paired/duel.csv")
    assert {(a, b) for a, b in zip(paired["a"], paired["b"])} == {
        ("ldb_df", "ldb_zero"),
        ("ldb_zero", "ldb_zero.lam-3"),
    }
    assert (out / "paired/duel.png").stat().st_size > 10_000

    # a bad name stops Snakemake before any job, naming the key
    for bad, message in (
        ("only_algorithms=ldb_dff", "only_algorithms: 'ldb_dff' is not an algorithm"),
        ("override=ldb_zero.lamb=3", "override.0: 'lamb' is not a parameter of policy 'ldb_zero'"),
    ):
        failed = smk(work, "-n", "--config", bad)
        assert failed.returncode != 0 and message in failed.stdout + failed.stderr
        assert "Job stats" not in failed.stdout


def test_an_override_with_several_values_sweeps_one_variant_per_value_each_paired_with_its_algorithm():
    for override in ("ldb_zero.lam=0.5,2,8", ["ldb_zero.lam=0.5,2,8"], "ldb_zero.lam=0.5,2,8;"):
        duel = load_grid(_config(override=override)).experiments["duel"]
        assert duel.algorithms == [
            "ldb_df",
            "ldb_zero",
            "ldb_zero.lam-0.5",
            "ldb_zero.lam-2",
            "ldb_zero.lam-8",
            "random",
        ]
        for value in ("0.5", "2", "8"):
            assert ["ldb_zero", f"ldb_zero.lam-{value}"] in duel.paired["pairs"]
    # two swept parameters of one algorithm: their product; another algorithm's entry after a comma
    grid = load_grid(_config(override="ldb_df.beta=0.5,2 ldb_df.lam=1,3,ldb_zero.lam=4"))
    assert grid.experiments["duel"].algorithms == [
        "ldb_df", "ldb_df.beta-0.5.lam-1", "ldb_df.beta-0.5.lam-3", "ldb_df.beta-2.lam-1", "ldb_df.beta-2.lam-3",
        "ldb_zero", "ldb_zero.lam-4", "random",
    ]  # fmt: skip
    # a list in brackets is one value, not a sweep
    from banditbench.configuration.slicing import parse_override

    assert parse_override("a.x=[1,2],3", "override.0")[3] == [[1, 2], 3]
    with pytest.raises(ConfigError, match=r"override.0: 'ldb_zero.lam=2,2' gives the value 2 twice"):
        load_grid(_config(override="ldb_zero.lam=2,2"))
    with pytest.raises(ConfigError, match=r"a second time \(already 0.5, 1\); give each parameter once \(a sweep"):
        load_grid(_config(override="ldb_zero.lam=0.5,1 ldb_zero.lam=2"))
