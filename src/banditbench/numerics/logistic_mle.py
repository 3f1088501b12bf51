"""The regularised logistic MLE (Newton), shared by the policies and the data layer's oracles.

``fit_logistic`` minimises ``sum_s w_s [softplus(z_s) - a_s z_s] + lam/2 ||theta - c||^2``
by damped Newton steps warm-started from the previous estimate, so a bandit round
typically costs one or two O(n d^2) steps.  ``fit_logistic_bfgs`` minimises the same objective, its loss
scaled (e.g. by ``1/n``, a mean), with scipy's BFGS to a gradient tolerance: the optimiser of public
baseline code (the VACDB repository's ``vdb.py`` and ``suplin.py``), for the baselines' ``authors`` preset.  Neutral ground: the policies use it
(through :mod:`banditbench.policies.linalg`) and so does the car oracle
(:mod:`banditbench.data.car_oracle`), and neither layer imports the other.
"""

from __future__ import annotations

import numpy as np

from .sigmoid import sigmoid


#: relative rounding of a sum of many loss terms, well above machine epsilon (2.2e-16)
LOSS_RESOLUTION = 1e-13


def softplus(z):
    return np.logaddexp(0.0, z)


def logistic_loss(theta, X, labels, lam, weights=None, centre=None):
    """``sum_s w_s [softplus(z_s) - a_s z_s] + lam/2 ||theta - c||^2`` with ``z = X theta`` (``c = 0`` by default).

    This equals ``-sum_s w_s [a_s log mu(z_s) + (1 - a_s) log mu(-z_s)] + lam/2 ||theta - c||^2``
    for any real label ``a_s`` (IPW labels exceed 1), and is convex in theta.
    """
    z = X @ theta
    per = softplus(z) - labels * z
    if weights is not None:
        per = per * weights
    gap = theta if centre is None else theta - centre
    return per.sum() + 0.5 * lam * gap @ gap


def fit_logistic(
    X: np.ndarray,
    labels: np.ndarray,
    lam: float,
    theta0: np.ndarray,
    weights: np.ndarray | None = None,
    max_iter: int = 50,
    tol: float = 1e-8,
    centre: np.ndarray | None = None,
) -> np.ndarray:
    """Minimise :func:`logistic_loss` (ridge centred at ``centre``, default 0) by damped Newton
    steps started at ``theta0``.

    Stops when the gradient's max-norm falls below ``tol``.  Backtracking halves
    the step until the loss decreases, which keeps Newton stable for labels
    outside [0, 1].  A step whose predicted decrease (half the Newton decrement
    ``grad . step``) is below what the loss can resolve in floating point is taken
    in full: there the quadratic model is exact to rounding, and a comparison of
    losses would only see rounding noise and halve the step to nothing (with
    thousands of rows that stalled Newton at ``max_iter``).
    """
    theta = np.array(theta0, dtype=float)
    if X.shape[0] == 0:
        return np.zeros_like(theta) if centre is None else np.array(centre, dtype=float)
    w = np.ones(X.shape[0]) if weights is None else weights
    loss = logistic_loss(theta, X, labels, lam, w, centre)
    for _ in range(max_iter):
        z = X @ theta
        p = sigmoid(z)
        grad = X.T @ (w * (p - labels)) + lam * (theta if centre is None else theta - centre)
        if np.max(np.abs(grad)) < tol:
            break
        hess = (X.T * (w * p * (1.0 - p))) @ X
        hess[np.diag_indices_from(hess)] += lam
        step = np.linalg.solve(hess, grad)
        if grad @ step <= LOSS_RESOLUTION * abs(loss):
            theta = theta - step
            loss = logistic_loss(theta, X, labels, lam, w, centre)  # the same (centred) objective
            continue
        eta = 1.0
        while True:
            cand = theta - eta * step
            new_loss = logistic_loss(cand, X, labels, lam, w, centre)
            if new_loss <= loss or eta < 1e-10:
                break
            eta *= 0.5
        theta, loss = cand, new_loss
    return theta


def fit_logistic_bfgs(
    X: np.ndarray,
    labels: np.ndarray,
    lam: float,
    theta0: np.ndarray,
    weights: np.ndarray | None = None,
    gtol: float = 1e-4,
    loss_scale: float = 1.0,
) -> np.ndarray:
    """Minimise ``loss_scale * sum_s w_s [softplus(z_s) - a_s z_s] + lam/2 ||theta||^2`` by scipy's BFGS
    started at ``theta0`` (its default inverse-Hessian start and line search), stopping when the max-norm
    of that objective's gradient is below ``gtol`` (scipy's ``gtol``; a run that ends without meeting it
    keeps its last iterate, as the public code does).  No data: zeros."""
    from scipy.optimize import minimize

    theta = np.array(theta0, dtype=float)
    if X.shape[0] == 0:
        return np.zeros_like(theta)
    w = (np.ones(X.shape[0]) if weights is None else weights) * loss_scale

    def objective(th: np.ndarray) -> tuple[float, np.ndarray]:
        z = X @ th
        value = float(w @ (softplus(z) - labels * z)) + 0.5 * lam * float(th @ th)
        return value, X.T @ (w * (sigmoid(z) - labels)) + lam * th

    return minimize(objective, theta, jac=True, method="BFGS", options={"gtol": gtol}).x
