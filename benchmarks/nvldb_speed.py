"""Speed of NVLDB (seed 001) against NDB and a transcription of App. E's pseudo-code, in one run.

Instance: seed 001's synthetic square task, ``10 (Theta^T x)^2``, d = 5, K = 5
(App. E.1.1), one seed, no delays; one thread.  Times are the process's CPU time
(``time.process_time``), which a busy machine inflates far less than wall-clock
time; wall-clock time is printed next to it.

1. NVLDB-UCB-ASYM with the policy defaults (Algorithm 1: accumulated V) and as the
   paper grid runs it (``gram: reset``) over ``--horizon`` rounds — seed 001 reports
   1.71 min per 2,000 rounds on a GPU; we run on one CPU core.
2. NDB-UCB (Verma et al. 2024, full-gradient features, seed 000's machinery) at the
   same width over the same rounds: the NVLDB / NDB time ratio.
3. The reference — App. E.2.2's pseudo-code transcribed: the last-layer gradient of
   each arm by its own backward pass, Listing 2's loop over arms with
   ``torch.inverse(V)`` for every arm, and ``V`` re-initialised at the beginning of
   each round and rebuilt pair by pair from the whole history (App. E.2.1) —
   against banditbench with the same reading (``gram: rebuild``) and the same
   precision on both sides: float32 (PyTorch's default, so the precision of App. E's
   code, and the policy's default) and float64.  The reference trains the straightforward way — autograd and
   ``torch.optim.Adam`` (lines 9-10) — while banditbench's default
   ``backprop: manual`` runs a hand-written backward pass and Adam in numpy: the
   same iterates up to rounding, so the two make the same choices until Adam
   amplifies a rounding difference (column "same pairs"); banditbench with
   ``backprop: autograd`` makes the reference's choices exactly.  The reference
   that also retrains
   the network from its initial parameters on the whole history every round
   (``--retrain-steps`` Adam steps, the pattern of code without warm starts).  The
   references cost O(t) backward passes per round, so they run over the first
   ``--ref-horizon`` rounds and are compared with banditbench over the same rounds.

    python benchmarks/nvldb_speed.py [--horizon 2000] [--ref-horizon 600] [--width 32] [--retrain-steps 100]
                                     [--precision float32 float64]

(``--horizon 0`` skips the long runs of items 1-2.)
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from banditbench.api import Problem  # noqa: E402
from banditbench.simulation.delays import make_delay  # noqa: E402
from banditbench.envs.dueling import SyntheticDueling  # noqa: E402
from banditbench.policies.neural.neural_dueling import NDBUCB  # noqa: E402
from banditbench.policies.neural.training import Trainer  # noqa: E402
from banditbench.policies.neural.variance_aware_dueling import NVLDBUcbAsym  # noqa: E402
from banditbench.simulation.runner import simulate  # noqa: E402
from ndb_speed import Recorder  # noqa: E402  (benchmarks/ is on the path when run as a script)

PAPER_MINUTES_PER_2000 = 1.71  # seed 001 App. E.3, NVLDB-UCB-ASYM on an RTX 3060 GPU
PAPER_NDB_MINUTES_PER_2000 = 48.8


class ReferenceNVLDB(NVLDBUcbAsym):
    """NVLDB-UCB-ASYM as App. E's pseudo-code writes it (module docstring, item 3)."""

    def __init__(self, problem, rng, retrain_steps: int = 0, precision: str = "float64", **params):
        super().__init__(problem, rng, gram="rebuild", precision=precision, backprop="autograd", **params)
        self.retrain_steps, self.lr = retrain_steps, params.get("lr", 0.01)
        self.initial = self.trainer.current.clone()

    def _grad_list(self, params, x):
        """``d f(x_k) / d theta`` of each row, one backward pass per row."""
        rows = []
        for k in range(len(x)):
            p = params.clone().requires_grad_(True)
            (self.features(p, x[k : k + 1]) @ p[self.last]).sum().backward()
            rows.append(p.grad[self.last].clone())
        return torch.stack(rows)

    def act(self, t, arms):
        ready = np.flatnonzero(self.weighted)
        if len(ready) and self.trainer.due(t):
            if self.retrain_steps:  # retrain from the initial parameters on the whole history
                self.trainer = Trainer(
                    self.initial, lam=self.lam, lr=self.lr, steps=self.retrain_steps, penalised=self.last
                )
            self._train(ready)
        pending = np.flatnonzero(self.arrived & ~self.weighted)
        if len(pending):
            self._set_weights(pending)
        params = self.trainer.current
        V = torch.eye(len(self.theta0), dtype=self.dtype) * self.lam  # re-initialised ...
        for s in np.flatnonzero(self.weighted):  # ... and rebuilt pair by pair
            g = self._grad_list(params, torch.stack([self.x_first[s], self.x_second[s]]))
            z = g[0] - g[1]
            V += torch.outer(z, z) / float(self.zeta2[s])
        x = torch.tensor(arms, dtype=self.dtype)
        with torch.no_grad():
            utilities = self.features(params, x) @ params[self.last]
        grad_list = self._grad_list(params, x)
        at_1 = int(torch.argmax(utilities))  # Listing 2
        at_2, max_score = 1, -np.inf
        for j in range(len(utilities)):
            zt = grad_list[j] - grad_list[at_1]
            conf = torch.clamp(zt @ torch.inverse(V) @ zt, min=0)
            score = utilities[j].item() + (self.a * torch.sqrt(conf)).item()
            if score > max_score:
                max_score, at_2 = score, j
        self.x_first[t - 1], self.x_second[t - 1] = x[at_1], x[at_2]
        self.dphi[t - 1] = (grad_list[at_1] - grad_list[at_2]).numpy()
        return at_1, at_2


