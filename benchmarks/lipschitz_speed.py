"""Speed of seed 003's Delayed Zooming and DLPP (not a test): rounds per second, and the ratio
against a straightforward pure-Python reference run in the same script.

    .venv/bin/python benchmarks/lipschitz_speed.py [--horizon 60000] [--ref-budget 20]

For each scenario the package policy runs all ``--horizon`` rounds through
``banditbench.simulation.runner.simulate`` (single thread) twice: on the Python loop, its time inside
``observe`` + ``act`` recorded per round (wrapping them makes ``simulate`` take that loop),
and as a job runs it, the whole run compiled (:mod:`banditbench.policies.lipschitz.compiled`,
checked to give the same regret series).  The reference — plain lists and loops, the
textbook algorithm: an exact *global* coverage test of the whole space every
round (1-d: sort-and-sweep; 2-d: every elementary cell against every ball),
a Python ``max`` for the index, dicts for the round -> arm/ball maps — runs
the same environment, noise and delays for as many rounds as fit in
``--ref-budget`` seconds (or the horizon); both are compared at that equal
number of rounds.  Scenarios (geometric delays of mean 20): the paper grid's setting
(``config/lipschitz.yaml``: noise sd = policy sigma = 0.01), the theory constants
(sigma = 1; the active set stays small), and a stress setting where the policy
assumes a small sigma (0.001 in 1-d, 0.004 in 2-d; ``lazy_rule = radius``) so
that the zooming active set grows to about two hundred / two thousand arms.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import itertools
import json
import math
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from banditbench.api import Policy, Problem  # noqa: E402
from banditbench.simulation.delays import DelayQueue  # noqa: E402
from banditbench.policies.lipschitz import log_term  # noqa: E402
from banditbench.simulation.runner import build, simulate  # noqa: E402


# --- straightforward references ------------------------------------------------------------------


def _open01(rng) -> float:
    u = rng.random()
    while u == 0.0:
        u = rng.random()
    return u


class RefDelayedZooming(Policy):
    """Algorithm 1 with lists: global exact coverage test every round, Python argmax."""

    feedback_kind = "reward"

    def __init__(self, problem: Problem, rng, *, delta=0.01, sigma=1.0, lazy_rule="radius"):
        self.d, self.rng, self.lazy_rule = int(problem["dimension"]), rng, lazy_rule
        self.scale = sigma * math.sqrt(log_term(problem.horizon, delta))
        self.centers, self.v, self.sums, self.cache_n, self.cache_sum, self.v_at_pull = [], [], [], [], [], []
        self.arm_of_round: dict[int, int] = {}

    def observe(self, t, arrived):
        for fb in arrived:
            i = self.arm_of_round.pop(fb.round)
            vs = self.v_at_pull[i]
            ok = self.v[i] + 1 <= 4 * vs if self.lazy_rule == "count" and vs else self.v[i] + 2 <= 4 * (1 + vs)
            if ok:
                self.v[i] += 1
                self.sums[i] += fb.reward
            else:
                self.cache_n[i] += 1
                self.cache_sum[i] += fb.reward

    def _uncovered_cells(self, radii):
        boxes = [
            ([max(0.0, c - r) for c in ctr], [min(1.0, c + r) for c in ctr]) for ctr, r in zip(self.centers, radii)
        ]
        if self.d == 1:
            gaps, reach = [], 0.0
            for lo, hi in sorted((b[0][0], b[1][0]) for b in boxes):
                if lo > reach:
                    gaps.append(([reach], [lo]))
                reach = max(reach, hi)
            if reach < 1.0:
                gaps.append(([reach], [1.0]))
            return gaps
        axes = [sorted({0.0, 1.0} | {b[0][j] for b in boxes} | {b[1][j] for b in boxes}) for j in range(self.d)]
        cells = []
        for idx in itertools.product(*[range(len(a) - 1) for a in axes]):
            lo = [axes[j][idx[j]] for j in range(self.d)]
            hi = [axes[j][idx[j] + 1] for j in range(self.d)]
            mid = [(a + b) / 2 for a, b in zip(lo, hi)]
            if not any(all(blo[j] <= mid[j] <= bhi[j] for j in range(self.d)) for blo, bhi in boxes):
                cells.append((lo, hi))
        return cells

    def act(self, t, context=None):
        radii = [self.scale / math.sqrt(1 + v) for v in self.v]
        cells = self._uncovered_cells(radii)
        if cells:
            vols = [math.prod(b - a for a, b in zip(lo, hi)) for lo, hi in cells]
            target = _open01(self.rng) * sum(vols)
            for (lo, hi), vol in zip(cells, vols):
                if target < vol:
                    break
                target -= vol
            frac = [target / vol] + [_open01(self.rng) for _ in range(self.d - 1)]
            self.centers.append([a + f * (b - a) for a, b, f in zip(lo, hi, frac)])
            for lst, zero in (
                (self.v, 0),
                (self.sums, 0.0),
                (self.cache_n, 0),
                (self.cache_sum, 0.0),
                (self.v_at_pull, 0),
            ):
                lst.append(zero)
            i = len(self.centers) - 1
        else:
            best, i = -math.inf, 0
            for j, (s, v, r) in enumerate(zip(self.sums, self.v, radii)):
                val = (s / v if v else 0.0) + 2 * r
                if val > best:
                    best, i = val, j
        self.arm_of_round[t] = i
        self.v_at_pull[i] = self.v[i]
        if self.cache_n[i]:
            self.v[i] += self.cache_n[i]
            self.sums[i] += self.cache_sum[i]
            self.cache_n[i], self.cache_sum[i] = 0, 0.0
        c = self.centers[i]
        return c[0] if self.d == 1 else np.array(c)


class RefDLPP(Policy):
    """Algorithm 2 with lists of ball records and a Python round-robin."""

    feedback_kind = "reward"

    def __init__(self, problem: Problem, rng, *, delta=0.01, sigma=1.0):
        self.d, self.rng = int(problem["dimension"]), rng
        self.v_scale = sigma**2 * log_term(problem.horizon, delta)
        self.phase = 0
        self.ball_of_round: dict[int, dict] = {}
        self._new_phase([[0.5] * self.d])

    def _new_phase(self, centers):
        self.phase += 1
        self.r = 2.0**-self.phase
        self.v_target = self.v_scale / self.r**2
        self.balls = [{"c": c, "v": 0, "sum": 0.0, "mean": 0.0, "plus": True, "phase": self.phase} for c in centers]
        self.queue = []

    def observe(self, t, arrived):
        for fb in arrived:
            b = self.ball_of_round.pop(fb.round)
            if b["phase"] != self.phase or not b["plus"]:
                continue
            b["v"] += 1
            b["sum"] += fb.reward
            b["mean"] = b["sum"] / b["v"]
            if b["v"] >= self.v_target:
                b["plus"] = False
        if not any(b["plus"] for b in self.balls):
            best = max(b["mean"] for b in self.balls)
            children = []
            for b in self.balls:
                if best - b["mean"] < 4 * self.r:
                    for signs in itertools.product((-1, 1), repeat=self.d):
                        children.append([c + s * self.r / 2 for c, s in zip(b["c"], signs)])
            self._new_phase(children)

    def act(self, t, context=None):
        while self.queue and not self.queue[0]["plus"]:
            self.queue.pop(0)
        if not self.queue:
            self.queue = [b for b in self.balls if b["plus"]]
        b = self.queue.pop(0)
        self.ball_of_round[t] = b
        x = [self.rng.uniform(max(0.0, c - self.r), min(1.0, c + self.r)) for c in b["c"]]
        return x[0] if self.d == 1 else np.array(x)


# --- timing ----------------------------------------------------------------------------------------


def timed(policy: Policy, horizon: int) -> np.ndarray:
    """Wrap ``observe``/``act`` so the time spent in round ``t`` accumulates in the returned array."""
    spent = np.zeros(horizon + 1)
    obs, act = policy.observe, policy.act

    def observe(t, arrived: Sequence):
        t0 = time.perf_counter()
        obs(t, arrived)
        spent[t] += time.perf_counter() - t0

    def act_(t, context):
        t0 = time.perf_counter()
        out = act(t, context)
        spent[t] += time.perf_counter() - t0
        return out

    policy.observe, policy.act = observe, act_
    return spent


def run_reference(ref: Policy, env, delays: np.ndarray, horizon: int, budget_s: float) -> tuple[int, float]:
    """Same loop as ``runner.simulate``, stopped once the reference's policy time exceeds ``budget_s``."""
    queue, spent = DelayQueue(), 0.0
    for t in range(1, horizon + 1):
        arrived = queue.pop_until(t)
        t0 = time.perf_counter()
        if arrived:
            ref.observe(t, arrived)
        action = ref.act(t, env.context(t))
        spent += time.perf_counter() - t0
        feedback, _ = env.step(t, action)
        queue.push(feedback, t, t + max(int(delays[t - 1]), 1))
        if spent > budget_s:
            return t, spent
    return horizon, spent


