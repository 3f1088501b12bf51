"""What Delayed Zooming and DLPP share (seed 003: Liu, Kang & Lee): the action space ``([0,1]^d, l_inf)``,
the confidence parameters ``delta`` and ``sigma``, the ``4 log T + 2 log(2/delta)`` of the radius (Sec. 4) and of
``v_m`` (Alg. 2), and when a run can be played compiled (:mod:`.compiled`).

With the ``none`` delay both algorithms are the paper's delay-free baselines (Sec. 7): the same code, fed
before every decision.  Feedback items carry the round they belong to; each policy keeps a round -> arm
(zooming) or round -> ball (DLPP) map so that a reward is credited to what was played for it, never before
it arrives.
"""

from __future__ import annotations

import math
import sys
from typing import Annotated, Any, Mapping

import numpy as np

from ...api import Policy, Problem
from ...errors import ConfigError
from ...params import Doc, Positive, Probability


def log_term(horizon: int, delta: float) -> float:
    """``4 log T + 2 log(2 / delta)`` (Sec. 4 radius, Alg. 2 ``v_m``)."""
    return 4.0 * math.log(horizon) + 2.0 * math.log(2.0 / delta)


class _LipschitzPolicy(Policy):
    """What both algorithms share: the action space ``([0,1]^d, l_inf)`` and the confidence
    parameters ``delta`` and ``sigma`` (declared once for the family)."""

    feedback_kind = "reward"
    action_kind = "point"

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        delta: Annotated[
            Probability,
            Doc(
                "confidence parameter of the radius ``r_t(x) = sigma sqrt((4 log T + 2 log(2/delta)) / (1 + v_t(x)))`` "
                "(Sec. 4) and of DLPP's ``v_m`` (Sec. 5)."
            ),
        ] = 0.01,
        sigma: Annotated[
            Positive, Doc("sub-Gaussian scale of the reward noise, the ``sigma`` factor of the radius (App. D).")
        ] = 1.0,
    ):
        if problem["metric"] != "linf" or problem["action_space"] != "unit_cube":
            raise ConfigError(
                f"policy: needs the action space ([0,1]^d, l_inf), the environment publishes "
                f"{problem['action_space']!r} with metric {problem['metric']!r}"
            )
        self.rng = rng
        self.d = int(problem["dimension"])
        self.horizon = problem.horizon
        self.sigma = float(sigma)
        self.log_term = log_term(self.horizon, delta)  # 4 log T + 2 log(2/delta)

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        # the arm or ball of every round, and in the compiled run its copy, mu(x_t), the reward and the
        # arrival table (two int64 arrays)
        return 6 * 8 * horizon

    def _compiled_step(self, env, cls: type, fresh: bool, horizon: int) -> tuple[int, np.ndarray] | None:
        """What :mod:`.compiled` needs of ``env`` (:meth:`LipschitzEnv.compiled_step`) when it can
        play this run: the policy is exactly ``cls`` (a subclass may change any step) with nothing
        played yet (``fresh``) and its methods not replaced, the environment exactly
        :class:`LipschitzEnv`.  Two dimensions need CPython 3.11, whose ``math.hypot`` the compiled
        step reproduces."""
        from ...envs.lipschitz import LipschitzEnv

        if (
            type(self) is not cls
            or "act" in vars(self)
            or "observe" in vars(self)
            or not fresh
            or type(env) is not LipschitzEnv
            or env.dimension != self.d
            or horizon > self.horizon
            or (self.d == 2 and sys.version_info[:2] != (3, 11))
        ):
            return None
        return env.compiled_step()
