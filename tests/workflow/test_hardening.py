"""What the pipeline refuses (issue 15): every bad input stopped before any job, named by its key or file.

Classes of bad input, each a list of cases below: parameter values (types, ranges,
finiteness, relations), environment <-> policy compatibility, dataset and option
names, data files (path escapes, files nothing builds), delays, budgets and their
labels, memory of a job against its ``resources.mem_mb``, labels, YAML files and the
command line.  Then fault injection: truncated, garbled and copied result files,
prepared data files and oracles, raw files edited after their download, and the
pipeline's reaction to them (moved aside and rebuilt before any job, never used).
The end-to-end runs (Snakemake on a copy of the project) are marked slow.
"""

from __future__ import annotations

import copy
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from banditbench import params
from banditbench import registry
from banditbench.analysis.aggregate import aggregate_runs, read_tidy
from banditbench.cli import main
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.storage.cells import cell_dir
from banditbench.data import quarantine, verify
from banditbench.data.files import save_npz
from banditbench.data.paths import processed_path
from banditbench.data.preprocess import load_prepared, prepare, save_prepared
from banditbench.errors import ConfigError, CorruptFileError
from banditbench.storage.logs import rule_log
from banditbench.storage.resultio import budget_label, load_result, run_identity, save_result
from banditbench.simulation.job import run_cell
from banditbench.simulation.runner import build
from conftest import MIRROR, ROOT, needs_mirror

BASE = load_config_file(ROOT / "config.yaml")
del BASE["claims"]  # they name the grid's cells, which these tests reshape
LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # the wildcard constraint of every label


def _exp(cfg, name):
    return cfg["experiments"][name]


def _params(cfg, experiment, algorithm=None):
    entry = _exp(cfg, experiment)["algorithms"][algorithm] if algorithm else _exp(cfg, experiment)["environment"]
    return entry.setdefault("params", {})


def _add(cfg, name, environment, algorithms, **extra):
    cfg["experiments"][name] = {
        "environment": environment,
        "horizon": 100,
        "seeds": 1,
        "algorithms": algorithms,
        "delays": {"none": {"kind": "none"}},
        **extra,
    }


def _car(oracle):
    return lambda c: _add(
        c,
        "car",
        {"name": "car_moderation", "params": {"oracle": oracle}},
        {"alg1": {"policy": "pblincbwk_alg1"}},
        budgets=[30],
    )


LDB, NDB, KNAP, LIP, DIG = (
    "linear_delayed_dueling",
    "neural_delayed_dueling",
    "knapsack_synthetic",
    "lipschitz_triangle",
    "digits_reward",
)
NAN, INF = float("nan"), float("inf")