def _timed(method, spent):
    def wrapper(*args):
        start = time.process_time()
        method(*args)
        spent[0] += time.process_time() - start

    return wrapper


def run(policy_cls, horizon, d=5, K=5, training=None, **params):
    """CPU and wall seconds, the chosen pairs and the cumulative average regret of one run; with a list
    ``training``, its first entry accumulates the CPU seconds spent in the training step (lines 9-10)."""
    env = SyntheticDueling(
        np.random.SeedSequence(0),
        horizon=horizon,
        dimension=d,
        n_arms=K,
        utility="square",
        arm_distribution="normalized_cube",
        theta_distribution="cube",
    )
    delay = make_delay({"kind": "none"})
    problem = Problem(horizon, info=env.public_info())
    policy = policy_cls(problem, np.random.default_rng(1), **params)
    if training is not None:
        policy._train = _timed(policy._train, training)
    recorder = Recorder(policy)
    wall, cpu = time.perf_counter(), time.process_time()
    logs = simulate(env, recorder, delay, horizon, np.random.default_rng(2))
    return time.process_time() - cpu, time.perf_counter() - wall, recorder.choices, logs["average_regret"].sum()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=2000)
    ap.add_argument("--ref-horizon", type=int, default=600)
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--retrain-steps", type=int, default=100)
    ap.add_argument(
        "--precision",
        nargs="+",
        choices=("float32", "float64"),
        default=["float32", "float64"],
        help="precision of both sides of the comparison (float32: PyTorch's default, which App. E's "
        "code ran, and the policy default; float64: rounding differences smallest)",
    )
    args = ap.parse_args()
    torch.set_num_threads(1)
    T, R, m = args.horizon, args.ref_horizon, args.width
    if T:
        long_runs(T, m)
    print(
        f"Against the pseudo-code transcription over the first {R} rounds "
        f"('same pairs': rounds with the reference's pair); 'training' is lines 9-10 — the same steps, by "
        f"autograd in the reference and by banditbench's backprop setting; both sides in the same precision:\n"
    )
    print(
        "| implementation | precision | rounds | CPU s | of which training | rounds/s (CPU) | same pairs | speed-up "
        "| speed-up outside training |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for precision in args.precision:
        compare(R, m, precision, args.retrain_steps)
    default_t = [0.0]
    default_c, _, _, _ = run(NVLDBUcbAsym, R, width=m, training=default_t)
    print(
        f"| banditbench default (V accumulated) | float32 | {R} | {default_c:,.1f} | {default_t[0]:,.1f} | "
        f"{R / default_c:,.1f} | — | — | — |",
        flush=True,
    )


def compare(R, m, precision, retrain_steps):
    """banditbench (V rebuilt each round, as the transcription) against the transcription, in one precision."""
    ours_t = [0.0]
    ours_c, _, ours_choices, _ = run(NVLDBUcbAsym, R, width=m, gram="rebuild", precision=precision, training=ours_t)
    print(
        f"| banditbench (V rebuilt each round) | {precision} | {R} | {ours_c:,.1f} | {ours_t[0]:,.1f} | "
        f"{R / ours_c:,.1f} | — | 1x | 1x |",
        flush=True,
    )
    auto_t = [0.0]
    auto_c, _, auto_choices, _ = run(
        NVLDBUcbAsym, R, width=m, gram="rebuild", precision=precision, backprop="autograd", training=auto_t
    )
    print(
        f"| banditbench, backprop: autograd (V rebuilt each round) | {precision} | {R} | {auto_c:,.1f} | "
        f"{auto_t[0]:,.1f} | {R / auto_c:,.1f} | — | — | — |",
        flush=True,
    )
    for label, steps in (
        ("pseudo-code: loops over arms, inverse per arm, V rebuilt pair by pair", 0),
        (f"the same + retrain from (theta_0, W_0) every round ({retrain_steps} steps)", retrain_steps),
    ):
        ref_t = [0.0]
        ref_c, _, ref_choices, _ = run(
            ReferenceNVLDB, R, width=m, retrain_steps=steps, precision=precision, training=ref_t
        )
        same = (
            f"{np.mean([a == b for a, b in zip(ours_choices, ref_choices)]):.0%} "
            f"({np.mean([a == b for a, b in zip(auto_choices, ref_choices)]):.0%} with autograd)"
            if not steps
            else "—"
        )
        outside = (ref_c - ref_t[0]) / (ours_c - ours_t[0])
        print(
            f"| {label} | {precision} | {R} | {ref_c:,.1f} | {ref_t[0]:,.1f} | {R / ref_c:,.2f} | {same} | "
            f"{ref_c / ours_c:,.1f}x | {outside:,.1f}x |",
            flush=True,
        )


def long_runs(T, m):
    print(f"square utility, d = 5, K = 5, width m = {m}, one thread; CPU seconds (wall seconds)\n")
    print("| implementation | rounds | CPU s | wall s | min per 2,000 rounds (CPU) | R(T)/T |")
    print("|---|---|---|---|---|---|")
    cpu = {}
    for label, cls, params in (
        ("NVLDB-UCB-ASYM (Algorithm 1, V accumulated)", NVLDBUcbAsym, {}),
        ("NVLDB-UCB-ASYM (App. E practice, V reset)", NVLDBUcbAsym, {"gram": "reset"}),
        ("NDB-UCB (full-gradient V, p x p)", NDBUCB, {}),
    ):
        c, w, _, regret = run(cls, T, width=m, **params)
        cpu[label] = c
        print(f"| {label} | {T} | {c:,.1f} | {w:,.1f} | {c / 60 * 2000 / T:.2f} | {regret / T:.3f} |", flush=True)
    nv, ndb = cpu["NVLDB-UCB-ASYM (Algorithm 1, V accumulated)"], cpu["NDB-UCB (full-gradient V, p x p)"]
    print(
        f"\nseed 001 (GPU): NVLDB-UCB-ASYM {PAPER_MINUTES_PER_2000} min, NDB {PAPER_NDB_MINUTES_PER_2000} min per "
        f"2,000 rounds; here on one CPU core: {nv / 60 * 2000 / T:.2f} min, "
        f"{PAPER_MINUTES_PER_2000 * 60 / (nv * 2000 / T):.1f}x faster than the paper's figure; "
        f"NDB / NVLDB time ratio at width {m}: {ndb / nv:.2f}\n"
    )


if __name__ == "__main__":
    main()
