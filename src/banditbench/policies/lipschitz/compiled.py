"""Compiled simulation of the Lipschitz family (seed 003): whole runs of Delayed Zooming and DLPP on
:class:`~banditbench.envs.lipschitz.LipschitzEnv`, round loop, environment step and delay queue in one
numba function.

A Lipschitz round is a few microseconds of Python arithmetic on a handful of numbers, so
in the Python loop of :func:`banditbench.simulation.runner.simulate` the calls between loop, policy and
environment cost a fifth of it.  Here one compiled function runs all rounds: the policy
(:func:`zooming_run`, whose rounds are :func:`_zooming_rounds`, :func:`dlpp_run`, or :func:`replay_run`, which
plays recorded points and learns nothing, for measuring the harness), the environment step (:func:`mean_reward`,
the noise drawn up front by the environment) and the queue (the rounds whose feedback
arrives at the start of round ``t``, :func:`arrival_table`).  It makes the same decisions as
the Python classes of :mod:`banditbench.policies.lipschitz`, bit for bit (tested on every
function, delay kind and rule): the same arithmetic in the same order, the same random
draws from the policy's own :class:`numpy.random.Generator` (numba draws from its state,
which the Python object then continues), the covering oracle's decisions and points, the
same feedback batches in the same order.  The Python classes are the readable, round by
round form (and what subclasses and step-by-step callers run); these functions are used by
:func:`~banditbench.simulation.runner.simulate` when both sides are exactly those classes.

Zooming's covering check: a queued shell is tested face by face, exactly
(:func:`_face_covered`), as the Python path's records end up deciding; the Python path's
face records and summaries are caches that only speed that decision up, so they are not
kept.  Everything else (:func:`_check_exactly`) follows the Python oracle step by step,
including the box splits and the grid of :func:`.metric_space.grid_uncovered`.

What every round runs stays in that one function: a call per round into another compiled function costs a
measurable part of a round, even one that numba inlines (``inline="always"``: its arrays' reference counts), so
the run functions hand out only what runs once per run or seldom (allocating and growing the arrays, an
activation, a cache flush, the end of a phase, the exact covering check); the pieces of the seldom-run functions
are inlined into them.

numba compiles each function once per machine and caches it next to this file
(``cache=True``; ``NUMBA_CACHE_DIR`` moves the cache), so a Snakemake job loads the
machine code instead of compiling it: about 50 s of CPU for all of them, once, which ``make install``
spends ahead of the jobs (:func:`precompile`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...envs.lipschitz import X1, X2

_T27 = 134217729.0  # 2^27 + 1 (Veltkamp splitting)
#: a queued box met by more balls than this is split before the exact check (the Python path's value)
MAX_BOXES_PER_CHECK = 32
#: flags and indices passed to the helpers, as numpy scalars: numba types them int64 / bool, where a Python
#: literal (``0``, ``True``) would have each helper compiled once more for that literal value
ZERO, NO_ARM, NO_INNER, INNER, X_AXIS, Y_AXIS = (np.int64(k) for k in (0, -1, 0, 1, 0, 1))
NO, YES = np.bool_(False), np.bool_(True)


# --- environment ------------------------------------------------------------------------------


@njit(cache=True)
def cpython_hypot(x: float, y: float) -> float:
    """``math.hypot(x, y)`` of CPython 3.11 (``vector_norm`` in Modules/mathmodule.c), bit for bit:
    scaled, Veltkamp-split squares summed with compensation, then one differential correction
    of the square root.  (LLVM's ``hypot`` rounds differently in about 1 case in 200.)"""
    x, y = abs(x), abs(y)
    top = 0.0  # the maximum as CPython takes it (NaN skipped)
    if x > top:
        top = x
    if y > top:
        top = y
    if math.isinf(top):
        return top
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if top == 0.0:
        return top
    _, top_e = math.frexp(top)
    if top_e < -1023:  # subnormal: divide by the maximum
        csum, frac1 = 1.0, 0.0
        for v in (x, y):
            v = v / top
            v = v * v
            old = csum
            csum += v
            frac1 += (old - csum) + v
        return top * math.sqrt(csum - 1.0 + frac1)
    scale = math.ldexp(1.0, -top_e)
    csum, frac1, frac2, frac3 = 1.0, 0.0, 0.0, 0.0
    for v in (x, y):
        v *= scale
        t = v * _T27
        hi = t - (t - v)
        lo = v - hi
        v = hi * hi
        old = csum
        csum += v
        frac1 += (old - csum) + v
        v = 2.0 * hi * lo
        old = csum
        csum += v
        frac2 += (old - csum) + v
        frac3 += lo * lo
    h = math.sqrt(csum - 1.0 + (frac1 + frac2 + frac3))
    t = h * _T27
    hi = t - (t - h)
    lo = h - hi
    v = -hi * hi
    old = csum
    csum += v
    frac1 += (old - csum) + v
    v = -2.0 * hi * lo
    old = csum
    csum += v
    frac2 += (old - csum) + v
    v = -lo * lo
    old = csum
    csum += v
    frac3 += (old - csum) + v
    v = csum - 1.0 + (frac1 + frac2 + frac3)
    return (h + v / (2.0 * h)) / scale


@njit(cache=True)
def mean_reward(function: int, x: float, y: float) -> float:
    """``mu`` of the point ``(x)`` or ``(x, y)`` for the function of code ``function``
    (:data:`~banditbench.envs.lipschitz.FUNCTION_CODES`): the formulas of
    :data:`banditbench.envs.lipschitz.SCALAR`, same operations in the same order."""
    if function == 0:
        return 0.8 - 0.9 * abs(x - 0.4)
    if function == 1:
        return (2.0 / 3.0) * abs(math.sin(5.0 * math.pi * x / 3.0))
    return 1.0 - 0.7 * cpython_hypot(x - X1[0], y - X1[1]) - 0.4 * cpython_hypot(x - X2[0], y - X2[1])


@njit(cache=True)
def arrival_table(arrival: np.ndarray, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """The delay queue, built up front by a counting sort: ``rounds[start[t]:start[t + 1]]`` are the rounds
    whose feedback arrives at the start of round ``t``, in the order of their rounds
    (``arrival[s - 1]`` is that round for round ``s``, 0 if never:
    :meth:`banditbench.simulation.delays.DelayModel.arrival_rounds`)."""
    start = np.zeros(horizon + 2, dtype=np.int64)
    for a in arrival:
        start[a + 1] += 1
    for t in range(1, horizon + 2):
        start[t] += start[t - 1]
    rounds = np.empty(arrival.shape[0], dtype=np.int64)
    free = start.copy()
    for s in range(arrival.shape[0]):
        a = arrival[s]
        rounds[free[a]] = s + 1
        free[a] += 1
    return rounds, start


# --- covering oracle (Alg. 1 line 11) ----------------------------------------------------------


@njit(cache=True)
def _draw_open01(rng) -> float:
    u = rng.random()
    while u == 0.0:
        u = rng.random()
    return u


@njit(cache=True)
def _cuts(a: float, b: float, blo: np.ndarray, bhi: np.ndarray) -> np.ndarray:
    """Sorted distinct values of ``a``, ``b`` and the boxes' sides on one axis."""
    k = blo.shape[0]
    c = np.empty(2 + 2 * k)
    c[0], c[1] = a, b
    c[2 : 2 + k] = blo
    c[2 + k :] = bhi
    c.sort()
    m = 1
    for i in range(1, c.shape[0]):
        if c[i] != c[m - 1]:
            c[m] = c[i]
            m += 1
    return c[:m]


@njit(cache=True, inline="always")
def _spans(c: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``out[b, i]``: does ``[lo_b, hi_b]`` hold the middle of the cell ``[c_i, c_{i+1}]`` (one axis)?"""
    k, cells = lo.shape[0], c.shape[0] - 1
    out = np.empty((k, cells), dtype=np.bool_)
    for i in range(cells):
        mid = 0.5 * (c[i] + c[i + 1])
        for b in range(k):
            out[b, i] = lo[b] <= mid and mid <= hi[b]
    return out


@njit(cache=True, inline="always")
def _free_cells(cov0: np.ndarray, cov1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cells ``(i, j)`` in no box (no ``b`` with ``cov0[b, i]`` and ``cov1[b, j]``), in C order, as
    ``np.flatnonzero(count.ravel())``: their ``i`` and their ``j``."""
    k, n0, n1 = cov0.shape[0], cov0.shape[1], cov1.shape[1]
    cells0 = np.empty(n0 * n1, dtype=np.int64)
    cells1 = np.empty(n0 * n1, dtype=np.int64)
    m = 0
    for i in range(n0):
        for j in range(n1):
            covered = False
            for b in range(k):
                if cov0[b, i] and cov1[b, j]:
                    covered = True
                    break
            if not covered:
                cells0[m], cells1[m] = i, j
                m += 1
    return cells0[:m], cells1[:m]


@njit(cache=True, inline="always")
def _draw_in_cells(c0, c1, cells0, cells1, vol, d: int, rng) -> tuple[float, float]:
    """A point drawn uniformly from the cells of volumes ``vol`` (the ``"uniform"`` rule, the same draws)."""
    m = vol.shape[0]
    cum = np.cumsum(vol)
    while True:
        target = _draw_open01(rng) * cum[m - 1]
        q = min(int(np.searchsorted(cum, target, side="right")), m - 1)
        before = cum[q - 1] if q else 0.0
        i, j = cells0[q], cells1[q]
        x = c0[i] + ((target - before) / vol[q]) * (c0[i + 1] - c0[i])
        y = 0.0
        inside = c0[i] < x < c0[i + 1]
        if d == 2:
            y = c1[j] + _draw_open01(rng) * (c1[j + 1] - c1[j])
            inside = inside and c1[j] < y < c1[j + 1]
        if inside:
            return x, y


@njit(cache=True)
def grid_uncovered(rlo: np.ndarray, rhi: np.ndarray, blo: np.ndarray, bhi: np.ndarray, rng, uniform: bool):
    """:func:`.metric_space.grid_uncovered` for ``d <= 2``, the same cells, counts,
    volumes, draws and arithmetic: ``(True, x, y)`` for a point of the box ``[rlo, rhi]`` in none of
    the clipped boxes ``[blo_i, bhi_i]``, ``(False, 0, 0)`` if they cover it."""
    d = rlo.shape[0]
    c0 = _cuts(rlo[0], rhi[0], blo[:, 0], bhi[:, 0])
    c1 = _cuts(rlo[1], rhi[1], blo[:, 1], bhi[:, 1]) if d == 2 else np.zeros(2)
    cov0 = _spans(c0, blo[:, 0], bhi[:, 0])
    cov1 = _spans(c1, blo[:, 1], bhi[:, 1]) if d == 2 else np.ones((blo.shape[0], 1), dtype=np.bool_)
    cells0, cells1 = _free_cells(cov0, cov1)
    m = cells0.shape[0]
    if m == 0:
        return False, 0.0, 0.0
    vol = np.empty(m)
    for q in range(m):
        vol[q] = 1.0 * (c0[cells0[q] + 1] - c0[cells0[q]])
        if d == 2:
            vol[q] = vol[q] * (c1[cells1[q] + 1] - c1[cells1[q]])
    if not uniform:  # "midpoint": centre of the largest cell
        q = int(np.argmax(vol))
        i, j = cells0[q], cells1[q]
        return True, c0[i] + 0.5 * (c0[i + 1] - c0[i]), (c1[j] + 0.5 * (c1[j + 1] - c1[j])) if d == 2 else 0.0
    x, y = _draw_in_cells(c0, c1, cells0, cells1, vol, d, rng)
    return True, x, y


# a queued box, 11 floats: (lo_0, lo_1, hi_0, hi_1, inner lo_0, inner lo_1, inner hi_0, inner hi_1, has inner, arm,
# version); lo_1 ... are 0 in one dimension


@njit(cache=True)
def _entry(lo: np.ndarray, hi: np.ndarray, nlo: np.ndarray, nhi: np.ndarray, has_inner: int, arm: int, version: int):
    d = lo.shape[0]
    return (
        lo[0],
        lo[1] if d == 2 else 0.0,
        hi[0],
        hi[1] if d == 2 else 0.0,
        nlo[0],
        nlo[1] if d == 2 else 0.0,
        nhi[0],
        nhi[1] if d == 2 else 0.0,
        float(has_inner),
        float(arm),
        float(version),
    )


@njit(cache=True)
def _spanned(
    axis: int, a: float, b: float, u: float, w: float, has_span: bool, lo: np.ndarray, hi: np.ndarray, balls: np.ndarray
) -> bool:
    """Do the ``balls`` spanning ``[a, b]`` across ``axis`` cover it: one of them (no span), or a chain of
    them over ``[u, w]`` along the other axis (closed boxes)?  (``_cover_face`` of the Python path.)"""
    if not has_span:
        for j in balls:
            if lo[j, axis] <= a and hi[j, axis] >= b:
                return True
        return False
    other = 1 - axis
    keys = np.empty(balls.shape[0])
    ids = np.empty(balls.shape[0], dtype=np.int64)
    m = 0
    for j in balls:
        if lo[j, axis] <= a and hi[j, axis] >= b and lo[j, other] <= w and hi[j, other] >= u:
            keys[m], ids[m] = lo[j, other], j
            m += 1
    reach = u
    for q in np.argsort(keys[:m]):
        j = ids[q]
        if lo[j, other] > reach:
            return False  # a gap along the face
        if hi[j, other] > reach:
            reach = hi[j, other]
            if reach >= w:
                return True
    return False


@njit(cache=True)
def _face_covered(
    axis: int,
    p: float,
    q: float,
    u: float,
    w: float,
    has_span: bool,
    lo: np.ndarray,
    hi: np.ndarray,
    candidates: np.ndarray,
) -> bool:
    """Exact test that the face ``[p, q]`` (across ``axis``) x ``[u, w]`` lies in the union of the
    ``candidates``' balls: cut ``[p, q]`` at their sides inside it; each piece is spanned or not
    (``_face_exactly_covered`` of the Python path)."""
    other = 1 - axis
    keep = np.empty(candidates.shape[0], dtype=np.int64)
    m = 0
    for j in candidates:
        if has_span and not (lo[j, other] < w and hi[j, other] > u):
            continue
        if lo[j, axis] < q and hi[j, axis] > p:
            keep[m] = j
            m += 1
    balls = keep[:m]
    edges = np.empty(2 * m + 2)
    edges[0] = p
    e = 1
    for j in balls:
        for side in (lo[j, axis], hi[j, axis]):
            if p < side < q:
                edges[e] = side
                e += 1
    cuts = np.sort(edges[1:e])
    edges[1:e] = cuts
    edges[e] = q
    prev = p
    for i in range(1, e + 1):
        if i < e and edges[i] == prev:  # a repeated cut
            continue
        if not _spanned(axis, prev, edges[i], u, w, has_span, lo, hi, balls):
            return False
        prev = edges[i]
    return True


@njit(cache=True)
def _shell_covered(entry, d: int, lo: np.ndarray, hi: np.ndarray, n: int) -> bool:
    """Is the shell of a queued shrink (the box minus the arm's ball right after it) covered by the other
    balls meeting the box?  Face by face, exactly (``_shell_covered`` of the Python path)."""
    rlo0, rlo1, rhi0, rhi1, nlo0, nlo1, nhi0, nhi1, _, arm, _ = entry
    cand = np.empty(n, dtype=np.int64)
    m = 0
    for j in range(n):
        if j != arm and lo[j, 0] < rhi0 and hi[j, 0] > rlo0 and (d == 1 or (lo[j, 1] < rhi1 and hi[j, 1] > rlo1)):
            cand[m] = j
            m += 1
    cand = cand[:m]
    if d == 1:
        return (nlo0 <= rlo0 or _face_covered(X_AXIS, rlo0, nlo0, 0.0, 0.0, NO, lo, hi, cand)) and (
            rhi0 <= nhi0 or _face_covered(X_AXIS, nhi0, rhi0, 0.0, 0.0, NO, lo, hi, cand)
        )
    return (
        (nlo0 <= rlo0 or _face_covered(X_AXIS, rlo0, nlo0, rlo1, rhi1, YES, lo, hi, cand))
        and (rhi0 <= nhi0 or _face_covered(X_AXIS, nhi0, rhi0, rlo1, rhi1, YES, lo, hi, cand))
        and (nlo1 <= rlo1 or _face_covered(Y_AXIS, rlo1, nlo1, nlo0, nhi0, YES, lo, hi, cand))
        and (rhi1 <= nhi1 or _face_covered(Y_AXIS, nhi1, rhi1, nlo0, nhi0, YES, lo, hi, cand))
    )


@njit(cache=True, inline="always")
def _meeting(rlo: np.ndarray, rhi: np.ndarray, lo: np.ndarray, hi: np.ndarray, n: int) -> np.ndarray:
    """The balls among the first ``n`` that meet the open box ``(rlo, rhi)``."""
    meet = np.empty(n, dtype=np.int64)
    k = 0
    for j in range(n):
        ok = True
        for a in range(rlo.shape[0]):
            if not (lo[j, a] < rhi[a] and hi[j, a] > rlo[a]):
                ok = False
        if ok:
            meet[k] = j
            k += 1
    return meet[:k]


@njit(cache=True, inline="always")
def _one_holds(meet: np.ndarray, rlo: np.ndarray, rhi: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool:
    """Does one of the balls ``meet`` hold the whole box ``[rlo, rhi]``?"""
    for j in meet:
        ok = True
        for a in range(rlo.shape[0]):
            if not (lo[j, a] <= rlo[a] and hi[j, a] >= rhi[a]):
                ok = False
        if ok:
            return True
    return False


@njit(cache=True, inline="always")
def _shell_covered_1d(entry, meet: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool:
    """The cheap 1-d shell test (``_shell_covered_1d`` of the Python path): each of the two pieces of the queued
    box outside its inner box lies in one ball."""
    a, b, c, e = entry[0], entry[4], entry[6], entry[2]
    left, right = b <= a, c >= e
    for j in meet:
        left = left or (lo[j, 0] <= a and hi[j, 0] >= b)
        right = right or (lo[j, 0] <= c and hi[j, 0] >= e)
    return left and right


@njit(cache=True, inline="always")
def _split_crowded(rlo: np.ndarray, rhi: np.ndarray, meet: np.ndarray, lo: np.ndarray, hi: np.ndarray, pending) -> bool:
    """Split the box ``[rlo, rhi]`` in ``2^d`` halves, queued first, if it is wider than the smallest ball
    meeting it; whether it was split."""
    d = rlo.shape[0]
    widest, smallest = -math.inf, math.inf
    for a in range(d):
        widest = max(widest, rhi[a] - rlo[a])
        for j in meet:
            smallest = min(smallest, hi[j, a] - lo[j, a])
    if not widest > smallest:
        return False
    mid = 0.5 * (rlo + rhi)
    empty = np.zeros(d)
    for corner in range(2**d):  # itertools.product order, each to the front
        upper = np.array([(corner >> (d - 1 - a)) & 1 for a in range(d)]) == 1
        pending.insert(
            0,
            _entry(np.where(upper, mid, rlo), np.where(upper, rhi, mid), empty, empty, NO_INNER, NO_ARM, ZERO),
        )
    return True


@njit(cache=True, inline="always")
def _clipped(meet: np.ndarray, lo: np.ndarray, hi: np.ndarray, rlo: np.ndarray, rhi: np.ndarray):
    """The boxes of the balls ``meet`` clipped to ``[rlo, rhi]``."""
    k, d = meet.shape[0], rlo.shape[0]
    blo, bhi = np.empty((k, d)), np.empty((k, d))
    for q in range(k):
        for a in range(d):
            blo[q, a] = max(lo[meet[q], a], rlo[a])
            bhi[q, a] = min(hi[meet[q], a], rhi[a])
    return blo, bhi


@njit(cache=True)
def _check_exactly(entry, d: int, lo: np.ndarray, hi: np.ndarray, n: int, pending, rng, uniform: bool):
    """The exact line-11 test of one queued box (``_check_exactly`` of the Python path): ``(True, x, y)``
    with a point of it (the box is queued again), or ``(False, 0, 0)``; a box met by more than
    :data:`MAX_BOXES_PER_CHECK` balls is split in ``2^d`` halves, queued first."""
    rlo = np.array([entry[0], entry[1]])[:d]
    rhi = np.array([entry[2], entry[3]])[:d]
    meet = _meeting(rlo, rhi, lo, hi, n)
    if _one_holds(meet, rlo, rhi, lo, hi):  # one ball holds the whole box
        return False, 0.0, 0.0
    if entry[8] and d == 1 and _shell_covered_1d(entry, meet, lo, hi):  # the cheap 1-d shell test
        return False, 0.0, 0.0
    if meet.shape[0] > MAX_BOXES_PER_CHECK and _split_crowded(rlo, rhi, meet, lo, hi, pending):
        return False, 0.0, 0.0
    blo, bhi = _clipped(meet, lo, hi, rlo, rhi)
    found, x, y = grid_uncovered(rlo, rhi, blo, bhi, rng, uniform)
    if found:
        pending.insert(0, entry)  # re-check next round
    return found, x, y


# --- Delayed Zooming (Alg. 1) -----------------------------------------------------------------------


@njit(cache=True)
def _refresh(i: int, d: int, scale: float, c, lo, hi, v, sums, radius, index, version) -> None:
    """Radius, index and box of arm ``i`` from its used rewards (``DelayedZooming._refresh``)."""
    r = scale / math.sqrt(1.0 + v[i])
    radius[i] = r
    index[i] = (sums[i] / v[i] if v[i] else 0.0) + 2.0 * r
    for a in range(d):
        lo[i, a] = max(c[i, a] - r, 0.0)
        hi[i, a] = min(c[i, a] + r, 1.0)
    version[i] += 1


@njit(cache=True)
def _grown(a: np.ndarray, cap: int) -> np.ndarray:
    """``a`` with ``cap`` rows, the new ones zero."""
    out = np.zeros((cap,) + a.shape[1:], dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(cache=True)
def _grown_arms(cap: int, arms):
    """The arms' arrays with ``cap`` rows, the new ones zero (``DelayedZooming._alloc``), in three groups: boxes
    ``(arms, d)`` (centre, box, box before this round's shrink); counts (``v``, ``cache_n``, ``v_at_pull``,
    ``v_after_pull``, ``version``, the round of an arm's last saved box, the order of this round's shrinks); floats
    (``sums``, ``radius``, ``index``, ``cache_sum``)."""
    (c, lo, hi, old_lo, old_hi), counts, (sums, radius, index, cache_sum) = arms
    v, cache_n, v_at_pull, v_after_pull, version, touched, order = counts
    return (
        (_grown(c, cap), _grown(lo, cap), _grown(hi, cap), _grown(old_lo, cap), _grown(old_hi, cap)),
        (
            _grown(v, cap),
            _grown(cache_n, cap),
            _grown(v_at_pull, cap),
            _grown(v_after_pull, cap),
            _grown(version, cap),
            _grown(touched, cap),
            _grown(order, cap),
        ),
        (_grown(sums, cap), _grown(radius, cap), _grown(index, cap), _grown(cache_sum, cap)),
    )


@njit(cache=True)
def _arms(capacity: int, d: int):
    """The arms' arrays for ``capacity`` arms, zero (the groups of :func:`_grown_arms`)."""
    b, k, f = np.zeros((0, d)), np.zeros(0, np.int64), np.zeros(0)
    return _grown_arms(capacity, ((b, b, b, b, b), (k, k, k, k, k, k, k), (f, f, f, f)))


@njit(cache=True)
def _activate(i: int, x: float, y: float, d: int, scale: float, arms):
    """Line 12: arm ``i`` activated at the point ``(x)`` or ``(x, y)``, its radius, index and box from no rewards;
    the arms' arrays (doubled first if they were full)."""
    if i == arms[0][0].shape[0]:
        arms = _grown_arms(2 * i, arms)
    (c, lo, hi, _, _), (v, _, _, _, version, _, _), (sums, radius, index, _) = arms
    c[i, 0] = x
    if d == 2:
        c[i, 1] = y
    _refresh(i, d, scale, c, lo, hi, v, sums, radius, index, version)
    return arms


@njit(cache=True)
def _flush(i: int, d: int, scale: float, c, lo, hi, v, sums, radius, index, version, cache_n, cache_sum, pending):
    """Lines 17-18: the pulled arm ``i`` uses its cached rewards; its old box is queued."""
    before_lo, before_hi = lo[i].copy(), hi[i].copy()
    v[i] += cache_n[i]
    sums[i] += cache_sum[i]
    cache_n[i] = 0
    cache_sum[i] = 0.0
    _refresh(i, d, scale, c, lo, hi, v, sums, radius, index, version)
    pending.append(_entry(before_lo, before_hi, lo[i], hi[i], INNER, i, version[i]))


@njit(cache=True)
def _zooming_rounds(horizon, d, scale, count_rule, uniform, rng, function, noise, rounds, start, arms, pending):
    """The rounds of :func:`zooming_run`, in one function (the module docstring says why): the
    arms' arrays (the groups of :func:`_grown_arms`), the played arms, ``mu(x_t)`` and whether the last round
    activated an arm."""
    (
        (c, lo, hi, old_lo, old_hi),
        (v, cache_n, v_at_pull, v_after_pull, version, touched, order),
        (sums, radius, index, cache_sum),
    ) = arms
    arm_of_round, reward, mu = np.full(horizon, -1, dtype=np.int64), np.empty(horizon), np.empty(horizon)
    n, activated = ZERO, False
    for t in range(1, horizon + 1):
        m = 0  # feedback (Alg. 1 lines 4-10)
        for q in range(start[t], start[t + 1]):
            s = rounds[q]
            i = arm_of_round[s - 1]
            vs = v_at_pull[i]
            use = v[i] + 1 <= 4 * vs if count_rule and vs else v[i] + 2 <= 4 * (1 + vs)
            if use:
                if touched[i] != t:
                    touched[i] = t
                    old_lo[i], old_hi[i] = lo[i], hi[i]
                    order[m] = i
                    m += 1
                v[i] += 1
                sums[i] += reward[s - 1]
            else:  # lazy update: cache
                cache_n[i] += 1
                cache_sum[i] += reward[s - 1]
        for q in range(m):
            i = order[q]
            _refresh(i, d, scale, c, lo, hi, v, sums, radius, index, version)
            pending.append(_entry(old_lo[i], old_hi[i], lo[i], hi[i], INNER, i, version[i]))
        found, x, y = False, 0.0, 0.0  # covering oracle (line 11), then activation or selection
        while len(pending):
            entry = pending.pop(0)
            if entry[8] and version[int(entry[9])] == entry[10] and _shell_covered(entry, d, lo, hi, n):
                continue
            found, x, y = _check_exactly(entry, d, lo, hi, n, pending, rng, uniform)
            if found:
                break
        activated = found
        if found:
            arms = _activate(n, x, y, d, scale, arms)
            (
                (c, lo, hi, old_lo, old_hi),
                (v, cache_n, v_at_pull, v_after_pull, version, touched, order),
                (sums, radius, index, cache_sum),
            ) = arms
            i = n
            n += 1
        else:
            i = int(np.argmax(index[:n]))
        arm_of_round[t - 1] = i
        v_at_pull[i] = v[i]  # line 16: record v_s
        if cache_n[i]:  # lines 17-18: flush the cache
            _flush(i, d, scale, c, lo, hi, v, sums, radius, index, version, cache_n, cache_sum, pending)
        v_after_pull[i] = v[i]
        mu[t - 1] = mean_reward(function, c[i, 0], c[i, 1] if d == 2 else 0.0)  # the environment's step
        reward[t - 1] = mu[t - 1] + noise[t - 1]
    return n, arms, arm_of_round, mu, activated


@njit(cache=True, inline="always")
def _queue(pending) -> np.ndarray:
    """The queued boxes, one row of 11 floats each."""
    queue = np.empty((len(pending), 11))
    for q in range(len(pending)):
        for a in range(11):
            queue[q, a] = pending[q][a]
    return queue


@njit(cache=True)
def zooming_run(
    horizon: int,
    d: int,
    scale: float,
    count_rule: bool,
    uniform: bool,
    rng,
    function: int,
    noise: np.ndarray,
    rounds: np.ndarray,
    start: np.ndarray,
    capacity: int,
):
    """Delayed Zooming for ``horizon`` rounds from its initial state (nothing played, the whole space
    queued): the loop of :func:`banditbench.simulation.runner.simulate` with :meth:`DelayedZooming.observe` /
    :meth:`~DelayedZooming.act` and :meth:`LipschitzEnv.play`.  Returns the arms' state, the played
    arm and ``mu(x_t)`` of every round, and the queue."""
    pending = [_entry(np.zeros(d), np.ones(d), np.zeros(d), np.zeros(d), NO_INNER, NO_ARM, ZERO)]
    arms = _arms(capacity, d)
    n, arms, arm_of_round, mu, activated = _zooming_rounds(
        horizon, d, scale, count_rule, uniform, rng, function, noise, rounds, start, arms, pending
    )
    (c, lo, hi, _, _), (v, cache_n, v_at_pull, v_after_pull, version, _, _), floats = arms
    sums, radius, index, cache_sum = floats
    return (
        n,
        c,
        lo,
        hi,
        v,
        sums,
        radius,
        index,
        cache_n,
        cache_sum,
        v_at_pull,
        v_after_pull,
        version,
        arm_of_round,
        mu,
        _queue(pending),
        activated,
    )


# --- DLPP (Alg. 2) --------------------------------------------------------------------------------


@njit(cache=True)
def cover_box(lo: np.ndarray, hi: np.ndarray, r: float) -> np.ndarray:
    """:func:`.metric_space.cover_box` for ``d <= 2``, the same arithmetic."""
    d = lo.shape[0]
    counts = np.ones(2, dtype=np.int64)
    for a in range(d):
        counts[a] = max(1, int(np.ceil((hi[a] - lo[a]) / (2.0 * r) - 1e-12)))
    axes = np.zeros((d, counts.max()))
    for a in range(d):
        k = counts[a]
        for q in range(k):
            axes[a, q] = lo[a] + (hi[a] - lo[a]) * (2.0 * q + 1.0) / (2.0 * k)
    out = np.empty((counts[0] * counts[1], d))
    for q0 in range(counts[0]):
        for q1 in range(counts[1]):
            row = q0 * counts[1] + q1
            out[row, 0] = axes[0, q0]
            if d == 2:
                out[row, 1] = axes[1, q1]
    return out


@njit(cache=True)
def _new_phase(centers, r, phase, n_balls, balls):
    """Balls ``B(x, r)`` of phase ``phase`` for the new covering ``centers``, ``v = mu_hat = 0``, after the
    ``n_balls`` balls there are (``DLPP._start_phase``); the balls' arrays (centres, ``lo``, ``hi``, ``phase_of``,
    ``v``, ``sums``, ``mean``, ``in_plus``), grown if needed."""
    c, lo, hi, phase_of, v, sums, mean, in_plus = balls
    d, k = centers.shape[1], centers.shape[0]
    need = n_balls + k
    if need > c.shape[0]:
        size = max(need, 2 * c.shape[0])
        c, lo, hi, phase_of = _grown(c, size), _grown(lo, size), _grown(hi, size), _grown(phase_of, size)
        v, sums, mean, in_plus = _grown(v, size), _grown(sums, size), _grown(mean, size), _grown(in_plus, size)
    for q in range(k):
        b = n_balls + q
        for a in range(d):
            c[b, a] = centers[q, a]
            lo[b, a] = max(centers[q, a] - r, 0.0)
            hi[b, a] = min(centers[q, a] + r, 1.0)
        phase_of[b], v[b], sums[b], mean[b], in_plus[b] = phase, 0, 0.0, 0.0, True
    return c, lo, hi, phase_of, v, sums, mean, in_plus


@njit(cache=True)
def _first_phase(centers, phase, d):
    """The balls' arrays (those of :func:`_new_phase`) with the balls of phase ``phase`` at ``centers``."""
    cap = max(16, centers.shape[0])
    f, k, b = np.zeros((cap, d)), np.zeros(cap, np.int64), np.zeros(cap)
    balls = (f, f.copy(), f.copy(), k, k.copy(), b, b.copy(), np.zeros(cap, dtype=np.bool_))
    return _new_phase(centers, 2.0 ** (-phase), phase, ZERO, balls)


@njit(cache=True)
def _pruned_covering(lo, hi, mean, phase_start: int, n_balls: int, r: float, eliminated) -> np.ndarray:
    """Line 15, elimination at ``4 r_m`` (how many: appended to ``eliminated``), and line 16: the centres of the
    ``r_m / 2``-coverings of the phase's surviving balls, in their order (``DLPP._end_phase``)."""
    d = lo.shape[1]
    best = -math.inf
    for b in range(phase_start, n_balls):
        best = max(best, mean[b])
    dropped, parts, total = 0, [np.zeros((0, d))], 0
    for b in range(phase_start, n_balls):
        if best - mean[b] < 4.0 * r:
            parts.append(cover_box(lo[b], hi[b], r / 2.0))
            total += parts[-1].shape[0]
        else:
            dropped += 1
    eliminated.append(dropped)
    children, row = np.empty((total, d)), 0
    for part in parts:
        children[row : row + part.shape[0]] = part
        row += part.shape[0]
    return children


@njit(cache=True)
def dlpp_run(
    horizon: int,
    d: int,
    v_scale: float,
    freeze: bool,
    rng,
    function: int,
    noise: np.ndarray,
    rounds: np.ndarray,
    start: np.ndarray,
    centers: np.ndarray,
    phase: int,
):
    """DLPP for ``horizon`` rounds from its initial state (phase ``phase`` with the balls ``centers``, nothing
    played): the loop of :func:`banditbench.simulation.runner.simulate` with :meth:`DLPP.observe` / :meth:`DLPP.act`
    and :meth:`LipschitzEnv.play`.  Returns the balls' state, the played ball and ``mu(x_t)`` of every
    round, the eliminations per phase and what is left of the round-robin pass."""
    c, lo, hi, phase_of, v, sums, mean, in_plus = _first_phase(centers, phase, d)
    r = 2.0 ** (-phase)
    v_target = v_scale / r**2
    phase_start, n_balls, n_plus = 0, centers.shape[0], centers.shape[0]
    ball_of_round, reward, mu = np.full(horizon, -1, dtype=np.int64), np.empty(horizon), np.empty(horizon)
    eliminated = [0]  # eliminated[1:]: per phase
    turn = np.empty(c.shape[0], dtype=np.int64)  # the round-robin pass: turn[head:tail]
    head = tail = 0
    for t in range(1, horizon + 1):
        for q in range(start[t], start[t + 1]):  # feedback (lines 8-11)
            s = rounds[q]
            b = ball_of_round[s - 1]
            if phase_of[b] != phase or (freeze and not in_plus[b]):
                continue  # earlier phase / frozen estimate
            v[b] += 1
            sums[b] += reward[s - 1]
            mean[b] = sums[b] / v[b]
            if in_plus[b] and v[b] >= v_target:
                in_plus[b] = False  # line 10
                n_plus -= 1
        if start[t + 1] > start[t] and not n_plus:  # line 15 elimination, line 16 re-covering
            children = _pruned_covering(lo, hi, mean, phase_start, n_balls, r, eliminated)
            phase += 1
            r = 2.0 ** (-phase)
            v_target = v_scale / r**2
            balls = _new_phase(children, r, phase, n_balls, (c, lo, hi, phase_of, v, sums, mean, in_plus))
            c, lo, hi, phase_of, v, sums, mean, in_plus = balls
            phase_start, n_balls, n_plus = n_balls, n_balls + children.shape[0], children.shape[0]
            head = tail = 0
        while head < tail and not in_plus[turn[head]]:  # round-robin sampling (lines 5-7)
            head += 1
        if head == tail:
            if turn.shape[0] < n_balls - phase_start:
                turn = np.empty(n_balls - phase_start, dtype=np.int64)
            head = tail = 0
            for b in range(phase_start, n_balls):
                if in_plus[b]:
                    turn[tail] = b
                    tail += 1
        b = turn[head]
        head += 1
        ball_of_round[t - 1] = b
        u = rng.random()  # uniform on the ball
        x = lo[b, 0] + (hi[b, 0] - lo[b, 0]) * u
        y = lo[b, 1] + (hi[b, 1] - lo[b, 1]) * rng.random() if d == 2 else 0.0
        mu[t - 1] = mean_reward(function, x, y)  # the environment's step
        reward[t - 1] = mu[t - 1] + noise[t - 1]
    balls = (c, lo, hi, phase_of, v, sums, mean, in_plus)
    return (
        n_balls,
        phase,
        phase_start,
        n_plus,
        balls,
        ball_of_round,
        mu,
        np.array(eliminated[1:], dtype=np.int64),
        turn[head:tail].copy(),
    )


# --- replay (the harness alone) -------------------------------------------------------------------


@njit(cache=True)
def replay_run(points: np.ndarray, function: int, noise: np.ndarray, rounds: np.ndarray, start: np.ndarray):
    """The loop, the environment step and the queue of the runs above with recorded points and no learning:
    what a compiled round costs besides its policy.  Returns ``mu(x_t)`` and the sum of the delivered
    rewards (so that the deliveries are not compiled away)."""
    horizon, d = points.shape
    reward, mu = np.empty(horizon), np.empty(horizon)
    delivered = 0.0
    for t in range(1, horizon + 1):
        for q in range(start[t], start[t + 1]):
            delivered += reward[rounds[q] - 1]
        mean = mean_reward(function, points[t - 1, 0], points[t - 1, 1] if d == 2 else 0.0)
        mu[t - 1] = mean
        reward[t - 1] = mean + noise[t - 1]
    return mu, delivered


# --- compiling ahead of the jobs ------------------------------------------------------------------


def precompile() -> list[str]:
    """Compile every function that a Delayed Zooming or a DLPP run calls (or load it from the cache) by
    running each policy for a few rounds, one- and two-dimensional, through
    :func:`~banditbench.simulation.runner.simulate`: the signatures are those of the jobs, since types, not values,
    decide what numba compiles.  ``make install`` calls it (``banditbench precompile``), so that the
    first grid's jobs load machine code instead of each compiling it.  Returns the run functions
    used; raises ``RuntimeError`` if a run did not take the compiled path."""
    from ...simulation.runner import build, simulate

    used = []
    for policy, run in (("delayed_zooming", "zooming_run"), ("dlpp", "dlpp_run")):
        for function in ("triangle", "two_dim"):
            cell = {
                "experiment": "precompile",
                "algorithm": policy,
                "delay_label": "geometric",
                "budget": None,
                "horizon": 50,
                "seed": 0,
                "delay": {"kind": "geometric", "mean": 5},
                "environment": {"name": "lipschitz", "params": {"function": function}},
                "policy": {"name": policy, "params": {}},
            }
            env, pol, delay, delay_rng = build(cell)
            taken = []
            run_compiled = pol.run_compiled
            pol.run_compiled = lambda *args: taken.append(run_compiled(*args)) or taken[-1]
            simulate(env, pol, delay, cell["horizon"], delay_rng)
            if taken != [True]:
                raise RuntimeError(f"{policy} on {function!r} did not run compiled")
        used.append(run)
    return used
