"""The NDB family's authors' behaviours as parameters, and ``preset: authors`` (issue 50; the NDB authors' group's
``NeuralDBDiag``, xqlin98/APOHF): each behaviour on its own, the preset's resolution, the engines' availability."""

import math

import numpy as np
import pytest
import torch

from banditbench import params, registry
from banditbench.api import Problem, self_duel_rule
from banditbench.feedback import PreferenceFeedback
from banditbench.policies.neural import dueling_presets as P
from banditbench.policies.neural.delayed_dueling import NDBDF, rebuilt_widths
from banditbench.policies.neural.nets import MLP, generator_from
from banditbench.policies.neural.neural_dueling import NDBTS, NDBUCB
from banditbench.policies.neural.training import Trainer
from banditbench.simulation.job import run_block, run_cell

FAMILY = ["ndb_df", "ndb_ignore", "ndb_heuristic", "ndb_heuristic_all", "ndb_zero", "ndb_ucb", "ndb_ts"]


def _cell(policy="ndb_ucb", T=30, seed=0, env=None, **params):
    return {
        "experiment": "x",
        "algorithm": policy,
        "delay_label": "none",
        "budget": None,
        "environment": env or {"name": "fixed_arm_dueling", "params": {}},
        "policy": {"name": policy, "params": params},
        "delay": {"kind": "none"},
        "horizon": T,
        "seed": seed,
    }


SYNTHETIC = {"name": "synthetic_dueling", "params": {"dimension": 4, "n_arms": 5, "utility": "quadratic"}}


# --- the preset -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", FAMILY)
def test_every_authors_behaviour_is_an_auto_parameter_citing_the_authors_line(policy):
    cls = registry.get("policy", policy).load()
    defaults = registry.parameters(cls)
    assert defaults["preset"] == "ours"
    for name in P.NDB_PRESETS:
        assert defaults[name] == "auto", name
        description = params.description(cls, name)
        assert "``authors``" in description and "line" in description, (name, description)


def test_the_preset_sets_every_auto_parameter_and_a_configured_value_wins():
    ours = NDBUCB.preset_values(registry.parameters(NDBUCB))
    authors = NDBUCB.preset_values({**registry.parameters(NDBUCB), "preset": "authors"})
    for name, (mine, theirs) in P.NDB_PRESETS.items():
        assert ours[name] == mine and authors[name] == theirs, name
    mixed = NDBUCB.preset_values(
        {**registry.parameters(NDBUCB), "preset": "authors", "lam": 1.0, "distinct_arms": False}
    )
    assert mixed["lam"] == 1.0 and mixed["distinct_arms"] is False and mixed["lr"] == 0.001


def test_the_defaults_are_the_values_before_the_presets():
    """``preset: ours`` is the family's behaviour before issue 50 (its bytes: checked by the batched and reference
    tests' recorded runs and, when the presets came, by comparing every array of short runs)."""
    values = NDBUCB.preset_values(registry.parameters(NDBUCB))
    assert (values["depth"], values["init"], values["lam"], values["kappa_mu"]) == (2, "symmetric", 1.0, 0.1)
    assert (values["lr"], values["train_steps"], values["confidence"]) == (0.01, 10, "full")


def test_the_self_duel_statement_follows_the_preset():
    defaults = registry.parameters(NDBUCB)
    assert self_duel_rule(NDBUCB, defaults) == "self-duels allowed (distinct_arms: false)"
    assert self_duel_rule(NDBUCB, {**defaults, "preset": "authors"}) == "no self-duels (distinct_arms: true)"
    assert self_duel_rule(NDBTS, {**defaults, "distinct_arms": True}) == "no self-duels (distinct_arms: true)"
    assert self_duel_rule(NDBDF, {**defaults, "preset": "authors", "distinct_arms": False}).startswith("self-duels")


# --- the network ------------------------------------------------------------------------------------------
def test_the_authors_network_has_biases_normal_weights_and_no_output_scaling():
    net = MLP(5, 32, 3, "normal", generator_from(np.random.default_rng(0)), biases=True, output_scale="one")
    assert net.n_params == 5 * 32 + 32 * 32 + 32 + (32 + 32 + 1)
    assert abs(float(net.theta0.std()) - 1.0) < 0.05 and abs(float(net.theta0.mean())) < 0.1
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((7, 5)))
    W1, W2, W3 = net.weights(net.theta0)
    b1, b2, b3 = net.biases(net.theta0)
    by_hand = torch.relu(torch.relu(x @ W1.T + b1) @ W2.T + b2) @ W3[0] + b3[0]
    torch.testing.assert_close(net.forward(net.theta0, x), by_hand)
    scaled = MLP(5, 32, 3, "normal", generator_from(np.random.default_rng(0)), biases=True)
    torch.testing.assert_close(scaled.forward(scaled.theta0, x), math.sqrt(32) * by_hand)
    plain = MLP(5, 8, 2, "symmetric", generator_from(np.random.default_rng(0)), biases=True)
    assert torch.equal(plain.biases(plain.theta0)[0], torch.zeros(8))  # biases start at 0 but under normal


