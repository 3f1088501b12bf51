"""banditbench against the peer libraries a user would otherwise reach for, side by side (not a test).

    pip install -e ".[bench]"          # PyXAB 0.3.0 and mabwiser 2.7.4 (optional extra)
    .venv/bin/python benchmarks/peers.py [--seeds 0,1,2] [--horizon 60000] [--linucb-horizon 2000]
        [--only zooming|linucb]

Every contender runs through :func:`banditbench.simulation.runner.simulate` on the same
environment object type, seed and delay (none: the peers do not model delays), so
instances, noise draws and the regret bookkeeping are identical; a peer
algorithm is wrapped in a thin :class:`~banditbench.api.Policy` adapter (one call into
the library per ``act`` and per arriving reward) and runs on the Python loop.  Our
Lipschitz policies run as a job runs them, the whole run compiled
(:mod:`banditbench.policies.lipschitz.compiled`), and again on the Python loop
(``, Python loop``; the same choices and regret).  Rounds per second are measured in CPU
time of this process (``time.process_time``), which a loaded shared machine distorts
far less than wall-clock time; each figure is the median over ``--seeds``, and the
contenders of one seed run back to back.  Ratios are banditbench / peer (> 1: ours faster).

* Zooming — the paper settings of seed 003 as configured in ``config/lipschitz.yaml``
  (experiments ``lipschitz_triangle``, ``lipschitz_sine``, ``lipschitz_two_dim``: their
  noise, ``sigma``, ``delta`` and horizon; delay ``none``): banditbench's Delayed Zooming
  and DLPP against PyXAB's ``Zooming`` (``nu = 1``, ``rho = 0.9``, binary partition).
  PyXAB's algorithm differs from ours: its arms are the centres of a dyadic partition,
  activated when a node's radius ``sqrt(8 p / (2 + n))`` (``p`` the doubling-trick phase)
  falls below ``nu rho^depth``, whereas Kleinberg et al.'s zooming (ours) activates any
  uncovered point of the space with radius ``sigma sqrt((4 log T + 2 log(2/delta)) / (1 + n))``.
  So both speed and regret are reported, for PyXAB as shipped (``raw``) and with the rewards
  it sees multiplied by ``c = sqrt(8 p_T) / (sigma sqrt(4 log T + 2 log(2/delta)))``
  (``scaled``), which makes its radius in reward units equal to ours at the horizon
  (``p_T`` its phase at round T).  PyXAB draws partition splits from numpy's global
  generator, seeded with the job seed before each run.
* LinUCB — digits (scikit-learn's bundled copy, offline) averaged to 4 x 4, K = 10 arms with
  block features, reward 1 for the right class: banditbench's LinUCB (block layout: one
  Sherman–Morrison-updated ridge model per arm) against mabwiser's ``LinUCB`` (one ridge
  model per arm on the context, ``alpha = 1``, ``l2_lambda = 1``; the same model); both ask
  the environment for the ``row`` context form (the context alone, no block matrix).  Ties:
  ours breaks them at random, mabwiser takes the first arm, so the choices differ in the
  first rounds and the reward is compared, not the arm sequence.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from banditbench.api import Policy, Problem  # noqa: E402
from banditbench.configuration.grid import load_config_file, load_grid  # noqa: E402
from banditbench.data.paths import processed_path  # noqa: E402
from banditbench.data.preprocess import prepare, save_prepared  # noqa: E402
from banditbench.simulation.delays import make_delay  # noqa: E402
from banditbench.envs.classification import ClassificationBandit  # noqa: E402
from banditbench.policies.linucb import LinUCB  # noqa: E402
from banditbench.policies.lipschitz import log_term  # noqa: E402
from banditbench.simulation.runner import build, simulate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LIPSCHITZ_EXPERIMENTS = ("lipschitz_triangle", "lipschitz_sine", "lipschitz_two_dim")

try:
    from mabwiser.mab import MAB, LearningPolicy
    from PyXAB.algos.Zooming import Zooming
except ImportError as err:  # the optional extra is missing
    sys.exit(f"benchmarks/peers.py needs the 'bench' extra: pip install -e '.[bench]' ({err})")


# --- adapters: a peer algorithm behind banditbench's Policy interface ----------------------------


class PyXABZooming(Policy):
    """PyXAB's ``Zooming``: ``pull`` in ``act``, ``receive_reward`` (of the last pull) in ``observe``."""

    feedback_kind = "reward"

    def __init__(self, problem: Problem, reward_scale: float = 1.0):
        self.d = int(problem["dimension"])
        self.algo = Zooming(nu=1, rho=0.9, domain=[[0.0, 1.0]] * self.d)
        self.scale = reward_scale
        self.last = 0

    def observe(self, t, arrived):
        for fb in arrived:
            if fb.round != self.last:
                raise RuntimeError("PyXAB's Zooming learns only from the reward of its last pull (use no delay)")
            self.algo.receive_reward(fb.round, self.scale * fb.reward)

    def act(self, t, context):
        self.last = t
        x = self.algo.pull(t)
        return float(x[0]) if self.d == 1 else np.array(x, dtype=float)

    @property
    def n_arms(self) -> int:
        return len(self.algo.active_points)