# (case id, mutation of the default config, the start of the expected message: the full key path)
BAD_CONFIGS = [
    # --- policy parameter values: types, ranges, finiteness, relations ---------------------------------
    (
        "ldb-beta-negative",
        lambda c: _params(c, LDB, "ldb_df").update(beta=-1),
        f"experiments.{LDB}.algorithms.ldb_df.params.beta: must be a finite number >= 0 or 'theory', got -1",
    ),
    (
        "ldb-beta-typo",
        lambda c: _params(c, LDB, "ldb_df").update(beta="thoery"),
        f"experiments.{LDB}.algorithms.ldb_df.params.beta: must be",
    ),
    (
        "ldb-lam-zero",
        lambda c: _params(c, LDB, "ldb_df").update(lam=0),
        f"experiments.{LDB}.algorithms.ldb_df.params.lam: must be a finite number > 0, got 0",
    ),
    (
        "ldb-lam-nan",
        lambda c: _params(c, LDB, "ldb_ignore").update(lam=NAN),
        f"experiments.{LDB}.algorithms.ldb_ignore.params.lam: must be a finite number > 0, got nan",
    ),
    (
        "ldb-delta-above-one",
        lambda c: _params(c, LDB, "ldb_df").update(delta=1.5),
        f"experiments.{LDB}.algorithms.ldb_df.params.delta: must be a finite number > 0 and < 1",
    ),
    (
        "ldb-newton-steps-float",
        lambda c: _params(c, LDB, "ldb_zero_extra").update(max_newton_steps=2.5),
        f"experiments.{LDB}.algorithms.ldb_zero_extra.params.max_newton_steps: must be an integer >= 1, got 2.5",
    ),
    (
        "ldb-tol-bool",
        lambda c: _params(c, LDB, "ldb_df").update(tol=True),
        f"experiments.{LDB}.algorithms.ldb_df.params.tol: must be a finite number > 0, got True",
    ),
    (
        "dlpp-delta-negative",
        lambda c: _params(c, LIP, "dlpp").update(delta=-1),
        f"experiments.{LIP}.algorithms.dlpp.params.delta: must be a finite number > 0 and < 1, got -1",
    ),
    (
        "zooming-lazy-rule",
        lambda c: _params(c, LIP, "delayed_zooming").update(lazy_rule="often"),
        f"experiments.{LIP}.algorithms.delayed_zooming.params.lazy_rule: must be one of ['count', 'radius']",
    ),
    (
        "zooming-capacity-zero",
        lambda c: _params(c, LIP, "delayed_zooming").update(initial_capacity=0),
        f"experiments.{LIP}.algorithms.delayed_zooming.params.initial_capacity: must be an integer >= 1",
    ),
    (
        "linucb-alpha-inf",
        lambda c: _params(c, DIG, "linucb").update(alpha=INF),
        f"experiments.{DIG}.algorithms.linucb.params.alpha: must be a finite number >= 0, got inf",
    ),
    (
        "linucb-mode",
        lambda c: _params(c, DIG, "linucb").update(mode="joint"),
        f"experiments.{DIG}.algorithms.linucb.params.mode: must be one of ['shared', 'disjoint'], got 'joint'",
    ),
    (
        "cdexp3-warmup-beyond-horizon",
        lambda c: _params(c, KNAP, "cd_exp3_reconstructed").update(warmup_rounds=500),
        f"experiments.{KNAP}.algorithms.cd_exp3_reconstructed.params.warmup_rounds: must lie in [0, horizon = 500)",
    ),
    (
        "cdexp3-gamma",
        lambda c: _params(c, KNAP, "cd_exp3_reconstructed").update(gamma=1.5),
        f"experiments.{KNAP}.algorithms.cd_exp3_reconstructed.params.gamma: must be a finite number > 0 and <= 1 or null",
    ),
    (
        "alg1-p-fail-one",
        lambda c: _params(c, KNAP, "alg1").update(p_fail=1),
        f"experiments.{KNAP}.algorithms.alg1.params.p_fail: must be a finite number > 0 and < 1 or null",
    ),
    (
        "alg1-kappa-word",
        lambda c: _params(c, KNAP, "alg1").update(kappa="auto"),
        f"experiments.{KNAP}.algorithms.alg1.params.kappa: must be a finite number > 0 or 'theory', got 'auto'",
    ),
    (
        "ndb-odd-width",
        lambda c: _params(c, NDB, "ndb_df").update(width=7),
        f"experiments.{NDB}.algorithms.ndb_df.params.width: need an even width",
    ),
    (
        "ndb-theory-without-dimension",
        lambda c: _params(c, NDB, "ndb_df").update(nu="theory"),
        f"experiments.{NDB}.algorithms.ndb_df.params.effective_dimension: nu = 'theory' (eq. 11) needs",
    ),
    (
        "ndb-train-every-zero",
        lambda c: _params(c, NDB, "ndb_ignore").update(train_every=0),
        f"experiments.{NDB}.algorithms.ndb_ignore.params.train_every: must be an integer >= 1 or 'doubling'",
    ),
    (
        "ndb-confidence",
        lambda c: _params(c, NDB, "ndb_df").update(confidence="low-rank"),
        f"experiments.{NDB}.algorithms.ndb_df.params.confidence: must be one of ['full', 'diagonal', 'auto'], got 'low-rank'",
    ),
    # --- environment parameter values ------------------------------------------------------------------
    (
        "dimension-string",
        lambda c: _params(c, LDB).update(dimension="abc"),
        f"experiments.{LDB}.environment.params.dimension: must be an integer >= 1, got 'abc'",
    ),
    (
        "one-arm",
        lambda c: _params(c, LDB).update(n_arms=1),
        f"experiments.{LDB}.environment.params.n_arms: must be an integer >= 2, got 1",
    ),
    (
        "utility-name",
        lambda c: _params(c, LDB).update(utility="sigmoid"),
        f"experiments.{LDB}.environment.params.utility: must be one of ['linear',",
    ),
    (
        "noise-sigma-nan",
        lambda c: _params(c, LIP).update(noise_sigma=NAN),
        f"experiments.{LIP}.environment.params.noise_sigma: must be a finite number >= 0, got nan",
    ),
    (
        "lipschitz-function",
        lambda c: _params(c, LIP).update(function="quadratic"),
        f"experiments.{LIP}.environment.params.function: must be one of ['triangle', 'sine', 'two_dim']",
    ),
    (
        "knapsack-lists-of-unequal-length",
        lambda c: _params(c, KNAP).update(rewards=[0.1, 0.2, 0.3]),
        f"experiments.{KNAP}.environment.params.rewards: rewards and costs need to be two lists of equal length",
    ),
    (
        "knapsack-negative-cost",
        lambda c: _params(c, KNAP).update(costs=[0.1, -0.2, 0.3, 0.4]),
        f"experiments.{KNAP}.environment.params.costs: must be a list of finite numbers >= 0",
    ),
    (
        "knapsack-bernoulli-above-one",
        lambda c: _params(c, KNAP).update(rewards=[0.1, 0.2, 0.4, 1.7]),
        f"experiments.{KNAP}.environment.params.noise: 'bernoulli' needs rewards and costs in [0, 1]",
    ),
    (
        "knapsack-noise-std-zero",
        lambda c: _params(c, KNAP).update(noise="gaussian", noise_std=0),
        f"experiments.{KNAP}.environment.params.noise_std: must be a finite number > 0, got 0",
    ),
    # --- dataset, option and task names ----------------------------------------------------------------
    (
        "unknown-dataset",
        lambda c: _params(c, DIG).update(dataset="mnist2"),
        f"experiments.{DIG}.environment.params.dataset: must be one of ['mnist', 'digits',",
    ),
    (
        "preprocessing-option-value",
        lambda c: _params(c, DIG).update(preprocessing={"image_size": 3}),
        f"experiments.{DIG}.environment.params.preprocessing.image_size: 3 is not one of [1, 2, 4, 8]",
    ),
    (
        "preprocessing-option-name",
        lambda c: _params(c, DIG).update(preprocessing={"size": 4}),
        f"experiments.{DIG}.environment.params.preprocessing: unknown option(s) ['size']",
    ),
    (
        "sampling",
        lambda c: _params(c, DIG).update(sampling="random"),
        f"experiments.{DIG}.environment.params.sampling: must be one of ['shuffle', 'uniform'], got 'random'",
    ),
    (
        "oracle-model",
        lambda c: _params(c, DIG).update(reward="classifier", oracle={"model": "svm"}),
        f"experiments.{DIG}.environment.params.oracle.model: 'svm' is not one of",
    ),
    (
        "prompt-tasks-repeated",
        lambda c: _add(
            c, "prompts", {"name": "prompt_dueling", "params": {"tasks": ["sum", "sum"]}}, {"ldb": {"policy": "ldb_df"}}
        ),
        "experiments.prompts.environment.params.tasks: need a non-empty list of distinct tasks",
    ),
    (
        "prompt-task-unscored",
        lambda c: _add(
            c,
            "prompts",
            {"name": "prompt_dueling", "params": {"tasks": ["sum", "translation"]}},
            {"ldb": {"policy": "ldb_df"}},
        ),
        "experiments.prompts.environment.params.tasks: 'translation' has no LLM-scored instructions",
    ),
    # --- environment <-> policy compatibility ----------------------------------------------------------
    (
        "linucb-on-lipschitz",
        lambda c: _exp(c, LIP)["algorithms"].update(lin={"policy": "linucb"}),
        f"experiments.{LIP}.algorithms.lin.policy: 'linucb' plays 'arm' actions but environment 'lipschitz' "
        f"takes 'point' actions",
    ),
    (
        "ldb-on-knapsack",
        lambda c: _exp(c, KNAP)["algorithms"].update(ldb={"policy": "ldb_df"}),
        f"experiments.{KNAP}.algorithms.ldb.policy: 'ldb_df' learns from 'preference' feedback but environment "
        f"'pbbwk_synthetic' gives 'preference_cost' or 'reward_cost'",
    ),
    (
        "dlpp-on-dueling",
        lambda c: _exp(c, LDB)["algorithms"].update(dlpp={"policy": "dlpp"}),
        f"experiments.{LDB}.algorithms.dlpp.policy: 'dlpp' learns from 'reward' feedback",
    ),
    # --- data files: path escapes, files that nothing builds -------------------------------------------
    (
        "oracle-absolute-path",
        _car("/etc/passwd"),
        "experiments.car.environment.params.oracle: '/etc/passwd' lies outside the project",
    ),
    (
        "oracle-parent-path",
        _car("../../planted.npz"),
        "experiments.car.environment.params.oracle: '../../planted.npz' lies outside the project",
    ),
    (
        "oracle-sneaking-out",
        _car("data/../../planted.npz"),
        "experiments.car.environment.params.oracle: 'data/../../planted.npz' lies outside the project",
    ),
    (
        "oracle-nobody-builds",
        _car("data/oracles/my_oracle.npz"),
        "experiments.car.environment.params.oracle: 'data/oracles/my_oracle.npz' does not exist and no rule",
    ),
    (
        "data-root-missing",
        lambda c: c.update(data_root="/nonexistent/banditbench-data"),
        "data_root: '/nonexistent/banditbench-data' is not a directory",
    ),
    # --- delays ----------------------------------------------------------------------------------------
    (
        "geometric-mean-nan",
        lambda c: _exp(c, LIP)["delays"].update(g={"kind": "geometric", "mean": NAN}),
        f"experiments.{LIP}.delays.g.mean: must be a finite number >= 1, got nan",
    ),
    (
        "geometric-mean-inf",
        lambda c: _exp(c, LIP)["delays"].update(g={"kind": "geometric", "mean": INF}),
        f"experiments.{LIP}.delays.g.mean: must be a finite number >= 1, got inf",
    ),
    (
        "uniform-high-below-low",
        lambda c: _exp(c, LIP)["delays"].update(u={"kind": "uniform", "low": 5, "high": 2}),
        f"experiments.{LIP}.delays.u.high: must be >= low (5), got 2",
    ),
    (
        "window-censors-everything",
        lambda c: _exp(c, LIP)["delays"].update(g={"kind": "geometric", "mean": 5, "window": 0}),
        f"experiments.{LIP}.delays.g: the window 0 censors every feedback",
    ),
    # --- budgets and their labels ----------------------------------------------------------------------
    (
        "budget-infinite",
        lambda c: _exp(c, KNAP).update(budgets=[75, INF]),
        f"experiments.{KNAP}.budgets.1: must be a finite number > 0, got inf",
    ),
    (
        "budget-zero",
        lambda c: _exp(c, KNAP).update(budgets=[0]),
        f"experiments.{KNAP}.budgets.0: 0 is less than or equal to the minimum of 0",
    ),
    (
        "budget-without-budgeted-environment",
        lambda c: _exp(c, LDB).update(budgets=[300]),
        f"experiments.{LDB}.budgets: environment 'synthetic_dueling' has no budget",
    ),
    (
        "budget-missing",
        lambda c: _exp(c, KNAP).update(budgets=[None]),
        f"experiments.{KNAP}.budgets: environment 'pbbwk_synthetic' needs a budget",
    ),
    # --- memory of one job against its resources.mem_mb ------------------------------------------------
    (
        "horizon-10-to-the-12",
        lambda c: _exp(c, LDB).update(horizon=10**12),
        f"experiments.{LDB}.resources.mem_mb: a simulate job of algorithm 'ldb_df' needs at least",
    ),
    (
        "arms-times-dimension",
        lambda c: _params(c, LDB).update(n_arms=10**5, dimension=10**4),
        f"experiments.{LDB}.resources.mem_mb: a simulate job of algorithm 'ldb_df' needs at least",
    ),
    (
        "wide-network-full-confidence",
        lambda c: _params(c, NDB, "ndb_df").update(width=4096),
        f"experiments.{NDB}.resources.mem_mb: a simulate job of algorithm 'ndb_df' needs at least",
    ),
    (
        "mem-mb-below-the-arrays",
        lambda c: _exp(c, LIP).update(horizon=10**7, table_horizons=[10**7], resources={"mem_mb": 100}),
        f"experiments.{LIP}.resources.mem_mb: a simulate job of algorithm 'delayed_zooming' needs at least",
    ),
    # --- labels ---------------------------------------------------------------------------------------
    (
        "labels-differing-in-case",
        lambda c: _exp(c, LDB)["algorithms"].update(LDB_DF={"policy": "ldb_df"}),
        f"experiments.{LDB}.algorithms: labels 'ldb_df' and 'LDB_DF' name the same files",
    ),
    (
        "experiments-differing-in-case",
        lambda c: c["experiments"].update(Digits_Reward=_exp(c, DIG)),
        "experiments: labels 'digits_reward' and 'Digits_Reward' name the same files",
    ),
    (
        "label-with-a-slash",
        lambda c: _exp(c, LDB)["delays"].update({"geo/20": {"kind": "none"}}),
        f"experiments.{LDB}.delays: 'geo/20' does not match",
    ),
    # --- the top level --------------------------------------------------------------------------------
    (
        "top-level-typo",
        lambda c: c.update(seedz=3),
        "<top level>: Additional properties are not allowed ('seedz' was unexpected)",
    ),
    (
        "seeds-override-zero",
        lambda c: c.update(seeds=0),
        "seeds: 0 is less than the minimum of 1",
    ),
]


