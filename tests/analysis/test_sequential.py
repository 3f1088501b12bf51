"""Anytime-valid verdicts on paired differences (banditbench.analysis.sequential).

The coverage tests simulate a researcher who adds seeds one at a time, looks at every n from 5 to 200
and stops at the first interval that excludes 0 (or at 200): over R runs the share whose final interval
misses the true mean must stay at or below alpha + 3 Monte-Carlo standard errors for a confidence
sequence, and it clearly does not for the fixed-n Student-t interval under the same looking.
"""

import numpy as np
import pytest

from banditbench.analysis.aggregate import t_quantile
from banditbench.analysis.sequential import PRIOR_PRECISION, Verdict, anytime_pvalue, confidence_sequence, holm, verdict

ALPHA = 0.05
R = 2000
N0, N_MAX = 5, 200
#: alpha + 3 Monte-Carlo standard errors of a miss rate of alpha over R runs
TOLERANCE = ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / R)


def _t_interval(d):
    n = d.shape[0]
    half = t_quantile(1 - ALPHA / 2, n - 1) * d.std(axis=0, ddof=1) / np.sqrt(n)
    return d.mean(axis=0) - half, d.mean(axis=0) + half


def miss_rate(x: np.ndarray, mu: float, interval) -> float:
    """Share of the columns of ``x`` (rows seeds) whose interval at the stopping n misses ``mu``."""
    low, high = np.full(x.shape[1], np.nan), np.full(x.shape[1], np.nan)
    running = np.ones(x.shape[1], dtype=bool)
    for n in range(N0, N_MAX + 1):
        lo, hi = interval(x[:n, running])
        low[running], high[running] = lo, hi
        running[running] = (lo <= 0) & (hi >= 0)  # stop where the interval excludes 0
        if not running.any():
            break
    return float(((low > mu) | (high < mu)).mean())


def _bimodal(rng, shape):
    """Regret-difference-like: most seeds slightly better, one in five locked in far worse; mean 0."""
    return np.where(rng.random(shape) < 0.8, rng.uniform(-1.5, -0.5, shape), rng.uniform(3.5, 4.5, shape))


def _capped_exponential(rng, shape):
    """Right-skewed: an exponential capped at 6, centred (mean 0), within [-1, 6]."""
    return np.minimum(rng.exponential(1.0, shape), 6.0) - (1 - np.exp(-6.0))


@pytest.fixture(scope="module")
def samples():
    rng = np.random.default_rng(20240536)
    return {
        "normal": rng.normal(0.0, 2.0, (N_MAX, R)),
        "t3": rng.standard_t(3, (N_MAX, R)),
        "bimodal": _bimodal(rng, (N_MAX, R)),
        "capped exponential": _capped_exponential(rng, (N_MAX, R)),
        "normal, mean -0.3": rng.normal(-0.3, 1.0, (N_MAX, R)),
    }


@pytest.mark.parametrize("name", ["normal", "t3"])
def test_the_gaussian_cs_keeps_its_level_under_optional_stopping_where_the_t_interval_does_not(samples, name):
    x = samples[name]
    cs = miss_rate(x, 0.0, lambda d: confidence_sequence(d, ALPHA))
    t = miss_rate(x, 0.0, _t_interval)
    assert cs <= TOLERANCE, f"{name}: CS missed in {cs:.3f} of {R} runs"
    assert t > 0.3, f"{name}: the fixed-n t interval missed in only {t:.3f}"


def test_the_gaussian_cs_covers_a_nonzero_mean_at_the_stopping_n(samples):
    cs = miss_rate(samples["normal, mean -0.3"], -0.3, lambda d: confidence_sequence(d, ALPHA))
    assert cs <= TOLERANCE, f"CS missed in {cs:.3f} of {R} runs"


@pytest.mark.parametrize("name, bounds", [("bimodal", (-5.0, 5.0)), ("capped exponential", (-1.0, 6.0))])
def test_the_bounded_cs_keeps_its_level_on_skewed_differences(samples, name, bounds):
    x = samples[name]
    cs = miss_rate(x, 0.0, lambda d: confidence_sequence(d, ALPHA, bounds=bounds))
    t = miss_rate(x, 0.0, _t_interval)
    assert cs <= TOLERANCE, f"{name}: bounded CS missed in {cs:.3f} of {R} runs"
    assert t > 0.3, f"{name}: the fixed-n t interval missed in only {t:.3f}"


