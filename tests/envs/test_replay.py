"""Open Bandit Dataset replay (seed 002 App. J.1): the prepared action sets and features, replay acceptance."""

import re
import shutil

import numpy as np
import pandas as pd
import pytest

from banditbench.api import Policy, Problem
from banditbench.data.paths import REPLAY_DATASET, replay_path
from banditbench.data.open_bandit import prepare_obd
from banditbench.simulation.delays import make_delay
from banditbench.envs.replay import OBDReplay
from banditbench.errors import ConfigError
from banditbench.simulation.job import run_cell
from banditbench.simulation.runner import simulate
from conftest import MIRROR, needs_mirror


class Spy(Policy):
    """Picks a uniformly random slot; records every act call and every feedback item."""

    feedback_kind = "reward"

    def __init__(self, problem, rng):
        self.rng, self.acts, self.feedback = rng, [], []

    def observe(self, t, arrived):
        self.feedback.extend((t, fb.round, fb.reward) for fb in arrived)

    def act(self, t, arms):
        a = int(self.rng.integers(len(arms)))
        self.acts.append((t, a, arms.copy()))
        return a


def _cell(T, **env):
    return {
        "experiment": "e",
        "algorithm": "spy",
        "delay_label": "none",
        "horizon": T,
        "budget": None,
        "seed": 3,
        "delay": {"kind": "none"},
        "environment": {"name": "obd_replay", "params": env},
        "policy": {"name": "random_arm", "params": {}},
    }


def test_replay_keeps_exactly_the_matching_events_and_never_shows_another_click(tiny_log):
    T = 40
    env = OBDReplay(np.random.SeedSequence(1), horizon=T)
    spy = Spy(Problem(T, info=env.public_info()), np.random.default_rng(2))
    series = simulate(env, spy, make_delay({"kind": "none"}), T, np.random.default_rng(0))
    accepted = [(t, int(arms[a, 1])) for t, a, arms in spy.acts if arms[a, 0] == 0]  # chose the logged item
    assert [t for t, _ in accepted] == list(range(1, T + 1))  # one accepted event per round, in order
    # every act call shows a new event, in the environment's order; the rounds only move on acceptance
    assert [int(arms[0, 1]) for _, _, arms in spy.acts] == list(env.events[: env.used])
    clicks = [float(tiny_log[e]) for _, e in accepted]
    np.testing.assert_array_equal(series["reward"], clicks)
    # feedback: exactly the accepted events' clicks, none for a skipped event
    assert [(s, r) for _, s, r in spy.feedback] == [(t, c) for (t, _), c in zip(accepted[:-1], clicks[:-1])]
    assert env.summary() == pytest.approx(
        {"ctr": np.mean(clicks), "events_used": len(spy.acts), "acceptance_rate": T / len(spy.acts)}
    )
    assert 2 < len(spy.acts) / T < 10  # about K events per accepted one


def test_logged_item_slot_is_uniform_and_a_short_log_is_a_clear_error(tiny_log):
    env = OBDReplay(np.random.SeedSequence(4), horizon=10, order="log")
    assert list(env.events) == list(range(300))
    slots = np.array([np.flatnonzero(env.context(t)[:, 0] == 0)[0] for t in range(1, 301)])
    counts = np.bincount(slots, minlength=5)
    assert counts.min() > 35 and counts.max() < 85  # 60 expected per slot
    with pytest.raises(ConfigError) as short:
        run_cell(_cell(200))
    # the experiment's horizon key, the dataset and its prepared file, the counts
    assert re.fullmatch(
        rf"experiments\.e\.horizon: the replay log of dataset '{REPLAY_DATASET}' "
        rf"\({re.escape(str(replay_path(None)))}\) has 300 events and only \d+ were accepted before "
        r"round \d+ of horizon 200; lower the horizon below the accepted count or replay a longer log",
        str(short.value),
    )
    with pytest.raises(ConfigError, match="experiments.e.environment.params.order"):
        run_cell(_cell(5, order="time"))


@needs_mirror
def test_prepared_open_bandit_sample_has_the_appendix_features(tmp_path):
    raw = tmp_path / "obd/random/all"
    raw.mkdir(parents=True)
    for name in ("all.csv", "item_context.csv"):
        shutil.copy(MIRROR / "obd/random/all" / name, raw / name)
    arrays, meta = prepare_obd(None, tmp_path)
    log = pd.read_csv(raw / "all.csv", index_col=0)
    features, items = arrays["features"], arrays["items"]
    assert features.shape == (10_000, 5, 16 + 8 + 1 + 1 + 16) and meta["feature_dim"] == 42
    np.testing.assert_array_equal(items[:, 0], log["item_id"])  # the logged item first
    np.testing.assert_array_equal(arrays["click"], log["click"])
    assert all(len(set(row)) == 5 for row in items)
    affinity = log[[f"user-item_affinity_{j}" for j in range(80)]].to_numpy()
    for i in np.flatnonzero((affinity > 0).sum(1) >= 1)[:50]:  # the highest-affinity alternatives
        others = np.delete(np.arange(80), log["item_id"].iloc[i])
        best = np.sort(affinity[i, others])[::-1][:4]
        np.testing.assert_array_equal(np.sort(affinity[i, items[i, 1:]])[::-1], best)
    user = features[:, :, :16]
    assert np.array_equal(user, np.broadcast_to(user[:, :1], user.shape))  # the user part is the event's
    log_aff = features[:, :, 25]
    assert log_aff.min() == -1.0 and log_aff.max() == 1.0
    np.testing.assert_allclose(features[:, :, 26:], user * log_aff[..., None], rtol=1e-6, atol=1e-6)
    assert set(np.unique(features[:, 0, 24])) == {-1.0, 0.0, 1.0}  # three display positions
