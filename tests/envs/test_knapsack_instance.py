"""Seed 004's car instance inside the paper's problem class (issue 25): non-negative costs, the cost law,
the oracle's scale, and what a budget allows (T v*, the stopping rule's ceiling)."""

import numpy as np
import pytest
from scipy import stats

from banditbench import registry
from banditbench.api import NULL
from banditbench.analysis.aggregate import aggregate_experiment
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.data.car_oracle import CLASSES, action_features, fit_car_oracle
from banditbench.data.files import load_npz
from banditbench.simulation.delays import make_delay
from banditbench.envs.knapsack import CarModeration, SyntheticPbBwK, _DuelKnapsack, offline_lp
from banditbench.errors import ConfigError
from banditbench.numerics.sigmoid import sigmoid
from banditbench.policies.knapsack import ConstrainedDuelingEXP3, IdealDuel, OptimisticDuel, RandomizedDuel
from banditbench.storage.resultio import save_result
from banditbench.simulation.runner import simulate
from conftest import CELL, ROOT
from helpers import CAR_DATA, make

V = np.array([0.5, 0.3, 0.3, 0.5])  # Sec. 6's factors in the order (unacc, acc, good, vgood)


@pytest.fixture(scope="module")
def oracle(car_oracle):
    """The fitted car oracle of tests/policies/test_knapsack.py (skipped without the mirror's car.data)."""
    return car_oracle


def car(oracle, horizon=200, budget=1e9, seed=0, **params):
    return CarModeration(np.random.SeedSequence(seed), horizon=horizon, budget=budget, oracle=str(oracle), **params)


def _knapsack_experiments():
    """(file, experiment, environment class, params) of every knapsack experiment of config.yaml and config/*.yaml."""
    found = []
    for path in [ROOT / "config.yaml", *sorted((ROOT / "config").glob("*.yaml"))]:
        for name, exp in load_config_file(path)["experiments"].items():
            env = exp["environment"]
            cls = registry.get("environment", env["name"]).load()
            if issubclass(cls, _DuelKnapsack):
                found.append((path.name, name, cls, dict(env.get("params", {})), exp["budgets"]))
    return found


def _random_play(env, rounds, rng):
    """Every round a uniformly random duel; the realised charges."""
    pairs = rng.integers(env.n_arms, size=(rounds, 2))
    charges = []
    for t, (x, y) in enumerate(pairs, start=1):
        env.context(t)
        _, truth = env.step(t, (int(x), int(y)))
        charges.append(truth["cost"])
    return np.array(charges)


# --- no default instance refunds budget ---------------------------------------------------------------------


def test_no_default_knapsack_instance_lets_any_action_refund_budget(oracle):
    """Every knapsack experiment of every config file, built as its jobs build it (the car with the test's
    oracle), has non-negative expected costs and, over 3000 random duels, never charges a negative cost;
    the one instance that may refund is the named literal-logit variant, which asks for it, and does."""
    checked, variants = [], []
    for file, name, cls, params, budgets in _knapsack_experiments():
        if "oracle" in params or cls is CarModeration:
            params["oracle"] = str(oracle)
        env = cls(np.random.SeedSequence(7), horizon=3000, budget=1e9, **params)
        charges = _random_play(env, 3000, np.random.default_rng(7))
        if params.get("allow_negative_costs"):
            variants.append((file, name))
            assert env.w.min() < 0 and charges.min() < 0  # the variant does refund, as documented
            assert np.isinf(env.summary()["instance_budget_ceiling"])
            continue
        checked.append((file, name))
        assert env.w.min() >= 0, f"{file}: {name} has negative expected costs"
        assert charges.min() >= 0, f"{file}: {name} refunded budget ({charges.min()})"
        assert np.isfinite(env.summary()["instance_budget_ceiling"])
    assert ("knapsack.yaml", "knapsack_car") in checked and ("config.yaml", "knapsack_synthetic") in checked
    assert ("knapsack.yaml", "knapsack_synthetic") in checked
    assert variants == [("knapsack.yaml", "knapsack_car_logit")]


def test_the_paper_grid_runs_the_problem_class_default_and_the_logit_variant_separately():
    grid = load_grid(load_config_file(ROOT / "config" / "knapsack.yaml"))
    default = grid.experiments["knapsack_car"].spec["environment"]["params"]
    variant = grid.experiments["knapsack_car_logit"].spec["environment"]["params"]
    assert default["reward_scale"] == "unit_interval" and default["noise"] == "bernoulli_factor"
    assert not default.get("allow_negative_costs", False)
    assert variant["reward_scale"] == "logit" and variant["allow_negative_costs"] is True
    # the two differ in the reward construction (and the flag that allows it) only
    assert {k: v for k, v in variant.items() if k not in ("reward_scale", "allow_negative_costs")} == {
        k: v for k, v in default.items() if k not in ("reward_scale", "allow_negative_costs")
    }
    for exp in ("knapsack_car", "knapsack_car_logit"):
        assert grid.experiments[exp].budgets == (300, 500, 700, 900) and grid.experiments[exp].horizon == 2000


