"""Synthetic contextual dueling environments (seed 000 Sec. 5.1, seed 001 App. E.1.1).

Each round shows ``K`` arms with feature vectors in R^d; the learner picks a
pair ``(i, j)`` and observes ``y ~ Bernoulli(sigmoid(f(x_i) - f(x_j)))`` (the
Bradley–Terry–Luce model).  Per-round metrics: those of :mod:`banditbench.envs.preference`
(``regret``, ``average_regret``, ``weak_regret``).
"""

from __future__ import annotations

from typing import Annotated, Any, Mapping

import numpy as np

from ..api import register
from ..errors import ENVIRONMENT_PARAMS, ConfigError, key_path
from ..params import Doc, OneOf, PositiveInt, Range
from ..feedback import PreferenceFeedback, new_feedback
from ..numerics.sigmoid import sigmoid_of
from .draws import UNIFORM_BLOCK, uniforms
from .preference import DuelingEnvironment, KeptDuelMetrics


def _utility(name: str, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Latent utility f of each row of ``x``."""
    z = x @ theta
    if name == "linear":
        return z
    if name == "quadratic":  # seed 000: (theta^T x)^2
        return z**2
    if name == "cubic":  # seed 000: (theta^T x)^3
        return z**3
    if name == "cosine":  # seed 001: cos(3 Theta^T x)
        return np.cos(3.0 * z)
    if name == "square":  # seed 001: 10 (Theta^T x)^2
        return 10.0 * z**2
    if name == "quadratic_form":  # seed 001: x^T Theta Theta^T x
        return np.einsum("...i,i,j,...j->...", x, theta, theta, x)
    raise ConfigError(f"{key_path(ENVIRONMENT_PARAMS, 'utility')}: unknown utility {name!r}")


UTILITIES = ("linear", "quadratic", "cubic", "cosine", "square", "quadratic_form")
ARM_DISTRIBUTIONS = ("normalized_cube", "sphere")
THETA_DISTRIBUTIONS = ("sphere", "cube")


def sample_arms(rng: np.random.Generator, n: int, d: int, distribution: str, rounds: int | None = None) -> np.ndarray:
    """Arm features: ``normalized_cube`` draws U([-1,1]^d) then scales to unit norm (seed 001);
    ``sphere`` draws uniformly on the unit sphere (normalised Gaussians).  Shape ``(n, d)``, or
    ``(rounds, n, d)``: the arms of ``rounds`` successive calls, the same numbers from the same stream."""
    shape = (n, d) if rounds is None else (rounds, n, d)
    x = rng.uniform(-1.0, 1.0, size=shape) if distribution == "normalized_cube" else rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def sample_theta(rng: np.random.Generator, d: int, distribution: str) -> np.ndarray:
    """The hidden ``theta``: uniform on the unit ``sphere`` (a normalised Gaussian, seed 000) or U([-1,1]^d)
    (``cube``, seed 001)."""
    if distribution == "sphere":
        theta = rng.standard_normal(d)
        return theta / np.linalg.norm(theta)
    return rng.uniform(-1.0, 1.0, d)


#: arms are drawn (and normalised) for as many rounds at once as make about this many numbers (a
#: block that stays in the CPU cache); each round takes the next from the block, so the stream
#: gives every round the numbers a draw per round would
DRAW_BLOCK = 8192


@register("synthetic_dueling")
class SyntheticDueling(KeptDuelMetrics, DuelingEnvironment):
    """Contextual dueling bandit with K fresh arms per round and a BTL preference model.

    The arms and the outcomes' uniforms are drawn a block of rounds at a time (:data:`DRAW_BLOCK`;
    the same numbers as one draw per round), and the utilities of a block's arms and their maximum
    per round are computed in one product (the bits of one per round); the metrics of
    :mod:`~.preference` are kept by the environment (``keeps_truth``).
    ``theta`` is drawn once per seed from the environment stream.
    """

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        horizon: Annotated[int, Doc("the run's rounds T, set from the experiment's ``horizon``.")],
        dimension: Annotated[PositiveInt, Doc("feature dimension d of the arms.")] = 20,
        n_arms: Annotated[int, Range(ge=2), Doc("arms per round K, drawn afresh every round.")] = 20,
        utility: Annotated[
            str,
            OneOf(UTILITIES),
            Doc(
                "the utility of an arm: ``linear``, ``quadratic``, ``cubic`` (seed 000, Sec. 5.1), ``cosine``, "
                "``square``, ``quadratic_form`` (seed 001, App. E.1.1)."
            ),
        ] = "linear",
        arm_distribution: Annotated[
            str,
            OneOf(ARM_DISTRIBUTIONS),
            Doc(
                "how the arms are drawn: uniform on the unit ``sphere``, or ``normalized_cube`` (U([-1,1]^d) scaled to "
                "unit norm, seed 001)."
            ),
        ] = "sphere",
        theta_distribution: Annotated[
            str,
            OneOf(THETA_DISTRIBUTIONS),
            Doc("the hidden ``theta``: ``sphere`` (unit norm, seed 000) or ``cube`` (U([-1,1]^d), seed 001)."),
        ] = "sphere",
    ):
        instance_seq, context_seq, outcome_seq = seed_seq.spawn(3)
        inst = np.random.default_rng(instance_seq)
        self.theta = sample_theta(inst, dimension, theta_distribution)
        self.utility, self.dimension, self.n_arms = utility, dimension, n_arms
        self.arm_distribution = arm_distribution
        # contexts and outcomes have their own streams: the contexts of a seed are
        # the same whatever the policy does.
        self._ctx_rng = np.random.default_rng(context_seq)
        self._arm_block, self._next_arms = np.empty((0, n_arms, dimension)), 0  # drawn, not yet used
        self._uniform = uniforms(np.random.default_rng(outcome_seq)).__next__
        self._arm_rounds = max(1, DRAW_BLOCK // (n_arms * dimension))
        self._keep_truth(horizon)

    @classmethod
    def known_facts(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"dimension": values["dimension"], "n_arms": values["n_arms"]}

    @classmethod
    def utility_range(cls, values: Mapping[str, Any]) -> tuple[float, float]:
        """The arms have unit norm, so ``|theta^T x| <= ||theta|| = b``, with ``b = 1`` for a ``sphere`` theta
        and ``sqrt(d)`` for a ``cube`` one: linear ``[-b, b]``, quadratic and quadratic_form ``[0, b^2]``, cubic
        ``[-b^3, b^3]``, square ``[0, 10 b^2]``, cosine ``[-1, 1]``."""
        b = 1.0 if values["theta_distribution"] == "sphere" else float(np.sqrt(values["dimension"]))
        return {
            "linear": (-b, b),
            "quadratic": (0.0, b**2),
            "cubic": (-(b**3), b**3),
            "cosine": (-1.0, 1.0),
            "square": (0.0, 10 * b**2),
            "quadratic_form": (0.0, b**2),
        }[values["utility"]]

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        # a block of raw and normalised arms, of their utilities and of outcome uniforms; every round's three
        # kept truth values
        block = max(DRAW_BLOCK, values["n_arms"] * values["dimension"])
        return 8 * 2 * block + 8 * block // values["dimension"] + 8 * UNIFORM_BLOCK + 3 * 8 * horizon

    def public_info(self) -> dict[str, Any]:
        return {"dimension": self.dimension, "n_arms": self.n_arms}

    def utilities(self, arms: np.ndarray) -> np.ndarray:
        return _utility(self.utility, self.theta, arms)

    def context(self, t: int) -> np.ndarray:
        k = self._next_arms
        if k == len(self._arm_block):
            self._arm_block = sample_arms(
                self._ctx_rng, self.n_arms, self.dimension, self.arm_distribution, rounds=self._arm_rounds
            )
            f = self.utilities(self._arm_block)  # the block's utilities in one product (the bits of one per round)
            self._f_block, self._best_block = f.tolist(), f.max(axis=-1).tolist()
            k = 0
        self._next_arms = k + 1
        self._f_values, self._best = self._f_block[k], self._best_block[k]  # the round's, Python floats
        return self._arm_block[k]

    def play(self, t: int, action) -> PreferenceFeedback:
        i, j = int(action[0]), int(action[1])
        f, best = self._f_values, self._best
        y = int(self._uniform() < sigmoid_of(f[i] - f[j]))
        self._keep_duel(t, f, i, j, best)
        return new_feedback(PreferenceFeedback, (t, y))
