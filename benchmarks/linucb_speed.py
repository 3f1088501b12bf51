"""Speed of LinUCB on a classification bandit against a straightforward reference implementation.

The reference is a direct transcription of shared LinUCB (Li et al. 2010) on the
dK-dimensional block arm features: it keeps ``A`` and ``b``, solves ``A theta = b``
and inverts ``A`` from scratch every round, and scores the arms in a Python loop.
The banditbench policy uses the block structure (K Sherman–Morrison-updated d x d
inverses, vectorised over arms).  Both run the same environment and seed on
scikit-learn's bundled digits (offline); the script checks that they choose the
same arms and reports rounds per second and the ratio.

    .venv/bin/python benchmarks/linucb_speed.py [--horizon 300] [--image-size 8]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from banditbench.api import Policy, Problem  # noqa: E402
from banditbench.data.paths import processed_path  # noqa: E402
from banditbench.data.preprocess import prepare, save_prepared  # noqa: E402
from banditbench.simulation.delays import make_delay  # noqa: E402
from banditbench.envs.classification import ClassificationBandit  # noqa: E402
from banditbench.policies.linucb import LinUCB  # noqa: E402
from banditbench.simulation.runner import simulate  # noqa: E402


class ReferenceLinUCB(Policy):
    """Shared LinUCB on the full arm features: explicit inverse every round, loop over arms."""

    feedback_kind = "reward"

    def __init__(self, problem: Problem, rng: np.random.Generator, alpha: float = 1.0, lam: float = 1.0):
        D = int(problem["dimension"])
        self.A, self.b, self.alpha, self.rng = lam * np.eye(D), np.zeros(D), alpha, rng
        self.played: dict[int, np.ndarray] = {}

    def observe(self, t, arrived):
        for fb in arrived:
            x = self.played.pop(fb.round)
            self.A += np.outer(x, x)
            self.b += fb.reward * x

    def act(self, t, arms):
        A_inv = np.linalg.inv(self.A)
        theta = A_inv @ self.b
        ucb = np.array([x @ theta + self.alpha * np.sqrt(x @ A_inv @ x) for x in arms])
        best = np.flatnonzero(ucb >= ucb.max() - 1e-12)
        arm = int(best[0] if len(best) == 1 else self.rng.choice(best))
        self.played[t] = arms[arm].copy()
        return arm


def run(policy_cls, horizon, image_size, seed=0, **info_override):
    env = ClassificationBandit(
        np.random.SeedSequence(seed), horizon=horizon, dataset="digits", preprocessing={"image_size": image_size}
    )
    info = {**env.public_info(), **info_override}
    policy = policy_cls(Problem(horizon, info=info), np.random.default_rng(seed))
    actions = []
    act = policy.act

    def recording_act(t, ctx):
        actions.append(act(t, ctx))
        return actions[-1]

    policy.act = recording_act
    start = time.perf_counter()
    logs = simulate(env, policy, make_delay({"kind": "none"}), horizon, np.random.default_rng(seed + 1))
    return time.perf_counter() - start, np.array(actions), logs["regret"].sum()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=300)
    parser.add_argument("--image-size", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        opts = {"image_size": args.image_size}
        save_prepared(processed_path("digits", opts), prepare("digits", opts))
        t_fast, a_fast, r_fast = run(LinUCB, args.horizon, args.image_size)
        t_ref, a_ref, r_ref = run(ReferenceLinUCB, args.horizon, args.image_size)
    d = args.image_size**2
    print(
        f"digits {args.image_size}x{args.image_size}: K = 10, d = {d}, arm dimension dK = {10 * d}, T = {args.horizon}"
    )
    print(
        f"  banditbench LinUCB (block, Sherman-Morrison): {args.horizon / t_fast:10.1f} rounds/s  "
        f"cumulative regret {r_fast:.0f}"
    )
    print(
        f"  reference (full inverse, loop over arms):     {args.horizon / t_ref:10.1f} rounds/s  "
        f"cumulative regret {r_ref:.0f}"
    )
    print(f"  speed-up: {t_ref / t_fast:.1f}x; same arms in {np.mean(a_fast == a_ref):.1%} of rounds")


if __name__ == "__main__":
    main()
