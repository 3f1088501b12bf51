"""Seed 002 as the paper ran it (issue 24): gradient-descent and minibatch training, App. A's
streamlined linear baselines, the linearised mean of NeuralLog-UCB-2 / TS-2, App. A's effective
dimension, and the tuning script's choice."""

import math

import numpy as np
import pytest
import torch

from banditbench.errors import ConfigError
from banditbench.policies.neural.training import Trainer


# --- trainer: optimizer gd, minibatches -------------------------------------------
def _data(n=30, p=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, p, generator=g, dtype=torch.float64)
    y = (torch.rand(n, generator=g, dtype=torch.float64) < 0.5).to(torch.float64)
    return X, y


def _loss_grad(theta, X, y, lam, centre):
    z = X @ theta
    return X.T @ (torch.sigmoid(z) - y) + lam * (theta - centre)


def test_gd_steps_are_plain_gradient_descent_on_the_regularised_loss():
    X, y = _data()
    theta0 = torch.linspace(-0.5, 0.5, 4, dtype=torch.float64)
    trainer = Trainer(theta0, lam=0.7, lr=0.01, steps=3, centre="init", optimizer="gd")
    got = trainer.fit(lambda th: X @ th, y)
    expected = theta0.clone()
    for _ in range(3):
        expected = expected - 0.01 * _loss_grad(expected, X, y, 0.7, theta0)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-14)
    # and Adam (the default) does something else from the same start
    adam = Trainer(theta0, lam=0.7, lr=0.01, steps=3, centre="init").fit(lambda th: X @ th, y)
    assert (adam - expected).abs().max() > 1e-4


def test_gd_in_fit_gradient_matches_fit():
    X, y = _data()
    theta0 = torch.linspace(-0.5, 0.5, 4, dtype=torch.float64)
    a = Trainer(theta0, lam=0.3, lr=0.02, steps=5, centre="zero", optimizer="gd").fit(lambda th: X @ th, y)
    Xn, yn = X.numpy(), y.numpy()
    b = Trainer(theta0, lam=0.3, lr=0.02, steps=5, centre="zero", optimizer="gd").fit_gradient(
        lambda th: Xn.T @ (1 / (1 + np.exp(-(Xn @ th))) - yn)
    )
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-14)


def test_minibatches_have_the_configured_size_and_the_step_uses_only_them():
    X, y = _data(n=30)
    theta0 = torch.zeros(4, dtype=torch.float64)
    trainer = Trainer(
        theta0,
        lam=1.0,
        lr=0.05,
        steps=4,
        centre="zero",
        optimizer="gd",
        batch=8,
        generator=torch.Generator().manual_seed(3),
    )
    replay = torch.Generator().manual_seed(3)
    got = trainer.fit(lambda th: X @ th, y)
    expected = theta0.clone()
    seen = []
    for _ in range(4):
        idx = torch.randperm(30, generator=replay)[:8]
        assert len(set(idx.tolist())) == 8
        seen.append(idx)
        expected = expected - 0.05 * _loss_grad(expected, X[idx], y[idx], 1.0, 0.0)
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-14)
    assert len({tuple(sorted(i.tolist())) for i in seen}) > 1  # a fresh draw per step
    sizes = [len(trainer.draw(30)) for _ in range(5)]
    assert sizes == [8] * 5
    assert trainer.draw(8) is None and trainer.draw(5) is None  # n <= batch: the whole history


@pytest.mark.parametrize(
    "kwargs, key", [({"optimizer": "sgd"}, "optimizer"), ({"batch": 0}, "minibatch"), ({"batch": 2.5}, "minibatch")]
)
def test_trainer_refuses_bad_options_naming_the_key(kwargs, key):
    with pytest.raises(ConfigError, match=key):
        Trainer(torch.zeros(3, dtype=torch.float64), lam=1.0, lr=0.1, steps=1, generator=torch.Generator(), **kwargs)


