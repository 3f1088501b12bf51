"""What every dueling (preference-feedback) environment shares: its interface and its regret metrics.

The learner picks a pair ``(i, j)`` of the round's arms with latent utilities ``f``
and observes who won.  Per round a dueling environment logs (seed 000 Sec. 2,
seed 001):

* ``regret``          ``2 f(x*) - f(x_i) - f(x_j)`` (seed 000, Sec. 2),
* ``average_regret``  that divided by two (seed 001's average regret),
* ``weak_regret``     ``f(x*) - max(f(x_i), f(x_j))``.
"""

from __future__ import annotations

import numpy as np

from ..api import Environment


def duel_metrics(f: np.ndarray, i: int, j: int, best: float | None = None) -> dict[str, float]:
    """The per-round dueling metrics of the pair ``(i, j)`` under utilities ``f``
    (``best = max f``, computed when not given)."""
    best = float(f.max()) if best is None else best
    regret = 2.0 * best - f[i] - f[j]
    return {"regret": regret, "average_regret": 0.5 * regret, "weak_regret": best - max(f[i], f[j])}


class DuelingEnvironment(Environment):
    """Base of the dueling environments: pair actions, preference feedback, :func:`duel_metrics`."""

    feedback_kind = "preference"
    action_kind = "pair"
    metrics = ("regret", "average_regret", "weak_regret")
    primary_metric = "regret"
