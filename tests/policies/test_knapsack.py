"""Seed 004 (preference-based linear contextual bandits with knapsacks): environments, LP, policies."""

import numpy as np
import pytest

from banditbench import params
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.simulation.delays import make_delay
from banditbench.errors import ConfigError
from banditbench.api import NULL
from banditbench.data.car_oracle import CLASSES, action_features
from banditbench.data.files import load_npz
from banditbench.envs.knapsack import CarModeration, SyntheticPbBwK, _DuelKnapsack, offline_lp
from banditbench.policies.knapsack import (
    ConstrainedDuelingEXP3,
    IdealDuel,
    OptimisticDuel,
    RandomizedDuel,
    knapsack_lp_value,
)
from banditbench.policies.linalg import fit_logistic
from banditbench.simulation.job import run_cell
from banditbench.simulation.runner import build, simulate
from conftest import ROOT
from helpers import make


def cell(env, policy, budget, seed, horizon, env_params=None, delay=None):
    return {
        "experiment": "test",
        "algorithm": policy,
        "delay_label": "d",
        "seed": seed,
        "horizon": horizon,
        "budget": budget,
        "environment": {"name": env, "params": env_params or {}},
        "policy": {"name": policy, "params": {}},
        "delay": delay or {"kind": "none"},
    }


# --- the offline LP (4)-(6) -------------------------------------------------------------


def test_lp_value_on_hand_solvable_instances():
    # one context, r = (0.3, 1.0), w = (0.1, 0.5), b = 0.4: per action the budget is 0.2, so
    # mix (0,0) and (1,1) with weight p on (1,1): 0.2 (1-p) + 1.0 p = 0.4  ->  p = 1/4,
    # v* = 0.6 * 3/4 + 2.0 * 1/4 = 0.95, multiplier (1.0 - 0.3) / (0.5 - 0.1) = 1.75.
    r, w = np.array([[0.3, 1.0]]), np.array([[0.1, 0.5]])
    for pairs in ("all", "symmetric"):
        sol = offline_lp(np.ones(1), r, w, 0.4, pairs=pairs)
        assert sol.value == pytest.approx(0.95, abs=1e-8)
        assert sol.multiplier == pytest.approx(1.75, abs=1e-6)
    # b = 0.1 is below the cheapest duel (0.2): half the rounds (0,0), half null -> v* = 0.3
    sol = offline_lp(np.ones(1), r, w, 0.1, pairs="all")
    assert sol.value == pytest.approx(0.3, abs=1e-8)
    assert sol.policy[0, -1] == pytest.approx(0.5, abs=1e-6)
    # two contexts with probabilities (1/2, 1/2); context A: r = (1, 0) at cost (1, 0), context B:
    # r = (1, 0) at cost (0.25, 0).  Reward per unit cost is 1 in A and 4 in B, so the budget
    # b = 0.5 first buys B's duel (1,1) (cost 1/2 * 0.5 = 0.25) and then A's at 1/2 * 2 per unit:
    # v* = 1/2 * 2 + 1/2 * 2 * 0.25 = 1.25.
    r2, w2 = np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.25, 0.0]])
    assert offline_lp(np.array([0.5, 0.5]), r2, w2, 0.5, pairs="all").value == pytest.approx(1.25, abs=1e-8)


def test_symmetric_lp_equals_the_full_pair_lp():
    rng = np.random.default_rng(3)
    for _ in range(5):
        n, k = 30, 5
        r, w, p = rng.random((n, k)), rng.random((n, k)), rng.dirichlet(np.ones(n))
        b = rng.uniform(0.05, 1.5)
        full = offline_lp(p, r, w, b, pairs="all", method="highs")
        sym = offline_lp(p, r, w, b)
        assert sym.value == pytest.approx(full.value, abs=1e-7)
        assert sym.multiplier == pytest.approx(full.multiplier, abs=1e-6)


