import json
import re
import os
import subprocess
import sys

import pytest

from banditbench.cli import main
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.storage.resultio import load_result
from conftest import ROOT, read_only_folder
from smk import members_but_timing


def test_list_shows_every_registered_name_with_parameters(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("synthetic_dueling", "ldb_df", "ldb_ignore", "ldb_heuristic", "random_pair", "geometric"):
        assert name in out
    assert "kappa_mu = 0.1  (a finite number > 0)" in out and "utility = 'linear'  (one of ['linear'," in out
    # each parameter's description (its Doc) follows its type
    assert "kappa_mu = 0.1  (a finite number > 0)  lower bound on the link derivative (Assumption A2)" in out


def test_run_one_from_a_config_cell(tmp_path, capsys):
    out_file = tmp_path / "r.npz"
    code = main(
        [
            "run-one",
            "--config",
            str(ROOT / "config.yaml"),
            "--experiment",
            "linear_delayed_dueling",
            "--algorithm",
            "ldb_df",
            "--delay",
            "geometric_mean50_M20",
            "--seed",
            "1",
            "--horizon",
            "50",
            "--output",
            str(out_file),
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    series, meta, _ = load_result(out_file)
    assert f"cumulative regret: {series['regret'].sum():.4f}" in printed
    assert meta["cell"]["horizon"] == 50 and meta["cell"]["delay"]["window"] == 20


def test_run_one_reports_config_errors_by_name(capsys):
    code = main(
        [
            "run-one",
            "--config",
            str(ROOT / "config.yaml"),
            "--experiment",
            "linear_delayed_dueling",
            "--algorithm",
            "nope",
            "--delay",
            "none",
        ]
    )
    assert code == 2
    assert "experiments.linear_delayed_dueling.algorithms: no entry 'nope'" in capsys.readouterr().err


def test_module_entry_point_runs():
    run = subprocess.run(
        [sys.executable, "-m", "banditbench", "list", "delays"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""},
    )
    assert run.returncode == 0 and "geometric" in run.stdout


def test_validate_counts_the_jobs_and_names_a_bad_key(tmp_path, capsys):
    assert main(["validate", str(ROOT / "config.yaml")]) == 0
    out = capsys.readouterr().out
    assert "linear_delayed_dueling: 96 runs in 8 simulate jobs" in out and f"{ROOT / 'config.yaml'}: valid" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text((ROOT / "config.yaml").read_text().replace("kind: geometric", "kind: poisson", 1))
    assert main(["validate", str(bad)]) == 2
    assert "delays" in capsys.readouterr().err
    assert main(["validate", str(ROOT / "config/neural_logistic.yaml")]) == 0
    assert "summary table obd_final_ctr: ctr, 9 rows x 7 algorithms" in capsys.readouterr().out


def test_list_delays_describes_every_kind_from_its_fields(capsys):
    assert main(["list", "delays"]) == 0
    out = capsys.readouterr().out
    assert "uniform: low (smallest delay; an integer >= 0)" in out
    assert "mean (" in out and "any kind: window (" in out


@pytest.mark.parametrize(
    "experiment, algorithm, delay, budget",
    [
        ("linear_delayed_dueling", "ldb_df", "geometric_mean50_M20", "none"),
        ("knapsack_synthetic", "alg2", "none", "75"),
        ("lipschitz_triangle", "delayed_zooming", "uniform_mean20", "none"),
    ],
)
def test_a_block_of_seeds_writes_the_bytes_of_one_seed_runs(tmp_path, experiment, algorithm, delay, budget):
    """One process running seeds 0, 1, 2 writes, per seed, the file a fresh one-seed process writes."""
    config = load_config_file(ROOT / "config.yaml")
    config["horizon"] = 120
    grid = load_grid(config)
    cell = grid.cell_json(experiment, algorithm, delay, budget, None)  # what a block job is given
    assert "seed" not in json.loads(cell)
    blocks = [tmp_path / f"block{s}.npz" for s in range(3)]
    assert main(["run-block", "--cell", cell, "--seeds", "0", "1", "2", "--outputs", *map(str, blocks)]) == 0
    for seed in (0, 2):
        single = tmp_path / f"single{seed}.npz"
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "banditbench",
                "run-one",
                "--output",
                str(single),
                "--cell",
                grid.cell_json(experiment, algorithm, delay, budget, seed),
            ],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
        )
        assert run.returncode == 0, run.stderr
        assert members_but_timing(blocks[seed]) == members_but_timing(single)
    assert load_result(blocks[1])[1]["seed"] == 1
    assert members_but_timing(blocks[0]) != members_but_timing(blocks[1])


def test_run_block_needs_one_output_per_seed(tmp_path, capsys):
    cell = load_grid(load_config_file(ROOT / "config.yaml")).cell_json(
        "linear_delayed_dueling", "ldb_df", "none", "none", 0
    )
    assert main(["run-block", "--cell", cell, "--seeds", "0", "1", "--outputs", str(tmp_path / "a.npz")]) == 2
    assert "2 seeds but 1 output files" in capsys.readouterr().err
    assert not (tmp_path / "a.npz").exists()


def test_run_block_refuses_cells_that_cannot_share_a_block_in_one_line(tmp_path, capsys):
    grid = load_grid(load_config_file(ROOT / "config.yaml"))
    cells = [grid.cell_json("linear_delayed_dueling", a, "none", "none", None) for a in ("ldb_df", "ldb_ignore")]
    outputs = [str(tmp_path / f"{i}.npz") for i in range(2)]
    assert main(["run-block", "--cell", *cells, "--seeds", "0", "--outputs", *outputs]) == 2
    err = capsys.readouterr().err
    assert "--cell 'ldb_ignore' cannot share a block with 'ldb_df'" in err and "Traceback" not in err
    assert not any(tmp_path.iterdir())


def test_validate_takes_the_slices_and_overrides_snakemake_takes(capsys, monkeypatch):
    """banditbench validate CONFIG --config KEY=VALUE ... parses and merges the entries as snakemake --config does."""
    from conftest import ROOT

    monkeypatch.chdir(ROOT)
    argv = [
        "validate",
        "config.yaml",
        "--config",
        "only_experiments=linear_delayed_dueling",
        "override=ldb_df.beta=0.5,2",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    full = main(["validate", "config.yaml", "--config", "only_experiments=linear_delayed_dueling"])
    assert full == 0
    base = int(re.search(r"(\d+) runs", capsys.readouterr().out).group(1))
    sliced = int(re.search(r"valid, 1 experiments, (\d+) runs", out).group(1))
    assert sliced > base  # two variants' runs added
    assert main(["validate", "config.yaml", "--config", "override=ldb_df.beta=0.5 ldb_df.beta=2"]) == 2
    assert "a second time" in capsys.readouterr().err
    assert main(["validate", "config.yaml", "--config", "seeds"]) == 2
    assert "--config:" in capsys.readouterr().err


def test_validate_names_the_run_and_refuses_another_configs_run_name_as_snakemake_would(tmp_path, capsys, monkeypatch):
    """validate prints the run's results folder (a slice's own, or --config run=NAME) and refuses, in one line, a
    config that names a run another config owns (results/<run>/run.json), as planning does."""
    from banditbench.configuration.runs import owner, record_owner

    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text((ROOT / "config.yaml").read_text())
    assert main(["validate", "config.yaml"]) == 0
    assert "run: default (its tables, plots and report in results/default/)" in capsys.readouterr().out
    assert main(["validate", "config.yaml", "--config", "only_experiments=linear_delayed_dueling"]) == 0
    assert re.search(r"run: default\.slice-[0-9a-f]{8} ", capsys.readouterr().out)
    assert main(["validate", "config.yaml", "--config", "run=mine", "seeds=2"]) == 0
    assert "run: mine (" in capsys.readouterr().out
    # a copy of config.yaml runs as its own run; one that names run: default is refused
    (tmp_path / "copy.yaml").write_text((ROOT / "config.yaml").read_text())
    assert main(["validate", "copy.yaml"]) == 0
    assert "run: copy (" in capsys.readouterr().out
    record_owner("default", owner(["config.yaml"], {}))
    (tmp_path / "copy.yaml").write_text("run: default\n" + (ROOT / "config.yaml").read_text())
    assert main(["validate", "copy.yaml"]) == 2
    err = capsys.readouterr().err
    assert "run: 'default' belongs to config.yaml (recorded in results/default/run.json); copy.yaml" in err
    assert err.count("\n") == 1 and "Traceback" not in err


#: a small config that states a claim (for the claims command)
CLAIMS_CONFIG = {
    "experiments": {
        "duel": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
            "horizon": 20,
            "seeds": 2,
            "algorithms": {"ldb": {"policy": "ldb_df"}, "random": {"policy": "random_pair"}},
            "delays": {"none": {"kind": "none"}},
        }
    },
    "claims": {
        "ldb_wins": {"paper": "000", "where": "Sec. 5", "quote": "LDB-DF beats random duels", "experiment": "duel",
                     "metric": "cumulative_regret", "a": "ldb", "b": "random", "relation": "less"},
    },
}  # fmt: skip


def test_every_command_that_takes_a_path_refuses_a_missing_or_wrong_one_in_one_line(tmp_path, capsys, monkeypatch):
    """claims, validate, provenance, checksum, run-one, list, check: a path that does not exist (or is a file where a
    folder belongs) exits non-zero with one line naming it, before any work."""
    import yaml

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(CLAIMS_CONFIG))
    (tmp_path / "notes.txt").write_text("a file\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "folder").mkdir()
    one_cell = ["--config", "c.yaml", "--experiment", "duel", "--algorithm", "ldb", "--delay", "none"]
    cases = [
        (["claims", "c.yaml", "--results", "nowhere"], "--results: nowhere: no such folder"),
        (["claims", "c.yaml", "--results", "notes.txt"], "--results: notes.txt: a file, not a folder"),
        (["claims", "c.yaml"], "results/c: no such folder: run 'c' of c.yaml has no results under results ("),
        (["claims", "missing.yaml"], "missing.yaml: config file does not exist"),
        (["claims", "folder"], "folder: a folder, not a config file"),
        (["claims", "c.yaml", "--csv", "nowhere/c.csv"], "--csv: nowhere: no such folder (for nowhere/c.csv)"),
        (["claims", "missing.yaml", "--until-decided", "--max-seeds", "4"], "missing.yaml: config file does not"),
        (["validate", "missing.yaml"], "missing.yaml: config file does not exist"),
        (["validate", "folder"], "folder: a folder, not a config file"),
        (["provenance", "nowhere"], "nowhere: no such folder"),
        (["provenance", "notes.txt"], "notes.txt: a file, not a folder"),
        (["checksum", "nowhere.zip"], "nowhere.zip: no such file"),
        (["run-one", "--config", "missing.yaml", "--experiment", "duel", "--algorithm", "ldb", "--delay", "none"],
         "missing.yaml: config file does not exist"),
        (["run-one", *one_cell, "--output", "notes.txt/r.npz"], "--output: notes.txt is a file, not a folder"),
        (["run-one", *one_cell, "--output", "folder"], "--output: folder is a folder, not a file"),
        (["list", "--plugins", "nowhere.py"], "--plugins[0]: no such file 'nowhere.py'"),
        (["check", "ldb_df", "--plugins", "nowhere.py"], "--plugins[0]: no such file 'nowhere.py'"),
    ]  # fmt: skip
    for argv, message in cases:
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert err.startswith(f"banditbench: configuration error: {message}") and err.count("\n") == 1, (argv, err)
    assert not (tmp_path / "results/runs").exists()  # nothing ran


def test_a_file_a_command_cannot_write_is_one_line_naming_it(tmp_path, capsys, monkeypatch):
    """An output that cannot be written for another reason than a full or read-only disk (no permission) is one
    line naming the file, not a traceback."""
    import yaml

    monkeypatch.chdir(tmp_path)
    read_only = read_only_folder(tmp_path)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(CLAIMS_CONFIG))
    one_cell = ["--config", "c.yaml", "--experiment", "duel", "--algorithm", "ldb", "--delay", "none"]
    assert main(["run-one", *one_cell, "--output", str(read_only / "r.npz")]) == 2
    err = capsys.readouterr().err
    assert err == f"banditbench: configuration error: --output: cannot write {read_only / 'r.npz'}: Permission denied\n"
    (tmp_path / "results/c").mkdir(parents=True)  # the run's folder, no tables yet: every claim "not run"
    assert main(["claims", "c.yaml", "--csv", str(read_only / "c.csv")]) == 4
    err = capsys.readouterr().err
    assert err == f"banditbench: {read_only / 'c.csv'}: Permission denied\n"
