"""Arm-pair selection strategies of seed 001 (Oh et al., Sec. 4.2 and App. E.2.2), vectorised.

Every strategy sees the round's estimated utilities ``u_k = theta^T phi_k`` and
the matrix of pair widths ``N[k, k'] = ||phi_k - phi_k'||_{V^{-1}}`` (all K x K
pairs at once, :func:`pair_widths`), and returns a pair ``(k1, k2)``; ``a`` is
the confidence coefficient ``a_t``.  No loop over arms or pairs.

* ``ucb_asym`` — ``k1 = argmax u`` (eq. 7); ``k2 = argmax_k u_k + a N[k, k1]``.
* ``ucb_osym`` — ``argmax_{k, k'} u_k + u_k' + a N[k, k']``.
* ``ucb_csym`` — candidates ``C = {k : a N[k, k'] > u_k' - u_k for all k'}``, then
  ``argmax_{(k, k') in C x C} N[k, k']``.
* ``ts_asym`` — ``k1`` greedy; ``k2 = argmax_k u~_k`` with
  ``u~_k ~ N(u_k - u_k1, a^2 N[k, k1]^2)``.
* ``ts_osym`` — ``argmax_{k, k'} u~_{k,k'}`` with ``u~_{k,k'} ~ N(u_k + u_k', a^2 N[k, k']^2)``,
  one independent draw per ordered pair (as Listing 3 draws a K x K array).
* ``ts_csym`` — candidates ``C`` as ``ucb_csym``, then ``argmax_{C x C} s_{k,k'}`` with
  ``s_{k,k'} ~ N(N^2, N^4 / (4 log(K t^2)))`` (Sec. 4.2.2, ``csym_sample = "equation"``).
  Listing 4 draws differently — mean ``a N``, standard deviation ``(a N)^2 / 4`` —
  and is available as ``csym_sample = "listing"``.

Ties: the first maximum in row-major order (as the listings' ``argmax`` / strict
``>`` scans).  ``k1 = k2`` is allowed, as in the paper's arg-maxes over [K] x [K].
``distinct=True`` (ours, not the paper's: the policies' ``distinct_pair``) forbids it: the
strategy's best pair with ``k1 != k2``; where its set holds none (CSYM with one candidate), the
candidate against the arm of largest width from it, ``argmax_{k != k1} N[k, k1]``.
The candidate set always contains the greedy arm: it satisfies the condition
except for exact ties at zero width (identical arms), where Listing 4 would fall
back to the pair (0, 0); we keep the greedy arm instead.
"""

from __future__ import annotations

import math

import numpy as np

from ..api import check_finite
from ..errors import POLICY_PARAMS, ConfigError

STRATEGIES = ("ucb_asym", "ucb_osym", "ucb_csym", "ts_asym", "ts_osym", "ts_csym")
CSYM_SAMPLES = ("equation", "listing")


def check_strategy(strategy: str, csym_sample: str, where: str = POLICY_PARAMS) -> None:
    if strategy not in STRATEGIES:
        raise ConfigError(f"{where}.strategy: {strategy!r} is not one of {list(STRATEGIES)}")
    if csym_sample not in CSYM_SAMPLES:
        raise ConfigError(f"{where}.csym_sample: {csym_sample!r} is not one of {list(CSYM_SAMPLES)}")


def pair_widths(features: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """``N[k, k'] = ||phi_k - phi_k'||_{V^{-1}}`` for all pairs, through the K x K kernel
    ``M = Phi V^{-1} Phi^T``: ``N^2 = M_kk + M_k'k' - 2 M_kk'`` (O(K D^2 + K^2 D))."""
    M = features @ inverse @ features.T
    diag = np.diag(M)
    q = diag[:, None] + diag[None, :] - 2.0 * M
    widths = np.sqrt(np.maximum(q, 0.0))
    np.fill_diagonal(widths, 0.0)
    return widths


def candidates(u: np.ndarray, widths: np.ndarray, a: float) -> np.ndarray:
    """Boolean mask of ``C_t = {k : a N[k, k'] > u_k' - u_k for every k' != k}`` (Sec. 4.2.1),
    with the greedy arm always in it (module docstring)."""
    beats = a * widths > u[None, :] - u[:, None]
    np.fill_diagonal(beats, True)
    mask = beats.all(axis=1)
    mask[int(np.argmax(u))] = True
    return mask


def pair_scores(
    strategy: str,
    u: np.ndarray,
    widths: np.ndarray,
    a: float,
    rng: np.random.Generator,
    t: int,
    csym_sample: str = "equation",
) -> tuple[int | None, np.ndarray]:
    """What ``strategy`` maximises in round ``t``: ``(k1, s)`` with ``s`` over the second arm (ASYM) or
    ``(None, S)`` with ``S`` over ordered pairs (``-inf`` outside ``C_t x C_t`` for CSYM); TS scores are
    one random draw (module docstring)."""
    K = len(u)
    if strategy in ("ucb_asym", "ts_asym"):
        first = int(np.argmax(u))  # eq. 7
        bonus = a * widths[:, first]
        if strategy == "ts_asym":
            bonus = bonus * rng.standard_normal(K)
        return first, u - u[first] + bonus
    if strategy in ("ucb_osym", "ts_osym"):
        noise = a * widths
        if strategy == "ts_osym":
            noise = noise * rng.standard_normal((K, K))
        return None, u[:, None] + u[None, :] + noise
    mask = candidates(u, widths, a)
    if strategy == "ucb_csym":
        score = widths
    elif csym_sample == "equation":
        sq = widths * widths
        score = sq + sq / (2.0 * math.sqrt(math.log(K * t * t))) * rng.standard_normal((K, K))
    else:
        aw = a * widths
        score = aw + (aw * aw / 4.0 + 1e-12) * rng.standard_normal((K, K))
    return None, np.where(mask[:, None] & mask[None, :], score, -np.inf)


def select_pair(
    strategy: str,
    u: np.ndarray,
    widths: np.ndarray,
    a: float,
    rng: np.random.Generator,
    t: int,
    csym_sample: str = "equation",
    distinct: bool = False,
) -> tuple[int, int]:
    """The pair chosen by ``strategy`` (module docstring) in round ``t``: the first maximum of its scores;
    with ``distinct``, of its scores over pairs of two different arms.  Utilities or widths that are not finite
    raise :class:`~banditbench.errors.Diverged` (the candidate masks could hide a NaN from the argmax)."""
    check_finite("utility estimates or pair widths", u, widths)
    first, scores = pair_scores(strategy, u, widths, a, rng, t, csym_sample)
    if first is not None:
        if distinct:
            scores = scores.copy()
            scores[first] = -np.inf
        return first, int(np.argmax(scores))
    if distinct:
        off = scores.copy()
        np.fill_diagonal(off, -np.inf)
        if not np.isfinite(off).any():  # CSYM with one candidate: the widest partner
            k1 = int(np.flatnonzero(np.isfinite(np.diag(scores)))[0])
            away = widths[:, k1].copy()
            away[k1] = -np.inf
            return k1, int(np.argmax(away))
        scores = off
    i, j = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(i), int(j)