def test_synthetic_v_star_matches_the_paper_instance():
    # b = 300 / 2000 = 0.15: duel (0,0) costs 0.1; the rest, 0.05, moves mass from (0,0) to (3,3)
    # at (1.4 - 0.2) / (1.4 - 0.1) reward per unit cost.
    env = SyntheticPbBwK(np.random.SeedSequence(0), horizon=2000, budget=300)
    assert env.v_star == pytest.approx(0.2 + 0.05 * 1.2 / 1.3, abs=1e-9)


# --- budget accounting -------------------------------------------------------------------


@pytest.mark.parametrize("policy_cls", [OptimisticDuel, RandomizedDuel, ConstrainedDuelingEXP3])
def test_budget_overspend_is_less_than_one_round_and_null_after_exhaustion(policy_cls):
    T, B = 600, 60.0
    env = SyntheticPbBwK(np.random.SeedSequence(1), horizon=T, budget=B)
    policy = make(policy_cls, env)
    logs = simulate(env, policy, make_delay({"kind": "none"}), T, np.random.default_rng(0))
    tau = env.tau
    assert tau is not None and tau < T
    spend = np.cumsum(logs["cost"])
    assert spend[tau - 2] < B <= spend[tau - 1]  # tau is the first round reaching B
    assert env.spent - B < logs["cost"][tau - 1] <= 2.0  # overspend < that round's charge
    assert env.spent == pytest.approx(spend[-1])
    after = slice(tau, T)
    assert np.all(logs["reward"][after] == 0) and np.all(logs["cost"][after] == 0)
    assert np.all(logs["active"][after] == 0) and np.all(logs["active"][:tau] == 1)
    assert np.allclose(logs["regret"][after], env.v_star)
    assert np.allclose(logs["regret"], env.v_star - logs["reward"])
    # the policy sees the empty knapsack and plays the null action ...
    ctx = env.context(T)
    assert ctx.stopped and policy.act(T, ctx) == NULL
    # ... and the environment ignores anything else once the budget is gone
    fb, truth = env.step(T, (3, 3))
    assert fb is None and truth["reward"] == 0 and truth["cost"] == 0
    assert env.summary()["tau"] == tau and env.summary()["exhausted"] == 1.0


def test_null_action_before_exhaustion_costs_nothing_and_gives_no_feedback():
    env = SyntheticPbBwK(np.random.SeedSequence(2), horizon=10, budget=5)
    env.context(1)
    fb, truth = env.step(1, NULL)
    assert fb is None and truth == {"reward": 0.0, "regret": env.v_star, "cost": 0.0, "active": 1.0}
    with pytest.raises(ValueError):
        env.step(2, (0, 4))


def test_one_environment_serves_both_algorithm_families_in_one_experiment():
    from banditbench.configuration.grid import load_grid

    spec = {
        "environment": {"name": "pbbwk_synthetic"},
        "horizon": 50,
        "seeds": 1,
        "budgets": [20],
        "algorithms": {"alg1": {"policy": "pblincbwk_alg1"}, "ideal": {"policy": "lincbwk_ideal"}},
        "delays": {"none": {"kind": "none"}},
    }
    grid = load_grid({"experiments": {"k": spec}})
    fbs = [build(grid.cell("k", alg, "none", "20", 0))[0].feedback_kind for alg in ("alg1", "ideal")]
    assert fbs == ["preference_cost", "reward_cost"]
    with pytest.raises(ConfigError, match="gives 'preference_cost' or 'reward_cost'"):
        load_grid({"experiments": {"k": dict(spec, algorithms={"x": {"policy": "ldb_df"}})}})


def test_both_feedback_variants_draw_the_same_contexts_and_costs():
    pref = SyntheticPbBwK(np.random.SeedSequence(4), horizon=50, budget=1000)
    absolute = SyntheticPbBwK(np.random.SeedSequence(4), horizon=50, budget=1000, feedback_kind="reward_cost")
    for t in range(1, 51):
        pref.context(t), absolute.context(t)
        fp, _ = pref.step(t, (t % 4, 3))
        fa, _ = absolute.step(t, (t % 4, 3))
        assert np.array_equal(fp.costs, fa.costs)
        assert fp.y in (0, 1) and fa.rewards.shape == (2,)


# --- policies ----------------------------------------------------------------------------


