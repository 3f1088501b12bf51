"""CPU per seed of the neural families, single-seed path against a seed-batched block (issue #22), one run.

For each cell: ``--single`` seeds run one at a time through :func:`banditbench.simulation.job.run_cell`
(the single-seed reference path, one process per seed in a pipeline), then one block of
``--block`` seeds on the seed-batched engine itself (:func:`banditbench.simulation.runner.run_seed_batched`, what
a simulate job with ``seeds_per_job: --block`` runs where the family's ``SeedBatched.cpu_min_block`` lets the
engine take the block: the measurements here are what set it).  Each measurement runs in a fresh child process with one
thread; the columns are CPU seconds per seed (``time.process_time``, which a busy machine
inflates far less than wall time) and the child's peak resident memory.  Families without a
batched implementation are reported as such.

``--devices cpu cuda`` runs the block once per device (the policies' ``device`` parameter) and adds
a row per device with the wall time per seed, CUDA synchronised (on a GPU the CPU time of the
process says little), and on cuda the block's peak GPU memory (``torch.cuda.max_memory_allocated``):
the CPU-against-GPU comparison of issue #22, for a machine with a GPU.  ``--cpu-block N`` measures the
CPU block on N seeds instead of ``--block`` (0: not at all; the per-seed CPU cost of a large block on
the CPU is minutes at T = 2,000), and ``--json FILE`` writes every measurement as a list of rows
(benchmarks/device_check.py reads them).

    python benchmarks/batched_speed.py [--horizon 2000] [--block 20] [--single 1] [--devices cpu [cuda]]
                                       [--cpu-block N] [--json FILE]
                                       [--cells d5 d20 d5_v d20_v ndb_df_d20 ndb_ucb_d5 ndb_ts_d5 neurallog_h1]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


def _dueling(policy, d, K, params, utility="square", arms=("normalized_cube", "cube"), delay=None):
    return {
        "experiment": "bench",
        "algorithm": policy,
        "delay_label": "bench",
        "budget": None,
        "environment": {
            "name": "synthetic_dueling",
            "params": {
                "dimension": d,
                "n_arms": K,
                "utility": utility,
                "arm_distribution": arms[0],
                "theta_distribution": arms[1],
            },
        },
        "policy": {"name": policy, "params": params},
        "delay": delay or {"kind": "none"},
    }


#: config/variance_dueling.yaml's NDB re-implementations (vdb_*: NVLDB's network and budget, a_t = 1)
NDB_REIMPL = {"depth": 3, "train_steps": 20, "kappa_mu": 1.0}

CELLS = {
    # config/variance_dueling.yaml: vdb_square_d5_k5 and the d = 20 cell of vdb_square_d20_T10000 (gram: reset)
    "d5": _dueling("nvldb_ucb_asym", 5, 5, {"gram": "reset"}),
    "d20": _dueling("nvldb_ucb_asym", 20, 5, {"gram": "reset"}),
    # the same cells on Algorithm 1's accumulated V (gram: incremental, the paper grid's headline since issue 23)
    "d5_v": _dueling("nvldb_ucb_asym", 5, 5, {}),
    "d20_v": _dueling("nvldb_ucb_asym", 20, 5, {}),
    # config/delayed_dueling.yaml: delayed_dueling_quadratic's NDB-DF, geometric delays of mean 20, window 50
    "ndb_df_d20": _dueling(
        "ndb_df",
        20,
        20,
        {},
        utility="quadratic",
        arms=("sphere", "sphere"),
        delay={"kind": "geometric", "mean": 20, "window": 50},
    ),
    # config/variance_dueling.yaml: vdb_square_d5_k5's NDB-UCB-reimpl and NDB-TS-reimpl
    "ndb_ucb_d5": _dueling("ndb_ucb", 5, 5, NDB_REIMPL),
    "ndb_ts_d5": _dueling("ndb_ts", 5, 5, NDB_REIMPL),
    # config/neural_logistic.yaml: synthetic_h1's NeuralLog-UCB-1 (the paper form: gradient descent on minibatches of 50)
    "neurallog_h1": {
        "experiment": "bench",
        "algorithm": "neurallog_ucb1",
        "delay_label": "bench",
        "budget": None,
        "environment": {
            "name": "synthetic_logistic",
            "params": {"latent": "h1", "dimension": 20, "n_arms": 5, "n_contexts": 2500},
        },
        "policy": {
            "name": "neurallog_ucb1",
            "params": {"optimizer": "gd", "minibatch": 50, "effective_dimension": "app_a", "nu": 0.01, "lam": 1},
        },
        "delay": {"kind": "none"},
    },
}


def _child(cell: dict, seeds: list[int], batched: bool) -> dict:
    from banditbench.simulation.job import run_cell
    from banditbench.simulation.runner import run_seed_batched

    cuda = cell["policy"]["params"].get("device") == "cuda"
    start, wall = time.process_time(), time.perf_counter()
    if batched:
        results = run_seed_batched([{**cell, "seed": s} for s in seeds])
    else:
        results = [run_cell({**cell, "seed": s}) for s in seeds]
    if cuda:
        import torch

        torch.cuda.synchronize()
    cpu, wall = time.process_time() - start, time.perf_counter() - wall
    regret = [float(r[0]["regret"].sum()) for r in results]
    gpu = {}
    if cuda:
        gpu = {"peak_gpu_mb": torch.cuda.max_memory_allocated() / 2**20, "gpu": torch.cuda.get_device_name()}
    return {
        **gpu,
        "cpu_per_seed": cpu / len(seeds),
        "wall_per_seed": wall / len(seeds),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "mean_regret": sum(regret) / len(regret),
        "engine": results[0][1]["engine"],
    }


def _measure(cell: dict, seeds: list[int], batched: bool) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps({"cell": cell, "seeds": seeds, "batched": batched})],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--horizon", type=int, default=2000)
    ap.add_argument("--block", type=int, default=20)
    ap.add_argument("--single", type=int, default=1, help="seeds run through the single-seed path")
    ap.add_argument("--cells", nargs="+", default=list(CELLS), choices=list(CELLS))
    ap.add_argument(
        "--devices",
        nargs="+",
        default=["cpu"],
        choices=["cpu", "cuda"],
        help="run the block on each of these devices (policy parameter device)",
    )
    ap.add_argument("--cpu-block", type=int, help="seeds of the CPU block (default --block; 0: no CPU block)")
    ap.add_argument("--json", help="write every measurement to this file, a list of rows")
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        job = json.loads(args.child)
        print(json.dumps(_child(job["cell"], job["seeds"], job["batched"])))
        return
    if "cuda" in args.devices:
        import torch

        if not torch.cuda.is_available():
            raise SystemExit("--devices cuda: torch sees no GPU on this machine")
    cpu_block = args.block if args.cpu_block is None else args.cpu_block
    rows = []

    def record(name: str, cell: dict, path: str, device: str, seeds: int, run: dict) -> None:
        rows.append(
            {"cell": name, "policy": cell["policy"]["name"], "horizon": args.horizon, "path": path}
            | {"device": device, "seeds": seeds, **run}
        )
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)

    print(f"T = {args.horizon}, block of {args.block}, one thread; CPU seconds per seed")
    print("| cell | single-seed path | block of %d | ratio | peak memory of the block |" % args.block)
    print("|---|---|---|---|---|")
    for name in args.cells:
        cell = {**CELLS[name], "horizon": args.horizon}
        single = _measure(cell, list(range(args.single)), False)
        record(name, cell, "single-seed", "cpu", args.single, single)
        if cpu_block:
            block = _measure(cell, list(range(cpu_block)), True)
            record(name, cell, "block", "cpu", cpu_block, block)
            print(
                f"| {name} ({cell['policy']['name']}) | {single['cpu_per_seed']:.2f} s | {block['cpu_per_seed']:.2f} s"
                f"{'' if cpu_block == args.block else f' (block of {cpu_block})'} | "
                f"{single['cpu_per_seed'] / block['cpu_per_seed']:.2f}x | {block['peak_mb']:.0f} MB |",
                flush=True,
            )
        else:
            print(f"| {name} ({cell['policy']['name']}) | {single['cpu_per_seed']:.2f} s | - | - | - |", flush=True)
        if args.devices != ["cpu"]:
            for device in args.devices:
                on = (
                    cell
                    if device == "cpu"
                    else {
                        **cell,
                        "policy": {**cell["policy"], "params": {**cell["policy"]["params"], "device": device}},
                    }
                )
                if device == "cpu" and not cpu_block:
                    continue
                if device == "cpu":
                    run = block
                else:
                    run = _measure(on, list(range(args.block)), True)
                    record(name, cell, "block", device, args.block, run)
                peak = f", peak GPU memory {run['peak_gpu_mb']:.0f} MiB" if "peak_gpu_mb" in run else ""
                print(
                    f"  {name}, block of {args.block} on {device}: {run['wall_per_seed']:.2f} s wall per seed "
                    f"({single['wall_per_seed'] / run['wall_per_seed']:.2f}x the single-seed path's "
                    f"{single['wall_per_seed']:.2f} s on cpu), mean regret {run['mean_regret']:.1f}{peak}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