@pytest.mark.parametrize(
    "init, depth, biases, scale",
    [("normal", 3, True, "one"), ("independent", 2, False, "sqrt_width"), ("symmetric", 3, True, "sqrt_width")],
)
def test_the_written_out_backward_pass_is_autograds(init, depth, biases, scale):
    rng = np.random.default_rng(2)
    net = MLP(5, 8, depth, init, generator_from(rng), biases=biases, output_scale=scale)
    theta = net.theta0 + 0.1 * torch.randn(net.n_params, generator=generator_from(rng), dtype=torch.float64)
    x = torch.from_numpy(rng.standard_normal((9, 5)))
    weights = torch.from_numpy(rng.standard_normal(9))
    out, backward = net.numpy_pass(theta.numpy(), net.embed(x).numpy())
    torch.testing.assert_close(torch.from_numpy(out), net.forward(theta, x))
    th = theta.clone().requires_grad_(True)
    (net.forward(th, x) * weights).sum().backward()
    torch.testing.assert_close(torch.from_numpy(backward(weights.numpy())), th.grad, rtol=1e-10, atol=1e-12)


def test_the_mean_reduction_divides_the_data_term_by_the_samples():
    theta0 = torch.zeros(3, dtype=torch.float64)
    logits = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    labels = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)
    total = Trainer(theta0, lam=1.0, lr=0.1, steps=1).loss(logits, labels)
    mean = Trainer(theta0, lam=1.0, lr=0.1, steps=1, reduction="mean").loss(logits, labels)
    torch.testing.assert_close(mean, total / 3)


# --- the confidence ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [4, 30])  # fewer pairs than parameters (Woodbury), and more
def test_rebuilt_widths_are_the_direct_computation(n):
    rng = np.random.default_rng(3)
    p, reg = 12, 0.1
    u, rows = rng.standard_normal((n, p)), rng.standard_normal((6, p))
    V = reg * np.eye(p) + u.T @ u
    full = np.sqrt(np.einsum("ij,jk,ik->i", rows, np.linalg.inv(V), rows))
    np.testing.assert_allclose(rebuilt_widths(u, rows, reg, True), full, rtol=1e-9)
    diagonal = np.sqrt((rows * rows / np.diag(V)).sum(1))
    np.testing.assert_allclose(rebuilt_widths(u, rows, reg, False), diagonal, rtol=1e-12)


def test_widths_at_the_current_parameters_use_every_pair_played_at_them():
    """The authors' ``select``: per-arm gradients of the trained network, U = lam I + the history's squared
    differences at them, its diagonal, and the factor sqrt(nu)."""
    problem = Problem(12, rho=1.0, window=None, info={"dimension": 5, "n_arms": 10, "fixed_arms": True})
    policy = NDBUCB(problem, np.random.default_rng(0), preset="authors", nu=4.0, precision="float64")
    arms = np.random.default_rng(1).standard_normal((10, 5))
    for t in range(1, 9):
        policy.act(t, arms)
    policy.trainer.theta.data += 0.01  # parameters other than theta_0
    g = policy.net.gradients(policy.trainer.current, torch.from_numpy(arms)).numpy()
    u = g[policy.played[:8, 0]] - g[policy.played[:8, 1]]
    U = 0.1 + (u * u).sum(0)
    expected = np.sqrt(((g - g[3]) ** 2 / U).sum(1))
    np.testing.assert_allclose(policy._widths(policy._arm_tensor, 3)[0], expected, rtol=1e-10)
    assert policy._bonus_scale() == 2.0


# --- the play ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", ["ndb_ucb", "ndb_ts"])
def test_distinct_arms_never_self_duels(policy):
    for env in (None, SYNTHETIC):
        series = run_cell(_cell(policy, T=40, env=env, width=8, train_steps=3, distinct_arms=True))[0]
        assert series["self_duel"].sum() == 0