# --- App. A's streamlined linear baselines ----------------------------------------
from banditbench.api import Problem  # noqa: E402
from banditbench.numerics.sigmoid import sigmoid  # noqa: E402
from banditbench.policies.logistic import R as R_LINEAR  # noqa: E402
from banditbench.policies.logistic import AdaOFUECOLog, LogisticUCB1  # noqa: E402


def _arms(n, d, seed):
    return np.random.default_rng(seed).uniform(-1, 1, (n, d))


@pytest.mark.parametrize("cls", [LogisticUCB1, AdaOFUECOLog])
def test_streamlined_bonus_is_app_a_order_formula(cls):
    d, lam, S, kappa, nu = 3, 0.5, 2.0, 10.0, 0.7
    extra = {"kappa": kappa} if cls is LogisticUCB1 else {}
    pol = cls(
        Problem(horizon=50, info={"dimension": d}),
        np.random.default_rng(0),
        mode="streamlined",
        lam=lam,
        nu=nu,
        norm_bound=S,
        train_every=1000,
        **extra,
    )  # no training: theta stays 0
    X = _arms(12, d, 1)
    for i, x in enumerate(X):
        pol.learn(x, float(i % 2))
    d_tilde = np.linalg.slogdet(R_LINEAR * X.T @ X + np.eye(d))[1]  # App. A: log det(sum R x x^T + I)
    if cls is LogisticUCB1:
        M = lam * np.eye(d) + X.T @ X
        beta = math.sqrt(kappa) * math.sqrt(S) * (math.sqrt(lam) + d_tilde / math.sqrt(lam)) + math.sqrt(lam) * S
    else:
        M = lam * np.eye(d) + 0.25 * X.T @ X  # mu'(x^T 0) = 1/4
        beta = S * math.sqrt(lam + math.sqrt(lam) + d_tilde / math.sqrt(lam))
    arms = _arms(5, d, 2)
    norms = np.sqrt(np.einsum("ij,jk,ik->i", arms, np.linalg.inv(M), arms))
    np.testing.assert_allclose(pol.streamlined.log_det, d_tilde, rtol=1e-10)
    np.testing.assert_allclose(pol.streamlined_beta(), beta, rtol=1e-10)
    np.testing.assert_allclose(pol.ucb(arms), 0.5 + nu * beta * norms, rtol=1e-10)
    assert pol.act(1, arms) == int(np.argmax(0.5 + nu * beta * norms))


@pytest.mark.parametrize("cls", [LogisticUCB1, AdaOFUECOLog])
def test_streamlined_update_is_gradient_descent_on_the_regularised_loss(cls):
    d, lam, lr = 4, 0.3, 0.05
    extra = {"kappa": 10.0} if cls is LogisticUCB1 else {}
    pol = cls(
        Problem(horizon=50, info={"dimension": d}),
        np.random.default_rng(0),
        mode="streamlined",
        lam=lam,
        lr=lr,
        train_steps=3,
        train_every=5,
        **extra,
    )
    X, y = _arms(10, d, 3), np.array([1, 0, 0, 1, 1, 0, 1, 1, 0, 0], dtype=float)
    theta = np.zeros(d)
    for i in range(10):
        pol.learn(X[i], y[i])
        if (i + 1) % 5 == 0:  # after every 5th observation
            for _ in range(3):
                theta = theta - lr * (X[: i + 1].T @ (sigmoid(X[: i + 1] @ theta) - y[: i + 1]) + 2 * lam * theta)
        np.testing.assert_allclose(pol.streamlined.theta, theta, rtol=1e-12, atol=1e-15)
    assert np.abs(theta).max() > 1e-3


