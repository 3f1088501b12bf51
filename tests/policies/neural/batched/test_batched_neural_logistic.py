"""Seed-batched neural logistic bandits (issue #22): NeuralLog-UCB-1/-2, NeuralLog-TS-1/-2 and NCBF-UCB
(seed 002; :class:`~banditbench.policies.neural.batched.logistic.BatchedNeuralLogistic`) against the single-seed
reference, a seed's result independent of its block, and the forms the batched path refuses.

Tolerances.  Everything is float64; the batched path computes the same equations with other kernels
and summation orders, so it rounds differently:

* TrainNN's iterates (Adam on the full batch, gradient descent on minibatches): relative 1e-9;
* decisions: every round's arm is the reference's (the same regret value, relative 1e-9), up to the
  first round in which the reference's top two scores (UCB index or Thompson draw) lie within a
  relative 1e-6 of each other (a near tie; the trajectories are not compared after it).  Most rounds
  must be compared, pooled over the seeds and cells of a test (the ``rounding`` fixture runs the
  reference on contexts perturbed at 1e-15, so no assertion rests on this machine's last bits);
* regret: the mean cumulative regret over the seeds of a cell agrees to 5 %.

Block independence is bit for bit (same machine): a seed's result file is the same alone and inside a
block of six, with delays (rows arrive at different rounds in different seeds).
"""

import copy

import numpy as np
import pytest
import torch

from banditbench.policies.neural import logistic as nl
from banditbench.policies.neural.batched.logistic import BatchedNeuralLogistic
from banditbench.simulation.job import SEED_BATCHED, engine, run_block, run_cell, run_members
from banditbench.simulation.runner import build
from test_batched_neural import _assert_not_vacuous, _file_bytes, _same_decisions_as

NO_DELAY = {"kind": "none"}
GEOMETRIC = {"kind": "geometric", "mean": 3, "window": 10}
NEAR_TIE = 1e-6
FAMILY = ["neurallog_ucb1", "neurallog_ucb2", "neurallog_ts1", "neurallog_ts2", "ncbf_ucb"]
#: config/neural_logistic.yaml's form (gradient descent on minibatches, App. A's effective dimension,
#: the linearised mean of UCB-2 / TS-2), at a size that trains several times in a short run
PAPER = {"optimizer": "gd", "minibatch": 20, "effective_dimension": "app_a", "lam": 1.0}


def _cell(policy, T=80, seed=0, delay=NO_DELAY, **params):
    if policy in ("neurallog_ucb2", "neurallog_ts2") and params.get("optimizer") == "gd":
        params = {"mean": "algorithm", **params}
    return {
        "experiment": "x",
        "algorithm": policy,
        "delay_label": "d",
        "budget": None,
        "environment": {"name": "synthetic_logistic", "params": {"latent": "h1", "dimension": 6, "n_arms": 5}},
        "policy": {"name": policy, "params": {"width": 8, "train_every": 10, "train_steps": 20, **params}},
        "delay": dict(delay),
        "horizon": T,
        "seed": seed,
    }


def _top_gap(values) -> float:
    top = np.sort(np.asarray(values, dtype=float))[-2:]
    return (top[1] - top[0]) / max(abs(top[1]), abs(top[0]), 1e-300)


# --- TrainNN ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("params, counts", [({}, (27, 35)), (PAPER, (27, 35)), (PAPER, (15, 35))])
def test_batched_training_follows_each_seeds_trainer(params, counts):
    """Adam on the full batch and gradient descent on minibatches drawn from each seed's own generator:
    the batched iterates are each seed's Trainer's, with a different number of rows per seed (with
    minibatches of 20: both seeds drawing, or one seed still on its full batch of 15 rows)."""
    cell = _cell("neurallog_ucb1", init="independent", **params)
    refs = [build({**cell, "seed": s})[1] for s in (0, 1)]
    batch = type(refs[0]).batch([build({**cell, "seed": s})[1] for s in (0, 1)])
    rng = np.random.default_rng(3)
    t = 40
    for s, (pol, n) in enumerate(zip(refs, counts)):
        x, y = torch.tensor(rng.uniform(-1, 1, (n, 6))), torch.tensor((rng.random(n) < 0.5).astype(float))
        batch.X[s], batch.y[s] = 7.0, 1.0  # rows past n must carry no weight
        batch.X[s, :n], batch.y[s, :n], batch.n[s] = x, y, n
        pol.trainer.fit(lambda theta: pol.net.forward(theta, x), y)
    batch._train(t, torch.tensor([True, True]))
    for s, pol in enumerate(refs):
        ref = pol.trainer.current.numpy()
        assert not np.allclose(ref, pol.net.theta0.numpy())
        np.testing.assert_allclose(batch.params[s].numpy(), ref, rtol=1e-9, atol=1e-12)