class _CapturingAlg1(OptimisticDuel):
    def _choose(self, t, context):
        out = super()._choose(t, context)
        self.last_w = out[2]
        return out


def test_virtual_queue_follows_recursion_12_with_the_optimistic_cost():
    T = 300
    env = SyntheticPbBwK(np.random.SeedSequence(5), horizon=T, budget=150)
    policy = make(_CapturingAlg1, env, beta_w=0.5)
    q_prev = 0.0
    for t in range(1, T + 1):
        ctx = env.context(t)
        if ctx.stopped:
            break
        # W~ of every action recomputed from scratch: omega_hat = Psi^-1 u, ||psi||_{Psi^-1}
        psi_gram = policy.cost.gram.matrix
        omega = np.linalg.solve(psi_gram, policy.cost.u)
        norms = np.sqrt(np.einsum("ij,ji->i", ctx.psi, np.linalg.solve(psi_gram, ctx.psi.T)))
        x, y = policy.act(t, ctx)
        expected_w = ctx.psi[x] @ omega + ctx.psi[y] @ omega - 0.5 * (norms[x] + norms[y])
        assert policy.last_w == pytest.approx(expected_w, abs=1e-9)
        assert policy.Q == pytest.approx(max(q_prev + expected_w - 150 / T, 0.0), abs=1e-9)
        assert policy.queue_trace[t] == policy.Q
        q_prev = policy.Q
        fb, _ = env.step(t, (x, y))
        policy.observe(t + 1, [fb])
    assert policy.queue_trace[1:t].max() > 0  # the queue was actually used


class _RandomContexts(_DuelKnapsack):
    """Well-conditioned contextual instance: 40 contexts, 5 actions with random features."""

    def __init__(self, seed_seq, *, horizon, budget):
        rng = np.random.default_rng(11)
        phi = rng.standard_normal((40, 5, 3))
        phi /= np.linalg.norm(phi, axis=-1, keepdims=True)
        self.theta_star, self.omega_star = np.array([2.0, -1.5, 1.0]), np.array([0.3, 0.2, -0.1])
        r, w = phi @ self.theta_star, phi @ self.omega_star
        super().__init__(seed_seq, horizon=horizon, budget=budget, noise="gaussian", noise_std=0.1)
        self._setup(phi, phi, r, w, np.full(40, 1 / 40))


def test_algorithm1_estimates_converge_on_an_easy_instance():
    """d = 3, 40 contexts x 5 actions with random unit features, budget never binding.

    ``omega_hat`` (least squares on both actions) converges to ``omega*``.  ``theta_hat`` is the
    exact minimiser of (10), and its direction converges to ``theta*``; its norm stays shrunk by
    the ridge term (lam = 1) because optimism duels near-ties (small ``phi^-``), so the test
    checks direction and ranking, not ``||theta_hat - theta*||``.
    """
    from scipy.optimize import minimize

    from banditbench.policies.linalg import logistic_loss

    T = 1500
    cosines = {100: [], T: []}
    for seed in range(3):
        env = _RandomContexts(np.random.SeedSequence(seed), horizon=T, budget=10 * T)  # never binding
        policy = make(OptimisticDuel, env)
        for t in range(1, T + 1):
            x, y = policy.act(t, env.context(t))
            fb, _ = env.step(t, (x, y))
            policy.observe(t + 1, [fb])
            if t in cosines:
                th = policy._estimate()
                cosines[t].append(th @ env.theta_star / np.linalg.norm(th) / np.linalg.norm(env.theta_star))
        assert np.linalg.norm(policy.cost.estimate - env.omega_star) < 0.015
        rows, labels = policy.rows[: policy.n_rows], policy.labels[: policy.n_rows]
        exact = minimize(logistic_loss, np.zeros(3), args=(rows, labels, 1.0), method="BFGS", tol=1e-10).x
        assert np.allclose(policy._estimate(), exact, atol=1e-4)
        assert np.allclose(policy.sigma.matrix, policy.kappa * np.eye(3) + rows.T @ rows)
        agree = np.mean((env.phi @ policy._estimate()).argmax(axis=1) == env.r.argmax(axis=1))
        assert agree >= 0.8
    assert min(cosines[T]) > 0.97 and np.mean(cosines[T]) > np.mean(cosines[100])


