"""DLPP (seed 003, Algorithm 2): feedback credited to its ball, phases, eliminations at the paper default."""

from __future__ import annotations

import numpy as np
import pytest

from banditbench.api import Problem
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.errors import ConfigError
from banditbench.policies.lipschitz import DLPP, log_term
from banditbench.policies.lipschitz.metric_space import cover_box, in_balls
from banditbench.simulation.runner import build, simulate
from helpers import lipschitz_cell as cell


@pytest.mark.parametrize("function,noise,T", [("triangle", 0.2, 8000), ("two_dim", 0.1, 12000)])
def test_dlpp_credits_feedback_to_its_ball_and_prunes_per_algorithm_2(function, noise, T):
    # low noise (known to the policy, App. D) so that phases with eliminations fit in T
    c = cell(function, policy="dlpp", delay={"kind": "geometric", "mean": 50}, horizon=T, noise_sigma=noise)
    env, _, dmodel, drng = build(c)
    played, arrivals = [], np.zeros(T, dtype=np.int64)

    class Recording(DLPP):
        def observe(self, t, arrived):
            for fb in arrived:
                arrivals[fb.round - 1] += 1
            super().observe(t, arrived)

        def act(self, t, context=None):
            a = super().act(t, context)
            played.append(np.array(a))
            return a

    pol = Recording(Problem(T, info=env.public_info()), np.random.default_rng(0), late_feedback="update", sigma=noise)
    simulate(env, pol, dmodel, T, drng)
    balls = pol.ball_of_round
    # every played point lies in the ball it was played for
    assert all(in_balls(p, pol.lo[b][None], pol.hi[b][None])[0] for p, b in zip(played, balls))
    assert pol.phase >= 3
    # current phase: v(B) counts exactly the arrived rewards of the rounds played for B
    cur = np.arange(pol.phase_start, pol.n_balls)
    counted = np.bincount(balls, arrivals, minlength=pol.n_balls)
    assert np.array_equal(pol.v[cur], counted[cur].astype(np.int64))
    for m in range(1, pol.phase):
        ids = np.flatnonzero(pol.phase_of[: pol.n_balls] == m)
        r = 2.0**-m
        v_m = noise**2 * log_term(T, 0.01) / r**2
        assert np.all(pol.v[ids] >= v_m)  # phase m ended with v_m each
        assert np.allclose(pol.hi[ids] - pol.lo[ids], 2 * r)
        keep = pol.mean[ids].max() - pol.mean[ids] < 4 * r  # elimination at 4 r_m
        assert pol.eliminated[m - 1] == int((~keep).sum())
        children = np.concatenate([cover_box(pol.lo[b], pol.hi[b], r / 2) for b in ids[keep]])
        nxt = np.flatnonzero(pol.phase_of[: pol.n_balls] == m + 1)
        np.testing.assert_allclose(pol.centers[nxt], children)  # r_m / 2 re-covering
    assert sum(pol.eliminated) > 0


def test_dlpp_freeze_uses_exactly_v_m_observations():
    T = 6000
    c = cell("triangle", policy="dlpp", delay={"kind": "uniform", "low": 0, "high": 100}, horizon=T)
    env, pol, dmodel, drng = build(c)
    simulate(env, pol, dmodel, T, drng)
    done = np.flatnonzero(pol.phase_of[: pol.n_balls] < pol.phase)
    v_m = log_term(T, 0.01) / (2.0 ** -pol.phase_of[done]) ** 2
    assert np.array_equal(pol.v[done], np.ceil(v_m).astype(np.int64))
    with pytest.raises(ConfigError, match="late_feedback"):
        build(cell(policy="dlpp", late_feedback="never"))


def _run_paper_dlpp(experiment, delay):
    grid = load_grid(load_config_file("config/lipschitz.yaml"))
    c = grid.cell(experiment, "dlpp", delay, "none", 0)
    env, pol, dmodel, drng = build(c)
    logs = simulate(env, pol, dmodel, c["horizon"], drng)
    return pol, logs


@pytest.mark.parametrize(
    "experiment,delays",
    [
        ("lipschitz_triangle", ["none", "uniform_mean20", "uniform_mean50", "geometric_mean20", "geometric_mean50"]),
        ("lipschitz_two_dim", ["geometric_mean50"]),
    ],
)
def test_dlpp_eliminates_balls_within_the_horizon_at_the_paper_default(experiment, delays):
    for delay in delays:
        pol, _ = _run_paper_dlpp(experiment, delay)
        assert sum(pol.eliminated) >= 1, delay  # Sec. 7: "surviving active balls"
        assert pol.phase >= 5


def test_dlpp_never_eliminates_at_the_theory_constants():
    """Why sigma = 1 is only a named variant: no ball can be eliminated before phase 4, which needs
    ~128k rounds, so DLPP plays uniformly on [0, 1] for all 60,000 rounds."""
    pol, logs = _run_paper_dlpp("lipschitz_triangle_theory_constants", "none")
    assert sum(pol.eliminated) == 0 and pol.phase == 4
    uniform_play = 0.9 * (0.4**2 + 0.6**2) / 2  # E[Delta(U)], U ~ U[0, 1]
    assert logs["regret"].mean() == pytest.approx(uniform_play, rel=0.02)
