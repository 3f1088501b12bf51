import numpy as np
import pytest
from scipy import stats

from banditbench.simulation.delays import DelayQueue, make_delay
from banditbench.simulation.runner import simulate
from banditbench.api import Problem
from banditbench.errors import ConfigError
from helpers import CountingEnv, RecordingPolicy

N = 200_000


def test_geometric_matches_its_distribution():
    model = make_delay({"kind": "geometric", "mean": 20})
    d = model.sample(np.random.default_rng(1), N)
    assert d.min() >= 1
    # mean within 4 standard errors of 1/p
    p = model.p
    se = np.sqrt((1 - p) / p**2 / N)
    assert abs(d.mean() - 20) < 4 * se
    # chi-square goodness of fit on {1..60} and a tail bin
    ks = np.arange(1, 61)
    pmf = (1 - p) ** (ks - 1) * p
    observed = np.append(np.bincount(d, minlength=61)[1:61], (d > 60).sum())
    expected = np.append(pmf, 1 - pmf.sum()) * N
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_uniform_covers_its_range_evenly():
    model = make_delay({"kind": "uniform", "low": 3, "high": 12})
    d = model.sample(np.random.default_rng(2), N)
    assert d.min() == 3 and d.max() == 12
    counts = np.bincount(d - 3, minlength=10)
    assert stats.chisquare(counts).pvalue > 1e-3
    assert model.mean == 7.5


def test_constant_and_none():
    assert (make_delay({"kind": "constant", "value": 7}).sample(np.random.default_rng(0), 100) == 7).all()
    assert (make_delay({"kind": "none"}).sample(np.random.default_rng(0), 100) == 0).all()


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "geometric", "p": 0.05, "window": 30},
        {"kind": "uniform", "low": 0, "high": 40, "window": 25},
        {"kind": "constant", "value": 5, "window": 5},
    ],
)
def test_rho_is_the_probability_of_arriving_in_the_window(spec):
    model = make_delay(spec)
    d = model.sample(np.random.default_rng(3), N)
    empirical = model.arrives(d).mean()
    se = np.sqrt(model.rho * (1 - model.rho) / N) + 1e-12
    assert abs(empirical - model.rho) <= 4 * se
    if spec["kind"] == "geometric":
        assert model.rho == pytest.approx(1 - 0.95**30)
    if spec["kind"] == "uniform":
        assert model.rho == pytest.approx(26 / 41)


def test_censoring_drops_exactly_the_late_items_and_delivers_the_rest_on_time():
    T = 3000
    model = make_delay({"kind": "geometric", "mean": 10, "window": 12})
    env = CountingEnv(np.random.SeedSequence(0), horizon=T)
    policy = RecordingPolicy(Problem(T), np.random.default_rng(0))
    delay_rng = np.random.default_rng(5)
    simulate(env, policy, model, T, delay_rng)
    delays = model.sample(np.random.default_rng(5), T)  # the same stream as the run
    expected = {
        s: s + max(int(delays[s - 1]), 1)
        for s in range(1, T + 1)
        if delays[s - 1] <= 12 and s + max(int(delays[s - 1]), 1) <= T
    }
    got = {s: t for t, s in policy.seen}
    assert got == expected
    assert len(got) < T * 0.8  # the window really censored a good share


def test_queue_pops_in_order_and_only_due_items():
    q = DelayQueue()
    q.push("c", 3, 9)
    q.push("a", 1, 5)
    q.push("b", 2, 5)
    assert q.pop_until(4) == []
    assert q.pop_until(5) == ["a", "b"]
    assert len(q) == 1 and q.pop_until(100) == ["c"]


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ({"kind": "poisson"}, "delays.x.kind"),
        ({"kind": "geometric"}, "exactly one of 'p' or 'mean'"),
        ({"kind": "uniform", "low": 5, "high": 2}, "delays.x.high"),
        ({"kind": "constant", "value": 9, "window": 3}, "censors every feedback"),
        ({"kind": "none", "lag": 3}, "unknown key(s) ['lag']"),
    ],
)
def test_bad_delay_specs_name_the_problem(spec, fragment):
    with pytest.raises(ConfigError, match=None) as err:
        make_delay(spec, where="delays.x")
    assert fragment in str(err.value)
