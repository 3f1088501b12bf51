"""Lipschitz bandit environments of seed 003 (Liu, Kang & Lee), Sec. 7.

The learner plays a point ``x_t`` of ``([0,1]^d, ||.||_inf)`` and receives
``y_t = mu(x_t) + eps_t`` with Gaussian noise ``eps_t ~ N(0, noise_sigma^2)``
(the paper's sigma = 1, Sec. 3).  Reward functions (Sec. 7):

* ``triangle``  ``mu(x) = 0.8 - 0.9 |x - 0.4|`` on ``[0,1]``; ``mu* = 0.8`` at ``x = 0.4``;
* ``sine``      ``mu(x) = (2/3) |sin(5 pi x / 3)|`` on ``[0,1]``; ``mu* = 2/3`` at ``x = 0.3, 0.9``;
* ``two_dim``   ``mu(x) = 1 - 0.7 ||x - x1||_2 - 0.4 ||x - x2||_2`` on ``[0,1]^2``,
  ``x1 = (0.7, 0.8)``, ``x2 = (0, 0.1)``; the function is concave and, since the
  weight 0.7 of ``x1`` is at least the other weight (0.4), its maximum is at ``x1``
  (weighted Fermat point), so ``mu* = 1 - 0.4 ||x1 - x2||_2`` exactly.

Per round the environment logs ``regret = mu* - mu(x_t)`` (the paper's R(T) is
its sum over all generated rounds, Sec. 3) and ``expected_reward = mu(x_t)``.
The noise of round ``t`` is drawn up front from the environment's own stream,
so it does not depend on what the policy plays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..api import Environment, register
from ..errors import ConfigError
from ..feedback import RewardFeedback

X1 = (0.7, 0.8)
X2 = (0.0, 0.1)


def mean_reward(function: str, x: np.ndarray) -> np.ndarray:
    """``mu(x)`` of the named function; ``x`` has shape ``(..., d)``."""
    x = np.asarray(x, dtype=float)
    if function == "triangle":
        return 0.8 - 0.9 * np.abs(x[..., 0] - 0.4)
    if function == "sine":
        return (2.0 / 3.0) * np.abs(np.sin(5.0 * np.pi * x[..., 0] / 3.0))
    if function == "two_dim":
        return (1.0 - 0.7 * np.linalg.norm(x - np.array(X1), axis=-1)
                - 0.4 * np.linalg.norm(x - np.array(X2), axis=-1))
    raise ConfigError(f"environment.params.function: unknown function {function!r}; choose from {list(FUNCTIONS)}")


#: name -> (dimension, exact maximum mu*, a maximiser)
FUNCTIONS: dict[str, tuple[int, float, tuple[float, ...]]] = {
    "triangle": (1, 0.8, (0.4,)),
    "sine": (1, 2.0 / 3.0, (0.3,)),
    "two_dim": (2, 1.0 - 0.4 * math.hypot(X1[0] - X2[0], X1[1] - X2[1]), X1),
}


@register("lipschitz")
class LipschitzEnv(Environment):
    """Continuum-armed bandit on ``([0,1]^d, l_inf)`` with one of seed 003's reward functions.

    Parameters
    ----------
    function : ``triangle``, ``sine`` (d = 1) or ``two_dim`` (d = 2).
    noise_sigma : standard deviation of the Gaussian reward noise (paper: 1).

    An action is a point: a float (d = 1) or a length-``d`` array, inside ``[0,1]^d``.
    """

    feedback_kind = "reward"
    action_kind = "point"
    metrics = ("regret", "expected_reward")
    primary_metric = "regret"

    def __init__(self, seed_seq: np.random.SeedSequence, *, horizon: int, function: str = "triangle",
                 noise_sigma: float = 1.0):
        if function not in FUNCTIONS:
            raise ConfigError(f"environment.params.function: {function!r} is not one of {list(FUNCTIONS)}")
        if not isinstance(noise_sigma, (int, float)) or noise_sigma < 0:
            raise ConfigError(f"environment.params.noise_sigma: must be a number >= 0, got {noise_sigma!r}")
        if horizon < 1:
            raise ConfigError(f"horizon: must be >= 1, got {horizon}")
        self.function = function
        self.dimension, self.mu_star, self.maximiser = FUNCTIONS[function]
        self.noise_sigma = float(noise_sigma)
        (noise_seq,) = seed_seq.spawn(1)
        self._noise = self.noise_sigma * np.random.default_rng(noise_seq).standard_normal(horizon)

    def public_info(self) -> dict[str, Any]:
        return {"dimension": self.dimension, "action_space": "unit_cube", "metric": "linf"}

    def context(self, t: int) -> None:
        return None

    def _point(self, action) -> tuple[float, ...]:
        x = (float(action),) if np.ndim(action) == 0 else tuple(float(a) for a in action)
        if len(x) != self.dimension or not all(0.0 <= a <= 1.0 for a in x):
            raise ValueError(f"action must be a point of [0,1]^{self.dimension}, got {action!r}")
        return x

    def mu(self, x: tuple[float, ...]) -> float:
        """``mu(x)`` of one point, in scalar arithmetic (same formulas as :func:`mean_reward`)."""
        if self.function == "triangle":
            return 0.8 - 0.9 * abs(x[0] - 0.4)
        if self.function == "sine":
            return (2.0 / 3.0) * abs(math.sin(5.0 * math.pi * x[0] / 3.0))
        return 1.0 - 0.7 * math.hypot(x[0] - X1[0], x[1] - X1[1]) - 0.4 * math.hypot(x[0] - X2[0], x[1] - X2[1])

    def step(self, t: int, action) -> tuple[RewardFeedback, dict[str, float]]:
        mu = self.mu(self._point(action))
        return RewardFeedback(t, mu + float(self._noise[t - 1])), {
            "regret": self.mu_star - mu,
            "expected_reward": mu,
        }

    def summary(self) -> dict[str, float]:
        return {"mu_star": self.mu_star}
