"""A synthetic dueling task on a fixed arm set: the task on which NDB-UCB is compared with its authors' code.

The neural dueling code of the NDB authors' group (``xqlin98/APOHF``, ``NeuralDBDiag``) chooses among one arm
set that stays the same in every round (its prompts) and keeps its history as indices into it, so it cannot run
on :class:`~banditbench.envs.dueling.SyntheticDueling`, which draws K fresh arms per round.  This task draws
its K arms once per seed (on the unit sphere, or from the normalised cube) with the hidden ``theta``, from the
environment's instance stream, and shows them in every round; a duel (i, j) is won by i with probability
``sigmoid(f(x_i) - f(x_j))`` (BTL) with the utilities ``f`` of :mod:`~banditbench.envs.dueling`.  The
defaults are issue 50's task: d = 5, K = 10, ``f(x) = (theta^T x)^2``.  Per-round metrics: those of
:mod:`banditbench.envs.preference`.  It publishes ``fixed_arms`` (the NDB family then carries its confidence
state in the K x K arm kernel).
"""

from __future__ import annotations

from typing import Annotated, Any, Mapping

import numpy as np

from ..api import register
from ..feedback import PreferenceFeedback, new_feedback
from ..numerics.sigmoid import sigmoid_of
from ..params import Doc, OneOf, PositiveInt, Range
from .draws import UNIFORM_BLOCK, uniforms
from .dueling import (
    ARM_DISTRIBUTIONS,
    THETA_DISTRIBUTIONS,
    UTILITIES,
    SyntheticDueling,
    _utility,
    sample_arms,
    sample_theta,
)
from .preference import DuelingEnvironment, KeptDuelMetrics


@register("fixed_arm_dueling")
class FixedArmDueling(KeptDuelMetrics, DuelingEnvironment):
    """K arms drawn once per seed and shown in every round, BTL preferences (module docstring)."""

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        horizon: Annotated[int, Doc("the run's rounds T, set from the experiment's ``horizon``.")],
        dimension: Annotated[PositiveInt, Doc("feature dimension d of the arms.")] = 5,
        n_arms: Annotated[int, Range(ge=2), Doc("arms K, drawn once per seed and the same in every round.")] = 10,
        utility: Annotated[
            str,
            OneOf(UTILITIES),
            Doc("the utility of an arm, as ``synthetic_dueling``'s (``quadratic``: (theta^T x)^2)."),
        ] = "quadratic",
        arm_distribution: Annotated[
            str,
            OneOf(ARM_DISTRIBUTIONS),
            Doc("how the arms are drawn: uniform on the unit ``sphere``, or ``normalized_cube``."),
        ] = "sphere",
        theta_distribution: Annotated[
            str,
            OneOf(THETA_DISTRIBUTIONS),
            Doc("the hidden ``theta``: ``sphere`` (unit norm) or ``cube`` (U([-1,1]^d))."),
        ] = "sphere",
    ):
        instance_seq, outcome_seq = seed_seq.spawn(2)
        inst = np.random.default_rng(instance_seq)
        self.theta = sample_theta(inst, dimension, theta_distribution)
        self.arms = sample_arms(inst, n_arms, dimension, arm_distribution)
        self.arms.setflags(write=False)  # the context of every round
        self.utility, self.dimension, self.n_arms = utility, dimension, n_arms
        f = _utility(utility, self.theta, self.arms)
        self._f, self._best = f.tolist(), float(f.max())
        self._uniform = uniforms(np.random.default_rng(outcome_seq)).__next__
        self._keep_truth(horizon)

    @classmethod
    def known_facts(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"dimension": values["dimension"], "n_arms": values["n_arms"], "fixed_arms": True}

    @classmethod
    def utility_range(cls, values: Mapping[str, Any]) -> tuple[float, float]:
        """As ``synthetic_dueling``'s (:meth:`~banditbench.envs.dueling.SyntheticDueling.utility_range`)."""
        return SyntheticDueling.utility_range(values)

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        return 8 * UNIFORM_BLOCK + 3 * 8 * horizon  # outcome uniforms; every round's three kept truth values

    def public_info(self) -> dict[str, Any]:
        return {"dimension": self.dimension, "n_arms": self.n_arms, "fixed_arms": True}

    def utilities(self, arms: np.ndarray) -> np.ndarray:
        return _utility(self.utility, self.theta, arms)

    def context(self, t: int) -> np.ndarray:
        return self.arms

    def play(self, t: int, action) -> PreferenceFeedback:
        i, j = int(action[0]), int(action[1])
        y = int(self._uniform() < sigmoid_of(self._f[i] - self._f[j]))
        self._keep_duel(t, self._f, i, j, self._best)
        return new_feedback(PreferenceFeedback, (t, y))
