"""MaxInP and CoLSTIM (policies/contextual_dueling.py): the presets ``ours`` and ``authors``, the MLE's forms,
CoLSTIM's shared-perturbation coin, and what each states about self-duels (issue 50)."""

import math

import numpy as np
import pytest

from banditbench import params
from banditbench.api import Problem, self_duel_rule
from banditbench.errors import ConfigError
from banditbench.feedback import PreferenceFeedback
from banditbench.numerics.logistic_mle import fit_logistic, fit_logistic_bfgs
from banditbench.policies.contextual_dueling import CoLSTIM, MaxInP
from banditbench.simulation.job import run_cell


def _problem(T=400, d=3):
    return Problem(T, info={"dimension": d})


def test_ours_is_the_earlier_default_and_authors_the_codes_values():
    d, T = 3, 400
    root = math.sqrt(d * math.log(T))
    ours = MaxInP(_problem(T, d), np.random.default_rng(0))
    assert (ours.beta, ours.lam, ours.mle_ridge, ours.mle_loss) == (1.0, 1.0, 1.0, "sum")
    assert (ours.mle_solver, ours.mle_tolerance, ours.distinct_arms) == ("newton", 1e-8, False)
    theirs = MaxInP(_problem(T, d), np.random.default_rng(0), preset="authors")
    assert theirs.beta == pytest.approx(2 * root) and theirs.lam == 0.001
    assert theirs.mle_ridge == pytest.approx(2e-4) and theirs.mle_loss == "mean"
    assert (theirs.mle_solver, theirs.mle_tolerance) == ("bfgs", 1e-4)
    col = CoLSTIM(_problem(T, d), np.random.default_rng(0))
    assert (col.threshold, col.width, col.exploration_rounds, col.shared_perturbation) == (root, root, d, "never")
    col = CoLSTIM(_problem(T, d), np.random.default_rng(0), preset="authors")
    assert (col.threshold, col.exploration_rounds, col.shared_perturbation) == (root, 0, "coin")
    assert col.width == pytest.approx(2 * root) and col.lam == 0.001


def test_a_value_the_config_sets_wins_over_the_preset():
    pol = MaxInP(_problem(), np.random.default_rng(0), preset="authors", lam=1.0, beta=0.5, mle_solver="newton")
    assert (pol.lam, pol.beta, pol.mle_solver, pol.mle_loss) == (1.0, 0.5, "newton", "mean")
    assert pol.mle_ridge == pytest.approx(0.2)  # the authors' 2 kappa lambda, at the configured lambda
    pol = CoLSTIM(_problem(), np.random.default_rng(0), preset="authors", shared_perturbation="never", mle_ridge=3.0)
    assert (pol.shared_perturbation, pol.mle_ridge) == ("never", 3.0)
    for bad in ({"preset": "paper"}, {"mle_loss": "median"}, {"lam": "authors"}, {"shared_perturbation": "always"}):
        with pytest.raises(ConfigError, match=f"policy.params.{next(iter(bad))}"):
            params.check(CoLSTIM, bad, "policy.params")


def _cell(policy, params_, seed):
    return {
        "experiment": "g",
        "algorithm": policy,
        "delay_label": "d",
        "seed": seed,
        "horizon": 60,
        "budget": None,
        "environment": {"name": "synthetic_dueling", "params": {"dimension": 4, "n_arms": 6}},
        "policy": {"name": policy, "params": params_},
        "delay": {"kind": "geometric", "mean": 2, "window": 5},
    }


@pytest.mark.parametrize(
    "policy, seed, total",
    [
        ("maxinp", 0, 17.5647),
        ("maxinp", 1, 25.0496),
        ("colstim", 0, 40.6716),
        ("colstim", 1, 34.4993),
        ("vacdb", 0, 75.0214),
        ("vacdb", 1, 65.0066),
    ],
)
def test_the_defaults_play_as_before_the_presets(policy, seed, total):
    """The regret of short delayed runs at the defaults, recorded before the presets were added (commit 302f0a8):
    ``preset: ours`` changes no decision."""
    for given in ({}, {"preset": "ours"}):
        assert run_cell(_cell(policy, given, seed))[0]["regret"].sum() == pytest.approx(total, abs=1e-4)