def test_streamlined_minibatches_have_the_configured_size():
    """Each step's gradient is the one of 7 distinct observations drawn from the policy's stream."""
    lam, lr = 1.0, 0.05
    pol = LogisticUCB1(
        Problem(horizon=100, info={"dimension": 3}),
        np.random.default_rng(0),
        mode="streamlined",
        lam=lam,
        lr=lr,
        kappa=10.0,
        train_every=40,
        train_steps=2,
        minibatch=7,
    )
    replay, theta = np.random.default_rng(0), np.zeros(3)
    X = _arms(80, 3, 4)
    y = (np.arange(80) % 3 == 0).astype(float)
    for i, x in enumerate(X):
        pol.learn(x, y[i])
        if (i + 1) % 40 == 0:
            for _ in range(2):
                idx = replay.permutation(i + 1)[:7]
                assert len(np.unique(idx)) == 7
                theta = theta - lr * (X[idx].T @ (sigmoid(X[idx] @ theta) - y[idx]) + 2 * lam * theta)
    np.testing.assert_allclose(pol.streamlined.theta, theta, rtol=1e-12, atol=1e-15)
    full = LogisticUCB1(
        Problem(horizon=100, info={"dimension": 3}),
        np.random.default_rng(0),
        mode="streamlined",
        lam=lam,
        lr=lr,
        kappa=10.0,
        train_every=40,
        train_steps=2,
    )
    for i, x in enumerate(X):
        full.learn(x, y[i])
    assert np.abs(full.streamlined.theta - theta).max() > 1e-6  # not the full-batch step


@pytest.mark.parametrize(
    "cls, params, key",
    [
        (LogisticUCB1, {"mode": "streamlined", "lam": 1.0}, "kappa"),
        (LogisticUCB1, {"mode": "streamlined", "kappa": 10.0}, "lam"),
        (LogisticUCB1, {"lam": 1.0}, "lam"),
        (LogisticUCB1, {"mode": "newton"}, "mode"),
        (AdaOFUECOLog, {"mode": "streamlined", "minibatch": 0}, "minibatch"),
        (AdaOFUECOLog, {"mode": "streamlined", "train_every": 1.5}, "train_every"),
    ],
)
def test_baselines_refuse_bad_streamlined_settings_naming_the_key(cls, params, key):
    with pytest.raises(ConfigError, match=rf"policy\.params\.{key}"):
        _checked_build(cls, params)


def _checked_build(cls, params, **fixed):
    """What runner.build does before a policy exists: its annotations' checks, its relations, then the constructor."""
    from banditbench import registry
    from banditbench import params as param_checks
    from banditbench.errors import POLICY_PARAMS

    param_checks.check(cls, params, POLICY_PARAMS)
    cls.check_params(registry.values(cls, {**fixed, **params}), 10)
    return cls(Problem(horizon=10, info={"dimension": 2}), np.random.default_rng(0), **fixed, **params)


def test_reference_mode_is_the_default_and_unchanged():
    """The authors'-code mode stays the default: the same choices with and without mode: reference."""
    from banditbench.simulation.job import run_cell

    cell = {
        "experiment": "e",
        "algorithm": "a",
        "delay_label": "none",
        "horizon": 120,
        "budget": None,
        "seed": 0,
        "delay": {"kind": "none"},
        "environment": {"name": "synthetic_logistic", "params": {"latent": "h1", "dimension": 5}},
        "policy": {"name": "logistic_ucb1", "params": {}},
    }
    a = run_cell(cell)[0]
    cell["policy"]["params"] = {"mode": "reference"}
    b = run_cell(cell)[0]
    np.testing.assert_array_equal(a["regret"], b["regret"])


# --- NeuralLog: linearised mean, App. A's effective dimension, training options -----
from banditbench.feedback import RewardFeedback  # noqa: E402
from banditbench.policies.neural.logistic import NCBFUCB, NeuralLogTS2, NeuralLogUCB1, NeuralLogUCB2  # noqa: E402


def _hand_gradient(theta, x, d, m):
    """f(x) = sqrt(m) w2 . relu(W1 x) (independent init, depth 2): its gradient in (W1, w2) order."""
    W1, w2 = theta[: m * d].reshape(m, d), theta[m * d :]
    pre = W1 @ x
    dW1 = math.sqrt(m) * np.outer(w2 * (pre > 0), x)
    dw2 = math.sqrt(m) * np.maximum(pre, 0.0)
    return np.concatenate([dW1.ravel(), dw2])


