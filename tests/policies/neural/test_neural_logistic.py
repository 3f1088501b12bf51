"""Neural logistic bandits (seed 002): the synthetic environment, NeuralLog-UCB/TS, NCBF-UCB and the
linear logistic baselines against a transcription of their reference implementation."""

import math

import numpy as np
import pytest
import torch

from banditbench.api import Problem
from banditbench.envs.logistic import SyntheticLogistic, latent_reward
from banditbench.errors import ConfigError
from banditbench.params import check as check_params
from banditbench.feedback import RewardFeedback
from banditbench.numerics.sigmoid import sigmoid
from banditbench.policies.logistic import AdaOFUECOLog, LogisticUCB1
from banditbench.policies.neural.logistic import R, NeuralLogTS2, NeuralLogUCB1, NeuralLogUCB2
from banditbench.simulation.job import run_cell
from conftest import load_script
from perturb import assert_same_or_near_tie

NEURAL = ("neurallog_ucb1", "neurallog_ucb2", "neurallog_ts1", "neurallog_ts2", "ncbf_ucb")


def _reference():
    return load_script("benchmarks/logistic_reference.py")


def _cell(policy, seed=0, T=500, env=None, **params):
    return {
        "experiment": "e",
        "algorithm": policy,
        "delay_label": "none",
        "horizon": T,
        "budget": None,
        "seed": seed,
        "delay": {"kind": "none"},
        "environment": {
            "name": "synthetic_logistic",
            "params": env or {"latent": "h1", "dimension": 10, "n_contexts": None},
        },
        "policy": {"name": policy, "params": params},
    }


# --- environment ------------------------------------------------------------------
def test_latent_functions_follow_their_formulas():
    rng = np.random.default_rng(0)
    x, theta, Theta = rng.uniform(-1, 1, (7, 4)), rng.uniform(-1, 1, 4), rng.uniform(-1, 1, (4, 4))
    z = x @ theta
    expected = {
        "h1": 0.2 * z**4,
        "h2": 20 * np.cos(z),
        "h3": 5 * np.array([v @ Theta @ v for v in x]),
        "h4": 10 * z**2,
        "h5": np.array([v @ Theta.T @ Theta @ v for v in x]),
        "h6": np.cos(3 * z),
        "linear": z,
    }
    for name, value in expected.items():
        np.testing.assert_allclose(latent_reward(name, x, theta, Theta), value, rtol=1e-12)


def test_rewards_are_bernoulli_with_mean_mu_of_h_and_regret_is_in_mu_units():
    T = 6000
    env = SyntheticLogistic(np.random.SeedSequence(5), horizon=T, latent="h6", dimension=6, n_arms=5)
    rewards, means, regrets = np.zeros(T), np.zeros(T), np.zeros(T)
    for t in range(1, T + 1):
        arms = env.context(t)
        a = t % 5
        mu = sigmoid(latent_reward("h6", arms, env.theta, env.Theta))
        fb, truth = env.step(t, a)
        rewards[t - 1], means[t - 1], regrets[t - 1] = fb.reward, mu[a], truth["regret"]
        assert truth["regret"] == pytest.approx(mu.max() - mu[a])
    z = (rewards - means).sum() / math.sqrt((means * (1 - means)).sum())
    assert abs(z) < 4 and set(np.unique(rewards)) == {0.0, 1.0}
    assert 0.1 < means.mean() < 0.9 and regrets.min() >= 0


def test_context_pool_limits_the_distinct_vectors_and_keeps_each_round_distinct():
    for n_contexts, expected in ((10, 10), (50, 50), (None, 300 * 5)):
        env = SyntheticLogistic(np.random.SeedSequence(1), horizon=300, n_contexts=n_contexts)
        sets = np.stack([env.context(t) for t in range(1, 301)])
        assert len(np.unique(sets.reshape(-1, 20), axis=0)) == expected
        assert all(len(np.unique(s, axis=0)) == 5 for s in sets)
    cube = SyntheticLogistic(np.random.SeedSequence(1), horizon=5, contexts="cube").context(1)
    sphere = SyntheticLogistic(np.random.SeedSequence(1), horizon=5, contexts="sphere").context(1)
    assert np.abs(cube).max() <= 1 and np.linalg.norm(cube, axis=1).min() > 1.2
    np.testing.assert_allclose(np.linalg.norm(sphere, axis=1), 1.0)
    with pytest.raises(ConfigError, match="environment.params.n_contexts"):
        SyntheticLogistic(np.random.SeedSequence(1), horizon=5, n_contexts=3)
    with pytest.raises(ConfigError, match="environment.params.latent"):
        SyntheticLogistic(np.random.SeedSequence(1), horizon=5, latent="h7")