@pytest.mark.parametrize("mutate, message", [c[1:] for c in BAD_CONFIGS], ids=[c[0] for c in BAD_CONFIGS])
def test_a_bad_value_is_refused_before_any_job_naming_its_key(mutate, message):
    cfg = copy.deepcopy(BASE)
    mutate(cfg)
    with pytest.raises(ConfigError) as err:
        load_grid(cfg)
    assert str(err.value).startswith(message), str(err.value)
    assert len(str(err.value)) < 1200  # one message, never the schema


def test_at_least_forty_bad_configurations_across_the_classes():
    assert len(BAD_CONFIGS) >= 40 and len({c[0] for c in BAD_CONFIGS}) == len(BAD_CONFIGS)


def test_the_shipped_defaults_and_an_explicit_data_root_pass(tmp_path, monkeypatch):
    load_grid(copy.deepcopy(BASE))
    root = tmp_path / "shared-data"
    (root / "oracles").mkdir(parents=True)
    save_npz(root / "oracles" / "car.npz", {"x": np.zeros(1)}, {})  # planning reads its header only
    cfg = copy.deepcopy(BASE)
    _car(str(root / "oracles" / "car.npz"))(cfg)
    with pytest.raises(ConfigError, match="lies outside the project"):
        load_grid(cfg)
    cfg["data_root"] = str(root)
    grid = load_grid(cfg)
    assert grid.data_files("car") == [str(root / "oracles" / "car.npz")]
    assert grid.cell("car", "alg1", "none", "30", 0)["data_root"] == str(root)  # the job checks it again


