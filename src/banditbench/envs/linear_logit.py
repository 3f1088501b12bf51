r"""The synthetic dueling task of the VACDB repository (``uclaml/VACDB``, ``model.py``, class ``LinearLogitModel``,
commit 7b1c0df), on which that code runs seed 001's linear baselines (VACDB, MaxInP, CoLSTIM).

Reimplemented from reading ``model.py`` (not copied).  K fixed arms in R^d, the same in every round: arm k
is the binary expansion of k over d bits (bit i of k, least significant first, mapped to +1 when set and
-1 when not; ``model.py`` lines 55 and 66-68), each coordinate shifted by a draw from U[-w, 0) with
``w = disturbance`` (line 72: ``(U[0, 1) - 1) / 10``, whose comment says "mean 0").  The hidden
:math:`\theta^*` draws U[0, 1) on its first ``support`` coordinates and is 0 elsewhere (lines 39-42),
normalised to unit norm and multiplied by ``scale`` (lines 46-47).  A duel (i, j) is won by i with
probability :math:`\mu(\theta^{*\top}(x_i - x_j))`, the logistic link (lines 79 and 105); the regret of the
round is :math:`(2 x^* - x_i - x_j)^\top \theta^* / \mathrm{scale}` (line 114), with :math:`x^*` the arm of
largest :math:`\theta^{*\top} x` (lines 93-94).  The metrics are those of :mod:`banditbench.envs.preference`
on the utilities :math:`\theta^{*\top} x / \mathrm{scale}`.

Instances (``instances``): ``authors`` (default) draws :math:`\theta^*` and the shifts as ``model.py`` does for
the job's seed s (the entropy of the environment's seed sequence): two generators
``numpy.random.default_rng(s + 1000)`` (lines 32-33), the first drawing :math:`\theta^*`'s d uniforms, the
second, from the same start, the K x d shifts, so that the job with seed s plays the authors' instance of
seed s.  ``own`` draws both from the environment's own instance stream.  Outcomes always come from the
environment's own outcome stream: the authors' code draws them, and its algorithms' coins, from one
generator, which no other program can share (docs/baselines.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Mapping

import numpy as np

from ..api import register
from ..errors import ConfigError
from ..feedback import PreferenceFeedback, new_feedback
from ..numerics.sigmoid import sigmoid_of
from ..params import Doc, NonNegative, OneOf, Positive, PositiveInt, Range
from .draws import UNIFORM_BLOCK, uniforms
from .preference import DuelingEnvironment, KeptDuelMetrics

INSTANCES = ("authors", "own")
#: the offset ``model.py`` adds to the seed of its generators (lines 32-33)
AUTHORS_SEED_OFFSET = 1000


def binary_arms(n_arms: int, dimension: int) -> np.ndarray:
    """Arm k's bits (least significant first) as +1 / -1: the arms before their shifts, shape ``(K, d)``."""
    bits = (np.arange(n_arms)[:, None] >> np.arange(dimension)[None, :]) & 1
    return 2.0 * bits - 1.0


def instance(
    draws: tuple[np.random.Generator, np.random.Generator],
    n_arms: int,
    dimension: int,
    support: int,
    scale: float,
    disturbance: float,
) -> tuple[np.ndarray, np.ndarray]:
    """``(theta*, arms)``: theta* from the first generator's d uniforms, the arms' shifts from the second's K x d."""
    theta_gen, shift_gen = draws
    raw = theta_gen.random(dimension)
    raw[support:] = 0.0
    theta = raw / np.sqrt(raw @ raw) * scale
    shifts = shift_gen.random((n_arms, dimension)) - 1.0
    # divided by 1 / w (10 for the default 0.1), as line 72 divides: the authors' instance to the bit
    arms = binary_arms(n_arms, dimension) + (shifts / (1.0 / disturbance) if disturbance > 0 else 0.0)
    arms.setflags(write=False)  # the context of every round
    return theta, arms


