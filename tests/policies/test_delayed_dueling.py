"""LDB-DF and its baselines (seed 000)."""

import math

import numpy as np
import pytest
from scipy import optimize

from banditbench.api import Problem
from banditbench.simulation.delays import make_delay
from banditbench.envs.dueling import SyntheticDueling
from banditbench.feedback import PreferenceFeedback
from banditbench.policies.delayed_dueling import LDBDF, LDBHeuristic, LDBHeuristicAll, LDBIgnore, LDBZero
from banditbench.policies.delayed_labels import DuelHistory
from banditbench.policies.linalg import InverseGram, fit_logistic, logistic_loss, sigmoid
from banditbench.simulation.job import run_cell
from banditbench.simulation.runner import simulate


def test_sherman_morrison_inverse_matches_direct_inverse():
    rng = np.random.default_rng(0)
    g = InverseGram(5, 0.7)
    for _ in range(200):
        g.update(rng.standard_normal(5), weight=rng.uniform(0.1, 2))
    np.testing.assert_allclose(g.inverse, np.linalg.inv(g.matrix), rtol=1e-8, atol=1e-10)
    rows = rng.standard_normal((4, 5))
    np.testing.assert_allclose(g.norms(rows), np.sqrt(np.diag(rows @ np.linalg.inv(g.matrix) @ rows.T)))


def test_newton_solver_finds_the_minimiser_for_labels_above_one():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 4))
    labels = rng.choice([0.0, 2.5], size=300)  # IPW labels y / rho exceed 1
    theta = fit_logistic(X, labels, 1.0, np.zeros(4), tol=1e-10)
    ref = optimize.minimize(logistic_loss, np.zeros(4), args=(X, labels, 1.0), method="BFGS", options={"gtol": 1e-9})
    np.testing.assert_allclose(theta, ref.x, atol=1e-5)
    grad = X.T @ (sigmoid(X @ theta) - labels) + theta
    assert np.abs(grad).max() < 1e-8


def test_ipw_weighted_label_is_unbiased_for_the_preference_probability():
    """E[omega_{s,t} y_s] = mu(f1 - f2) once t - s >= M (eq. 2), while the naive y 1{D <= M} is biased by rho."""
    rng = np.random.default_rng(2)
    model = make_delay({"kind": "geometric", "mean": 30, "window": 15})
    rho = model.rho
    n, p = 400_000, sigmoid(0.8)
    y = rng.random(n) < p
    arrived = model.arrives(model.sample(rng, n))
    history = DuelHistory(n, rho, 15)
    for _ in range(n):
        history.record_play()
    history.observe([PreferenceFeedback(s + 1, int(y[s])) for s in np.flatnonzero(arrived)])
    _, weighted = history.training_set("ipw", n + 15)
    se = np.sqrt(p * (1 / rho - p) / n)
    assert abs(weighted.mean() - p) < 4 * se
    naive = (y & arrived).mean()
    assert abs(naive - rho * p) < 0.01 and p - naive > 0.3


def test_ipw_mle_is_consistent_where_treating_missing_as_zero_is_not():
    """The paper's motivation (Sec. 3.1): the IPW loss recovers theta under heavy censoring."""
    rng = np.random.default_rng(3)
    d, n = 5, 40_000
    theta = rng.standard_normal(d)
    theta /= np.linalg.norm(theta)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (rng.random(n) < sigmoid(2 * X @ theta)).astype(float)
    model = make_delay({"kind": "geometric", "mean": 20, "window": 10})
    arrived = model.arrives(model.sample(rng, n))
    ipw = fit_logistic(X, np.where(arrived, y / model.rho, 0.0), 1.0, np.zeros(d))
    naive = fit_logistic(X, np.where(arrived, y, 0.0), 1.0, np.zeros(d))
    assert np.linalg.norm(ipw - 2 * theta) < 0.25
    assert np.linalg.norm(naive - 2 * theta) > 1.0


def _run(policy_cls, delay_spec, T=2500, seed=0, d=5, K=10, **params):
    env = SyntheticDueling(np.random.SeedSequence(seed), horizon=T, dimension=d, n_arms=K)
    delay = make_delay(delay_spec)
    problem = Problem(T, rho=delay.rho, window=delay.window, info=env.public_info())
    policy = policy_cls(problem, np.random.default_rng(seed + 100), **params)
    logs = simulate(env, policy, delay, T, np.random.default_rng(seed + 200))
    return env, policy, logs


@pytest.mark.parametrize(
    "delay, floor", [({"kind": "none"}, 0.95), ({"kind": "geometric", "mean": 20, "window": 10}, 0.9)]
)
def test_ldb_df_estimate_converges_to_theta(delay, floor):
    short = _run(LDBDF, delay, T=300)[1]
    env, policy, logs = _run(LDBDF, delay)
    cos = [p.theta @ env.theta / np.linalg.norm(p.theta) for p in (short, policy)]
    assert cos[1] > floor and cos[1] > cos[0]
    # and it learns: the last 500 rounds cost well under half the per-round regret of the first 100
    assert logs["regret"][-500:].mean() < 0.5 * logs["regret"][:100].mean()


