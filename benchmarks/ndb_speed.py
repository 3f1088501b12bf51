"""Speed of NDB-DF against straightforward references, in one run on the same instances and seeds.

References (the patterns of the public NeuralUCB / neural dueling code):

* ``loop+inverse`` — gradient features with a Python loop over arms, one backward
  pass each, and ``torch.linalg.inv`` of the p x p matrix ``V_{t-1}`` every round;
  training is identical to ours (same warm-started steps), so both make the same
  choices and the ratio isolates the per-round machinery.
* ``+refit`` — the same, but the network is re-trained from ``theta_0`` every round
  (``--refit-steps`` Adam steps on the full history), as code without warm starts does.

Instances: seed 000's synthetic setting (d = K = 20, fresh arms every round,
quadratic utility) and a fixed pool of K = 500 arms in d = 32 (the shape of the
prompt-optimisation benchmark: 500 instructions, 32-dimensional embeddings;
random unit embeddings here so the script needs no data).  Geometric delays,
mean 20, window 50.  Rounds per second are taken over the same horizon for every
implementation; choices are compared round by round.

The references cost seconds per round (a p x p inverse, p = 1,312 and 2,080 at
m = 32), so they run over the first ``--ref-horizon`` rounds and are compared with
banditbench over the same rounds; banditbench's rate over the full ``--horizon``
is reported too (its per-round cost grows with the training set).

    .venv/bin/python benchmarks/ndb_speed.py [--horizon 2000] [--ref-horizon 40] [--width 32] [--refit-steps 100]
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from banditbench.api import Environment, Problem  # noqa: E402
from banditbench.simulation.delays import make_delay  # noqa: E402
from banditbench.envs.dueling import SyntheticDueling  # noqa: E402
from banditbench.feedback import PreferenceFeedback  # noqa: E402
from banditbench.numerics.sigmoid import sigmoid  # noqa: E402
from banditbench.policies.neural.delayed_dueling import NDBDF  # noqa: E402
from banditbench.policies.neural.training import Trainer  # noqa: E402
from banditbench.simulation.runner import simulate  # noqa: E402


class FixedPool(Environment):
    """K fixed unit arms in R^d, utility ``s * (theta^T x)^2``, BTL duels (the prompt benchmark's shape)."""

    feedback_kind = "preference"
    action_kind = "pair"
    metrics = ("regret",)
    primary_metric = "regret"

    def __init__(self, seed: int, n_arms: int = 500, dimension: int = 32, scale: float = 10.0):
        rng = np.random.default_rng(seed)
        x = rng.standard_normal((n_arms, dimension))
        self.arms = x / np.linalg.norm(x, axis=1, keepdims=True)
        self.arms.flags.writeable = False
        theta = rng.standard_normal(dimension)
        self.f = scale * (self.arms @ (theta / np.linalg.norm(theta))) ** 2
        self.rng = np.random.default_rng(seed + 1)

    def public_info(self):
        return {"dimension": self.arms.shape[1], "n_arms": len(self.arms), "fixed_arms": True}

    def context(self, t):
        return self.arms

    def step(self, t, action):
        i, j = action
        y = int(self.rng.random() < sigmoid(self.f[i] - self.f[j]))
        return PreferenceFeedback(t, y), {"regret": 2 * self.f.max() - self.f[i] - self.f[j]}


class ReferenceNDBDF(NDBDF):
    """Direct transcription of Algorithm 2's selection: per-arm backward loop, explicit inverse every round."""

    def __init__(self, problem, rng, refit_steps: int = 0, **params):
        super().__init__(problem, rng, **params)
        self.fixed_arms = False  # no feature cache, no kernel: the plain p x p path
        p = self.net.n_params
        self.x_first = torch.zeros(self.horizon, self.d, dtype=torch.float64)
        self.x_second = torch.zeros(self.horizon, self.d, dtype=torch.float64)
        self.V = torch.eye(p, dtype=torch.float64) * (self.lam / self.kappa_mu)
        self.refit_steps = refit_steps
        self.params = params

    def _per_arm_features(self, x):
        rows = []
        for k in range(len(x)):
            th = self.net.theta0.clone().requires_grad_(True)
            self.net.forward(th, x[k]).backward()
            rows.append(th.grad / math.sqrt(self.net.width))
        return torch.stack(rows)

    def act(self, t, arms):
        if self.history.n_played and self.trainer.due(t):
            if self.refit_steps:  # retrain from theta_0 on the whole history
                self.trainer = Trainer(
                    self.net.theta0, lam=self.trainer.lam, lr=self.params.get("lr", 0.01), steps=self.refit_steps
                )
            self._train(t)
        x = torch.tensor(arms, dtype=torch.float64)
        with torch.no_grad():
            scores = self.net.forward(self.trainer.current, x)
        first = int(torch.argmax(scores))
        phi = self._per_arm_features(x)
        V_inv = torch.linalg.inv(self.V)
        ucb = []
        for k in range(len(x)):
            u = phi[k] - phi[first]
            ucb.append(float(scores[k]) + self._bonus_scale() * math.sqrt(max(float(u @ V_inv @ u), 0.0)))
        second = int(np.argmax(ucb))
        row = self.history.record_play()
        self.x_first[row], self.x_second[row] = x[first], x[second]
        u = phi[first] - phi[second]
        self.V += torch.outer(u, u)
        return first, second


class Recorder:
    def __init__(self, policy):
        self.policy, self.choices, self.feedback_kind = policy, [], policy.feedback_kind
        self.context_form = policy.context_form  # the runner asks the environment for it

    def observe(self, t, arrived):
        self.policy.observe(t, arrived)

    def act(self, t, arms):
        pair = self.policy.act(t, arms)
        self.choices.append(pair)
        return pair


def run(make_env, policy_cls, horizon, seed, **params):
    env = make_env()
    delay = make_delay({"kind": "geometric", "mean": 20, "window": 50})
    problem = Problem(horizon, rho=delay.rho, window=delay.window, info=env.public_info())
    policy = Recorder(policy_cls(problem, np.random.default_rng(seed), **params))
    start = time.perf_counter()
    logs = simulate(env, policy, delay, horizon, np.random.default_rng(seed + 1))
    return time.perf_counter() - start, policy.choices, logs["regret"].sum()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=2000)
    ap.add_argument("--ref-horizon", type=int, default=40)
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--refit-steps", type=int, default=100)
    args = ap.parse_args()
    torch.set_num_threads(1)
    T, m = args.horizon, args.width
    instances = {
        "synthetic d=K=20": lambda: SyntheticDueling(
            np.random.SeedSequence(0), horizon=T, dimension=20, n_arms=20, utility="quadratic"
        ),
        "fixed pool K=500, d=32": lambda: FixedPool(0),
    }
    R = args.ref_horizon
    print(f"NDB-DF per-round speed, width m = {m}, one thread; references over the first {R} rounds\n")
    print("| instance | implementation | rounds | rounds/s | same pairs as banditbench | speed-up |")
    print("|---|---|---|---|---|---|")
    for name, make_env in instances.items():
        full_s, _, _ = run(make_env, NDBDF, T, 0, width=m)
        print(f"| {name} | banditbench NDB-DF | {T} | {T / full_s:,.1f} | — | — |", flush=True)
        ours_s, ours_choices, _ = run(make_env, NDBDF, R, 0, width=m)
        print(f"| {name} | banditbench NDB-DF | {R} | {R / ours_s:,.1f} | — | 1× |", flush=True)
        ref_s, ref_choices, _ = run(make_env, ReferenceNDBDF, R, 0, width=m)
        same = np.mean([a == b for a, b in zip(ours_choices, ref_choices)])
        print(
            f"| {name} | loop over arms + inverse | {R} | {R / ref_s:,.2f} | {same:.0%} | {ref_s / ours_s:,.0f}× |",
            flush=True,
        )
        refit_s, _, _ = run(make_env, ReferenceNDBDF, R, 0, width=m, refit_steps=args.refit_steps)
        print(
            f"| {name} | loop + inverse + refit from θ0 ({args.refit_steps} steps) | {R} | {R / refit_s:,.2f} | "
            f"— | {refit_s / ours_s:,.0f}× |",
            flush=True,
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory of this process (all runs): {peak:,.0f} MB")


if __name__ == "__main__":
    main()
