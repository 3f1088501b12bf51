"""Shared by tests of several folders: a small instrumented environment/policy pair for testing the simulation
loop; building a policy on an environment; the car data's path in the mirror; a Lipschitz cell."""

from __future__ import annotations

import numpy as np

from banditbench.api import Environment, Policy, Problem
from conftest import MIRROR
from banditbench.feedback import RewardFeedback


class CountingEnv(Environment):
    """Each round's feedback carries its round; logs the context drawn from the env stream."""

    feedback_kind = "reward"
    action_kind = "arm"
    metrics = ("context",)
    primary_metric = "context"

    def __init__(self, seed_seq, *, horizon):
        self.rng = np.random.default_rng(seed_seq)
        self.value = 0.0

    def public_info(self):
        return {}

    def context(self, t):
        self.value = float(self.rng.random())
        return self.value

    def step(self, t, action):
        return RewardFeedback(t, float(action)), {"context": self.value}


class RecordingPolicy(Policy):
    """Records (arrival round, feedback round) pairs; acts randomly from its own stream."""

    feedback_kind = "reward"

    def __init__(self, problem, rng):
        self.rng = rng
        self.seen: list[tuple[int, int]] = []

    def observe(self, t, arrived):
        self.seen.extend((t, fb.round) for fb in arrived)

    def act(self, t, context):
        return self.rng.random()


CAR_DATA = MIRROR / "uci" / "car" / "car.data"


def make(policy_cls, env, seed=0, **params):
    problem = Problem(horizon=env.horizon, info=env.public_info())
    return policy_cls(problem, np.random.default_rng(seed), **params)


def lipschitz_cell(
    function="triangle", policy="delayed_zooming", delay=None, horizon=2000, seed=0, noise_sigma=1.0, **params
):
    """A resolved cell of ``policy`` on the Lipschitz environment (no delay unless ``delay``)."""
    return {
        "experiment": "x",
        "algorithm": policy,
        "seed": seed,
        "horizon": horizon,
        "budget": None,
        "delay_label": "test",
        "environment": {"name": "lipschitz", "params": {"function": function, "noise_sigma": noise_sigma}},
        "policy": {"name": policy, "params": params},
        "delay": delay or {"kind": "none"},
    }