# --- NeuralLog: equations ---------------------------------------------------------------
def _feed(policy, T, seed=0, d=4, K=3):
    """Play ``T`` rounds against h1 rewards; return the played features phi_i and the contexts."""
    rng = np.random.default_rng(seed)
    phis, xs = [], []
    for t in range(1, T + 1):
        arms = rng.uniform(-1, 1, (K, d))
        a = policy.act(t, arms)
        phis.append(policy.pending[t][0].copy())
        xs.append(arms[a])
        r = float(rng.random() < sigmoid(0.2 * (arms[a].sum()) ** 4))
        policy.observe(t + 1, [RewardFeedback(t, r)])
    policy.act(T + 1, rng.uniform(-1, 1, (K, d)))  # absorbs round T
    return np.array(phis), np.array(xs)


def test_adaptive_lambda_iota_and_nu_follow_equations_1_to_3():
    problem = Problem(30, info={"dimension": 4})
    pol = NeuralLogUCB1(
        problem,
        np.random.default_rng(0),
        width=6,
        lam="adaptive",
        radius="theory",
        confidence="full",
        gradient_at="initial",
        gradient_scale="inverse_sqrt_width",
        regulariser="ntk",
        delta=0.1,
        norm_bound=2.0,
        c1=0.5,
        c_nu=0.7,
        kappa=5.0,
        train_every=1,
        train_steps=2,
    )
    L, S, delta, C1, kappa = 2, 2.0, 0.1, 0.5, 5.0
    lam0 = 8 * math.sqrt(2) * C1 * math.sqrt(L) / S * math.log(4 / delta)
    assert pol.lam0 == pytest.approx(lam0)
    phis, _ = _feed(pol, 12)
    # the features are g(x; theta_0) / sqrt(m) (the theory's choices)
    t = len(phis)
    G = phis.T @ phis
    log_det = np.linalg.slogdet(np.eye(len(G)) + R / lam0 * G)[1]  # eq. 2's log-determinant
    lt = math.log(4 * t**2 / delta)
    lam_t = 64 / S**2 * log_det * lt + 16 * C1**2 * L / (S**2 * lam0) * lt**2  # eq. 3
    iota = 16 * math.sqrt(log_det * lt) + 8 * C1 * math.sqrt(L / lam0) * lt  # eq. 2
    nu1 = 0.7 * (1 + math.sqrt(L) * S + L * S**2) * iota + 1  # eq. 1
    assert pol.log_det_design.log_det == pytest.approx(log_det, rel=1e-9)
    assert pol.lam_t == pytest.approx(lam_t, rel=1e-9)
    assert pol.conf_radius == pytest.approx(R * math.sqrt(kappa) * nu1, rel=1e-9)
    # V_t = sum phi phi^T + kappa lam_t I (line 6), refreshed with the training every round here
    np.testing.assert_allclose(
        pol.matrix.gram.inverse, np.linalg.inv(G + kappa * lam_t * np.eye(len(G))), rtol=1e-7, atol=1e-12
    )
    assert pol.trainer.lam == pytest.approx(6 * lam_t)  # (m lam_t / 2)||theta - theta_0||^2
    assert torch.equal(pol.trainer.centre, pol.net.theta0)


