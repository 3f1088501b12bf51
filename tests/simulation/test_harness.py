"""The simulation harness's cheap paths give exactly what a straightforward loop gives (issue 13).

:func:`banditbench.simulation.runner.simulate` runs rounds without delay in a loop without buckets,
plays environments that keep their own truth values through ``play`` / ``truth_log``,
hands LinUCB the classification row instead of the block matrix, and environments draw
their random numbers a block of rounds at a time.  Each must leave every choice and every
logged value unchanged: compared here, bit for bit, with a textbook loop (``step`` every
round, the truth mapping logged as it comes, the environment's default context) on every
experiment, algorithm and delay of the default grid.
"""

import math
from pathlib import Path

import numpy as np
import pytest

from banditbench.simulation import runner
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.data.paths import PROCESSED_DIR, parse_preprocess_key
from banditbench.data.preprocess import prepare, save_prepared
from banditbench.simulation.delays import make_delay
from banditbench.envs import classification
from banditbench.envs.draws import uniforms
from banditbench.envs.dueling import sample_arms
from banditbench.envs.lipschitz import LipschitzEnv
from banditbench.numerics.sigmoid import sigmoid, sigmoid_of
from banditbench.storage.resultio import NO_BUDGET
from banditbench.simulation.runner import build, simulate
from banditbench.api import NULL, Policy

from conftest import ROOT  # noqa: E402

GRID = load_grid(load_config_file(ROOT / "config.yaml"))
#: rounds per run: enough to pass a delay window and a knapsack's stopping time; the neural families fewer
HORIZONS = {"neural_delayed_dueling": 25, "variance_dueling_square": 25, "neural_logistic_h1": 25}


def reference_simulate(env, policy, delay, horizon, delay_rng):
    """The straightforward loop: ``step`` each round, its truth mapping written as it comes, feedback
    delivered from a list of (arrival round, item) pairs in the order of their rounds."""
    delays = delay.sample(delay_rng, horizon)
    arrives = delay.arrives(delays)
    logs = {name: np.zeros(horizon) for name in env.metrics}
    queue, actions = [], []
    for t in range(1, horizon + 1):
        arrived = [item for due, item in queue if due == t]
        queue = [(due, item) for due, item in queue if due != t]
        if arrived:
            policy.observe(t, arrived)
        feedback, truth = None, None
        while truth is None:
            action = policy.act(t, env.context(t))
            feedback, truth = env.step(t, action)
        actions.append(action)
        due = t + max(int(delays[t - 1]), 1)
        if feedback is not None and arrives[t - 1] and due <= horizon:
            queue.append((due, feedback))
        assert sorted(truth) == sorted(env.metrics)
        for name in env.metrics:
            logs[name][t - 1] = truth[name]
    return logs, actions


def recorded(policy):
    """The policy, its ``act`` wrapped to record each round's action (the last one of the round)."""
    actions, act = {}, policy.act

    def recording_act(t, context):
        actions[t] = act(t, context)
        return actions[t]

    policy.act = recording_act
    return policy, actions


def _same_action(a, b) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b))


@pytest.fixture
def with_grid_data(tmp_path, monkeypatch):
    """A working directory holding the prepared datasets of the default grid (digits: offline)."""
    monkeypatch.chdir(tmp_path)
    for name in GRID.experiments:
        for path in GRID.data_files(name):
            rel = Path(path).relative_to(PROCESSED_DIR)
            if not Path(path).is_file():
                save_prepared(path, prepare(rel.parts[0], parse_preprocess_key(rel.parts[0], rel.stem)))
    return tmp_path


@pytest.mark.parametrize("experiment", list(GRID.experiments))
def test_simulate_matches_the_straightforward_loop_on_the_default_grid(with_grid_data, experiment):
    exp = GRID.experiments[experiment]
    horizon = min(HORIZONS.get(experiment, 300), exp.horizon)
    for algorithm in exp.algorithms:
        for delay in exp.delays:
            for budget in exp.budget_labels:
                cell = dict(GRID.cell(experiment, algorithm, delay, budget, exp.seeds[0]), horizon=horizon)
                env, policy, model, delay_rng = build(cell)
                policy, played = recorded(policy)
                logs = simulate(env, policy, model, horizon, delay_rng)
                env, policy, model, delay_rng = build(cell)
                policy.context_form = None  # the environment's default context (LinUCB: the matrix)
                expected, actions = reference_simulate(env, policy, model, horizon, delay_rng)
                where = f"{experiment}/{algorithm}/{delay}/{budget}"
                assert list(logs) == list(expected), where
                for name in expected:  # bit for bit
                    assert logs[name].tobytes() == expected[name].tobytes(), f"{where}: {name}"
                assert len(played) == horizon and all(_same_action(played[t + 1], a) for t, a in enumerate(actions)), (
                    where
                )


