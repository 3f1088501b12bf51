"""Anytime-valid verdicts on paired differences (banditbench.numerics.sequential).

The coverage tests measure *anytime* miscoverage under a look schedule: a researcher looks after every seed
from 2 to 200, and an interval misses when it excludes the true mean at any of those looks (so the running
intersection of its looks misses at the last).  For a confidence sequence that share is at most alpha.  Over
R = 2,000 sequences a share above alpha + 3 Monte-Carlo standard errors (0.0646) fails the check.  The check can
fail a wrong interval: on bimodal 1-in-5 lock-in differences (the shape of seed 001's self-duel lock-ins and of
knapsack lock-in seeds) a fixed-n t interval at alpha/10 (not a CS) misses in 0.42 of the runs, one at
alpha^1.5 in 0.50, the Gaussian t-CS built at alpha^1.5 (a CS for Gaussian data, at a stricter level) in 0.26
and the Gaussian t-CS itself in 0.35, each more than 39 standard errors above the tolerance, where the betting
CS misses in 0.026 and PrPl-EB in 0.0005 (the fixture's draws; on capped exponential differences 0.013 and 0,
on normal ones 0.007 and 0).  The file runs in about 15 s on one core (every interval is vectorised over the R
sequences).
"""

import numpy as np
import pytest

from banditbench.numerics import sequential
from banditbench.analysis.aggregate import t_quantile
from banditbench.numerics.sequential import (
    BETTING,
    EMPIRICAL_BERNSTEIN,
    GAUSSIAN,
    PRIOR_PRECISION,
    THETA,
    TRUNCATION,
    Verdict,
    anytime_pvalue,
    confidence_sequence,
    holm,
    verdict,
)

ALPHA = 0.05
R = 2000
N_MAX = 200
#: one Monte-Carlo standard error of a miss rate of alpha over R sequences
SE = np.sqrt(ALPHA * (1 - ALPHA) / R)
#: alpha + 3 standard errors: the most a confidence sequence may miss in this simulation
TOLERANCE = ALPHA + 3 * SE
#: the range each shape lies in (what a claim's declared metric range would give)
BOUNDS = {
    "bimodal": (-5.0, 5.0),
    "capped exponential": (-1.0, 6.0),
    "normal": (-10.0, 10.0),
    "bimodal, mean -0.3": (-5.3, 4.7),
}


def _bimodal(rng, shape):
    """Regret-difference-like: most seeds slightly better, one in five locked in far worse; mean 0."""
    return np.where(rng.random(shape) < 0.8, rng.uniform(-1.5, -0.5, shape), rng.uniform(3.5, 4.5, shape))


def _capped_exponential(rng, shape):
    """Right-skewed: an exponential capped at 6, centred (mean 0), within [-1, 6]."""
    return np.minimum(rng.exponential(1.0, shape), 6.0) - (1 - np.exp(-6.0))


@pytest.fixture(scope="module")
def samples():
    rng = np.random.default_rng(20240536)
    shape = (N_MAX, R)
    return {
        "normal": np.clip(rng.normal(0.0, 2.0, shape), -10.0, 10.0),  # a symmetric clip keeps the mean 0
        "t3": rng.standard_t(3, shape),
        "bimodal": _bimodal(rng, shape),
        "capped exponential": _capped_exponential(rng, shape),
        "bimodal, mean -0.3": _bimodal(rng, shape) - 0.3,
    }


def anytime_miss(running: tuple[np.ndarray, np.ndarray], mu: float = 0.0) -> float:
    """Share of the sequences whose running intersection over the looks misses ``mu``: those that missed it at
    some look."""
    low, high = running
    return float(((low > mu) | (high < mu)).mean())


def cs(method: str | None, alpha: float = ALPHA, bounds=None):
    """The running intersection over every look of a confidence sequence of the module."""
    return lambda x: confidence_sequence(x, alpha, bounds, method=method, running=True)


def fixed_t(alpha: float):
    """The running intersection over the looks n = 2..N of the fixed-n Student-t interval at ``alpha`` (which is
    not a confidence sequence: each look spends alpha anew)."""

    def interval(x):
        n = np.arange(1, x.shape[0] + 1)[:, None].astype(float)[1:]
        sums, squares = np.cumsum(x, axis=0)[1:], np.cumsum(x**2, axis=0)[1:]
        mean = sums / n
        half = t_quantile(1 - alpha / 2, n - 1) * np.sqrt(np.maximum(squares - n * mean**2, 0.0) / (n - 1) / n)
        return (mean - half).max(axis=0), (mean + half).min(axis=0)

    return interval


