"""Feedback items exchanged between environment, delay queue and policy.

Each item is stamped with the round ``round`` it belongs to (the round in which
the action that produced it was played), so delay-aware policies (inverse
probability weighting, lazy updates) can credit it to the right decision no
matter when it arrives.

The items are named tuples: immutable, and several times cheaper to create than frozen
dataclasses (one is created every round); :func:`new_feedback` creates one from a tuple of
its fields without the named tuple's Python-level ``__new__`` (half the cost).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: ``new_feedback(Item, (field, ...))``: the item ``Item(field, ...)``, made by ``tuple.__new__`` directly
new_feedback = tuple.__new__


class PreferenceFeedback(NamedTuple):
    """Binary duel outcome: ``y = 1`` if the first arm of the pair won."""

    round: int
    y: int


class RewardFeedback(NamedTuple):
    """Scalar (noisy) reward of the played action."""

    round: int
    reward: float


class PreferenceCostFeedback(NamedTuple):
    """Duel outcome plus the noisy resource costs of both played actions.

    ``costs`` has shape ``(2, n_resources)``: row 0 is the first action's cost
    vector, row 1 the second's.
    """

    round: int
    y: int
    costs: np.ndarray


class RewardCostFeedback(NamedTuple):
    """Noisy reward(s) and cost vector(s) of the played action(s) (ideal baselines)."""

    round: int
    rewards: np.ndarray
    costs: np.ndarray