def test_next_round_loop_and_bucket_loop_agree_when_every_delay_is_at_most_one():
    """Delays of 0 or 1 arrive next round: the runner takes the loop without buckets for a constant
    delay of 1, the bucket loop when one round's delay is longer (censored by the window; so all
    others arrive next round too) — the same result as the straightforward loop either way."""
    cell = {
        "experiment": "e",
        "algorithm": "a",
        "delay_label": "d",
        "seed": 3,
        "horizon": 400,
        "budget": 150,
        "environment": {"name": "pbbwk_synthetic", "params": {}},
        "policy": {"name": "pblincbwk_alg2", "params": {}},
        "delay": {"kind": "constant", "value": 1},
    }
    for delay in ({"kind": "constant", "value": 1}, {"kind": "uniform", "low": 0, "high": 2, "window": 1}):
        env, policy, _, _ = build(dict(cell, delay=delay))
        logs = simulate(env, policy, make_delay(delay), 400, np.random.default_rng(5))
        env, policy, _, _ = build(dict(cell, delay=delay))
        expected, _ = reference_simulate(env, policy, make_delay(delay), 400, np.random.default_rng(5))
        assert all(logs[name].tobytes() == expected[name].tobytes() for name in expected), delay


def test_linucb_on_block_arms_asks_for_the_row_and_chooses_as_with_the_matrix(with_grid_data, monkeypatch):
    cell = dict(GRID.cell("digits_reward", "linucb", "geometric_mean20_M50", NO_BUDGET, 1), horizon=300)
    env, policy, model, delay_rng = build(cell)
    assert policy.context_form == "row" and "row" in env.context_forms
    assert env.context(1).shape == (10, 10 * 16)  # the default context: the block matrix
    env, policy, model, delay_rng = build(cell)

    def no_matrix(x, n_arms):
        raise AssertionError("the row form must not build the K x dK matrix")

    policy, rows = recorded(policy)
    with monkeypatch.context() as patch:
        patch.setattr(classification, "block_arms", no_matrix)
        logs = simulate(env, policy, model, 300, delay_rng)
    env, policy, model, delay_rng = build(cell)
    policy.context_form = None
    policy, matrix = recorded(policy)
    expected = simulate(env, policy, model, 300, delay_rng)
    assert rows == matrix and len(set(rows.values())) > 1
    assert all(logs[name].tobytes() == expected[name].tobytes() for name in expected)


def test_an_environment_refuses_a_context_form_it_does_not_offer():
    env = LipschitzEnv(np.random.SeedSequence(0), horizon=10)
    with pytest.raises(ValueError, match="LipschitzEnv offers no context form 'row'"):
        env.use_context_form("row")


def test_block_arms_is_the_block_diagonal_matrix():
    x = np.random.default_rng(0).standard_normal(7).astype(np.float32)
    arms = classification.block_arms(x, 5)
    assert arms.dtype == np.float64 and arms.flags.c_contiguous
    expected = np.zeros((5, 35))
    for k in range(5):
        expected[k, 7 * k : 7 * k + 7] = x
    assert arms.tobytes() == expected.tobytes()


def test_sigmoid_of_has_the_bits_of_sigmoid():
    z = np.concatenate([np.random.default_rng(1).standard_normal(5000) * 6, [0.0, -0.0, 40.0, -40.0, 750.0, -750.0]])
    assert all(sigmoid_of(float(v)) == float(sigmoid(v)) for v in z)
    assert all(sigmoid_of(v) == float(sigmoid(v)) for v in z[:50])  # numpy scalars too


def test_block_draws_are_the_numbers_of_one_draw_per_round():
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    it = uniforms(a, block=7)
    assert [next(it) for _ in range(30)] == [b.random() for _ in range(30)]
    for distribution in ("sphere", "normalized_cube"):
        a, b = np.random.default_rng(4), np.random.default_rng(4)
        block = sample_arms(a, 6, 3, distribution, rounds=5)
        assert block.tobytes() == np.stack([sample_arms(b, 6, 3, distribution) for _ in range(5)]).tobytes()


def test_truth_log_of_the_wrong_metrics_is_refused():
    class Broken(LipschitzEnv):
        def truth_log(self, horizon):
            return {"regret": [0.0] * horizon}

    env = Broken(np.random.SeedSequence(0), horizon=5, noise_sigma=0.1)
    policy = type(
        "Fixed",
        (),
        {
            "context_form": None,
            "engines": {},
            "observe": lambda self, t, a: None,
            "act": lambda self, t, c: 0.5,
        },
    )()
    with pytest.raises(ValueError, match=r"Broken.truth_log returned \['regret'\].*expected_reward"):
        runner.simulate(env, policy, make_delay({"kind": "none"}), 5, np.random.default_rng(0))


