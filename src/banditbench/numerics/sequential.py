"""Anytime-valid intervals for the mean paired difference: claims judged while seeds are added.

A paper's comparative claim ("A has lower cumulative regret than B at T") is checked on the per-seed
differences ``d_s = x_A,s - x_B,s`` (:mod:`banditbench.analysis.paired`).  When seeds are added until a
verdict is reached, a fixed-n interval (Student-t) loses its level: looking after every seed from 5 to
200 and stopping at the first interval that excludes 0, the t interval at 95 % misses the true mean in
about 40 % of the runs for normal differences (tests/numerics/test_sequential.py).  A *confidence sequence*
(CS) ``C_n`` covers the mean at every n at once, ``P(exists n: mu not in C_n) <= alpha``, so it covers it at
whatever n the looking stopped, and so does the running intersection ``C_1 ∩ ... ∩ C_n`` (``running=True``),
on which a claim's verdict is read.

Three CSs (``method``):

* ``betting`` — **the default: any distribution within a range**.  The hedged-capital CS of Waudby-Smith &
  Ramdas (2024, "Estimating means of bounded random variables by betting", JRSS B 86(1), Theorem 3, the
  hedged capital process with the predictable plug-in bets of their PrPl-EB CS), on
  ``y = (d - lo)/(hi - lo)`` in [0, 1] for the range ``[lo, hi]`` of ``A - B`` that the environments' declared
  metric ranges give (:func:`banditbench.configuration.claims.metric_range`)::

      lambda_i = sqrt(2 log(2/alpha) / (sigma2_{i-1} i log(1 + i)))              (the plug-in of (3), uncapped)
      K+_n(m) = prod_{i<=n} (1 + min(lambda_i, c/m) (y_i - m)),
      K-_n(m) = prod_{i<=n} (1 - min(lambda_i, c/(1 - m)) (y_i - m)),
      K_n(m) = max(theta K+_n(m), (1 - theta) K-_n(m)),   C_n = {m in [0, 1]: K_n(m) < 1/alpha}     (4)

  with ``theta = 1/2`` and the truncation ``c = 3/4`` (:data:`TRUNCATION`; the paper suggests 1/2 or 3/4).
  At the true mean ``K+`` and ``K-`` are nonnegative martingales (every factor is at least ``1 - c > 0``), so
  ``K_n <= theta K+_n + (1 - theta) K-_n`` is dominated by one and Ville's inequality gives
  ``P(exists n: K_n(mu) >= 1/alpha) <= alpha``.  Each factor of ``K+`` decreases in m and each of ``K-``
  increases, so ``C_n`` is an interval ``(L_n, U_n)`` whose endpoints are the roots of
  ``theta K+_n = 1/alpha`` and ``(1 - theta) K-_n = 1/alpha``, found by bisection (:data:`BISECTION_STEPS`,
  vectorised over columns); the running intersection's are the roots of ``max_{k<=n} K+-_k``, the same
  bisection on the running maximum of the capital.  ``1/max_{k<=n} K_k(0)`` is its anytime p-value (the
  capital process at the value 0 an e-process: :func:`anytime_pvalue`).

* ``empirical-bernstein`` — the predictable plug-in empirical-Bernstein CS (PrPl-EB) of the same paper
  (Theorem 2), on the same ``y``::

      mu_i = (1/2 + sum_{j<=i} y_j)/(i + 1),   sigma2_i = (1/4 + sum_{j<=i} (y_j - mu_j)^2)/(i + 1),
      lambda_i = min(sqrt(2 log(2/alpha) / (sigma2_{i-1} i log(1 + i))), 1/2),
      v_i = 4 (y_i - mu_{i-1})^2,   psi(l) = (-log(1 - l) - l)/4,
      C_n = sum(lambda_i y_i)/sum(lambda_i) +- (log(2/alpha) + sum(v_i psi(lambda_i)))/sum(lambda_i)  (3)

  mapped back and clipped to the range.  A closed form, valid for the same distributions as (4).

* ``gaussian-t`` — **an opt-in: Gaussian differences, variance unknown**; a claim must state why
  (``method: gaussian-t`` with a ``reason``, shown on its row).  The scale-invariant Gaussian-mixture t-CS of
  Wang & Ramdas (2023, "Anytime-valid t-tests and confidence sequences for Gaussian means with unknown
  variance", arXiv:2310.03722; after Lai 1976): mixing the alternative's standardised mean
  ``theta = (mu' - mu) / sigma ~ N(0, 1/c^2)`` and sigma over the right-Haar measure ``d sigma / sigma``
  gives, with ``S = sum(d_i - mu)``, ``V = sum((d_i - mu)^2)``, the martingale

      G_n(mu) = sqrt(c^2 / (n + c^2)) * (V / (V - S^2 / (n + c^2)))^(n/2)                      (1)

  (in the filtration of the scale-invariant data; ``G_1 = 1``), so ``C_n = {mu: G_n(mu) < 1/alpha}`` is a
  CS.  With the mean ``m`` and standard deviation ``s`` (ddof 1) of n differences,
  ``q = ((n + c^2)/(c^2 alpha^2))^(1/n)`` and ``k = 1 - 1/q``, (1) solves to the interval

      m +- sqrt((n - 1) s^2 k / (n^2 / (n + c^2) - n k))                                        (2)

  (the whole line while the denominator is <= 0: with ``c^2 = 0.5`` at alpha 0.05 for n < 4).  Exact
  for normal differences at every n >= 2, and in simulations valid for heavy-tailed symmetric ones (t with
  3 degrees of freedom), but NOT for skewed or bimodal ones at small n: a lock-in that one seed in five
  shows is missing from five seeds with probability 0.33, and the CS then excludes the mean
  (tests/numerics/test_sequential.py measures its miss rate there; Bahadur & Savage 1956: no interval is
  valid for every distribution with a finite variance, only a bound helps).  ``c^2``
  (``prior_precision``) 0.5 gives a finite interval from n = 4 and, from n = 5 to 200, a width within 15 %
  of the best ``c^2``'s.  ``1/max_{k<=n} G_k(0)`` is its anytime p-value.

Which bounded CS.  Measured by ``benchmarks/claims_widths.py --repetitions 200`` (median width of the running
intersection as a share of the range's width W, alpha 0.05, on the project's shapes: normal differences whose
standard deviation is 0.03 %, 0.5 %, 2 % of W, the 25th, 50th and 90th percentiles of the committed
docs/runs claims on their declared ranges, and seed 001's measured NVLDB - NLDB Statlog differences)::

    n                          5      10      20      50     100     200
    betting, c = 3/4        0.593   0.373   0.213   0.093   0.048   0.024
    betting, c = 1/2        0.686   0.472   0.288   0.133   0.070   0.036
    PrPl-EB                 1       1       0.738   0.295   0.148   0.074
    (Gaussian t-CS, sd 0.5 % of W: 0.022 at n = 5, 0.0022 at n = 200)

within 4 % on each of these shapes (at sd 10 % of W: 0.60, 0.38, 0.22, 0.105, 0.064, 0.042
for betting with c = 3/4, 1, 1, 0.75, 0.30, 0.155, 0.081 for PrPl-EB).  The project's differences are narrow
against their declared ranges (a cumulative regret's range is the horizon times the largest regret a round
can have), so the bets sit at their truncation and the width is about ``W log(2/alpha) / (c n)`` whatever
the spread: betting with c = 3/4 is the narrowest, a third of PrPl-EB's width (whose bets are capped at 1/2
and whose bound adds the variance term), hence the default.  What the range costs: from n = 50 on the
half-width is about 2.4 W / n, so a mean difference of 2 % of W needs about 120 seeds to separate, 1 % about
240; the Gaussian t-CS separates such differences at a few seeds, but only where the differences are Gaussian.

Validity under optional stopping (tests/numerics/test_sequential.py): looking after every seed from 2 to 200,
the running intersection of each bounded CS misses the mean of bimodal 1-in-5 lock-in and capped exponential
differences in at most alpha of the runs, where the Gaussian t-CS, a fixed-n t interval at alpha/10 and the
t-CS built at alpha^1.5 miss far more often.

Why no library.  ``expectation`` (0.6.1) requires Python >= 3.12 (the project supports 3.11), is
GPL-3.0 with an "AI-training prohibited" clause (the project is MIT), pulls pydantic and plotly, and
its mean CS plugs the running sample variance into a boundary that assumes a known variance process
(no guarantee; its empirical-Bernstein variant rescales the bounds inconsistently).  ``confseq`` (0.0.11,
January 2023, "alpha") ships only a source distribution that builds C++ against system Boost >= 1.70
(absent here) with pybind11 pinned ~= 2.6, which does not compile against Python 3.11 headers
(``PyFrameObject`` is opaque since 3.11); it also installs pytest, matplotlib and multiprocess at run
time; its ``hedged_cs`` inverts the capital on a grid of 1,000 points of [0, 1] (too coarse for ranges
thousands of times wider than the differences).  The tests check (4) against a direct computation of the
capital on a fine grid, one m at a time.  The asymptotic CS of Waudby-Smith et al. (2024, "Time-uniform
central limit theory and asymptotic confidence sequences", Ann. Statist.) was evaluated and rejected: its
validity is asymptotic in n and, looking after every seed from 5 on, it missed in about 9 % of the runs for
normal differences at alpha 0.05.

Error rate per claim: alpha (two-sided; the verdict reads the side).  Family-wise per paper:
:func:`holm` on the claims' :func:`anytime_pvalue` (every method has one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: ``c^2`` of (1): the precision of the mixture over the standardised mean difference
PRIOR_PRECISION = 0.5
DIRECTIONS = ("less", "greater")
#: the intervals a claim can be judged with: the two bounded CSs, (4) and (3), and the Gaussian t-CS (2)
BETTING, EMPIRICAL_BERNSTEIN, GAUSSIAN = "betting", "empirical-bernstein", "gaussian-t"
METHODS = (BETTING, EMPIRICAL_BERNSTEIN, GAUSSIAN)
#: the bounded CS a claim gets unless it names another (module docstring, "Which bounded CS")
DEFAULT_METHOD = BETTING
#: ``c`` and ``theta`` of (4): the bets' truncation and the weight of the upward capital
TRUNCATION, THETA = 0.75, 0.5
#: bisection steps for an endpoint of (4) on [0, 1] (2^-60: below the rounding of a double)
BISECTION_STEPS = 60


def _differences(differences, alpha: float) -> np.ndarray:
    d = np.asarray(differences, dtype=float)
    if d.ndim not in (1, 2):
        raise ValueError(f"differences must be 1-D (seeds) or 2-D (seeds x sequences), got shape {d.shape}")
    if d.shape[0] < 2:
        raise ValueError(f"a confidence sequence needs at least 2 paired differences, got {d.shape[0]}")
    if not np.isfinite(d).all():
        raise ValueError("the differences must be finite")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return d


def _method(method: str | None, bounds) -> str:
    """The method to use: the named one, else the Gaussian t-CS without bounds and :data:`DEFAULT_METHOD` with."""
    method = method or (GAUSSIAN if bounds is None else DEFAULT_METHOD)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method != GAUSSIAN and bounds is None:
        raise ValueError(f"the {method} confidence sequence needs bounds (lo, hi) of the differences")
    return method


def _unit(d: np.ndarray, bounds) -> tuple[np.ndarray, float, float]:
    """The differences mapped onto [0, 1] by the declared range, and the range."""
    lo, hi = float(bounds[0]), float(bounds[1])
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be (lo, hi) with lo < hi, got {(lo, hi)}")
    if (d < lo).any() or (d > hi).any():
        raise ValueError(f"differences outside the declared bounds {(lo, hi)}: min {d.min()}, max {d.max()}")
    return (d - lo) / (hi - lo), lo, hi


def _rounds(y: np.ndarray) -> np.ndarray:
    """``i = 1..n`` shaped to broadcast along the rows of ``y``."""
    return np.arange(1, y.shape[0] + 1).reshape((-1,) + (1,) * (y.ndim - 1))


def _plug_in(y: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The predictable plug-in bets ``lambda_i`` (before any cap) and the predictable means ``mu_{i-1}`` of the
    module docstring's (3), from the regularised running mean and variance of the rows before i."""
    i = _rounds(y)
    mu = (0.5 + np.cumsum(y, axis=0)) / (i + 1)
    sigma2 = (0.25 + np.cumsum((y - mu) ** 2, axis=0)) / (i + 1)
    mu_before = np.concatenate([np.full_like(mu[:1], 0.5), mu[:-1]])
    sigma2_before = np.concatenate([np.full_like(sigma2[:1], 0.25), sigma2[:-1]])
    return np.sqrt(2 * np.log(2 / alpha) / (sigma2_before * i * np.log1p(i))), mu_before