# --- equivalence with the single-seed path ------------------------------------------------------------
def _reference(cell, monkeypatch):
    """The single-seed run, and per round the relative top-two gap of the scores it maximised
    (recomputed as ``act`` computes them, with a copy of the seed's stream for Thompson's draws)."""
    gaps = []
    real_act = nl._NeuralLogisticBase.act

    def recording(self, t, arms):
        self._absorb(t)  # act's own call then finds nothing new
        theta = self.trainer.current
        x = torch.tensor(arms, dtype=nl.DTYPE)
        g = self.net.gradients(theta if self.gradient_at == "current" else self.net.theta0, x).numpy()
        phi = g * self.phi_scale if self.phi_scale != 1.0 else g
        width = self.nu * self.conf_radius * self.matrix.norms(phi)
        scores = self._centre(theta, x, g)
        scores = scores + width * (copy.deepcopy(self.rng).standard_normal(len(scores)) if self.sampling else 1.0)
        gaps.append(_top_gap(scores))
        return real_act(self, t, arms)

    with monkeypatch.context() as m:
        m.setattr(nl._NeuralLogisticBase, "act", recording)
        series = run_cell(cell)[0]
    assert len(gaps) == cell["horizon"]
    return series, np.array(gaps)


def _same_decisions(cell, seeds, monkeypatch):
    """Rounds compared and rounds played; the arms agree up to the first near tie (:func:`_same_decisions_as`)."""
    return _same_decisions_as(lambda one: _reference(one, monkeypatch), cell, seeds, NEAR_TIE)


@pytest.mark.parametrize("policy", FAMILY)
def test_batched_makes_the_reference_decisions(policy, rounding, monkeypatch):
    """Each member at the policy defaults (Adam, full batch) and in the paper grid's form under delays."""
    _assert_not_vacuous(
        _same_decisions(_cell(policy), [0, 1], monkeypatch),
        _same_decisions(_cell(policy, delay=GEOMETRIC, **PAPER), [2, 3], monkeypatch),
    )


def test_other_readings_are_batched_like_the_reference(rounding, monkeypatch):
    """Gradients at theta_0, phi = g / sqrt(m), TrainNN's NTK regulariser, the network mean of UCB-2."""
    other = {"gradient_at": "initial", "gradient_scale": "inverse_sqrt_width", "regulariser": "ntk"}
    _assert_not_vacuous(
        _same_decisions(_cell("ncbf_ucb", **other), [0, 1], monkeypatch),
        _same_decisions(_cell("neurallog_ucb2", mean="network", **other), [2], monkeypatch),
    )


# --- block independence -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "policy, params, delay",
    [
        ("neurallog_ts2", PAPER, GEOMETRIC),
        ("neurallog_ucb1", {}, GEOMETRIC),
        ("ncbf_ucb", PAPER, NO_DELAY),
    ],
)
def test_a_seeds_batched_result_file_does_not_depend_on_its_block(policy, params, delay, tmp_path):
    cell = _cell(policy, T=60, delay=delay, **params)
    alone = run_block(cell, [3])[0]
    inside = run_block(cell, [0, 1, 2, 3, 4, 5])
    assert _file_bytes(tmp_path, "a.npz", alone) == _file_bytes(tmp_path, "b.npz", inside[3])
    assert alone[1]["seed"] == 3 and alone[1]["engine"] == "seed-batched"
    assert not np.array_equal(inside[2][0]["regret"], inside[3][0]["regret"])


