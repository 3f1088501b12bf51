"""``fixed_arm_dueling``: K arms drawn once per seed, the same every round (issue 50's neural dueling task)."""

import numpy as np
import pytest

from banditbench.envs.dueling import SyntheticDueling
from banditbench.envs.fixed_dueling import FixedArmDueling
from banditbench.numerics.sigmoid import sigmoid


def _env(seed=0, horizon=10, **params):
    return FixedArmDueling(np.random.SeedSequence(seed), horizon=horizon, **params)


def test_the_arms_are_drawn_once_per_seed_and_shown_every_round():
    env = _env()
    assert env.arms.shape == (10, 5) and not env.arms.flags.writeable
    assert env.context(1) is env.arms is env.context(9)
    np.testing.assert_allclose(np.linalg.norm(env.arms, axis=1), 1.0)
    assert np.linalg.norm(env.theta) == pytest.approx(1.0)
    assert env.public_info() == {"dimension": 5, "n_arms": 10, "fixed_arms": True}
    assert FixedArmDueling.known_facts({"dimension": 5, "n_arms": 10})["fixed_arms"] is True
    np.testing.assert_array_equal(_env().arms, env.arms)
    assert not np.array_equal(_env(1).arms, env.arms)
    cube = _env(arm_distribution="normalized_cube", theta_distribution="cube", dimension=3, n_arms=4)
    assert cube.arms.shape == (4, 3) and np.abs(cube.theta).max() <= 1.0


def test_regret_is_the_total_regret_of_the_quadratic_utility_and_outcomes_are_btl():
    env = _env(seed=3, horizon=3000)
    f = (env.arms @ env.theta) ** 2
    best, worst = int(np.argmax(f)), int(np.argmin(f))
    _, metrics = env.step(1, (best, best))
    assert metrics["regret"] == 0.0 and metrics["self_duel"] == 1.0
    _, metrics = env.step(2, (worst, 0))
    assert metrics["regret"] == pytest.approx(2 * f[best] - f[worst] - f[0])
    assert metrics["weak_regret"] == pytest.approx(f[best] - max(f[worst], f[0]))
    wins = np.mean([env.step(t, (best, worst))[0].y for t in range(3, 3001)])
    assert wins == pytest.approx(sigmoid(f[best] - f[worst]), abs=0.03)


def test_the_utility_range_is_the_synthetic_tasks():
    values = {"utility": "square", "theta_distribution": "cube", "dimension": 4}
    assert FixedArmDueling.utility_range(values) == SyntheticDueling.utility_range(values) == (0.0, 40.0)
