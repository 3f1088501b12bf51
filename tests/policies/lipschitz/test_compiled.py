"""The compiled Lipschitz runs (policies/lipschitz/compiled.py) make the Python loop's decisions, bit for bit."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import deque
from functools import partial

import numpy as np
import pytest

from banditbench.api import Problem
from banditbench.simulation.delays import make_delay
from banditbench.envs.lipschitz import FUNCTION_CODES, FUNCTIONS, SCALAR, LipschitzEnv
from banditbench.policies.lipschitz import DLPP, compiled, metric_space
from banditbench.simulation.runner import build, simulate
from helpers import lipschitz_cell


#: the cells of these tests: noise 0.1 unless given
cell = partial(lipschitz_cell, noise_sigma=0.1)


def run(c, compiled_run: bool):
    env, pol, delay, delay_rng = build(c)
    ran = []
    run_compiled = pol.run_compiled
    pol.run_compiled = lambda *a: ran.append(run_compiled(*a)) or ran[-1]
    series = simulate(env, pol, delay, c["horizon"], delay_rng, compiled=compiled_run)
    assert ran == ([True] if compiled_run else [])  # the path asked for was the path taken
    return series, pol


def floats(x):
    return tuple(float(v) for v in x)


def queue(pending: deque) -> list:
    return [
        (floats(lo), floats(hi), None if inner is None else (floats(inner[0]), floats(inner[1])), int(arm), int(v))
        for lo, hi, inner, arm, v in pending
    ]


DELAYS = [
    {"kind": "none"},
    {"kind": "geometric", "mean": 20, "window": 60},
    {"kind": "uniform", "low": 100, "high": 200},
]
ZOOMING = [
    {"sigma": 0.01},
    {"sigma": 0.1, "lazy_rule": "count"},
    {"sigma": 0.001, "activation": "midpoint"},
    {"sigma": 0.002},
]


@pytest.mark.parametrize("function", list(FUNCTIONS))
@pytest.mark.parametrize("delay", DELAYS)
@pytest.mark.parametrize("params", ZOOMING)
def test_compiled_zooming_makes_the_python_loops_decisions(function, delay, params):
    c = cell(function, delay=delay, noise_sigma=params["sigma"], seed=3, **params)
    (fast, a), (slow, b) = run(c, True), run(c, False)
    for name in slow:
        assert np.array_equal(fast[name], slow[name])
    n = b.n_arms
    assert a.n_arms == n >= 3 and np.array_equal(a.arm_of_round, b.arm_of_round)
    for name in (
        "centers",
        "lo",
        "hi",
        "v",
        "sums",
        "radius",
        "index",
        "cache_n",
        "cache_sum",
        "v_at_pull",
        "v_after_pull",
    ):
        assert np.array_equal(getattr(a, name)[:n], getattr(b, name)[:n]), name
    assert a._version == b._version and queue(a._pending) == queue(b._pending)
    assert a.activated_last_round == b.activated_last_round
    assert a.rng.random() == b.rng.random()  # the same draws from the policy's stream


@pytest.mark.parametrize("function", list(FUNCTIONS))
@pytest.mark.parametrize("delay", DELAYS)
@pytest.mark.parametrize("params", [{"sigma": 0.01}, {"sigma": 0.1, "late_feedback": "update"}])
def test_compiled_dlpp_makes_the_python_loops_decisions(function, delay, params):
    c = cell(function, policy="dlpp", delay=delay, noise_sigma=params["sigma"], seed=5, **params)
    (fast, a), (slow, b) = run(c, True), run(c, False)
    for name in slow:
        assert np.array_equal(fast[name], slow[name])
    n = b.n_balls
    assert a.n_balls == n and a.phase == b.phase >= 3 and a.phase_start == b.phase_start and a.n_plus == b.n_plus
    assert np.array_equal(a.ball_of_round, b.ball_of_round) and a.eliminated == b.eliminated
    for name in ("centers", "lo", "hi", "phase_of", "v", "sums", "mean", "in_plus"):
        assert np.array_equal(getattr(a, name)[:n], getattr(b, name)[:n]), name
    assert a._box == b._box and list(a._pass) == list(b._pass) and (a.r, a.v_target) == (b.r, b.v_target)
    assert a.rng.random() == b.rng.random()


def test_compiled_zooming_splits_crowded_boxes_like_the_python_oracle(monkeypatch):
    """At a tiny sigma many balls meet a queued box, which the oracle splits before the exact check."""
    import banditbench.policies.lipschitz.zooming as module

    splits = []
    monkeypatch.setattr(module, "split_box", lambda lo, hi: splits.append(1) or metric_space.split_box(lo, hi))
    c = cell("triangle", delay={"kind": "geometric", "mean": 20}, horizon=3000, noise_sigma=0.001, sigma=0.001)
    (_, a), (_, b) = run(c, True), run(c, False)
    assert splits and np.array_equal(a.arm_of_round, b.arm_of_round) and a.n_arms == b.n_arms > 60
    assert np.array_equal(a.centers[: a.n_arms], b.centers[: b.n_arms])


def test_the_python_loop_runs_whatever_the_compiled_run_cannot_reproduce():
    c = cell("sine", delay={"kind": "geometric", "mean": 5}, horizon=300)
    env, pol, delay, drng = build(c)
    seen = []
    original = pol.observe
    pol.observe = lambda t, arrived: seen.extend(arrived) or original(t, arrived)  # a replaced method
    simulate(env, pol, delay, 300, drng)
    assert len(seen) > 200

    class Counting(DLPP):  # a subclass may change any step
        acts = 0

        def act(self, t, context=None):
            Counting.acts += 1
            return super().act(t, context)

    env = LipschitzEnv(np.random.SeedSequence(0), horizon=300)
    pol = Counting(Problem(300, info=env.public_info()), np.random.default_rng(0))
    assert not pol.run_compiled(env, np.arange(2, 302), 300)
    simulate(env, pol, make_delay({"kind": "none"}), 300, np.random.default_rng(0))
    assert Counting.acts == 300

    class Quiet(LipschitzEnv):  # another environment
        pass

    env, pol, _, _ = build(c)
    assert not pol.run_compiled(Quiet(np.random.SeedSequence(0), horizon=300), np.arange(2, 302), 300)
    pol.act(1)  # a policy that has played already
    assert not pol.run_compiled(env, np.arange(2, 302), 300)


def test_replay_is_the_same_environment_step_and_queue():
    c = cell("two_dim", delay={"kind": "uniform", "low": 0, "high": 40}, horizon=1500, sigma=0.05)
    series, pol = run(c, True)
    env, _, delay, delay_rng = build(c)
    arrival = delay.arrival_rounds(delay.sample(delay_rng, 1500), 1500)
    rounds, start = compiled.arrival_table(arrival, 1500)
    function, noise = env.compiled_step()
    mu, delivered = compiled.replay_run(pol.centers[pol.arm_of_round], function, noise, rounds, start)
    assert np.array_equal(mu, series["expected_reward"])
    delivered_rounds = rounds[start[1] : start[1501]]
    assert sorted(delivered_rounds.tolist()) == (np.flatnonzero(arrival) + 1).tolist()
    assert delivered == pytest.approx((mu + noise)[delivered_rounds - 1].sum(), rel=1e-12)


def test_arrival_table_lists_each_rounds_arrivals_in_round_order():
    T = 3000
    for spec in (
        {"kind": "geometric", "mean": 20, "window": 30},
        {"kind": "uniform", "low": 0, "high": 100},
        {"kind": "none"},
    ):
        delay = make_delay(spec)
        arrival = delay.arrival_rounds(delay.sample(np.random.default_rng(0), T), T)
        rounds, start = compiled.arrival_table(arrival, T)
        for t in range(1, T + 1):
            assert rounds[start[t] : start[t + 1]].tolist() == (np.flatnonzero(arrival == t) + 1).tolist()
        assert start[T + 1] - start[1] == np.count_nonzero(arrival)


def test_compiled_hypot_and_reward_functions_have_the_bits_of_python():
    rng = np.random.default_rng(0)
    for scale in (1.0, 1e-3, 1e-9):
        x, y = (rng.random(20_000) * 2 - 1) * scale, (rng.random(20_000) * 2 - 1) * scale * rng.random()
        assert all(compiled.cpython_hypot(u, w) == math.hypot(u, w) for u, w in zip(x.tolist(), y.tolist()))
    for u, w in ((0.0, 0.0), (0.0, 0.3), (-0.25, 0.25), (5e-324, 0.0), (1e-310, 3e-310)):
        assert compiled.cpython_hypot(u, w) == math.hypot(u, w)
    for u, w in ((math.inf, math.nan), (math.nan, -math.inf), (math.nan, 0.5), (0.5, math.nan), (-math.inf, 2.0)):
        assert repr(compiled.cpython_hypot(u, w)) == repr(math.hypot(u, w))
    points = rng.random((5000, 2))
    for name, formula in SCALAR.items():
        code = FUNCTION_CODES[name]
        for p in points.tolist():
            args = p[: FUNCTIONS[name].dimension]
            assert compiled.mean_reward(code, p[0], p[1]) == formula(*args)


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("uniform", [True, False])
def test_compiled_grid_oracle_and_covering_match_metric_space(d, uniform):
    rng = np.random.default_rng(d)
    checked = uncovered = 0
    for _ in range(300):
        k = int(rng.integers(1, 12))
        centers, radii = rng.random((k, d)), rng.random(k) * 0.3
        lo, hi = metric_space.ball_boxes(centers, radii)
        rlo = rng.random(d) * 0.5
        rhi = rlo + 0.05 + rng.random(d) * 0.5
        blo, bhi = np.maximum(lo, rlo), np.minimum(hi, rhi)
        meet = ((lo < rhi) & (hi > rlo)).all(axis=1)
        blo, bhi = blo[meet], bhi[meet]
        seed = int(rng.integers(1 << 30))
        expected = metric_space.grid_uncovered(
            rlo, rhi, blo, bhi, np.random.default_rng(seed), "uniform" if uniform else "midpoint"
        )
        found, x, y = compiled.grid_uncovered(rlo, rhi, blo, bhi, np.random.default_rng(seed), uniform)
        assert found == (expected is not None)
        if found:
            assert (x, y)[:d] == tuple(expected.tolist())
            uncovered += 1
        checked += 1
        r = float(rng.random() * 0.2 + 0.01)
        assert np.array_equal(compiled.cover_box(rlo, rhi, r), metric_space.cover_box(rlo, rhi, r))
    assert 0 < uncovered < checked


# a job's process: every compiled cell of the test above, counting what numba had to compile
JOB_PROCESS = """
import json, sys
from numba.core.registry import CPUDispatcher
from banditbench.policies.lipschitz import compiled
from banditbench.simulation.runner import build, simulate
for c in json.loads(sys.argv[1]):
    env, pol, delay, delay_rng = build(c)
    simulate(env, pol, delay, c["horizon"], delay_rng)