@register("linear_logit_dueling")
class LinearLogitDueling(KeptDuelMetrics, DuelingEnvironment):
    """The VACDB repository's synthetic task (seed 001's linear baselines as their authors run them): K fixed
    binary arms in R^d, theta* on a few coordinates, BTL outcomes (module docstring)."""

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        horizon: Annotated[int, Doc("the run's rounds T, set from the experiment's ``horizon``.")],
        dimension: Annotated[PositiveInt, Doc("feature dimension d (the authors' 5: ``main.py`` line 27).")] = 5,
        n_arms: Annotated[
            int,
            Range(ge=2),
            Doc("arms K, the binary expansions of 0..K-1 (the authors' 2^5 = 32: ``main.py`` line 28)."),
        ] = 32,
        support: Annotated[
            PositiveInt, Doc("coordinates of theta* that are not zero, the first ones (``model.py`` line 41: 2).")
        ] = 2,
        scale: Annotated[
            Positive,
            Doc("the norm of theta* (``model.py`` line 47; ``main.py`` line 55 runs 1); regret is divided by it."),
        ] = 1.0,
        disturbance: Annotated[
            NonNegative, Doc("each coordinate of an arm is shifted by U[-disturbance, 0) (``model.py`` line 72: 0.1).")
        ] = 0.1,
        instances: Annotated[
            str,
            OneOf(INSTANCES),
            Doc(
                "``authors``: theta* and the shifts as ``model.py`` draws them for the job's seed "
                "(``default_rng(seed + 1000)``); ``own``: from the environment's own stream."
            ),
        ] = "authors",
    ):
        instance_seq, outcome_seq = seed_seq.spawn(2)
        if instances == "authors":
            entropy = seed_seq.entropy
            if not isinstance(entropy, (int, np.integer)):
                raise ConfigError("seed: linear_logit_dueling with instances: authors needs an integer job seed")
            draws = tuple(np.random.default_rng(int(entropy) + AUTHORS_SEED_OFFSET) for _ in range(2))
        else:
            draws = (np.random.default_rng(instance_seq),) * 2
        theta, self.arms = instance(draws, n_arms, dimension, min(support, dimension), scale, disturbance)
        self.theta, self.dimension, self.n_arms = theta, dimension, n_arms
        self._logit = (self.arms @ theta).tolist()  # theta*^T x: the outcomes' utilities
        self._f = (self.arms @ theta / scale).tolist()  # the regret's (model.py line 114)
        self._best = self._f[int(np.argmax(self._logit))]
        self._uniform = uniforms(np.random.default_rng(outcome_seq)).__next__
        self._keep_truth(horizon)

    @classmethod
    def known_facts(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"dimension": values["dimension"], "n_arms": values["n_arms"]}

    @classmethod
    def utility_range(cls, values: Mapping[str, Any]) -> tuple[float, float]:
        """theta*/scale is unit-norm and non-negative on ``s = min(support, d)`` coordinates, so its L1 norm is at
        most sqrt(s); each arm coordinate lies in ``[-1 - w, 1]``: utilities in ``[-(1 + w) sqrt(s), sqrt(s)]``."""
        root = float(np.sqrt(min(values["support"], values["dimension"])))
        return -(1.0 + values["disturbance"]) * root, root

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        return 8 * UNIFORM_BLOCK + 3 * 8 * horizon  # outcome uniforms; every round's three kept truth values

    def public_info(self) -> dict[str, Any]:
        return {"dimension": self.dimension, "n_arms": self.n_arms}

    def context(self, t: int) -> np.ndarray:
        return self.arms

    def play(self, t: int, action) -> PreferenceFeedback:
        i, j = int(action[0]), int(action[1])
        y = int(self._uniform() < sigmoid_of(self._logit[i] - self._logit[j]))
        self._keep_duel(t, self._f, i, j, self._best)
        return new_feedback(PreferenceFeedback, (t, y))
