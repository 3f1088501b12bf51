"""Seed 003: Lipschitz bandits with delayed feedback (Delayed Zooming, DLPP), their space and environment."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from banditbench import params
from banditbench.api import Problem
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.simulation.delays import make_delay
from banditbench.errors import ConfigError
from banditbench.envs.lipschitz import FUNCTIONS, LipschitzEnv, mean_reward
from banditbench.policies.lipschitz import DLPP, DelayedZooming, log_term
from banditbench.policies.lipschitz.metric_space import (
    ball_boxes,
    cover_box,
    find_uncovered,
    in_balls,
    linf_distance,
    split_box,
)
from banditbench.simulation.job import run_cell
from banditbench.simulation.runner import build, simulate
from conftest import ROOT


def cell(function="triangle", policy="delayed_zooming", delay=None, horizon=2000, seed=0, noise_sigma=1.0, **params):
    return {
        "seed": seed,
        "horizon": horizon,
        "budget": None,
        "delay_label": "test",
        "environment": {"name": "lipschitz", "params": {"function": function, "noise_sigma": noise_sigma}},
        "policy": {"name": policy, "params": params},
        "delay": delay or {"kind": "none"},
    }


# --- environment --------------------------------------------------------------------------------


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


# --- metric space and covering oracles ----------------------------------------------------------


def test_covering_oracle_is_exact_at_boundaries():
    lo, hi = ball_boxes(np.array([[0.25], [0.75]]), np.array([0.25, 0.25]))
    assert find_uncovered(np.zeros(1), np.ones(1), lo, hi, rule="midpoint") is None  # closed balls touch
    lo, hi = ball_boxes(np.array([[0.25], [0.75 + 1e-9]]), np.array([0.25, 0.25]))
    p = find_uncovered(np.zeros(1), np.ones(1), lo, hi, np.random.default_rng(0))
    assert 0.5 < p[0] < 0.5 + 1e-9 and not in_balls(p, lo, hi).any()  # a 1e-9 gap is found
    centers = np.array([[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]])
    lo, hi = ball_boxes(centers, np.full(4, 0.25))
    assert find_uncovered(np.zeros(2), np.ones(2), lo, hi, rule="midpoint") is None
    lo, hi = ball_boxes(centers, np.array([0.25, 0.25, 0.25, 0.25 - 1e-7]))
    for rule in ("uniform", "midpoint"):
        p = find_uncovered(np.zeros(2), np.ones(2), lo, hi, np.random.default_rng(1), rule)
        assert not in_balls(p, lo, hi).any()
        assert 0.25 - 1e-7 < linf_distance(p, centers[3]) <= 0.25  # in the 1e-7 sliver
    assert linf_distance(np.array([0.1, 0.9]), np.array([0.3, 0.2])) == pytest.approx(0.7)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_covering_oracle_agrees_with_dense_sampling(d):
    rng = np.random.default_rng(d)
    probe = rng.random((20000, d))
    outcomes = set()
    for trial in range(60):
        k = int(rng.integers(1, 12 * d))
        lo, hi = ball_boxes(rng.random((k, d)), rng.uniform(0.05, 0.6, size=k))
        rlo = rng.random(d) * 0.5
        rhi = rlo + rng.uniform(0.1, 0.5, size=d)
        p = find_uncovered(rlo, rhi, lo, hi, rng, "uniform" if trial % 2 else "midpoint")
        pts = rlo + probe * (rhi - rlo)
        covered = np.any(np.all((lo[:, None, :] <= pts) & (pts <= hi[:, None, :]), axis=2), axis=0)
        if p is None:
            assert covered.all(), "oracle said covered but a sampled point is not"
            outcomes.add("covered")
        else:
            assert np.all((rlo <= p) & (p <= rhi)) and not in_balls(p, lo, hi).any()
            outcomes.add("uncovered")
    assert outcomes == {"covered", "uncovered"}


def test_uniform_activation_is_uniform_on_the_uncovered_set():
    lo, hi = ball_boxes(np.array([[0.55]]), np.array([0.35]))  # covers [0.2, 0.9]
    rng = np.random.default_rng(5)
    pts = np.array([find_uncovered(np.zeros(1), np.ones(1), lo, hi, rng)[0] for _ in range(4000)])
    assert np.all((pts < 0.2) | (pts > 0.9))
    assert abs(np.mean(pts < 0.2) - 2 / 3) < 0.03
    assert abs(np.mean(pts[pts < 0.2]) - 0.1) < 0.005


def test_cover_box_is_an_r_covering():
    rng = np.random.default_rng(2)
    for d in (1, 2):
        c = cover_box(np.full(d, 0.25), np.full(d, 0.75), 0.125)  # dyadic: 2^d children
        assert c.shape == (2**d, d)
        assert np.allclose(np.sort(c[:, 0]), np.repeat([0.375, 0.625], 2 ** (d - 1)))
        lo, hi = rng.random(d) * 0.4, 0.6 + rng.random(d) * 0.4
        r = 0.07
        c = cover_box(lo, hi, r)
        pts = lo + rng.random((5000, d)) * (hi - lo)
        assert linf_distance(pts[:, None, :], c[None]).min(axis=1).max() <= r + 1e-12
        assert np.all((c >= lo) & (c <= hi))
    assert cover_box(np.zeros(2), np.ones(2), 0.5).tolist() == [[0.5, 0.5]]


# --- Delayed Zooming ------------------------------------------------------------------------------


class RecordingZooming(DelayedZooming):
    """Checks Alg. 1's activation rule against a global exact coverage test every round."""

    def act(self, t, context=None):
        n = self.n_arms
        lo, hi = self.lo[:n].copy(), self.hi[:n].copy()
        uncovered = find_uncovered(np.zeros(self.d), np.ones(self.d), lo, hi, rule="midpoint") is not None
        action = super().act(t, context)
        assert self.activated_last_round == uncovered
        if uncovered:
            assert self.n_arms == n + 1 and not in_balls(self.centers[n], lo, hi).any()
        else:
            assert self.n_arms == n
        return action


