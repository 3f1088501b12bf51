"""Host syncs of the seed-batched neural round (issue 37).

On a GPU every read of a tensor's values on the host (``.cpu()``, ``.item()``, ``.tolist()``, ``float(t)``,
``if t:``, ...) waits for the device to finish its queue.  A batched round therefore reads once: the values
the host's decisions need (scores and widths, or features, ``theta`` and ``V^{-1}``), gathered into one tensor.
This file runs each family on the CPU under a counter of such reads (counting only inside
``observe_all`` / ``act_all``, not the setup) and asserts, for blocks of 2 and of 6 seeds, at most the stated
number per round, the same in both blocks:

* NDB-DF and its baselines, NDB-UCB / NDB-TS (:class:`BatchedNeuralDueling`): 1;
* NVLDB / NLDB (:class:`BatchedNeuralLinearDueling`): 1, plus one per Newton step of the refit of ``theta``
  (line 10; at most ``newton_steps`` per training round), counted apart;
* NeuralLog-UCB-1 / TS-1, NCBF-UCB (:class:`BatchedNeuralLogistic`): 1; NeuralLog-UCB-2 / TS-2 (``W_t``): 2 in a
  round where some seed absorbs feedback (``W_t``'s weights ``mu'(f(x_i))`` are the reference's numpy sigmoid,
  computed on the host), else 1.
"""

import numpy as np
import pytest
import torch

from banditbench.api import Problem
from banditbench.policies.neural import delayed_dueling as dd
from banditbench.policies.neural.batched import ops as B
from banditbench.policies.neural.batched.delayed_dueling import BatchedNeuralDueling
from banditbench.policies.neural.batched.logistic import BatchedNeuralLogistic
from banditbench.policies.neural.batched.variance_aware_dueling import BatchedNeuralLinearDueling
from banditbench.feedback import PreferenceFeedback
from banditbench.simulation.runner import run_seed_batched
from test_batched_neural import NVLDB
from test_batched_neural import _cell as duel_cell
from test_batched_neural_dueling import _cell as ndb_cell
from test_batched_neural_logistic import FAMILY
from test_batched_neural_logistic import _cell as log_cell

T = 20
BLOCKS = (2, 6)
NO_DELAY = {"kind": "none"}
GEOMETRIC = {"kind": "geometric", "mean": 3, "window": 10}
#: a minibatch small enough to be drawn within T rounds, training every third round
MINIBATCH = {"optimizer": "gd", "minibatch": 5, "effective_dimension": "app_a", "train_every": 3}
#: the host reads of one tensor's values: each is a device-to-host transfer on a GPU
READS = ("item", "tolist", "numpy", "__array__", "__float__", "__int__", "__bool__", "__index__")


class SyncCounter:
    """Counts host reads of tensor values inside the batched rounds: a ``.cpu()`` is one (the copy's own reads
    are then free), and so is any read of a tensor that is not such a copy (on a GPU: a transfer of its own).
    Reads inside :func:`.ops.fit_logistic` are counted apart, per call (``newton``: reads, ``max_iter``)."""

    def __init__(self):
        self.copies: list[torch.Tensor] = []
        self.rounds: dict[int, int] = {}
        self.newton: list[tuple[int, int]] = []
        self.count, self.active, self.depth = 0, False, 0

    def reading(self, real):
        def read(tensor, *args, **kwargs):
            if self.active and not self.depth and not any(tensor is copy for copy in self.copies):
                self.count += 1
            self.depth += 1  # a read made of other reads (``__array__`` calls ``numpy``) is one
            try:
                return real(tensor, *args, **kwargs)
            finally:
                self.depth -= 1

        return read

    def copying(self, real):
        def cpu(tensor, *args, **kwargs):
            out = real(tensor, *args, **kwargs)
            if self.active and not self.depth:
                self.count += 1
                out = out.view_as(out)  # a new object, also where .cpu() returns the CPU tensor itself
                self.copies.append(out)
            return out

        return cpu

    def round(self, real):
        def call(batch, t, items):
            start, self.active = self.count, True
            try:
                return real(batch, t, items)
            finally:
                self.active = False
                self.rounds[t] = self.rounds.get(t, 0) + self.count - start

        return call

    def refit(self, real):
        def fit(*args, **kwargs):
            start = self.count
            try:
                return real(*args, **kwargs)
            finally:
                self.newton.append((self.count - start, kwargs["max_iter"]))
                self.count = start

        return fit

    def per_round(self, run) -> tuple[list[int], list[tuple[int, int]]]:
        """``run()``'s reads per round ``1 .. T`` and its Newton refits."""
        self.rounds, self.newton = {}, []
        run()
        return [self.rounds[t] for t in range(1, T + 1)], self.newton


