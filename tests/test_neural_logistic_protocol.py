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
        lambda th: Xn.T @ (1 / (1 + np.exp(-(Xn @ th))) - yn))
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-14)


def test_minibatches_have_the_configured_size_and_the_step_uses_only_them():
    X, y = _data(n=30)
    theta0 = torch.zeros(4, dtype=torch.float64)
    trainer = Trainer(theta0, lam=1.0, lr=0.05, steps=4, centre="zero", optimizer="gd", batch=8,
                      generator=torch.Generator().manual_seed(3))
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
    assert len({tuple(sorted(i.tolist())) for i in seen}) > 1          # a fresh draw per step
    sizes = [len(trainer.draw(30)) for _ in range(5)]
    assert sizes == [8] * 5
    assert trainer.draw(8) is None and trainer.draw(5) is None          # n <= batch: the whole history


@pytest.mark.parametrize("kwargs, key", [({"optimizer": "sgd"}, "optimizer"), ({"batch": 0}, "minibatch"),
                                         ({"batch": 2.5}, "minibatch")])
def test_trainer_refuses_bad_options_naming_the_key(kwargs, key):
    with pytest.raises(ConfigError, match=key):
        Trainer(torch.zeros(3, dtype=torch.float64), lam=1.0, lr=0.1, steps=1, generator=torch.Generator(), **kwargs)