@pytest.mark.parametrize("cls", [NeuralLogUCB2, NeuralLogTS2])
def test_linearised_mean_is_g_transpose_theta_minus_theta0(cls):
    d, m = 3, 4
    pol = cls(
        Problem(horizon=20, info={"dimension": d}),
        np.random.default_rng(0),
        width=m,
        init="independent",
        mean="algorithm",
        nu=0.0,
    )
    theta0 = pol.net.theta0.numpy().copy()
    theta = theta0 + np.random.default_rng(1).normal(0, 0.3, theta0.size)
    with torch.no_grad():
        pol.trainer.theta.copy_(torch.from_numpy(theta))
    arms = _arms(6, d, 5)
    g = np.stack([_hand_gradient(theta, x, d, m) for x in arms])
    np.testing.assert_allclose(
        pol.net.gradients(torch.from_numpy(theta), torch.from_numpy(arms)).numpy(), g, rtol=1e-12, atol=1e-14
    )
    expected = g @ (theta - theta0)
    got = pol._centre(torch.from_numpy(theta), torch.from_numpy(arms), g)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    # ... which is not the network's output here, and nu = 0 plays its argmax
    f = np.array([math.sqrt(m) * theta[m * d :] @ np.maximum(theta[: m * d].reshape(m, d) @ x, 0) for x in arms])
    assert np.abs(f - expected).max() > 1e-3
    assert pol.act(1, arms) == int(np.argmax(expected))
    net = cls(Problem(horizon=20, info={"dimension": d}), np.random.default_rng(0), width=m, init="independent")
    np.testing.assert_allclose(net._centre(torch.from_numpy(theta), torch.from_numpy(arms), g), f, rtol=1e-12)


def _feed(pol, arms_seq):
    for t, arms in enumerate(arms_seq, start=1):
        pol.act(t, arms)
        pol.observe(t, [RewardFeedback(round=t, reward=float(t % 2))])


@pytest.mark.parametrize("cls", [NeuralLogUCB1, NCBFUCB])
def test_app_a_effective_dimension_has_no_lambda(cls):
    d, lam, kappa = 3, 7.0, 10.0
    kw = dict(width=4, init="independent", lam=lam, kappa=kappa, confidence="full", train_every=1000)
    pols = {
        e: cls(Problem(horizon=20, info={"dimension": d}), np.random.default_rng(0), effective_dimension=e, **kw)
        for e in ("scaled", "app_a")
    }
    arms_seq = [_arms(4, d, s) for s in range(8)]
    for pol in pols.values():
        _feed(pol, arms_seq)
        pol.act(9, arms_seq[0])  # absorbs round 8
    # the played arms (both policies played the same ones: untrained, same draws); phi = g(x; theta_0)
    played = np.array([pols["app_a"].X[i].numpy() for i in range(8)])
    np.testing.assert_array_equal(played, np.array([pols["scaled"].X[i].numpy() for i in range(8)]))
    net, theta = pols["app_a"].net, pols["app_a"].trainer.current  # never trained: theta = theta_0
    G = net.gradients(theta, torch.from_numpy(played)).numpy()
    gram = G.T @ G
    p = gram.shape[0]
    if cls is NCBFUCB:
        app_a = np.linalg.slogdet(gram / kappa + np.eye(p))[1]  # log det(sum (1/kappa) g g^T + I)
        scaled = np.linalg.slogdet(gram / (kappa * lam) + np.eye(p))[1]
    else:
        app_a = np.linalg.slogdet(0.25 * gram + np.eye(p))[1]  # log det(sum R g g^T + I)
        scaled = np.linalg.slogdet(0.25 * gram / lam + np.eye(p))[1]
    np.testing.assert_allclose(pols["app_a"].log_det_design.log_det, app_a, rtol=1e-8)
    np.testing.assert_allclose(pols["scaled"].log_det_design.log_det, scaled, rtol=1e-8)


def test_optimizer_and_minibatch_reach_the_trainer():
    pol = NeuralLogUCB1(
        Problem(horizon=20, info={"dimension": 3}), np.random.default_rng(0), width=4, optimizer="gd", minibatch=50
    )
    assert isinstance(pol.trainer.optimizer, torch.optim.SGD) and pol.trainer.batch == 50
    default = NeuralLogUCB1(Problem(horizon=20, info={"dimension": 3}), np.random.default_rng(0), width=4)
    assert isinstance(default.trainer.optimizer, torch.optim.Adam) and default.trainer.batch is None


