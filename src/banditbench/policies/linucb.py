"""LinUCB (Li, Chu, Langford and Schapire, WWW 2010) for reward feedback.

Ridge regression on the played arms' features and the upper confidence bound
``x^T theta_hat + alpha ||x||_{A^{-1}}`` of Li et al.'s Algorithm 1, with
``A = lam I + sum x x^T`` kept inverted by Sherman–Morrison updates (O(d^2)
per observation).

* ``mode: shared`` — one parameter vector over the arms' feature vectors (the
  "shared" linear model the paper's hybrid variant builds on).
* ``mode: disjoint`` — Algorithm 1: one parameter vector per arm index,
  ``theta_a`` over arm ``a``'s own features.

Block arm features ``x^(k) = e_k (x) x`` (classification bandits publish
``arm_layout: "block"``) make ``A`` block diagonal, so the shared model *is* the
disjoint model on ``x``: the policy then keeps K inverses of size d x d
instead of one of size dK x dK (K times less memory, K^2 times less work per
update), with exactly the same choices, and asks for the ``row`` context form
(``x`` alone; the environment does not build the K x dK matrix).  Delayed feedback updates the model
when it arrives, with the features of the round it belongs to.  Ties between
maximal UCBs are broken uniformly at random.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Sequence

import numpy as np

from ..api import Policy, Problem, register
from ..feedback import RewardFeedback
from ..params import Doc, NonNegative, Positive
from .linalg import Ridge, sherman_morrison


class _PerArmRidge:
    """K independent ridge regressions on d features: ``A_k^{-1}``, ``b_k`` and ``theta_k = A_k^{-1} b_k``,
    stacked so that the UCBs of all arms are one vectorised pass."""

    def __init__(self, n_arms: int, d: int, lam: float):
        self.inverse = np.broadcast_to(np.eye(d) / lam, (n_arms, d, d)).copy()
        self.b = np.zeros((n_arms, d))
        self.theta = np.zeros((n_arms, d))

    def ucb(self, x: np.ndarray, alpha: float) -> np.ndarray:
        """UCB of every arm; ``x`` is (K, d) per-arm features or (d,) features shared by all arms."""
        X = np.broadcast_to(x, self.theta.shape)
        v = np.einsum("kij,kj->ki", self.inverse, X)
        width = np.sqrt(np.maximum(np.einsum("kd,kd->k", v, X), 0.0))
        return np.einsum("kd,kd->k", self.theta, X) + alpha * width

    def update(self, k: int, x: np.ndarray, r: float) -> None:
        sherman_morrison(self.inverse[k], x)
        self.b[k] += r * x
        self.theta[k] = self.inverse[k] @ self.b[k]


@register("linucb")
class LinUCB(Policy):
    """LinUCB (Li et al. 2010, Alg. 1): ridge UCB with Sherman–Morrison updates, shared or disjoint models.

    Block-structured arms are handled as K small models (same choices as the shared model).
    """

    feedback_kind = "reward"
    action_kind = "arm"

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        alpha: Annotated[
            NonNegative,
            Doc(
                "exploration coefficient of the UCB ``x^T theta + alpha ||x||_{A^-1}`` (Li et al., Alg. 1, "
                "who take ``1 + sqrt(ln(2/delta)/2)``); 1 by default."
            ),
        ] = 1.0,
        lam: Annotated[Positive, Doc("ridge regularisation: ``A_0 = lam I``.")] = 1.0,
        mode: Annotated[
            Literal["shared", "disjoint"],
            Doc(
                "``shared``: one parameter vector over all arms' features; ``disjoint``: one per arm index "
                "(Li et al., Alg. 1)."
            ),
        ] = "shared",
    ):
        self.rng, self.alpha, self.mode = rng, float(alpha), mode
        self.n_arms, self.dimension = int(problem["n_arms"]), int(problem["dimension"])
        info: dict[str, Any] = dict(problem.info)
        self.block = info.get("arm_layout") == "block"
        if self.block:
            self.d = int(problem["context_dimension"])
            self.model = _PerArmRidge(self.n_arms, self.d, lam)
            self.context_form = "row"
        elif mode == "disjoint":
            self.model = _PerArmRidge(self.n_arms, self.dimension, lam)
        else:
            self.ridge = Ridge(self.dimension, lam)
        self.pending: dict[int, tuple[int, np.ndarray]] = {}

    def observe(self, t: int, arrived: Sequence[RewardFeedback]) -> None:
        for fb in arrived:
            arm, x = self.pending.pop(fb.round)
            if self.block or self.mode == "disjoint":
                self.model.update(arm, x, fb.reward)
            else:
                self.ridge.add(x[None], np.array([fb.reward]))

    def act(self, t: int, arms: np.ndarray) -> int:
        if self.block:  # the row x, or the matrix: arm 0 carries x in block 0
            x = arms if arms.ndim == 1 else arms[0, : self.d]
            ucb = self.model.ucb(x, self.alpha)
        elif self.mode == "disjoint":
            ucb = self.model.ucb(arms, self.alpha)
        else:
            ucb = arms @ self.ridge.estimate + self.alpha * self.ridge.gram.norms(arms)
        best = np.flatnonzero(ucb >= ucb.max() - 1e-12)
        arm = int(best[0] if len(best) == 1 else self.rng.choice(best))
        self.pending[t] = (arm, np.array(x if self.block else arms[arm]))
        return arm
