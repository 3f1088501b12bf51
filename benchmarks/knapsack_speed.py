"""Speed of seed 004's Algorithm 1 (PbLinCBwK) against a straightforward reference implementation.

The reference is a direct transcription of Algorithm 1: every round it re-solves the
MLE (10) from zero with a generic optimiser (scipy BFGS), rebuilds and inverts
``Sigma_t`` and ``Psi_t`` from the stored rows (numpy.linalg.inv), re-solves the least
squares (11), and scores the K x K duels in a Python double loop.  The banditbench
policy refits (10) by Newton's method warm-started at the previous estimate and only
when new feedback arrived, keeps both inverses by Sherman–Morrison updates and scores
all duels with one matrix expression.  Both run the same environment and seed (no
delays, one BLAS thread); the script reports rounds per second, the ratio, and the
share of rounds in which both chose the same duel.

    .venv/bin/python benchmarks/knapsack_speed.py [--env car|synthetic] [--horizon 1000] [--budget 450]
        [--oracle data/oracles/car_evaluation.npz] [--car-data PATH/car.data]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy import optimize  # noqa: E402

from banditbench.api import NULL, Policy, Problem  # noqa: E402
from banditbench.data.car_oracle import fit_car_oracle  # noqa: E402
from banditbench.data.files import save_npz  # noqa: E402
from banditbench.envs.knapsack import CarModeration, SyntheticPbBwK  # noqa: E402
from banditbench.policies.knapsack import OptimisticDuel, kappa_bound  # noqa: E402
from banditbench.policies.linalg import logistic_loss  # noqa: E402


class ReferenceAlg1(Policy):
    """Direct transcription of Algorithm 1 with the same defaults (lam = 1, beta = 1, kappa = 1/sigma'(1))."""

    feedback_kind = "preference_cost"

    def __init__(self, problem, rng, lam=1.0, beta_r=1.0, beta_w=1.0):
        self.d, self.dw = problem["dimension"], problem["cost_dimension"]
        self.b = problem["budget"] / problem.horizon
        self.V = self.b * np.sqrt(problem.horizon)
        self.lam, self.kappa, self.beta_r, self.beta_w = lam, kappa_bound(1.0), beta_r, beta_w
        self.Q = 0.0
        self.played = {}
        self.diffs, self.labels, self.psis, self.costs = [], [], [], []

    def observe(self, t, arrived):
        for fb in arrived:
            diff, psi = self.played[fb.round]
            if diff.any():
                self.diffs.append(diff)
                self.labels.append(fb.y)
            self.psis.extend(psi)
            self.costs.extend(np.asarray(fb.costs)[:, 0])

    def act(self, t, ctx):
        if ctx.stopped:
            return NULL
        phi, psi = ctx.phi, ctx.psi
        X = np.array(self.diffs).reshape(-1, self.d)
        theta = (
            optimize.minimize(
                logistic_loss,
                np.zeros(self.d),
                args=(X, np.array(self.labels), self.lam),
                method="BFGS",
                options={"gtol": 1e-6},
            ).x
            if len(X)
            else np.zeros(self.d)
        )
        sigma_inv = np.linalg.inv(self.kappa * self.lam * np.eye(self.d) + X.T @ X)
        P = np.array(self.psis).reshape(-1, self.dw)
        psi_inv = np.linalg.inv(self.lam * np.eye(self.dw) + P.T @ P)
        omega = psi_inv @ (P.T @ np.array(self.costs))
        best, choice = -np.inf, (0, 0)
        for x in range(len(phi)):
            for y in range(x, len(phi)):  # symmetric index: x <= y, as the policy
                diff = phi[x] - phi[y]
                r = theta @ (phi[x] + phi[y]) + self.beta_r * np.sqrt(diff @ sigma_inv @ diff)
                w = omega @ (psi[x] + psi[y]) - self.beta_w * (
                    np.sqrt(psi[x] @ psi_inv @ psi[x]) + np.sqrt(psi[y] @ psi_inv @ psi[y])
                )
                if r - self.Q / self.V * w > best:
                    best, choice, w_choice = r - self.Q / self.V * w, (x, y), w
        self.Q = max(self.Q + w_choice - self.b, 0.0)
        x, y = choice
        self.played[t] = (phi[x] - phi[y], psi[[x, y]])
        return choice


def run(policy_cls, make_env, T):
    env = make_env()
    policy = policy_cls(Problem(T, info=env.public_info()), np.random.default_rng(1))
    actions, pending = [], []
    start = time.perf_counter()
    for t in range(1, T + 1):
        if pending:
            policy.observe(t, pending)
        action = policy.act(t, env.context(t))
        fb, _ = env.step(t, action)
        pending = [fb] if fb is not None else []
        actions.append(tuple(action))
    return time.perf_counter() - start, actions


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--env", choices=("car", "synthetic"), default="car")
    ap.add_argument("--horizon", type=int, default=1000)
    ap.add_argument("--budget", type=float, default=450.0)
    ap.add_argument("--oracle", default="data/oracles/car_evaluation.npz")
    ap.add_argument("--car-data", default=None, help="car.data to fit the oracle from if --oracle is missing")
    args = ap.parse_args()
    T, B = args.horizon, args.budget
    if args.env == "car":
        oracle = args.oracle
        if not os.path.isfile(oracle):
            if args.car_data is None:
                sys.exit(f"{oracle} does not exist; pass --car-data PATH/car.data to fit it")
            oracle = os.path.join(tempfile.mkdtemp(), "car_evaluation.npz")
            save_npz(oracle, fit_car_oracle(args.car_data), {"dataset": "car"})

        def make_env():
            return CarModeration(np.random.SeedSequence(0), horizon=T, budget=B, oracle=oracle)
    else:

        def make_env():
            return SyntheticPbBwK(np.random.SeedSequence(0), horizon=T, budget=B)

    fast_s, fast_actions = run(OptimisticDuel, make_env, T)
    ref_s, ref_actions = run(ReferenceAlg1, make_env, T)
    same = np.mean([a == b for a, b in zip(fast_actions, ref_actions)])
    env = make_env()
    print(
        f"Algorithm 1 (seed 004), {args.env}: T = {T}, B = {B}, d = {env.phi.shape[-1]}, K = {env.n_arms}, "
        f"no delay, one thread"
    )
    print(f"  banditbench : {fast_s:7.2f} s  ({T / fast_s:8.0f} rounds/s)")
    print(f"  reference   : {ref_s:7.2f} s  ({T / ref_s:8.0f} rounds/s)")
    print(f"  speed-up    : {ref_s / fast_s:7.1f}x   (same duel in {same:.0%} of rounds)")


if __name__ == "__main__":
    main()