def test_a_linked_data_folder_inside_the_project_is_inside(tmp_path, monkeypatch):
    """Path checks are lexical: data/ may be a link to other storage (a common cluster layout)."""
    elsewhere = tmp_path / "scratch"
    (elsewhere / "oracles").mkdir(parents=True)
    save_npz(elsewhere / "oracles" / "mine.npz", {"x": np.zeros(1)}, {})  # planning reads its header only
    project = tmp_path / "project"
    project.mkdir()
    (project / "data").symlink_to(elsewhere, target_is_directory=True)
    monkeypatch.chdir(project)
    cfg = copy.deepcopy(BASE)
    _car("data/oracles/mine.npz")(cfg)
    assert load_grid(cfg).data_files("car") == ["data/oracles/mine.npz"]


def test_every_registered_class_declares_its_action_kind_and_what_each_parameter_may_be():
    """What the validator relies on, for every family present and to come."""
    for table in (registry.environments(), registry.policies()):
        for name, entry in table.items():
            cls = entry.load()
            assert cls.action_kind in ("arm", "pair", "point"), name
            undeclared = [key for key, hint in params.hints(cls).items() if hint is Any]
            assert not undeclared, f"{name}: parameters without an annotation {undeclared}"


# --- labels ---------------------------------------------------------------------------------------------


