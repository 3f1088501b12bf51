"""NeuralLog speed and the diagonal / full confidence matrices, in one run.

1. Whole jobs (``banditbench.simulation.job.run_cell``) in seed 002's synthetic setting: h1, d = 20,
   K = 5, a pool of 2,500 contexts, m = 20 (p = 820), T = 2,000, the paper's training
   schedule — wall time per job and cumulative regret, diagonal (the paper's
   approximation) against full (exact ``V^{-1}`` / ``W^{-1}`` and log-determinant by
   Sherman–Morrison and the determinant lemma).
2. Per round against a straightforward reference of the full-matrix NeuralLog-UCB-1 (the
   pattern of public neural-bandit code): gradient features by one backward pass per arm,
   ``V^{-1}`` by ``numpy.linalg.inv`` and eq. 2's log-determinant by ``slogdet`` every round.
   Training is shared (the reference chooses with the network banditbench has just
   trained) and timed apart; the
   reference costs a p x p inversion a round, so it runs over the first ``--ref-horizon``
   rounds and banditbench is timed over the same rounds.

    python benchmarks/neurallog_speed.py [--horizon 2000] [--seeds 0 1] [--ref-horizon 200]
"""

from __future__ import annotations

import argparse
import math
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from banditbench.api import Problem  # noqa: E402
from banditbench.envs.logistic import SyntheticLogistic  # noqa: E402
from banditbench.numerics.sigmoid import sigmoid  # noqa: E402
from banditbench.policies.neural.logistic import R, NeuralLogUCB1  # noqa: E402
from banditbench.simulation.job import run_cell  # noqa: E402

ENV = {"latent": "h1", "dimension": 20, "n_arms": 5, "n_contexts": 2500}


def job(policy: str, confidence: str, seed: int, horizon: int) -> tuple[float, float]:
    cell = {
        "experiment": "bench",
        "algorithm": policy,
        "delay_label": "none",
        "horizon": horizon,
        "budget": None,
        "seed": seed,
        "delay": {"kind": "none"},
        "environment": {"name": "synthetic_logistic", "params": ENV},
        "policy": {"name": policy, "params": {"confidence": confidence}},
    }
    start = time.perf_counter()
    series, _, _ = run_cell(cell)
    return time.perf_counter() - start, float(series["regret"].sum())


class ReferenceUCB1:
    """NeuralLog-UCB-1 with the full V, written the straightforward way (module docstring, part 2)."""

    def __init__(self, ours: NeuralLogUCB1):
        self.ours = ours  # shares the network, the trainer and the history
        p = ours.net.n_params
        self.G = np.zeros((p, p))  # sum phi phi^T

    def features(self, theta: torch.Tensor, arms: np.ndarray) -> np.ndarray:
        rows = []
        for x in torch.tensor(arms):
            th = theta.clone().requires_grad_(True)
            self.ours.net.forward(th, x).backward()
            rows.append(th.grad.numpy().copy())
        return np.array(rows)

    def choose(self, arms: np.ndarray) -> tuple[int, np.ndarray]:
        """The arm of the round (with the network banditbench just trained) and every arm's features."""
        pol = self.ours
        theta = pol.trainer.current
        phi = self.features(theta, arms)
        p = len(self.G)
        V_inv = np.linalg.inv(self.G + pol.kappa * pol.lam_t * np.eye(p))
        log_det = np.linalg.slogdet(np.eye(p) + R / pol.lam0 * self.G)[1]
        radius = math.sqrt(pol.kappa) * R * pol.S**2 * (math.sqrt(log_det) + 1 / math.sqrt(pol.lam0))
        with torch.no_grad():
            mean = sigmoid(pol.net.forward(theta, torch.tensor(arms)).numpy())
        width = np.sqrt(np.einsum("ij,jk,ik->i", phi, V_inv, phi))
        return int(np.argmax(mean + pol.nu * radius * width)), phi


def per_round(seed: int, rounds: int) -> dict:
    env = SyntheticLogistic(np.random.SeedSequence(seed), horizon=rounds, **ENV)
    ours = NeuralLogUCB1(Problem(rounds, info=env.public_info()), np.random.default_rng(seed), confidence="full")
    ref = ReferenceUCB1(ours)
    spent_ours = spent_ref = training = 0.0
    same = 0
    fit = ours.trainer.fit

    def timed_fit(*args, **kwargs):  # training is shared: time it apart
        nonlocal training
        start = time.perf_counter()
        out = fit(*args, **kwargs)
        training += time.perf_counter() - start
        return out

    ours.trainer.fit = timed_fit
    for t in range(1, rounds + 1):
        arms = env.context(t)
        start = time.perf_counter()
        a = ours.act(t, arms)  # absorbs round t - 1 (and trains when due) first
        spent_ours += time.perf_counter() - start
        start = time.perf_counter()
        b, phi = ref.choose(arms)
        spent_ref += time.perf_counter() - start
        same += a == b
        ref.G += np.outer(phi[a], phi[a])
        fb, _ = env.step(t, a)
        ours.observe(t + 1, [fb])
    return {
        "same": same,
        "ours_ms": 1e3 * (spent_ours - training) / rounds,
        "ref_ms": 1e3 * spent_ref / rounds,
        "train_ms": 1e3 * training / rounds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--ref-horizon", type=int, default=200)
    parser.add_argument("--per-round-only", action="store_true", help="skip the whole jobs (part 1)")
    args = parser.parse_args()
    if not args.per_round_only:
        print(f"Whole jobs: h1, d = 20, K = 5, m = 20, T = {args.horizon}\n")
        print("| algorithm | confidence | seed | wall s | cumulative regret |")
        print("|---|---|---|---|---|")
        for policy in ("neurallog_ucb1", "neurallog_ucb2", "neurallog_ts1", "neurallog_ts2", "ncbf_ucb"):
            for confidence in ("diagonal", "full"):
                for seed in args.seeds:
                    wall, regret = job(policy, confidence, seed, args.horizon)
                    print(f"| {policy} | {confidence} | {seed} | {wall:.1f} | {regret:.1f} |", flush=True)
    print(f"\nPer round, NeuralLog-UCB-1 (full V) against the reference, first {args.ref_horizon} rounds\n")
    print("| seed | same choices | ours ms/round | reference ms/round | speed-up | shared training ms/round |")
    print("|---|---|---|---|---|---|")
    for seed in args.seeds:
        r = per_round(seed, args.ref_horizon)
        print(
            f"| {seed} | {r['same']} / {args.ref_horizon} | {r['ours_ms']:.2f} | {r['ref_ms']:.1f} | "
            f"{r['ref_ms'] / r['ours_ms']:.0f}x | {r['train_ms']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
