"""The Newton solver of the logistic MLE near its optimum, where the loss cannot show the decrease."""

import numpy as np

import banditbench.numerics.logistic_mle as logistic
from banditbench.numerics.sigmoid import sigmoid

X = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [1.0, 0.0, -1.0]])
WEIGHTS = np.array([3e5, 4e5, 2e5])  # many duplicated duels: a loss of order 1e5
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
    assert len(calls) <= 4  # no halving of the step down to nothing


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


CENTRE = np.array([0.3, -0.2, 0.1])


def _near_centred_optimum():
    optimum = logistic.fit_logistic(X, LABELS, 1.0, np.zeros(3), weights=WEIGHTS, tol=1e-9, max_iter=100, centre=CENTRE)
    return optimum + 1e-10 * np.array([1.0, -2.0, 0.5])


def test_every_loss_the_solver_compares_is_the_centred_one(monkeypatch):
    """With a ridge centred at c, the loss kept after a full Newton step (the branch taken near the
    optimum) is the centred objective, like every loss backtracking compares it with (issue 23.7: it
    was recomputed without the centre)."""
    start = _near_centred_optimum()
    exact = logistic.logistic_loss
    centres = []

    def spy(theta, X_, labels, lam, weights=None, centre=None):
        centres.append(centre)
        return exact(theta, X_, labels, lam, weights, centre)

    monkeypatch.setattr(logistic, "logistic_loss", spy)
    theta = logistic.fit_logistic(X, LABELS, 1.0, start, weights=WEIGHTS, max_iter=3, tol=1e-12, centre=CENTRE)
    assert len(centres) >= 2  # the start's loss and at least one full step
    assert all(c is not None and np.array_equal(c, CENTRE) for c in centres)
    assert np.isfinite(theta).all()


def test_batched_solver_compares_centred_losses_too(monkeypatch):
    """The seed-batched copy (policies/neural/batched/ops.py) follows the same fix."""
    import torch

    from banditbench.policies.neural.batched import ops as B

    start = _near_centred_optimum()
    exact = B.logistic_loss
    centres = []

    def spy(theta, X_, labels, lam, w, centre):
        centres.append(centre)
        return exact(theta, X_, labels, lam, w, centre)

    monkeypatch.setattr(B, "logistic_loss", spy)

    def t(a):
        return torch.from_numpy(np.asarray(a, dtype=float))[None]

    theta = B.fit_logistic(
        t(X), t(LABELS), 1.0, t(start), t(WEIGHTS), torch.tensor([True]), max_iter=3, tol=1e-12, centre=t(CENTRE)
    )
    assert len(centres) >= 2
    assert all(c is not None and torch.equal(c, t(CENTRE)) for c in centres)
    assert torch.isfinite(theta).all()
