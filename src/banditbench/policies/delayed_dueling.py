r"""Linear dueling bandits with stochastic delayed feedback (seed 000: Wang et al., 2026).

* :class:`LDBDF` — Algorithm 1 (LDB-DF): IPW-weighted regularised logistic MLE
  (eq. 3) with weights :math:`\omega_{s,t} = \mathbb{1}\{D_s \le \min(M, t-s)\} / \rho` (eq. 2),
  first arm greedy (eq. 5), second arm by the UCB of eq. 6, and
  ``V_t`` updated at play time with every selected pair (eq. 4, line 10).
* :class:`LDBIgnore` — baseline of Sec. 5.2: same model, trained only on the
  feedback that has arrived, unweighted.
* :class:`LDBHeuristic` — baseline of Sec. 5.2 ("hallucination", Verma et al.
  2022): every played round whose feedback is still pending is imputed with the
  current model's predicted preference probability as a soft label.
* :class:`LDBHeuristicAll` — the other reading of Sec. 5.2's Heuristic: every
  missing outcome imputed, the rounds known to be censored included.
* :class:`LDBZero` — the naive estimator of Sec. 3.1 (eq. 1): missing feedback
  treated as a zero label, no reweighting; the comparison under which IPW's
  correction matters.

The four training sets come from :mod:`banditbench.policies.delayed_labels`,
shared with the neural family.

Choices the paper leaves open (all exposed as parameters):

* ``beta``: the confidence radius of eq. 6.  A number gives a constant
  ``beta_t = beta``; ``"theory"`` uses eq. 17,
  :math:`\beta_t = \sqrt{2\log(1/\delta) + d\log\bigl(1 + t L^2 \kappa_\mu / (d\lambda)\bigr)} + M L + \sqrt{\lambda\kappa_\mu}`
  (:math:`\lambda` = ``lam``, :math:`\kappa_\mu` = ``kappa_mu``, :math:`L` = ``pair_norm_bound``)
  with ``M`` the delay window (1 when there is none, the paper's immediate
  setting).  The default ``beta = 1`` follows the constant confidence
  coefficient used in practice by the neural dueling bandit literature.
* ``kappa_mu``: lower bound on the link derivative (Assumption A2).  With unit
  arm features and a unit-norm theta, ``|f(x1) - f(x2)| <= 2`` gives
  ``mu'(2) ~ 0.105``; the default 0.1 rounds that.
* ``pair_norm_bound``: ``L`` of Assumption A3, 2 for unit-norm features.
* The MLE of eq. 3 is solved to gradient tolerance ``tol`` by Newton's method
  warm-started at the previous estimate (``max_newton_steps`` per round).
* Heuristic: Sec. 5.2 says the missing outcome is imputed with the model's
  prediction; ``ldb_heuristic`` imputes only rounds whose feedback may still
  arrive (once ``t >= s + max(M, 1)`` a missing outcome is known to be censored
  and the round is dropped), ``ldb_heuristic_all`` imputes every missing outcome,
  censored ones included (see :mod:`banditbench.policies.delayed_labels`).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal, Mapping, Sequence

import numpy as np

from ..api import Policy, Problem, choose, register
from ..feedback import PreferenceFeedback
from ..params import Doc, NonNegative, Positive, PositiveInt, Probability
from .delayed_labels import DuelHistory
from .linalg import InverseGram, fit_logistic, sigmoid


class _LinearDuelingBase(Policy):
    """Shared selection rule (eqs. 5–6) and design matrix (eq. 4); subclasses name their delay strategy."""

    feedback_kind = "preference"
    action_kind = "pair"
    #: eq. 6's challenger is the arg-max over all arms, the first included
    self_duels = "allowed"
    #: how delayed feedback enters the MLE (:data:`banditbench.policies.delayed_labels.STRATEGIES`)
    delay_strategy: ClassVar[str]

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        lam: Annotated[
            Positive, Doc("regularisation of the logistic MLE (eq. 3); ``V_0 = (lam / kappa_mu) I`` (eq. 4).")
        ] = 1.0,
        kappa_mu: Annotated[
            Positive,
            Doc(
                "lower bound on the link derivative (Assumption A2); the default 0.1 rounds ``mu'(2) ~ 0.105`` "
                "of unit arm features and a unit-norm theta."
            ),
        ] = 0.1,
        beta: Annotated[
            NonNegative | Literal["theory"],
            Doc(
                "the confidence radius of eq. 6: a number is a constant ``beta_t``; ``theory`` is eq. 17's "
                "radius (the delay window M enters it)."
            ),
        ] = 1.0,
        delta: Annotated[Probability, Doc("confidence level of ``beta: theory`` (eq. 17); unused otherwise.")] = 0.05,
        pair_norm_bound: Annotated[
            Positive,
            Doc("``L`` of Assumption A3, a bound on ``||Delta phi||`` (2 for unit-norm features); enters eq. 17."),
        ] = 2.0,
        max_newton_steps: Annotated[
            PositiveInt, Doc("Newton steps per round of the MLE of eq. 3 (warm-started at the previous estimate).")
        ] = 50,
        tol: Annotated[Positive, Doc("gradient tolerance at which Newton's method stops (eq. 3).")] = 1e-6,
    ):
        self.d = int(problem["dimension"])
        self.horizon = problem.horizon
        self.rho = problem.rho
        self.window = problem.window
        self.lam, self.kappa_mu, self.beta, self.delta = lam, kappa_mu, beta, delta
        self.pair_norm_bound = pair_norm_bound
        self.max_newton_steps, self.tol = max_newton_steps, tol
        self.gram = InverseGram(self.d, lam / kappa_mu)  # V_0 = (lam / kappa_mu) I
        self.pairs = np.zeros((self.horizon, self.d))  # Delta phi_s of every played round
        self.history = DuelHistory(self.horizon, self.rho, self.window)
        self.theta = np.zeros(self.d)

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        return horizon * (8 * facts.get("dimension", 1) + 9)  # Delta phi_s and the outcome history

    # --- feedback ---------------------------------------------------------
    def observe(self, t: int, arrived: Sequence[PreferenceFeedback]) -> None:
        self.history.observe(arrived)

    # --- estimation -------------------------------------------------------
    def mle_data(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``Delta phi_s`` and labels of the loss (eq. 3) minimised at round ``t``."""
        rows, labels = self.history.training_set(
            self.delay_strategy, t, predict=lambda r: sigmoid(self.pairs[r] @ self.theta)
        )
        return self.pairs[rows], labels

    def beta_t(self, t: int) -> float:
        if self.beta != "theory":
            return float(self.beta)
        d, lam, kappa, L = self.d, self.lam, self.kappa_mu, self.pair_norm_bound
        m = self.window if self.window is not None else 1
        return (
            math.sqrt(2 * math.log(1 / self.delta) + d * math.log(1 + t * L**2 * kappa / (d * lam)))
            + m * L
            + math.sqrt(lam * kappa)
        )

    # --- selection --------------------------------------------------------
    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        X, labels = self.mle_data(t)
        self.theta = fit_logistic(X, labels, self.lam, self.theta, max_iter=self.max_newton_steps, tol=self.tol)
        scores = arms @ self.theta
        first = choose(scores, "utility estimates")  # eq. 5
        diff = arms - arms[first]
        ucb = diff @ self.theta + self.beta_t(t) / self.kappa_mu * self.gram.norms(diff)
        second = choose(ucb, "challenger UCB scores")  # eq. 6
        pair = arms[first] - arms[second]
        self.pairs[self.history.record_play()] = pair
        self.gram.update(pair)  # line 10 / eq. 4
        return first, second


