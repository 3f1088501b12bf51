r"""VACDB (Di, Jin, Wu, Zhao, Farnoud & Gu, "Variance-Aware Regret Bounds for Stochastic Contextual
Dueling Bandits", ICLR 2024): seed 001's linear variance-aware baseline (VACDB in Sec. 6, VALDB in App. E).

:math:`P(x \succ y) = \mu\bigl((x - y)^\top \theta^*\bigr)` with the logistic link.  A SupLinUCB-type
algorithm keeps ``L`` layers, each with its own weighted design matrix, MLE and
confidence radius.  In round t, starting at layer l = 1 with every arm active
(Algorithm 1):

* if every active pair has width :math:`\lVert x - y\rVert_{\Sigma_{t,l}^{-1}} \le \alpha`: play
  :math:`\operatorname*{arg\,max}_{x, y} (x + y)^\top \theta_{t,l} + \beta_{t,l} \lVert x - y\rVert_{\Sigma_{t,l}^{-1}}`
  over active pairs and add the round to no layer (lines 6–8);
* else if every active pair has width :math:`\le 2^{-l}`: keep the arms with
  :math:`x^\top \theta_{t,l} \ge \max_{x'} {x'}^\top \theta_{t,l} - 2^{-l} \beta_{t,l}` and go to layer l + 1
  (lines 9–11);
* else play an active pair of width :math:`> 2^{-l}` and add the round to layer l with
  weight :math:`w_t = 2^{-l} / \lVert x_t - y_t\rVert_{\Sigma_{t,l}^{-1}}` (lines 12–15).

Layer l keeps (line 18; its inverse by Sherman–Morrison)

.. math::

   \Sigma_l = 2^{-2l} I + \sum_{s \in \Psi_l} w_s^2 (x_s - y_s)(x_s - y_s)^\top

and :math:`\theta_l`, the root of (line 19: the weighted, :math:`2^{-2l} \kappa_\mu / 2`-ridged logistic MLE, by
warm-started Newton)

.. math::

   2^{-2l} \kappa_\mu \theta + \sum_{s \in \Psi_l} w_s^2 \bigl(\mu((x_s - y_s)^\top \theta) - o_s\bigr)(x_s - y_s) = 0.

The weights cap every sample's weighted width at ``2^-l``, and line 20's Bernstein-type
radius shrinks with the layer's estimated variance: that makes the regret bound depend
on the comparisons' variances (the variance-awareness).  Pair widths of a layer are computed for
all K x K pairs at once (:func:`~banditbench.policies.pair_selection.pair_widths`);
only the layers a round visits are evaluated.

Only the paper's abstract was retrievable here: Algorithm 1 above is implemented from our
knowledge of the paper, cross-checked against the authors' public code; the default
``alpha = 1/T^{3/2}`` and line 20's constants could not be re-checked against the text.
Where paper and code differ, the difference is a parameter:

* ``beta``: Algorithm 1's :math:`\beta_{t,l}` (line 20, ``"theory"``) is
  :math:`\frac{16 \cdot 2^{-l}}{\kappa_\mu} \sqrt{(8 \mathrm{Var}_{t,l} + 18\iota)\, \iota} + \frac{6 \cdot 2^{-l}}{\kappa_\mu} \iota + 2^{1-l}`
  with :math:`\iota = \log\bigl(4 (t + 1)^2 L / \delta\bigr)` and :math:`\mathrm{Var}_{t,l}` the weighted residual sum
  :math:`\sum w_s^2 (o_s - \mu(\cdot))^2` once :math:`2^l \ge 64 (L_\mu / \kappa_\mu) \sqrt{\iota}` (``L_mu = 1/4``,
  the logistic link's Lipschitz constant) and ``|Psi_l|`` before.  The official code runs
  a constant ``sqrt(d log T) / 4`` (``"official"``, default: seed 001 reports VACDB as run
  by the official implementation; its code divides the theory terms by 10^4 and
  squares ``w^2`` in ``Var``, which we do not copy).  A number sets a constant radius.
* ``alpha`` and ``layers``: Algorithm 1 takes ``alpha`` (``"auto"``: 1 / T^{3/2}) and
  ``L = ceil(log2(1 / alpha))`` (``"auto"`` under ``preset: ours``); the official code takes ``L``
  (5 in its driver) and ``alpha = 2^-L`` (``"auto"`` under ``preset: authors``).  ``2^-L <= alpha`` is required, so that the last layer
  always ends in the alpha branch.
* ``exploration``: line 13 plays *some* active pair wider than ``2^-l``; the official
  code draws one uniformly (``"uniform"``, default under both presets); ``"widest"`` takes the widest.
* ``exploit_update``: after the alpha branch Algorithm 1 adds the round to no layer
  (``"none"``, the ``ours`` value); the official code adds it to layer l + 1 (``"next_layer"``,
  with that layer's weight), unless l = L.
* ``beta_start``: the code starts every layer's radius at ``0.05 * 2^{1-l}`` and sets the
  constant one when the layer takes its first round (``"code"``); ``"radius"`` (``ours``) uses
  the radius from the start.
* ``mle_solver``, ``mle_tolerance``, ``mle_start``: line 19's root by Newton to 1e-8 from the
  layer's last estimate (``ours``), or as the code finds it: BFGS to a gradient of 1e-4,
  a layer still at zero starting from the layer below's estimate.
* ``kappa_mu = 0.02``: the official code's ridge ``kappa 2^{-2l} ||theta||^2`` with
  ``kappa = 0.01`` is line 19's ``2^{-2l} kappa_mu / 2 ||theta||^2`` at ``kappa_mu = 0.02``.
* ``delta = 1 / T`` as in the official code (``"auto"``).

* ``distinct_arms``: the alpha branch's arg-max runs over all active pairs, (x, x) included, in
  Algorithm 1 and in the code; ``true`` (ours) excludes it, and pairs a lone surviving arm with the
  arm of largest width from it.

``preset: authors`` (:mod:`banditbench.policies.presets`) runs the code as it is (``suplin.py``, class
``VACDB``, at commit 7b1c0df): every parameter set to ``auto`` takes the code's value, named with its
file and line in the parameter's description (L = 5 and alpha = 2^-5, ``next_layer``, the code's start
radius ``0.05 * 2^{1-l}`` of a layer before its first round, BFGS to 1e-4 warm-started from the layer below).
The constants the code and ``ours`` share: ``beta: official``, ``kappa_mu``, ``delta``,
``exploration: uniform``.

**A departure under every preset** (the code's bug, which we do not copy): a round whose pair is one
arm against itself (one arm survives the eliminations, or the alpha branch's optimistic pair is
(x, x)) has width 0 in every layer.  The code still adds it to a layer with weight
``2^-l / width`` (``suplin.py`` line 99): a division by zero, and ``Sigma_l`` becomes NaN (line 76).
Here such a round joins no layer (it would add nothing to ``Sigma_l`` or the MLE).

With delayed feedback a round joins its layer's design matrix when it is played (the
matrix does not depend on the outcome) and the layer's MLE once its outcome arrives.
The design-matrix update of round t is applied at the start of round t + 1, so that a
replay environment's second ``act`` call in the same round replaces the first.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Mapping, Sequence

import numpy as np

from ..api import Policy, Problem, register
from ..errors import POLICY_PARAMS, ConfigError, key_path
from ..feedback import PreferenceFeedback
from ..numerics.logistic_mle import fit_logistic_bfgs
from ..numerics.sigmoid import sigmoid
from ..params import Doc, NonNegative, OneOf, Positive, PositiveInt, Range
from .linalg import fit_logistic, sherman_morrison
from .pair_selection import pair_widths
from .presets import AUTO, Preset, resolve

EXPLORATIONS = ("uniform", "widest")
EXPLOIT_UPDATES = ("none", "next_layer", AUTO)
BETA_STARTS = ("radius", "code", AUTO)
MLE_STARTS = ("own", "previous_layer", AUTO)
MLE_SOLVERS = ("newton", "bfgs", AUTO)
LINK_LIPSCHITZ = 0.25  # L_mu of the logistic link
#: the code's number of layers (``main.py`` lines 49 and 59) and its start radius ``0.05 * 2^{1-l}`` (``suplin.py`` line 29)
AUTHORS_LAYERS, AUTHORS_BETA_START = 5, 0.05


def layer_count(alpha: float) -> int:
    """Algorithm 1's ``L = ceil(log2(1 / alpha))``."""
    return max(1, math.ceil(math.log2(1.0 / alpha) - 1e-12))