def test_algorithm1_refits_on_one_weighted_row_per_distinct_duel():
    """Without contexts the differences phi^- take at most K(K-1) values: the MLE (10) runs on that
    many weighted rows however many duels arrived, and equals the fit on every duel."""
    T = 2000
    env = SyntheticPbBwK(np.random.SeedSequence(0), horizon=T, budget=0.45 * T)  # a seed with many x != y
    policy = make(OptimisticDuel, env)
    simulate(env, policy, make_delay({"kind": "geometric", "mean": 5}), T, np.random.default_rng(2))
    m, n = len(policy._distinct), policy.n_rows
    assert m <= 4 * 3 and n > 50 * m
    assert policy.duel_counts[:m].sum() == n and policy.duel_wins[:m].sum() == policy.labels[:n].sum()
    per_duel = fit_logistic(policy.rows[:n], policy.labels[:n], policy.lam, np.zeros(4), tol=1e-10)
    assert np.allclose(policy._estimate(), per_duel, atol=1e-6)


def test_delayed_feedback_enters_the_statistics_exactly_once_on_arrival():
    T = 400
    delay = make_delay({"kind": "geometric", "mean": 15, "window": 30})
    for cls in (OptimisticDuel, RandomizedDuel, IdealDuel):
        env = SyntheticPbBwK(np.random.SeedSequence(7), horizon=T, budget=10 * T, feedback_kind=cls.feedback_kind)
        policy = make(cls, env)
        simulate(env, policy, delay, T, np.random.default_rng(8))
        delays = delay.sample(np.random.default_rng(8), T)  # the run's delays
        arrived = [s for s in range(1, T + 1) if delays[s - 1] <= 30 and s + max(delays[s - 1], 1) <= T]
        assert policy.cost.n == 2 * len(arrived) < 2 * T
        if cls is not IdealDuel:
            informative = sum(policy.diff_played[s - 1].any() for s in arrived)
            assert policy.n_rows == informative
        expected_psi = sum(np.outer(v, v) for s in arrived for v in policy.psi_played[s - 1])
        assert np.allclose(policy.cost.gram.matrix, np.eye(4) + expected_psi)


def test_cd_exp3_warm_up_estimates_the_borda_value():
    T, B, t0 = 3000, 900, 2500
    env = SyntheticPbBwK(np.random.SeedSequence(9), horizon=T, budget=B)
    policy = make(ConstrainedDuelingEXP3, env, warmup_rounds=t0)
    simulate(env, policy, make_delay({"kind": "none"}), t0 + 1, np.random.default_rng(0))
    r = np.array([0.1, 0.2, 0.4, 0.7])
    borda = (1 / (1 + np.exp(-(r[:, None] - r[None, :])))).mean(axis=1)
    b = B / T
    true_z = knapsack_lp_value(borda, np.array([0.05, 0.4, 0.5, 0.7]), b) / b
    assert policy.z == pytest.approx(true_z, rel=0.1)
    q = policy.distribution()
    assert q.min() >= policy.gamma / 4 - 1e-12 and q.sum() == pytest.approx(1.0)


def test_ideal_baseline_beats_both_preference_algorithms_on_average():
    """Synthetic instance, T = 1000, B = 450 (b = 0.45), seeds 0-5.  Measured: ideal 471, Alg. 2 389,
    Alg. 1 337 (v* T = 523).  At small budgets this does not hold (see the report): the ideal's
    optimistic cost estimate lets it spend the budget early (tau ~ 0.5 T at B = 300, T = 2000)."""
    T, B, seeds = 1000, 450, range(6)
    totals = {}
    for name, env_name in (
        ("pblincbwk_alg1", "pbbwk_synthetic"),
        ("pblincbwk_alg2", "pbbwk_synthetic"),
        ("lincbwk_ideal", "pbbwk_synthetic"),
    ):
        totals[name] = np.mean([run_cell(cell(env_name, name, B, s, T))[0]["reward"].sum() for s in seeds])
    assert totals["lincbwk_ideal"] > totals["pblincbwk_alg1"] + 10
    assert totals["lincbwk_ideal"] > totals["pblincbwk_alg2"] + 10