@pytest.mark.parametrize("method", [BETTING, EMPIRICAL_BERNSTEIN])
@pytest.mark.parametrize("name", ["bimodal", "capped exponential", "normal"])
def test_the_bounded_css_keep_their_level_under_looks_after_every_seed(samples, method, name):
    miss = anytime_miss(cs(method, bounds=BOUNDS[name])(samples[name]))
    assert miss <= TOLERANCE, f"{method} on {name}: missed in {miss:.4f} of {R} runs"


@pytest.mark.parametrize("method", [BETTING, EMPIRICAL_BERNSTEIN])
def test_the_bounded_css_cover_a_nonzero_mean(samples, method):
    name = "bimodal, mean -0.3"
    miss = anytime_miss(cs(method, bounds=BOUNDS[name])(samples[name]), -0.3)
    assert miss <= TOLERANCE, f"{method}: missed in {miss:.4f} of {R} runs"


@pytest.mark.parametrize("name", ["normal", "t3"])
def test_the_gaussian_cs_keeps_its_level_on_normal_and_heavy_tailed_symmetric_differences(samples, name):
    miss = anytime_miss(cs(GAUSSIAN)(samples[name]))
    assert miss <= TOLERANCE, f"{name}: missed in {miss:.4f} of {R} runs"


@pytest.mark.parametrize(
    "wrong, interval",
    [
        ("fixed-n t interval at alpha/10", fixed_t(ALPHA / 10)),
        ("fixed-n t interval at alpha^1.5", fixed_t(ALPHA**1.5)),
        ("Gaussian t-CS built at alpha^1.5", cs(GAUSSIAN, ALPHA**1.5)),
        ("Gaussian t-CS", cs(GAUSSIAN)),
    ],
)
def test_the_check_fails_intervals_that_do_not_keep_the_level_on_lock_in_differences(samples, wrong, interval):
    """The negative controls: on the bimodal shape each wrong interval misses far beyond the tolerance (0.26 to
    0.50), so the check above fails it, by a margin of more than 10 standard errors."""
    miss = anytime_miss(interval(samples["bimodal"]))
    assert miss > TOLERANCE + 10 * SE, f"{wrong}: missed in only {miss:.4f}"


def test_the_fixed_n_t_interval_loses_its_level_even_on_normal_differences(samples):
    assert anytime_miss(fixed_t(ALPHA)(samples["normal"])) > 0.3


def test_the_bounded_default_keeps_its_level_on_a_lock_in_where_the_gaussian_cs_fails(samples):
    """One seed in five locked in: missing from the first five seeds with probability 0.33, when the Gaussian
    t-CS excludes the mean; the betting CS on the range does not."""
    x = samples["bimodal"]
    default = anytime_miss(confidence_sequence(x, ALPHA, BOUNDS["bimodal"], running=True))
    gaussian = anytime_miss(confidence_sequence(x, ALPHA, running=True))
    assert default <= TOLERANCE < 0.3 < gaussian, (default, gaussian)


def _brute_force_betting(y, alpha, running, grid):
    """Interval (4) of the module on [0, 1] from the capital computed one candidate mean and one seed at a time:
    the bets from the running mean and variance in a loop, then every m of ``grid`` kept while the hedged capital
    stays below 1/alpha (at the last n, or at every n)."""
    lam, total, squares = [], 0.0, 0.0
    for i in range(1, len(y) + 1):
        sigma2 = (0.25 + squares) / i  # of the i - 1 values before (the prior counts as one)
        lam.append(np.sqrt(2 * np.log(2 / alpha) / (sigma2 * i * np.log(1 + i))))
        total += y[i - 1]
        squares += (y[i - 1] - (0.5 + total) / (i + 1)) ** 2
    kept = []
    for m in grid:
        up = down = 1.0
        inside = True
        for i, value in enumerate(y):
            up *= 1 + min(lam[i], TRUNCATION / m if m > 0 else np.inf) * (value - m)
            down *= 1 - min(lam[i], TRUNCATION / (1 - m) if m < 1 else np.inf) * (value - m)
            if max(THETA * up, (1 - THETA) * down) >= 1 / alpha and (running or i == len(y) - 1):
                inside = False
        kept.append(inside)
    inside = grid[np.array(kept)]
    return inside.min(), inside.max()