#: the (ours, authors) values of the ``auto`` parameters (:func:`banditbench.policies.presets.resolve`), in order:
#: ``layers`` before ``alpha``, since the code derives alpha from L and Algorithm 1 L from alpha
PRESETS = {
    "layers": (lambda v: layer_count(v["T"] ** -1.5 if v["alpha"] == AUTO else v["alpha"]), AUTHORS_LAYERS),
    "alpha": (lambda v: v["T"] ** -1.5, lambda v: 2.0 ** -v["layers"]),
    "exploit_update": ("none", "next_layer"),
    "beta_start": ("radius", "code"),
    "mle_solver": ("newton", "bfgs"),
    "mle_tolerance": (1e-8, 1e-4),
    "mle_start": ("own", "previous_layer"),
}

Alpha = Annotated[
    Annotated[float, Range(gt=0, lt=1)] | Literal["auto"],
    Doc(
        "Algorithm 1's width below which a layer exploits (lines 6-8); ``auto``: ``1 / T^{3/2}`` (``ours``), "
        "``2^-L`` (``authors``: ``db.py`` line 37)."
    ),
]
Layers = Annotated[
    PositiveInt | Literal["auto"],
    Doc(
        "the number ``L`` of layers; ``auto``: ``ceil(log2(1 / alpha))`` (``ours``: Algorithm 1), 5 (``authors``: "
        "``main.py`` lines 49 and 59).  ``2^-L <= alpha`` is required."
    ),
]
Beta = Annotated[
    NonNegative | Literal["official", "theory"],
    Doc(
        "the confidence radius ``beta_{t,l}``: ``official`` is the official code's constant ``sqrt(d log T) / 4`` "
        "(``suplin.py`` lines 45 and 105; both presets), ``theory`` line 20's variance-aware radius, a number a "
        "constant."
    ),
]
BetaStart = Annotated[
    str,
    OneOf(BETA_STARTS),
    Doc(
        "a layer's radius before its first round: ``radius`` (the radius above) or ``code`` (``0.05 * 2^{1-l}``); "
        "``auto``: ``radius`` (``ours``), ``code`` (``authors``: ``suplin.py`` line 29, replaced at line 105)."
    ),
]
KappaMu = Annotated[
    Positive,
    Doc(
        "lower bound on the link derivative; the ridge of line 19 is ``2^{-2l} kappa_mu / 2 ||theta||^2`` (0.02 is "
        "the official code's ``kappa 2^{-2l} ||theta||^2`` with ``kappa = 0.01``: ``suplin.py`` lines 16 and 120)."
    ),
]
Delta = Annotated[
    Annotated[float, Range(gt=0, lt=1)] | Literal["auto"],
    Doc(
        "failure probability of line 20's ``iota = log(4 (t + 1)^2 L / delta)``; ``auto`` is ``1 / T`` as in the "
        "official code (``db.py`` line 14)."
    ),
]
Exploration = Annotated[
    str,
    OneOf(EXPLORATIONS),
    Doc(
        "which active pair wider than ``2^-l`` line 13 plays: ``uniform`` draws one (the official code, "
        "``suplin.py`` lines 228-234; both presets), ``widest`` takes the widest."
    ),
]
ExploitUpdate = Annotated[
    str,
    OneOf(EXPLOIT_UPDATES),
    Doc(
        "after the alpha branch: ``none`` adds the round to no layer (Algorithm 1), ``next_layer`` to layer l + 1 "
        "with that layer's weight; ``auto``: ``none`` (``ours``), ``next_layer`` (``authors``: ``suplin.py`` "
        "line 217, then lines 185-196)."
    ),
]
MleStart = Annotated[
    str,
    OneOf(MLE_STARTS),
    Doc(
        "where a layer's MLE starts: its last estimate (``own``), or, while that is still zero, the layer below's "
        "(``previous_layer``); ``auto``: ``own`` (``ours``), ``previous_layer`` (``authors``: ``suplin.py`` lines "
        "115-118)."
    ),
]
MleSolver = Annotated[
    str,
    OneOf(MLE_SOLVERS),
    Doc(
        "how line 19 is solved: ``newton`` (damped, at most ``newton_steps`` steps) or ``bfgs`` (scipy's); ``auto``: "
        "``newton`` (``ours``), ``bfgs`` (``authors``: ``suplin.py`` lines 155-161)."
    ),
]
MleTolerance = Annotated[
    Positive | Literal["auto"],
    Doc(
        "the solver stops when the max-norm of line 19's gradient is below this; ``auto``: 1e-8 (``ours``), 1e-4 "
        "(``authors``: ``suplin.py`` line 160's ``gtol``)."
    ),
]
DistinctArms = Annotated[
    bool,
    Doc(
        "true: the alpha branch never duels an arm with itself (ours; a lone active arm meets the arm of largest "
        "width from it); false under both presets (Algorithm 1 line 7 and ``suplin.py`` lines 210-216 allow it)."
    ),
]
NewtonSteps = Annotated[
    PositiveInt, Doc("Newton steps of each warm-started refit of a layer's weighted MLE (line 19).")
]