def test_negative_expected_costs_are_refused_unless_asked_for(oracle):
    with pytest.raises(ConfigError, match=r"environment\.params\.reward_scale: 'logit'.*allow_negative_costs: true"):
        car(oracle, reward_scale="logit")
    spec = {
        "environment": {
            "name": "car_moderation",
            "params": {"oracle": "data/oracles/car_evaluation.npz", "reward_scale": "logit"},
        },
        "horizon": 50,
        "seeds": 1,
        "budgets": [20],
        "algorithms": {"a": {"policy": "pblincbwk_alg1"}},
        "delays": {"none": {"kind": "none"}},
    }
    with pytest.raises(ConfigError, match=r"reward_scale.*allow_negative_costs"):
        load_grid({"experiments": {"k": spec}})  # before any job runs
    spec["environment"]["params"]["allow_negative_costs"] = True
    load_grid({"experiments": {"k": spec}})
    env = car(oracle, reward_scale="logit", allow_negative_costs=True)
    assert env.w.min() < 0
    # the flag changes nothing where costs are non-negative anyway
    assert np.array_equal(car(oracle, allow_negative_costs=True).w, car(oracle).w)


@pytest.mark.parametrize(
    "params, key",
    [
        ({"score_scale": 2.0}, "score_scale"),  # no effect on the [0, 1] map: refused
        ({"noise": "bernoulli_factor", "cost_factors": [0.5, 1.3, 0.3, 0.5]}, "cost_factors"),  # not a probability
        ({"cost_factors": [0.5, -0.3, 0.3, 0.5]}, "cost_factors"),
        ({"reward_scale": "shifted_logit", "noise": "bernoulli"}, "noise"),
        ({"noise": "poisson"}, "noise"),
        ({"reward_scale": "probability"}, "reward_scale"),
    ],
)
def test_bad_car_parameters_name_their_key(oracle, params, key):
    with pytest.raises(ConfigError, match=rf"environment\.params\.{key}"):
        car(oracle, **params)


# --- the reward constructions ----------------------------------------------------------------------------


def test_reward_constructions_and_their_preferences(oracle):
    """unit_interval: the score mapped affinely onto [0, 1] (the oracle file's theta, linear in phi);
    shifted_logit: the score minus its minimum, non-negative, with exactly the fitted model's BT preferences;
    logit: the score itself; score_scale multiplies the score where it matters."""
    data, _ = load_npz(oracle, "car oracle")
    phi = action_features(data["contexts"])
    score = phi @ data["logit_theta"]
    unit = car(oracle)
    assert unit.reward_scale == "unit_interval" and unit.noise == "bernoulli_factor"  # the defaults
    assert np.allclose(unit.r, phi @ data["theta"], atol=1e-12)  # linear in phi
    assert unit.r.min() == pytest.approx(0.0, abs=1e-12) and unit.r.max() == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(unit.w, V * unit.r) and unit.w.max() <= 0.5
    shifted = car(oracle, reward_scale="shifted_logit")
    literal = car(oracle, reward_scale="logit", allow_negative_costs=True)
    assert np.allclose(literal.r, score) and shifted.r.min() == pytest.approx(0.0, abs=1e-12)
    diff = lambda r: r[:, :, None] - r[:, None, :]  # noqa: E731
    assert np.allclose(diff(shifted.r), diff(literal.r), atol=1e-9)  # same BT model (1)
    span = score.max() - score.min()
    assert np.allclose(diff(unit.r), diff(score) / span, atol=1e-9)  # tempered by the span
    assert sigmoid(diff(unit.r)).max() <= sigmoid(1.0) + 1e-12
    assert np.allclose(car(oracle, reward_scale="shifted_logit", score_scale=0.5).r, 0.5 * shifted.r)
    # each review's block intercept absorbs the shift: the shifted rewards are <phi, theta'> exactly
    theta, *_ = np.linalg.lstsq(phi.reshape(-1, phi.shape[-1]), shifted.r.ravel(), rcond=None)
    assert np.allclose(phi @ theta, shifted.r, atol=1e-8)