def test_budget_labels_are_injective_valid_wildcards():
    assert budget_label(75) == budget_label(75.0) == "75" and budget_label(None) == "none"
    assert budget_label(1e6) == "1000000" and budget_label(1000000.5) == "1000000.5"  # not both "1e+06"
    assert budget_label(1e20) == "1e20" and budget_label(2.5e-7) == "2.5e-07"
    values = np.random.default_rng(0).lognormal(3, 6, size=20_000)
    values = np.concatenate([values, np.round(values), [1e6, 1e6 + 1, 1e15, 1e16, 1e16 + 2, 12345678.9]])
    labels = {budget_label(float(v)) for v in np.unique(values)}
    assert len(labels) == len(np.unique(values)) and all(LABEL.match(label) for label in labels)


def test_budgets_of_a_million_and_more_run_as_jobs():
    cfg = copy.deepcopy(BASE)
    _exp(cfg, KNAP).update(budgets=[1e6, 1000000.5, 2.5e7])
    grid = load_grid(cfg)
    assert grid.experiments[KNAP].budget_labels == ["1000000", "1000000.5", "25000000"]
    assert grid.cell(KNAP, "alg1", "none", "1000000.5", 0)["budget"] == 1000000.5


# --- YAML files -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "experiments:\n  a: {horizon: 5}\n  a: {horizon: 6}\n",
            "{path}:3:3: duplicate key 'a' (first given on line 2)",
        ),
        ("seeds: 2\nexperiments:\n  a: [1, 2\n", "{path}:4:1: expected ',' or ']'"),
        ("seeds: 2\n  horizon: 3\n", "{path}:2:10: mapping values are not allowed here"),
        ("- just\n- a list\n", "{path}: a config is a mapping of keys"),
    ],
    ids=["duplicate-key", "unclosed-list", "bad-indentation", "not-a-mapping"],
)
def test_yaml_errors_name_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config_file(path)
    assert str(err.value).startswith(message.format(path=path)), str(err.value)


def test_two_algorithms_with_one_label_are_refused_not_merged(tmp_path, capsys):
    line = "      ldb_ignore: {policy: ldb_ignore}\n"
    text = (ROOT / "config.yaml").read_text()
    assert line in text
    text = text.replace(line, line + "      ldb_df: {policy: ldb_zero}\n", 1)
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    assert re.search(
        rf"{re.escape(str(path))}:\d+:\d+: duplicate key 'ldb_df' \(first given on line \d+\)", capsys.readouterr().err
    )


# --- the command line -----------------------------------------------------------------------------------

RUN = [
    "run-one",
    "--config",
    str(ROOT / "config.yaml"),
    "--experiment",
    LDB,
    "--algorithm",
    "ldb_df",
    "--delay",
    "none",
]


@pytest.mark.parametrize(
    "argv, message",
    [
        (RUN + ["--horizon", "0"], "argument --horizon: the horizon must be >= 1, got 0"),
        (RUN + ["--horizon", "ten"], "argument --horizon: 'ten' is not an integer"),
        (RUN + ["--seed", "abc"], "argument --seed: 'abc' is not an integer"),
        (RUN + ["--seed", "-1"], "argument --seed: the seed must be >= 0, got -1"),
    ],
    ids=["horizon-zero", "horizon-word", "seed-word", "seed-negative"],
)
def test_cli_arguments_are_validated(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize(
    "cell, message",
    [
        ("{not json", "--cell: not valid JSON"),
        ('["a list"]', "--cell: a resolved cell is a JSON object"),
        ('{"experiment": "e"}', "--cell: the cell lacks ['algorithm', 'delay', 'delay_label', 'environment'"),
    ],
    ids=["not-json", "not-an-object", "incomplete"],
)
def test_a_bad_cell_argument_is_named(cell, message, capsys):
    assert main(["run-one", "--cell", cell]) == 2
    assert message in capsys.readouterr().err


def test_the_horizon_override_is_applied(tmp_path):
    out = tmp_path / "r.npz"
    assert main(RUN + ["--horizon", "7", "--output", str(out), "--no-progress"]) == 0
    assert load_result(out)[1]["cell"]["horizon"] == 7


# --- the job's second line of defence -------------------------------------------------------------------

CELL = {
    "experiment": "e",
    "algorithm": "a",
    "delay_label": "none",
    "seed": 0,
    "horizon": 50,
    "budget": 20,
    "environment": {"name": "pbbwk_synthetic", "params": {}},
    "policy": {"name": "pblincbwk_alg1", "params": {}},
    "delay": {"kind": "none"},
}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"horizon": 0}, "horizon: the cell's horizon must be an integer >= 1, got 0"),
        ({"seed": "abc"}, "seed: the cell's seed must be an integer >= 0, got 'abc'"),
        (
            {"environment": {"name": "car_moderation", "params": {"oracle": "/etc/passwd"}}},
            "experiments.e.environment.params.oracle: '/etc/passwd' lies outside the project",
        ),
        (
            {"policy": {"name": "pblincbwk_alg1", "params": {"lam": NAN}}},
            "experiments.e.algorithms.a.params.lam: must be a finite number > 0, got nan",
        ),
    ],
    ids=["horizon", "seed", "path-escape", "nan"],
)
def test_a_hand_written_cell_is_checked_again_by_the_job(change, message):
    with pytest.raises(ConfigError) as err:
        build({**CELL, **change})
    assert str(err.value).startswith(message)


