"""Logistic-UCB-1 and ada-OFU-ECOLog against the straightforward references, in one run.

Both implementations play the same instances and seeds (seed 002's setting: d = 20,
K = 5, S = 1; a linear latent reward, the baselines' own model, and h1), each against
its own copy of the environment; the environment draws one uniform number per round
whatever the arm, so as long as the choices agree the rewards agree too.  Reported per
algorithm and instance: rounds with the same choice, the first round where they differ
(none: identical runs), and the CPU time per round (``time.process_time``, one thread) of
``act`` + ``observe`` (environment excluded), as a ratio.  ECOLog runs with ``strict: false`` (its data-dependent
condition fails on h1, see ``banditbench.policies.logistic``).

    python benchmarks/logistic_speed.py [--horizon 2000] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from banditbench.api import Problem  # noqa: E402
from banditbench.envs.logistic import SyntheticLogistic  # noqa: E402
from banditbench.policies.logistic import AdaOFUECOLog, LogisticUCB1  # noqa: E402

_spec = importlib.util.spec_from_file_location("logistic_reference", Path(__file__).with_name("logistic_reference.py"))
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)

S, DELTA = 1.0, 0.05


def environment(seed: int, latent: str, horizon: int, dimension: int, n_arms: int) -> SyntheticLogistic:
    return SyntheticLogistic(
        np.random.SeedSequence(seed),
        horizon=horizon,
        latent=latent,
        dimension=dimension,
        n_arms=n_arms,
        contexts="sphere",
        n_contexts=None,
    )


def ours(name: str, seed: int, horizon: int, dimension: int):
    problem = Problem(horizon=horizon, info={"dimension": dimension})
    rng = np.random.default_rng(seed)
    if name == "logistic_ucb1":
        return LogisticUCB1(problem, rng, norm_bound=S, delta=DELTA)
    return AdaOFUECOLog(problem, rng, norm_bound=S, delta=DELTA, strict=False)


def transcription(name: str, seed: int, dimension: int):
    if name == "logistic_ucb1":
        theta_init = np.random.default_rng(seed).standard_normal(dimension)  # our policy's first draw
        return reference.RefLogisticUCB1(dimension, S, 1.0, DELTA, theta_init)
    return reference.RefECOLog(dimension, S, DELTA, strict=False)


def run_ours(policy, env, horizon):
    choices, spent, feedback = [], 0.0, None
    for t in range(1, horizon + 1):
        arms = env.context(t)
        start = time.process_time()
        if feedback is not None:
            policy.observe(t, [feedback])
        a = policy.act(t, arms)
        spent += time.process_time() - start
        feedback, _ = env.step(t, a)
        choices.append(a)
    return np.array(choices), spent / horizon


def run_reference(policy, env, horizon):
    choices, spent = [], 0.0
    for t in range(1, horizon + 1):
        arms = env.context(t)
        start = time.process_time()
        a = policy.pull(list(arms))
        spent += time.process_time() - start
        feedback, _ = env.step(t, a)
        start = time.process_time()
        policy.learn(arms[a], feedback.reward)
        spent += time.process_time() - start
        choices.append(a)
    return np.array(choices), spent / horizon


def compare(name: str, latent: str, seed: int, horizon: int, dimension: int, n_arms: int) -> dict:
    mine, t_mine = run_ours(
        ours(name, seed, horizon, dimension), environment(seed, latent, horizon, dimension, n_arms), horizon
    )
    ref, t_ref = run_reference(
        transcription(name, seed, dimension), environment(seed, latent, horizon, dimension, n_arms), horizon
    )
    differ = np.flatnonzero(mine != ref)
    return {
        "same": int((mine == ref).sum()),
        "first_difference": int(differ[0]) + 1 if len(differ) else None,
        "ours_ms": 1e3 * t_mine,
        "reference_ms": 1e3 * t_ref,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--dimension", type=int, default=20)
    parser.add_argument("--arms", type=int, default=5)
    args = parser.parse_args()
    print(f"T = {args.horizon}, d = {args.dimension}, K = {args.arms}, S = {S}, seeds {args.seeds}\n")
    print(
        "| algorithm | latent | seed | same choices | first difference | ours ms/round | reference ms/round "
        "| speed-up |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in ("logistic_ucb1", "ada_ofu_ecolog"):
        for latent in ("linear", "h1"):
            ratios = []
            for seed in args.seeds:
                r = compare(name, latent, seed, args.horizon, args.dimension, args.arms)
                ratios.append(r["reference_ms"] / r["ours_ms"])
                print(
                    f"| {name} | {latent} | {seed} | {r['same']} / {args.horizon} | {r['first_difference'] or '-'} | "
                    f"{r['ours_ms']:.3f} | {r['reference_ms']:.3f} | {ratios[-1]:.1f}x |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