def test_the_oracle_records_its_scale(oracle):
    """feature norm, ridge and the resulting score range are in the file and on the instance; a stronger
    ridge shrinks the range (so the scale is a property of the fit, recorded, not assumed)."""
    data, _ = load_npz(oracle, "car oracle")
    score = action_features(data["contexts"]) @ data["logit_theta"]
    assert float(data["lam"]) == 1.0 and float(data["feature_norm"]) == 1.0
    assert float(data["score_min"]) == pytest.approx(score.min()) and float(data["score_max"]) == pytest.approx(
        score.max()
    )
    assert float(data["negative_fraction"]) == pytest.approx((score < 0).mean())
    assert car(oracle).oracle_scale == pytest.approx(
        {
            "feature_norm": 1.0,
            "lam": 1.0,
            "score_min": score.min(),
            "score_max": score.max(),
            "negative_fraction": (score < 0).mean(),
        }
    )
    strong = fit_car_oracle(CAR_DATA, lam=20.0)
    half = fit_car_oracle(CAR_DATA, feature_norm=0.5)
    assert strong["score_max"] - strong["score_min"] < 0.7 * (data["score_max"] - data["score_min"])
    phi_half = action_features(half["contexts"], feature_norm=0.5)
    assert np.linalg.norm(phi_half, axis=-1).max() == pytest.approx(0.5)
    unit_half = phi_half @ half["theta"]  # the [0, 1] map's intercept shift follows the norm
    assert unit_half.min() == pytest.approx(0.0, abs=1e-12) and unit_half.max() == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ConfigError, match="oracle.feature_norm"):
        fit_car_oracle(CAR_DATA, feature_norm=2.0)


def test_bernoulli_factor_costs_are_the_reward_or_nothing_with_probability_v(oracle):
    """W(c, a) = V_a r(c, a), V_a ~ Bernoulli(v(a)): each observed cost is 0 or the review's reward, the
    review's share of non-zero costs is v(a) (binomial test per review), and the mean is w = v r."""
    T = 6000
    env = car(oracle, horizon=T, seed=3)
    rng = np.random.default_rng(3)
    hits, plays, excess = np.zeros(4), np.zeros(4), []
    for t in range(1, T + 1):
        env.context(t)
        x, y = (int(a) for a in rng.integers(4, size=2))
        fb, truth = env.step(t, (x, y))
        c = env._ctx[t - 1]
        for a, cost in zip((x, y), fb.costs[:, 0]):
            assert cost == 0.0 or cost == env.r[c, a]
            hits[a] += cost > 0
            plays[a] += 1
        excess.append(truth["cost"] - env.w[c, x] - env.w[c, y])
    for a in range(4):
        assert stats.binomtest(int(hits[a]), int(plays[a]), V[a]).pvalue > 1e-3, CLASSES[a]
    excess = np.array(excess)
    assert abs(excess.mean()) < 4 * excess.std() / np.sqrt(T)  # zero-mean noise


# --- what a budget allows -------------------------------------------------------------------------------


def test_T_v_star_and_ceiling_of_the_reward_constructions(oracle):
    """The LP (4)-(6) against the stopping rule's ceiling B / min v: on the [0, 1] default the ceiling binds
    at B = 300 only and the context is worth something from B = 500 on (a context-free LP is lower); with
    the shifted logit's large rewards T v* equals the ceiling at every budget and a context-free policy attains
    it (the degeneracy documented in CarModeration)."""
    T = 2000
    for B in (300, 500, 700, 900):
        unit, shifted = car(oracle, horizon=T, budget=B), car(oracle, horizon=T, budget=B, reward_scale="shifted_logit")
        for env in (unit, shifted):
            s = env.summary()
            assert s["instance_budget_ceiling"] == pytest.approx(B / V.min())
            assert s["instance_T_v_star"] == pytest.approx(T * env.v_star)
            assert s["instance_T_v_star"] <= s["instance_budget_ceiling"] * (1 + 1e-9)
        free = offline_lp(np.ones(1), unit.r.mean(0, keepdims=True), unit.w.mean(0, keepdims=True), B / T).value
        if B == 300:
            assert T * unit.v_star == pytest.approx(B / V.min(), rel=1e-6)
        else:
            assert T * unit.v_star < B / V.min() - 50 and T * free < T * unit.v_star - 50
        assert T * shifted.v_star == pytest.approx(B / V.min(), rel=1e-6)
        free = offline_lp(np.ones(1), shifted.r.mean(0, keepdims=True), shifted.w.mean(0, keepdims=True), B / T).value
        assert T * free == pytest.approx(B / V.min(), rel=1e-6)
    synthetic = SyntheticPbBwK(np.random.SeedSequence(0), horizon=T, budget=300)
    assert synthetic.summary()["instance_budget_ceiling"] == pytest.approx(300 * 0.1 / 0.05)


class _Fixed:
    """Plays one duel until the knapsack is empty."""

    feedback_kinds, context_form, action_kind = ("preference_cost", "reward_cost"), None, "pair"
    engines = {}  # the reference loop only (banditbench.api.Policy.engines)

    def __init__(self, pair):
        self.pair = pair

    def act(self, t, ctx):
        return NULL if ctx.stopped else self.pair

    def observe(self, t, arrived):
        pass


