"""The Lipschitz environment of seed 003: exact maxima, regret and noise, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from banditbench import params
from banditbench.envs.lipschitz import FUNCTIONS, LipschitzEnv, mean_reward
from banditbench.errors import ConfigError


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_mu_star_is_the_exact_maximum(function):
    d, mu_star, arg, _ = FUNCTIONS[function]
    assert mean_reward(function, np.array(arg)) == pytest.approx(mu_star, abs=1e-15)
    rng = np.random.default_rng(0)
    starts = rng.random((40, d))
    best = max(
        -minimize(
            lambda x: -mean_reward(function, np.clip(x, 0, 1)),
            x0,
            method="Nelder-Mead",
            options={"xatol": 1e-12, "fatol": 1e-14},
        ).fun
        for x0 in starts
    )
    assert best <= mu_star + 1e-12
    assert best >= mu_star - 1e-6
    env = LipschitzEnv(np.random.SeedSequence(1), horizon=5, function=function)
    pts = rng.random((20, d))
    assert np.allclose([env.mu(tuple(p)) for p in pts], mean_reward(function, pts), atol=1e-14)


def test_environment_regret_noise_and_bad_input():
    env = LipschitzEnv(np.random.SeedSequence(3), horizon=20000, function="triangle", noise_sigma=1.0)
    fbs = [env.step(t, 0.4)[0] for t in range(1, 20001)]
    y = np.array([fb.reward for fb in fbs])
    assert abs(y.mean() - 0.8) < 0.03 and abs(y.std() - 1.0) < 0.03
    assert [fb.round for fb in fbs[:3]] == [1, 2, 3]
    _, truth = env.step(1, 0.9)
    assert truth["regret"] == pytest.approx(0.9 * 0.5) and truth["expected_reward"] == pytest.approx(0.35)
    env2 = LipschitzEnv(np.random.SeedSequence(3), horizon=3, function="two_dim")
    _, truth = env2.step(1, np.array([0.7, 0.8]))
    assert truth["regret"] == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(ValueError, match="point of"):
        env2.step(2, np.array([0.5, 1.2]))
    with pytest.raises(ValueError, match="point of"):
        env.step(2, np.array([0.2, 0.3]))
    with pytest.raises(ConfigError, match="function"):
        LipschitzEnv(np.random.SeedSequence(0), horizon=3, function="parabola")
    with pytest.raises(ConfigError, match=r"environment\.params\.noise_sigma: must be a finite number >= 0"):
        params.check(LipschitzEnv, {"noise_sigma": -1.0}, "environment.params")  # what runner.build checks