@pytest.mark.parametrize("running", [False, True])
@pytest.mark.parametrize("n", [3, 12, 40])
def test_the_betting_cs_is_the_capital_inverted_on_a_fine_grid(n, running):
    rng = np.random.default_rng(n)
    d = _bimodal(rng, n)
    grid = np.linspace(0.0, 1.0, 4001)
    low, high = confidence_sequence(d, ALPHA, (-5.0, 5.0), method=BETTING, running=running)
    brute = _brute_force_betting((d + 5.0) / 10.0, ALPHA, running, grid)
    step = 10.0 * (grid[1] - grid[0])  # one grid step, on the range's scale
    assert low == pytest.approx(-5.0 + 10.0 * brute[0], abs=step)
    assert high == pytest.approx(-5.0 + 10.0 * brute[1], abs=step)


def test_the_betting_cs_matches_confseq_where_it_installs():
    """confseq's grid inversion of the same hedged capital (its bets: the PrPl ones at alpha/2, i.e. with
    log(2/alpha), uncapped, truncated at c/m and c/(1 - m)); it does not install here (module docstring)."""
    betting = pytest.importorskip("confseq.betting")
    from confseq.betting_strategies import lambda_predmix_eb

    d = _bimodal(np.random.default_rng(7), 60)
    y = (d + 5.0) / 10.0
    bets = [lambda x, m: lambda_predmix_eb(x, alpha=ALPHA / 2)]
    low, high = betting.betting_cs(
        y, bets, bets, alpha=ALPHA, breaks=5000, running_intersection=True, theta=THETA, trunc_scale=TRUNCATION
    )
    ours = confidence_sequence(y, ALPHA, (0.0, 1.0), method=BETTING, running=True)
    assert ours == pytest.approx((low[-1], high[-1]), abs=2 / 5000)


def test_a_clear_difference_supports_the_claim_on_its_side_and_contradicts_the_other():
    d = np.random.default_rng(1).normal(-1.0, 1.0, 100)
    for method, bounds in ((GAUSSIAN, None), (BETTING, (-6.0, 6.0)), (EMPIRICAL_BERNSTEIN, (-6.0, 6.0))):
        less, greater = verdict(d, "less", bounds=bounds, method=method), verdict(d, "greater", bounds=bounds)
        assert less.verdict == "supported" and greater.verdict == "contradicted", method
        assert less.high < 0 and less.n == 100 and less.mean == pytest.approx(d.mean())
    assert verdict(-d, "greater").verdict == "supported"


def test_a_zero_mean_is_not_separated_and_states_the_detectable_effect():
    d = np.random.default_rng(2).normal(0.0, 1.0, 40)
    v = verdict(d, "less")
    assert v.verdict == "not separated" and v.low < 0 < v.high
    assert v.detectable == pytest.approx((v.high - v.low) / 2) and 0 < v.detectable < np.inf
    # the Gaussian CS (and its running intersection) moves with a shift of the differences
    assert verdict(d - 1.01 * v.high, "less").verdict == "supported"
    assert verdict(d - 0.99 * v.high, "less").verdict == "not separated"


def test_the_verdict_is_read_on_the_running_intersection_and_an_empty_one_is_not_separated():
    """Seeds that first say 0.9 and then -0.9: each look's interval is valid, their intersection is empty (the
    data are not one distribution): the verdict says so instead of a side."""
    d = np.r_[np.full(30, 0.9), np.full(90, -0.9)]
    v = verdict(d, "less", bounds=(-1.0, 1.0))
    assert v.verdict == "not separated" and v.low > v.high and np.isnan(v.detectable)
    assert "do not intersect" in v.note
    last = verdict(d, "less", bounds=(-1.0, 1.0), running=False)  # C_120 alone: not empty
    assert last.low < last.high and not last.note


def test_every_row_names_its_interval_and_a_gaussian_one_its_reason():
    d = np.random.default_rng(3).normal(0.4, 1.0, 25)
    assert verdict(d, "greater", bounds=(-5.0, 5.0)).method == "betting CS (hedged capital) on [-5, 5]"
    assert verdict(d, "greater", bounds=(-5, 5), method=EMPIRICAL_BERNSTEIN).method.startswith("empirical-Bernstein")
    reason = "per-round means of 10,000 rounds"
    assert verdict(d, "greater", method=GAUSSIAN, reason=reason).method == f"Gaussian t-CS (opt-in: {reason})"