def test_ucb2_weights_w_by_the_networks_variance_and_uses_nu2():
    problem = Problem(30, info={"dimension": 4})
    pol = NeuralLogUCB2(
        problem,
        np.random.default_rng(1),
        width=6,
        lam=2.0,
        radius="theory",
        confidence="full",
        train_every=1,
        train_steps=3,
        delta=0.2,
    )
    weights = []
    rng = np.random.default_rng(7)
    phis = []
    last = None
    for t in range(1, 11):
        arms = rng.uniform(-1, 1, (3, 4))
        a = pol.act(t, arms)
        if t > 1:  # round t - 1 was absorbed with the parameters trained at round t
            with torch.no_grad():
                f = float(pol.net.forward(pol.trainer.current, torch.from_numpy(last)))
            weights.append(sigmoid(f) * (1 - sigmoid(f)))
        phis.append(pol.pending[t][0].copy())
        last = arms[a].copy()
        pol.observe(t + 1, [RewardFeedback(t, float(t % 3 == 0))])
    Phi = np.array(phis[:-1])
    W = (Phi.T * np.array(weights)) @ Phi + 2.0 * np.eye(Phi.shape[1])
    np.testing.assert_allclose(pol.matrix.gram.inverse, np.linalg.inv(W), rtol=1e-7, atol=1e-12)
    log_det = np.linalg.slogdet(np.eye(Phi.shape[1]) + R / 2.0 * Phi.T @ Phi)[1]
    lt = math.log(4 * 9**2 / 0.2)
    iota = 16 * math.sqrt(log_det * lt) + 8 * math.sqrt(2 / 2.0) * lt
    assert pol.conf_radius == pytest.approx((1 + math.sqrt(2) + 2) * iota + 1, rel=1e-9)  # eq. 4, no kappa


def test_order_radius_diagonal_log_det_and_practical_regulariser():
    problem = Problem(30, info={"dimension": 4})
    pol = NeuralLogTS2(problem, np.random.default_rng(2), width=6, lam=0.5, norm_bound=1.5, confidence="diagonal")
    phis, _ = _feed(pol, 8)
    hadamard = np.log1p(R / 0.5 * (phis**2).sum(0)).sum()
    assert pol.log_det_design.log_det == pytest.approx(hadamard, rel=1e-10)
    assert pol.conf_radius == pytest.approx(1.5**2 * (math.sqrt(hadamard) + 1 / math.sqrt(0.5)), rel=1e-10)
    assert pol.trainer.lam == pytest.approx(2 * 0.5) and not pol.trainer.centre.any()  # lam ||theta||^2


def test_bad_parameters_name_their_key():
    for bad, key in (
        ({"lam": "often"}, "policy.params.lam"),
        ({"confidence": "sparse"}, "policy.params.confidence"),
        ({"delta": 1.5}, "policy.params.delta"),
        ({"nu": -1}, "policy.params.nu"),
        ({"mean": "median"}, "policy.params.mean"),
    ):
        with pytest.raises(ConfigError, match=f"{key}: must be "):
            check_params(NeuralLogUCB1, bad, "policy.params")  # what runner.build checks first
    with pytest.raises(ConfigError, match=r"^experiments\.e\.algorithms\.ncbf_ucb\.params\.lam: NCBF-UCB"):
        run_cell(_cell("ncbf_ucb", T=3, lam="adaptive"))