def _gaussian_path(d: np.ndarray, alpha: float, c2: float) -> tuple[np.ndarray, np.ndarray]:
    """Interval (2) of the module docstring at every n = 2..N (rows; the whole line where it is not finite)."""
    n = _rounds(d)[1:].astype(float)
    shifted = d - d[0]  # the variance from running sums, without cancellation against a large mean
    sums, squares = np.cumsum(shifted, axis=0)[1:], np.cumsum(shifted**2, axis=0)[1:]
    mean = sums / n
    var = np.maximum(squares - n * mean**2, 0.0) / (n - 1)
    mean = mean + d[0]
    k = 1 - ((c2 * alpha**2) / (n + c2)) ** (1 / n)
    den = n**2 / (n + c2) - n * k
    with np.errstate(divide="ignore", invalid="ignore"):
        half = np.where(den > 0, np.sqrt((n - 1) * var * k / np.where(den > 0, den, 1.0)), np.inf)
    return mean - half, mean + half


def _gaussian(d: np.ndarray, alpha: float, c2: float) -> tuple[np.ndarray, np.ndarray]:
    """Interval (2) at the last row (mean and standard deviation as numpy computes them)."""
    n = d.shape[0]
    mean, sd = d.mean(axis=0), d.std(axis=0, ddof=1)
    k = 1 - ((c2 * alpha**2) / (n + c2)) ** (1 / n)
    den = n**2 / (n + c2) - n * k
    half = np.sqrt((n - 1) * sd**2 * k / den) if den > 0 else np.full_like(mean, np.inf)
    return mean - half, mean + half