@pytest.mark.parametrize(
    "params, key",
    [
        ({"optimizer": "sgd"}, "optimizer"),
        ({"minibatch": 0}, "minibatch"),
        ({"effective_dimension": "paper"}, "effective_dimension"),
        ({"effective_dimension": "app_a", "radius": "theory"}, "effective_dimension"),
        ({"effective_dimension": "app_a", "lam": "adaptive"}, "effective_dimension"),
    ],
)
def test_neurallog_refuses_bad_protocol_options_naming_the_key(params, key):
    with pytest.raises(ConfigError, match=rf"policy\.params\.{key}"):
        _checked_build(NeuralLogUCB1, params, width=4)


# --- the tuning script's choice ----------------------------------------------------
from banditbench.analysis.tuning import choose, parse_label, read_tables  # noqa: E402


def test_tuning_picks_the_lowest_mean_normalised_regret_per_family_and_algorithm():
    rows = [
        ("tune_synthetic_a", "random", 100.0),
        ("tune_synthetic_b", "random", 10.0),
        # on a's scale pair (0.1, 1) wins by 20, on b's it loses by 5 (= 50 % of random): b decides
        ("tune_synthetic_a", "neurallog_ucb1_nu0.1_lam1", 40.0),
        ("tune_synthetic_b", "neurallog_ucb1_nu0.1_lam1", 9.0),
        ("tune_synthetic_a", "neurallog_ucb1_nu10_lam100", 60.0),
        ("tune_synthetic_b", "neurallog_ucb1_nu10_lam100", 4.0),
        # a tie: the first pair in grid order (smaller nu) wins
        ("tune_synthetic_a", "logistic_ucb1_nu1_lam0.01", 50.0),
        ("tune_synthetic_b", "logistic_ucb1_nu1_lam0.01", 5.0),
        ("tune_synthetic_a", "logistic_ucb1_nu0.01_lam10", 50.0),
        ("tune_synthetic_b", "logistic_ucb1_nu0.01_lam10", 5.0),
        ("tune_real_x", "random", 8.0),
        ("tune_real_x", "neurallog_ucb1_nu0.1_lam1", 2.0),
        ("tune_real_x", "neurallog_ucb1_nu10_lam100", 6.0),
    ]
    chosen = choose(rows)
    assert chosen["synthetic"]["neurallog_ucb1"] == {"nu": 10.0, "lam": 100.0, "score": 0.5}
    assert chosen["synthetic"]["logistic_ucb1"]["nu"] == 0.01 and chosen["synthetic"]["logistic_ucb1"]["lam"] == 10.0
    assert chosen["real"]["neurallog_ucb1"] == {"nu": 0.1, "lam": 1.0, "score": 0.25}
    assert parse_label("neurallog_ts2_nu0.01_lam100") == ("neurallog_ts2", 0.01, 100.0)
    assert parse_label("random") is None
    with pytest.raises(ValueError, match="random"):
        choose([("tune_real_x", "neurallog_ucb1_nu0.1_lam1", 2.0)])


def test_tuning_reads_the_last_horizon_of_tidy_tables(tmp_path):
    path = tmp_path / "tune_synthetic_a.csv"
    path.write_text(
        "experiment,algorithm,delay,budget,t,metric,mean,ci_low,ci_high,n\n"
        "tune_synthetic_a,random,none,none,1000,cumulative_regret,50,0,0,3\n"
        "tune_synthetic_a,random,none,none,2000,cumulative_regret,90,0,0,3\n"
        "tune_synthetic_a,random,none,none,2000,cumulative_reward,1,0,0,3\n"
    )
    assert read_tables([path]) == [("tune_synthetic_a", "random", 90.0)]