# --- fault injection: result files ----------------------------------------------------------------------
# (damage of every kind to result, prepared-data and oracle files is swept in test_damage.py)

RUN_CELL = {
    "experiment": "exp",
    "algorithm": "ldb_df",
    "delay_label": "none",
    "seed": 0,
    "horizon": 40,
    "budget": None,
    "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
    "policy": {"name": "ldb_df", "params": {}},
    "delay": {"kind": "none"},
}


@pytest.fixture
def results(tmp_path):
    """Three seeds of one cell, written where the pipeline writes them."""
    paths = []
    for seed in range(3):
        path = tmp_path / cell_dir(RUN_CELL) / f"{seed}.npz"
        save_result(path, *run_cell({**RUN_CELL, "seed": seed}))
        paths.append(path)
    return paths


def test_a_result_changed_consistently_fails_its_checksum(results):
    """A member rewritten with a valid zip CRC (an edit, not noise) is caught by the sha256."""
    with zipfile.ZipFile(results[0]) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    regret = np.lib.format.read_array(io.BytesIO(members["regret.npy"]))
    buf = io.BytesIO()
    np.lib.format.write_array(buf, regret * 0.5)
    members["regret.npy"] = buf.getvalue()
    with zipfile.ZipFile(results[0], "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    with pytest.raises(CorruptFileError, match=r"checksum mismatch \(the file was changed after its job wrote it\)"):
        load_result(results[0])


def test_a_result_copied_over_another_seed_is_named(results):
    shutil.copyfile(results[0], results[1])
    load_result(results[1])  # a valid file ...
    with pytest.raises(CorruptFileError, match=r"holds another run \(seed '0' instead of '1'\)"):
        load_result(results[1], run_identity({**RUN_CELL, "seed": 1}))  # ... but not seed 1's


def test_aggregation_refuses_bad_runs_names_all_and_removes_them(results, tmp_path):
    shutil.copyfile(results[0], results[1])
    results[2].write_bytes(results[2].read_bytes()[:100])
    runs = [str(p) for p in results]
    with pytest.raises(CorruptFileError) as err:
        aggregate_runs(runs, "exp", [40], remove_corrupt=True)
    message = str(err.value)
    assert f"{results[1]}: holds another run" in message and f"{results[2]}: unreadable" in message
    assert "removed 2 corrupt result file(s); run snakemake again to rebuild them" in message
    assert results[0].exists() and not results[1].exists() and not results[2].exists()


def test_a_result_file_of_an_older_format_is_named(results):
    with zipfile.ZipFile(results[0]) as zf:
        members = {name: zf.read(name) for name in zf.namelist() if name != "checksum.npy"}
    with zipfile.ZipFile(results[0], "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    with pytest.raises(CorruptFileError, match=r"result file lacks \['checksum'\]"):
        load_result(results[0])


def test_a_garbled_curves_table_is_named(tmp_path):
    path = tmp_path / "curves.csv"
    path.write_text("experiment,algorithm,delay,budget,t,metric,mean\nexp,a,none,none,x,regret,1\n")
    with pytest.raises(CorruptFileError, match=rf"^{re.escape(str(path))}: curves table lacks the columns"):
        read_tidy(path, "curves table")
    path.write_text("experiment,algorithm,delay,budget,t,metric,mean,ci_low,ci_high,n\nexp,a,none,none,x,r,1,,,2\n")
    with pytest.raises(CorruptFileError, match="non-numeric values in column 't'"):
        read_tidy(path, "curves table")


# --- fault injection: prepared data, oracles and raw files ----------------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder holding one prepared dataset (digits, bundled with scikit-learn) as the pipeline names it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    for size in (2, 4):
        save_prepared(processed_path("digits", {"image_size": size}), prepare("digits", {"image_size": size}))
    return tmp_path


def _digits(size):
    return processed_path("digits", {"image_size": size})


def test_a_prepared_dataset_copied_over_another_option_set_is_named(project):
    shutil.copyfile(_digits(4), _digits(2))
    with pytest.raises(CorruptFileError, match=rf"^{re.escape(_digits(2))}: prepared dataset was built for"):
        quarantine.verify_prepared(_digits(2))


def test_an_oracle_holding_non_finite_values_is_named(project):
    path = "data/oracles/car_evaluation.npz"
    save_npz(
        path,
        {"contexts": np.full((3, 22), np.nan), "theta": np.ones(88), "logit_theta": np.ones(88)},
        {"dataset": "car"},
    )
    with pytest.raises(CorruptFileError, match="holds non-finite values in 'contexts'"):
        quarantine.verify_prepared(path)


@needs_mirror
def test_a_raw_file_edited_after_download_is_never_used(project):
    raw = Path("data/raw/uci/banknote/data_banknote_authentication.txt")
    raw.parent.mkdir(parents=True)
    shutil.copyfile(MIRROR / "uci/banknote/data_banknote_authentication.txt", raw)
    prepare("banknote")  # the registered bytes: used
    with raw.open("a") as fh:
        fh.write("1.0,2.0,3.0,4.0,1\n")
    with pytest.raises(
        CorruptFileError,
        match=rf"^{re.escape(str(raw))}: raw file of dataset 'banknote' has "
        rf"sha256 [0-9a-f]{{64}}, not the registered",
    ):
        prepare("banknote")


@needs_mirror
def test_corrupt_data_files_are_moved_aside_before_any_job(project, monkeypatch):
    raw = Path("data/raw/uci/car/car.data")
    raw.parent.mkdir(parents=True)
    shutil.copyfile(MIRROR / "uci/car/car.data", raw)
    good, bad = _digits(4), _digits(2)
    Path(bad).write_bytes(Path(bad).read_bytes()[:500])
    hashed = []
    real_hash = verify.file_hash
    monkeypatch.setattr(verify, "file_hash", lambda path, alg: hashed.append(path) or real_hash(path, alg))
    assert quarantine.quarantine_corrupt([good, bad]) and len(hashed) == 1
    assert Path(good).is_file() and not Path(bad).exists() and Path(bad + ".corrupt").is_file()
    assert quarantine.quarantine_corrupt([good, bad]) == [] and len(hashed) == 1  # cached: no second hash
    raw.write_text(raw.read_text().replace("vhigh", "high", 1))
    messages = quarantine.quarantine_corrupt([good])
    assert len(messages) == 1 and messages[0].startswith(f"{raw}: raw file of dataset 'car' has sha256")
    assert not raw.exists() and Path(f"{raw}.corrupt").is_file()


# --- files follow the umask; rule logs hold the traceback ----------------------------------------------


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_get_the_permissions_of_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        save_result(tmp_path / "r.npz", *run_cell(dict(RUN_CELL, horizon=5)))
        save_npz(tmp_path / "d.npz", {"x": np.ones(2)}, {})
    finally:
        os.umask(old)
    for name in ("r.npz", "d.npz"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode


def test_a_failing_rule_writes_its_traceback_to_its_log(tmp_path):
    log = tmp_path / "logs" / "rule.log"
    with pytest.raises(CorruptFileError):
        with rule_log(log, "aggregate"):
            load_result(tmp_path / "missing.npz")
    text = log.read_text()
    assert "rule aggregate: banditbench " in text and str(ROOT / "src" / "banditbench") in text
    assert "Traceback (most recent call last)" in text and "missing.npz: result file does not exist" in text


# --- end to end: Snakemake on a copy of the project ------------------------------------------------------

TINY = {
    "seeds": None,
    "horizon": None,
    "experiments": {
        "duel": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
            "horizon": 40,
            "seeds": 2,
            "algorithms": {"ldb": {"policy": "ldb_df"}},
            "delays": {"none": {"kind": "none"}},
        },
        "digits": {
            "environment": {
                "name": "classification_bandit",
                "params": {"dataset": "digits", "preprocessing": {"image_size": 2}},
            },
            "horizon": 40,
            "seeds": 2,
            "algorithms": {"linucb": {"policy": "linucb"}},
            "delays": {"none": {"kind": "none"}},
        },
    },
}


def _copy(dest: Path, config=TINY) -> Path:
    for item in ("Snakefile", "src", "workflow", "config", "envs"):
        src = ROOT / item
        (
            shutil.copytree(src, dest / item, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            if src.is_dir()
            else shutil.copy2(src, dest / item)
        )
    (dest / "config.yaml").write_text(yaml.safe_dump(config))
    return dest


def _smk(work: Path, *args):
    env = dict(os.environ, PYTHONPATH=str(work / "src"))
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        "2",
        "--directory",
        str(work),
        "--snakefile",
        str(work / "Snakefile"),
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=work, env=env)


@pytest.mark.slow
@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda c: c["experiments"]["duel"]["algorithms"]["ldb"].update(params={"beta": -1}),
            "experiments.duel.algorithms.ldb.params.beta: must be a finite number >= 0 or 'theory', got -1",
        ),
        (
            lambda c: c["experiments"]["duel"].update(horizon=10**12),
            "experiments.duel.resources.mem_mb: a simulate job of algorithm 'ldb' needs at least",
        ),
        (
            lambda c: c["experiments"]["duel"]["algorithms"].update(lin={"policy": "linucb"}),
            "experiments.duel.algorithms.lin.policy: 'linucb' learns from 'reward' feedback",
        ),
        (
            lambda c: c["experiments"]["digits"]["environment"]["params"].update(dataset="digitz"),
            "experiments.digits.environment.params.dataset: must be one of",
        ),
        (_car("../../../etc/passwd"), "experiments.car.environment.params.oracle: '../../../etc/passwd' lies outside"),
        (lambda c: c.update(seedz=2), "<top level>: Additional properties are not allowed ('seedz' was unexpected)"),
    ],
    ids=["value", "memory", "compatibility", "dataset", "path-escape", "top-level"],
)
def test_snakemake_stops_before_any_job_with_the_key_named(tmp_path, mutate, message):
    config = copy.deepcopy(TINY)
    mutate(config)
    work = _copy(tmp_path, config)
    run = _smk(work, "--quiet")
    out = run.stdout + run.stderr
    assert run.returncode != 0 and message in out, out[-3000:]
    assert "Failed validating" not in out and "'$schema'" not in out  # no schema dump
    assert not (work / "results").exists() and not (work / "logs").exists()


