"""Run namespaces (banditbench.configuration.runs): a run's name, and clashes of same-named experiments."""

import json

import numpy as np
import pytest

from banditbench.configuration.runs import clashes, run_base, run_name
from banditbench.errors import ConfigError
from banditbench.storage.resultio import save_result


def test_the_name_is_the_configs_run_key_or_its_file_stem_and_a_slice_adds_a_digest_of_its_keys():
    assert run_name({"run": "mine"}, ["config.yaml"], {}) == "mine"
    assert run_name({}, ["config/lipschitz.yaml"], {}) == "lipschitz"
    assert run_name({}, ["a.yaml", "b.yaml"], {}) == "a-b"
    sliced = run_name({"run": "mine", "only_algorithms": "ldb_df", "seeds": None}, ["c.yaml"], {})
    assert sliced.startswith("mine.slice-") and len(sliced) == len("mine.slice-") + 8
    # the same slice finds its folder again; another slice (or another seed count) gets another
    assert sliced == run_name({"run": "mine", "only_algorithms": "ldb_df"}, ["c.yaml"], {})
    assert sliced != run_name({"run": "mine", "only_algorithms": "ldb_zero"}, ["c.yaml"], {})
    assert run_name({"seeds": 3}, ["c.yaml"], {}) != run_name({"seeds": 4}, ["c.yaml"], {})
    assert run_base(sliced) == "mine"
    # a name given on the command line is used as given, slice or not
    assert run_name({"run": "x", "override": "a.b=1"}, ["c.yaml"], {"run": "x"}) == "x"


@pytest.mark.parametrize(
    "config, files, line",
    [
        ({"run": "runs"}, ["c.yaml"], "run: 'runs' is reserved (results/runs holds the per-seed result files)"),
        ({"run": "a/b"}, ["c.yaml"], "run: 'a/b' is not a run name"),
        ({}, ["my grid.yaml"], "run: 'my grid' (from the config file name) is not a run name"),
    ],
)
def test_a_bad_run_name_is_one_line_naming_the_key(config, files, line):
    with pytest.raises(ConfigError) as err:
        run_name(config, files, {})
    assert str(err.value).startswith(line) and "\n" not in str(err.value)


def _cell(horizon=40, lam=1.0):
    return {
        "experiment": "duel",
        "algorithm": "ldb_zero",
        "environment": {"name": "synthetic_dueling", "params": {"dimension": 4}},
        "policy": {"name": "ldb_zero", "params": {"lam": lam}},
        "horizon": horizon,
    }


def _write(folder, cell, run):
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"cell": {**cell, "seed": 0}}
    save_result(folder / "0.npz", {"regret": np.zeros(cell["horizon"])}, meta, {}, {"run": run} if run else {})


def test_another_configs_results_with_other_settings_are_a_clash_naming_experiment_run_and_setting(tmp_path):
    folder = tmp_path / "results/runs/duel/ldb_zero/none/none"
    _write(folder, _cell(horizon=40), "theirs.slice-0a1b2c3d")
    rel = str(folder)
    # the same settings: shared, no clash
    assert clashes([(rel, _cell(horizon=40))], "mine") == []
    # the same config (edited or sliced): Snakemake re-runs what changed, no clash
    assert clashes([(rel, _cell(horizon=60))], "theirs") == []
    # another config with other settings
    (line,) = clashes([(rel, _cell(horizon=60)), (rel, _cell(lam=2.0))], "mine")
    assert line.startswith(f"experiments.duel: {folder} holds the results of run 'theirs'")
    assert "horizon: 40 there, 60 here" in line and f"delete {folder.parents[2]} to recompute" in line
    (line,) = clashes([(rel, _cell(lam=2.0))], "mine")
    assert "policy.params.lam: 1.0 there, 2.0 here" in line


def test_results_that_record_no_run_or_no_folder_are_no_clash(tmp_path):
    folder = tmp_path / "results/runs/duel/ldb_zero/none/none"
    assert clashes([(str(folder), _cell())], "mine") == []
    _write(folder, _cell(horizon=40), None)
    assert clashes([(str(folder), _cell(horizon=60))], "mine") == []
    (folder / "0.npz").write_bytes(b"damaged")  # the pre-job check's to name, not this one's
    assert clashes([(str(folder), _cell(horizon=60))], "mine") == []


def test_the_recorded_cell_is_compared_as_json(tmp_path):
    """A cell holding a tuple (as the grid may) equals its stored JSON list: no false clash."""
    folder = tmp_path / "results/runs/duel/ldb_zero/none/none"
    cell = {**_cell(), "table_horizons": [20, 40]}
    _write(folder, cell, "theirs")
    assert clashes([(str(folder), json.loads(json.dumps({**cell, "table_horizons": (20, 40)})))], "mine") == []
