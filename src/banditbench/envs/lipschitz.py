r"""Lipschitz bandit environments of seed 003 (Liu, Kang & Lee), Sec. 7.

The learner plays a point ``x_t`` of ``([0,1]^d, ||.||_inf)`` and receives
``y_t = mu(x_t) + eps_t`` with Gaussian noise ``eps_t ~ N(0, noise_sigma^2)``.  The
paper's analysis takes the sub-Gaussian parameter sigma = 1 "for simplicity" (Sec. 3) and
Sec. 7 does not state the experiments' noise; ``noise_sigma`` is the environment's, and the
policies' sigma (App. D) is a separate policy parameter (config/lipschitz.yaml explains the
default).  Reward functions (Sec. 7):

* ``triangle``  :math:`\mu(x) = 0.8 - 0.9 \lvert x - 0.4\rvert` on ``[0,1]``; :math:`\mu^* = 0.8` at :math:`x = 0.4`;
* ``sine``      :math:`\mu(x) = \frac{2}{3} \lvert\sin(5\pi x / 3)\rvert` on ``[0,1]``; :math:`\mu^* = 2/3` at
  :math:`x = 0.3, 0.9`;
* ``two_dim``   :math:`\mu(x) = 1 - 0.7 \lVert x - x_1\rVert_2 - 0.4 \lVert x - x_2\rVert_2` on ``[0,1]^2``,
  :math:`x_1 = (0.7, 0.8)`, :math:`x_2 = (0, 0.1)`; the function is concave and, since the
  weight 0.7 of ``x1`` is at least the other weight (0.4), its maximum is at ``x1``
  (weighted Fermat point), so :math:`\mu^* = 1 - 0.4 \lVert x_1 - x_2\rVert_2` exactly.

Per round the environment logs ``regret = mu* - mu(x_t)`` (the paper's R(T) is
its sum over all generated rounds, Sec. 3) and ``expected_reward = mu(x_t)``; it keeps
``mu(x_t)`` of every round itself and hands both series over at the end (``keeps_truth``).
The noise of round ``t`` is drawn up front from the environment's own stream,
so it does not depend on what the policy plays.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Callable, Mapping, NamedTuple

import numpy as np

from ..api import Environment, register
from ..errors import ENVIRONMENT_PARAMS, ConfigError, key_path
from ..feedback import RewardFeedback, new_feedback
from ..params import Doc, NonNegative, OneOf

X1 = (0.7, 0.8)
X2 = (0.0, 0.1)


class RewardFunction(NamedTuple):
    """A reward function of Sec. 7: its dimension, exact maximum ``mu*``, a maximiser, and its
    formula ``formula(x, m)`` of the coordinates ``x[0], x[1], ...`` written once for ``m = math``
    (one point, scalar arithmetic) and ``m = numpy`` (arrays of points)."""

    dimension: int
    mu_star: float
    maximiser: tuple[float, ...]
    formula: Callable[[Any, Any], Any]


FUNCTIONS: dict[str, RewardFunction] = {
    "triangle": RewardFunction(1, 0.8, (0.4,), lambda x, m: 0.8 - 0.9 * abs(x[0] - 0.4)),
    "sine": RewardFunction(1, 2.0 / 3.0, (0.3,), lambda x, m: (2.0 / 3.0) * abs(m.sin(5.0 * m.pi * x[0] / 3.0))),
    "two_dim": RewardFunction(
        2,
        1.0 - 0.4 * math.hypot(X1[0] - X2[0], X1[1] - X2[1]),
        X1,
        lambda x, m: 1.0 - 0.7 * m.hypot(x[0] - X1[0], x[1] - X1[1]) - 0.4 * m.hypot(x[0] - X2[0], x[1] - X2[1]),
    ),
}


#: the per-round path: ``mu`` of one point of ``[0, 1]^d`` given as its ``d`` coordinates (floats), the
#: operations of :data:`FUNCTIONS`' formula in the same order (the same bits; checked by the tests) without
#: packing the point into a tuple
SCALAR: dict[str, Callable[..., float]] = {
    "triangle": lambda x: 0.8 - 0.9 * abs(x - 0.4),
    "sine": lambda x: (2.0 / 3.0) * abs(math.sin(5.0 * math.pi * x / 3.0)),
    "two_dim": lambda x, y: 1.0 - 0.7 * math.hypot(x - X1[0], y - X1[1]) - 0.4 * math.hypot(x - X2[0], y - X2[1]),
}


#: the least ``mu`` of each function on ``[0, 1]^d``: triangle and two_dim are concave, so their minimum is at
#: a vertex of the cube; sine's ``|sin|`` is 0 at x = 0
MU_MIN: dict[str, float] = {
    "triangle": min(FUNCTIONS["triangle"].formula((v,), math) for v in (0.0, 1.0)),
    "sine": 0.0,
    "two_dim": min(FUNCTIONS["two_dim"].formula(v, math) for v in ((0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0))),
}


#: the functions' codes in the compiled loop (:func:`banditbench.policies.lipschitz.compiled.mean_reward`)
FUNCTION_CODES = {"triangle": 0, "sine": 1, "two_dim": 2}


def _function(name: str) -> RewardFunction:
    if name not in FUNCTIONS:
        raise ConfigError(f"{key_path(ENVIRONMENT_PARAMS, 'function')}: {name!r} is not one of {list(FUNCTIONS)}")
    return FUNCTIONS[name]


def mean_reward(function: str, x: np.ndarray) -> np.ndarray:
    """``mu(x)`` of the named function; ``x`` has shape ``(..., d)``."""
    return _function(function).formula(np.moveaxis(np.asarray(x, dtype=float), -1, 0), np)


@register("lipschitz")
class LipschitzEnv(Environment):
    """Continuum-armed bandit on ``([0,1]^d, l_inf)`` with one of seed 003's reward functions.

    An action is a point: a float (d = 1) or a length-``d`` array or tuple, inside ``[0,1]^d``.
    """

    feedback_kind = "reward"
    action_kind = "point"
    metrics = ("regret", "expected_reward")
    primary_metric = "regret"
    keeps_truth = True
    has_context = False

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        horizon: Annotated[int, Doc("the run's rounds T, set from the experiment's ``horizon``.")],
        function: Annotated[
            str,
            OneOf(tuple(FUNCTIONS)),
            Doc(
                "the reward function of Sec. 7: ``triangle``, ``sine`` (d = 1) or ``two_dim`` (d = 2) "
                "(module docstring)."
            ),
        ] = "triangle",
        noise_sigma: Annotated[
            NonNegative,
            Doc(
                "standard deviation of the Gaussian reward noise (not stated in Sec. 7; the policies' sigma is "
                "their own parameter)."
            ),
        ] = 1.0,
    ):
        self._formula, self._scalar = _function(function).formula, SCALAR[function]
        if horizon < 1:
            raise ConfigError(f"horizon: must be >= 1, got {horizon}")
        self.function = function
        self.dimension, self.mu_star, self.maximiser = FUNCTIONS[function][:3]
        self.noise_sigma = float(noise_sigma)
        (noise_seq,) = seed_seq.spawn(1)
        self.noise = self.noise_sigma * np.random.default_rng(noise_seq).standard_normal(horizon)
        self._noise = self.noise.tolist()  # the per-round path reads Python floats
        self._mu = [0.0] * horizon  # mu(x_t) of every round played

    @classmethod
    def metric_ranges(cls, values: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
        """``expected_reward`` in ``[min mu, mu*]`` (:data:`MU_MIN`) and ``regret`` in ``[0, mu* - min mu]``
        (the noise enters neither)."""
        low, top = MU_MIN[values["function"]], FUNCTIONS[values["function"]].mu_star
        return {"regret": (0.0, top - low), "expected_reward": (low, top)}

    @classmethod
    def known_facts(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"dimension": FUNCTIONS[values["function"]].dimension}

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        # the noise (an array, and a list of Python floats of about 32 bytes each) and mu(x_t) (a list)
        return (8 + 32 + 32) * horizon

    def public_info(self) -> dict[str, Any]:
        return {"dimension": self.dimension, "action_space": "unit_cube", "metric": "linf"}

    def context(self, t: int) -> None:
        return None

    def _point(self, action) -> tuple[float, ...]:
        """The action as a tuple of coordinates; a clear error unless it is a point of ``[0,1]^d``."""
        if type(action) is tuple and len(action) == self.dimension:
            for c in action:  # the per-round case of d > 1
                if not (type(c) is float and 0.0 <= c <= 1.0):
                    break
            else:
                return action
        a = np.asarray(action, dtype=float)
        x = (float(a),) if a.ndim == 0 else tuple(a.tolist()) if a.ndim == 1 else ()
        if len(x) != self.dimension or not all(0.0 <= c <= 1.0 for c in x):
            raise ValueError(f"action must be a point of [0,1]^{self.dimension}, got {action!r}")
        return x

    def mu(self, x: tuple[float, ...]) -> float:
        """``mu(x)`` of one point, in scalar arithmetic (the formula of :data:`FUNCTIONS`)."""
        return self._formula(x, math)

    def play(self, t: int, action) -> RewardFeedback:
        if type(action) is float and 0.0 <= action <= 1.0 and self.dimension == 1:
            mu = self._scalar(action)  # the per-round case of d = 1
        else:
            mu = self._scalar(*self._point(action))
        self._mu[t - 1] = mu
        return new_feedback(RewardFeedback, (t, mu + self._noise[t - 1]))

    def step(self, t: int, action) -> tuple[RewardFeedback, dict[str, float]]:
        feedback = self.play(t, action)
        mu = self._mu[t - 1]
        return feedback, {"regret": self.mu_star - mu, "expected_reward": mu}

    def compiled_step(self) -> tuple[int, np.ndarray]:
        """What a compiled loop needs to play this environment's rounds itself
        (:mod:`banditbench.policies.lipschitz.compiled`): the reward function's code
        (:data:`FUNCTION_CODES`) and the noise of every round."""
        return FUNCTION_CODES[self.function], self.noise

    def record_means(self, mu: np.ndarray) -> None:
        """Keep ``mu(x_t)`` of the rounds a compiled loop played (the first ``len(mu)`` rounds)."""
        if len(mu) == len(self._mu):
            self._mu = mu
        else:
            self._mu[: len(mu)] = mu.tolist()

    def truth_log(self, horizon: int) -> dict[str, np.ndarray]:
        mu = np.array(self._mu[:horizon], dtype=float)
        return {"regret": self.mu_star - mu, "expected_reward": mu}

    def summary(self) -> dict[str, float]:
        return {"mu_star": self.mu_star}
