"""Every environment's declared metric ranges (``Environment.metric_ranges``): what a claim's distribution-free
interval rests on.  Each built-in environment declares every metric it records, and what runs record stays
inside, over the parameters that change the ranges."""

import pytest

from banditbench import registry
from banditbench.conformance import cell_for, outside_range
from banditbench.simulation.job import run_cell


@pytest.mark.parametrize("name", sorted(registry.environments()))
def test_every_built_in_environment_declares_every_metric_under_its_defaults(name):
    cls = registry.get("environment", name).load()
    ranges = cls.metric_ranges(registry.values(cls, {}))
    assert set(cls.metrics) <= set(ranges)
    assert set(ranges) - set(cls.metrics) <= {"late_regret_rate", "late_self_duel_rate"}  # the dueling summaries
    assert all(lo < hi for lo, hi in ranges.values())


def test_what_depends_on_data_or_an_unbounded_noise_is_not_declared():
    car = registry.get("environment", "car_moderation").load()
    logit = car.metric_ranges(registry.values(car, {"reward_scale": "logit", "allow_negative_costs": True}))
    assert set(logit) == {"active"}  # the rewards follow the oracle's scores, and the costs with them
    knapsack = registry.get("environment", "pbbwk_synthetic").load()
    assert "cost" not in knapsack.metric_ranges(registry.values(knapsack, {"noise": "gaussian"}))


def _recorded(policy: str, environment: dict, horizon: int = 300, seed: int = 1) -> tuple[dict, dict, dict]:
    """A run's series, its environment's declared ranges and the run's summary."""
    cell = cell_for(policy, horizon, seed)
    cell["environment"] = {"name": cell["environment"]["name"], "params": environment}
    cls = registry.get("environment", cell["environment"]["name"]).load()
    series, meta, _ = run_cell(cell)
    return series, cls.metric_ranges(registry.values(cls, environment)), meta["summary"]


@pytest.mark.parametrize("utility", ["linear", "quadratic", "cubic", "cosine", "square", "quadratic_form"])
@pytest.mark.parametrize("theta", ["sphere", "cube"])
def test_synthetic_duels_stay_in_the_range_their_utility_declares(utility, theta):
    params = {"dimension": 3, "n_arms": 4, "utility": utility, "theta_distribution": theta}
    series, ranges, summary = _recorded("random_pair", params)
    assert outside_range(series, ranges) == []
    assert series["regret"].max() > 0
    late = series["regret"][-30:]  # the closing 10 % of 300 rounds
    assert summary["late_regret_rate"] == pytest.approx(late.mean())
    assert outside_range({name: [summary[name]] for name in ("late_regret_rate", "late_self_duel_rate")}, ranges) == []


@pytest.mark.parametrize("function", ["triangle", "sine", "two_dim"])
def test_lipschitz_regret_and_mean_reward_stay_in_the_functions_range(function):
    series, ranges, _ = _recorded("delayed_zooming", {"function": function, "noise_sigma": 1.0})
    assert outside_range(series, ranges) == []


@pytest.mark.parametrize("policy", ["random_arm", "linucb"])
def test_logistic_rewards_and_regret_stay_in_the_unit_interval(policy):
    series, ranges, _ = _recorded(policy, {"dimension": 3, "n_arms": 4, "latent": "h2"})
    assert outside_range(series, ranges) == [] and ranges == {"regret": (0.0, 1.0), "reward": (0.0, 1.0)}


def test_knapsack_metrics_stay_in_the_range_of_the_rewards():
    series, ranges, _ = _recorded("pblincbwk_alg1", {"rewards": [0.1, 0.2, 0.4, 0.7], "costs": [0.05, 0.4, 0.5, 0.7]})
    assert outside_range(series, ranges) == [] and ranges["reward"] == (0.0, 1.4)


def test_a_value_outside_its_range_is_named_with_its_round():
    import numpy as np

    wrong = outside_range({"regret": np.array([0.5, 4.5, 9.0]), "reward": np.array([1.0])}, {"regret": (0.0, 4.0)})
    assert wrong == ["round 2's regret 4.5 is outside its declared [0, 4]"]
    assert outside_range({"regret": np.array([4.0 + 1e-12])}, {"regret": (0.0, 4.0)}) == []  # rounding