def _eb_terms(y: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Running sums of (3): ``sum lambda_i``, ``sum lambda_i y_i`` and ``sum v_i psi(lambda_i)`` at every n."""
    lam, mu_before = _plug_in(y, alpha)
    lam = np.minimum(lam, 0.5)
    psi = (-np.log1p(-lam) - lam) / 4
    return np.cumsum(lam, axis=0), np.cumsum(lam * y, axis=0), np.cumsum(4 * (y - mu_before) ** 2 * psi, axis=0)


def _eb_path(y: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Interval (3) on [0, 1] at every n = 1..N (rows), clipped to [0, 1]."""
    lam, weighted, penalty = _eb_terms(y, alpha)
    centre, half = weighted / lam, (np.log(2 / alpha) + penalty) / lam
    return np.maximum(centre - half, 0.0), np.minimum(centre + half, 1.0)


def _log_capital(y: np.ndarray, m: np.ndarray, lam: np.ndarray, up: bool, running: bool) -> np.ndarray:
    """``log K^+_n(m)`` (``up``) or ``log K^-_n(m)`` of (4) at the last row, or their maximum over the rows
    (``running``); ``m`` one candidate mean per column."""
    with np.errstate(divide="ignore"):
        cap = TRUNCATION / (m if up else 1 - m)
    bet = np.minimum(lam, cap)
    log_k = np.cumsum(np.log1p((bet if up else -bet) * (y - m)), axis=0)
    return log_k.max(axis=0) if running else log_k[-1]


def _capital_endpoint(y: np.ndarray, lam: np.ndarray, alpha: float, up: bool, running: bool) -> np.ndarray:
    """The endpoint of (4) on [0, 1] that one side's capital sets, by bisection: the lower one (``up``: the set
    where ``theta K^+ < 1/alpha`` is (L, 1], ``K^+`` not increasing in m) or the upper one; each column's
    endpoint is the last m found with the capital at or above ``1/alpha`` (the interval errs wide)."""
    weight = THETA if up else 1 - THETA
    threshold = np.log(1 / alpha) - np.log(weight)
    columns = y.shape[1:]
    inside, outside = np.ones(columns), np.zeros(columns)  # where the capital is below, and at or above, 1/alpha
    if not up:
        inside, outside = outside, inside
    reached = _log_capital(y, outside, lam, up, running) >= threshold
    for _ in range(BISECTION_STEPS):
        mid = (inside + outside) / 2
        high = _log_capital(y, mid, lam, up, running) >= threshold
        outside, inside = np.where(high, mid, outside), np.where(high, inside, mid)
    return np.where(reached, outside, 0.0 if up else 1.0)


def _betting(y: np.ndarray, alpha: float, running: bool) -> tuple[np.ndarray, np.ndarray]:
    """Interval (4) of the module docstring on [0, 1], at the last row or intersected over all rows."""
    lam, _ = _plug_in(y, alpha)
    return _capital_endpoint(y, lam, alpha, True, running), _capital_endpoint(y, lam, alpha, False, running)


def _bounded(d: np.ndarray, alpha: float, bounds, method: str, running: bool) -> tuple[np.ndarray, np.ndarray]:
    y, lo, hi = _unit(d, bounds)
    if method == BETTING:
        low, high = _betting(y, alpha, running)
    else:
        low, high = _eb_path(y, alpha)
        low, high = (low.max(axis=0), high.min(axis=0)) if running else (low[-1], high[-1])
    return lo + (hi - lo) * low, lo + (hi - lo) * high


def confidence_sequence(
    differences,
    alpha: float = 0.05,
    bounds: tuple[float, float] | None = None,
    prior_precision: float = PRIOR_PRECISION,
    method: str | None = None,
    running: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Low and high bound at the current n of a (1 - alpha) confidence sequence for the mean difference.

    ``differences``: rows seeds in the order they were added, columns independent sequences (or 1-D).
    ``method``: ``betting`` (the hedged-capital CS (4) on ``bounds``), ``empirical-bernstein`` (PrPl-EB, (3)) or
    ``gaussian-t`` (the t-CS (2), ``prior_precision`` its c^2); by default the Gaussian one without ``bounds``
    and :data:`DEFAULT_METHOD` with them.  ``running``: the intersection of the intervals at every n up to the
    current one (n >= 2 for (2), n >= 1 for the bounded ones), itself a CS; it may be empty (low > high), which
    for a valid CS happens with probability at most alpha.  Valid uniformly over n: the bounds may be read after
    every added seed.  Fewer than 2 rows, non-finite values or values outside ``bounds`` are a ``ValueError``.
    """
    d = _differences(differences, alpha)
    method = _method(method, bounds)
    if method != GAUSSIAN:
        return _bounded(d, alpha, bounds, method, running)
    if not running:
        return _gaussian(d, alpha, prior_precision)
    low, high = _gaussian_path(d, alpha, prior_precision)
    return low.max(axis=0), high.min(axis=0)


def anytime_pvalue(
    differences,
    prior_precision: float = PRIOR_PRECISION,
    method: str | None = None,
    bounds: tuple[float, float] | None = None,
    alpha: float = 0.05,
) -> float:
    """Anytime-valid p-value for a zero mean difference: ``min(1, 1/max_n E_n)`` over the seeds so far, ``E_n``
    the method's nonnegative supermartingale at 0 (an e-process: ``P(exists n: E_n >= 1/a) <= a`` under a zero
    mean, Ville's inequality, for every a at once).

    Gaussian t-CS: ``G_n(0)`` of (1), n >= 2.  Betting: the hedged capital ``K^+-_n(0)`` of (4), whose bets use
    ``alpha`` (any fixed choice keeps it an e-process).  Empirical Bernstein: half the larger of the two
    exponential supermartingales whose level sets are (3), ``exp(+-sum lambda_i (y_i - m) - sum v_i psi)``.
    ``p <= alpha`` exactly when :func:`confidence_sequence` at ``alpha`` with ``running=True`` (same method,
    bounds and ``prior_precision``) excludes 0, up to the bisection's rounding for the betting CS.
    """
    d = _differences(np.ravel(differences), alpha)
    method = _method(method, bounds)
    if method == GAUSSIAN:
        return _gaussian_pvalue(d, prior_precision)
    y, lo, hi = _unit(d, bounds)
    m = np.array(-lo / (hi - lo))
    if not 0 <= m <= 1:
        return 0.0  # 0 is outside the range: no distribution there has mean 0
    if method == BETTING:
        lam, _ = _plug_in(y, alpha)
        log_e = max(
            np.log(THETA) + _log_capital(y, m, lam, True, True),
            np.log(1 - THETA) + _log_capital(y, m, lam, False, True),
        )
    else:
        lam, weighted, penalty = _eb_terms(y, alpha)
        log_e = np.log(0.5) + np.max(np.abs(weighted - m * lam) - penalty)
    return float(min(1.0, np.exp(-log_e)))


def _gaussian_pvalue(d: np.ndarray, c2: float) -> float:
    n = _rounds(d)[1:].astype(float)
    v, s = np.cumsum(d**2)[1:], np.cumsum(d)[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_g = 0.5 * np.log(c2 / (n + c2)) - n / 2 * np.log1p(-(s**2) / ((n + c2) * v))
    log_g = np.where(v > 0, log_g, -np.inf)
    return float(min(1.0, np.exp(-log_g.max())))


def holm(pvalues, alpha: float = 0.05) -> np.ndarray:
    """Holm's step-down over a paper's claims: which anytime p-values are rejected family-wise at alpha.

    Sorted increasingly, ``p_(k)`` (k = 1..m) is rejected while ``p_(j) <= alpha/(m - j + 1)`` for all
    j <= k; family-wise error <= alpha for any dependence between the claims.  A rejected claim's
    verdict is read at its level ``alpha/(m - k + 1)``: the CS there excludes 0 on the side of the mean.
    """
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    passes = p[order] <= alpha / (len(p) - np.arange(len(p)))
    rejected = np.zeros(len(p), dtype=bool)
    rejected[order] = np.cumprod(passes).astype(bool)
    return rejected


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict on n paired differences ``A - B``.

    ``verdict``: ``supported`` (the interval lies on the claimed side of 0), ``contradicted`` (on the
    other side) or ``not separated`` (it contains 0).  ``detectable``: the interval's half-width, the
    smallest |mean difference| that the current n and spread could have separated from 0.  ``method``
    names the interval (and, for the Gaussian t-CS, the claim's reason for it); ``note`` says when the
    intervals of the looks do not intersect.
    """

    verdict: str
    direction: str
    n: int
    mean: float
    low: float
    high: float
    detectable: float
    alpha: float
    method: str
    note: str = ""


def method_name(method: str, bounds=None, reason: str = "") -> str:
    """How a row names its interval: ``betting CS (hedged capital) on [-4, 4]``, ``Gaussian t-CS (opt-in: ...)``."""
    if method == GAUSSIAN:
        return "Gaussian t-CS" + (f" (opt-in: {reason})" if reason else "")
    name = "betting CS (hedged capital)" if method == BETTING else "empirical-Bernstein CS (PrPl-EB)"
    return f"{name} on [{bounds[0]:g}, {bounds[1]:g}]"


#: why a verdict is *not separated* although its interval is empty
EMPTY = "the intervals of the seeds so far do not intersect (a miss of the CS, probability <= alpha, or data "


def verdict(
    differences,
    direction: str,
    alpha: float = 0.05,
    bounds: tuple[float, float] | None = None,
    prior_precision: float = PRIOR_PRECISION,
    method: str | None = None,
    reason: str = "",
    running: bool = True,
) -> Verdict:
    """Judge the claim that the mean difference ``A - B`` is below 0 (``direction='less'``, e.g. lower
    regret) or above 0 (``'greater'``) on the 1-D ``differences`` with :func:`confidence_sequence`, by default
    on the running intersection of its intervals over the seeds so far (``running``: valid at any stopping
    time, so the verdict may be read at the last look whatever the looks were).  An empty intersection is
    *not separated*, with a ``note``."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1:
        raise ValueError(f"differences must be 1-D (one value per seed), got shape {d.shape}")
    method = _method(method, bounds)
    low, high = (float(x) for x in confidence_sequence(d, alpha, bounds, prior_precision, method, running))
    note = ""
    if low > high:
        outcome, note = "not separated", EMPTY + "that break its assumptions)"
    elif high < 0 or low > 0:
        below = high < 0
        outcome = "supported" if below == (direction == "less") else "contradicted"
    else:
        outcome = "not separated"
    detectable = (high - low) / 2 if low <= high else float("nan")
    name = method_name(method, bounds, reason)
    return Verdict(outcome, direction, len(d), float(d.mean()), low, high, detectable, alpha, name, note)