def test_too_few_seeds_and_bad_input_are_refused():
    for d in ([], [1.0]):
        with pytest.raises(ValueError, match="at least 2 paired differences"):
            verdict(d, "less")
    with pytest.raises(ValueError, match="direction"):
        verdict([1.0, 2.0], "lower")
    for method in (BETTING, EMPIRICAL_BERNSTEIN):
        with pytest.raises(ValueError, match="outside the declared bounds"):
            confidence_sequence([0.5, 3.0], bounds=(-1.0, 1.0), method=method)
        with pytest.raises(ValueError, match="needs bounds"):
            confidence_sequence([0.5, 0.7], method=method)
    with pytest.raises(ValueError, match="method must be one of"):
        confidence_sequence([0.5, 0.7], method="bootstrap")
    with pytest.raises(ValueError, match="finite"):
        confidence_sequence([0.5, np.nan])
    # two seeds: the Gaussian CS is the whole line (not separated), not an error
    assert verdict([1.0, 1.2], "greater").verdict == "not separated"


def test_the_same_input_gives_the_same_output():
    d = np.random.default_rng(3).normal(0.4, 1.0, 25)
    for bounds in (None, (-5.0, 5.0)):
        assert verdict(d, "greater", bounds=bounds) == verdict(d.copy(), "greater", bounds=bounds)
    assert isinstance(verdict(d, "greater"), Verdict)


@pytest.mark.parametrize("running", [False, True])
@pytest.mark.parametrize("method, bounds", [(GAUSSIAN, None), (BETTING, (-5, 5)), (EMPIRICAL_BERNSTEIN, (-5, 5))])
def test_columns_are_independent_sequences(method, bounds, running):
    x = np.random.default_rng(4).normal(0.0, 1.0, (12, 3))
    low, high = confidence_sequence(x, bounds=bounds, method=method, running=running)
    for j in range(3):
        one = confidence_sequence(x[:, j], bounds=bounds, method=method, running=running)
        assert (low[j], high[j]) == pytest.approx(one)


def test_the_running_gaussian_interval_at_n_is_the_closed_form_at_n_where_it_is_narrowest():
    d = np.random.default_rng(5).normal(0.3, 1.0, 30)
    paths = np.array([confidence_sequence(d[:n], ALPHA) for n in range(2, 31)])
    assert confidence_sequence(d, ALPHA, running=True) == pytest.approx((paths[:, 0].max(), paths[:, 1].min()))


@pytest.mark.parametrize("method, bounds", [(GAUSSIAN, None), (BETTING, (-4.0, 4.0)), (EMPIRICAL_BERNSTEIN, (-4, 4))])
def test_the_anytime_pvalue_is_below_alpha_exactly_when_the_running_interval_excludes_0(method, bounds):
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(200):
        d = np.clip(rng.normal(rng.uniform(-1, 1), 1.0, rng.integers(2, 60)), -4, 4)
        p = anytime_pvalue(d, PRIOR_PRECISION, method, bounds, ALPHA)
        if abs(p - ALPHA) < 1e-6:
            continue  # a tie at the bisection's rounding
        low, high = confidence_sequence(d, ALPHA, bounds, PRIOR_PRECISION, method, running=True)
        assert (p <= ALPHA) == (low > 0 or high < 0), (method, p, low, high)
        checked += 1
    assert checked > 190


@pytest.mark.parametrize("method, bounds", [(GAUSSIAN, None), (BETTING, (-5.0, 5.0)), (EMPIRICAL_BERNSTEIN, (-5, 5))])
def test_the_anytime_pvalue_only_falls_as_seeds_are_added(method, bounds):
    """``min(1, 1/max E_k)`` over the seeds so far: the e-process's running maximum."""
    d = np.clip(np.random.default_rng(6).normal(-1.0, 0.5, 80), -5.0, 5.0)
    p = [anytime_pvalue(d[:n], method=method, bounds=bounds) for n in range(2, 81)]
    assert np.all(np.diff(p) <= 1e-12) and p[-1] < 0.05
    assert anytime_pvalue(np.zeros(5)) == 1.0
    assert anytime_pvalue([4.0, 4.5], method=BETTING, bounds=(1.0, 5.0)) == 0.0  # 0 outside the range


def test_the_module_truncation_is_the_one_its_docstring_measured():
    assert (sequential.TRUNCATION, sequential.THETA, sequential.DEFAULT_METHOD) == (0.75, 0.5, BETTING)


def test_holm_steps_down_until_the_first_p_value_above_its_level():
    assert holm([0.01, 0.04, 0.03, 0.2]).tolist() == [True, False, False, False]  # 0.03 > 0.05/3
    assert holm([0.02, 0.001, 0.01]).tolist() == [True, True, True]  # 0.02 <= 0.05/1
    assert holm([0.02, 0.001, 0.01], alpha=0.01).tolist() == [False, True, False]
