import copy

import pytest

from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.storage.cells import block_label
from banditbench.errors import ConfigError
from conftest import ROOT

BASE = load_config_file(ROOT / "config.yaml")


def _cfg(mutate):
    cfg = copy.deepcopy(BASE)
    mutate(cfg)
    return cfg


def _exp(cfg):
    return cfg["experiments"]["linear_delayed_dueling"]


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda c: c.update(seedz=3), "Additional properties are not allowed ('seedz'"),
        (
            lambda c: _exp(c).update(horizon=0),
            "experiments.linear_delayed_dueling.horizon: 0 is less than the minimum of 1",
        ),
        (
            lambda c: _exp(c)["algorithms"].update(x={"policy": "nope"}),
            "experiments.linear_delayed_dueling.algorithms.x.policy: unknown policy 'nope'",
        ),
        (
            lambda c: _exp(c)["algorithms"]["ldb_df"].update(params={"lamda": 2}),
            "algorithms.ldb_df.params: unknown parameter(s) ['lamda']",
        ),
        (lambda c: _exp(c)["environment"].update(name="atari"), "environment.name: unknown environment 'atari'"),
        (lambda c: _exp(c)["environment"]["params"].update(dim=3), "environment.params: unknown parameter(s) ['dim']"),
        (
            lambda c: _exp(c)["delays"].update(bad={"kind": "geometric", "p": 0.1, "mean": 10}),
            "delays.bad: geometric delay needs exactly one",
        ),
        (
            lambda c: _exp(c)["delays"].update(bad={"kind": "lognormal"}),
            "experiments.linear_delayed_dueling.delays.bad.kind",
        ),
        (lambda c: _exp(c).update(table_horizons=[100, 5000]), "table_horizons: [5000] exceed the horizon 600"),
        (lambda c: _exp(c).update(budgets=[300]), "budgets: environment 'synthetic_dueling' has no budget"),
        (lambda c: _exp(c)["algorithms"].update({"bad label": {"policy": "ldb_df"}}), "'bad label' does not match"),
        (lambda c: _exp(c).update(plot_metric="reward"), "plot_metric: 'reward' is not logged"),
        (lambda c: _exp(c).update(extra_plots=["regret", "cost"]), "extra_plots: 'cost' is not logged"),
        (
            lambda c: _exp(c).update(panel_plots={"p": {"caption": "c", "panels": {"x": ["ldb_df", "nope"]}}}),
            "experiments.linear_delayed_dueling.panel_plots.p.panels.x: 'nope' is not an algorithm of this experiment",
        ),
        (
            lambda c: _exp(c).update(
                panel_plots={"p": {"caption": "c", "metric": "cost", "panels": {"x": ["ldb_df"]}}}
            ),
            "panel_plots.p.metric: 'cost' is not logged",
        ),
        (
            lambda c: _exp(c).update(panel_plots={"p": {"panels": {"x": ["ldb_df"]}}}),
            "'caption' is a required property",
        ),
    ],
)
def test_bad_config_is_rejected_with_a_message_naming_the_key(mutate, fragment):
    with pytest.raises(ConfigError) as err:
        load_grid(_cfg(mutate))
    assert fragment in str(err.value)


def test_global_overrides_apply_to_every_experiment():
    grid = load_grid(_cfg(lambda c: c.update(seeds=2, horizon=200)))
    exp = grid.experiments["linear_delayed_dueling"]
    assert exp.seeds == (0, 1) and exp.horizon == 200
    assert exp.table_horizons == (150, 200)  # larger table horizons dropped, the horizon added
    assert grid.cell("linear_delayed_dueling", "ldb_df", "none", "none", 1)["horizon"] == 200


def test_jobs_cover_the_grid_and_cells_resolve():
    grid = load_grid(BASE)
    jobs = list(grid.jobs("linear_delayed_dueling"))
    exp = _exp(BASE)
    assert len(jobs) == len(exp["algorithms"]) * len(exp["delays"]) * exp["seeds"]
    cell = grid.cell(*(jobs[-1][k] for k in ("experiment", "algorithm", "delay", "budget", "seed")))
    assert jobs[-1]["cell"] == grid.cell_digest(*(jobs[-1][k] for k in ("experiment", "algorithm", "delay", "budget")))
    assert cell["policy"]["name"] == "random_pair" and cell["delay"] == exp["delays"][jobs[-1]["delay"]]
    with pytest.raises(ConfigError, match="no entry 'foo'"):
        grid.cell("linear_delayed_dueling", "foo", "none", "none", 0)


