"""Numerical divergence is never silent (issue 38): a policy whose scores stop being finite ends its run at
that round, named in one line (experiment, algorithm, seed, round), and the run is recorded as diverged, in
the single-seed path and the seed-batched path alike."""

from __future__ import annotations

import json
import re
from typing import Annotated

import numpy as np
import pytest

from banditbench import registry
from banditbench.api import BatchedPolicy, Policy, SeedBatched, check_finite, choose
from banditbench.cli import main
from banditbench.params import Doc, NonNegativeInt
from banditbench.conformance import LATE_AND_LOST, cell_for
from banditbench.errors import Diverged
from banditbench.simulation.job import run_block, run_cell, run_members
from banditbench.simulation.runner import build, simulate
from banditbench.storage.resultio import load_result


class _NaNAt(Policy):
    """Greedy on the arms' first feature (with a little noise from its own stream); from round ``nan_at`` on
    (0: never) the last arm's score is NaN, where np.argmax would play it without a word."""

    feedback_kind, action_kind = "reward", "arm"
    engines = {"seed-batched": SeedBatched(per_member=("nan_at",))}

    def __init__(
        self, problem, rng, *, nan_at: Annotated[NonNegativeInt, Doc("round from which a score is NaN (0: never)")] = 0
    ):
        self.rng, self.nan_at = rng, nan_at

    def scores(self, t, arms):
        scores = arms[:, 0] + 0.01 * self.rng.standard_normal(len(arms))
        if self.nan_at and t >= self.nan_at:
            scores[-1] = np.nan
        return scores

    def observe(self, t, arrived):
        pass

    def act(self, t, arms):
        return choose(self.scores(t, arms))

    @classmethod
    def batch(cls, policies):
        return _NaNAtBlock(policies)


class _NaNAtBlock(BatchedPolicy):
    def __init__(self, policies):
        self.policies = policies

    def observe_all(self, t, arrived):
        pass

    def act_all(self, t, contexts):
        return [self.choose_member(s, p.scores(t, arms)) for s, (p, arms) in enumerate(zip(self.policies, contexts))]


@pytest.fixture
def nan_at(monkeypatch):
    """The registered name of :class:`_NaNAt` for this test, and a cell of it: ``cell(nan_at, seed, ...)``."""
    real = registry.get

    class Entry:
        plugin = None
        origin = "built-in"
        module = __name__

        def load(self):
            return _NaNAt

    def get(kind, name, where=None):
        return Entry() if kind == "policy" and name == "nan_at_policy" else real(kind, name, where)

    monkeypatch.setattr(registry, "get", get)

    def cell(at, seed=4, horizon=30, delay=None):
        c = cell_for("nan_at_policy", horizon=horizon, seed=seed, delay=delay)
        c["policy"]["params"] = {"nan_at": at}
        c["algorithm"] = f"nan_at_{at}"
        return c

    return cell


def _line(cell, round_, reason="its scores contain NaN"):
    return (
        f"banditbench: diverged: conformance / {cell['algorithm']} (policy {cell['policy']['name']}) / delay delay / "
        f"seed {cell['seed']}: diverged at round {round_} of {cell['horizon']} ({reason}); recorded as diverged: "
        f"rounds {round_}-{cell['horizon']} not played, the run left out of the tables' statistics"
    )


def _played_then_nan(series, round_):
    for values in series.values():
        assert np.isfinite(values[: round_ - 1]).all() and np.isnan(values[round_ - 1 :]).all()


def test_choose_refuses_a_nan_anywhere_and_an_infinite_maximum():
    assert choose(np.array([0.1, 0.3, 0.2])) == 1
    assert choose(np.array([[0.0, -np.inf], [1.0, -np.inf]])) == 2  # a mask of -inf is fine
    for scores, reason in (
        ([0.9, 0.1, np.nan], "its scores contain NaN"),
        ([np.nan, 0.1], "its scores contain NaN"),
        ([0.0, np.inf], "its scores are +inf"),
        ([-np.inf, -np.inf], "its scores are all -inf"),
    ):
        with pytest.raises(Diverged, match=re.escape(reason)):
            choose(np.array(scores))
    check_finite("widths", np.ones(3), np.zeros((2, 2)))
    with pytest.raises(Diverged, match="its widths are not finite"):
        check_finite("widths", np.ones(3), np.array([[0.0, np.nan]]))


@pytest.mark.parametrize("delay", [None, LATE_AND_LOST], ids=["next-round feedback", "queued feedback"])
def test_a_single_seed_run_ends_and_is_recorded_at_the_round_its_scores_turn_nan(nan_at, capsys, delay):
    cell = nan_at(7, delay=delay)
    env, policy, delay_model, delay_rng = build(cell)
    with pytest.raises(Diverged) as caught:
        simulate(env, policy, delay_model, 30, delay_rng)
    assert caught.value.round == 7 and str(caught.value) == "diverged at round 7: its scores contain NaN"
    _played_then_nan(caught.value.series, 7)

    series, meta, _ = run_cell(cell)
    assert meta["diverged"] == {"round": 7, "reason": "its scores contain NaN"} and meta["engine"] == "single-seed"
    _played_then_nan(series, 7)
    assert capsys.readouterr().err.strip().splitlines() == [_line(cell, 7)]
    # a run that does not diverge is as before: no marker, every round played
    series, meta, _ = run_cell(nan_at(0, delay=delay))
    assert "diverged" not in meta and np.isfinite(series["regret"]).all()


