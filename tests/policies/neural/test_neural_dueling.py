"""The shared neural machinery and NDB-DF with its baselines (seed 000 Sec. 3.2, Algorithm 2)."""

import json
import math
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import torch

from banditbench import registry
from banditbench.api import Problem
from banditbench.simulation.delays import make_delay
from banditbench.errors import ConfigError
from banditbench.feedback import PreferenceFeedback
from banditbench.numerics.sigmoid import sigmoid
from banditbench.policies.delayed_labels import DuelHistory
from banditbench.policies.linalg import ArmKernelGram, DiagonalGram, InverseGram
from banditbench.policies.neural.delayed_dueling import NDBDF, NDBIgnore
from banditbench.policies.neural.nets import MLP, generator_from
from banditbench.policies.neural.training import Trainer
from banditbench.simulation.job import run_cell
from conftest import ROOT
from perturb import assert_same_or_near_tie


def _unit_rows(rng, n, d):
    x = rng.standard_normal((n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("init, depth", [("symmetric", 2), ("symmetric", 3), ("independent", 2)])
def test_batched_gradients_equal_per_arm_autograd(init, depth):
    rng = np.random.default_rng(0)
    net = MLP(6, 8, depth, init, generator_from(rng))
    theta = net.theta0 + 0.05 * torch.randn(net.n_params, generator=generator_from(rng), dtype=torch.float64)
    x = torch.from_numpy(_unit_rows(rng, 7, 6))
    batched = net.gradients(theta, x)
    assert batched.shape == (7, net.n_params)
    for k in range(7):
        th = theta.clone().requires_grad_(True)
        net.forward(th, x[k]).backward()
        torch.testing.assert_close(batched[k], th.grad, rtol=1e-6, atol=1e-10)


def test_symmetric_initialisation_outputs_zero_and_scales_features_to_order_one():
    rng = np.random.default_rng(1)
    net = MLP(10, 64, 2, "symmetric", generator_from(rng))
    x = torch.from_numpy(_unit_rows(rng, 50, 10))
    assert net.forward(net.theta0, x).abs().max() < 1e-12
    assert net.n_params == 64 * 20 + 64  # first layer acts on [x; x] / sqrt(2)
    ntk = (net.gradients(net.theta0, x) / math.sqrt(64)).square().sum(1)
    assert 0.2 < ntk.mean() < 5  # ||g / sqrt(m)||^2 is O(1)
    other = MLP(10, 64, 2, "independent", generator_from(rng))
    assert other.forward(other.theta0, x).abs().max() > 1e-3
    assert torch.equal(MLP(10, 64, 2, "symmetric", generator_from(np.random.default_rng(1))).theta0, net.theta0)


def test_network_rejects_bad_shapes_with_the_key_named():
    gen = generator_from(np.random.default_rng(0))
    with pytest.raises(ConfigError, match="depth"):
        MLP(3, 8, 1, "symmetric", gen)
    with pytest.raises(ConfigError, match="width"):
        MLP(3, 7, 2, "symmetric", gen)
    with pytest.raises(ConfigError, match="init"):
        MLP(3, 8, 2, "xavier", gen)


def test_confidence_matrices_equal_their_direct_computation():
    rng = np.random.default_rng(2)
    p, K, reg = 40, 12, 10.0
    phi = rng.standard_normal((K, p))
    full, diag, kernel = InverseGram(p, reg, keep_matrix=False), DiagonalGram(p, reg), ArmKernelGram(phi, reg)
    V = reg * np.eye(p)
    for _ in range(60):
        a, b = rng.choice(K, 2, replace=False)
        u = phi[a] - phi[b]
        V += np.outer(u, u)
        full.update(u)
        diag.update(u)
        kernel.update_pair(a, b)
    V_inv = np.linalg.inv(V)
    np.testing.assert_allclose(full.inverse, V_inv, rtol=1e-8, atol=1e-12)
    first = 3
    direct = np.sqrt(np.einsum("ij,jk,ik->i", phi - phi[first], V_inv, phi - phi[first]))
    np.testing.assert_allclose(kernel.pair_norms(first), direct, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(full.norms(phi - phi[first]), direct, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(diag.norms(phi - phi[first]), np.sqrt(((phi - phi[first]) ** 2 / np.diag(V)).sum(1)))


def test_ipw_weighted_neural_gradient_is_unbiased_and_zero_filling_is_not():
    """E over delays of the gradient of eq. 7 with omega-weighted labels equals the full-information
    gradient (labels enter linearly); the zero-filled loss's gradient is off by (1 - rho) y (Monte Carlo)."""
    rng = np.random.default_rng(3)
    d, n = 4, 30
    net = MLP(d, 8, 2, "symmetric", generator_from(rng))
    theta = net.theta0 + 0.3 * torch.randn(net.n_params, generator=generator_from(rng), dtype=torch.float64)
    x1, x2 = (torch.from_numpy(_unit_rows(rng, n, d)) for _ in range(2))
    y = torch.from_numpy((rng.random(n) < 0.6).astype(float))
    model = make_delay({"kind": "geometric", "mean": 8, "window": 6})
    trainer = Trainer(net.theta0, lam=1.0, lr=0.01, steps=1)

    def gradient(labels):
        th = theta.clone().requires_grad_(True)
        trainer.theta = th
        trainer.loss(net.forward(th, x1) - net.forward(th, x2), labels).backward()
        return th.grad

    full = gradient(y)
    reps = 3000
    ipw, zero = torch.zeros_like(full), torch.zeros_like(full)
    samples = []
    for _ in range(reps):
        history = DuelHistory(n, model.rho, 6)
        for _ in range(n):
            history.record_play()
        arrived = model.arrives(model.sample(rng, n))
        history.observe([PreferenceFeedback(s + 1, int(y[s])) for s in np.flatnonzero(arrived)])
        t = n + 7  # every outcome has arrived or is censored
        g_ipw = gradient(torch.from_numpy(history.training_set("ipw", t)[1]))
        ipw += g_ipw / reps
        zero += gradient(torch.from_numpy(history.training_set("zero", t)[1])) / reps
        samples.append(g_ipw)
    se = torch.stack(samples).std(0) / math.sqrt(reps)
    assert ((ipw - full).abs() <= 4 * se + 1e-9).float().mean() > 0.99
    bias = (zero - full).norm() / full.norm()
    assert bias > 0.1 and (zero - full).norm() > 10 * (ipw - full).norm()


def _cell(name, util="quadratic", seed=0, T=800, d=5, K=10, delay=None, **params):
    return {
        "experiment": "e",
        "algorithm": name,
        "delay_label": "g",
        "horizon": T,
        "budget": None,
        "seed": seed,
        "environment": {"name": "synthetic_dueling", "params": {"dimension": d, "n_arms": K, "utility": util}},
        "delay": delay or {"kind": "geometric", "mean": 20, "window": 50},
        "policy": {"name": name, "params": params},
    }


def test_ndb_df_learns_the_quadratic_utility():
    """Last-quarter regret per round well below random pairs, and below its own first quarter."""
    q = 200
    for seed in (0, 1):
        ndb = run_cell(_cell("ndb_df", seed=seed))[0]["regret"]
        rnd = run_cell(_cell("random_pair", seed=seed))[0]["regret"]
        assert ndb[-q:].mean() < 0.75 * rnd[-q:].mean()
        assert ndb[-q:].mean() < ndb[:q].mean()


def _keeping_indices(policy):
    """Wrap ``policy._second_arm`` to keep the round's indices: the scores h (eq. 9) and the UCB of eq. 10."""
    seen, second_arm = {}, policy._second_arm

    def keeping(scores, first, norms):
        seen["h"], seen["ucb"] = scores.copy(), scores + policy._bonus_scale() * norms
        return second_arm(scores, first, norms)

    policy._second_arm = keeping
    return seen


def test_fixed_arm_kernel_path_makes_the_same_choices_as_explicit_features(rounding):
    """With a fixed arm set the K x K kernel replaces the p x p inverse: the same indices to 1e-9
    (other operation orders, so not bit for bit) and the same choices except in a near-tie.  Both see
    the same outcomes; at a first choice that differs (a near-tie) the histories part and the
    comparison stops.  Both see ``rounding(arms)`` (they share the network's forward pass and gradient
    features, which give the same bits for the same inputs on any machine: at theta_0 every score is
    zero up to rounding, a tie that both paths break alike)."""
    rng = np.random.default_rng(4)
    arms = rounding(_unit_rows(rng, 30, 6))
    arms.flags.writeable = False
    f = np.sin(3 * arms[:, 0])
    pols, seen = [], []
    for fixed in (True, False):
        problem = Problem(120, rho=1.0, window=None, info={"dimension": 6, "n_arms": 30, "fixed_arms": fixed})
        # float64: the two paths' float32 training rounds apart at 1e-7 (both keep V^{-1} in float64)
        pols.append(NDBDF(problem, np.random.default_rng(9), width=8, train_steps=3, precision="float64"))
        seen.append(_keeping_indices(pols[-1]))
    out_rng, seconds, rtol = np.random.default_rng(10), set(), 1e-9
    for t in range(1, 121):
        (i, j), (i2, j2) = (pol.act(t, arms) for pol in pols)
        kernel, explicit = seen
        for key in ("h", "ucb"):
            scale = np.abs(explicit[key]).max()
            np.testing.assert_allclose(kernel[key], explicit[key], rtol=0, atol=rtol * scale, err_msg=f"{t} {key}")
        assert_same_or_near_tie(i, i2, explicit["h"], 2 * rtol, where=f"round {t}, first arm")
        if i != i2:
            break
        assert_same_or_near_tie(j, j2, explicit["ucb"], 2 * rtol, where=f"round {t}, second arm")
        if j != j2:
            break
        seconds.add(j)
        y = int(out_rng.random() < sigmoid(f[i] - f[j]))
        for pol in pols:
            pol.observe(t + 1, [PreferenceFeedback(t, y)])
    assert len(seconds) > 5  # it explores


def test_theory_nu_is_equation_11():
    problem = Problem(50, rho=0.5, window=8, info={"dimension": 4})
    pol = NDBDF(
        problem,
        np.random.default_rng(0),
        nu="theory",
        effective_dimension=12.0,
        norm_bound=2.0,
        lam=2.0,
        kappa_mu=0.2,
        delta=0.1,
        width=4,
    )
    beta = math.sqrt(12.0 + 2 * math.log(10)) / 0.2
    assert pol.nu == pytest.approx((beta + 2.0 * math.sqrt(10) + 1) * 0.2 / 2.0)
    with pytest.raises(ConfigError, match="effective_dimension"):
        NDBDF(problem, np.random.default_rng(0), nu="theory")
    with pytest.raises(ConfigError, match="policy.params.train_every"):
        NDBDF(problem, np.random.default_rng(0), train_every=0)


def test_update_schedule_trains_when_due():
    trainer = Trainer(torch.zeros(3, dtype=torch.float64), lam=1.0, lr=0.1, steps=1, every=3)
    assert [t for t in range(1, 12) if trainer.due(t)] == [1, 4, 7, 10]
    doubling = Trainer(torch.zeros(3, dtype=torch.float64), lam=1.0, lr=0.1, steps=1, every="doubling")
    assert [t for t in range(1, 40) if doubling.due(t)] == [2, 4, 8, 16, 32]
    # an ignore policy with no arrived feedback never moves away from theta_0
    problem = Problem(30, rho=0.5, window=5, info={"dimension": 3})
    pol = NDBIgnore(problem, np.random.default_rng(0), width=4)
    for t in range(1, 10):
        pol.act(t, _unit_rows(np.random.default_rng(t), 4, 3))
    assert torch.equal(pol.trainer.current, pol.net.theta0)


def test_a_torch_job_gives_identical_result_bytes_in_separate_processes(tmp_path):
    cell = _cell("ndb_heuristic", T=120, seed=3)
    members = []
    for name in ("a.npz", "b.npz"):
        out = tmp_path / name
        run = subprocess.run(
            [sys.executable, "-m", "banditbench", "run-one", "--cell", json.dumps(cell), "--output", str(out)],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        with zipfile.ZipFile(out) as zf:
            # all but what describes the process (timing, provenance and the checksum that covers it)
            members.append(
                {k: zf.read(k) for k in zf.namelist() if k not in ("timing.npy", "provenance.npy", "run_checksum.npy")}
            )
    assert members[0] == members[1]


def test_job_sources_track_the_shared_neural_modules():
    """Editing the shared neural code re-runs every neural job; editing one family only its own."""
    neural = {p.name for p in registry.job_sources("synthetic_dueling", "ndb_df")}
    assert {"nets.py", "training.py", "delayed_labels.py", "linalg.py"} <= neural
    linear = [p for p in registry.job_sources("synthetic_dueling", "ldb_df")]
    assert not any("neural" in p.parts for p in linear)
    assert "delayed_labels.py" in {p.name for p in linear}
    baseline = {p.name for p in registry.job_sources("synthetic_dueling", "random_pair")}
    assert "nets.py" not in baseline and "delayed_labels.py" not in baseline
