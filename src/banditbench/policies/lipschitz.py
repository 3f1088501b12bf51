"""Lipschitz bandits with stochastic delayed feedback (seed 003: Liu, Kang & Lee).

* :class:`DelayedZooming` — Algorithm 1 (Sec. 4): zooming with the index
  ``I_t(x) = mu_t(x) + 2 r_t(x)``, the confidence radius
  ``r_t(x) = sigma sqrt((4 log T + 2 log(2/delta)) / (1 + v_t(x)))`` (Sec. 4; the
  ``sigma`` factor of App. D) on the *observed* count ``v_t(x)``, the activation
  rule with an exact covering oracle, and the lazy-update cache.
* :class:`DLPP` — Algorithm 2 (Sec. 5), Delayed Lipschitz Phased Pruning:
  round-robin uniform sampling of the active balls of phase ``m`` until each
  has ``v_m = sigma^2 (4 log T + 2 log(2/delta)) / r_m^2`` observations,
  elimination at ``4 r_m``, re-covering of the survivors at ``r_m / 2``.

With the ``none`` delay both are the paper's delay-free baselines (Sec. 7):
the same code, fed before every decision.  Feedback items carry the round they
belong to; each policy keeps a round -> arm (zooming) or round -> ball (DLPP)
map so that a reward is credited to what was played for it, never before it
arrives.

Choices where the paper is open (parameters):

* ``lazy_rule`` (zooming).  Alg. 1 line 5 prints the test ``v_t(x) + 1 <= 4 v_s(x)``
  (``s`` the last pull of ``x``; an arriving reward of ``x`` is used iff it holds,
  otherwise cached until ``x`` is pulled again), and the text says what it is for:
  "the confidence radius associated with arm x does not fall below half of its value
  from the last time the arm was pulled".  ``v_s(x)`` is recorded at the pull *before*
  the cache is flushed (line 16, then lines 17–18).

  - ``"radius"`` (default) is that guarantee, for the paper's radius
    ``r = c / sqrt(1 + v)``: ``r_t(x) >= r_s(x) / 2`` after the update, i.e.
    ``1 + v_t(x) + 1 <= 4 (1 + v_s(x))``.
  - ``"count"`` is line 5 as printed.  It is the same guarantee for a radius
    ``c / sqrt(v)`` and is degenerate at ``v_s(x) = 0`` (an arm's first pull): ``4 v_s = 0``
    forbids every update, so the first reward would be cached until the next pull, and
    with zero delay the algorithm would not be the classic zooming algorithm that Sec. 4
    says it reduces to (at small ``sigma`` a fresh arm whose index ``2 r_0`` is below the
    leaders' is then never pulled again).  There the guarantee of the text applies:
    with ``v_s(x) = 0`` a reward is used while ``1 + v_t(x) + 1 <= 4``.

  The printed test is the stricter one (``v + 1 <= 4 v_s`` implies the radius test), so
  both keep the radius at least half its value at the last pull; with zero delay (each
  reward arrives before the next decision, ``v_t = v_s``) both use every reward at once
  and reproduce classic zooming (tested at every ``sigma`` the configs use).
* ``activation`` (zooming).  Line 12 lets the oracle pick *any* uncovered arm;
  ``"uniform"`` draws it uniformly from the uncovered part of the region checked
  (see :func:`metric_space.find_uncovered`), ``"midpoint"`` takes the centre of the
  largest uncovered cell.  Ties of the index go to the earliest activated arm.
* ``late_feedback`` (DLPP).  Lemma 11 uses ``mu_hat_m(B)`` "calculated when B
  is removed from B_m^+" (exactly ``v_m`` observations): ``"freeze"`` (default)
  stops updating a ball at removal; ``"update"`` follows line 9 literally and
  keeps averaging rewards of phase-``m`` rounds until the phase ends.  Rewards of
  rounds played in an earlier phase are discarded either way: their balls'
  estimates were used up by that phase's elimination.
* DLPP samples the round-robin pass over ``B_m^+`` in the order the balls were
  created and skips a ball removed from ``B_m^+`` earlier in the same pass; the
  phase ends as soon as ``B_m^+`` is empty.

Speed: zooming keeps preallocated arrays (centres, boxes, counts, sums,
cache, index) grown by doubling; the index argmax is one vectorised pass.  The
covering invariant is maintained incrementally: radii only shrink when a
reward is used, and then only the old ball can lose coverage, so each shrink
queues the old ball's box and the exact oracle re-checks just those boxes
against the balls that meet them (a box met by many balls is split first).
Which uncovered point line 12 activates therefore depends on the queue (the
first uncovered queued box), which the algorithm leaves free.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Annotated, Any, Mapping, Sequence

import numpy as np

from ..api import Policy, Problem, register
from ..errors import POLICY_PARAMS, ConfigError, key_path
from ..feedback import RewardFeedback
from ..params import OneOf, Positive, PositiveInt, Probability
from .metric_space import ACTIVATION_RULES, ball_boxes, cover_box, grid_uncovered, split_box

LAZY_RULES = ("count", "radius")
#: a queued box met by more balls than this is split before the exact check (for speed; it
#: changes only which uncovered point gets activated, never whether one is)
MAX_BOXES_PER_CHECK = 32
LATE_FEEDBACK = ("freeze", "update")


def log_term(horizon: int, delta: float) -> float:
    """``4 log T + 2 log(2 / delta)`` (Sec. 4 radius, Alg. 2 ``v_m``)."""
    return 4.0 * math.log(horizon) + 2.0 * math.log(2.0 / delta)


def _shell_covered_1d(olo, ohi, nlo, nhi, lo, hi) -> bool:
    """Sufficient test, in one dimension, that the shell ``[olo, ohi] \\ (nlo, nhi)`` lies in the closed
    intervals ``[lo_i, hi_i]``: each of its two pieces ``[olo, nlo]``, ``[nhi, ohi]`` (if not empty) lies
    in one interval.

    After a small shrink the pieces are short and nearly always inside a neighbouring ball, so
    the exact check is rarely needed; the analogous face strips of a square seldom lie in one
    ball (measured: 3% of checks), so in two dimensions the exact check runs directly.
    """
    a, b, c, e = olo[0], nlo[0], nhi[0], ohi[0]
    lo, hi = lo[:, 0], hi[:, 0]
    return bool((b <= a or ((lo <= a) & (hi >= b)).any()) and (c >= e or ((lo <= c) & (hi >= e)).any()))


def _as_action(point: np.ndarray):
    return float(point[0]) if point.shape[0] == 1 else point.copy()


class _LipschitzPolicy(Policy):
    """What both algorithms share: the action space ``([0,1]^d, l_inf)`` and the confidence
    parameters ``delta`` and ``sigma`` (declared once for the family)."""

    feedback_kind = "reward"
    action_kind = "point"

    def __init__(self, problem: Problem, rng: np.random.Generator, *, delta: Probability = 0.01, sigma: Positive = 1.0):
        if not isinstance(delta, (int, float)) or not 0 < delta < 1:
            raise ConfigError(f"{key_path(POLICY_PARAMS, 'delta')}: must be in (0, 1), got {delta!r}")
        if not isinstance(sigma, (int, float)) or sigma <= 0:
            raise ConfigError(f"{key_path(POLICY_PARAMS, 'sigma')}: must be > 0, got {sigma!r}")
        if problem["metric"] != "linf" or problem["action_space"] != "unit_cube":
            raise ConfigError(f"policy: needs the action space ([0,1]^d, l_inf), the environment publishes "
                              f"{problem['action_space']!r} with metric {problem['metric']!r}")
        self.rng = rng
        self.d = int(problem["dimension"])
        self.horizon = problem.horizon
        self.sigma = float(sigma)
        self.log_term = log_term(self.horizon, delta)                # 4 log T + 2 log(2/delta)

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        return 8 * horizon                                            # the arm or ball of every round


@register("delayed_zooming")
class DelayedZooming(_LipschitzPolicy):
    """Delayed Zooming (seed 003, Algorithm 1) with the lazy-update cache; classic zooming without delay.

    Public state (read by tests, never by the environment): for active arm ``i < n_arms``,
    ``centers[i]``, ``v[i]`` (used rewards), ``cache_n[i]`` (cached rewards),
    ``v_at_pull[i]`` (``v_s``, recorded before the flush), ``v_after_pull[i]``
    (after the flush), ``radius[i]``, ``index[i]``; ``arm_of_round[s-1]``.
    """

    def __init__(self, problem: Problem, rng: np.random.Generator, *,
                 lazy_rule: Annotated[str, OneOf(LAZY_RULES)] = "radius",
                 activation: Annotated[str, OneOf(ACTIVATION_RULES)] = "uniform", initial_capacity: PositiveInt = 64,
                 **shared):
        super().__init__(problem, rng, **shared)
        if lazy_rule not in LAZY_RULES:
            raise ConfigError(f"{key_path(POLICY_PARAMS, 'lazy_rule')}: {lazy_rule!r} is not one of {list(LAZY_RULES)}")
        if activation not in ACTIVATION_RULES:
            raise ConfigError(f"{key_path(POLICY_PARAMS, 'activation')}: {activation!r} is not one of "
                              f"{list(ACTIVATION_RULES)}")
        if not isinstance(initial_capacity, int) or initial_capacity < 1:
            raise ConfigError(f"{key_path(POLICY_PARAMS, 'initial_capacity')}: must be an integer >= 1, "
                              f"got {initial_capacity!r}")
        self.scale = self.sigma * math.sqrt(self.log_term)               # r = scale / sqrt(1 + v)
        self.lazy_rule, self.activation = lazy_rule, activation
        self.n_arms = 0
        self._alloc(initial_capacity)
        self.arm_of_round = np.full(self.horizon, -1, dtype=np.int64)
        # boxes (lo, hi, inner) that may hold uncovered points; inner = the box of the shrunk
        # ball right after the shrink (only the part outside it can have lost coverage) or None;
        # before the first arm, the whole space
        self._pending: deque = deque([(np.zeros(self.d), np.ones(self.d), None)])
        self.activated_last_round = False

    # --- storage ----------------------------------------------------------
    def _alloc(self, cap: int) -> None:
        old = getattr(self, "centers", None)
        n = self.n_arms
        fields = {"centers": (cap, self.d), "lo": (cap, self.d), "hi": (cap, self.d), "sums": (cap,),
                  "cache_sum": (cap,), "radius": (cap,), "index": (cap,)}
        counts = ("v", "cache_n", "v_at_pull", "v_after_pull")
        for name, shape in fields.items():
            arr = np.zeros(shape)
            if old is not None:
                arr[:n] = getattr(self, name)[:n]
            setattr(self, name, arr)
        for name in counts:
            arr = np.zeros(cap, dtype=np.int64)
            if old is not None:
                arr[:n] = getattr(self, name)[:n]
            setattr(self, name, arr)

    def _refresh(self, i: int) -> None:
        """Recompute radius, index and box of arm ``i`` from its used rewards."""
        v = self.v[i]
        r = self.scale / math.sqrt(1.0 + v)
        self.radius[i] = r
        self.index[i] = (self.sums[i] / v if v else 0.0) + 2.0 * r
        c = self.centers[i]
        self.lo[i] = np.maximum(c - r, 0.0)
        self.hi[i] = np.minimum(c + r, 1.0)

    def _shrunk(self, i: int, old_lo: np.ndarray, old_hi: np.ndarray) -> None:
        """Arm ``i`` used new rewards: refresh it and queue its old ball for the covering check."""
        self._refresh(i)
        self._pending.append((old_lo, old_hi, (self.lo[i].copy(), self.hi[i].copy())))

    def _may_use(self, i: int) -> bool:
        """Lazy-update test of Alg. 1 line 5 for one more reward of arm ``i`` (see ``lazy_rule``)."""
        vs = self.v_at_pull[i]
        if self.lazy_rule == "count" and vs:
            return self.v[i] + 1 <= 4 * vs
        return self.v[i] + 2 <= 4 * (1 + vs)

    # --- feedback (Alg. 1 lines 4–10) ---------------------------------------
    def observe(self, t: int, arrived: Sequence[RewardFeedback]) -> None:
        boxes: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for fb in arrived:
            i = int(self.arm_of_round[fb.round - 1])
            if self._may_use(i):
                if i not in boxes:
                    boxes[i] = (self.lo[i].copy(), self.hi[i].copy())
                self.v[i] += 1
                self.sums[i] += fb.reward
            else:                                                   # lazy update: cache
                self.cache_n[i] += 1
                self.cache_sum[i] += fb.reward
        for i, (lo, hi) in boxes.items():
            self._shrunk(i, lo, hi)

    # --- covering oracle (line 11) ----------------------------------------
    def _uncovered_point(self) -> np.ndarray | None:
        """Exact line-11 test on the queued boxes; a point of the first uncovered one, or ``None``.

        A box met by more than :data:`MAX_BOXES_PER_CHECK` balls is first split in
        ``2^d`` halves (while it is larger than the smallest ball meeting it), so one
        exact check costs at most ``O(MAX_BOXES_PER_CHECK^3)`` in two dimensions."""
        n = self.n_arms
        lo, hi = self.lo[:n], self.hi[:n]
        pending = self._pending
        while pending:
            rlo, rhi, inner = entry = pending.popleft()
            meet = ((lo < rhi) & (hi > rlo)).all(axis=1)
            mlo, mhi = lo[meet], hi[meet]
            if ((mlo <= rlo) & (mhi >= rhi)).all(axis=1).any():
                continue                                            # one ball holds the whole box
            if inner is not None and self.d == 1 and _shell_covered_1d(rlo, rhi, *inner, mlo, mhi):
                continue                                            # cheap sufficient test
            if mlo.shape[0] > MAX_BOXES_PER_CHECK and (rhi - rlo).max() > (mhi - mlo).min():
                pending.extendleft((a, b, None) for a, b in split_box(rlo, rhi))
                continue
            point = grid_uncovered(rlo, rhi, np.maximum(mlo, rlo), np.minimum(mhi, rhi), self.rng, self.activation)
            if point is not None:
                pending.appendleft(entry)                           # re-check next round
                return point
        return None

    def _activate(self, point: np.ndarray) -> int:
        if self.n_arms == self.centers.shape[0]:
            self._alloc(2 * self.centers.shape[0])
        i = self.n_arms
        self.n_arms += 1
        self.centers[i] = point
        self._refresh(i)
        return i

    # --- decision (lines 11–19) ---------------------------------------------
    def act(self, t: int, context=None):
        point = self._uncovered_point()
        self.activated_last_round = point is not None
        if point is not None:
            i = self._activate(point)                               # activation
        else:
            i = int(np.argmax(self.index[: self.n_arms]))           # selection
        self.arm_of_round[t - 1] = i
        self.v_at_pull[i] = self.v[i]                               # line 16: record v_s
        if self.cache_n[i]:                                         # lines 17–18: flush the cache
            lo, hi = self.lo[i].copy(), self.hi[i].copy()
            self.v[i] += self.cache_n[i]
            self.sums[i] += self.cache_sum[i]
            self.cache_n[i] = 0
            self.cache_sum[i] = 0.0
            self._shrunk(i, lo, hi)
        self.v_after_pull[i] = self.v[i]
        return _as_action(self.centers[i])


@register("dlpp")
class DLPP(_LipschitzPolicy):
    """Delayed Lipschitz Phased Pruning (seed 003, Algorithm 2).

    Public state (for tests): ball ``b < n_balls`` has ``centers[b]``, ``lo[b]``,
    ``hi[b]``, ``phase_of[b]``, ``v[b]``, ``sums[b]``, ``mean[b]`` (the estimate
    used for elimination), ``in_plus[b]`` (member of ``B_m^+``); the current
    phase's balls are ``range(phase_start, n_balls)``; ``ball_of_round[s-1]``.
    """

    def __init__(self, problem: Problem, rng: np.random.Generator, *,
                 late_feedback: Annotated[str, OneOf(LATE_FEEDBACK)] = "freeze", **shared):
        super().__init__(problem, rng, **shared)
        if late_feedback not in LATE_FEEDBACK:
            raise ConfigError(f"{key_path(POLICY_PARAMS, 'late_feedback')}: {late_feedback!r} is not one of "
                              f"{list(LATE_FEEDBACK)}")
        self.freeze = late_feedback == "freeze"
        self.v_scale = self.sigma**2 * self.log_term                 # v_m = v_scale / r_m^2
        self.ball_of_round = np.full(self.horizon, -1, dtype=np.int64)
        self.n_balls = 0
        cap = 16
        self.centers, self.lo, self.hi = np.zeros((cap, self.d)), np.zeros((cap, self.d)), np.zeros((cap, self.d))
        self.phase_of = np.zeros(cap, dtype=np.int64)
        self.v = np.zeros(cap, dtype=np.int64)
        self.sums, self.mean = np.zeros(cap), np.zeros(cap)
        self.in_plus = np.zeros(cap, dtype=bool)
        self.eliminated: list[int] = []                              # balls removed by line 15, one entry per phase
        self.phase = 0
        self._start_phase(cover_box(np.zeros(self.d), np.ones(self.d), 0.5))   # C_1: a 1/2-covering

    # --- phases -----------------------------------------------------------
    def _start_phase(self, centers: np.ndarray) -> None:
        """Lines 2/16–17 then 4: balls ``B(x, r_m)`` for the new covering, ``v = mu_hat = 0``."""
        self.phase += 1
        self.r = 2.0 ** (-self.phase)
        self.v_target = self.v_scale / self.r**2
        k = centers.shape[0]
        need = self.n_balls + k
        if need > self.centers.shape[0]:
            cap = max(need, 2 * self.centers.shape[0])
            for name in ("centers", "lo", "hi", "phase_of", "v", "sums", "mean", "in_plus"):
                old = getattr(self, name)
                new = np.zeros((cap,) + old.shape[1:], dtype=old.dtype)
                new[: self.n_balls] = old[: self.n_balls]
                setattr(self, name, new)
        s = slice(self.n_balls, need)
        self.centers[s] = centers
        self.lo[s], self.hi[s] = ball_boxes(centers, np.full(k, self.r))
        self.phase_of[s] = self.phase
        self.v[s] = 0
        self.sums[s] = 0.0
        self.mean[s] = 0.0
        self.in_plus[s] = True
        self.n_plus = k                                             # |B_m^+|
        self.phase_start, self.n_balls = self.n_balls, need
        self._pass: deque[int] = deque()

    def _end_phase(self) -> None:
        """Line 15 (elimination at ``4 r_m``) and line 16 (``r_m / 2``-coverings of the survivors)."""
        s = slice(self.phase_start, self.n_balls)
        mean = self.mean[s]
        keep = mean.max() - mean < 4.0 * self.r
        self.eliminated.append(int((~keep).sum()))
        lo, hi = self.lo[s][keep], self.hi[s][keep]
        children = np.concatenate([cover_box(lo[j], hi[j], self.r / 2.0) for j in range(lo.shape[0])])
        self._start_phase(children)

    # --- feedback (lines 8–11) --------------------------------------------
    def observe(self, t: int, arrived: Sequence[RewardFeedback]) -> None:
        for fb in arrived:
            b = int(self.ball_of_round[fb.round - 1])
            if self.phase_of[b] != self.phase or (self.freeze and not self.in_plus[b]):
                continue                                            # earlier phase / frozen estimate
            self.v[b] += 1
            self.sums[b] += fb.reward
            self.mean[b] = self.sums[b] / self.v[b]
            if self.in_plus[b] and self.v[b] >= self.v_target:
                self.in_plus[b] = False                             # line 10
                self.n_plus -= 1
        if not self.n_plus:
            self._end_phase()

    # --- round-robin sampling (lines 5–7) ----------------------------------
    def act(self, t: int, context=None):
        while self._pass and not self.in_plus[self._pass[0]]:
            self._pass.popleft()
        if not self._pass:
            self._pass.extend((np.flatnonzero(self.in_plus[self.phase_start: self.n_balls]) + self.phase_start).tolist())
        b = self._pass.popleft()
        self.ball_of_round[t - 1] = b
        lo = self.lo[b]
        return _as_action(lo + (self.hi[b] - lo) * self.rng.random(self.d))      # uniform on the ball