@pytest.mark.parametrize("policy_cls", [OptimisticDuel, RandomizedDuel, IdealDuel])
def test_allow_null_skips_rounds_once_the_queue_prices_every_duel_out(policy_cls):
    T, B = 1500, 75.0  # b = 0.05 < the cheapest duel (0.1)
    env = SyntheticPbBwK(np.random.SeedSequence(10), horizon=T, budget=B, feedback_kind=policy_cls.feedback_kind)
    policy = make(policy_cls, env, allow_null=True, beta_w=0.0)  # no cost optimism: Q tracks the spend
    nulls, played = 0, 0
    for t in range(1, T + 1):
        ctx = env.context(t)
        q_before = policy.Q
        action = policy.act(t, ctx)
        fb, truth = env.step(t, action)
        if action == NULL and not ctx.stopped:
            nulls += 1
            assert fb is None and truth["cost"] == 0 and truth["active"] == 1
            assert policy.Q == pytest.approx(max(q_before - B / T, 0.0))  # W~ = 0 in (12)
        elif fb is not None:
            played += 1
            policy.observe(t + 1, [fb])
    assert nulls > 0.2 * T and played > 0


def test_policies_reject_bad_parameters():
    """Ranges by the annotations (what runner.build checks before it builds), relations by the class."""
    env = SyntheticPbBwK(np.random.SeedSequence(0), horizon=100, budget=20)
    with pytest.raises(ConfigError, match=r"policy\.params\.beta_r: must be a finite number >= 0 or 'theory'"):
        params.check(OptimisticDuel, {"beta_r": "large"}, "policy.params")
    with pytest.raises(ConfigError, match=r"policy\.params\.kappa: must be a finite number > 0 or 'theory'"):
        params.check(RandomizedDuel, {"kappa": -1}, "policy.params")
    with pytest.raises(ConfigError, match="warmup_rounds"):
        make(ConstrainedDuelingEXP3, env, warmup_rounds=100)
    with pytest.raises(ConfigError, match=r"environment\.params\.budget: must be a finite number > 0"):
        params.check(SyntheticPbBwK, {"budget": 0}, "environment.params")


def test_theory_radii_run():
    env = SyntheticPbBwK(np.random.SeedSequence(0), horizon=200, budget=40)
    for cls in (OptimisticDuel, RandomizedDuel):
        policy = make(cls, env, beta_r="theory", beta_w="theory")
        assert policy.beta_r_t(100) > 50 and policy.kappa == pytest.approx(2 + np.e + 1 / np.e)
        simulate(env, policy, make_delay({"kind": "none"}), 50, np.random.default_rng(0))


# --- car moderation -------------------------------------------------------------------------


def test_car_oracle_predicts_held_out_classes_and_has_documented_ranges(car_oracle):
    oracle, _ = load_npz(car_oracle, "car oracle")
    assert oracle["contexts"].shape == (1728, 22) and oracle["theta"].shape == (88,)
    # held-out accuracy of argmax_a p(c, a): majority class (unacc) is about 0.70
    assert oracle["test_accuracy"] > oracle["majority_accuracy"] + 0.1
    assert oracle["test_accuracy"] > 0.8
    phi = action_features(oracle["contexts"])
    assert np.allclose(np.linalg.norm(phi, axis=-1), 1.0)
    score = phi @ oracle["logit_theta"]
    r = phi @ oracle["theta"]  # the [0, 1] option
    assert r.min() == pytest.approx(0.0, abs=1e-12) and r.max() == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(r, oracle["alpha"] * score + oracle["beta"])  # an increasing affine map of the score
    assert (r.argmax(axis=1) == oracle["labels"]).mean() > 0.8  # reward ranks the true review first
    env = CarModeration(
        np.random.SeedSequence(0),
        horizon=100,
        budget=30,
        oracle=str(car_oracle),
        reward_scale="unit_interval",
        noise="bernoulli",
    )
    assert np.allclose(env.r, r)
    assert np.allclose(env.w, np.array([0.5, 0.3, 0.3, 0.5]) * env.r)
    assert env.w.min() >= 0 and env.w.max() <= 0.5
    info = env.public_info()
    assert info["dimension"] == 88 and info["n_arms"] == len(CLASSES) and info["budget"] == 30
    assert CarModeration.required_files({}) == ["data/oracles/car_evaluation.npz"]