def test_tuning_grid_is_the_paper_grid_on_seeds_disjoint_from_the_evaluation_seeds():
    from banditbench.configuration.grid import load_config_file, load_grid
    from conftest import ROOT

    tuning = load_grid(load_config_file(ROOT / "config/neural_logistic_tuning.yaml"))
    paper = load_grid(load_config_file(ROOT / "config/neural_logistic.yaml"))
    evaluation = {s for e in paper.experiments.values() for s in e.seeds}
    for exp in tuning.experiments.values():
        assert not set(exp.seeds) & evaluation
        pairs = {parse_label(a)[1:] for a in exp.algorithms if a != "random"}
        assert pairs == {(nu, lam) for nu in (0.01, 0.1, 1, 10, 100) for lam in (0.01, 0.1, 1, 10, 100)}
        assert {parse_label(a)[0] for a in exp.algorithms if a != "random"} == {
            "ncbf_ucb",
            "logistic_ucb1",
            "ada_ofu_ecolog",
            "neurallog_ucb1",
            "neurallog_ucb2",
            "neurallog_ts1",
            "neurallog_ts2",
        }


def test_tuning_grid_runs_the_paper_grids_forms():
    """Every tuned pair runs with the paper grid's other parameters (only nu and lam differ)."""
    from banditbench.configuration.grid import load_config_file
    from conftest import ROOT

    tuning = load_config_file(ROOT / "config/neural_logistic_tuning.yaml")["experiments"]
    paper = load_config_file(ROOT / "config/neural_logistic.yaml")["experiments"]
    rows = {**paper["synthetic_h1"]["algorithms"], **paper["real_mushroom"]["algorithms"]}
    for name, spec in tuning["tune_synthetic_h1"]["algorithms"].items():
        if name == "random":
            continue
        algorithm = parse_label(name)[0]
        strip = lambda p: {k: v for k, v in p.items() if k not in ("nu", "lam")}  # noqa: E731
        assert spec["policy"] == rows[algorithm]["policy"]
        assert strip(spec["params"]) == strip(rows[algorithm]["params"]), name
    for alg in ("neurallog_ucb2", "neurallog_ts2"):
        assert paper["synthetic_h1"]["algorithms"][alg]["params"]["mean"] == "algorithm"
        assert paper["synthetic_h1"]["algorithms"][f"{alg}_network"]["params"]["mean"] == "network"
    for alg in ("logistic_ucb1", "ada_ofu_ecolog"):
        assert paper["synthetic_h1"]["algorithms"][alg]["params"]["mode"] == "streamlined"
        assert paper["synthetic_h1"]["algorithms"][f"{alg}_reference"].get("params", {}).get("mode") is None
    for spec in paper["obd_base"]["algorithms"].values():
        if spec["policy"] != "random_arm":
            assert spec["params"]["minibatch"] == 50


def test_tuning_runs_the_nu_lam_grid_in_lockstep_with_each_runs_own_result():
    """run_grid plays one block per experiment and lockstep family of network algorithms (every nu, lam and
    seed), the baselines and random one run at a time; each run's regret is the one its cell gives alone."""
    from banditbench.analysis.tuning import member_blocks, run_grid
    from banditbench.configuration.grid import load_config_file, load_grid
    from banditbench.simulation.job import run_block
    from conftest import ROOT

    config = load_config_file(ROOT / "config/neural_logistic_tuning.yaml")
    exp = config["experiments"]["tune_synthetic_h1"]
    keep = [
        "neurallog_ucb1_nu0.01_lam0.1",
        "neurallog_ucb1_nu1_lam10",
        "ncbf_ucb_nu0.1_lam1",
        "ncbf_ucb_nu10_lam0.01",
        "logistic_ucb1_nu0.1_lam1",
        "random",
    ]
    exp = {**exp, "algorithms": {k: exp["algorithms"][k] for k in keep}}
    config = {**config, "experiments": {"tune_synthetic_h1": exp}}
    rows = dict(((e, a), v) for e, a, v in run_grid(config, ["tune_synthetic_h1"], [1000, 1001], 60))
    grid = load_grid({**config, "horizon": 60, "experiments": {"tune_synthetic_h1": {**exp, "seeds": [1000, 1001]}}})
    runs = [
        ("tune_synthetic_h1", a, grid.cell("tune_synthetic_h1", a, "none", "none", s))
        for a in keep
        for s in (1000, 1001)
    ]
    # NeuralLog-UCB-1 and NCBF-UCB, one lockstep family: every nu, lam and seed of both in one block
    assert sorted(len(b) for b in member_blocks(runs)) == [1, 1, 1, 1, 8]
    assert [len(b) for b in member_blocks(runs, block=3) if len(b) > 1] == [3, 3, 2]
    for alg in keep:
        alone = [
            float(run_block(grid.cell("tune_synthetic_h1", alg, "none", "none", None), [s])[0][0]["regret"].sum())
            for s in (1000, 1001)
        ]
        assert rows[("tune_synthetic_h1", alg)] == sum(alone) / 2, alg
    assert (
        rows[("tune_synthetic_h1", "neurallog_ucb1_nu0.01_lam0.1")]
        != rows[("tune_synthetic_h1", "neurallog_ucb1_nu1_lam10")]
    )