def pyxab_phase(horizon: int) -> int:
    """PyXAB Zooming's doubling-trick phase after ``horizon`` rewards (phase p starts at 2^p - 2 rewards)."""
    return int(math.floor(math.log2(horizon + 2)))


class MabwiserLinUCB(Policy):
    """mabwiser's ``LinUCB`` (one ridge model per arm on the context): ``predict`` then ``partial_fit``."""

    feedback_kind = "reward"

    context_form = "row"  # as banditbench's LinUCB: x, not the K x dK matrix

    def __init__(self, problem: Problem, seed: int, alpha: float = 1.0, lam: float = 1.0):
        self.d = int(problem["context_dimension"])
        self.mab = MAB(
            arms=list(range(int(problem["n_arms"]))),
            learning_policy=LearningPolicy.LinUCB(alpha=alpha, l2_lambda=lam),
            seed=seed,
        )
        self.mab.fit(decisions=np.zeros(0, dtype=int), rewards=np.zeros(0), contexts=np.zeros((0, self.d)))
        self.pending: dict[int, tuple[int, np.ndarray]] = {}

    def observe(self, t, arrived):
        for fb in arrived:
            arm, x = self.pending.pop(fb.round)
            self.mab.partial_fit([arm], [fb.reward], x[None])

    def act(self, t, x):
        x = np.array(x)  # the row form: the context that block k of arm k carries
        arm = int(self.mab.predict(x[None]))
        self.pending[t] = (arm, x)
        return arm


# --- measurement -------------------------------------------------------------------------------


def timed_run(env, policy, horizon: int, seed: int, compiled: bool = True) -> tuple[float, dict[str, np.ndarray]]:
    """CPU seconds of ``simulate`` and its logs (no delay)."""
    start = time.process_time()
    logs = simulate(env, policy, make_delay({"kind": "none"}), horizon, np.random.default_rng(seed), compiled=compiled)
    return time.process_time() - start, logs


