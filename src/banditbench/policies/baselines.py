"""Model-free reference policies: sanity baselines for any experiment."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..api import Policy, Problem, register


@register("random_pair")
class RandomPair(Policy):
    """Duels two distinct arms drawn uniformly at random each round (regret grows linearly)."""

    feedback_kind = "preference"
    action_kind = "pair"

    def __init__(self, problem: Problem, rng: np.random.Generator):
        self.rng = rng

    def observe(self, t: int, arrived: Sequence) -> None:
        """Learns nothing."""

    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        i, j = self.rng.choice(len(arms), size=2, replace=False)
        return int(i), int(j)


@register("random_arm")
class RandomArm(Policy):
    """Plays one arm drawn uniformly at random each round (the reference line of reward-feedback experiments)."""

    feedback_kind = "reward"
    action_kind = "arm"

    def __init__(self, problem: Problem, rng: np.random.Generator):
        self.rng = rng

    def observe(self, t: int, arrived: Sequence) -> None:
        """Learns nothing."""

    def act(self, t: int, arms: np.ndarray) -> int:
        return int(self.rng.integers(len(arms)))
