"""The NDB family's ``precision`` (issue 48): the network (parameters, Adam's state, training, scores) in float32
or float64, the confidence side (features at theta_0, ``V^{-1}``, widths) in float64 whatever the network's.

Float32 and float64 runs round differently and Adam turns that rounding into different trajectories after a
few rounds, so the two precisions, and the batched and single-seed paths in float32, are compared by their
regret pooled over seeds (``benchmarks/precision_regret.py`` measures the paper cell; here small cells);
within one precision a job is deterministic: the same seed gives the same bytes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from banditbench import params
from banditbench.errors import ConfigError
from banditbench.feedback import PreferenceFeedback
from banditbench.policies.neural.delayed_dueling import NDBDF, NDBHeuristic
from banditbench.policies.neural.neural_dueling import NDBTS
from banditbench.simulation.job import run_block, run_cell
from banditbench.simulation.runner import build
from conftest import synthetic_dueling_cell

GEOMETRIC = {"kind": "geometric", "mean": 3, "window": 10}


def _cell(policy="ndb_df", T=40, delay=GEOMETRIC, d=4, K=6, **extra):
    params = {"width": 8, "train_steps": 4, **extra}
    return synthetic_dueling_cell(
        policy, params, T=T, d=d, K=K, utility="quadratic", arms="sphere", theta="sphere", delay=delay
    )


@pytest.mark.parametrize("cls", [NDBDF, NDBHeuristic, NDBTS])
def test_a_precision_other_than_float32_or_float64_is_refused_in_one_line_naming_the_key(cls):
    for bad in ("half", "float16", 32):
        with pytest.raises(ConfigError, match="policy.params.precision: ") as err:
            params.check(cls, {"precision": bad}, "policy.params")  # what runner.build checks first
        assert "\n" not in str(err.value)
    params.check(cls, {"precision": "float64"}, "policy.params")


def test_the_default_is_float32_training_with_v_inverse_in_float64():
    """Single-seed path: the network, its history of inputs and the trainer in float32; the features and
    ``V^{-1}`` float64; after some rounds the inverse is still float64 and the widths finite."""
    policy = build(_cell(T=12))[1]
    assert policy.dtype == torch.float32
    assert policy.net.theta0.dtype == policy.trainer.current.dtype == policy.x_first.dtype == torch.float32
    assert policy.theta0_64.dtype == torch.float64
    assert torch.equal(policy.theta0_64.to(torch.float32), policy.net.theta0)  # widened exactly
    rng = np.random.default_rng(0)
    for t in range(1, 13):
        arms = rng.standard_normal((6, 4))
        first, second = policy.act(t, arms / np.linalg.norm(arms, axis=1, keepdims=True))
        policy.observe(t + 1, [PreferenceFeedback(t, int(rng.random() < 0.5))])
    assert policy.trainer.current.dtype == torch.float32
    assert policy.gram.inverse.dtype == np.float64
    assert policy._features_at_init(torch.tensor(arms)).dtype == np.float64


@pytest.mark.parametrize("confidence", ["full", "diagonal"])
def test_the_batched_engine_trains_in_float32_and_keeps_v_inverse_in_float64(confidence):
    policies = [build({**_cell(T=30, confidence=confidence), "seed": s})[1] for s in (0, 1, 2)]
    batch = type(policies[0]).batch(policies)
    rng = np.random.default_rng(1)
    for t in range(1, 31):  # past DEFERRED rounds: the held-back updates applied to V^{-1} at least once
        arms = [rng.standard_normal((6, 4)) for _ in policies]
        batch.act_all(t, [a / np.linalg.norm(a, axis=1, keepdims=True) for a in arms])
        batch.observe_all(t + 1, [[PreferenceFeedback(t, int(rng.random() < 0.5))] for _ in policies])
    assert batch.params.dtype == batch.m.dtype == batch.v.dtype == batch.y.dtype == torch.float32
    assert batch.gram.dtype == torch.float64
    if confidence == "full":
        assert batch.held_u.dtype == batch.held_c.dtype == torch.float64
    assert batch.mats0[0].dtype == torch.float64


@pytest.mark.parametrize("policy", ["ndb_df", "ndb_ignore", "ndb_heuristic", "ndb_ts"])
def test_batched_float32_gives_the_single_seed_float32_regret(policy):
    """Both paths in float32 part after a few rounds (Adam amplifies float32 rounding), so their mean regret
    is compared, over 6 seeds, to 15 % (as the default initialisation's test in batched/)."""
    cell = _cell(policy, T=60)
    seeds = list(range(6))
    batched = np.mean([r[0]["regret"].sum() for r in run_block(cell, seeds)])
    single = np.mean([run_cell({**cell, "seed": s})[0]["regret"].sum() for s in seeds])
    assert abs(batched - single) <= 0.15 * single, (batched, single)


def test_float32_and_float64_give_the_same_regret_pooled_over_seeds():
    """The same seeds in both precisions (batched, what a job runs): the mean regret agrees to 10 %."""
    seeds = list(range(8))
    r32, r64 = (
        np.array([r[0]["regret"].sum() for r in run_block(_cell(T=80, precision=p), seeds)])
        for p in ("float32", "float64")
    )
    assert not np.array_equal(r32, r64)  # the precision is in effect
    assert abs(r32.mean() - r64.mean()) <= 0.10 * r64.mean(), (r32.mean(), r64.mean())


def test_a_float32_job_is_deterministic(tmp_path):
    """Same cell and seeds, twice: the same series, bit for bit (run-block's result bytes)."""
    cell = _cell(T=40, init="symmetric")
    first, again = run_block(cell, [0, 1, 2]), run_block(cell, [0, 1, 2])
    for a, b in zip(first, again):
        for name in a[0]:
            np.testing.assert_array_equal(a[0][name], b[0][name])