@pytest.mark.slow
def test_duplicate_keys_in_a_configfile_stop_snakemake_with_file_and_line(tmp_path):
    work = _copy(tmp_path)
    text = yaml.safe_dump(TINY).replace("      ldb:\n", "      ldb:\n        policy: ldb_df\n      ldb:\n", 1)
    (work / "grid.yaml").write_text(text)
    run = _smk(work, "-n", "--configfile", str(work / "grid.yaml"))
    assert run.returncode != 0
    assert re.search(rf"{re.escape(str(work / 'grid.yaml'))}:\d+:\d+: duplicate key 'ldb'", run.stdout + run.stderr)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """The tiny grid run once in a copy of the project whose banditbench differs from the installed one."""
    work = _copy(tmp_path_factory.mktemp("hardening"))
    init = work / "src/banditbench/__init__.py"
    init.write_text(re.sub(r'__version__ = "([^"]+)"', r'__version__ = "\1+copy"', init.read_text()))
    run = _smk(work, "--quiet")
    assert run.returncode == 0, run.stderr[-3000:]
    return work


@pytest.mark.slow
def test_every_rule_runs_the_copys_own_code_and_says_so_in_its_log(pipeline):
    """The installed banditbench is this checkout's (editable); the copy's rules all run the copy's src/."""
    import banditbench

    assert Path(banditbench.__file__).resolve().parent == ROOT / "src" / "banditbench"
    logs = sorted((pipeline / "logs").rglob("*.log"))
    rules = {p.relative_to(pipeline / "logs").parts[0] for p in logs}
    assert {"simulate", "preprocess", "aggregate"} <= rules
    copy_src = pipeline / "src" / "banditbench"
    for path in logs:
        text = path.read_text()
        assert f"+copy from {copy_src}" in text, (path, text[:500])


