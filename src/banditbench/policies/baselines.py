"""Model-free reference policies: sanity baselines for any experiment.

They need only the number of arms K: on block arms (``arm_layout: block``, every arm's features a
block holding the round's row) they ask for the ``row`` context form and take K from the problem,
so the environment does not build the K x dK matrix for them (the same draws either way).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..api import Policy, Problem, register


@register("random_pair")
class RandomPair(Policy):
    """Duels two distinct arms drawn uniformly at random each round (regret grows linearly)."""

    feedback_kind = "preference"
    action_kind = "pair"
    self_duels = "never"

    def __init__(self, problem: Problem, rng: np.random.Generator):
        self.rng, self.n_arms = rng, _arms_of_block_layout(self, problem)

    def observe(self, t: int, arrived: Sequence) -> None:
        """Learns nothing."""

    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        i, j = self.rng.choice(self.n_arms or len(arms), size=2, replace=False)
        return int(i), int(j)


@register("random_arm")
class RandomArm(Policy):
    """Plays one arm drawn uniformly at random each round (the reference line of reward-feedback experiments)."""

    feedback_kind = "reward"
    action_kind = "arm"

    def __init__(self, problem: Problem, rng: np.random.Generator):
        self.rng, self.n_arms = rng, _arms_of_block_layout(self, problem)

    def observe(self, t: int, arrived: Sequence) -> None:
        """Learns nothing."""

    def act(self, t: int, arms: np.ndarray) -> int:
        return int(self.rng.integers(self.n_arms or len(arms)))


def _arms_of_block_layout(policy: Policy, problem: Problem) -> int | None:
    """On block arms: ask for the ``row`` context form and return K; otherwise None (K is the context's length)."""
    if problem.info.get("arm_layout") != "block":
        return None
    policy.context_form = "row"
    return int(problem["n_arms"])