def test_car_expected_reward_is_the_fitted_models_score(car_oracle):
    """Sec. 6: ``r(c, a) = <phi(c, a), theta*>`` with theta* the logistic regression's weights.

    The regression is refitted here independently (scikit-learn, same features, labels and ridge
    penalty); over 2000 rounds of random duels the environment's expected reward is the sum of
    the two reviews' scores, its cost ``v(a)`` times the score, and its preference bits follow
    the BT model (1) on the scores."""
    from sklearn.linear_model import LogisticRegression

    oracle, _ = load_npz(car_oracle, "car oracle")
    phi = action_features(oracle["contexts"])
    labels = (oracle["labels"][:, None] == np.arange(len(CLASSES))).ravel()
    model = LogisticRegression(C=1.0, fit_intercept=False, solver="newton-cholesky", tol=1e-10, max_iter=200)
    model.fit(phi.reshape(-1, phi.shape[-1]), labels)  # C = 1 <-> ridge lam = 1
    T = 2000
    env = CarModeration(
        np.random.SeedSequence(5),
        horizon=T,
        budget=1e9,
        oracle=str(car_oracle),
        reward_scale="logit",
        allow_negative_costs=True,
        noise="gaussian",
    )  # the formula verbatim
    v = np.array([0.5, 0.3, 0.3, 0.5])
    rng = np.random.default_rng(0)
    bits, probs, negative = [], [], 0
    for t in range(1, T + 1):
        ctx = env.context(t)
        score = model.decision_function(ctx.phi)  # the fitted model's score per review
        x, y = (int(a) for a in rng.integers(len(CLASSES), size=2))
        fb, truth = env.step(t, (x, y))
        assert truth["reward"] == pytest.approx(score[x] + score[y], abs=1e-6)
        assert env.w[env._ctx[t - 1], [x, y]] == pytest.approx(v[[x, y]] * score[[x, y]], abs=1e-6)
        bits.append(fb.y)
        probs.append(1.0 / (1.0 + np.exp(-(score[x] - score[y]))))
        negative += truth["reward"] < 0
    probs = np.array(probs)
    assert abs(np.sum(bits) - probs.sum()) < 4 * np.sqrt(np.sum(probs * (1 - probs)))
    assert negative > 0.3 * T  # raw scores: wrong reviews score < 0
    with pytest.raises(ConfigError, match="bernoulli"):
        CarModeration(
            np.random.SeedSequence(0),
            horizon=10,
            budget=5,
            oracle=str(car_oracle),
            noise="bernoulli",
            reward_scale="logit",
            allow_negative_costs=True,
        )
    with pytest.raises(ConfigError, match="reward_scale"):
        CarModeration(np.random.SeedSequence(0), horizon=10, budget=5, oracle=str(car_oracle), reward_scale="prob")


def _dual_value(r, w, b):
    """``min_{lam >= 0} lam b + E_c max(0, max_a 2 (r - lam w))``: the LP dual of (4)-(6), a convex
    piecewise-linear function of ``lam``, minimised by a bounded scalar search."""
    from scipy.optimize import minimize_scalar

    def g(lam):
        return lam * b + np.maximum(0.0, (2.0 * (r - lam * w)).max(axis=1)).mean()

    res = minimize_scalar(g, bounds=(0.0, 50.0), method="bounded", options={"xatol": 1e-12})
    return min(res.fun, g(0.0)), res.x