@pytest.mark.parametrize(
    "function,delay,sigma,lazy_rule,min_arms",
    [
        ("triangle", {"kind": "geometric", "mean": 20}, 0.04, "count", 5),
        ("two_dim", {"kind": "uniform", "low": 0, "high": 40}, 0.04, "count", 20),
        ("triangle", {"kind": "geometric", "mean": 20}, 0.001, "radius", 60),  # queued boxes get split
    ],
)
def test_zooming_activates_exactly_when_the_space_is_not_covered(
    function, delay, sigma, lazy_rule, min_arms, monkeypatch
):
    import banditbench.policies.lipschitz.zooming as module

    splits = []
    monkeypatch.setattr(module, "split_box", lambda lo, hi: splits.append(1) or split_box(lo, hi))
    c = cell(function, delay=delay, horizon=3000)
    env, _, dmodel, drng = build(c)
    pol = RecordingZooming(
        Problem(3000, info=env.public_info()), np.random.default_rng(7), sigma=sigma, lazy_rule=lazy_rule
    )
    simulate(env, pol, dmodel, 3000, drng)
    assert pol.n_arms >= min_arms  # the check ran on a real active set
    if sigma < 0.01:
        assert splits  # the box-splitting path was exercised


class LazyCheckingZooming(DelayedZooming):
    """After every feedback batch, checks the lazy-update invariant and feedback conservation."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.arrived_per_round = np.zeros(self.horizon, dtype=np.int64)
        self.cached_ever = 0

    def observe(self, t, arrived):
        for fb in arrived:
            self.arrived_per_round[fb.round - 1] += 1
        super().observe(t, arrived)
        n = self.n_arms
        self.cached_ever = max(self.cached_ever, int(self.cache_n[:n].sum()))
        arrived_per_arm = np.bincount(self.arm_of_round[: t - 1], self.arrived_per_round[: t - 1], minlength=n)
        assert np.array_equal(self.v[:n] + self.cache_n[:n], arrived_per_arm.astype(np.int64))
        v, vs, va = self.v[:n], self.v_at_pull[:n], self.v_after_pull[:n]
        if self.lazy_rule == "count":
            # line 5: between pulls a reward is used only while v + 1 <= 4 v_s (v_s > 0), or while the
            # radius stays >= r_0 / 2 (v_s = 0: v <= 3); the flush may go further
            assert np.all(v <= np.maximum(np.where(vs > 0, 4 * vs, 3), va))
        else:
            assert np.all(1 + v <= np.maximum(4 * (1 + vs), 1 + va))
        # hence the radius never falls below half its value right after the last pull
        r_after = self.scale / np.sqrt(1.0 + va)
        assert np.all(self.radius[:n] >= 0.5 * r_after - 1e-12)


@pytest.mark.parametrize("lazy_rule", ["count", "radius"])
def test_lazy_update_invariant_under_delays(lazy_rule):
    # long delays: an arm is pulled many times before its first reward arrives, so v_s stays small
    c = cell("two_dim", delay={"kind": "uniform", "low": 100, "high": 200}, horizon=4000)
    env, _, dmodel, drng = build(c)
    pol = LazyCheckingZooming(
        Problem(4000, info=env.public_info()), np.random.default_rng(3), lazy_rule=lazy_rule, sigma=0.1
    )
    simulate(env, pol, dmodel, 4000, drng)
    assert pol.cached_ever > 0  # the cache was exercised
    assert pol.n_arms >= 5


def classic_zooming(env, horizon, rng, scale):
    """Independent textbook zooming (Kleinberg et al. 2008) on ([0,1], |.|), pure Python.

    Rewards are used as soon as they are observed.  Activation: the uncovered set is
    computed by a global sweep; the new arm is the point with uncovered length
    ``u * |uncovered|`` to its left, ``u`` uniform on (0, 1)."""
    centers, n, sums, played = [], [], [], []
    for t in range(1, horizon + 1):
        radii = [scale / math.sqrt(1 + k) for k in n]
        intervals = sorted((max(0.0, c - r), min(1.0, c + r)) for c, r in zip(centers, radii))
        gaps, reach = [], 0.0
        for a, b in intervals:
            if a > reach:
                gaps.append((reach, a))
            reach = max(reach, b)
        if reach < 1.0:
            gaps.append((reach, 1.0))
        if gaps:
            u = rng.random()
            while u == 0.0:
                u = rng.random()
            target = u * sum(b - a for a, b in gaps)
            for a, b in gaps:
                if target < b - a:
                    break
                target -= b - a
            centers.append(a + target)
            n.append(0)
            sums.append(0.0)
            i = len(centers) - 1
        else:
            index = [(s / k if k else 0.0) + 2 * r for s, k, r in zip(sums, n, radii)]
            i = max(range(len(index)), key=lambda j: (index[j], -j))
        fb, _ = env.step(t, centers[i])
        n[i] += 1
        sums[i] += fb.reward
        played.append(centers[i])
    return np.array(played)


@pytest.mark.parametrize("lazy_rule", ["count", "radius"])
def test_zero_delay_reproduces_classic_zooming(lazy_rule):
    T, seed = 3000, 11
    c = cell("triangle", horizon=T, seed=seed, lazy_rule=lazy_rule)
    env, pol, dmodel, drng = build(c)
    simulate(env, pol, dmodel, T, drng)
    ours = pol.centers[pol.arm_of_round, 0]
    env_ref = LipschitzEnv(np.random.SeedSequence(seed).spawn(3)[0], horizon=T, function="triangle")
    ref_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])
    ref = classic_zooming(env_ref, T, ref_rng, math.sqrt(log_term(T, 0.01)))
    assert pol.n_arms >= 3
    assert len(np.unique(ref)) == pol.n_arms
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)


def _shipped_zooming_settings():
    """(function, environment noise, policy sigma) of every ``delayed_zooming`` cell in the shipped configs."""
    root = ROOT
    found = set()
    for path in [root / "config.yaml", *sorted((root / "config").glob("lipschitz*.yaml"))]:
        for exp in load_config_file(path)["experiments"].values():
            env = exp["environment"]
            if env["name"] != "lipschitz":
                continue
            for alg in exp["algorithms"].values():
                if alg["policy"] == "delayed_zooming":
                    found.add(
                        (
                            env["params"]["function"],
                            float(env["params"].get("noise_sigma", 1.0)),
                            float(alg.get("params", {}).get("sigma", 1.0)),
                        )
                    )
    return sorted(found)


SHIPPED_ZOOMING = _shipped_zooming_settings()


class ClassicZoomingCheck(DelayedZooming):
    """Delayed Zooming that, every round, checks its state against textbook zooming (Kleinberg et al.)
    run on the same history: every observed reward is used at once (``n`` = pulls so far), the
    radius is ``scale / sqrt(1 + n)``, the index ``mean + 2 r``, a new arm is activated only at a
    point no reference ball contains, otherwise the pulled arm is the reference index's argmax."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.ref_n, self.ref_sum, self.ref_centers = [], [], []
        self.selections = 0

    def observe(self, t, arrived):
        for fb in arrived:
            i = int(self.arm_of_round[fb.round - 1])
            self.ref_n[i] += 1
            self.ref_sum[i] += fb.reward
        super().observe(t, arrived)

    def act(self, t, context=None):
        n = np.array(self.ref_n, dtype=np.int64)
        k = len(n)
        radii = self.scale / np.sqrt(1.0 + n)
        assert np.array_equal(self.v[:k], n) and not self.cache_n[:k].any()  # every reward used at once
        np.testing.assert_allclose(self.radius[:k], radii, rtol=1e-13)
        lo, hi = ball_boxes(np.array(self.ref_centers).reshape(k, self.d), radii)
        action = super().act(t, context)
        if self.activated_last_round:
            assert self.n_arms == k + 1 and not in_balls(self.centers[k], lo, hi).any()
            self.ref_n.append(0)
            self.ref_sum.append(0.0)
            self.ref_centers.append(self.centers[k].copy())
        else:
            index = np.where(n > 0, np.array(self.ref_sum) / np.maximum(n, 1), 0.0) + 2.0 * radii
            assert self.arm_of_round[t - 1] == int(np.argmax(index))
            self.selections += 1
            if t % (10 if self.d == 1 else 100) == 0:  # the reference balls cover the space
                assert find_uncovered(np.zeros(self.d), np.ones(self.d), lo, hi, rule="midpoint") is None
        return action