def test_apply_choice_sets_each_familys_values_in_the_paper_grid_rows():
    from banditbench.analysis.tuning import apply_choice
    from banditbench.configuration.grid import load_config_file
    from conftest import ROOT

    chosen = {
        "synthetic": {"neurallog_ucb1": {"nu": 10, "lam": 0.01}, "logistic_ucb1": {"nu": 100, "lam": 10}},
        "real": {"neurallog_ucb1": {"nu": 0.1, "lam": 100}},
    }
    text = (ROOT / "config/neural_logistic.yaml").read_text()
    import yaml

    new = yaml.safe_load(apply_choice(text, chosen))["experiments"]
    old = load_config_file(ROOT / "config/neural_logistic.yaml")["experiments"]
    params = lambda e, a: new[e]["algorithms"][a].get("params", {})  # noqa: E731
    for e in ("synthetic_h1", "synthetic_h6", "dim_h3_mid"):
        assert {k: params(e, "neurallog_ucb1")[k] for k in ("nu", "lam")} == {"nu": 10, "lam": 0.01}
        assert params(e, "logistic_ucb1")["nu"] == 100 and params(e, "logistic_ucb1")["lam"] == 10
    for variant in ("neurallog_ucb1_adam", "neurallog_ucb1_scaled_dim"):
        assert params("synthetic_h1", variant)["nu"] == 10 and params("synthetic_h1", variant)["lam"] == 0.01
    assert params("synthetic_h1", "logistic_ucb1_reference") == {}  # the authors' code: untouched
    assert params("synthetic_h1", "neurallog_ucb2") == old["synthetic_h1"]["algorithms"]["neurallog_ucb2"]["params"]
    for e in ("real_mnist", "obd_base", "obd_kappa200"):
        assert params(e, "neurallog_ucb1")["nu"] == 0.1 and params(e, "neurallog_ucb1")["lam"] == 100
        assert params(e, "ncbf_ucb") == old[e]["algorithms"]["ncbf_ucb"]["params"]
    assert params("obd_m50", "neurallog_ucb1")["width"] == 50


def test_tuning_runs_play_with_one_blas_thread(monkeypatch):
    """The in-process tuning (``--run``) plays each block with one BLAS thread, as a simulate job does:
    results are bit-identical only for a fixed thread count, and its worker processes share the cores."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from banditbench.simulation import job
    from banditbench.analysis import tuning

    seen = []

    def fake_run_members(cells):
        seen.append({lib["internal_api"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})
        return [({"regret": np.ones(3)}, {}, {}) for _ in cells]

    monkeypatch.setattr(job, "run_members", fake_run_members)
    with threadpool_limits(limits=2, user_api="blas"):
        assert tuning._final_regrets([{}, {}]) == [3.0, 3.0]
        outside = {lib["internal_api"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}
    assert seen and seen[0] and set(seen[0].values()) == {1}
    assert set(outside.values()) == {2}  # the limit is lifted afterwards
