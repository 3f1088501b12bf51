"""Small instrumented environment/policy pair for testing the simulation loop."""

from __future__ import annotations

import numpy as np

from banditbench.api import Environment, Policy
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