@pytest.mark.parametrize(
    "policy, params",
    [
        ("neurallog_ts1", PAPER),
        ("neurallog_ucb1", {}),  # eq. 2's effective dimension: its ridge lam_0 / R moves with lam
        ("ncbf_ucb", {"lam": 1.0}),  # d_t on M_t itself: the member's own ridge kappa lam
    ],
)
def test_a_members_result_does_not_depend_on_the_nu_lam_grid_around_it(policy, params, tmp_path):
    """Sec. 7's grid in lockstep (run_members): each (nu, lam, seed) member's result file is the one its
    cell gives alone, bit for bit, and the members differ from each other."""
    base = {k: v for k, v in params.items() if k != "lam"}
    grid = [(0.01, 1.0), (1.0, 0.1), (10.0, 10.0)]
    cells = [
        {
            **_cell(policy, T=60, delay=GEOMETRIC, nu=nu, lam=lam, **base),
            "seed": seed,
            "algorithm": f"{policy}_nu{nu}_lam{lam}",
        }
        for nu, lam in grid
        for seed in (0, 1)
    ]
    together = run_members(cells)
    for cell, result in zip(cells, together):
        alone = run_block({k: v for k, v in cell.items() if k != "seed"}, [cell["seed"]])[0]
        assert result[1]["engine"] == "seed-batched" and result[1]["cell"] == cell
        assert _file_bytes(tmp_path, "a.npz", alone) == _file_bytes(tmp_path, "b.npz", result)
    finals = {float(r[0]["regret"].sum()) for r in together[::2]}
    assert len(finals) == len(grid)


def test_run_members_refuses_members_that_differ_in_more_than_nu_lam_and_seed():
    cells = [{**_cell("neurallog_ucb1", T=10), "seed": 0}, {**_cell("neurallog_ucb1", T=10, width=16), "seed": 1}]
    with pytest.raises(ValueError, match=r"differs from the block's first member.*\['lam', 'nu'\]"):
        run_members(cells)
    with pytest.raises(ValueError, match="differs"):
        run_members([cells[0], {**cells[0], "horizon": 11}])


# --- refused forms ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "policy, params",
    [
        ("neurallog_ucb1", {"radius": "theory"}),
        ("neurallog_ts2", {"lam": "adaptive"}),
        ("ncbf_ucb", {"confidence": "full"}),
    ],
)
def test_refused_forms_fall_back_to_the_single_seed_path(policy, params, tmp_path):
    """``batch`` returns None for the theory radius, an adaptive lam and the full M_t; run_block then
    plays each seed through run_cell: the single-seed result files."""
    cell = _cell(policy, T=30, **params)
    assert engine([cell]) == SEED_BATCHED
    assert nl._NeuralLogisticBase.batch([build(cell)[1]]) is None
    block = run_block(cell, [0, 1])
    for seed, result in zip((0, 1), block):
        assert result[1]["engine"] == "single-seed"
        assert _file_bytes(tmp_path, "a.npz", result) == _file_bytes(
            tmp_path, "b.npz", run_cell({**cell, "seed": seed})
        )


def test_neural_logistic_cells_are_batched():
    for policy in FAMILY:
        assert engine([_cell(policy)]) == SEED_BATCHED
        assert isinstance(nl._NeuralLogisticBase.batch([build(_cell(policy, **PAPER))[1]]), BatchedNeuralLogistic)


def test_a_replay_environment_that_skips_events_falls_back_to_the_single_seed_path(tiny_log, tmp_path):  # noqa: F811
    """The Open Bandit Dataset replay skips the events whose logged item the policy did not choose, which a
    block in lockstep cannot play: run_block runs the seeds through run_cell (their single-seed files)."""
    cell = {**_cell("neurallog_ucb1", T=2), "environment": {"name": "obd_replay", "params": {}}}
    for seed, result in zip((0, 1), run_block(cell, [0, 1])):
        assert result[1]["engine"] == "single-seed"
        assert _file_bytes(tmp_path, "a.npz", result) == _file_bytes(
            tmp_path, "b.npz", run_cell({**cell, "seed": seed})
        )


# --- devices ----------------------------------------------------------------------------------------------
@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is there")
def test_cuda_without_a_gpu_is_refused_before_any_job_naming_the_key():
    from banditbench import registry
    from banditbench.errors import ConfigError

    for name in FAMILY:
        cls = registry.get("policy", name).load()
        with pytest.raises(ConfigError, match=r"params\.device: 'cuda'.*no GPU"):
            cls.check_params(registry.values(cls, {"device": "cuda"}), 100)
        cls.check_params(registry.values(cls, {"device": "cpu"}), 100)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@pytest.mark.parametrize("policy", ["neurallog_ucb2", "neurallog_ts1"])
def test_batched_on_cuda_makes_the_cpu_decisions(policy, monkeypatch):
    _assert_not_vacuous(_same_decisions(_cell(policy, delay=GEOMETRIC, device="cuda", **PAPER), [0, 1], monkeypatch))
