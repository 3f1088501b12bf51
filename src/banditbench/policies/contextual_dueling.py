r"""Linear contextual dueling bandits: the linear baselines of seed 001 (Oh et al., Sec. 6, App. E.3).

Both model :math:`P(x \succ y) = \mu\bigl(\theta^\top (x - y)\bigr)` (BTL), estimate :math:`\theta` by the
regularised logistic MLE over the observed duels (Newton, warm-started; ridge
:math:`\frac{\lambda}{2} \lVert\theta\rVert^2`) and keep
:math:`V = \lambda I + \sum_s (x_s - y_s)(x_s - y_s)^\top` by Sherman–Morrison.

* :class:`CoLSTIM` — Bengs, Saha & Hüllermeier (ICML 2022).  After
  ``exploration_rounds`` random duels, the first arm maximises the *perturbed*
  utility :math:`\theta^\top x + \epsilon_x \lVert x\rVert_{V^{-1}}` with :math:`\epsilon_x` a standard Gumbel draw
  (the noise of the logistic link) clipped to ``[-threshold, threshold]``; the second
  arm is the strongest challenger
  :math:`\operatorname*{arg\,max}_y \theta^\top (y - x_1) + c \lVert y - x_1\rVert_{V^{-1}}`.
  The paper's text was not available to us; the defaults ``threshold = c =
  sqrt(d log T)`` and ``exploration_rounds`` follow the public implementation of the
  authors' group (the CoLSTIM class of the multi-dueling bandit code), which clips
  the Gumbel draws the same way.  The second arm may equal the first (seed 001's
  arg-maxes over all arms); ``distinct_arms: true`` excludes it.
* :class:`MaxInP` — Saha (AISTATS 2021): candidates ``C_t`` are the arms no other
  arm beats with confidence, :math:`\theta^\top (x - y) + \beta \lVert x - y\rVert_{V^{-1}} \ge 0` for
  all y, and the pair is the widest :math:`\operatorname*{arg\,max}_{C_t \times C_t} \lVert x - y\rVert_{V^{-1}}` — the
  linear form of seed 001's CSYM rule (:mod:`banditbench.policies.pair_selection`;
  it uses ``>``, Saha ``>=``, equal outside ties).  ``beta = 1`` as seed 001's ``a_t``.

With delayed feedback both fit the outcomes that have arrived.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Mapping, Sequence

import numpy as np

from ..api import Policy, Problem, choose, register
from ..feedback import PreferenceFeedback
from ..params import Doc, NonNegative, NonNegativeInt, Positive, PositiveInt
from .linalg import InverseGram, fit_logistic
from .pair_selection import pair_widths, select_pair


class _LinearDueling(Policy):
    """Logistic MLE on observed duels and the design matrix of played differences."""

    feedback_kind = "preference"
    action_kind = "pair"

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        lam: Annotated[
            Positive, Doc("ridge ``lam/2 ||theta||^2`` of the logistic MLE and ``V_0 = lam I`` of the design matrix.")
        ] = 1.0,
        newton_steps: Annotated[
            PositiveInt, Doc("Newton steps per round of the logistic MLE (warm-started at the previous estimate).")
        ] = 50,
    ):
        self.rng, self.lam, self.newton_steps = rng, lam, newton_steps
        self.d, self.horizon = int(problem["dimension"]), problem.horizon
        self.gram = InverseGram(self.d, lam)
        self.pairs = np.zeros((self.horizon, self.d))
        self.labels = np.zeros(self.horizon)
        self.arrived = np.zeros(self.horizon, dtype=bool)
        self.theta = np.zeros(self.d)

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        return horizon * (8 * facts.get("dimension", 1) + 9)  # played differences, outcomes

    def observe(self, t: int, arrived: Sequence[PreferenceFeedback]) -> None:
        for fb in arrived:
            self.labels[fb.round - 1] = fb.y
            self.arrived[fb.round - 1] = True

    def _fit(self) -> np.ndarray:
        rows = np.flatnonzero(self.arrived)
        self.theta = fit_logistic(self.pairs[rows], self.labels[rows], self.lam, self.theta, max_iter=self.newton_steps)
        return self.theta

    def _record(self, t: int, arms: np.ndarray, first: int, second: int) -> tuple[int, int]:
        self.pairs[t - 1] = arms[first] - arms[second]
        self.gram.update(self.pairs[t - 1])
        return first, second


@register("colstim")
class CoLSTIM(_LinearDueling):
    """CoLSTIM (Bengs et al. 2022): Gumbel-perturbed first arm, UCB challenger second arm (module docstring)."""

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        threshold: Annotated[
            NonNegative | Literal["auto"],
            Doc(
                "the Gumbel perturbations of the first arm are clipped to ``[-threshold, threshold]``; ``auto`` is "
                "``sqrt(d log T)`` (the authors' group's public implementation)."
            ),
        ] = "auto",
        confidence_width: Annotated[
            NonNegative | Literal["auto"],
            Doc("``c`` of the challenger's bonus ``c ||y - x_1||_{V^-1}``; ``auto`` is ``sqrt(d log T)``."),
        ] = "auto",
        exploration_rounds: Annotated[
            NonNegativeInt | Literal["auto"],
            Doc("rounds of uniformly random duels before the model is used; ``auto`` is d."),
        ] = "auto",
        distinct_arms: Annotated[
            bool, Doc("true: the challenger must differ from the first arm (seed 001's arg-maxes allow equal arms).")
        ] = False,
        **shared,
    ):
        super().__init__(problem, rng, **shared)
        auto = math.sqrt(self.d * math.log(max(self.horizon, 2)))
        self.threshold = auto if threshold == "auto" else float(threshold)
        self.width = auto if confidence_width == "auto" else float(confidence_width)
        if exploration_rounds == "auto":
            exploration_rounds = self.d
        self.exploration_rounds, self.distinct_arms = exploration_rounds, bool(distinct_arms)

    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        if t <= self.exploration_rounds:
            i, j = self.rng.choice(len(arms), size=2, replace=False)
            return self._record(t, arms, int(i), int(j))
        theta = self._fit()
        eps = np.clip(self.rng.gumbel(size=len(arms)), -self.threshold, self.threshold)
        first = choose(arms @ theta + eps * self.gram.norms(arms), "perturbed utility estimates")
        diff = arms - arms[first]
        challenge = diff @ theta + self.width * self.gram.norms(diff)
        if self.distinct_arms:
            challenge[first] = -np.inf
        return self._record(t, arms, first, choose(challenge, "challenger UCB scores"))


@register("maxinp")
class MaxInP(_LinearDueling):
    """MaxInP (Saha 2021): the widest pair among the arms not beaten with confidence (module docstring)."""

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        beta: Annotated[
            NonNegative,
            Doc(
                "confidence radius of the candidate test ``theta^T (x - y) + beta ||x - y||_{V^-1} >= 0`` and of "
                "the pair widths; 1 as seed 001's ``a_t``."
            ),
        ] = 1.0,
        **shared,
    ):
        super().__init__(problem, rng, **shared)
        self.beta = float(beta)

    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        theta = self._fit()
        widths = pair_widths(arms, self.gram.inverse)
        first, second = select_pair("ucb_csym", arms @ theta, widths, self.beta, self.rng, t)
        return self._record(t, arms, first, second)