def zooming(config: Path, seeds: list[int], horizon: int | None) -> None:
    grid = load_grid(load_config_file(config))
    for name in LIPSCHITZ_EXPERIMENTS:
        exp = grid.experiments[name]
        T = horizon or exp.horizon
        rows: dict[str, list[tuple[float, float, int]]] = {}
        for seed in seeds:
            for alg in exp.algorithms:
                cell = dict(grid.cell(name, alg, "none", exp.budget_labels[0], seed), horizon=T)
                for compiled, label in ((True, f"banditbench {alg}"), (False, f"banditbench {alg}, Python loop")):
                    env, policy, _, _ = build(cell)
                    seconds, logs = timed_run(env, policy, T, seed, compiled)
                    arms = getattr(policy, "n_arms", None) or policy.n_balls
                    rows.setdefault(label, []).append((T / seconds, logs["regret"].sum(), arms))
            params = cell["policy"]["params"]
            scale = math.sqrt(8 * pyxab_phase(T)) / (
                params.get("sigma", 1.0) * math.sqrt(log_term(T, params.get("delta", 0.01)))
            )
            for label, c in (("PyXAB Zooming raw", 1.0), ("PyXAB Zooming scaled", scale)):
                env, _, _, _ = build(cell)
                np.random.seed(seed)
                peer = PyXABZooming(Problem(T, info=env.public_info()), reward_scale=c)
                seconds, logs = timed_run(env, peer, T, seed)
                rows.setdefault(label, []).append((T / seconds, logs["regret"].sum(), peer.n_arms))
        env_params = exp.spec["environment"]["params"]
        print(
            f"\n{name}: T = {T}, noise sd {env_params.get('noise_sigma')}, policy params {params}, "
            f"no delay; PyXAB reward scale c = {scale:.2f}; median of seeds {seeds}"
        )
        print(
            f"  {'contender':40s} {'rounds/s':>10s} {'regret':>9s} {'arms':>6s} {'vs PyXAB raw':>13s} "
            f"{'vs scaled':>10s}"
        )
        medians = {k: [statistics.median(col) for col in zip(*v)] for k, v in rows.items()}
        raw, scaled = medians["PyXAB Zooming raw"][0], medians["PyXAB Zooming scaled"][0]
        for label, (rate, regret, arms) in medians.items():
            print(f"  {label:40s} {rate:10.0f} {regret:9.1f} {arms:6.0f} {rate / raw:12.2f}x {rate / scaled:9.2f}x")


def linucb(seeds: list[int], horizon: int) -> None:
    with tempfile.TemporaryDirectory() as work:
        here = os.getcwd()
        os.chdir(work)
        try:
            opts = {"image_size": 4}
            save_prepared(processed_path("digits", opts), prepare("digits", opts))
            rows: dict[str, list[tuple[float, float]]] = {}
            same = []
            for seed in seeds:
                actions = {}
                for label in ("banditbench LinUCB", "mabwiser LinUCB"):
                    env = ClassificationBandit(
                        np.random.SeedSequence(seed), horizon=horizon, dataset="digits", preprocessing=opts
                    )
                    problem = Problem(horizon, info=env.public_info())
                    policy = (
                        LinUCB(problem, np.random.default_rng(seed))
                        if label.startswith("banditbench")
                        else MabwiserLinUCB(problem, seed)
                    )
                    played = []
                    act = policy.act
                    policy.act = lambda t, ctx, act=act, played=played: played.append(act(t, ctx)) or played[-1]
                    seconds, logs = timed_run(env, policy, horizon, seed)
                    rows.setdefault(label, []).append((horizon / seconds, logs["reward"].sum()))
                    actions[label] = np.array(played)
                same.append(np.mean(actions["banditbench LinUCB"] == actions["mabwiser LinUCB"]))
        finally:
            os.chdir(here)
    medians = {k: [statistics.median(col) for col in zip(*v)] for k, v in rows.items()}
    peer = medians["mabwiser LinUCB"][0]
    print(
        f"\nLinUCB, digits 4x4 (K = 10, d = 16 per arm), T = {horizon}, alpha = 1, lambda = 1, no delay; "
        f"median of seeds {seeds}; same arm in {statistics.median(same):.0%} of rounds"
    )
    print(f"  {'contender':40s} {'rounds/s':>10s} {'reward':>9s} {'vs mabwiser':>12s}")
    for label, (rate, reward) in medians.items():
        print(f"  {label:40s} {rate:10.0f} {reward:9.0f} {rate / peer:11.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--horizon", type=int, default=None, help="zooming horizon (default: the config's, 60000)")
    ap.add_argument("--linucb-horizon", type=int, default=2000)
    ap.add_argument("--only", choices=("zooming", "linucb"), default=None)
    ap.add_argument(
        "--lipschitz-config",
        type=Path,
        default=ROOT / "config" / "lipschitz.yaml",
        help="grid whose experiments lipschitz_{triangle,sine,two_dim} give the zooming settings",
    )
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print(
        f"CPU time per process (time.process_time), one BLAS thread; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores"
    )
    if args.only in (None, "zooming"):
        zooming(args.lipschitz_config, seeds, args.horizon)
    if args.only in (None, "linucb"):
        linucb(seeds, args.linucb_horizon)


if __name__ == "__main__":
    main()