def scenario(name, function, algorithm, params, ref_cls, ref_params, horizon, seed, ref_budget, noise=1.0):
    cell = {
        "seed": seed,
        "horizon": horizon,
        "budget": None,
        "delay_label": "geometric_mean20",
        "environment": {"name": "lipschitz", "params": {"function": function, "noise_sigma": noise}},
        "policy": {"name": algorithm, "params": params},
        "delay": {"kind": "geometric", "mean": 20},
    }
    env, pol, delay, drng = build(cell)
    spent = timed(pol, horizon)
    t0 = time.perf_counter()
    regret = simulate(env, pol, delay, horizon, drng)["regret"]
    loop_s = time.perf_counter() - t0
    ours_s = float(spent.sum())
    size = pol.n_arms if algorithm == "delayed_zooming" else pol.n_balls - pol.phase_start
    env3, pol3, delay3, drng3 = build(cell)  # as a job runs it: compiled, the same choices
    t0 = time.process_time()
    if not np.array_equal(simulate(env3, pol3, delay3, horizon, drng3)["regret"], regret):
        raise RuntimeError(f"{name} {algorithm}: the compiled run differs from the Python loop")
    compiled_s = time.process_time() - t0

    env2, _, delay2, drng2 = build(cell)
    delays = delay2.sample(drng2, horizon)
    ref = ref_cls(Problem(horizon, info=env2.public_info()), build(cell)[1].rng, **ref_params)
    n_ref, ref_s = run_reference(ref, env2, delays, horizon, ref_budget)
    ours_at = float(spent[: n_ref + 1].sum())
    ref_size = len(ref.centers) if algorithm == "delayed_zooming" else len(ref.balls)
    row = {
        "scenario": name,
        "function": function,
        "algorithm": algorithm,
        "horizon": horizon,
        "rounds_per_s_policy": horizon / ours_s,
        "rounds_per_s_loop": horizon / loop_s,
        "rounds_per_s_compiled": horizon / compiled_s,
        "active_set": int(size),
        "regret": float(regret.sum()),
        "ref_rounds": n_ref,
        "ref_rounds_per_s": n_ref / ref_s,
        "ours_rounds_per_s_at_ref_rounds": n_ref / ours_at,
        "speedup_at_equal_rounds": ref_s / ours_at,
        "ref_active_set_at_ref_rounds": ref_size,
    }
    print(
        f"{name:<26} {algorithm:<16} {horizon / ours_s:>10.0f} {horizon / loop_s:>10.0f} "
        f"{horizon / compiled_s:>11.0f} {size:>6d} "
        f"{n_ref:>8d} {n_ref / ref_s:>10.0f} {n_ref / ours_at:>10.0f} {ref_s / ours_at:>8.1f}x",
        flush=True,
    )
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=60000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ref-budget", type=float, default=20.0, help="seconds of reference policy time per scenario")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args(argv)
    print(f"T = {args.horizon}, seed {args.seed}, geometric delays (mean 20), one thread")
    for algorithm in ("delayed_zooming", "dlpp"):  # load the compiled runs (not timed)
        for function in ("triangle", "two_dim"):
            warm = {
                "seed": 0,
                "horizon": 50,
                "budget": None,
                "delay_label": "none",
                "delay": {"kind": "none"},
                "environment": {"name": "lipschitz", "params": {"function": function}},
                "policy": {"name": algorithm, "params": {}},
            }
            env, pol, delay, drng = build(warm)
            simulate(env, pol, delay, 50, drng)
    print(
        f"{'scenario':<26} {'algorithm':<16} {'rd/s pol':>10} {'rd/s loop':>10} {'rd/s comp.':>11} {'|A|':>6} "
        f"{'ref rds':>8} {'ref rd/s':>10} {'ours rd/s':>10} {'speedup':>9}"
    )
    zoom, dlpp = "delayed_zooming", "dlpp"
    stress = {"sigma": 0.004, "lazy_rule": "radius"}
    rows = []
    paper = {"sigma": 0.01}  # config/lipschitz.yaml: noise sd = policy sigma = 0.01
    for function in ("triangle", "two_dim"):
        for algorithm, ref_cls in ((zoom, RefDelayedZooming), (dlpp, RefDLPP)):
            rows.append(
                scenario(
                    f"paper {function}",
                    function,
                    algorithm,
                    paper,
                    ref_cls,
                    paper,
                    args.horizon,
                    args.seed,
                    args.ref_budget,
                    noise=0.01,
                )
            )
            rows.append(
                scenario(
                    f"sigma=1 {function}",
                    function,
                    algorithm,
                    {},
                    ref_cls,
                    {},
                    args.horizon,
                    args.seed,
                    args.ref_budget,
                )
            )
    rows.append(
        scenario(
            "stress triangle sigma=.001",
            "triangle",
            zoom,
            {"sigma": 0.001, "lazy_rule": "radius"},
            RefDelayedZooming,
            {"sigma": 0.001, "lazy_rule": "radius"},
            args.horizon,
            args.seed,
            args.ref_budget,
        )
    )
    rows.append(
        scenario(
            "stress two_dim sigma=.004",
            "two_dim",
            zoom,
            stress,
            RefDelayedZooming,
            stress,
            args.horizon,
            args.seed,
            args.ref_budget,
        )
    )
    print(
        "rd/s pol: rounds/s inside the policy over all T rounds (the Python loop); rd/s loop: the whole Python\n"
        "loop; rd/s comp.: the whole compiled run, as a job runs it (CPU time; the same choices); |A|: final\n"
        "active arms (zooming) / balls of the last phase (DLPP); ref rds: rounds the reference ran in the budget;\n"
        "speedup: reference policy time / ours over those first rounds."
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
