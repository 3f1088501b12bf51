"""Share of a round spent in the simulation harness (delay queue, logging, environment step), per family.

    .venv/bin/python benchmarks/harness_overhead.py [--configfile config.yaml] [--experiments a,b]
        [--repeat 3] [--seed 0]

For every experiment x algorithm x delay of the config (the default grid by default; one
seed, every budget) the job runs twice through :func:`banditbench.simulation.runner.simulate`:

1. with its policy, recording the actions (the full round);
2. with a replay policy that returns the recorded actions and ignores feedback, on a
   freshly built environment and delay stream of the same seed, asking for the same
   context form — the identical sequence of contexts, steps, queue pushes and pops and
   log writes, with no learning: the harness.

The harness share is ``time(2) / time(1)``.  A policy that plays the whole run in compiled
code (:meth:`banditbench.api.Policy.run_compiled`: the Lipschitz family) is timed that way in
(1), as a job runs it, and (2) is the same compiled loop, environment step and queue playing the
recorded points (:func:`banditbench.policies.lipschitz.compiled.replay_run`; the points are
recorded on the Python loop, which makes the same decisions, and the replay must give the
run's ``mu(x_t)`` bit for bit); the floor column then reads ``compiled``.  A third run replays the actions against an
environment that answers every round with the same item and keeps nothing, without delay:
the loop's floor, what calling the environment and the policy costs in this Python loop
however cheap the harness gets (it is part of the harness time).  All in CPU time of this process (a loaded shared
machine distorts it far less than wall-clock time), each the minimum over ``--repeat``
runs of the same job, interleaved.  Processed
classification datasets the grid needs are prepared into a temporary directory (digits
is offline); experiments whose files cannot be prepared here are skipped with the reason.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from banditbench.api import Environment, Policy  # noqa: E402
from banditbench.configuration.grid import load_config_file, load_grid  # noqa: E402
from banditbench.storage.resultio import NO_BUDGET  # noqa: E402
from banditbench.data.paths import PROCESSED_DIR, parse_preprocess_key  # noqa: E402
from banditbench.data.preprocess import prepare, save_prepared  # noqa: E402
from banditbench.simulation.delays import make_delay  # noqa: E402
from banditbench.errors import ConfigError  # noqa: E402
from banditbench.feedback import RewardFeedback  # noqa: E402
from banditbench.simulation.runner import build, simulate  # noqa: E402

NO_DELAY = make_delay({"kind": "none"})


class NullEnvironment(Environment):
    """Answers every round with the same feedback item and keeps no truth values: what is left of a
    round with the replay policy is the loop's floor (the calls of context, act, play and observe)."""

    feedback_kind, action_kind, metrics, primary_metric, keeps_truth = "any", "any", ("regret",), "regret", True

    def __init__(self, feedback):
        self.feedback = feedback

    def public_info(self):
        return {}

    def context(self, t):
        return None

    def play(self, t, action):
        return self.feedback

    def step(self, t, action):
        return self.feedback, {"regret": 0.0}

    def truth_log(self, horizon):
        return {"regret": np.zeros(horizon)}


class Replay(Policy):
    """Plays recorded actions, learns nothing: what is left of a round is the harness."""

    feedback_kind = "any"

    def __init__(self, actions: list, context_form: str | None = None):
        self.actions, self.context_form = actions, context_form  # the recorded policy's context form

    def observe(self, t, arrived):
        pass

    def act(self, t, context):
        return self.actions[t - 1]


def compiled_replay(env, points: np.ndarray, delay, horizon: int, delay_rng) -> dict[str, np.ndarray]:
    """What :func:`simulate` does for a compiled run, with the recorded ``points`` played instead of a policy."""
    from banditbench.policies.lipschitz.compiled import arrival_table, replay_run

    arrival = delay.arrival_rounds(delay.sample(delay_rng, horizon), horizon)
    function, noise = env.compiled_step()
    mu, _ = replay_run(points, function, noise, *arrival_table(arrival, horizon))
    env.record_means(mu)
    return env.truth_log(horizon)