# --- NeuralLog: behaviour -------------------------------------------------------------
@pytest.mark.parametrize("policy", NEURAL)
def test_each_variant_learns_h1(policy):
    """Last-quarter regret per round well below uniform random, on two fixed seeds (d = 10, T = 500)."""
    T, ours, rand = 500, [], []
    for seed in (0, 1):
        regret = run_cell(_cell(policy, seed=seed, T=T, train_every=25, train_steps=30))[0]["regret"]
        ours.append(regret[-T // 4 :].mean())
        rand.append(run_cell(_cell("random_arm", seed=seed, T=T))[0]["regret"][-T // 4 :].mean())
    assert np.mean(ours) < 0.5 * np.mean(rand)


def test_same_cell_same_bytes_and_full_and_diagonal_both_run():
    a = run_cell(_cell("neurallog_ts1", T=120, train_every=20, train_steps=5))[0]
    b = run_cell(_cell("neurallog_ts1", T=120, train_every=20, train_steps=5))[0]
    assert all(np.array_equal(a[k], b[k]) for k in a)
    full = run_cell(_cell("neurallog_ucb2", T=120, confidence="full", train_every=20, train_steps=5))[0]
    diag = run_cell(_cell("neurallog_ucb2", T=120, train_every=20, train_steps=5))[0]
    assert not np.array_equal(full["regret"], diag["regret"])
    with pytest.raises(ConfigError, match=r"policy\.params\.confidence: 'full' keeps 2 p x p matrices"):
        NeuralLogUCB1(Problem(10, info={"dimension": 500}), np.random.default_rng(0), width=20, confidence="full")


# --- linear baselines against the reference transcription --------------------------------
def _index_of(policy):
    """Wrap ``policy._choose`` to keep the index it maximises (``seen["ucb"]``), computed as it does."""
    seen, choose = {}, policy._choose

    def keeping(t, arms, theta, gram, radius):
        seen["ucb"] = sigmoid(arms @ theta) + policy.nu * radius * gram.norms(arms)
        return choose(t, arms, theta, gram, radius)

    policy._choose = keeping
    return seen


def _play_both(ours, ref, T, seed, rounding, rtol):
    """Both policies on one environment, fed one history: each round both choose, the reference's
    choice is played and both learn it.  Our index must equal the reference's to ``rtol`` (relative to
    its largest value) every round, and our choice be the reference's except in a near-tie (its two
    best indices within 2 ``rtol``), e.g. round 1 of ECOLog: theta = 0 and unit arms, an exact tie up to
    rounding.  The reference gets ``rounding(arms)``: in the perturbed variant other last bits.
    Returns the rounds where the choices differed."""
    env = SyntheticLogistic(
        np.random.SeedSequence(seed),
        horizon=T,
        latent="linear",
        dimension=6,
        n_arms=5,
        contexts="sphere",
        n_contexts=None,
    )
    index, differ, fb = _index_of(ours), [], None
    for t in range(1, T + 1):
        arms = env.context(t)
        if fb is not None:
            ours.observe(t, [fb])
        a = ours.act(t, arms)
        theirs = rounding(arms)
        b = ref.pull(list(theirs))
        np.testing.assert_allclose(
            index["ucb"], ref.values, rtol=0, atol=rtol * np.abs(ref.values).max(), err_msg=f"round {t}"
        )
        assert_same_or_near_tie(a, b, ref.values, 2 * rtol, where=f"round {t}")
        if a != b:
            differ.append(t)
            ours.pending[t] = np.array(arms[b])  # both learn the arm that was played
        fb, _ = env.step(t, b)
        ref.learn(theirs[b], fb.reward)
    ours.observe(T + 1, [fb])
    return differ


@pytest.mark.parametrize("S", [1.0, 3.0])
def test_linear_baselines_make_the_reference_choices(S, rounding):
    """The same choices as the transcription of the authors' code except in near-ties, the same estimates
    to rounding (Logistic-UCB-1: indices to 1e-11; ECOLog: to 1e-6, the reference's projection being a
    bounded scalar search to 1e-5 in the multiplier), both fed the reference's choices."""
    ref = _reference()
    T, d = 300, 6
    problem = Problem(T, info={"dimension": d})
    ucb = LogisticUCB1(problem, np.random.default_rng(3), norm_bound=S)
    ref_ucb = ref.RefLogisticUCB1(d, S, 1.0, 0.05, np.random.default_rng(3).standard_normal(d))
    assert len(_play_both(ucb, ref_ucb, T, 4, rounding, rtol=1e-11)) <= 3
    np.testing.assert_allclose(ucb.theta, ref_ucb.theta, rtol=1e-9, atol=1e-12)
    eco = AdaOFUECOLog(problem, np.random.default_rng(0), norm_bound=S, strict=False)
    ref_eco = ref.RefECOLog(d, S, 0.05, strict=False)
    assert len(_play_both(eco, ref_eco, T, 5, rounding, rtol=1e-6)) <= 3
    np.testing.assert_allclose(eco.theta, ref_eco.theta, rtol=1e-5, atol=1e-7)
    assert eco.cum_loss == pytest.approx(ref_eco.cum_loss, rel=1e-5, abs=1e-6)


def test_ecolog_projection_is_the_reference_ellipsoid_projection_from_either_warm_start():
    from scipy.linalg import sqrtm

    ref = _reference()
    d, S = 6, 1.0
    rng = np.random.default_rng(7)
    eco = AdaOFUECOLog(Problem(10, info={"dimension": d}), np.random.default_rng(0), norm_bound=S)
    for _ in range(12):
        eco.vtilde.update(rng.standard_normal(d), rng.uniform(0.05, 0.25))
    V = eco.vtilde.matrix
    root, root_inv = np.real(sqrtm(V)), np.real(sqrtm(np.linalg.inv(V)))
    evals, evecs = np.linalg.eigh(V)
    for scale in (1.5, 4.0, 30.0):
        theta = rng.standard_normal(d)
        theta *= scale / np.linalg.norm(theta)
        expected = root_inv @ ref._project_ellipsoid(root @ theta, V, S)  # the reference works in z = V^1/2 theta
        for warm in (0.0, 1e-3, 50.0):  # left of the root, near it, right of it
            eco._dual = warm
            ours = evecs @ eco._project(evecs.T @ theta, evals)
            assert np.linalg.norm(ours) == pytest.approx(S, rel=1e-9)
            np.testing.assert_allclose(ours, expected, atol=1e-5)


def test_ecolog_edge_cases_follow_the_reference_a_zero_arm_and_no_gradient_steps(rounding):
    """A zero arm (no direction: the general path from the start) and S = 0.1, where the reference's
    iteration count ceil((5/4 + S/8) log(2 (2 + S) S^2 t)) is negative for small t (no step at all).
    Both learn our choice; the choices agree except in near-ties (indices to 1e-6), the estimates to the
    reference's 1e-5 search; the reference sees ``rounding(arms)``."""
    ref = _reference()
    d, rng = 5, np.random.default_rng(11)
    for S in (0.1, 1.0):
        eco = AdaOFUECOLog(Problem(40, info={"dimension": d}), np.random.default_rng(0), norm_bound=S, strict=False)
        ref_eco = ref.RefECOLog(d, S, 0.05, strict=False)
        index = _index_of(eco)
        for t in range(1, 41):
            arms = rng.standard_normal((4, d))
            if t % 7 == 0:
                arms[:] = 0.0  # every arm the zero vector
            a, b = eco.act(t, arms), ref_eco.pull(list(rounding(arms)))
            np.testing.assert_allclose(
                index["ucb"],
                ref_eco.values,
                rtol=0,
                atol=1e-6 * np.abs(ref_eco.values).max(),
                err_msg=f"S = {S}, round {t}",
            )
            assert_same_or_near_tie(a, b, ref_eco.values, 2e-6, where=f"S = {S}, round {t}")
            x, r = eco.pending[t], float(rng.random() < 0.5)
            eco.observe(t + 1, [RewardFeedback(t, r)])
            ref_eco.learn(rounding(x), r)
            np.testing.assert_allclose(eco.theta, ref_eco.theta, rtol=1e-5, atol=1e-6)  # reference: 1e-5 search


def test_ecolog_radius_is_clamped_at_zero_like_the_reference():
    """A cumulative loss difference below the radius' other terms gives radius 0 (greedy on theta), as in
    the reference's `res_square = max(0, res_square)`: the same arm as the transcription, no error."""
    ref = _reference()
    d, rng = 5, np.random.default_rng(2)
    eco = AdaOFUECOLog(Problem(10, info={"dimension": d}), np.random.default_rng(0), norm_bound=1.0, strict=False)
    ref_eco = ref.RefECOLog(d, 1.0, 0.05, strict=False)
    eco.theta = ref_eco.theta = rng.standard_normal(d)
    eco.cum_loss = ref_eco.cum_loss = -1e3
    assert eco._radius() == 0.0
    arms = rng.standard_normal((6, d))
    greedy = int(np.argmax(arms @ eco.theta))
    assert eco.act(1, arms) == ref_eco.pull(list(arms)) == greedy


def test_linear_baselines_learn_a_linear_latent_and_ecolog_stops_when_its_condition_fails():
    env = {"latent": "linear", "dimension": 10, "contexts": "sphere", "n_contexts": None}
    q = 250
    rand = run_cell(_cell("random_arm", T=1000, env=env))[0]["regret"][-q:].mean()
    for policy, params in (("logistic_ucb1", {"norm_bound": 3.0}), ("ada_ofu_ecolog", {"norm_bound": 3.0})):
        regret = run_cell(_cell(policy, T=1000, env=env, **params))[0]["regret"]
        assert regret[-q:].mean() < 0.5 * rand
    with pytest.raises(RuntimeError, match="strict: false"):
        run_cell(_cell("ada_ofu_ecolog", seed=1, T=2000, env={"latent": "h1"}))
