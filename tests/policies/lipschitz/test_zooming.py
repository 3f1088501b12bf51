"""Delayed Zooming (seed 003, Algorithm 1): activations, the lazy-update cache, classic zooming without delay."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditbench.api import Problem
from banditbench.configuration.grid import load_config_file
from banditbench.envs.lipschitz import LipschitzEnv
from banditbench.policies.lipschitz import DelayedZooming, log_term
from banditbench.policies.lipschitz.metric_space import ball_boxes, find_uncovered, in_balls, split_box
from banditbench.simulation.runner import build, simulate
from conftest import ROOT
from helpers import lipschitz_cell as cell


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