def run_compiled_job(cell: dict, repeat: int) -> tuple[float, float, float, int] | None:
    """:func:`run_job` for a job whose policy plays the whole run compiled; ``None`` for any other job."""
    horizon = int(cell["horizon"])
    full, harness, points, ran = [], [], None, []
    for _ in range(repeat):
        env, policy, delay, delay_rng = build(cell)
        run_compiled = policy.run_compiled
        policy.run_compiled = lambda *a: ran.append(run_compiled(*a)) or ran[-1]
        start = time.process_time()
        series = simulate(env, policy, delay, horizon, delay_rng)
        full.append(time.process_time() - start)
        if not ran[-1]:
            return None
        if points is None:  # the Python loop's actions: the same decisions
            env, policy, delay, delay_rng = build(cell)
            played, act = [], policy.act
            policy.act = lambda t, context: played.append(act(t, context)) or played[-1]
            simulate(env, policy, delay, horizon, delay_rng)
            points = np.asarray(played, dtype=float).reshape(horizon, -1)
        env, _, delay, delay_rng = build(cell)
        start = time.process_time()
        replayed = compiled_replay(env, points, delay, horizon, delay_rng)
        harness.append(time.process_time() - start)
        if not all(np.array_equal(replayed[name], series[name]) for name in series):
            raise RuntimeError(f"{cell['experiment']}/{cell['algorithm']}: the compiled replay differs from the run")
    return min(full), min(harness), float("nan"), horizon


def run_job(cell: dict, repeat: int) -> tuple[float, float, float, int]:
    """(seconds with the policy, seconds of the replayed harness, seconds of the loop's floor (NaN for a
    compiled run), rounds) — minima over ``repeat`` runs."""
    compiled = run_compiled_job(cell, repeat)
    if compiled is not None:
        return compiled
    horizon = int(cell["horizon"])
    full, harness, floor, actions, form = [], [], [], None, None
    for _ in range(repeat):
        env, policy, delay, delay_rng = build(cell)
        played: list = []
        act = policy.act

        def recording_act(t, context, act=act, played=played):
            played.append(act(t, context))
            return played[-1]

        policy.act = recording_act
        start = time.process_time()
        simulate(env, policy, delay, horizon, delay_rng)
        full.append(time.process_time() - start)
        if actions is not None and played != actions:
            raise RuntimeError(f"{cell['experiment']}/{cell['algorithm']}: the policy is not reproducible")
        actions, form = played, policy.context_form
        env, _, delay, delay_rng = build(cell)
        start = time.process_time()
        simulate(env, Replay(actions, form), delay, horizon, delay_rng)
        harness.append(time.process_time() - start)
        start = time.process_time()
        simulate(NullEnvironment(RewardFeedback(0, 0.0)), Replay(actions), NO_DELAY, horizon, delay_rng)
        floor.append(time.process_time() - start)
    return min(full), min(harness), min(floor), horizon


def prepare_files(grid, experiment: str) -> str | None:
    """Build the processed datasets ``experiment`` reads (relative to the working directory); the reason if not."""
    for path in grid.data_files(experiment):
        if Path(path).is_file():
            continue
        rel = Path(path).relative_to(PROCESSED_DIR) if path.startswith(PROCESSED_DIR) else None
        if rel is None:
            return f"needs {path} (build it with snakemake first)"
        try:
            save_prepared(path, prepare(rel.parts[0], parse_preprocess_key(rel.parts[0], rel.stem)))
        except ConfigError as err:
            return str(err)
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", default="config.yaml")
    ap.add_argument("--experiments", default=None, help="comma-separated subset (default: all)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    grid = load_grid(load_config_file(Path(args.configfile).resolve()))
    names = args.experiments.split(",") if args.experiments else list(grid.experiments)
    os.chdir(tempfile.mkdtemp(prefix="harness-"))
    print(
        f"{'experiment':28s} {'algorithm':16s} {'delay':22s} {'T':>6s} {'round µs':>9s} {'harness µs':>10s} "
        f"{'share':>6s} {'floor µs':>8s}"
    )
    worst = 0.0
    for name in names:
        exp = grid.experiments[name]
        skipped = prepare_files(grid, name)
        if skipped:
            print(f"{name:28s} skipped: {skipped}")
            continue
        for alg in exp.algorithms:
            for delay in exp.delays:
                for budget in exp.budget_labels:
                    cell = grid.cell(name, alg, delay, budget, exp.seeds[args.seed])
                    full, harness, floor, T = run_job(cell, args.repeat)
                    worst = max(worst, harness / full)
                    label = delay if budget == NO_BUDGET else f"{delay} B={budget}"
                    print(
                        f"{name:28s} {alg:16s} {label:22s} {T:6d} {1e6 * full / T:9.2f} "
                        f"{1e6 * harness / T:10.2f} {harness / full:6.1%} "
                        f"{'compiled' if floor != floor else f'{1e6 * floor / T:8.2f}':>8s}",
                        flush=True,
                    )
    print(f"largest harness share: {worst:.1%}")


if __name__ == "__main__":
    main()