def test_variants_coincide_without_delay():
    """With every feedback arriving next round (rho = 1) IPW, Zero, Ignore and Heuristic use the same data."""
    runs = [_run(cls, {"kind": "none"}, T=400)[2]["regret"] for cls in (LDBDF, LDBIgnore, LDBHeuristic, LDBZero)]
    for other in runs[1:]:
        np.testing.assert_allclose(runs[0], other)


def test_baselines_build_their_training_sets_as_described():
    problem = Problem(horizon=10, rho=0.5, window=5, info={"dimension": 2})
    rng = np.random.default_rng(0)
    arms = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    pols = [cls(problem, rng) for cls in (LDBDF, LDBIgnore, LDBHeuristic, LDBZero)]
    for pol in pols:
        for t in (1, 2, 3):
            pol.act(t, arms)
        pol.theta = np.array([0.3, -0.2])
        pol.observe(4, [PreferenceFeedback(2, 1)])
    X_df, a_df = pols[0].mle_data(4)
    assert X_df.shape[0] == 3 and list(a_df) == [0.0, 2.0, 0.0]  # y / rho for arrived, 0 pending
    X_ig, a_ig = pols[1].mle_data(4)
    assert X_ig.shape[0] == 1 and list(a_ig) == [1.0]  # arrived only
    X_h, a_h = pols[2].mle_data(4)
    expected = sigmoid(X_h @ pols[2].theta)
    assert a_h[1] == 1.0 and a_h[0] == pytest.approx(expected[0]) and a_h[2] == pytest.approx(expected[2])
    X_z, a_z = pols[3].mle_data(4)
    assert X_z.shape[0] == 3 and list(a_z) == [0.0, 1.0, 0.0]  # y' = y 1{arrived}, no reweighting
    # round 1's feedback (window 5) arrives by round 6 or never: at round 6 the heuristic drops it
    assert pols[2].mle_data(5)[0].shape[0] == 3
    X_h7, a_h7 = pols[2].mle_data(6)
    np.testing.assert_allclose(X_h7, pols[2].pairs[1:3])
    assert a_h7[0] == 1.0 and a_h7[1] == pytest.approx(sigmoid(pols[2].pairs[2] @ pols[2].theta))


def test_heuristic_imputes_only_rounds_that_can_still_arrive():
    """Feedback of round s arrives by s + max(M, 1) or never; the heuristic imputes exactly the rest."""
    rng = np.random.default_rng(4)
    for window in (None, 0, 1, 7):
        history = DuelHistory(60, 0.5, window)
        arrival = {}
        for s in range(1, 41):
            history.record_play()
            d = int(rng.integers(0, 12))
            if window is None or d <= window:
                arrival[s] = s + max(d, 1)
        t = 41
        history.observe([PreferenceFeedback(s, 1) for s, a in arrival.items() if a <= t])
        rows, labels = history.training_set("heuristic", t, predict=lambda r: np.full(len(r), 0.25))
        still_possible = {s for s in range(1, 41) if s not in arrival or arrival[s] > t}
        if window is not None:
            still_possible = {s for s in still_possible if t < s + max(window, 1)}
        imputed = {int(r) + 1 for r, a in zip(rows, labels) if a == 0.25}
        assert imputed == still_possible - {s for s, a in arrival.items() if a <= t}
        assert {int(r) + 1 for r, a in zip(rows, labels) if a == 1} == {s for s, a in arrival.items() if a <= t}


def test_the_two_heuristic_readings_impute_exactly_their_rounds():
    """``heuristic`` imputes the missing outcomes that can still arrive (rounds s with t < s + max(M, 1));
    ``heuristic_all`` imputes every missing outcome, censored ones included; both keep arrived labels."""
    history = DuelHistory(20, 0.5, window=3)
    for _ in range(10):
        history.record_play()
    history.observe([PreferenceFeedback(s, s % 2) for s in (2, 5, 9)])  # rounds 2, 5 and 9 arrived
    t = 11  # only rounds 9, 10 can still arrive (11 < s + 3)

    def predict(rows):
        return 0.5 + 0.01 * rows  # a distinct soft label per row

    for strategy, imputed in (("heuristic", {10}), ("heuristic_all", {1, 3, 4, 6, 7, 8, 10})):
        rows, labels = history.training_set(strategy, t, predict=predict)
        rounds = rows + 1
        assert set(rounds) == imputed | {2, 5, 9}
        soft = {int(s) for s, a in zip(rounds, labels) if s not in (2, 5, 9)}
        assert soft == imputed
        np.testing.assert_allclose(labels[np.isin(rounds, list(imputed))], 0.5 + 0.01 * (np.array(sorted(imputed)) - 1))
        np.testing.assert_array_equal(labels[np.isin(rounds, [2, 5, 9])], [0.0, 1.0, 1.0])
    # without a window nothing is known to be censored: the readings coincide
    history = DuelHistory(20, 0.5, window=None)
    for _ in range(6):
        history.record_play()
    history.observe([PreferenceFeedback(3, 1)])
    a, b = (history.training_set(k, 50, predict=lambda r: 0.1 * r) for k in ("heuristic", "heuristic_all"))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert len(a[0]) == 6


