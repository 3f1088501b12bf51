r"""Linear contextual dueling bandits: the linear baselines of seed 001 (Oh et al., Sec. 6, App. E.3).

Both model :math:`P(x \succ y) = \mu\bigl(\theta^\top (x - y)\bigr)` (BTL), estimate :math:`\theta` by the
regularised logistic MLE over the observed duels and keep
:math:`V = \lambda I + \sum_s (x_s - y_s)(x_s - y_s)^\top` by Sherman–Morrison.  The MLE minimises
:math:`N \sum_s \ell_s(\theta) + \frac{r}{2} \lVert\theta\rVert^2` with the log-loss :math:`\ell_s`, ``N = 1``
(``mle_loss: sum``) or ``1/n`` over the n fitted duels (``mean``), and the ridge ``r = mle_ridge``; by
warm-started Newton (``mle_solver: newton``) or BFGS (``bfgs``) to the gradient tolerance ``mle_tolerance``.

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
  it uses ``>``, Saha ``>=``, equal outside ties).  ``beta = 1`` as seed 001's ``a_t``.  With one
  candidate left the pair is that arm against itself; ``distinct_arms: true`` pairs it with its widest partner.

``preset: authors`` (:mod:`banditbench.policies.presets`) runs both as the VACDB repository's
``ucb.py`` (on ``vdb.py`` and ``db.py``, commit 7b1c0df) runs them; every parameter set to ``auto`` takes
the authors' value, named with its file and line in the parameter's description: V_0 = 0.001 I, the MLE's
mean log-loss plus :math:`\kappa \lambda \lVert\theta\rVert^2` (κ = 0.1) solved by BFGS to 1e-4, MaxInP's
:math:`\beta = 2\sqrt{d \log T}` (inherited by CoLSTIM's challenger), no random first rounds, and CoLSTIM's
coin: with probability :math:`p_t = \min(1, d \log(dT) / \sqrt{t})` every arm shares one Gumbel draw.
Departures that remain under that preset (docs/baselines.md): the candidate test's ``>`` against the
code's ``>=`` (ties only); our own random streams (the code draws the outcomes and the algorithm's
coins from one generator); and the code's unused global estimator (its layer 0).

With delayed feedback both fit the outcomes that have arrived.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Mapping, Sequence

import numpy as np

from ..api import Policy, Problem, choose, register
from ..feedback import PreferenceFeedback
from ..params import Doc, NonNegative, NonNegativeInt, OneOf, Positive, PositiveInt
from .linalg import InverseGram, fit_logistic
from .pair_selection import pair_widths, select_pair
from .presets import AUTO, Preset, resolve
from ..numerics.logistic_mle import fit_logistic_bfgs

#: the authors' λ (V_0 = λ I and the MLE's ridge, ``db.py`` line 19) and κ (line 21)
AUTHORS_LAMBDA, AUTHORS_KAPPA = 0.001, 0.1
MLE_LOSSES = ("sum", "mean", AUTO)
MLE_SOLVERS = ("newton", "bfgs", AUTO)
SHARED_PERTURBATIONS = ("never", "coin", AUTO)


def sqrt_d_log_t(facts: Mapping[str, Any]) -> float:
    """``sqrt(d log T)`` (T at least 2)."""
    return math.sqrt(facts["d"] * math.log(max(facts["T"], 2)))


#: the shared parameters' (ours, authors) values (:func:`banditbench.policies.presets.resolve`)
SHARED_PRESETS = {
    "lam": (1.0, AUTHORS_LAMBDA),
    "mle_ridge": (lambda v: v["lam"], lambda v: 2 * AUTHORS_KAPPA * v["lam"]),
    "mle_loss": ("sum", "mean"),
    "mle_solver": ("newton", "bfgs"),
    "mle_tolerance": (1e-8, 1e-4),
}

Lam = Annotated[
    Positive | Literal["auto"],
    Doc(
        "``V_0 = lam I`` of the design matrix; ``auto``: 1 (``ours``), 0.001 (``authors``: ``db.py`` line 19, "
        "``vdb.py`` lines 32-33)."
    ),
]
MleRidge = Annotated[
    Positive | Literal["auto"],
    Doc(
        "the MLE's ridge ``r``, the penalty ``r/2 ||theta||^2``; ``auto``: ``lam`` (``ours``: the same lambda as "
        "V_0), ``2 kappa lam`` with kappa = 0.1 (``authors``: ``vdb.py`` line 81's ``kappa lmbda ||theta||^2``, "
        "``db.py`` line 21), 2e-4 at the authors' lam."
    ),
]
MleLoss = Annotated[
    str,
    OneOf(MLE_LOSSES),
    Doc(
        "the MLE's log-loss over the fitted duels: ``sum`` or ``mean`` (divided by their number); ``auto``: "
        "``sum`` (``ours``), ``mean`` (``authors``: ``vdb.py`` line 86 divides by t, the number of duels there)."
    ),
]
MleSolver = Annotated[
    str,
    OneOf(MLE_SOLVERS),
    Doc(
        "``newton`` (damped, at most ``newton_steps`` steps) or ``bfgs`` (scipy's); both warm-started at the last "
        "estimate; ``auto``: ``newton`` (``ours``), ``bfgs`` (``authors``: ``vdb.py`` lines 106-112)."
    ),
]
MleTolerance = Annotated[
    Positive | Literal["auto"],
    Doc(
        "the solver stops when the max-norm of the objective's gradient is below this; ``auto``: 1e-8 "
        "(``ours``), 1e-4 (``authors``: ``vdb.py`` line 111's ``gtol``)."
    ),
]
NewtonSteps = Annotated[
    PositiveInt, Doc("Newton steps per round of the logistic MLE (warm-started at the previous estimate).")
]
DistinctArms = Annotated[
    bool,
    Doc(
        "true: never duel an arm with itself (ours); false under both presets (seed 001's arg-maxes and the "
        "authors' ``ucb.py`` allow it: lines 37 and 79)."
    ),
]


class _LinearDueling(Policy):
    """Logistic MLE on observed duels and the design matrix of played differences."""

    feedback_kind = "preference"
    action_kind = "pair"
    self_duels = "distinct_arms"

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        preset: Preset = "ours",
        lam: Lam = AUTO,
        mle_ridge: MleRidge = AUTO,
        mle_loss: MleLoss = AUTO,
        mle_solver: MleSolver = AUTO,
        mle_tolerance: MleTolerance = AUTO,
        newton_steps: NewtonSteps = 50,
        distinct_arms: DistinctArms = False,
    ):
        self.rng, self.preset, self.newton_steps = rng, preset, newton_steps
        self.d, self.horizon = int(problem["dimension"]), problem.horizon
        given = {"preset": preset, "lam": lam, "mle_ridge": mle_ridge, "mle_loss": mle_loss}
        given.update(mle_solver=mle_solver, mle_tolerance=mle_tolerance)
        v = resolve(given, SHARED_PRESETS, self.facts)
        self.lam, self.mle_ridge, self.mle_loss = float(v["lam"]), float(v["mle_ridge"]), v["mle_loss"]
        self.mle_solver, self.mle_tolerance = v["mle_solver"], float(v["mle_tolerance"])
        self.distinct_arms = bool(distinct_arms)
        self.gram = InverseGram(self.d, self.lam)
        self.pairs = np.zeros((self.horizon, self.d))
        self.labels = np.zeros(self.horizon)
        self.arrived = np.zeros(self.horizon, dtype=bool)
        self.theta = np.zeros(self.d)

    @property
    def facts(self) -> dict[str, Any]:
        """What the presets' values depend on: the dimension and the horizon."""
        return {"d": self.d, "T": self.horizon}

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        return horizon * (8 * facts.get("dimension", 1) + 9)  # played differences, outcomes

    def observe(self, t: int, arrived: Sequence[PreferenceFeedback]) -> None:
        for fb in arrived:
            self.labels[fb.round - 1] = fb.y
            self.arrived[fb.round - 1] = True

    def _fit(self) -> np.ndarray:
        """The MLE of the module docstring on the duels whose outcomes have arrived."""
        rows = np.flatnonzero(self.arrived)
        X, y = self.pairs[rows], self.labels[rows]
        scale = 1.0 / len(rows) if self.mle_loss == "mean" and len(rows) else 1.0
        if self.mle_solver == "bfgs":
            self.theta = fit_logistic_bfgs(X, y, self.mle_ridge, self.theta, gtol=self.mle_tolerance, loss_scale=scale)
        else:  # the same minimiser, its objective multiplied by 1 / scale
            ridge, tol = self.mle_ridge / scale, self.mle_tolerance / scale
            self.theta = fit_logistic(X, y, ridge, self.theta, max_iter=self.newton_steps, tol=tol)
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
                "``sqrt(d log T)`` under both presets (the authors' group's public implementation; ``ucb.py`` "
                "lines 62 and 69)."
            ),
        ] = AUTO,
        confidence_width: Annotated[
            NonNegative | Literal["auto"],
            Doc(
                "``c`` of the challenger's bonus ``c ||y - x_1||_{V^-1}``; ``auto``: ``sqrt(d log T)`` (``ours``), "
                "``2 sqrt(d log T)`` (``authors``: ``ucb.py`` line 78 takes MaxInP's beta, lines 9-10 and 25)."
            ),
        ] = AUTO,
        exploration_rounds: Annotated[
            NonNegativeInt | Literal["auto"],
            Doc(
                "rounds of uniformly random duels before the model is used; ``auto``: d (``ours``), 0 "
                "(``authors``: ``db.py`` line 77's warm-up ``t <= 0`` never runs)."
            ),
        ] = AUTO,
        shared_perturbation: Annotated[
            str,
            OneOf(SHARED_PERTURBATIONS),
            Doc(
                "``never``: an independent Gumbel draw per arm; ``coin``: with probability "
                "``p_t = min(1, d log(dT) / sqrt(t))`` every arm takes the first arm's draw; ``auto``: ``never`` "
                "(``ours``), ``coin`` (``authors``: ``ucb.py`` lines 63-68; p_t = 1 while t < (d log(dT))^2)."
            ),
        ] = AUTO,
        **shared,
    ):
        super().__init__(problem, rng, **shared)
        given = {"preset": self.preset, "threshold": threshold, "confidence_width": confidence_width}
        given.update(exploration_rounds=exploration_rounds, shared_perturbation=shared_perturbation)
        v = resolve(given, COLSTIM_PRESETS, self.facts)
        self.threshold, self.width = float(v["threshold"]), float(v["confidence_width"])
        self.exploration_rounds, self.shared_perturbation = int(v["exploration_rounds"]), v["shared_perturbation"]

    def _perturbations(self, t: int, n: int) -> np.ndarray:
        """The clipped Gumbel draws of the n arms (the coin first, as ``ucb.py`` lines 64-65 draw them)."""
        shared = False
        if self.shared_perturbation == "coin":
            shared = self.rng.random() < min(1.0, self.d / math.sqrt(t) * math.log(self.d * self.horizon))
        eps = self.rng.gumbel(size=n)
        if shared:
            eps[:] = eps[0]
        return np.clip(eps, -self.threshold, self.threshold)

    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        if t <= self.exploration_rounds:
            i, j = self.rng.choice(len(arms), size=2, replace=False)
            return self._record(t, arms, int(i), int(j))
        theta = self._fit()
        eps = self._perturbations(t, len(arms))
        first = choose(arms @ theta + eps * self.gram.norms(arms), "perturbed utility estimates")
        diff = arms - arms[first]
        challenge = diff @ theta + self.width * self.gram.norms(diff)
        if self.distinct_arms:
            challenge[first] = -np.inf
        return self._record(t, arms, first, choose(challenge, "challenger UCB scores"))


