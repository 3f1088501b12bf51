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
  ``L = ceil(log2(1 / alpha))`` (``"auto"``); the official code takes ``L`` (5 in its
  driver) and ``alpha = 2^-L``.  ``2^-L <= alpha`` is required, so that the last layer
  always ends in the alpha branch.
* ``exploration``: line 13 plays *some* active pair wider than ``2^-l``; the official
  code draws one uniformly (``"uniform"``, default); ``"widest"`` takes the widest.
* ``exploit_update``: after the alpha branch Algorithm 1 adds the round to no layer
  (``"none"``, default); the official code adds it to layer l + 1 (``"next_layer"``,
  with that layer's weight), unless l = L.
* ``kappa_mu = 0.02``: the official code's ridge ``kappa 2^{-2l} ||theta||^2`` with
  ``kappa = 0.01`` is line 19's ``2^{-2l} kappa_mu / 2 ||theta||^2`` at ``kappa_mu = 0.02``.
* ``delta = 1 / T`` as in the official code (``"auto"``).

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
from ..numerics.sigmoid import sigmoid
from ..params import Doc, NonNegative, OneOf, Positive, PositiveInt, Range
from .linalg import fit_logistic, sherman_morrison
from .pair_selection import pair_widths

EXPLORATIONS = ("uniform", "widest")
EXPLOIT_UPDATES = ("none", "next_layer")
LINK_LIPSCHITZ = 0.25  # L_mu of the logistic link


def layer_count(alpha: float) -> int:
    """Algorithm 1's ``L = ceil(log2(1 / alpha))``."""
    return max(1, math.ceil(math.log2(1.0 / alpha) - 1e-12))


@register("vacdb")
class VACDB(Policy):
    """VACDB (Di et al. 2023, Algorithm 1): layered weighted MLEs, elimination across layers (module docstring)."""

    feedback_kind = "preference"
    action_kind = "pair"

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        alpha: Annotated[
            Annotated[float, Range(gt=0, lt=1)] | Literal["auto"],
            Doc("Algorithm 1's width below which a layer exploits (lines 6-8); ``auto`` is ``1 / T^{3/2}``."),
        ] = "auto",
        layers: Annotated[
            PositiveInt | Literal["auto"],
            Doc(
                "the number ``L`` of layers; ``auto`` is ``ceil(log2(1 / alpha))`` (Algorithm 1; the official "
                "code takes L = 5 and ``alpha = 2^-L``).  ``2^-L <= alpha`` is required."
            ),
        ] = "auto",
        beta: Annotated[
            NonNegative | Literal["official", "theory"],
            Doc(
                "the confidence radius ``beta_{t,l}``: ``official`` is the official code's constant "
                "``sqrt(d log T) / 4``, ``theory`` line 20's variance-aware radius, a number a constant."
            ),
        ] = "official",
        kappa_mu: Annotated[
            Positive,
            Doc(
                "lower bound on the link derivative; the ridge of line 19 is ``2^{-2l} kappa_mu / 2 ||theta||^2`` "
                "(0.02 is the official code's ``kappa = 0.01``)."
            ),
        ] = 0.02,
        delta: Annotated[
            Annotated[float, Range(gt=0, lt=1)] | Literal["auto"],
            Doc(
                "failure probability of line 20's ``iota = log(4 (t + 1)^2 L / delta)``; ``auto`` is ``1 / T`` "
                "as in the official code."
            ),
        ] = "auto",
        exploration: Annotated[
            str,
            OneOf(EXPLORATIONS),
            Doc(
                "which active pair wider than ``2^-l`` line 13 plays: ``uniform`` draws one (the official code), "
                "``widest`` takes the widest."
            ),
        ] = "uniform",
        exploit_update: Annotated[
            str,
            OneOf(EXPLOIT_UPDATES),
            Doc(
                "after the alpha branch: ``none`` adds the round to no layer (Algorithm 1), ``next_layer`` to "
                "layer l + 1 with that layer's weight (the official code)."
            ),
        ] = "none",
        newton_steps: Annotated[
            PositiveInt, Doc("Newton steps of each warm-started refit of a layer's weighted MLE (line 19).")
        ] = 50,
    ):
        d, T = int(problem["dimension"]), problem.horizon
        self.alpha = T**-1.5 if alpha == "auto" else float(alpha)
        self.L = layer_count(self.alpha) if layers == "auto" else layers
        if 2.0**-self.L > self.alpha * (1 + 1e-12):
            raise ConfigError(
                f"{key_path(POLICY_PARAMS, 'layers')}: {self.L} layers leave 2^-L = {2.0**-self.L:g} "
                f"above alpha = {self.alpha:g}; Algorithm 1 needs 2^-L <= alpha (L >= "
                f"{layer_count(self.alpha)})"
            )
        self.rng, self.d, self.T = rng, d, T
        self.kappa, self.newton_steps = kappa_mu, newton_steps
        self.delta = 1.0 / T if delta == "auto" else float(delta)
        self.exploration, self.exploit_update = exploration, exploit_update
        self.beta_rule = beta if isinstance(beta, str) else "constant"
        constant = math.sqrt(d * math.log(max(T, 2))) / 4 if beta in ("official", "theory") else float(beta)
        self.beta = np.full(self.L, constant)  # beta_{t,l}; "theory" sets it per fit
        if beta == "theory":
            self.beta = np.array([self._theory_beta(l, 1, np.zeros(0)) for l in range(1, self.L + 1)])
        self.scale = 2.0 ** -np.arange(1, self.L + 1)  # 2^-l, l = 1..L
        self.inverse = np.stack([np.eye(d) / s**2 for s in self.scale])  # Sigma_l^{-1} = 2^{2l} I
        self.theta = np.zeros((self.L, d))
        self.diffs = np.zeros((T, d))  # x_s - y_s
        self.weight2 = np.zeros(T)  # w_s^2
        self.layer = np.full(T, -1, dtype=np.int64)  # layer index l - 1 of round s (-1: none)
        self.labels = np.zeros(T)
        self.arrived = np.zeros(T, dtype=bool)
        self.stale = np.zeros(self.L, dtype=bool)  # a layer with outcomes not yet in its MLE
        self.pending: int | None = None  # the round whose Sigma update is due

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        alpha = horizon**-1.5 if values["alpha"] == "auto" else values["alpha"]
        layers = values["layers"]
        if layers != "auto" and 2.0**-layers > alpha * (1 + 1e-12):
            raise ConfigError(
                f"{key_path(POLICY_PARAMS, 'layers')}: {layers} layers leave 2^-L = {2.0**-layers:g} "
                f"above alpha = {alpha:g}; Algorithm 1 needs 2^-L <= alpha"
            )

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        d = facts.get("dimension", 1)
        alpha = horizon**-1.5 if values["alpha"] == "auto" else values["alpha"]
        layers = layer_count(alpha) if values["layers"] == "auto" else values["layers"]
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
        self.theta[l] = fit_logistic(
            X, y, self.kappa * self.scale[l] ** 2, self.theta[l], weights=w2, max_iter=self.newton_steps
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

    # --- selection ---------------------------------------------------------------
    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        self._apply_pending()
        for l in np.flatnonzero(self.stale):
            self._fit(int(l), t)
        K = len(arms)
        active = np.ones(K, dtype=bool)
        for l in range(self.L):
            widths = pair_widths(arms, self.inverse[l])
            pairs = active[:, None] & active[None, :]
            widest = float(widths[pairs].max())
            if widest <= self.alpha:  # lines 6-8
                u = arms @ self.theta[l]
                score = np.where(pairs, u[:, None] + u[None, :] + self.beta[l] * widths, -np.inf)
                i, j = np.unravel_index(int(np.argmax(score)), score.shape)
                if self.exploit_update == "next_layer" and l + 1 < self.L:
                    return self._record(t, arms, int(i), int(j), l + 1, pair_widths(arms, self.inverse[l + 1]))
                return self._record(t, arms, int(i), int(j), None, widths)
            if widest <= self.scale[l]:  # lines 9-11
                u = arms @ self.theta[l]
                active &= u >= u[active].max() - self.scale[l] * self.beta[l]
                continue
            wide = pairs & (widths > self.scale[l])  # lines 12-15
            if self.exploration == "uniform":
                flat = int(self.rng.choice(np.flatnonzero(wide)))
            else:
                flat = int(np.argmax(np.where(wide, widths, -np.inf)))
            i, j = divmod(flat, K)
            return self._record(t, arms, i, j, l, widths)
        raise AssertionError("unreachable: the last layer ends in the alpha branch since 2^-L <= alpha")

    def _record(self, t: int, arms: np.ndarray, i: int, j: int, l: int | None, widths: np.ndarray) -> tuple[int, int]:
        """Round t's pair, its layer (``None``: no layer) and weight ``w_t = 2^-l / width`` (line 14)."""
        s = t - 1
        self.diffs[s] = arms[i] - arms[j]
        if l is None or widths[i, j] <= 0.0:
            self.layer[s], self.weight2[s] = -1, 0.0
        else:
            self.layer[s], self.weight2[s] = l, (self.scale[l] / widths[i, j]) ** 2
        self.pending = s
        return i, j