@pytest.mark.parametrize("reward_scale", ["logit", "unit_interval"])
def test_car_v_star_is_recomputed_for_the_reward_construction(car_oracle, reward_scale):
    T, values = 2000, []
    for B in (300, 500, 700, 900):
        env = CarModeration(
            np.random.SeedSequence(0),
            horizon=T,
            budget=B,
            oracle=str(car_oracle),
            reward_scale=reward_scale,
            allow_negative_costs=reward_scale == "logit",
        )
        dual, lam = _dual_value(env.r, env.w, B / T)
        assert env.v_star == pytest.approx(dual, abs=1e-7)  # strong duality, independent solve
        assert env.v_star <= 2 * np.maximum(env.r.max(axis=1), 0).mean() + 1e-9  # unconstrained optimum
        values.append(env.v_star)
        if reward_scale == "logit":
            # w = v(a) r: every review returns 1 / v(a) reward per unit of budget, so the multiplier is
            # 1 / max v = 2 and each extra unit of per-round budget is worth 2 (documented in CarModeration)
            assert env.lp.multiplier == pytest.approx(2.0, abs=1e-6) and lam == pytest.approx(2.0, abs=1e-4)
    if reward_scale == "logit":
        assert np.allclose(np.diff(values), 2.0 * 200 / T, atol=1e-7)
    assert np.all(np.diff(values) > 0)


def test_car_cell_runs_end_to_end_through_run_cell(car_oracle, monkeypatch):
    monkeypatch.chdir(car_oracle.parent)  # the project: data files must lie inside it
    params = {"oracle": car_oracle.name}
    for policy, env_name in (
        ("pblincbwk_alg2", "car_moderation"),
        ("cd_exp3_reconstructed", "car_moderation"),
        ("lincbwk_ideal", "car_moderation"),
    ):
        series, meta, timing = run_cell(
            cell(env_name, policy, 40, 3, 300, params, delay={"kind": "geometric", "mean": 10})
        )
        assert set(series) == {"reward", "regret", "cost", "active"} and len(series["reward"]) == 300
        summary = meta["summary"]
        assert summary["spent"] == pytest.approx(series["cost"].sum())
        assert series["regret"].sum() == pytest.approx(300 * summary["v_star"] - series["reward"].sum())
        assert 0 < summary["tau"] <= 300


def test_missing_oracle_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="oracle"):
        CarModeration(np.random.SeedSequence(0), horizon=10, budget=5, oracle=str(tmp_path / "none.npz"))


def test_paper_grid_validates():
    grid = load_grid(load_config_file(ROOT / "config" / "knapsack.yaml"))
    assert set(grid.experiments) == {"knapsack_synthetic", "knapsack_car", "knapsack_car_logit"}
    exp = grid.experiments["knapsack_car"]
    assert exp.algorithms == ["alg1", "alg2", "cd_exp3_reconstructed", "ideal"]
    assert exp.budgets == (300, 500, 700, 900) and exp.horizon == 2000 and len(exp.seeds) == 200
    assert grid.data_files("knapsack_car") == ["data/oracles/car_evaluation.npz"]
    params = exp.spec["environment"]["params"]
    assert params["reward_scale"] == "unit_interval" and params["noise"] == "bernoulli_factor"


def test_the_reconstructed_baseline_is_labelled_as_such_everywhere():
    """CD-EXP3 is our reconstruction: its registered name, and so every table row and plot legend
    built from a config label, must say so (the plain name is not registered)."""
    from banditbench import registry

    assert registry.get("policy", "cd_exp3_reconstructed").load() is ConstrainedDuelingEXP3
    with pytest.raises(ConfigError, match="cd_exp3"):
        registry.get("policy", "cd_exp3")
    uses = 0
    for path in [ROOT / "config.yaml", *sorted((ROOT / "config").glob("*.yaml"))]:
        if path.name == "schema.yaml":
            continue
        for name, exp in load_config_file(path)["experiments"].items():
            for label, alg in exp["algorithms"].items():
                if alg["policy"] == "cd_exp3_reconstructed":
                    uses += 1
                    assert "reconstructed" in label, f"{path.name}: {name}.{label}"
    assert uses >= 3  # default grid + both paper experiments