def test_an_environment_that_keeps_truth_must_define_play_and_truth_log():
    from banditbench.api import Environment

    with pytest.raises(TypeError, match="Half sets keeps_truth but does not define truth_log"):

        class Half(Environment):
            keeps_truth = True

            def play(self, t, action):
                return None


class _NullAs(Policy):
    """A knapsack policy whose null action, once the budget is spent, is ``answer(t)`` instead of the ``NULL``
    constant (which the environment settles with an identity test)."""

    def __init__(self, policy, answer):
        self.policy, self.answer, self.context_form = policy, answer, None

    def observe(self, t, arrived):
        self.policy.observe(t, arrived)

    def act(self, t, context):
        action = self.policy.act(t, context)
        return self.answer(t) if action is NULL and context.stopped else action


@pytest.mark.parametrize("algorithm", ["cd_exp3_reconstructed", "ideal", "alg2"])
def test_knapsack_rounds_after_the_stopping_time_equal_the_general_path(algorithm):
    """After the stopping time the environment answers the ``NULL`` constant at once and hands out one context
    per instance context: the same logs, bit for bit, as when the policy plays a fresh ``(-1, -1)`` or any pair
    (both through the full check), and every context says whether the process had stopped by then."""
    cell = dict(
        GRID.cell("knapsack_synthetic", algorithm, "none", "75", 0),
        horizon=400,
        delay_label="geometric_mean20",
        delay={"kind": "geometric", "mean": 20},
    )
    runs = []
    for answer in (None, lambda t: (-1, -1), lambda t: (t % 4, (t // 4) % 4)):
        env, policy, model, delay_rng = build(cell)
        if answer is not None:
            policy = _NullAs(policy, answer)
        contexts = []
        context = env.context
        env.context = lambda t: contexts.append((t, env.tau, context(t))) or contexts[-1][2]
        runs.append((simulate(env, policy, model, 400, delay_rng), env.summary()))
        assert env.tau is not None and env.tau < 300
        for t, tau, ctx in contexts:
            c = env._ctx[t - 1]
            assert ctx.stopped == (tau is not None) and ctx.phi.tobytes() == env.phi[c].tobytes()
            assert not ctx.phi.flags.writeable and not ctx.psi.flags.writeable
    (logs, summary), *others = runs
    assert np.all(logs["active"][int(summary["tau"]) :] == 0)
    for other, other_summary in others:
        assert other_summary == summary
        assert all(other[name].tobytes() == logs[name].tobytes() for name in logs)


@pytest.mark.parametrize("feedback_kind", ["preference_cost", "reward_cost"])
def test_knapsack_gaussian_feedback_is_the_mean_plus_the_scaled_normal(feedback_kind):
    from banditbench.envs.knapsack import SyntheticPbBwK

    env = SyntheticPbBwK(
        np.random.SeedSequence(6),
        horizon=60,
        budget=1000.0,
        noise="gaussian",
        noise_std=0.3,
        feedback_kind=feedback_kind,
    )
    for t in range(1, 61):
        x, y = t % 4, (t * 3) % 4
        env.context(t)
        fb = env.play(t, (x, y))
        u = env._cost_u[t - 1]
        assert fb.costs.tolist() == [[env.w[0, x] + 0.3 * u[0]], [env.w[0, y] + 0.3 * u[1]]]
        if feedback_kind == "reward_cost":
            v = env._outcome_u[t - 1]
            assert fb.rewards.tolist() == [env.r[0, x] + 0.3 * v[0], env.r[0, y] + 0.3 * v[1]]
        else:
            assert fb.y == int(env._outcome_u[t - 1] < float(sigmoid(env.r[0, x] - env.r[0, y])))


@pytest.mark.parametrize("function", ["triangle", "sine", "two_dim"])
def test_the_per_round_lipschitz_formula_has_the_bits_of_the_written_one(function):
    from banditbench.envs.lipschitz import FUNCTIONS, SCALAR

    d, formula = FUNCTIONS[function].dimension, FUNCTIONS[function].formula
    points = np.random.default_rng(3).random((20000, d)).tolist() + [[0.0] * d, [1.0] * d, [0.4] * d, [0.3] * d]
    assert all(SCALAR[function](*x) == formula(tuple(x), math) for x in points)


def test_a_contextless_environment_is_never_asked_for_its_context():
    class Silent(LipschitzEnv):
        def context(self, t):
            raise AssertionError("a contextless environment's context must not be called")

    seen = []
    policy = type(
        "Fixed",
        (),
        {
            "context_form": None,
            "engines": {},
            "observe": lambda self, t, a: None,
            "act": lambda self, t, c: seen.append(c) or 0.5,
        },
    )()
    for delay in ({"kind": "none"}, {"kind": "geometric", "mean": 3}):
        env = Silent(np.random.SeedSequence(0), horizon=50, noise_sigma=0.1)
        logs = runner.simulate(env, policy, make_delay(delay), 50, np.random.default_rng(0))
        assert logs["expected_reward"].tolist() == [0.8 - 0.9 * 0.1] * 50
    assert seen == [None] * 100


@pytest.mark.parametrize("utility", ["linear", "quadratic", "cubic", "cosine", "square", "quadratic_form"])
def test_the_synthetic_dueling_utilities_of_a_block_are_those_of_each_round(utility):
    """The environment computes the utilities (and their maximum) of a block of rounds' arms in one product:
    each round's are the bits of the product of that round's arms alone, and play credits them."""
    from banditbench.envs.dueling import SyntheticDueling, _utility

    env = SyntheticDueling(
        np.random.SeedSequence(8),
        horizon=120,
        dimension=7,
        n_arms=6,
        utility=utility,
        arm_distribution="normalized_cube",
        theta_distribution="cube",
    )
    env._arm_rounds = 50  # several blocks within the run
    for t in range(1, 121):
        arms = env.context(t)
        f = _utility(utility, env.theta, arms)
        env.play(t, (t % 6, (t + 2) % 6))
        regret = 2.0 * float(max(f.tolist())) - f[t % 6] - f[(t + 2) % 6]
        assert env._f_values == f.tolist() and env._regret[t - 1] == regret


def _no_matrix(x, n_arms):
    raise AssertionError("the row form must not build the K x dK matrix")


def _random_baseline_run(cell, monkeypatch, row_form):
    """The cell's simulation and its recorded actions, with the row form the policy asks for or the block matrix."""
    env, policy, model, delay_rng = build(cell)
    assert policy.context_form == "row" and policy.n_arms == 10
    if not row_form:
        policy.context_form = None
    policy, actions = recorded(policy)
    with monkeypatch.context() as patch:
        if row_form:
            patch.setattr(classification, "block_arms", _no_matrix)
        return simulate(env, policy, model, 200, delay_rng), actions


@pytest.mark.parametrize("experiment, policy", [("digits_dueling", "random_pair"), ("digits_reward", "random_arm")])
def test_random_baselines_on_block_arms_ask_for_the_row_and_draw_as_with_the_matrix(
    with_grid_data, monkeypatch, experiment, policy
):
    algorithm = next(iter(GRID.experiments[experiment].algorithms))
    cell = dict(
        GRID.cell(experiment, algorithm, "geometric_mean20_M50", NO_BUDGET, 1),
        horizon=200,
        policy={"name": policy, "params": {}},
    )
    logs, rows = _random_baseline_run(cell, monkeypatch, row_form=True)
    expected, matrix = _random_baseline_run(cell, monkeypatch, row_form=False)
    assert rows == matrix and len(set(rows.values())) > 5
    assert all(logs[name].tobytes() == expected[name].tobytes() for name in expected)


@pytest.mark.parametrize("preference", ["btl", "index_order", "label", "label_coin"])
def test_classification_dueling_keeps_the_duel_metrics_of_its_utilities(with_grid_data, preference):
    """The classification dueling environment keeps its truth values (``play`` on Python floats): each round's
    are the dueling metrics of the round's utility array, and the outcome is that of the utilities."""
    from banditbench.envs.classification import ClassificationDueling

    def duel_metrics(f, i, j):  # the metrics' definitions (envs/preference.py), on the array
        best = f.max()
        return {
            "regret": 2.0 * best - f[i] - f[j],
            "average_regret": 0.5 * (2.0 * best - f[i] - f[j]),
            "weak_regret": best - max(f[i], f[j]),
            "self_duel": float(i == j),
        }

    env = ClassificationDueling(
        np.random.SeedSequence(5), horizon=200, dataset="digits", preprocessing={"image_size": 4}, preference=preference
    )
    assert env.keeps_truth
    for t in range(1, 201):
        env.context(t)
        f, i, j = env.utilities(), t % 10, (3 * t + 1) % 10
        feedback, truth = env.step(t, (i, j))
        assert truth == {name: float(value) for name, value in duel_metrics(f, i, j).items()}
        if preference == "index_order":
            assert feedback.y == int(i > j)
        elif preference == "label" or (preference == "label_coin" and f[i] != f[j]):
            assert feedback.y == int(f[i] > f[j] or (f[i] == f[j] and i > j))
    logs = env.truth_log(200)
    assert np.asarray(logs["average_regret"]).tobytes() == (0.5 * np.asarray(logs["regret"])).tobytes()
