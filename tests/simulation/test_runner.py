import json
import re
import zipfile

import numpy as np
import pytest

from banditbench.simulation import runner
from banditbench.api import Problem
from banditbench.simulation.delays import make_delay
from banditbench.storage.resultio import load_result, save_result
from banditbench.simulation.job import run_cell
from banditbench.simulation.runner import build, simulate
from helpers import CountingEnv, RecordingPolicy

CELL = {
    "experiment": "e",
    "algorithm": "ldb_df",
    "delay_label": "geo",
    "seed": 7,
    "horizon": 300,
    "budget": None,
    "environment": {"name": "synthetic_dueling", "params": {"dimension": 6, "n_arms": 8}},
    "policy": {"name": "ldb_df", "params": {}},
    "delay": {"kind": "geometric", "mean": 10, "window": 20},
}


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def test_same_seed_gives_an_identical_result_file(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    for path in (a, b):
        save_result(path, *run_cell(CELL))
    ma, mb = _members(a), _members(b)
    assert (
        set(ma)
        == set(mb)
        == {
            "regret.npy",
            "average_regret.npy",
            "weak_regret.npy",
            "self_duel.npy",
            "meta.npy",
            "timing.npy",
            "checksum.npy",
            "provenance.npy",
            "run_checksum.npy",
        }
    )
    # everything but the wall time and what ran it (and their checksum) is byte-identical, zip headers included
    assert all(ma[k] == mb[k] for k in ma if k not in ("timing.npy", "provenance.npy", "run_checksum.npy"))
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        assert [i.date_time for i in za.infolist()] == [i.date_time for i in zb.infolist()]
    series, meta, timing = load_result(a)
    assert meta["seed"] == 7 and meta["cell"] == CELL and timing["wall_time_s"] > 0
    assert meta["metrics"][0] == "regret"


def test_different_seed_gives_different_results():
    other = dict(CELL, seed=8)
    assert not np.array_equal(run_cell(CELL)[0]["regret"], run_cell(other)[0]["regret"])


def test_environment_draws_do_not_depend_on_the_policy():
    """Contexts come from the environment's own stream: same for every algorithm and delay."""
    contexts = []
    for policy, delay in (("ldb_df", CELL["delay"]), ("random_pair", {"kind": "none"})):
        env, _, _, _ = build(dict(CELL, policy={"name": policy, "params": {}}, delay=delay))
        contexts.append(np.stack([env.context(t) for t in range(1, 20)]))
        contexts.append(env.theta)
    assert np.array_equal(contexts[0], contexts[2]) and np.array_equal(contexts[1], contexts[3])


def test_interrupted_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "run.npz"
    series, meta, timing = run_cell(dict(CELL, horizon=20))

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("banditbench.storage.resultio.os.replace", boom)
    try:
        save_result(target, series, meta, timing)
    except KeyboardInterrupt:
        pass
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_result_meta_is_json_with_resolved_parameters(tmp_path):
    save_result(tmp_path / "r.npz", *run_cell(dict(CELL, horizon=10)))
    _, meta, _ = load_result(tmp_path / "r.npz")
    json.dumps(meta)
    assert meta["rho"] == 1 - 0.9**20
    assert meta["banditbench_version"]


def test_logs_cross_block_boundaries_and_same_round_arrivals_come_in_round_order(monkeypatch):
    """Truth values are written a block at a time (here blocks of 7 rounds): every round's value
    lands at its own index; feedback arriving together is handed over in the order of its rounds."""
    monkeypatch.setattr(runner, "LOG_BLOCK", 7)
    T = 100
    env = CountingEnv(np.random.SeedSequence(3), horizon=T)
    policy = RecordingPolicy(Problem(T), np.random.default_rng(0))
    logs = simulate(env, policy, make_delay({"kind": "uniform", "low": 0, "high": 9}), T, np.random.default_rng(1))
    expected = np.random.default_rng(np.random.SeedSequence(3)).random(T)  # CountingEnv's draws, in order
    assert np.array_equal(logs["context"], expected)
    by_arrival = {}
    for t, s in policy.seen:
        by_arrival.setdefault(t, []).append(s)
    assert any(len(rounds) > 1 for rounds in by_arrival.values())
    assert all(rounds == sorted(rounds) and all(s < t for s in rounds) for t, rounds in by_arrival.items())


def test_an_environment_returning_other_values_than_its_metrics_is_named():
    class Misnamed(CountingEnv):
        def step(self, t, action):
            feedback, _ = super().step(t, action)
            return feedback, {"contxt": self.value}

    env = Misnamed(np.random.SeedSequence(0), horizon=5)
    with pytest.raises(
        ValueError,
        match=re.escape("Misnamed.step returned the values ['contxt'] in round 1; its metrics are ['context']"),
    ):
        simulate(
            env,
            RecordingPolicy(Problem(5), np.random.default_rng(0)),
            make_delay({"kind": "none"}),
            5,
            np.random.default_rng(0),
        )


def test_arrival_rounds_are_zero_for_censored_and_too_late_feedback():
    model = make_delay({"kind": "constant", "value": 3, "window": 5})
    assert model.arrival_rounds(np.array([0, 1, 3, 6, 2]), horizon=6).tolist() == [2, 3, 6, 0, 0]