def test_seeds_per_job_cuts_the_seeds_into_blocks_of_one_job_each():
    def mutate(c):
        _exp(c).update(seeds=7, seeds_per_job=3)
        c["experiments"]["lipschitz_triangle"].update(seeds=[2, 5, 9], seeds_per_job=2)
        c["experiments"]["knapsack_synthetic"].pop("seeds_per_job")
        c["experiments"]["knapsack_synthetic"].update(seeds=4)
        c["experiments"]["digits_dueling"].update(seeds=3, seeds_per_job=3)
        c["experiments"]["variance_dueling_square"].update(seeds_per_job=1)
        c["experiments"]["digits_reward"].update(seeds_per_job=1)

    grid = load_grid(_cfg(mutate))
    assert grid.experiments["linear_delayed_dueling"].seed_blocks == [(0, 1, 2), (3, 4, 5), (6,)]
    assert grid.experiments["knapsack_synthetic"].seed_blocks == [(s,) for s in range(4)]  # default: one seed
    blocks = grid.seed_blocks()
    # one rule per distinct block, shared by the experiments that cut it
    assert blocks[(0, 1, 2)] == ["linear_delayed_dueling", "digits_dueling"] and blocks[(2, 5)] == [
        "lipschitz_triangle"
    ]
    assert "knapsack_synthetic" in blocks[(0,)] and "digits_reward" in blocks[(0,)]
    assert [block_label(b) for b in [(0, 1, 2), (6,), (2, 5), (9,)]] == ["seeds_0-2", "seed_6", "seeds_2_5", "seed_9"]
    # the runs (one per seed) do not depend on the blocking
    assert len(list(grid.jobs("linear_delayed_dueling"))) == 4 * 2 * 7  # 4 algorithms x 2 delays x 7 seeds
    with pytest.raises(ConfigError, match="seeds_per_job: 0 is less than the minimum of 1"):
        load_grid(_cfg(lambda c: _exp(c).update(seeds_per_job=0)))


def test_the_longest_simulate_jobs_start_first():
    """A job's priority is its estimated length: the experiment's per-job time limit for a whole block, scaled by the
    job's share of the block, its algorithms (a lockstep job) and its budget's share of the largest budget."""

    def mutate(c):
        c["experiments"]["knapsack_synthetic"].update(seeds=10, seeds_per_job=4, resources={"runtime": 30})

    knapsack = load_grid(_cfg(mutate)).experiments["knapsack_synthetic"]
    assert knapsack.budget_labels == ["75", "225"] and [len(b) for b in knapsack.seed_blocks] == [4, 4, 2]
    assert knapsack.job_priority("225", 4) == 30 and knapsack.job_priority("75", 4) == pytest.approx(10)
    assert knapsack.job_priority("225", 2) == 15 and knapsack.job_priority("225", 4, algorithms=3) == 90
    unbudgeted = load_grid(BASE).experiments["linear_delayed_dueling"]
    assert unbudgeted.job_priority("none", unbudgeted.seeds_per_job) == unbudgeted.resources["runtime"]


def test_job_sources_are_the_modules_the_job_imports():
    grid = load_grid(BASE)
    ldb = {p.name for p in grid.sources("linear_delayed_dueling", "ldb_df")}
    rnd = {p.name for p in grid.sources("linear_delayed_dueling", "random")}
    assert {"delayed_dueling.py", "linalg.py", "dueling.py", "runner.py", "delays.py"} <= ldb
    # the job, which chooses the engine, without what it imports to save results (registry.CORE_FILES)
    assert "job.py" in ldb and "resultio.py" not in ldb and "reuse.py" not in ldb
    assert "delayed_dueling.py" not in rnd and "baselines.py" in rnd and "baselines.py" not in ldb


@pytest.mark.parametrize(
    "path", [ROOT / "config.yaml"] + sorted((ROOT / "config").glob("*.yaml")), ids=lambda p: p.name
)
def test_every_shipped_config_validates(path):
    grid = load_grid(load_config_file(path))
    assert grid.experiments


def test_job_sources_follow_subpackages_and_their_package_inits(tmp_path, monkeypatch):
    """A shared module in a subpackage (as policies/neural/ will have) is in the closure of every
    module importing it, through relative and absolute imports, and so are the package __init__ files."""
    from banditbench import registry

    pkg = tmp_path / "banditbench"
    (pkg / "policies" / "deep").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "policies" / "__init__.py").write_text("")
    (pkg / "policies" / "deep" / "__init__.py").write_text("")
    (pkg / "policies" / "deep" / "nets.py").write_text("import numpy\n")
    (pkg / "policies" / "deep" / "alg_a.py").write_text("from .nets import x\n")
    (pkg / "policies" / "deep" / "alg_b.py").write_text("def f():\n    from banditbench.policies.deep import nets\n")
    (pkg / "policies" / "other.py").write_text("from . import linalg\n")
    (pkg / "policies" / "linalg.py").write_text("")
    monkeypatch.setattr(registry, "PACKAGE_DIR", pkg)
    for fn in (registry._module_path, registry._imports, registry._closure):
        fn.cache_clear()
    try:

        def rel(mods):
            return {str(p.relative_to(pkg)) for p in registry.source_closure(mods)}

        inits = {"__init__.py", "policies/__init__.py", "policies/deep/__init__.py"}
        assert rel(["banditbench.policies.deep.alg_a"]) == inits | {"policies/deep/alg_a.py", "policies/deep/nets.py"}
        assert rel(["banditbench.policies.deep.alg_b"]) == inits | {"policies/deep/alg_b.py", "policies/deep/nets.py"}
        assert rel(["banditbench.policies.other"]) == {
            "__init__.py",
            "policies/__init__.py",
            "policies/other.py",
            "policies/linalg.py",
        }
    finally:
        for fn in (registry._module_path, registry._imports, registry._closure):
            fn.cache_clear()
