"""``linear_logit_dueling``: the VACDB repository's synthetic task (its ``model.py``), reimplemented (issue 50)."""

import numpy as np
import pytest
import yaml

from conftest import ROOT

from banditbench.configuration.grid import load_grid
from banditbench.envs.linear_logit import LinearLogitDueling, binary_arms
from banditbench.errors import ConfigError
from banditbench.numerics.sigmoid import sigmoid


def _env(seed=0, horizon=10, **params):
    return LinearLogitDueling(np.random.SeedSequence(seed).spawn(3)[0], horizon=horizon, **params)


def test_arms_are_the_binary_expansions_shifted_down_by_at_most_the_disturbance():
    np.testing.assert_array_equal(binary_arms(4, 3), [[-1, -1, -1], [1, -1, -1], [-1, 1, -1], [1, 1, -1]])
    env = _env()
    shift = env.arms - binary_arms(32, 5)
    assert env.arms.shape == (32, 5) and (shift < 0).all() and (shift >= -0.1).all()
    assert not env.arms.flags.writeable and env.context(1) is env.arms is env.context(7)
    assert np.count_nonzero(env.theta) == 2 and (env.theta[:2] > 0).all()
    assert np.linalg.norm(env.theta) == pytest.approx(1.0)
    assert np.linalg.norm(_env(scale=2.0).theta) == pytest.approx(2.0)


def test_the_authors_instances_come_from_their_generators_of_the_job_seed():
    """``model.py`` lines 32-33: two generators seeded seed + 1000; theta* from the first's d uniforms (lines 39-47),
    the shifts ``(U - 1) / 10`` from the second's K x d (line 72)."""
    for seed in (0, 5):
        env = _env(seed)
        raw = np.random.default_rng(seed + 1000).random(5)
        raw[2:] = 0.0
        np.testing.assert_array_equal(env.theta, raw / np.sqrt(raw @ raw))
        shifts = (np.random.default_rng(seed + 1000).random((32, 5)) - 1) / 10
        np.testing.assert_array_equal(env.arms, binary_arms(32, 5) + shifts)
    own = [_env(seed, instances="own") for seed in (0, 0, 1)]
    np.testing.assert_array_equal(own[0].arms, own[1].arms)
    assert not np.array_equal(own[0].theta, own[2].theta) and not np.array_equal(own[0].theta, _env(0).theta)
    with pytest.raises(ConfigError, match="integer job seed"):
        LinearLogitDueling(np.random.SeedSequence([1, 2]), horizon=5)


def test_regret_is_the_total_regret_in_units_of_the_unit_theta_and_outcomes_are_btl():
    env = _env(seed=3, horizon=4000, scale=2.0)
    u = env.arms @ env.theta / 2.0
    best = int(np.argmax(u))
    _, metrics = env.step(1, (best, best))
    assert metrics["regret"] == 0.0 and metrics["self_duel"] == 1.0
    i, j = int(np.argmin(u)), 0
    _, metrics = env.step(2, (i, j))
    assert metrics["regret"] == pytest.approx(2 * u[best] - u[i] - u[j])
    assert metrics["weak_regret"] == pytest.approx(u[best] - max(u[i], u[j]))
    wins = np.mean([env.step(t, (best, 0))[0].y for t in range(3, 4001)])
    p = sigmoid((env.arms[best] - env.arms[0]) @ env.theta)  # the scaled theta* decides the outcomes
    assert wins == pytest.approx(p, abs=0.03)


def test_the_authors_baselines_config_plays_it_with_both_presets():
    grid = load_grid(yaml.safe_load((ROOT / "config/authors_baselines.yaml").read_text()))
    (experiment,) = grid.experiments.values()
    assert experiment.spec["environment"]["name"] == "linear_logit_dueling"
    presets = {
        label: spec.get("params", {}).get("preset", "ours") for label, spec in experiment.spec["algorithms"].items()
    }
    assert sorted(presets.values()) == ["authors"] * 3 + ["ours"] * 3