def test_the_gaussian_cs_is_not_valid_for_bimodal_differences_at_few_seeds(samples):
    """The limitation the module states: without a bound, a lock-in that few seeds miss fools it."""
    assert miss_rate(samples["bimodal"], 0.0, lambda d: confidence_sequence(d, ALPHA)) > TOLERANCE


def test_a_clear_difference_supports_the_claim_on_its_side_and_contradicts_the_other():
    d = np.random.default_rng(1).normal(-1.0, 1.0, 100)
    for bounds in (None, (-6.0, 6.0)):
        less, greater = verdict(d, "less", bounds=bounds), verdict(d, "greater", bounds=bounds)
        assert less.verdict == "supported" and greater.verdict == "contradicted"
        assert less.high < 0 and less.n == 100 and less.mean == pytest.approx(d.mean())
    assert verdict(-d, "greater").verdict == "supported"


def test_a_zero_mean_is_not_separated_and_states_the_detectable_effect():
    d = np.random.default_rng(2).normal(0.0, 1.0, 40)
    v = verdict(d, "less")
    assert v.verdict == "not separated" and v.low < 0 < v.high
    assert v.detectable == pytest.approx((v.high - v.low) / 2) and 0 < v.detectable < np.inf
    # the Gaussian CS moves with a shift of the differences: a mean just beyond the detectable effect separates
    assert verdict(d - d.mean() - 1.01 * v.detectable, "less").verdict == "supported"
    assert verdict(d - d.mean() - 0.99 * v.detectable, "less").verdict == "not separated"


def test_too_few_seeds_and_bad_input_are_refused():
    for d in ([], [1.0]):
        with pytest.raises(ValueError, match="at least 2 paired differences"):
            verdict(d, "less")
    with pytest.raises(ValueError, match="direction"):
        verdict([1.0, 2.0], "lower")
    with pytest.raises(ValueError, match="outside the declared bounds"):
        confidence_sequence([0.5, 3.0], bounds=(-1.0, 1.0))
    with pytest.raises(ValueError, match="finite"):
        confidence_sequence([0.5, np.nan])
    # two seeds: the Gaussian CS is the whole line (not separated), not an error
    assert verdict([1.0, 1.2], "greater").verdict == "not separated"


def test_the_same_input_gives_the_same_output():
    d = np.random.default_rng(3).normal(0.4, 1.0, 25)
    for bounds in (None, (-5.0, 5.0)):
        assert verdict(d, "greater", bounds=bounds) == verdict(d.copy(), "greater", bounds=bounds)
    assert isinstance(verdict(d, "greater"), Verdict)


def test_columns_are_independent_sequences():
    x = np.random.default_rng(4).normal(0.0, 1.0, (12, 3))
    for bounds in (None, (-5.0, 5.0)):
        low, high = confidence_sequence(x, bounds=bounds)
        for j in range(3):
            assert (low[j], high[j]) == pytest.approx(confidence_sequence(x[:, j], bounds=bounds))


def test_the_anytime_pvalue_is_below_alpha_exactly_when_the_cs_excludes_0():
    rng = np.random.default_rng(5)
    for _ in range(300):
        d = rng.normal(rng.uniform(-1, 1), 1.0, rng.integers(2, 60))
        low, high = confidence_sequence(d, ALPHA, prior_precision=PRIOR_PRECISION)
        assert (anytime_pvalue(d) <= ALPHA) == (low > 0 or high < 0)
    assert anytime_pvalue(np.zeros(5)) == 1.0


def test_holm_steps_down_until_the_first_p_value_above_its_level():
    assert holm([0.01, 0.04, 0.03, 0.2]).tolist() == [True, False, False, False]  # 0.03 > 0.05/3
    assert holm([0.02, 0.001, 0.01]).tolist() == [True, True, True]  # 0.02 <= 0.05/1
    assert holm([0.02, 0.001, 0.01], alpha=0.01).tolist() == [False, True, False]
