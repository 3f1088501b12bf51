"""The Python API (banditbench.workbench): a config sliced and overridden as on the command line, refused in the
command line's one-line errors; a run that reuses the result files in place and simulates only the missing or
damaged ones; no prepared data, no run."""

import shutil
import traceback
from pathlib import Path

import pytest

import banditbench
from banditbench import cli
from banditbench.errors import ConfigError
from conftest import ROOT
from smk import members_but_timing

DUEL = {
    "run": "duel",
    "experiments": {
        "duel": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
            "horizon": 60,
            "seeds": 4,
            "seeds_per_job": 2,
            "table_horizons": [30, 60],
            "algorithms": {"ldb_df": {"policy": "ldb_df"}, "ldb_zero": {"policy": "ldb_zero"}},
            "delays": {"none": {"kind": "none"}},
        }
    },
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A scratch project folder holding the default config, as the working directory."""
    shutil.copy(ROOT / "config.yaml", tmp_path / "config.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _validate_error(capsys, *entries: str) -> str:
    """What ``banditbench validate config.yaml --config ENTRIES`` says is wrong."""
    assert cli.main(["validate", "config.yaml", "--config", *entries]) == 2
    return capsys.readouterr().err.strip().removeprefix("banditbench: configuration error: ")


@pytest.mark.parametrize(
    ("overrides", "entries", "key"),
    [
        ({"override": "ldb_df.lamm=2"}, ["override=ldb_df.lamm=2"], "override"),
        (
            {"only_experiments": "linear_delayed_duelling"},
            ["only_experiments=linear_delayed_duelling"],
            "only_experiments",
        ),
        ({"sedes": 2}, ["sedes=2"], "sedes"),
    ],
)
def test_a_bad_override_is_the_command_lines_one_line_error_naming_its_key(project, capsys, overrides, entries, key):
    with pytest.raises(ConfigError) as caught:
        banditbench.Grid("config.yaml", **overrides)
    message = str(caught.value)
    assert "\n" not in message and key in message
    assert message == _validate_error(capsys, *entries)
    # raised from the API, not from deep inside the validation: no frame outside this test and workbench.py
    files = {Path(frame.filename).name for frame in traceback.extract_tb(caught.value.__traceback__)}
    assert files <= {"test_workbench.py", "workbench.py"}
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_slice_is_the_command_lines_slice_and_run(project):
    grid = banditbench.Grid(
        "config.yaml", only_experiments="linear_delayed_dueling", only_algorithms=["ldb_df", "random"]
    )
    assert grid.experiments == ["linear_delayed_dueling"]
    assert grid.grid.experiments["linear_delayed_dueling"].algorithms == ["ldb_df", "random"]
    # a list is named as the command line's comma-separated string: the run Snakemake gives this slice
    from banditbench.configuration.runs import run_name

    config = dict(grid.config, only_algorithms="ldb_df,random")
    assert grid.run_name == run_name(config, ["config.yaml"], {}) != "default"
    variant = grid.with_overrides(override="ldb_df.lam=2", seeds=2)
    assert variant.grid.experiments["linear_delayed_dueling"].algorithms == ["ldb_df", "ldb_df.lam-2", "random"]
    assert len(variant.result_files()) == 3 * 2 * 2  # algorithms x delays x seeds


def _files() -> dict[Path, int]:
    """The per-seed result files under the working directory, with their modification times."""
    return {p: p.stat().st_mtime_ns for p in sorted(Path("results/runs").rglob("*.npz"))}


def test_a_run_simulates_only_the_result_files_missing_or_damaged(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    grid = banditbench.Grid(DUEL)
    first = grid.run()
    made = _files()
    assert sorted(first.simulated) == sorted(grid.result_files()) and first.reused == []
    assert [Path(f) for f in sorted(grid.result_files())] == sorted(made)
    assert len(list((tmp_path / "logs/simulate/duel").rglob("seeds_*.log"))) == 4  # 2 algorithms x 2 blocks

    again = grid.run()
    assert again.simulated == [] and sorted(again.reused) == sorted(grid.result_files())
    assert _files() == made  # not even rewritten

    deleted, damaged = sorted(made)[0], sorted(made)[-1]
    before = {p: members_but_timing(p) for p in (deleted, damaged)}
    deleted.unlink()
    damaged.write_bytes(damaged.read_bytes()[:-20])
    third = grid.run()
    assert sorted(third.simulated) == sorted(str(p) for p in (deleted, damaged))
    after = _files()
    assert {p: after[p] for p in made if p not in (deleted, damaged)} == {
        p: t for p, t in made.items() if p not in (deleted, damaged)
    }
    assert {p: members_but_timing(p) for p in (deleted, damaged)} == before  # the same bytes again
    assert third.tidy().equals(first.tidy())


def test_a_grid_whose_prepared_data_is_missing_does_not_run(project):
    grid = banditbench.Grid("config.yaml", only_experiments="digits_reward", seeds=1)
    with pytest.raises(
        ConfigError, match=r"^experiments\.digits_reward\.environment: .*data/processed/digits/.*snakemake"
    ):
        grid.run()
    assert not (project / "results").exists()


def test_the_results_name_their_experiments_when_asked_for_another(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results = banditbench.Grid(DUEL).run()
    assert results.experiments == ["duel"]
    assert list(results.paired()["a"].unique()) == ["ldb_df"]
    assert results.claims is None  # the grid states no claims
    with pytest.raises(ConfigError, match=r"'dual' is not one of these results; name one of \['duel'\]"):
        results.tidy("dual")