@pytest.mark.slow
def test_a_corrupt_intermediate_is_never_used_costs_no_valid_result_and_is_rebuilt(pipeline):
    processed = pipeline / processed_path("digits", {"image_size": 2, "scaling": "feature"})
    results = sorted((pipeline / "results/runs/digits").rglob("*.npz"))
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in results}
    processed.write_bytes(processed.read_bytes()[:2000])  # truncated after the run
    run = _smk(pipeline, "--quiet")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    assert f"{processed.relative_to(pipeline)}: prepared dataset is unreadable" in out
    assert Path(f"{processed}.corrupt").is_file()  # moved aside: nothing reads it
    for path, (data, mtime) in before.items():  # the valid results are kept as they were
        assert path.read_bytes() == data and path.stat().st_mtime_ns == mtime
    results[0].unlink()  # a job that needs the data again ...
    (pipeline / "results/default/tables/digits.csv").unlink()
    rerun = _smk(pipeline, "--quiet")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    load_prepared(processed)  # ... gets it rebuilt, sound
    assert load_result(results[0])[0]["regret"].tobytes() == load_result_bytes(before[results[0]][0])


def load_result_bytes(data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return np.lib.format.read_array(io.BytesIO(zf.read("regret.npy"))).tobytes()


@pytest.mark.slow
def test_a_corrupt_result_is_never_aggregated_and_is_rebuilt_in_the_same_run(pipeline):
    (cell,) = (pipeline / "results/runs/duel/ldb/none/none").iterdir()
    victim = cell / "1.npz"
    shutil.copyfile(cell / "0.npz", victim)  # seed 0 copied over seed 1
    run = _smk(pipeline, "--quiet")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    rel = victim.relative_to(pipeline)
    assert (
        f"{rel}: holds another run (seed '0' instead of '1'), e.g. a file copied over it; moved to {rel}.corrupt" in out
    )  # named in one line, before any job
    assert "Traceback" not in out and Path(f"{victim}.corrupt").is_file()
    assert load_result(victim)[1]["cell"]["seed"] == 1  # rebuilt in this run
    assert (pipeline / "results/default/tables/duel.csv").is_file()
    mode = stat.S_IMODE(victim.stat().st_mode)
    assert mode & 0o044 == 0o044 & ~_umask()  # readable by others as the umask allows


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