@register("ldb_df")
class LDBDF(_LinearDuelingBase):
    """LDB-DF (seed 000, Algorithm 1): IPW-weighted logistic MLE over all played rounds (eqs. 2–3).

    Pending rounds enter with ``omega_{s,t} y_s = 0``; arrived ones with ``y_s / rho``.
    """

    delay_strategy = "ipw"


@register("ldb_ignore")
class LDBIgnore(_LinearDuelingBase):
    """LDB-Ignore (seed 000, Sec. 5.2): unweighted MLE on arrived feedback only."""

    delay_strategy = "ignore"


@register("ldb_heuristic")
class LDBHeuristic(_LinearDuelingBase):
    """LDB-Heuristic (seed 000, Sec. 5.2): pending outcomes imputed by the current model's
    predicted probability ``mu(theta^T Delta phi_s)`` (soft labels), then the unweighted MLE."""

    delay_strategy = "heuristic"


@register("ldb_heuristic_all")
class LDBHeuristicAll(_LinearDuelingBase):
    """LDB-Heuristic, imputing every missing outcome (seed 000 Sec. 5.2's other reading): rounds whose
    feedback is known to be censored keep their predicted probability as a soft label, as pending ones do."""

    delay_strategy = "heuristic_all"


@register("ldb_zero")
class LDBZero(_LinearDuelingBase):
    """LDB-Zero (seed 000, Sec. 3.1 eq. 1): missing feedback counted as ``y' = 0``, unweighted MLE
    over all played rounds — biased towards the second arm by the factor ``rho``."""

    delay_strategy = "zero"