COLSTIM_PRESETS = {
    "threshold": (sqrt_d_log_t, sqrt_d_log_t),
    "confidence_width": (sqrt_d_log_t, lambda v: 2 * sqrt_d_log_t(v)),
    "exploration_rounds": (lambda v: v["d"], 0),
    "shared_perturbation": ("never", "coin"),
}


@register("maxinp")
class MaxInP(_LinearDueling):
    """MaxInP (Saha 2021): the widest pair among the arms not beaten with confidence (module docstring)."""

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        beta: Annotated[
            NonNegative | Literal["auto"],
            Doc(
                "confidence radius of the candidate test ``theta^T (x - y) + beta ||x - y||_{V^-1} >= 0``; ``auto``: "
                "1 (``ours``: seed 001's ``a_t``), ``2 sqrt(d log T)`` (``authors``: ``ucb.py`` lines 9-10 and 25)."
            ),
        ] = AUTO,
        **shared,
    ):
        super().__init__(problem, rng, **shared)
        v = resolve({"preset": self.preset, "beta": beta}, {"beta": (1.0, lambda v: 2 * sqrt_d_log_t(v))}, self.facts)
        self.beta = float(v["beta"])

    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        theta = self._fit()
        widths = pair_widths(arms, self.gram.inverse)
        first, second = select_pair(
            "ucb_csym", arms @ theta, widths, self.beta, self.rng, t, distinct=self.distinct_arms
        )
        return self._record(t, arms, first, second)