def test_a_seed_batched_block_stops_only_its_diverged_member(nan_at, capsys):
    diverging, steady = nan_at(5, seed=4), nan_at(0, seed=5)
    (s_div, m_div, _), (s_ok, m_ok, _) = run_members([diverging, steady])
    assert m_div["engine"] == "seed-batched" and m_div["diverged"] == {"round": 5, "reason": "its scores contain NaN"}
    _played_then_nan(s_div, 5)
    assert "diverged" not in m_ok and np.isfinite(s_ok["regret"]).all()
    assert capsys.readouterr().err.strip().splitlines() == [_line(diverging, 5)]
    # the other member's result is the one it gives alone; the diverged one's rounds are the single path's
    assert np.array_equal(run_members([steady])[0][0]["regret"], s_ok["regret"])
    assert np.array_equal(run_cell(diverging)[0]["regret"], s_div["regret"], equal_nan=True)
    # every member diverged: the block stops, each recorded
    results = run_block(nan_at(3), [1, 2])
    assert [meta["diverged"]["round"] for _, meta, _ in results] == [3, 3]


def test_run_block_and_run_one_record_the_diverged_run_and_name_it_in_one_line(nan_at, tmp_path, capsys):
    cell = nan_at(6)
    outputs = [tmp_path / "4.npz", tmp_path / "5.npz"]
    argv = ["run-block", "--cell", json.dumps({k: v for k, v in cell.items() if k != "seed"}), "--seeds", "4", "5"]
    assert main(argv + ["--outputs", *map(str, outputs)]) == 0
    for seed, output in zip((4, 5), outputs):
        series, meta, _ = load_result(output)
        assert meta["diverged"] == {"round": 6, "reason": "its scores contain NaN"} and meta["seed"] == seed
        _played_then_nan(series, 6)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if "diverged" in line] == [
        _line({**cell, "seed": 4}, 6),
        _line({**cell, "seed": 5}, 6),
    ]
    assert main(["run-one", "--cell", json.dumps(cell)]) == 0
    out, err = capsys.readouterr()
    assert _line(cell, 6) in err.splitlines()
    assert "diverged at round 6 (its scores contain NaN); rounds 1 .. 5:" in out and ": nan" not in out


def _neural(lam=10.0, lr=1e6, seed=3, horizon=60, every=10):
    cell = cell_for("neurallog_ucb1", horizon=horizon, seed=seed)
    cell["policy"]["params"] = {"optimizer": "gd", "lr": lr, "train_every": every, "train_steps": 20, "lam": lam}
    cell["algorithm"] = f"neurallog_ucb1_lam{lam:g}"
    return cell


def test_gradient_descent_that_diverges_is_named_in_the_single_and_the_batched_path(capsys):
    """A neural policy's gradient descent with a huge learning rate: its scores turn NaN at the first
    retraining; both paths record the same round (rounds 1 .. 20 played) instead of playing the NaN arm."""
    cell = _neural()
    single, meta, _ = run_cell(cell)
    assert meta["diverged"]["round"] == 21 and meta["engine"] == "single-seed"
    _played_then_nan(single, 21)
    (batched, bmeta, _), (other, ometa, _) = run_block(cell, [3, 4])
    assert bmeta["engine"] == "seed-batched" and bmeta["diverged"]["round"] == 21
    _played_then_nan(batched, 21)
    assert ometa["diverged"]["round"] == 21
    err = capsys.readouterr().err
    for seed in (3, 3, 4):
        assert f"neurallog_ucb1_lam10 (policy neurallog_ucb1) / delay delay / seed {seed}: diverged at round 21" in err


def test_a_diverging_corner_of_a_lockstep_grid_stops_alone():
    """Seed 002's nu / lam grid in lockstep (run_members): the pair whose regulariser makes gradient descent
    diverge (lr 2 lam > 2) is recorded as diverged; the other pair plays every round, as it does alone."""
    steady, corner = (_neural(lam=lam, lr=0.5, seed=1, horizon=40, every=5) for lam in (0.01, 100.0))
    (s_ok, m_ok, _), (s_div, m_div, _) = run_members([steady, corner])
    assert "diverged" not in m_ok and np.isfinite(s_ok["regret"]).all()
    assert np.array_equal(run_members([steady])[0][0]["regret"], s_ok["regret"])
    assert m_div["diverged"]["round"] == run_cell(corner)[1]["diverged"]["round"] == 21
    _played_then_nan(s_div, 21)


def test_a_divergence_that_reaches_the_command_line_is_one_line_not_a_traceback(monkeypatch, capsys):
    import banditbench.cli as cli

    def diverges(args):
        raise Diverged("its scores contain NaN", round=12)

    monkeypatch.setattr(cli, "_validate", diverges)
    assert main(["validate", "config.yaml"]) == 4
    assert capsys.readouterr().err == "banditbench: diverged at round 12: its scores contain NaN\n"