@pytest.fixture
def syncs(monkeypatch):
    counter = SyncCounter()
    for name in READS:
        monkeypatch.setattr(torch.Tensor, name, counter.reading(getattr(torch.Tensor, name)))
    monkeypatch.setattr(torch.Tensor, "cpu", counter.copying(torch.Tensor.cpu))
    monkeypatch.setattr(B, "fit_logistic", counter.refit(B.fit_logistic))
    for cls in (BatchedNeuralDueling, BatchedNeuralLinearDueling, BatchedNeuralLogistic):
        monkeypatch.setattr(cls, "observe_all", counter.round(cls.observe_all))
        monkeypatch.setattr(cls, "act_all", counter.round(cls.act_all))
    return counter


def _blocks(syncs, cell):
    """Reads per round and Newton refits of ``cell`` run seed-batched in a block of each size of :data:`BLOCKS` (on the
    engine itself: a CPU job plays NVLDB's seeds one after the other, its declaration's ``cpu_min_block``)."""
    return [
        syncs.per_round(lambda: run_seed_batched([{**cell, "horizon": T, "seed": s} for s in range(S)])) for S in BLOCKS
    ]


#: every pair rule, each with one of the three readings of V (and a delay where there is one to catch up)
GRAMS = [("incremental", "float32", GEOMETRIC), ("rebuild", "float64", NO_DELAY), ("reset", "float32", GEOMETRIC)]
NVLDB_CASES = [(policy, {"gram": g, "precision": p}, delay) for policy, (g, p, delay) in zip(NVLDB, GRAMS * 4)]


@pytest.mark.parametrize("policy, params, delay", [*NVLDB_CASES, ("nvldb_ucb_asym", {"refit_theta": False}, NO_DELAY)])
def test_nvldb_reads_once_per_round_and_once_per_newton_step(syncs, policy, params, delay):
    cell = duel_cell(policy, T=T, delay=delay, train_steps=3, **params)
    (small, small_newton), (large, large_newton) = _blocks(syncs, cell)
    assert small == large == [1] * T, (small, large)
    for reads, max_iter in small_newton + large_newton:
        assert reads <= max_iter, (reads, max_iter)
    assert bool(small_newton) == params.get("refit_theta", True)


@pytest.mark.parametrize(
    "policy, params",
    [
        *[(policy, {}) for policy in ("ndb_df", "ndb_ignore", "ndb_heuristic", "ndb_heuristic_all", "ndb_zero")],
        ("ndb_heuristic", {"confidence": "diagonal"}),
        ("ndb_df", {"init": "symmetric"}),
        ("ndb_ucb", {"depth": 3, "kappa_mu": 1.0}),
        ("ndb_ts", {"depth": 3, "init": "symmetric"}),
    ],
)
def test_neural_dueling_reads_once_per_round(syncs, policy, params):
    (small, _), (large, _) = _blocks(syncs, ndb_cell(policy, T=T, delay=GEOMETRIC, **params))
    assert small == large == [1] * T, (small, large)


@pytest.mark.parametrize("confidence", ["full", "diagonal"])
def test_neural_dueling_on_a_fixed_arm_set_reads_once_per_round(syncs, confidence):
    """The fixed arm sets of the prompt environments: the arm kernel (or V's diagonal) path, played directly."""
    K, d = 8, 4
    arms = np.random.default_rng(0).standard_normal((K, d))
    arms.flags.writeable = False
    problem = Problem(T, rho=0.8, window=10, info={"dimension": d, "n_arms": K, "fixed_arms": True})

    def play(S):
        batch = dd.NDBHeuristic.batch(
            [
                dd.NDBHeuristic(problem, np.random.default_rng(s), width=8, train_steps=3, confidence=confidence)
                for s in range(S)
            ]
        )
        arrived = [[] for _ in range(S)]
        for t in range(1, T + 1):
            batch.observe_all(t, arrived)
            arrived = [[PreferenceFeedback(t, (s + t) % 2)] for s, _ in enumerate(batch.act_all(t, [arms] * S))]

    small, large = (syncs.per_round(lambda: play(S))[0] for S in BLOCKS)
    assert small == large == [1] * T, (small, large)


@pytest.mark.parametrize("policy", FAMILY)
@pytest.mark.parametrize("params, delay", [({}, NO_DELAY), (MINIBATCH, NO_DELAY), (MINIBATCH, GEOMETRIC)])
def test_neural_logistic_reads_once_per_round_twice_with_new_rows_of_W(syncs, policy, params, delay):
    cell = log_cell(policy, T=T, delay=delay, **params)
    (small, _), (large, _) = _blocks(syncs, cell)
    bound = 2 if policy in ("neurallog_ucb2", "neurallog_ts2") else 1
    assert max(small + large) <= bound and small[0] == large[0] == 1, (small, large)
    if delay is NO_DELAY:  # every seed absorbs a row in every round after the first
        assert small == large == [1] + [bound] * (T - 1), (small, large)
