"""``1e-3`` is a number wherever a config holds one (YAML 1.2, where PyYAML's YAML 1.1 reads a string): in a
config file, in an ``override`` from the command line; a number that still arrives as a string (quoted) is
refused with a message that says it was read as a string."""

import textwrap

import pytest
import yaml

from banditbench.cli import main
from banditbench.configuration import strict_yaml
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.errors import ConfigError

CONFIG = """
ci_level: 9.5E-1
claims_alpha: 5e-2
experiments:
  duel:
    environment: {name: synthetic_dueling, params: {dimension: 3, n_arms: 4}}
    horizon: 40
    seeds: 2
    algorithms:
      ldb: {policy: ldb_df, params: {lam: 1e-3, beta: 5e-1, delta: .5e-1}}
    delays:
      none: {kind: none}
      late: {kind: geometric, mean: 2e1}
  knapsack:
    environment: {name: pbbwk_synthetic}
    horizon: 40
    seeds: 2
    budgets: [3e2]
    algorithms:
      alg1: {policy: pblincbwk_alg1}
    delays:
      none: {kind: none}
"""


@pytest.mark.parametrize(
    "text, value",
    [
        ("1e-3", 0.001),
        ("1E3", 1000.0),
        ("+2e+2", 200.0),
        ("-1.5e3", -1500.0),
        (".5e1", 5.0),
        ("1.e2", 100.0),
        ("1.0e-3", 0.001),  # YAML 1.1 reads this one already
        ("0.5", 0.5),
        ("12", 12),
        ("1_000", 1000),  # YAML 1.1 integers are unchanged
        ("'1e-3'", "1e-3"),  # quoted: a string
        ("1e-3x", "1e-3x"),
        ("e3", "e3"),
        ("1e", "1e"),
    ],
)
def test_the_strict_loader_reads_exponent_floats_as_yaml_1_2_does(text, value):
    loaded = strict_yaml.load(f"x: {text}")["x"]
    assert loaded == value and type(loaded) is type(value)
    if text in ("1e-3", "1E3", "+2e+2", "-1.5e3", ".5e1", "1.e2"):
        assert yaml.safe_load(f"x: {text}")["x"] == text  # what PyYAML's YAML 1.1 makes of it


def test_a_config_file_with_exponent_floats_validates_and_holds_numbers(tmp_path, monkeypatch, capsys):
    path = tmp_path / "numbers.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    config = load_config_file(path)
    assert config["ci_level"] == 0.95 and config["claims_alpha"] == 0.05
    assert config["experiments"]["duel"]["algorithms"]["ldb"]["params"] == {"lam": 0.001, "beta": 0.5, "delta": 0.05}
    grid = load_grid(config)
    assert grid.experiments["knapsack"].budgets == (300.0,)
    cell = grid.cell("duel", "ldb", "late", "none", 0)
    assert cell["policy"]["params"]["lam"] == 0.001 and cell["delay"]["mean"] == 20.0
    monkeypatch.chdir(tmp_path)
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err


def test_an_override_of_1e_3_on_the_command_line_is_a_number(tmp_path, monkeypatch, capsys):
    path = tmp_path / "numbers.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    config = {**load_config_file(path), "override": "ldb.lam=1e-3,2E1"}
    grid = load_grid(config)
    variants = [a for a in grid.experiments["duel"].algorithms if a.startswith("ldb.")]
    assert variants == ["ldb.lam-0.001", "ldb.lam-20.0"]
    assert grid.cell("duel", "ldb.lam-0.001", "none", "none", 0)["policy"]["params"]["lam"] == 0.001
    monkeypatch.chdir(tmp_path)
    assert main(["validate", str(path), "--config", "override=ldb.beta=1e-1", "claims_alpha=1e-2"]) == 0
    assert "duel: 8 runs" in capsys.readouterr().out  # ldb and ldb.beta-0.1


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda c: c["experiments"]["duel"]["algorithms"]["ldb"]["params"].update(lam="1e-3"),
            r"^experiments\.duel\.algorithms\.ldb\.params\.lam: must be a finite number > 0, got '1e-3': "
            r"it was read as a string, not a number \(written in quotes, or read as YAML 1\.1, where 1e-3 is a string\b",
        ),
        (
            lambda c: c.update(ci_level="9e-1"),
            r"^ci_level: must be a number in \(0, 1\), got '9e-1': it was read as a string, not a number",
        ),
        (
            lambda c: c["experiments"]["duel"].update(horizon="40"),
            r"^experiments\.duel\.horizon: must be an integer >= 1, got '40': it was read as a string",
        ),
        (
            lambda c: c["experiments"]["duel"]["delays"]["late"].update(mean="2e1"),
            r"^experiments\.duel\.delays\.late\.mean: .*got '2e1': it was read as a string, not a number",
        ),
    ],
    ids=["parameter", "schema-number", "schema-integer", "delay"],
)
def test_a_number_that_arrives_as_a_string_is_refused_saying_so(tmp_path, mutate, message):
    path = tmp_path / "numbers.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    config = load_config_file(path)
    mutate(config)
    with pytest.raises(ConfigError, match=message):
        load_grid(config)