def test_heuristic_all_policy_keeps_censored_rounds_the_heuristic_drops():
    problem = Problem(horizon=12, rho=0.5, window=2, info={"dimension": 2})
    arms = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    pols = [cls(problem, np.random.default_rng(0)) for cls in (LDBHeuristic, LDBHeuristicAll)]
    for pol in pols:
        for t in range(1, 7):
            pol.act(t, arms)
        pol.theta = np.array([0.3, -0.2])
        pol.observe(7, [PreferenceFeedback(6, 1)])
    (X_h, a_h), (X_a, a_a) = (pol.mle_data(7) for pol in pols)
    assert X_h.shape[0] == 1 and list(a_h) == [1.0]  # rounds 1-5 are censored (7 >= s + 2): dropped
    assert X_a.shape[0] == 6 and a_a[5] == 1.0  # ... and imputed by the second reading
    np.testing.assert_allclose(a_a[:5], sigmoid(pols[1].pairs[:5] @ pols[1].theta))


def test_zero_filled_label_is_biased_towards_the_second_arm():
    """Sec. 3.1: E[y'] = rho mu(Delta f) < mu(Delta f); the zero-filled MLE shrinks the preference and
    flips it where mu(Delta f) < 1 / 2 ... / rho (Monte Carlo, fixed seed)."""
    rng = np.random.default_rng(5)
    model = make_delay({"kind": "geometric", "mean": 20, "window": 10})
    n = 200_000
    history = DuelHistory(n, model.rho, 10)
    for _ in range(n):
        history.record_play()
    p = sigmoid(0.5)
    y = rng.random(n) < p
    arrived = model.arrives(model.sample(rng, n))
    history.observe([PreferenceFeedback(s + 1, int(y[s])) for s in np.flatnonzero(arrived)])
    t = n + 11  # every outcome has arrived or is censored
    zero = history.training_set("zero", t)[1].mean()
    ipw = history.training_set("ipw", t)[1].mean()
    assert abs(ipw - p) < 0.01  # unbiased
    assert abs(zero - model.rho * p) < 0.01 and p - zero > 0.25  # biased down by the factor rho
    # the zero-filled MLE of a one-dimensional preference therefore has the wrong sign: logit(rho p) < 0
    assert np.log(zero / (1 - zero)) < 0 < np.log(ipw / (1 - ipw))


def test_design_matrix_counts_every_played_pair_at_play_time():
    env, policy, _ = _run(LDBIgnore, {"kind": "geometric", "mean": 50, "window": 5}, T=200)
    pairs = policy.pairs[:200]
    expected = policy.lam / policy.kappa_mu * np.eye(5) + pairs.T @ pairs
    np.testing.assert_allclose(policy.gram.matrix, expected, atol=1e-9)
    assert policy.history.arrived.sum() < 100  # most feedback never arrived, V still has all 200 pairs


def test_theory_beta_is_equation_17():
    problem = Problem(horizon=100, rho=0.5, window=8, info={"dimension": 4})
    pol = LDBDF(problem, np.random.default_rng(0), beta="theory", lam=2.0, kappa_mu=0.1, delta=0.05)
    t = 50
    expected = math.sqrt(2 * math.log(20) + 4 * math.log(1 + t * 4 * 0.1 / (4 * 2.0))) + 8 * 2 + math.sqrt(0.2)
    assert pol.beta_t(t) == pytest.approx(expected)


def test_learning_policies_beat_random_pairs_under_delay():
    cell = {
        "experiment": "e",
        "algorithm": "a",
        "delay_label": "g",
        "horizon": 800,
        "budget": None,
        "environment": {"name": "synthetic_dueling", "params": {"dimension": 8, "n_arms": 10}},
        "delay": {"kind": "geometric", "mean": 20, "window": 50},
    }
    totals = {}
    for name in ("ldb_df", "ldb_ignore", "ldb_heuristic", "ldb_zero", "random_pair"):
        totals[name] = np.mean(
            [run_cell(dict(cell, seed=s, policy={"name": name, "params": {}}))[0]["regret"].sum() for s in range(3)]
        )
    for name in ("ldb_df", "ldb_ignore", "ldb_heuristic"):
        assert totals[name] < 0.75 * totals["random_pair"], totals
