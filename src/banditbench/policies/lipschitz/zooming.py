r"""Delayed Zooming (seed 003: Liu, Kang & Lee, Algorithm 1, Sec. 4): zooming with the index
:math:`I_t(x) = \mu_t(x) + 2 r_t(x)`, the confidence radius
:math:`r_t(x) = \sigma \sqrt{(4\log T + 2\log(2/\delta)) / (1 + v_t(x))}` (Sec. 4; the
:math:`\sigma` factor of App. D) on the *observed* count :math:`v_t(x)`, the activation
rule with an exact covering oracle, and the lazy-update cache.  With the ``none`` delay it is
the paper's delay-free baseline (Sec. 7), classic zooming.

Choices where the paper is open (parameters):

* ``lazy_rule``.  Alg. 1 line 5 prints the test :math:`v_t(x) + 1 \le 4 v_s(x)`
  (``s`` the last pull of ``x``; an arriving reward of ``x`` is used iff it holds,
  otherwise cached until ``x`` is pulled again), and the text says what it is for:
  "the confidence radius associated with arm x does not fall below half of its value
  from the last time the arm was pulled".  ``v_s(x)`` is recorded at the pull *before*
  the cache is flushed (line 16, then lines 17–18).

  - ``"radius"`` (default) is that guarantee, for the paper's radius
    :math:`r = c / \sqrt{1 + v}`: :math:`r_t(x) \ge r_s(x) / 2` after the update, i.e.
    :math:`1 + v_t(x) + 1 \le 4 (1 + v_s(x))`.
  - ``"count"`` is line 5 as printed.  It is the same guarantee for a radius
    :math:`c / \sqrt{v}` and is degenerate at :math:`v_s(x) = 0` (an arm's first pull): :math:`4 v_s = 0`
    forbids every update, so the first reward would be cached until the next pull, and
    with zero delay the algorithm would not be the classic zooming algorithm that Sec. 4
    says it reduces to (at small ``sigma`` a fresh arm whose index ``2 r_0`` is below the
    leaders' is then never pulled again).  There the guarantee of the text applies:
    with ``v_s(x) = 0`` a reward is used while ``1 + v_t(x) + 1 <= 4``.

  The printed test is the stricter one (``v + 1 <= 4 v_s`` implies the radius test), so
  both keep the radius at least half its value at the last pull; with zero delay (each
  reward arrives before the next decision, ``v_t = v_s``) both use every reward at once
  and reproduce classic zooming (tested at every ``sigma`` the configs use).
* ``activation``.  Line 12 lets the oracle pick *any* uncovered arm;
  ``"uniform"`` draws it uniformly from the uncovered part of the region checked
  (see :func:`.metric_space.find_uncovered`), ``"midpoint"`` takes the centre of the
  largest uncovered cell.  Ties of the index go to the earliest activated arm.

Speed: :func:`~banditbench.simulation.runner.simulate` plays whole runs in compiled code
(:func:`.compiled.zooming_run`, :meth:`DelayedZooming.run_compiled`), which
makes the decisions of the class below bit for bit; the class is the round-by-round form
(subclasses, step-by-step callers).  There a round works on Python numbers (per-arm lists and
tuples): with the few dozen to few hundred arms of the paper's settings, numpy's per-call overhead on tiny arrays costs
more than the arithmetic; only the index argmax and the searches over all arms are
vectorised.  The covering invariant is maintained incrementally: radii only shrink when a
reward is used, and then only the old ball can lose coverage, so each shrink queues the
old ball's box and only those boxes are re-checked.  The shell a shrink leaves (old box
minus new box) is tested face by face against the balls that span the face (a sufficient
test, in d <= 2), starting from the balls that covered the same face of the arm's
previous shell; what that cannot settle goes to the exact oracle (a box met by many balls
is split first).  The sufficient test only answers "covered" for covered boxes and draws
no random numbers, so activations and their points are those of the exact oracle alone.
Which uncovered point line 12 activates depends on the queue (the first uncovered queued
box), which the algorithm leaves free.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Annotated, Sequence

import numpy as np

from ...api import Compiled, Problem, register
from ...feedback import RewardFeedback
from ...params import Doc, OneOf, PositiveInt
from .base import _LipschitzPolicy
from .metric_space import ACTIVATION_RULES, grid_uncovered, split_box

LAZY_RULES = ("count", "radius")
#: a queued box met by more balls than this is split before the exact check (for speed; it
#: changes only which uncovered point gets activated, never whether one is)
MAX_BOXES_PER_CHECK = 32


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


@register("delayed_zooming")
class DelayedZooming(_LipschitzPolicy):
    """Delayed Zooming (seed 003, Algorithm 1) with the lazy-update cache; classic zooming without delay.

    Public state (read by tests, never by the environment): for active arm ``i < n_arms``,
    ``centers[i]``, ``lo[i]``, ``hi[i]`` (its ball's box), ``v[i]`` (used rewards), ``sums[i]``,
    ``radius[i]``, ``index[i]``, ``cache_n[i]``, ``cache_sum[i]`` (cached rewards),
    ``v_at_pull[i]`` (``v_s``, recorded before the flush), ``v_after_pull[i]`` (after the
    flush); ``arm_of_round[s-1]``.  The rounds work on Python numbers (numpy item access
    costs more than the arithmetic): per arm ``_c``, ``_lo``, ``_hi`` (tuples), ``_v``,
    ``_sums``, ``_radius``; the arrays ``centers``, ``lo``, ``hi``, ``v``, ``sums`` and
    ``radius`` are written from them when read (:meth:`_synced`).
    """

    engines = {"compiled": Compiled()}

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        lazy_rule: Annotated[
            str,
            OneOf(LAZY_RULES),
            Doc(
                "when an arriving reward is used rather than cached (Alg. 1 line 5): ``radius`` keeps "
                "``r_t(x) >= r_s(x) / 2`` (the text's guarantee), ``count`` is ``v_t(x) + 1 <= 4 v_s(x)`` as "
                "printed (module docstring)."
            ),
        ] = "radius",
        activation: Annotated[
            str,
            OneOf(ACTIVATION_RULES),
            Doc(
                "which uncovered arm the covering oracle activates (Alg. 1 line 12): ``uniform`` draws one from the "
                "uncovered region checked, ``midpoint`` takes the centre of the largest uncovered cell."
            ),
        ] = "uniform",
        initial_capacity: Annotated[
            PositiveInt, Doc("arms the arrays hold before they first grow (memory only; no effect on the decisions).")
        ] = 64,
        **shared,
    ):
        super().__init__(problem, rng, **shared)
        self.scale = self.sigma * math.sqrt(self.log_term)  # r = scale / sqrt(1 + v)
        self.lazy_rule, self.activation = lazy_rule, activation
        self.n_arms = 0
        self._c: list[tuple[float, ...]] = []
        self._lo: list[tuple[float, ...]] = []
        self._hi: list[tuple[float, ...]] = []
        self._v: list[int] = []
        self._sums: list[float] = []
        self._radius: list[float] = []
        self._version: list[int] = []  # times arm i's box was set
        self._unsynced: set[int] = set()  # arms whose array rows are old
        self._arrays: dict[str, np.ndarray] = {}
        self._alloc(initial_capacity)
        self.arm_of_round = np.full(self.horizon, -1, dtype=np.int64)
        # boxes that may hold uncovered points: (lo, hi, inner, arm, version); inner = the box of
        # the shrunk ball `arm` right after the shrink (only the shell outside it can have lost
        # coverage; version = _version[arm] then) or None; before the first arm, the whole space
        self._pending: deque = deque([((0.0,) * self.d, (1.0,) * self.d, None, -1, 0)])
        # per arm: what covered each face of its last shell, and a summary (see _shell_covered)
        self._face_records: list[list[tuple | None]] = []
        self._summary: list[tuple | None] = []
        self.activated_last_round = False

    # --- storage ----------------------------------------------------------
    _SYNCED = {"centers": "_c", "lo": "_lo", "hi": "_hi", "v": "_v", "sums": "_sums", "radius": "_radius"}

    def _alloc(self, cap: int) -> None:
        """Arrays for ``cap`` arms (the first ``n_arms`` rows kept); doubled when full."""
        n = self.n_arms
        floats = {
            "centers": (cap, self.d),
            "lo": (cap, self.d),
            "hi": (cap, self.d),
            "sums": (cap,),
            "radius": (cap,),
            "cache_sum": (cap,),
            "index": (cap,),
        }
        counts = ("v", "cache_n", "v_at_pull", "v_after_pull")
        shapes = {**floats, **{name: (cap,) for name in counts}}
        for name, shape in shapes.items():
            arr = np.zeros(shape, dtype=np.int64 if name in counts else float)
            if n:
                arr[:n] = self._synced(name)[:n] if name in self._SYNCED else getattr(self, name)[:n]
            if name in self._SYNCED:
                self._arrays[name] = arr
            else:
                setattr(self, name, arr)

    def _synced(self, name: str) -> np.ndarray:
        """The array ``name`` of :data:`_SYNCED`, its rows first brought up to date."""
        if self._unsynced:
            arrays = self._arrays
            for field, source in self._SYNCED.items():
                values = getattr(self, source)
                for i in self._unsynced:
                    arrays[field][i] = values[i]
            self._unsynced.clear()
        return self._arrays[name]

    centers = property(lambda self: self._synced("centers"))
    lo = property(lambda self: self._synced("lo"))
    hi = property(lambda self: self._synced("hi"))
    v = property(lambda self: self._synced("v"))
    sums = property(lambda self: self._synced("sums"))
    radius = property(lambda self: self._synced("radius"))

    def _refresh(self, i: int) -> None:
        """Recompute radius, index and box of arm ``i`` from its used rewards."""
        v = self._v[i]
        r = self.scale / math.sqrt(1.0 + v)
        self._radius[i] = r
        self.index[i] = (self._sums[i] / v if v else 0.0) + 2.0 * r
        c = self._c[i]
        if self.d == 1:
            lo, hi = (max(c[0] - r, 0.0),), (min(c[0] + r, 1.0),)
        elif self.d == 2:
            x, y = c
            lo, hi = (max(x - r, 0.0), max(y - r, 0.0)), (min(x + r, 1.0), min(y + r, 1.0))
        else:
            lo, hi = tuple([max(x - r, 0.0) for x in c]), tuple([min(x + r, 1.0) for x in c])
        self._lo[i], self._hi[i] = lo, hi
        self._version[i] += 1
        self._unsynced.add(i)

    def _use(self, i: int, n: int, total: float) -> None:
        """Add ``n`` rewards summing to ``total`` to the used statistics of arm ``i``."""
        self._v[i] += n
        self._sums[i] += total

    def _shrunk(self, i: int, old_lo: tuple, old_hi: tuple) -> None:
        """Arm ``i`` used new rewards: refresh it and queue its old ball for the covering check."""
        self._refresh(i)
        self._pending.append((old_lo, old_hi, (self._lo[i], self._hi[i]), i, self._version[i]))

    def _may_use(self, i: int) -> bool:
        """Lazy-update test of Alg. 1 line 5 for one more reward of arm ``i`` (see ``lazy_rule``)."""
        vs = self.v_at_pull[i]
        if self.lazy_rule == "count" and vs:
            return self._v[i] + 1 <= 4 * vs
        return self._v[i] + 2 <= 4 * (1 + vs)

    # --- feedback (Alg. 1 lines 4–10) ---------------------------------------
    def observe(self, t: int, arrived: Sequence[RewardFeedback]) -> None:
        boxes: dict[int, tuple[tuple, tuple]] = {}
        v, sums = self._v, self._sums
        for fb in arrived:
            i = int(self.arm_of_round[fb.round - 1])
            if self._may_use(i):
                if i not in boxes:
                    boxes[i] = (self._lo[i], self._hi[i])
                v[i] += 1
                sums[i] += fb.reward
            else:  # lazy update: cache
                self.cache_n[i] += 1
                self.cache_sum[i] += fb.reward
        for i, (lo, hi) in boxes.items():
            self._shrunk(i, lo, hi)

    # --- covering oracle (line 11) ----------------------------------------
    def _uncovered_point(self) -> np.ndarray | None:
        """Line 11 on the queued boxes: a point of the first uncovered one, or ``None``.

        A shell whose faces the cheap test of :meth:`_shell_covered` settles needs nothing
        more; every other box gets the exact test (:meth:`_check_exactly`).  The cheap test
        only ever answers "covered" for a box that is covered, so the activations (and the
        random draws behind them) are those of the exact test alone."""
        pending = self._pending
        while pending:
            entry = pending.popleft()
            if entry[2] is not None and self._shell_covered(*entry):
                continue
            point = self._check_exactly(entry)
            if point is not None:
                return point
        return None

    def _shell_covered(self, rlo: tuple, rhi: tuple, inner: tuple, arm: int, version: int) -> bool:
        """Sufficient test that the queued box ``[rlo, rhi]`` of a shrink of ``arm`` is covered: the
        arm's ball is still ``inner`` (no later shrink) and every face of the shell (``[rlo, rhi]``
        minus ``inner``) is covered by other balls.  Dimensions 1 and 2; ``False`` otherwise.

        The shells of one arm move inwards, so what covered a face of the last one often covers
        the same face of this one: each face keeps a record of the balls that covered it
        (:meth:`_cover_face`), and the arm a summary of all its records (limits on the inner
        box and the balls relied on).  Unchanged balls and an inner box within the limits
        settle the shell at once; otherwise each face is tested with its record's balls, then
        with all balls meeting the box, then exactly (:meth:`_face_exactly_covered`)."""
        if self._version[arm] != version or self.d > 2:
            return False
        nlo, nhi = inner
        if self._summary_settles(arm, nlo, nhi):
            return True
        records = self._face_records[arm]
        candidates = None
        limits, relied, relied_versions = [], [], []
        for k, (axis, p, q, span) in enumerate(self._faces(rlo, rhi, nlo, nhi)):
            low = k % 2 == 0  # the face below the inner box on `axis`
            if q <= p:  # empty (clipped at the border): it stays
                if limits is not None:  # empty while the inner box keeps this side
                    limits.append(q if low else p)
                continue
            record = self._kept_record(records[k], axis, p, q, span)
            if record is None:
                if candidates is None:
                    n = self.n_arms
                    lo, hi = self.lo[:n], self.hi[:n]
                    meet = np.flatnonzero(((lo < rhi) & (hi > rlo)).all(axis=1)).tolist()
                    candidates = [(j, self._lo[j], self._hi[j]) for j in meet if j != arm]
                record = self._cover_face(axis, p, q, span, candidates)
            records[k] = record
            if record is None:
                if not self._face_exactly_covered(axis, p, q, span, candidates):
                    return False
                limits = None  # covered, but by no record
            elif limits is not None:
                limits.append(record[3] if low else record[2])
                relied += record[0]
                relied_versions += record[1]
        self._summary[arm] = None if limits is None else (tuple(limits), tuple(relied), tuple(relied_versions))
        return True

    def _summary_settles(self, arm: int, nlo: tuple, nhi: tuple) -> bool:
        """Does the arm's summary settle the shell of inner box ``[nlo, nhi]``: the inner box within its limits
        and every ball it relied on unchanged?"""
        summary = self._summary[arm]
        if summary is None:
            return False
        limits, balls, vers = summary
        if not (
            nlo[0] <= limits[0]
            and nhi[0] >= limits[1]
            and (self.d == 1 or (nlo[1] <= limits[2] and nhi[1] >= limits[3]))
        ):
            return False
        versions = self._version
        for j, k in zip(balls, vers):
            if versions[j] != k:
                return False
        return True

    def _kept_record(self, record: tuple | None, axis: int, p: float, q: float, span) -> tuple | None:
        """A face's record (:meth:`_cover_face`) if its balls still cover the face ``[p, q]`` (chained again if
        one of them shrank), else ``None``."""
        if record is None:
            return None
        balls, vers, tlo, thi, slo, shi = record
        if not (tlo <= p and q <= thi and (span is None or (slo <= span[0] and span[1] <= shi))):
            return None  # the face left the part they covered
        versions = self._version
        for j, v in zip(balls, vers):
            if versions[j] != v:  # one shrank: chain them again
                return self._rechain(balls, axis, p, q, span)
        return record

    def _faces(self, rlo: tuple, rhi: tuple, nlo: tuple, nhi: tuple) -> list[tuple]:
        """The faces ``(axis, p, q, span)`` of the shell ``[rlo, rhi]`` minus ``[nlo, nhi]``: ``[p, q]`` across
        ``axis`` (below, then above the inner box), times ``span`` on the other axis (d = 2: the
        box's extent for axis 0, the inner box's for axis 1, so that the faces tile the shell)."""
        if self.d == 1:
            return [(0, rlo[0], nlo[0], None), (0, nhi[0], rhi[0], None)]
        across_0, across_1 = (rlo[1], rhi[1]), (nlo[0], nhi[0])
        return [
            (0, rlo[0], nlo[0], across_0),
            (0, nhi[0], rhi[0], across_0),
            (1, rlo[1], nlo[1], across_1),
            (1, nhi[1], rhi[1], across_1),
        ]

    def _cover_face(self, axis: int, p: float, q: float, span, balls: list) -> tuple | None:
        """Balls among ``balls`` (``(j, lo, hi)``) that span ``[p, q]`` across ``axis`` and together cover
        the face: in one dimension one of them; in two, a chain of them (in the order of their
        lower ends) over ``span`` along the other axis (closed boxes).  A sufficient test.  The
        record ``(balls, their versions, tlo, thi, slo, shi)``: the chain covers the face
        ``[p', q'] x [slo, shi]`` for any ``tlo <= p' <= q' <= thi``; ``None`` if there is none."""
        if span is None:
            for j, lo, hi in balls:
                if lo[axis] <= p and hi[axis] >= q:
                    return (j,), (self._version[j],), lo[axis], hi[axis], 0.0, 0.0
            return None
        other = 1 - axis
        u, w = span
        spanning = sorted(
            (lo[other], hi[other], j, lo[axis], hi[axis])
            for j, lo, hi in balls
            if lo[axis] <= p and hi[axis] >= q and lo[other] <= w and hi[other] >= u
        )
        reach, used, tlo, thi = u, [], -math.inf, math.inf
        for blo, bhi, j, alo, ahi in spanning:
            if blo > reach:
                return None  # a gap along the face
            if bhi > reach:
                used.append(j)
                reach, tlo, thi = bhi, max(tlo, alo), min(thi, ahi)
                if reach >= w:
                    return tuple(used), tuple([self._version[j] for j in used]), tlo, thi, u, w
        return None

    def _rechain(self, balls: tuple, axis: int, p: float, q: float, span) -> tuple | None:
        """:meth:`_cover_face` for the balls of a record, some of which shrank: do they, in the same
        order, still span ``[p, q]`` and chain over ``span``?  The new record, or ``None``."""
        all_lo, all_hi = self._lo, self._hi
        tlo, thi = -math.inf, math.inf
        other = 1 - axis
        reach, w = (0.0, 0.0) if span is None else span
        for j in balls:
            lo, hi = all_lo[j], all_hi[j]
            if lo[axis] > p or hi[axis] < q:
                return None
            if span is not None:
                if lo[other] > reach:
                    return None
                reach = max(reach, hi[other])
            tlo, thi = max(tlo, lo[axis]), min(thi, hi[axis])
        if reach < w:
            return None
        return balls, tuple([self._version[j] for j in balls]), tlo, thi, *((0.0, 0.0) if span is None else span)

    def _face_exactly_covered(self, axis: int, p: float, q: float, span, balls: list) -> bool:
        """Exact test that the face lies in the union of ``balls``: cut ``[p, q]`` at the balls' sides
        inside it; a ball meeting an open piece then spans it, so the face is covered iff every
        piece is covered by the balls spanning it (:meth:`_cover_face`).  Draws nothing."""
        if span is not None:  # only balls meeting the face matter
            other, (u, w) = 1 - axis, span
            balls = [b for b in balls if b[1][other] < w and b[2][other] > u]
        balls = [b for b in balls if b[1][axis] < q and b[2][axis] > p]
        cuts = sorted({e for _, lo, hi in balls for e in (lo[axis], hi[axis]) if p < e < q})
        edges = [p, *cuts, q]
        return all(self._cover_face(axis, a, b, span, balls) is not None for a, b in zip(edges, edges[1:]))

    def _check_exactly(self, entry: tuple) -> np.ndarray | None:
        """The exact line-11 test of one queued box: ``None`` if covered, else a point of it (the box is
        queued again, to be re-checked next round).

        A box met by more than :data:`MAX_BOXES_PER_CHECK` balls is first split in ``2^d``
        halves (while it is larger than the smallest ball meeting it), queued first, so one
        exact check costs at most ``O(MAX_BOXES_PER_CHECK^3)`` in two dimensions."""
        rlo, rhi, inner = np.asarray(entry[0], dtype=float), np.asarray(entry[1], dtype=float), entry[2]
        n = self.n_arms
        lo, hi = self.lo[:n], self.hi[:n]
        meet = ((lo < rhi) & (hi > rlo)).all(axis=1)
        mlo, mhi = lo[meet], hi[meet]
        if ((mlo <= rlo) & (mhi >= rhi)).all(axis=1).any():
            return None  # one ball holds the whole box
        if inner is not None and self.d == 1 and _shell_covered_1d(rlo, rhi, *inner, mlo, mhi):
            return None  # cheap sufficient test
        if mlo.shape[0] > MAX_BOXES_PER_CHECK and (rhi - rlo).max() > (mhi - mlo).min():
            self._pending.extendleft((a, b, None, -1, 0) for a, b in split_box(rlo, rhi))
            return None
        point = grid_uncovered(rlo, rhi, np.maximum(mlo, rlo), np.minimum(mhi, rhi), self.rng, self.activation)
        if point is not None:
            self._pending.appendleft(entry)  # re-check next round
        return point

    def _activate(self, point: np.ndarray) -> int:
        if self.n_arms == self.index.shape[0]:
            self._alloc(2 * self.index.shape[0])
        i = self.n_arms
        self.n_arms += 1
        self._c.append(tuple(point.tolist()))
        self._lo.append(())
        self._hi.append(())
        self._v.append(0)
        self._sums.append(0.0)
        self._radius.append(0.0)
        self._version.append(0)
        self._face_records.append([None] * (2 * self.d))
        self._summary.append(None)
        self._refresh(i)
        return i

    def run_compiled(self, env, arrival: np.ndarray, horizon: int) -> bool:
        """The whole run in :func:`.compiled.zooming_run` (the same decisions and draws); the
        state is then as after the Python loop, except that the covering check's caches (face
        records and summaries) start empty."""
        step = self._compiled_step(env, DelayedZooming, self.n_arms == 0 and self.arm_of_round[0] == -1, horizon)
        if step is None:
            return False
        from .compiled import arrival_table, zooming_run

        (
            n,
            c,
            lo,
            hi,
            v,
            sums,
            radius,
            self.index,
            self.cache_n,
            self.cache_sum,
            self.v_at_pull,
            self.v_after_pull,
            version,
            played,
            mu,
            queue,
            activated,
        ) = zooming_run(
            horizon,
            self.d,
            self.scale,
            self.lazy_rule == "count",
            self.activation == "uniform",
            self.rng,
            *step,
            *arrival_table(arrival, horizon),
            self.index.shape[0],
        )
        self.n_arms, d = n, self.d
        self._arrays, self._unsynced = {"centers": c, "lo": lo, "hi": hi, "v": v, "sums": sums, "radius": radius}, set()
        self._c, self._lo, self._hi = ([tuple(row) for row in a[:n].tolist()] for a in (c, lo, hi))
        self._v, self._sums, self._radius, self._version = (a[:n].tolist() for a in (v, sums, radius, version))
        self._face_records, self._summary = [[None] * (2 * d) for _ in range(n)], [None] * n
        self._pending = deque(
            (
                tuple(e[0:d]),
                tuple(e[2 : 2 + d]),
                (tuple(e[4 : 4 + d]), tuple(e[6 : 6 + d])) if e[8] else None,
                int(e[9]),
                int(e[10]),
            )
            for e in queue.tolist()
        )
        self.arm_of_round[:horizon] = played
        self.activated_last_round = bool(activated)
        env.record_means(mu)
        return True

    # --- decision (lines 11–19) ---------------------------------------------
    def act(self, t: int, context=None):
        point = self._uncovered_point()
        self.activated_last_round = point is not None
        if point is not None:
            i = self._activate(point)  # activation
        else:
            i = int(self.index[: self.n_arms].argmax())  # selection
        self.arm_of_round[t - 1] = i
        self.v_at_pull[i] = self._v[i]  # line 16: record v_s
        if self.cache_n[i]:  # lines 17–18: flush the cache
            lo, hi = self._lo[i], self._hi[i]
            self._use(i, int(self.cache_n[i]), float(self.cache_sum[i]))
            self.cache_n[i] = 0
            self.cache_sum[i] = 0.0
            self._shrunk(i, lo, hi)
        self.v_after_pull[i] = self._v[i]
        c = self._c[i]
        return c[0] if self.d == 1 else c  # a float, or a tuple of d floats
