"""Seed 001's Statlog task in its three deterministic readings, and the self-duel metric every dueling
environment logs (``banditbench.envs.classification``, ``banditbench.envs.preference``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from banditbench.configuration.grid import load_grid
from banditbench.data.fetch import fetch
from banditbench.data.paths import processed_path
from banditbench.data.preprocess import prepare, save_prepared
from banditbench.envs.classification import ClassificationDueling
from banditbench.envs.preference import late_rounds
from banditbench.errors import ConfigError
from conftest import MIRROR

K = 7  # Statlog (Shuttle)'s classes


@pytest.fixture(scope="module")
def shuttle_work(tmp_path_factory) -> Path:
    """A working directory holding the prepared Statlog (Shuttle) rows, fetched through the mirror."""
    if not (MIRROR / "manifest.json").is_file():
        pytest.skip(f"offline mirror {MIRROR} absent")
    work = tmp_path_factory.mktemp("statlog")
    (work / "data").mkdir()
    raw = tmp_path_factory.mktemp("raw")
    fetch("shuttle", cache_dir=raw, mirror=str(MIRROR))
    (work / "data" / "raw").symlink_to(raw, target_is_directory=True)
    return work


@pytest.fixture
def statlog(shuttle_work, monkeypatch):
    """``statlog(preference, seed=0, horizon=300)``: the environment, built in the working directory."""
    monkeypatch.chdir(shuttle_work)
    path = processed_path("shuttle", None)
    if not Path(path).is_file():
        save_prepared(path, prepare("shuttle", None))

    def make(preference: str, seed: int = 0, horizon: int = 300, **params) -> ClassificationDueling:
        return ClassificationDueling(
            np.random.SeedSequence(seed),
            horizon=horizon,
            dataset="shuttle",
            preference=preference,
            utility_scale=1.0,
            **params,
        )

    return make


def _rounds(env, horizon):
    for t in range(1, horizon + 1):
        env.context(t)
        yield t, int(env.y[env._row]), env.utilities()


def test_index_order_best_arm_is_always_the_highest_index_and_the_higher_index_always_wins(statlog):
    env = statlog("index_order")
    rng = np.random.default_rng(0)
    labels = set()
    for t, label, u in _rounds(env, 300):
        labels.add(label)
        np.testing.assert_allclose(u, np.arange(K) / (K - 1))  # u_k = s k / (K - 1), whatever the row
        assert int(np.argmax(u)) == K - 1
        i, j = (int(a) for a in rng.integers(0, K, size=2))
        feedback, truth = env.step(t, (i, j))
        assert feedback.y == int(i > j)  # P(i > j) = 1 for i > j
        assert truth["regret"] == pytest.approx(2 - (i + j) / (K - 1))
        assert truth["weak_regret"] == pytest.approx(1 - max(i, j) / (K - 1))
    assert len(labels) > 1  # the rows' classes vary; the best arm does not
    _, truth = env.step(300, (K - 1, K - 1))
    assert truth == {"regret": 0.0, "average_regret": 0.0, "weak_regret": 0.0, "self_duel": 1.0}


def test_label_reading_best_arm_is_the_rows_class_ties_to_the_higher_index(statlog):
    env = statlog("label")
    for t, label, u in _rounds(env, 300):
        assert int(np.argmax(u)) == label and u[label] == 1.0 and u.sum() == 1.0
        wrong = [k for k in range(K) if k != label]
        a, b = wrong[t % len(wrong)], wrong[(t + 2) % len(wrong)]
        assert env.step(t, (label, a))[0].y == 1 and env.step(t, (a, label))[0].y == 0
        assert env.step(t, (a, b))[0].y == int(a > b)  # two wrong classes: the higher index


def test_label_coin_is_a_fair_coin_between_two_wrong_classes_in_either_order(statlog):
    env = statlog("label_coin", horizon=4000)
    wins_low_first, wins_high_first = [], []
    for t, label, u in _rounds(env, 4000):
        assert int(np.argmax(u)) == label
        wrong = [k for k in range(K) if k != label]
        a, b = wrong[0], wrong[-1]  # a < b, both wrong
        assert env.step(t, (label, b))[0].y == 1 and env.step(t, (b, label))[0].y == 0
        wins_low_first.append(env.step(t, (a, b))[0].y)
        wins_high_first.append(env.step(t, (b, a))[0].y)
    # the label reading would give 0 and 1 here; a fair coin gives about 1/2 in both orders
    assert abs(np.mean(wins_low_first) - 0.5) < 0.035 and abs(np.mean(wins_high_first) - 0.5) < 0.035


def test_label_coin_draws_the_same_coin_in_a_round_whatever_the_policy_played_before(statlog):
    """Round t's coin is the t-th draw of the outcome stream, so two policies that tie in round t see the
    same outcome there (the pairing of banditbench.configuration.comparisons), whatever they played in the other rounds."""
    always, sometimes = statlog("label_coin", seed=5, horizon=400), statlog("label_coin", seed=5, horizon=400)
    same = []
    for (t, label, _), _ in zip(_rounds(always, 400), _rounds(sometimes, 400)):
        wrong = [k for k in range(K) if k != label]
        tie = always.step(t, (wrong[0], wrong[1]))[0].y
        if t % 2:
            same.append(tie == sometimes.step(t, (wrong[0], wrong[1]))[0].y)
        else:
            sometimes.step(t, (label, wrong[0]))  # no tie: the coin goes unused
    assert all(same) and len(same) == 200


def test_each_reading_is_deterministic_where_the_paper_says_so(statlog):
    """index_order and label use no random numbers: two environments of different seeds on the same rows
    answer alike; label_coin draws only for equal utilities."""
    for preference in ("index_order", "label"):
        one, two = statlog(preference, seed=3), statlog(preference, seed=3)
        two._uniform = None  # any draw would fail
        for t in range(1, 60):
            one.context(t), two.context(t)
            action = (t % K, (2 * t + 1) % K)
            assert one.step(t, action)[0].y == two.step(t, action)[0].y


def test_self_duel_is_one_exactly_in_the_rounds_whose_two_arms_are_equal(statlog):
    horizon = 120
    env = statlog("index_order", horizon=horizon)
    actions = [(t % K, t % K) if t % 3 == 0 else (t % K, (t + 1) % K) for t in range(1, horizon + 1)]
    for t, action in zip(range(1, horizon + 1), actions):
        env.context(t)
        _, truth = env.step(t, action)
        assert truth["self_duel"] == float(action[0] == action[1])
    logged = np.asarray(env.truth_log(horizon)["self_duel"])
    np.testing.assert_array_equal(logged, [float(i == j) for i, j in actions])
    late = logged[-late_rounds(horizon) :]
    regret = np.asarray(env.truth_log(horizon)["regret"])[-late_rounds(horizon) :]
    assert env.summary() == {
        "late_self_duel_rate": pytest.approx(late.mean()),
        "late_regret_rate": pytest.approx(regret.mean()),
    }
    assert 0 < late.mean() < 1


@pytest.mark.parametrize("horizon, closing", [(200, 20), (2000, 200), (5, 1), (1, 1), (15, 2)])
def test_late_rounds_are_the_closing_tenth(horizon, closing):
    assert late_rounds(horizon) == closing


def _statlog_config(**params):
    return {
        "experiments": {
            "statlog": {
                "environment": {"name": "classification_dueling", "params": {"dataset": "shuttle", **params}},
                "horizon": 50,
                "seeds": 2,
                "algorithms": {"random": {"policy": "random_pair"}},
                "delays": {"none": {"kind": "none"}},
            }
        }
    }


@pytest.mark.parametrize(
    "params, key",
    [
        ({"preference": "index_order", "utility": "classifier"}, "params.utility"),
        ({"preference": "label_coin", "utility": "classifier"}, "params.utility"),
        ({"preference": "deterministic"}, "params.preference"),  # the old name: now three readings
    ],
)
def test_a_reading_where_it_makes_no_sense_is_refused_before_any_job(params, key):
    with pytest.raises(ConfigError) as err:
        load_grid(_statlog_config(**params))
    line = str(err.value)
    assert "\n" not in line and f"experiments.statlog.environment.{key}" in line


def test_every_reading_validates_with_label_utilities():
    for preference in ("btl", "index_order", "label", "label_coin"):
        grid = load_grid(_statlog_config(preference=preference))
        assert "self_duel" in grid.experiments["statlog"].per_round_metrics
