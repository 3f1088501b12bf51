"""Is seed 004's Algorithm 1 as fast at every budget and seed?  (not a test)

    .venv/bin/python benchmarks/knapsack_rate.py [--horizon 5000] [--budgets 0.15,0.45] [--seeds 0,1,2,3]

Runs ``pblincbwk_alg1`` on ``pbbwk_synthetic`` (no delay) for each per-round budget
fraction and seed, and the same policy with the MLE (10) refitted on every stored duel
(``all rows``), and that with the Newton line search as it was before (``before``: it
demanded a strict decrease of the computed loss, see :func:`fit_logistic_strict`).  Per run:
rounds per second (CPU time of this process, robust to a loaded machine), the stopping
time ``tau`` (after it every round is the null action and costs next to nothing), the
number of refits (one per round in which an informative duel ``x != y`` arrived), the
rows the refit runs on at the end, loss evaluations per refit (Newton steps plus
line-search trials) and CPU microseconds per refit.  The refit is the only per-round
work whose cost can depend on the run; the report shows what it depends on.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import banditbench.numerics.logistic_mle as logistic  # noqa: E402
from banditbench.api import Problem  # noqa: E402
from banditbench.simulation.delays import make_delay  # noqa: E402
from banditbench.envs.knapsack import SyntheticPbBwK  # noqa: E402
from banditbench.policies import knapsack  # noqa: E402
from banditbench.policies.knapsack import OptimisticDuel  # noqa: E402
from banditbench.simulation.runner import simulate  # noqa: E402


def fit_logistic_strict(X, labels, lam, theta0, weights=None, max_iter=50, tol=1e-8):
    """``banditbench.numerics.logistic_mle.fit_logistic`` as it was: the line search demands a strict decrease of the
    computed loss, also when the predicted decrease is below the loss's floating-point resolution."""
    theta = np.array(theta0, dtype=float)
    if X.shape[0] == 0:
        return np.zeros_like(theta)
    w = np.ones(X.shape[0]) if weights is None else weights
    loss = logistic.logistic_loss(theta, X, labels, lam, w)
    for _ in range(max_iter):
        p = logistic.sigmoid(X @ theta)
        grad = X.T @ (w * (p - labels)) + lam * theta
        if np.max(np.abs(grad)) < tol:
            break
        hess = (X.T * (w * p * (1.0 - p))) @ X
        hess[np.diag_indices_from(hess)] += lam
        step = np.linalg.solve(hess, grad)
        eta = 1.0
        while True:
            cand = theta - eta * step
            new_loss = logistic.logistic_loss(cand, X, labels, lam, w)
            if new_loss <= loss or eta < 1e-10:
                break
            eta *= 0.5
        theta, loss = cand, new_loss
    return theta


class AllRowsAlg1(OptimisticDuel):
    """Algorithm 1 refitting (10) on every informative duel received so far (O(t d^2) per refit)."""

    def _estimate(self):
        if self._stale:
            n = self.n_rows
            self.theta = knapsack.fit_logistic(
                self.rows[:n], self.labels[:n], self.lam, self.theta, max_iter=self.max_newton_steps, tol=self.tol
            )
            self._stale = False
        return self.theta


VARIANTS = {"ours": (OptimisticDuel, False), "all rows": (AllRowsAlg1, False), "before": (AllRowsAlg1, True)}


class Counting:
    """While active: counts refits (calls of the policies' ``fit_logistic``), the CPU time they take,
    and loss evaluations (``banditbench.numerics.logistic_mle.logistic_loss``: one per Newton step and line-search trial)."""

    def __init__(self, strict: bool):
        self.strict = strict

    def __enter__(self):
        self.fits = self.losses = 0
        self.fit_seconds = 0.0
        self._fit, self._loss = knapsack.fit_logistic, logistic.logistic_loss
        fit_logistic = fit_logistic_strict if self.strict else self._fit

        def fit(*args, **kwargs):
            self.fits += 1
            start = time.process_time()
            out = fit_logistic(*args, **kwargs)
            self.fit_seconds += time.process_time() - start
            return out

        def loss(*args, **kwargs):
            self.losses += 1
            return self._loss(*args, **kwargs)

        knapsack.fit_logistic, logistic.logistic_loss = fit, loss
        return self

    def __exit__(self, *exc):
        knapsack.fit_logistic, logistic.logistic_loss = self._fit, self._loss


def run(variant: str, horizon: int, budget: float, seed: int):
    policy_cls, strict = VARIANTS[variant]
    env = SyntheticPbBwK(np.random.SeedSequence(seed), horizon=horizon, budget=budget)
    policy = policy_cls(Problem(horizon, info=env.public_info()), np.random.default_rng(seed))
    with Counting(strict) as counts:
        start = time.process_time()
        logs = simulate(env, policy, make_delay({"kind": "none"}), horizon, np.random.default_rng(seed))
        seconds = time.process_time() - start
    rows = policy.n_rows if policy_cls is AllRowsAlg1 else len(policy._distinct)
    return seconds, int(env.summary()["tau"]), counts, rows, logs["reward"].sum()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=5000)
    ap.add_argument("--budgets", default="0.15,0.45", help="per-round budget fractions B / T")
    ap.add_argument("--seeds", default="0,1,2,3")
    args = ap.parse_args()
    T = args.horizon
    print(
        f"pblincbwk_alg1 on pbbwk_synthetic, T = {T}, no delay; CPU time, one BLAS thread; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'B / T':>6s} {'seed':>4s} {'variant':9s} {'rounds/s':>9s} {'tau':>5s} {'refits':>6s} {'rows':>5s} "
        f"{'losses/refit':>12s} {'µs/refit':>9s} {'reward':>8s}"
    )
    for frac in (float(b) for b in args.budgets.split(",")):
        for seed in (int(s) for s in args.seeds.split(",")):
            for label in VARIANTS:
                seconds, tau, c, rows, reward = run(label, T, frac * T, seed)
                print(
                    f"{frac:6.2f} {seed:4d} {label:9s} {T / seconds:9.0f} {tau:5d} {c.fits:6d} {rows:5d} "
                    f"{c.losses / max(c.fits, 1):12.1f} {1e6 * c.fit_seconds / max(c.fits, 1):9.0f} {reward:8.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
