"""Neural dueling bandits with full-gradient exploration (Verma et al. 2024, NDB), the baselines of seed 001.

Both variants are seed 000's NDB-DF machinery (:mod:`.delayed_dueling`) without
the delay correction — NDB-DF under immediate feedback *is* NDB-UCB: the network
``h(x; theta_t)`` is trained on the observed duels (cross-entropy, regulariser
``lam/2 ||theta - theta_0||^2``), the first arm is greedy, and the confidence
matrix ``V_{t-1} = (lam/kappa_mu) I + (1/m) sum_s g'_s g'_s^T`` lives in the
full parameter space (``g' = g(x_1; theta_0) - g(x_2; theta_0)``, p parameters,
Sherman–Morrison) — the cost seed 001's shallow exploration avoids.

* :class:`NDBUCB` — second arm ``argmax_x h(x; theta_t) + nu sigma_{t-1}(x, x_{t,1})``.
* :class:`NDBTS` — second arm ``argmax_x r~(x)`` with
  ``r~(x) ~ N(h(x; theta_t) - h(x_{t,1}; theta_t), nu^2 sigma_{t-1}(x, x_{t,1})^2)``
  (seed 001 Listing 2, "as in (Verma et al., 2024)").

Parameters and their documented defaults are those of :mod:`.delayed_dueling`
(width 32, depth 2, Adam at lr 0.01, 10 steps per round, ``nu = 1``).  With
delayed feedback both train on the outcomes that have arrived (no reweighting).

Both run seed-batched as NDB-DF does (:class:`~.batched.delayed_dueling.BatchedNeuralDueling`; NDB-TS's
draw on each seed's own stream).

These are our re-implementations of Verma et al.'s algorithms (seed 001 Sec. 6 ran the
official code "without modification"); tables label them ``NDB-*-reimpl``.  ``preset: authors``
(:mod:`.dueling_presets`) runs them as the public ``NeuralDBDiag`` of the authors' group does
(xqlin98/APOHF; the differential test against it: docs/baselines.md); that class has no Thompson
sampling, so NDB-TS under the preset takes its network, training, confidence and distinct second arm
with its own draw (over the arms other than the first).
``config/variance_dueling.yaml`` gives them NVLDB's network and training budget (depth 3,
NVLDB's width and learning rate, 20 Adam steps per round) and the exploration coefficient
App. E.2.1 says it adopts from Verma et al., ``a_t = 1``: Listing 2's bonus
``nu ||g_1 - g_2||_{V^{-1}}`` with ``nu = 1``, and ``V_0 = lam I`` as NVLDB's (the listing does
not show V's start), i.e. ``kappa_mu = 1`` (the bonus
here is ``nu sqrt(lam / kappa_mu) ||.||_{V^{-1}}``, ``V_0 = (lam / kappa_mu) I``).
"""

from __future__ import annotations

import numpy as np

from ...api import choose, register
from .delayed_dueling import _NeuralDuelingBase


@register("ndb_ucb")
class NDBUCB(_NeuralDuelingBase):
    """NDB-UCB (Verma et al. 2024; our re-implementation): neural utility, greedy first arm, full-gradient UCB second arm."""

    delay_strategy = "ignore"


@register("ndb_ts")
class NDBTS(_NeuralDuelingBase):
    """NDB-TS (Verma et al. 2024; our re-implementation): neural utility, greedy first arm, Thompson-sampled second arm."""

    delay_strategy = "ignore"

    def _second_arm(self, scores: np.ndarray, first: int, norms: np.ndarray) -> int:
        draws = scores - scores[first] + self._bonus_scale() * norms * self.rng.standard_normal(len(scores))
        if self.distinct_arms:  # the best draw of the arms other than the first
            draws[first] = -np.inf
        return choose(draws, "sampled challenger scores")