def test_the_mean_loss_is_the_sum_loss_with_the_ridge_times_n_and_bfgs_finds_it():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    y = (rng.random(50) < 1 / (1 + np.exp(-X @ [1.0, -0.5, 0.2]))).astype(float)
    pol = MaxInP(_problem(T=50), np.random.default_rng(0), mle_loss="mean", mle_ridge=0.01, mle_tolerance=1e-10)
    pol.pairs[:], pol.labels[:], pol.arrived[:] = X, y, True
    newton = pol._fit().copy()
    np.testing.assert_allclose(newton, fit_logistic(X, y, 50 * 0.01, np.zeros(3), tol=1e-12), atol=1e-8)
    pol.mle_solver, pol.theta = "bfgs", np.zeros(3)
    np.testing.assert_allclose(pol._fit(), newton, atol=1e-6)
    # the authors' tolerance stops BFGS early: its gradient, not its distance to the root, is below 1e-4
    rough = fit_logistic_bfgs(X, y, 0.01, np.zeros(3), gtol=1e-4, loss_scale=1 / 50)
    z = X @ rough
    grad = X.T @ (1 / (1 + np.exp(-z)) - y) / 50 + 0.01 * rough
    assert np.abs(grad).max() < 1e-4
    assert fit_logistic_bfgs(X[:0], y[:0], 0.01, np.ones(3)).tolist() == [0.0, 0.0, 0.0]


def test_colstims_coin_shares_one_perturbation_while_p_t_is_one():
    """``ucb.py`` lines 63-68: with probability min(1, d log(dT) / sqrt(t)) every arm takes the first draw."""
    pol = CoLSTIM(_problem(T=100, d=3), np.random.default_rng(0), shared_perturbation="coin", threshold=100.0)
    eps = pol._perturbations(1, 6)  # p_1 = min(1, 3 log 300) = 1
    assert np.all(eps == eps[0])
    late = CoLSTIM(_problem(T=100, d=3), np.random.default_rng(0), shared_perturbation="coin", threshold=0.5)
    t = int((3 * math.log(300)) ** 2 * 100)  # p_t = 0.1
    shared = sum(np.all(e == e[0]) for e in (late._perturbations(t, 6) for _ in range(2000)))
    assert 120 < shared < 290  # about 10 % of 2000 draws
    assert np.abs(late._perturbations(t, 1000)).max() <= 0.5  # clipped
    never = CoLSTIM(_problem(T=100, d=3), np.random.default_rng(0))
    assert len(set(never._perturbations(1, 6).tolist())) == 6


def test_maxinp_with_one_candidate_duels_it_with_itself_unless_distinct_arms():
    arms = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
    for distinct, expect in ((False, (0, 0)), (True, (0, 2))):
        pol = MaxInP(_problem(T=10), np.random.default_rng(0), beta=0.0, distinct_arms=distinct)
        pol._fit = lambda: np.array([5.0, 0.0, 0.0])  # arm 0 beats every other with beta = 0: the only candidate
        assert pol.act(1, arms) == expect  # distinct: its widest partner, arm 2


def test_every_linear_dueling_policy_states_whether_it_may_self_duel():
    rule = {"distinct_arms": False}
    for cls in (MaxInP, CoLSTIM):
        assert self_duel_rule(cls, rule) == "self-duels allowed (distinct_arms: false)"
        assert self_duel_rule(cls, {"distinct_arms": True}) == "no self-duels (distinct_arms: true)"


def test_colstim_under_the_authors_preset_plays_from_the_first_round():
    pol = CoLSTIM(_problem(T=20, d=2), np.random.default_rng(1), preset="authors")
    arms = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    for t in range(1, 21):
        i, j = pol.act(t, arms)
        pol.observe(t + 1, [PreferenceFeedback(t, int(i == 0))])
    assert pol.arrived.all() and np.isfinite(pol.theta).all()