print(json.dumps({name: [len(f.stats.cache_hits), len(f.stats.cache_misses)] for name, f in vars(compiled).items()
                  if isinstance(f, CPUDispatcher)}))
"""


def test_precompile_leaves_a_job_nothing_to_compile():
    """After ``banditbench precompile`` (make install), the runs of either policy, whatever the function,
    delay and flags, load every compiled function from numba's cache: the jobs' signatures are the ones
    precompiled."""
    done = subprocess.run([sys.executable, "-m", "banditbench", "precompile"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "zooming_run, dlpp_run" in done.stdout
    cells = [
        cell(function, policy, delay=delay, horizon=300, seed=1, **params)
        for function in FUNCTIONS
        for delay in DELAYS
        for policy, params in (
            ("delayed_zooming", {"lazy_rule": "count", "activation": "midpoint"}),
            ("delayed_zooming", {}),
            ("dlpp", {"late_feedback": "update"}),
            ("dlpp", {}),
        )
    ]
    job = subprocess.run([sys.executable, "-c", JOB_PROCESS, json.dumps(cells)], capture_output=True, text=True)
    assert job.returncode == 0, job.stderr
    stats = json.loads(job.stdout)
    for name in ("zooming_run", "dlpp_run", "arrival_table"):
        hits, misses = stats[name]
        assert hits >= 1 and misses == 0, (name, stats[name])