def _resolved(values: Mapping[str, Any], horizon: int) -> dict[str, Any]:
    """The parameter values with each ``auto`` of :data:`PRESETS` replaced by the preset's."""
    return resolve(values, PRESETS, {"T": horizon})


def _too_few_layers(layers: int, alpha: float) -> str | None:
    if 2.0**-layers > alpha * (1 + 1e-12):
        return (
            f"{key_path(POLICY_PARAMS, 'layers')}: {layers} layers leave 2^-L = {2.0**-layers:g} above alpha = "
            f"{alpha:g}; Algorithm 1 needs 2^-L <= alpha (L >= {layer_count(alpha)})"
        )
    return None


@register("vacdb")
class VACDB(Policy):
    """VACDB (Di et al. 2023, Algorithm 1): layered weighted MLEs, elimination across layers (module docstring)."""

    feedback_kind = "preference"
    action_kind = "pair"
    self_duels = "distinct_arms"

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        preset: Preset = "ours",
        alpha: Alpha = AUTO,
        layers: Layers = AUTO,
        beta: Beta = "official",
        beta_start: BetaStart = AUTO,
        kappa_mu: KappaMu = 0.02,
        delta: Delta = AUTO,
        exploration: Exploration = "uniform",
        exploit_update: ExploitUpdate = AUTO,
        mle_solver: MleSolver = AUTO,
        mle_tolerance: MleTolerance = AUTO,
        mle_start: MleStart = AUTO,
        newton_steps: NewtonSteps = 50,
        distinct_arms: DistinctArms = False,
    ):
        d, T = int(problem["dimension"]), problem.horizon
        given = {"preset": preset, "alpha": alpha, "layers": layers, "exploit_update": exploit_update}
        given.update(beta_start=beta_start, mle_solver=mle_solver, mle_tolerance=mle_tolerance, mle_start=mle_start)
        v = _resolved(given, T)
        self.alpha, self.L = float(v["alpha"]), int(v["layers"])
        problem_text = _too_few_layers(self.L, self.alpha)
        if problem_text:
            raise ConfigError(problem_text)
        self.rng, self.d, self.T = rng, d, T
        self.kappa, self.newton_steps, self.distinct_arms = kappa_mu, newton_steps, bool(distinct_arms)
        self.delta = 1.0 / T if delta == "auto" else float(delta)
        self.exploration, self.exploit_update = exploration, v["exploit_update"]
        self.mle_solver, self.mle_tolerance, self.mle_start = v["mle_solver"], float(v["mle_tolerance"]), v["mle_start"]
        self.beta_rule = beta if isinstance(beta, str) else "constant"
        constant = math.sqrt(d * math.log(max(T, 2))) / 4 if beta in ("official", "theory") else float(beta)
        self.beta = np.full(self.L, constant)  # beta_{t,l}; "theory" sets it per fit
        if beta == "theory":
            self.beta = np.array([self._theory_beta(l, 1, np.zeros(0)) for l in range(1, self.L + 1)])
        self.scale = 2.0 ** -np.arange(1, self.L + 1)  # 2^-l, l = 1..L
        # a layer's radius before its first round: the code's 0.05 * 2^{1-l} (beta_start: code)
        self.start_beta = 2 * AUTHORS_BETA_START * self.scale if v["beta_start"] == "code" else None
        self.inverse = np.stack([np.eye(d) / s**2 for s in self.scale])  # Sigma_l^{-1} = 2^{2l} I
        self.theta = np.zeros((self.L, d))
        self.diffs = np.zeros((T, d))  # x_s - y_s
        self.weight2 = np.zeros(T)  # w_s^2
        self.layer = np.full(T, -1, dtype=np.int64)  # layer index l - 1 of round s (-1: none)
        self.labels = np.zeros(T)
        self.arrived = np.zeros(T, dtype=bool)
        self.stale = np.zeros(self.L, dtype=bool)  # a layer with outcomes not yet in its MLE
        self.visited = np.zeros(self.L, dtype=bool)  # a layer that has taken a round
        self.pending: int | None = None  # the round whose Sigma update is due

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        v = _resolved(values, horizon)
        problem_text = _too_few_layers(int(v["layers"]), float(v["alpha"]))
        if problem_text:
            raise ConfigError(problem_text)

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        d = facts.get("dimension", 1)
        layers = int(_resolved(values, horizon)["layers"])
        # differences, w^2, layer, outcome and flag of every round; a d x d inverse per layer
        return horizon * (8 * d + 25) + layers * 8 * d * d

    # --- feedback and estimation ---------------------------------------------------
    def observe(self, t: int, arrived: Sequence[PreferenceFeedback]) -> None:
        for fb in arrived:
            s = fb.round - 1
            self.labels[s], self.arrived[s] = fb.y, True
            if self.layer[s] >= 0:
                self.stale[self.layer[s]] = True

    def _apply_pending(self) -> None:
        """Line 18: ``Sigma_l += w^2 (x - y)(x - y)^T`` for the previous round's layer (Sherman–Morrison)."""
        s, self.pending = self.pending, None
        if s is not None and self.layer[s] >= 0:
            sherman_morrison(self.inverse[self.layer[s]], self.diffs[s], self.weight2[s])

    def _fit(self, l: int, t: int) -> None:
        """Line 19 (and line 20 for ``beta: theory``) for layer index ``l`` (layer l + 1)."""
        rows = np.flatnonzero((self.layer == l) & self.arrived)
        X, y, w2 = self.diffs[rows], self.labels[rows], self.weight2[rows]
        start = self.theta[l]
        if self.mle_start == "previous_layer" and l > 0 and not start.any():
            start = self.theta[l - 1]
        ridge = self.kappa * self.scale[l] ** 2
        if self.mle_solver == "bfgs":
            self.theta[l] = fit_logistic_bfgs(X, y, ridge, start, weights=w2, gtol=self.mle_tolerance)
        else:
            self.theta[l] = fit_logistic(
                X, y, ridge, start, weights=w2, max_iter=self.newton_steps, tol=self.mle_tolerance
            )
        if self.beta_rule == "theory":
            residual2 = (y - sigmoid(X @ self.theta[l])) ** 2
            self.beta[l] = self._theory_beta(l + 1, t, w2 * residual2, count=np.count_nonzero(self.layer == l))
        self.stale[l] = False

    def _theory_beta(self, level: int, t: int, weighted_residuals: np.ndarray, count: int = 0) -> float:
        """Algorithm 1 line 20 at layer ``level`` (module docstring)."""
        iota = math.log(4 * (t + 1) ** 2 * self.L / self.delta)
        s = 2.0**-level
        variance = float(count)
        if 2.0**level >= 64 * LINK_LIPSCHITZ / self.kappa * math.sqrt(iota):
            variance = float(weighted_residuals.sum())
        return 16 * s / self.kappa * math.sqrt((8 * variance + 18 * iota) * iota) + 6 * s / self.kappa * iota + 2 * s

    def _radius(self, l: int) -> float:
        """``beta_{t,l}`` of layer index ``l``; with ``beta_start: code``, the code's start value until the layer's
        first round."""
        if self.start_beta is not None and not self.visited[l]:
            return float(self.start_beta[l])
        return float(self.beta[l])

    # --- selection ---------------------------------------------------------------
    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        self._apply_pending()
        for l in np.flatnonzero(self.stale):
            self._fit(int(l), t)
        active = np.ones(len(arms), dtype=bool)
        for l in range(self.L):
            widths = pair_widths(arms, self.inverse[l])
            pairs = active[:, None] & active[None, :]
            widest = float(widths[pairs].max())
            if widest <= self.alpha:  # lines 6-8
                i, j = self._optimistic_pair(l, arms, active, widths)
                if self.exploit_update == "next_layer" and l + 1 < self.L:
                    return self._record(t, arms, i, j, l + 1, pair_widths(arms, self.inverse[l + 1]))
                return self._record(t, arms, i, j, None, widths)
            if widest <= self.scale[l]:  # lines 9-11
                u = arms @ self.theta[l]
                active &= u >= u[active].max() - self.scale[l] * self._radius(l)
                continue
            wide = pairs & (widths > self.scale[l])  # lines 12-15
            if self.exploration == "uniform":
                flat = int(self.rng.choice(np.flatnonzero(wide)))
            else:
                flat = int(np.argmax(np.where(wide, widths, -np.inf)))
            i, j = divmod(flat, len(arms))
            return self._record(t, arms, i, j, l, widths)
        raise AssertionError("unreachable: the last layer ends in the alpha branch since 2^-L <= alpha")

    def _optimistic_pair(self, l: int, arms: np.ndarray, active: np.ndarray, widths: np.ndarray) -> tuple[int, int]:
        """Line 7: ``argmax (x + y)^T theta_l + beta_l ||x - y||`` over the active pairs; with ``distinct_arms``
        over those of two arms, a lone active arm against the arm of largest width from it."""
        u = arms @ self.theta[l]
        pairs = active[:, None] & active[None, :]
        if self.distinct_arms:
            np.fill_diagonal(pairs, False)
            if not pairs.any():
                k = int(np.flatnonzero(active)[0])
                away = widths[k].copy()
                away[k] = -np.inf
                return k, int(np.argmax(away))
        score = np.where(pairs, u[:, None] + u[None, :] + self._radius(l) * widths, -np.inf)
        i, j = np.unravel_index(int(np.argmax(score)), score.shape)
        return int(i), int(j)

    def _record(self, t: int, arms: np.ndarray, i: int, j: int, l: int | None, widths: np.ndarray) -> tuple[int, int]:
        """Round t's pair, its layer (``None``: no layer) and weight ``w_t = 2^-l / width`` (line 14); a pair of
        width 0 (a self-duel) joins no layer (the module docstring's departure from the code)."""
        s = t - 1
        self.diffs[s] = arms[i] - arms[j]
        if l is None or widths[i, j] <= 0.0:
            self.layer[s], self.weight2[s] = -1, 0.0
        else:
            self.layer[s], self.weight2[s] = l, (self.scale[l] / widths[i, j]) ** 2
            self.visited[l] = True
        self.pending = s
        return i, j