def test_the_authors_first_rounds_are_random_pairs_and_training_starts_after_them(monkeypatch):
    problem = Problem(9, rho=1.0, window=None, info={"dimension": 5, "n_arms": 10, "fixed_arms": True})
    policy = NDBUCB(problem, np.random.default_rng(0), preset="authors")
    trained = []
    monkeypatch.setattr(policy, "_train", lambda t: trained.append(t))
    draws = np.random.default_rng(0)
    draws.integers(0, 2**63 - 1)  # theta_0's generator
    arms = np.random.default_rng(1).standard_normal((10, 5))
    for t in range(1, 8):
        pair = policy.act(t, arms)
        if t <= 5:
            assert pair == tuple(int(k) for k in draws.choice(10, 2, replace=False))
    assert trained == [6, 7]


def test_reinitialised_training_is_a_fresh_fit_from_theta_0_with_the_decaying_ridge():
    """``retrain: reinit`` (the written-out gradient) against autograd's fit of a new trainer: the same
    parameters up to rounding; the ridge lam / (n + 50) centred at 0, the mean loss."""
    problem = Problem(20, rho=1.0, window=None, info={"dimension": 5, "n_arms": 10, "fixed_arms": True})
    policy = NDBUCB(problem, np.random.default_rng(4), preset="authors", train_steps=25, precision="float64")
    arms = np.random.default_rng(5).standard_normal((10, 5))
    outcomes = np.random.default_rng(6)
    for t in range(1, 12):
        policy.act(t, arms)
        policy.observe(t + 1, [PreferenceFeedback(t, int(outcomes.random() < 0.5))])
    policy._train(12)
    rows, labels = policy.history.training_set("ignore", 12, None)
    fresh = Trainer(policy.net.theta0, lam=0.1 / (11 + 50), lr=0.001, steps=25, centre="zero", reduction="mean")
    fresh.fit(lambda theta: policy._logits(theta, rows), torch.from_numpy(labels.astype(np.float64)))
    torch.testing.assert_close(policy.trainer.current, fresh.current, rtol=1e-9, atol=1e-11)
    assert not torch.equal(fresh.current, policy.net.theta0)


# --- the engines ------------------------------------------------------------------------------------------
def test_the_seed_batched_engine_declines_what_it_does_not_implement():
    """Under ``preset: authors`` the seeds run on the reference engine; the second-arm rule, the bonus factor
    and the normal initialisation alone stay seed-batched (the engine's decisions: the batched tests)."""
    authors = run_block(_cell(T=12, preset="authors"), [0, 1])
    assert [meta["engine"] for _, meta, _ in authors] == ["single-seed", "single-seed"]
    kept = _cell(T=12, width=8, distinct_arms=True, bonus_factor="sqrt_nu", init="normal", env=SYNTHETIC)
    assert [meta["engine"] for _, meta, _ in run_block(kept, [0, 1])] == ["seed-batched", "seed-batched"]
    for name, value in [("biases", True), ("gradient_at", "current"), ("retrain", "reinit"), ("warmup_pairs", 2)]:
        declined = run_block(_cell(T=8, width=8, env=SYNTHETIC, **{name: value}), [0])
        assert declined[0][1]["engine"] == "single-seed", name


def test_the_authors_preset_runs_on_fresh_arms_too_with_the_full_matrix():
    for confidence in ("diagonal", "full"):
        series = run_cell(_cell(T=25, env=SYNTHETIC, preset="authors", confidence=confidence))[0]
        assert np.isfinite(series["regret"]).all() and series["self_duel"].sum() == 0


def test_the_diagonal_at_the_current_parameters_on_fresh_arms_is_the_gradients():
    """On fresh arms (no ``fixed_arms``): the history's pairs' gradients at theta_t, from their factors, are
    autograd's per-arm gradients."""
    problem = Problem(12, rho=1.0, window=None, info={"dimension": 4, "n_arms": 6})
    policy = NDBUCB(problem, np.random.default_rng(7), preset="authors", width=8, precision="float64")
    rng = np.random.default_rng(8)
    for t in range(1, 9):
        policy.act(t, rng.standard_normal((6, 4)))
    policy.trainer.theta.data += 0.01
    theta, arms = policy.trainer.current, torch.from_numpy(rng.standard_normal((6, 4)))
    g = policy.net.gradients(theta, arms).numpy()
    u = (
        policy.net.gradients(theta, policy.x_first[:8]).numpy()
        - policy.net.gradients(theta, policy.x_second[:8]).numpy()
    )
    expected = np.sqrt(((g - g[2]) ** 2 / (0.1 + (u * u).sum(0))).sum(1))
    np.testing.assert_allclose(policy._widths(arms, 2)[0], expected, rtol=1e-10)
