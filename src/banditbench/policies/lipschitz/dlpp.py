r"""DLPP, Delayed Lipschitz Phased Pruning (seed 003: Liu, Kang & Lee, Algorithm 2, Sec. 5): round-robin
uniform sampling of the active balls of phase ``m`` until each has
:math:`v_m = \sigma^2 (4\log T + 2\log(2/\delta)) / r_m^2` observations, elimination at :math:`4 r_m`,
re-covering of the survivors at :math:`r_m / 2`.  With the ``none`` delay it is the paper's delay-free
baseline (Sec. 7).

Choices where the paper is open:

* ``late_feedback`` (a parameter).  Lemma 11 uses ``mu_hat_m(B)`` "calculated when B
  is removed from B_m^+" (exactly ``v_m`` observations): ``"freeze"`` (default)
  stops updating a ball at removal; ``"update"`` follows line 9 literally and
  keeps averaging rewards of phase-``m`` rounds until the phase ends.  Rewards of
  rounds played in an earlier phase are discarded either way: their balls'
  estimates were used up by that phase's elimination.
* DLPP samples the round-robin pass over ``B_m^+`` in the order the balls were
  created and skips a ball removed from ``B_m^+`` earlier in the same pass; the
  phase ends as soon as ``B_m^+`` is empty.

Speed: :func:`~banditbench.simulation.runner.simulate` plays whole runs in compiled code
(:func:`.compiled.dlpp_run`, :meth:`DLPP.run_compiled`), which makes the decisions of the class below bit
for bit; the class is the round-by-round form (subclasses, step-by-step callers).
"""

from __future__ import annotations

from collections import deque
from typing import Annotated, Sequence

import numpy as np

from ...api import Compiled, Problem, register
from ...feedback import RewardFeedback
from ...params import Doc, OneOf
from .base import _LipschitzPolicy
from .metric_space import ball_boxes, cover_box

LATE_FEEDBACK = ("freeze", "update")


@register("dlpp")
class DLPP(_LipschitzPolicy):
    """Delayed Lipschitz Phased Pruning (seed 003, Algorithm 2).

    Public state (for tests): ball ``b < n_balls`` has ``centers[b]``, ``lo[b]``,
    ``hi[b]``, ``phase_of[b]``, ``v[b]``, ``sums[b]``, ``mean[b]`` (the estimate
    used for elimination), ``in_plus[b]`` (member of ``B_m^+``); the current
    phase's balls are ``range(phase_start, n_balls)``; ``ball_of_round[s-1]``.
    """

    engines = {"compiled": Compiled()}

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        late_feedback: Annotated[
            str,
            OneOf(LATE_FEEDBACK),
            Doc(
                "rewards of a ball's phase that arrive after its removal from ``B_m^+``: ``freeze`` ignores them "
                "(Lemma 11's ``mu_hat_m(B)``), ``update`` keeps averaging them until the phase ends (line 9)."
            ),
        ] = "freeze",
        **shared,
    ):
        super().__init__(problem, rng, **shared)
        self.freeze = late_feedback == "freeze"
        self.v_scale = self.sigma**2 * self.log_term  # v_m = v_scale / r_m^2
        self.ball_of_round = np.full(self.horizon, -1, dtype=np.int64)
        self.n_balls = 0
        cap = 16
        self.centers, self.lo, self.hi = np.zeros((cap, self.d)), np.zeros((cap, self.d)), np.zeros((cap, self.d))
        self.phase_of = np.zeros(cap, dtype=np.int64)
        self.v = np.zeros(cap, dtype=np.int64)
        self.sums, self.mean = np.zeros(cap), np.zeros(cap)
        self.in_plus = np.zeros(cap, dtype=bool)
        self.eliminated: list[int] = []  # balls removed by line 15, one entry per phase
        self._box: list[tuple[tuple[float, ...], tuple[float, ...]]] = []  # per ball (lo, hi), for act
        self.phase = 0
        self._start_phase(cover_box(np.zeros(self.d), np.ones(self.d), 0.5))  # C_1: a 1/2-covering

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
        self.lo[s], self.hi[s] = lo, hi = ball_boxes(centers, np.full(k, self.r))
        self._box.extend(zip(map(tuple, lo.tolist()), map(tuple, hi.tolist())))
        self.phase_of[s] = self.phase
        self.v[s] = 0
        self.sums[s] = 0.0
        self.mean[s] = 0.0
        self.in_plus[s] = True
        self.n_plus = k  # |B_m^+|
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
                continue  # earlier phase / frozen estimate
            self.v[b] += 1
            self.sums[b] += fb.reward
            self.mean[b] = self.sums[b] / self.v[b]
            if self.in_plus[b] and self.v[b] >= self.v_target:
                self.in_plus[b] = False  # line 10
                self.n_plus -= 1
        if not self.n_plus:
            self._end_phase()

    def run_compiled(self, env, arrival: np.ndarray, horizon: int) -> bool:
        """The whole run in :func:`.compiled.dlpp_run` (the same decisions and draws)."""
        step = self._compiled_step(env, DLPP, self.ball_of_round[0] == -1 and self.phase_start == 0, horizon)
        if step is None:
            return False
        from .compiled import arrival_table, dlpp_run

        n, self.phase, self.phase_start, self.n_plus, balls, played, mu, eliminated, rest = dlpp_run(
            horizon,
            self.d,
            self.v_scale,
            self.freeze,
            self.rng,
            *step,
            *arrival_table(arrival, horizon),
            self.centers[: self.n_balls].copy(),
            self.phase,
        )
        self.centers, self.lo, self.hi, self.phase_of, self.v, self.sums, self.mean, self.in_plus = balls
        self.n_balls = n
        self.r = 2.0 ** (-self.phase)
        self.v_target = self.v_scale / self.r**2
        self.eliminated = eliminated.tolist()
        self._box = list(zip(map(tuple, self.lo[:n].tolist()), map(tuple, self.hi[:n].tolist())))
        self._pass = deque(rest.tolist())
        self.ball_of_round[:horizon] = played
        env.record_means(mu)
        return True

    # --- round-robin sampling (lines 5–7) ----------------------------------
    def act(self, t: int, context=None):
        while self._pass and not self.in_plus[self._pass[0]]:
            self._pass.popleft()
        if not self._pass:
            self._pass.extend(
                (np.flatnonzero(self.in_plus[self.phase_start : self.n_balls]) + self.phase_start).tolist()
            )
        b = self._pass.popleft()
        self.ball_of_round[t - 1] = b
        lo, hi = self._box[b]  # uniform on the ball:
        if self.d == 1:
            return lo[0] + (hi[0] - lo[0]) * self.rng.random()  # a float
        return tuple([a + (c - a) * u for a, c, u in zip(lo, hi, self.rng.random(self.d).tolist())])
