"""Straightforward references for Logistic-UCB-1 and ada-OFU-ECOLog, written from the update
rules of the authors' public implementation (criteo-research/logistic_bandit, package
``logbexp``: ``algorithms/logistic_ucb_1.py``, ``algorithms/ecolog.py``,
``utils/optimization.py``), in that code's straightforward style:

* Logistic-UCB-1: the history kept as Python lists and converted to arrays inside every
  Newton step; the bonus (a log-determinant and two chi-square CDFs from
  ``scipy.stats.chi2``) recomputed at every pull; the UCB evaluated arm by arm in a Python
  loop; ``V^{-1}`` updated by Sherman–Morrison written with d x d matrix products.
* ada-OFU-ECOLog: the online fits in the ``z = V~^{1/2} theta`` coordinates with
  ``scipy.linalg.sqrtm`` of ``V~`` and ``V~^{-1}`` in each fit (four square roots per
  round), the ellipsoid projection with its own square root and a bounded scalar search.

``banditbench.policies.logistic`` computes the same iterates without that work; this
module is what ``benchmarks/logistic_speed.py`` and ``tests/policies/neural/test_neural_logistic.py``
compare it with.  The initial Logistic-UCB-1 estimate (a N(0, I) draw in the original)
is passed in, so both start from the same point.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import sqrtm
from scipy.optimize import minimize_scalar
from scipy.stats import chi2


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def sigmoid_slope(z):
    return sigmoid(z) * (1.0 - sigmoid(z))


def weighted_norm(x, A):
    return np.sqrt(np.dot(x, np.dot(A, x)))


class RefLogisticUCB1:
    def __init__(self, dim, norm_bound, arm_norm_bound, delta, theta_init, lazy_every=10, eager_rounds=200):
        self.dim, self.S, self.delta = dim, norm_bound, delta
        self.lazy_every, self.eager_rounds = lazy_every, eager_rounds
        self.l2reg = dim
        self.V = self.l2reg * np.eye(dim)
        self.V_inv = np.eye(dim) / self.l2reg
        self.H = self.l2reg * np.eye(dim)
        self.theta = np.array(theta_init, dtype=float)
        self.kappa = 1.0 / sigmoid_slope(norm_bound * arm_norm_bound)
        self.count = 0
        self.bonus = 0.0
        self.arms, self.rewards = [], []

    def learn(self, arm, reward):
        self.arms.append(arm)
        self.rewards.append(reward)
        self.l2reg = self.dim * np.log(2 + len(self.rewards))
        if self.count % self.lazy_every == 0 or len(self.rewards) < self.eager_rounds:
            theta = self.theta
            for _ in range(5):
                probs = sigmoid(np.dot(np.array(self.arms), theta))[:, None]
                residual = probs - np.array(self.rewards)[:, None]
                grad = self.l2reg * theta + np.sum(residual * np.array(self.arms), axis=0)
                hessian = np.dot(
                    np.array(self.arms).T, probs * (1 - probs) * np.array(self.arms)
                ) + self.l2reg * np.eye(self.dim)
                theta = theta - np.linalg.solve(hessian, grad)
            self.theta = theta
            self.H = hessian
        self.count += 1

    def _update_bonus(self):
        _, logdet = np.linalg.slogdet(self.H)
        lam, d = self.l2reg, self.dim
        ratio = np.log(chi2(d).cdf(2 * lam) / chi2(d).cdf(lam))
        gamma_1 = np.sqrt(lam) / 2 + (2 / np.sqrt(lam)) * (
            np.log(1 / self.delta) + 0.5 * logdet - 0.5 * d * np.log(lam) + ratio
        )
        gamma_2 = 1 + np.log(1 / self.delta) + ratio + 0.5 * logdet - 0.5 * d * np.log(lam)
        gamma = min(gamma_1, gamma_2)
        self.bonus = (
            0.25 * np.sqrt(self.kappa) * min(np.sqrt(1 + 2 * self.S) * gamma, gamma + gamma**2 / np.sqrt(lam))
            + np.sqrt(lam) * self.S
        )

    def pull(self, arms):
        self._update_bonus()
        values = [sigmoid(np.sum(self.theta * a)) + self.bonus * weighted_norm(a, self.V_inv) for a in arms]
        self.values = np.array(values)  # kept for the tests' near-tie checks
        k = max(range(len(arms)), key=lambda i: values[i])
        a = arms[k]
        self.V += np.outer(a, a)
        self.V_inv += -np.dot(self.V_inv, np.dot(np.outer(a, a), self.V_inv)) / (1 + np.dot(a, np.dot(self.V_inv, a)))
        return k


def _project_ellipsoid(x, matrix, radius):
    """Projection of x onto {z : z^T matrix^{-1} z <= radius^2}."""
    if np.dot(x, np.linalg.solve(matrix, x)) - radius**2 < 1e-3:
        return x
    root = sqrtm(matrix)
    y = np.dot(root, x)
    eye = np.eye(len(x))

    def dual(lam):
        return lam * radius**2 + np.dot(y, np.linalg.solve(matrix + lam * eye, y))

    lam = minimize_scalar(dual, method="bounded", bounds=(0, 1000), options={"maxiter": 500}).x
    return np.dot(root, np.linalg.solve(matrix + lam * eye, y))


def _online_fit(arm, reward, start, V, V_inv, radius, precision, bar):
    root, root_inv = sqrtm(V), sqrtm(V_inv)
    z_anchor = np.dot(root, start)
    z = z_anchor
    arm_z = np.dot(root_inv, arm)
    step = 1 / (1 / 4 + 2 / (2 + radius)) / 2
    iters = int(np.ceil((5 / 4 + radius / 8) * np.log(2 * (2 + radius) * radius**2 / precision)))
    if bar:
        iters *= 4
    for _ in range(iters):
        p = sigmoid(np.sum(z * arm_z))
        slope = 2 * p - 1 if bar else p - reward
        z = _project_ellipsoid(z - step * (z - z_anchor + slope * arm_z), V, radius)
    return np.real_if_close(np.dot(root_inv, z))


class RefECOLog:
    def __init__(self, dim, norm_bound, delta, l2reg=1.0, strict=True):
        self.S, self.delta, self.l2reg, self.strict = norm_bound, delta, l2reg, strict
        self.V = l2reg * np.eye(dim)
        self.V_inv = np.eye(dim) / l2reg
        self.theta = np.zeros(dim)
        self.cum_loss = 0.0
        self.count = 1

    def learn(self, arm, reward):
        self.theta = _online_fit(arm, reward, self.theta, self.V, self.V_inv, self.S, 1 / self.count, bar=False)
        theta_bar = _online_fit(arm, reward, self.theta, self.V, self.V_inv, self.S, 1 / self.count, bar=True)
        disc = np.clip(weighted_norm(self.theta - theta_bar, self.V), 0, np.inf)
        s = sigmoid_slope(np.dot(self.theta, arm))
        self.V += s * np.outer(arm, arm)
        self.V_inv += (
            -s
            * np.dot(self.V_inv, np.dot(np.outer(arm, arm), self.V_inv))
            / (1 + s * np.dot(arm, np.dot(self.V_inv, arm)))
        )
        if self.strict and sigmoid_slope(np.dot(theta_bar, arm)) / s > 2:
            raise ValueError("ECOLog: the data-dependent condition was not met")
        p, p_bar = sigmoid(np.dot(self.theta, arm)), sigmoid(np.dot(theta_bar, arm))
        loss = -reward * np.log(p) - (1 - reward) * np.log(1 - p)
        loss_bar = -reward * np.log(p_bar) - (1 - reward) * np.log(1 - p_bar)
        self.cum_loss += 2 * (1 + self.S) * (loss_bar - loss) - 0.5 * disc

    def pull(self, arms):
        lam, S = self.l2reg, self.S
        gamma = np.sqrt(lam) / 2 + 2 * np.log(2 * np.sqrt(1 + self.count / (4 * lam)) / self.delta) / np.sqrt(lam)
        radius = np.sqrt(max(0, 2 * lam * S**2 + (1 + S) ** 2 * gamma + self.cum_loss))
        values = [sigmoid(np.sum(self.theta * a)) + radius * weighted_norm(a, self.V_inv) for a in arms]
        self.values = np.array(values)  # kept for the tests' near-tie checks
        k = max(range(len(arms)), key=lambda i: values[i])
        self.count += 1
        return k