@pytest.mark.parametrize("lazy_rule", ["radius", "count"])
@pytest.mark.parametrize("function,noise,sigma", SHIPPED_ZOOMING)
def test_without_delay_delayed_zooming_is_classic_zooming_at_every_shipped_sigma(function, noise, sigma, lazy_rule):
    """Sec. 4: "if the delays are zero, this algorithm reduces to the original zooming algorithm" —
    for both lazy rules (``count`` at v_s = 0 included) and every (function, noise, sigma) in the configs."""
    T = 1500
    env, _, dmodel, drng = build(cell(function, horizon=T, seed=2, noise_sigma=noise))
    pol = ClassicZoomingCheck(
        Problem(T, info=env.public_info()), np.random.default_rng(5), sigma=sigma, lazy_rule=lazy_rule
    )
    simulate(env, pol, dmodel, T, drng)
    assert pol.n_arms >= 2
    assert pol.selections > 0 or pol.n_arms == T  # tiny sigma in 2-d: activation only


def test_shipped_settings_include_the_theory_constants_and_small_sigmas():
    sigmas = {s for _, _, s in SHIPPED_ZOOMING}
    assert 1.0 in sigmas and min(sigmas) <= 0.01


class ShellSoundnessCheck(DelayedZooming):
    """Every queued box the cheap face-by-face test calls covered is covered: the exact oracle, on all
    current balls, finds no uncovered point in it."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.verdicts = {True: 0, False: 0}

    def _shell_covered(self, rlo, rhi, inner, arm, version):
        covered = super()._shell_covered(rlo, rhi, inner, arm, version)
        self.verdicts[covered] += 1
        if covered:
            n = self.n_arms
            assert find_uncovered(np.array(rlo), np.array(rhi), self.lo[:n], self.hi[:n], rule="midpoint") is None
        return covered


@pytest.mark.parametrize(
    "function,delay,sigma",
    [
        ("two_dim", {"kind": "none"}, 0.01),
        ("two_dim", {"kind": "uniform", "low": 0, "high": 40}, 0.05),
        ("triangle", {"kind": "geometric", "mean": 20}, 0.01),
    ],
)
def test_the_cheap_shell_test_only_calls_covered_boxes_covered(function, delay, sigma):
    T = 4000
    env, _, dmodel, drng = build(cell(function, delay=delay, horizon=T, noise_sigma=sigma))
    pol = ShellSoundnessCheck(Problem(T, info=env.public_info()), np.random.default_rng(1), sigma=sigma)
    simulate(env, pol, dmodel, T, drng)
    calls = pol.verdicts[True] + pol.verdicts[False]
    assert calls > T / 2 and pol.verdicts[True] > 0.8 * calls and pol.verdicts[False] > 0  # both answers exercised


def test_count_rule_uses_an_arms_first_reward_and_keeps_the_printed_test_afterwards():
    """``lazy_rule="count"``: with ``v_s = 0`` the printed ``v + 1 <= 4 v_s`` would cache every reward; the
    radius guarantee lets up to three in (r >= r_0 / 2), and with ``v_s >= 1`` the printed test applies."""
    T = 100
    env = LipschitzEnv(np.random.SeedSequence(0), horizon=T, function="triangle", noise_sigma=0.1)
    pol = DelayedZooming(Problem(T, info=env.public_info()), np.random.default_rng(0), sigma=0.1, lazy_rule="count")
    pol.act(1)  # first arm, v_s = 0
    fb = [env.step(s, pol.centers[0, 0])[0] for s in range(1, 6)]
    pol.arm_of_round[:5] = 0  # five rounds of arm 0, rewards arrive late
    pol.observe(6, fb)
    assert pol.v[0] == 3 and pol.cache_n[0] == 2  # 1 + v <= 4 (1 + 0) -> 3 used
    pol.v_at_pull[0] = 2  # now pulled with v_s = 2: v + 1 <= 8
    pol.cache_n[0] = 0
    pol.observe(7, fb * 2)
    assert pol.v[0] == 8 and pol.cache_n[0] == 5


# --- DLPP -------------------------------------------------------------------------------------------


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


# --- shared behaviour -----------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["delayed_zooming", "dlpp"])
@pytest.mark.parametrize(
    "delay", [{"kind": "geometric", "mean": 20}, {"kind": "uniform", "low": 0, "high": 40}, {"kind": "none"}]
)
def test_feedback_never_arrives_early(policy, delay):
    T = 1500
    c = cell("sine", policy=policy, delay=delay, horizon=T, seed=4)
    env, pol, dmodel, drng = build(c)
    delays = dmodel.sample(build(c)[3], T)  # the runner's delays: same seed, same stream
    seen = []
    original = pol.observe

    def observe(t, arrived):
        seen.extend((t, fb.round) for fb in arrived)
        original(t, arrived)

    pol.observe = observe
    simulate(env, pol, dmodel, T, drng)
    assert len(seen) > T // 2
    for t, s in seen:
        assert s < t and t >= s + max(int(delays[s - 1]), 1)
        assert t == s + max(int(delays[s - 1]), 1)


def test_regret_is_sublinear_on_triangle():
    # noise sigma = 0.2 (known to both policies, App. D) so that DLPP gets past its first eliminations
    ratios = {}
    for policy in ("delayed_zooming", "dlpp"):
        for T in (6000, 12000):
            regrets = [
                run_cell(
                    cell(
                        "triangle",
                        policy=policy,
                        horizon=T,
                        seed=s,
                        noise_sigma=0.2,
                        sigma=0.2,
                        delay={"kind": "geometric", "mean": 20},
                    )
                )[0]["regret"].sum()
                for s in range(3)
            ]
            ratios[policy, T] = np.mean(regrets) / T
    uniform_play = 0.9 * (0.4**2 + 0.6**2) / 2  # per-round regret of x ~ U[0, 1]
    for policy in ("delayed_zooming", "dlpp"):
        assert ratios[policy, 12000] < 0.92 * ratios[policy, 6000], ratios
        assert ratios[policy, 12000] < 0.85 * uniform_play, ratios


def test_paper_config_validates_and_a_cell_runs():
    config = load_config_file("config/lipschitz.yaml")
    grid = load_grid(config)
    functions = ["sine", "triangle", "two_dim"]
    assert sorted(grid.experiments) == sorted(
        [f"lipschitz_{f}" for f in functions] + [f"lipschitz_{f}_theory_constants" for f in functions]
    )
    for name, exp in grid.experiments.items():
        assert exp.horizon == 60000 and len(exp.seeds) == 30 and len(list(grid.jobs(name))) == 2 * 5 * 30
        noise = exp.spec["environment"]["params"]["noise_sigma"]
        assert noise == (1.0 if name.endswith("_theory_constants") else 0.01)
        # the policies are told the environment's noise level (App. D)
        assert [a["params"]["sigma"] for a in exp.spec["algorithms"].values()] == [noise, noise]
    assert make_delay(exp.spec["delays"]["uniform_mean50"]).mean == 50
    assert make_delay(exp.spec["delays"]["geometric_mean20"]).mean == 20
    small = load_grid({**config, "horizon": 800})
    series, meta, _ = run_cell(small.cell("lipschitz_two_dim", "delayed_zooming", "geometric_mean20", "none", 0))
    assert series["regret"].shape == (800,) and np.all(series["regret"] >= -1e-12)
    assert meta["summary"]["mu_star"] == pytest.approx(FUNCTIONS["two_dim"][1])


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


@pytest.mark.parametrize(
    "params,match",
    [
        ({"lazy_rule": "eager"}, "lazy_rule"),
        ({"delta": 1.5}, "delta"),
        ({"activation": "grid"}, "activation"),
        ({"sigma": 0}, "sigma"),
    ],
)
def test_bad_policy_parameters_raise(params, match):
    with pytest.raises(ConfigError, match=match):
        build(cell(**params))
