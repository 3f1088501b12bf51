"""Lipschitz bandits with stochastic delayed feedback (seed 003: Liu, Kang & Lee), one package.

* :mod:`.zooming` — Delayed Zooming (Algorithm 1), :mod:`.dlpp` — DLPP (Algorithm 2): the reference
  classes, round by round; :mod:`.base` — what both share (the family's parameters, ``log_term``);
* :mod:`.compiled` — both whole runs (round loop, environment step, delay queue) compiled with numba,
  the same decisions bit for bit;
* :mod:`.metric_space` — the action space ``([0,1]^d, l_inf)``: balls as boxes, exact covering oracles.
"""

from .base import log_term
from .dlpp import DLPP, LATE_FEEDBACK
from .zooming import LAZY_RULES, MAX_BOXES_PER_CHECK, DelayedZooming

__all__ = ["DLPP", "LATE_FEEDBACK", "LAZY_RULES", "MAX_BOXES_PER_CHECK", "DelayedZooming", "log_term"]
