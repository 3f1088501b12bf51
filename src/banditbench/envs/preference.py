"""What every dueling (preference-feedback) environment shares: its interface and its regret metrics.

The learner picks a pair ``(i, j)`` of the round's arms with latent utilities ``f``
and observes who won.  Per round a dueling environment logs (seed 000 Sec. 2,
seed 001):

* ``regret``          ``2 f(x*) - f(x_i) - f(x_j)`` (seed 000, Sec. 2),
* ``average_regret``  that divided by two (seed 001's average regret),
* ``weak_regret``     ``f(x*) - max(f(x_i), f(x_j))``,
* ``self_duel``       1 when the two arms are the same (``i = j``), else 0.

A self-duel is allowed (seed 001's Listings 2-3 may pick k1 = k2) but carries no information for
a learner whose update is driven by the difference of the two arms' features or gradients
(Delta phi = 0).  Its running rate ``per_round_self_duel`` is tabulated for every dueling
experiment (:attr:`DuelingEnvironment.rate_metrics`), and the run summary
``late_self_duel_rate`` is the share of self-duels in the last :data:`LATE_SHARE` of the rounds:
a rate near 1 there means the learner has locked onto one arm and stopped learning.  The run summary
``late_regret_rate`` is the mean per-round ``regret`` over the same closing rounds: where a run ends up
(0 once it plays the best arm against itself or a tied one; seed 000's "converge to suboptimal
regions" is about it), which the running average ``R(t)/t`` blurs with the early rounds.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from ..api import Environment


#: the closing share of the rounds whose self-duel rate is the run summary :data:`LATE_SUMMARY`
LATE_SHARE = 0.1
LATE_SUMMARY = "late_self_duel_rate"
#: the run summary: the mean per-round regret over the same closing rounds
LATE_REGRET = "late_regret_rate"


def late_rounds(horizon: int) -> int:
    """How many closing rounds :data:`LATE_SHARE` of ``horizon`` is (at least one)."""
    return max(1, math.ceil(LATE_SHARE * horizon - 1e-9))


class DuelingEnvironment(Environment):
    """Base of the dueling environments: pair actions, preference feedback, the metrics above."""

    feedback_kind = "preference"
    action_kind = "pair"
    metrics = ("regret", "average_regret", "weak_regret", "self_duel")
    primary_metric = "regret"
    #: metrics every experiment also tabulates as running rates (``per_round_<metric>``)
    rate_metrics = ("self_duel",)

    @classmethod
    def utility_range(cls, values: Mapping[str, Any]) -> tuple[float, float] | None:
        """The range ``(lo, hi)`` of the utilities ``f`` the metrics are computed from, from the parameters
        alone (None: not bounded by them); each dueling environment declares its own."""
        return None

    @classmethod
    def metric_ranges(cls, values: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
        """From :meth:`utility_range`, of span ``s = hi - lo``: ``regret`` and the summary ``late_regret_rate``
        in ``[0, 2 s]``, ``average_regret`` and ``weak_regret`` in ``[0, s]``; ``self_duel`` and the summary
        ``late_self_duel_rate`` in ``[0, 1]`` whatever the utilities."""
        shares = {"self_duel": (0.0, 1.0), LATE_SUMMARY: (0.0, 1.0)}
        utilities = cls.utility_range(values)
        if utilities is None:
            return shares
        span = float(utilities[1]) - float(utilities[0])
        return {
            "regret": (0.0, 2 * span),
            "average_regret": (0.0, span),
            "weak_regret": (0.0, span),
            LATE_REGRET: (0.0, 2 * span),
            **shares,
        }


class KeptDuelMetrics:
    """The metrics of the module docstring, kept by the environment (``keeps_truth``): its ``play``
    records a round's regret, weak regret and self-duel (:meth:`_keep_duel`, on the numbers it is
    given), and :meth:`step` and :meth:`truth_log` read them back (``average_regret`` is half the
    regret); :meth:`_keep_truth` makes the lists, :meth:`summary` gives ``late_self_duel_rate`` and
    ``late_regret_rate``.
    Every dueling environment uses it."""

    keeps_truth = True

    def _keep_truth(self, horizon: int) -> None:
        self._regret, self._weak, self._self = [0.0] * horizon, [0.0] * horizon, [0.0] * horizon

    def _keep_duel(self, t: int, f: list[float], i: int, j: int, best: float) -> None:
        """Round ``t``'s metrics of the pair ``(i, j)`` under utilities ``f`` (``best = max f``)."""
        self._regret[t - 1], self._weak[t - 1] = 2.0 * best - f[i] - f[j], best - max(f[i], f[j])
        self._self[t - 1] = float(i == j)

    def step(self, t: int, action) -> tuple[Any, dict[str, float]]:
        feedback = self.play(t, action)
        regret = self._regret[t - 1]
        return feedback, {
            "regret": regret,
            "average_regret": 0.5 * regret,
            "weak_regret": self._weak[t - 1],
            "self_duel": self._self[t - 1],
        }

    def truth_log(self, horizon: int) -> dict[str, Any]:
        regret = np.array(self._regret[:horizon])
        return {
            "regret": regret,
            "average_regret": 0.5 * regret,
            "weak_regret": self._weak[:horizon],
            "self_duel": self._self[:horizon],
        }

    def summary(self) -> dict[str, float]:
        """``late_self_duel_rate`` and ``late_regret_rate``: the share of self-duels and the mean regret in the
        run's last :data:`LATE_SHARE` of rounds."""
        late = late_rounds(len(self._self))
        return {LATE_SUMMARY: sum(self._self[-late:]) / late, LATE_REGRET: sum(self._regret[-late:]) / late}
