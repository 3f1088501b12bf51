"""The Newton solver of the logistic MLE near its optimum, where the loss cannot show the decrease."""

import numpy as np

import banditbench.logistic as logistic
from banditbench.links import sigmoid

X = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [1.0, 0.0, -1.0]])
WEIGHTS = np.array([3e5, 4e5, 2e5])          # many duplicated duels: a loss of order 1e5
LABELS = np.array([0.6, 0.55, 0.7])


def _gradient(theta):
    return X.T @ (WEIGHTS * (sigmoid(X @ theta) - LABELS)) + theta


def test_a_step_below_the_loss_resolution_is_taken_in_full(monkeypatch):
    """Close to the optimum Newton's predicted decrease (~1e-15) is far below the rounding of a loss
    of order 1e5 (~1e-11), so comparing losses sees only rounding.  Model the worst case — every
    candidate looks a rounding error worse — and Newton must still converge, in at most 3 steps."""
    optimum = logistic.fit_logistic(X, LABELS, 1.0, np.zeros(3), weights=WEIGHTS, tol=1e-9, max_iter=100)
    start = optimum + 1e-10 * np.array([1.0, -2.0, 0.5])
    assert np.abs(_gradient(start)).max() > 1e-5
    exact = logistic.logistic_loss
    calls = []

    def rounded_up(theta, *args):
        calls.append(theta)
        return exact(theta, *args) + (1e-9 if len(calls) > 1 else 0.0)

    monkeypatch.setattr(logistic, "logistic_loss", rounded_up)
    theta = logistic.fit_logistic(X, LABELS, 1.0, start, weights=WEIGHTS, max_iter=3, tol=1e-6)
    assert np.abs(_gradient(theta)).max() < 1e-6
    assert len(calls) <= 4                    # no halving of the step down to nothing


def test_a_real_increase_is_still_backtracked():
    """Far from the optimum (labels outside [0, 1], as with inverse probability weights) the line
    search still halves the step until the loss decreases: every accepted step lowers the loss."""
    rng = np.random.default_rng(0)
    Xr = rng.standard_normal((200, 4))
    labels = rng.random(200) * 6.0 - 2.0
    losses = []
    theta = np.zeros(4)
    for _ in range(6):
        theta = logistic.fit_logistic(Xr, labels, 1.0, theta, max_iter=1)
        losses.append(logistic.logistic_loss(theta, Xr, labels, 1.0))
    assert all(b <= a for a, b in zip(losses, losses[1:]))
