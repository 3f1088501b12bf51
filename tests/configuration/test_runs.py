"""Where results go (banditbench.configuration.runs): per-seed results addressed by their content, run names
and who owns them."""

import json
import os
import subprocess
import sys

import pytest

from banditbench.configuration.runs import (
    check_owner,
    owner,
    record_owner,
    report_only,
    run_base,
    run_name,
)
from banditbench.storage import cells, resultio
from banditbench.storage.cells import cell_digest, cell_dir
from banditbench.errors import ConfigError


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


def test_the_default_config_is_the_run_default_and_a_copy_of_it_gets_its_own_name():
    assert run_name({}, ["config.yaml"], {}) == "default"
    assert run_name({}, ["./config.yaml"], {}) == "default"
    assert run_name({}, ["mine.yaml"], {}) == "mine"
    assert run_name({}, ["config/config.yaml"], {}) == "config"  # only the project's own config.yaml


def test_a_run_name_of_digits_can_be_given_on_the_command_line(monkeypatch):
    """Snakemake reads --config run=2024 as a number and run=007 as 7: the name is what was typed."""
    assert run_name({}, ["c.yaml"], {"run": 2024}) == "2024"
    monkeypatch.setattr("sys.argv", ["snakemake", "--config", "run=007"])
    assert run_name({}, ["c.yaml"], {"run": 7}) == "007"


@pytest.mark.parametrize(
    "config, files, line",
    [
        ({"run": "runs"}, ["c.yaml"], "run: 'runs' is reserved (results/runs holds the per-seed result files"),
        ({"run": "Runs"}, ["c.yaml"], "run: 'Runs' is reserved (results/runs holds the per-seed result files"),
        ({}, ["RUNS.yaml"], "run: 'RUNS' is reserved"),
        ({"run": "a/b"}, ["c.yaml"], "run: 'a/b' is not a run name"),
        ({}, ["my grid.yaml"], "run: 'my grid' (from the config file name) is not a run name"),
    ],
)
def test_a_bad_run_name_is_one_line_naming_the_key(config, files, line):
    with pytest.raises(ConfigError) as err:
        run_name(config, files, {})
    assert str(err.value).startswith(line) and "\n" not in str(err.value)


def _cell(horizon=40, **params):
    return {
        "experiment": "duel",
        "algorithm": "ldb_zero",
        "delay_label": "none",
        "budget": None,
        "horizon": horizon,
        "environment": {"name": "synthetic_dueling", "params": {"dimension": 4}},
        "policy": {"name": "ldb_zero", "params": params},
        "delay": {"kind": "none"},
    }


def test_a_cell_folder_changes_with_every_setting_and_not_with_how_a_default_is_spelt():
    base = cell_digest(_cell())
    assert len(base) == 12 and int(base, 16) >= 0
    assert cell_dir(_cell()) == f"results/runs/duel/ldb_zero/none/none/{base}"
    # any setting that changes the results' bytes changes the folder
    assert cell_digest(_cell(horizon=41)) != base
    assert cell_digest(_cell(lam=2.0)) != base
    assert cell_digest({**_cell(), "delay": {"kind": "geometric", "mean": 5}}) != base
    assert cell_digest({**_cell(), "environment": {"name": "synthetic_dueling", "params": {"dimension": 5}}}) != base
    # a default written out is the same cell; the seed is per file, not per folder
    assert cell_digest(_cell(lam=_default("ldb_zero", "lam"))) == base
    assert cell_digest({**_cell(), "seed": 3}) == base


def test_the_result_format_is_part_of_the_address(monkeypatch):
    base = cell_digest(_cell())
    monkeypatch.setattr(cells, "RESULT_FORMAT", resultio.RESULT_FORMAT + 1)
    assert cell_digest(_cell()) != base


def _default(policy, name):
    from banditbench import registry

    return registry.parameters(registry.get("policy", policy).load())[name]


def test_a_run_name_belongs_to_the_config_that_made_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mine = owner(["config.yaml"], {})
    check_owner("default", mine)  # nobody owns it yet
    record_owner("default", mine)
    recorded = json.loads((tmp_path / "results/default/run.json").read_text())
    assert recorded == {"run": "default", "configs": ["config.yaml"], "slice": {}}
    check_owner("default", owner(["./config.yaml"], {}))  # the same file, however it is named
    with pytest.raises(ConfigError) as err:
        check_owner("default", owner(["mine.yaml"], {}))
    line = str(err.value)
    assert "\n" not in line
    assert line.startswith("run: 'default' belongs to config.yaml (recorded in results/default/run.json); mine.yaml")
    assert "set run: to another name in mine.yaml" in line
    # the same config with another slice under the same explicit name
    with pytest.raises(ConfigError, match=r"^run: 'default' holds config.yaml with no slice .*this slice would"):
        check_owner("default", owner(["config.yaml"], {"seeds": 2}))
    # a second record keeps the first owner
    record_owner("default", owner(["mine.yaml"], {}))
    assert json.loads((tmp_path / "results/default/run.json").read_text())["configs"] == ["config.yaml"]


def test_an_unreadable_owner_record_is_one_line_naming_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results/x").mkdir(parents=True)
    (tmp_path / "results/x/run.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"^results/x/run.json: unreadable \(JSONDecodeError\)"):
        check_owner("x", owner(["c.yaml"], {}))


@pytest.mark.slow
def test_a_run_name_of_digits_reaches_validate_and_snakemake_as_typed(tmp_path):
    """Before: the schema refused the number Snakemake made of run=2024 / run=007 before the name was read."""
    from conftest import ROOT
    from smk import copy_project, smk

    from banditbench.configuration.grid import load_config_file

    work = copy_project(tmp_path, load_config_file(ROOT / "config.yaml"))
    env = {**os.environ, "PYTHONPATH": str(work / "src")}
    for typed in ("007", "2024"):
        validate = subprocess.run(
            [sys.executable, "-m", "banditbench", "validate", "config.yaml", "--config", f"run={typed}"],
            cwd=work, env=env, capture_output=True, text=True,
        )  # fmt: skip
        assert validate.returncode == 0, validate.stderr
        assert f"run: {typed} (its tables, plots and report in results/{typed}/)" in validate.stdout
    plan = smk(work, "-n", "--config", "run=007", "seeds=2", "horizon=40", "only_experiments=linear_delayed_dueling")
    assert plan.returncode == 0, plan.stderr[-2000:]
    said = plan.stdout + plan.stderr
    assert "results/007/" in said and "results/7/" not in said


def test_a_run_name_of_digits_in_a_config_file_is_refused_saying_to_quote_it():
    from banditbench.configuration.grid import load_grid

    with pytest.raises(
        ConfigError, match=r'^run: 2024 is a number; a run name of digits is written in quotes: run: "2024"$'
    ):
        load_grid({"run": 2024, "experiments": {}})


def test_only_a_report_of_results_made_before_is_checked_for_them():
    assert report_only(["snakemake", "--report", "r.html"]) and report_only(["snakemake", "--report=r.html"])
    assert not report_only(["snakemake", "--report", "r.html", "--report-after-run"])
    assert not report_only(["snakemake", "--report-stylesheet", "s.css"]) and not report_only(["snakemake"])
