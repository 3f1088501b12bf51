"""What every dueling (preference-feedback) environment shares: its interface and its regret metrics.

The learner picks a pair ``(i, j)`` of the round's arms with latent utilities ``f``
and observes who won.  Per round a dueling environment logs (seed 000 Sec. 2,
seed 001):

* ``regret``          ``2 f(x*) - f(x_i) - f(x_j)`` (seed 000, Sec. 2),
* ``average_regret``  that divided by two (seed 001's average regret),
* ``weak_regret``     ``f(x*) - max(f(x_i), f(x_j))``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..api import Environment


class DuelingEnvironment(Environment):
    """Base of the dueling environments: pair actions, preference feedback, the metrics above."""

    feedback_kind = "preference"
    action_kind = "pair"
    metrics = ("regret", "average_regret", "weak_regret")
    primary_metric = "regret"


class KeptDuelMetrics:
    """The metrics of the module docstring, kept by the environment (``keeps_truth``): its ``play``
    records a round's regret and weak regret (:meth:`_keep_duel`, on the numbers it is given), and
    :meth:`step` and :meth:`truth_log` read them back (``average_regret`` is half the regret);
    :meth:`_keep_truth` makes the lists.  Every dueling environment uses it."""

    keeps_truth = True

    def _keep_truth(self, horizon: int) -> None:
        self._regret, self._weak = [0.0] * horizon, [0.0] * horizon

    def _keep_duel(self, t: int, f: list[float], i: int, j: int, best: float) -> None:
        """Round ``t``'s regret and weak regret of the pair ``(i, j)`` under utilities ``f`` (``best = max f``)."""
        self._regret[t - 1], self._weak[t - 1] = 2.0 * best - f[i] - f[j], best - max(f[i], f[j])

    def step(self, t: int, action) -> tuple[Any, dict[str, float]]:
        feedback = self.play(t, action)
        regret = self._regret[t - 1]
        return feedback, {"regret": regret, "average_regret": 0.5 * regret, "weak_regret": self._weak[t - 1]}

    def truth_log(self, horizon: int) -> dict[str, Any]:
        regret = np.array(self._regret[:horizon])
        return {"regret": regret, "average_regret": 0.5 * regret, "weak_regret": self._weak[:horizon]}