def _ci_half(values):
    values = np.asarray(values, float)
    return stats.t.ppf(0.995, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))


def test_cumulative_reward_never_exceeds_what_the_stopping_rule_allows(oracle):
    """With non-negative costs w = v(a) r, E[reward up to tau] = E[sum of the played w / v] <= E[spend] /
    min v < (B + one round's largest charge) / min v (optional stopping: the expected spend is the expected
    sum of the played w).  The cheapest reviews (acc, good) buy reward at exactly 1 / min v, so their mean
    reward matches 1 / min v times their mean spend within its 99 % interval (the ceiling is attained, not
    loose), and no policy's mean exceeds the ceiling or T v* (the LP at the overshoot-padded budget) by more
    than its 99 % interval.  Per run: nothing is credited after tau and the spend overshoots B by less than
    that round's charge."""
    T, B = 500, 40.0
    probe = car(oracle, horizon=T, budget=B)
    ceiling = (B + probe.largest_charge()) / V.min()
    lp_bound = T * offline_lp(probe.p_c, probe.r, probe.w, (B + probe.largest_charge()) / T).value
    assert ceiling == pytest.approx(probe.reward_per_cost() * (B + 2.0))
    runs = {"fixed (acc, good)": (lambda env: _Fixed((1, 2)), 40)}
    for cls in (OptimisticDuel, RandomizedDuel, ConstrainedDuelingEXP3, IdealDuel):
        runs[cls.__name__] = ((lambda env, cls=cls: make(cls, env, seed=11)), 6)
    for label, (policy_of, n) in runs.items():
        rewards, spends = [], []
        for seed in range(n):
            kind = "reward_cost" if label == "IdealDuel" else "preference_cost"
            env = car(oracle, horizon=T, budget=B, seed=seed, feedback_kind=kind)
            logs = simulate(env, policy_of(env), make_delay({"kind": "none"}), T, np.random.default_rng(seed))
            tau = env.tau
            assert tau is not None, label  # the budget binds
            assert np.all(logs["reward"][tau:] == 0) and np.all(logs["cost"][tau:] == 0)
            assert env.spent - logs["cost"][tau - 1] < B <= env.spent <= B + env.largest_charge()
            assert logs["reward"].sum() >= 0
            rewards.append(logs["reward"].sum())
            spends.append(env.spent)
        rewards = np.array(rewards)
        assert rewards.mean() <= ceiling + _ci_half(rewards), label
        assert rewards.mean() <= lp_bound + _ci_half(rewards), label
        if label.startswith("fixed"):
            gap = rewards - np.array(spends) / V.min()
            assert abs(gap.mean()) <= _ci_half(gap)  # Wald: the ceiling's rate
            assert rewards.mean() > 0.9 * B / V.min()  # attained, up to noise


def test_headline_tables_print_T_v_star_and_the_ceiling_beside_the_algorithms(tmp_path):
    """Summaries named instance_* become rows of the headline table, one value per budget column."""
    paths = []
    for alg, reward in (("alg1", 1.0), ("ideal", 2.0)):
        for budget in (300, 500):
            for seed in range(2):
                cell = {
                    "experiment": "k",
                    "algorithm": alg,
                    "delay_label": "none",
                    "budget": budget,
                    "horizon": 10,
                    "seed": seed,
                }
                path = tmp_path / "runs" / "k" / alg / "none" / str(budget) / CELL / f"{seed}.npz"
                summary = {"tau": 5.0, "instance_T_v_star": 2.0 * budget, "instance_budget_ceiling": budget / 0.3}
                save_result(
                    path,
                    {"reward": np.full(10, reward + seed)},
                    {"cell": cell, "metrics": ["reward"], "summary": summary},
                    {"wall_time_s": 0.1},
                )
                paths.append(str(path))
    out = {k: tmp_path / f"out.{k}" for k in ("csv", "md", "tex", "curves")}
    aggregate_experiment(paths, "k", [10], out["csv"], out["md"], out["tex"], out["curves"], "cumulative_reward")
    headline = out["md"].read_text().split("## cumulative_reward at T = 10\n")[1].split("\n## ")[0]
    rows = [line.split(" | ")[0].strip("| ") for line in headline.strip().splitlines()[2:]]
    assert rows == ["alg1", "ideal", "T_v_star", "budget_ceiling"]  # beneath the algorithms they bound
    assert headline.startswith("\n| algorithm | B = 300 | B = 500 |")
    assert "| T_v_star | 600.00 | 1000.00 |\n| budget_ceiling | 1000.00 | 1666.67 |" in headline
