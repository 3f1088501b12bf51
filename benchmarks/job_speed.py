"""CPU per seed of whole simulate jobs (``banditbench run-block``), two source trees side by side (issue 48).

Each job is a fresh process, ``python -m banditbench run-block --cell JSON --seeds 0 .. N-1 --outputs ...``, as
Snakemake runs it: imports, building and every round included.  The cell is the paper grid's (``--cells``:
seed 000's ``delayed_dueling_quadratic`` NDB-DF with geometric delays of mean 20, window 50; seed 002's
``synthetic_h1`` NeuralLog-UCB-2), at ``--horizon``.  The trees (``--trees``, each a ``src`` folder put on
``PYTHONPATH``) are run interleaved, ``--repeats`` rounds of one job per tree, with one BLAS thread; a job's CPU
time is its process's (user + system, ``getrusage`` of the children), which load from other work inflates far
less than wall time.  Prints each tree's median CPU seconds per seed and the ratio to the first tree, and
checks that each tree's result files are the same bytes in every repeat (a job is deterministic).

    python benchmarks/job_speed.py --trees /work/wt-base/src src [--cells ndb_df neurallog_ucb2]
                                   [--horizon 500] [--seeds 10] [--repeats 3] [--params '{"precision": "float64"}']
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: (config file, experiment, algorithm, delay label) of each cell
CELLS = {
    "ndb_df": ("config/delayed_dueling.yaml", "delayed_dueling_quadratic", "ndb_df", "geometric_mean20_M50"),
    "neurallog_ucb2": ("config/neural_logistic.yaml", "synthetic_h1", "neurallog_ucb2", "none"),
}


def cell_json(name: str, horizon: int, params: dict) -> str:
    from banditbench.configuration.grid import load_config_file, load_grid

    path, experiment, algorithm, delay = CELLS[name]
    config = load_config_file(path)
    config.update(horizon=horizon)
    cell = json.loads(load_grid(config).cell_json(experiment, algorithm, delay, "none", None))
    cell["policy"]["params"].update(params)
    return json.dumps(cell)


def run_job(src: str, cell: str, seeds: int, out: Path) -> tuple[float, float, str]:
    """CPU and wall seconds of one job process, and a digest of its result files' bytes."""
    env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env["OPENBLAS_NUM_THREADS"] = "1"
    outputs = [str(out / f"{s}.npz") for s in range(seeds)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "banditbench",
            "run-block",
            "--cell",
            cell,
            "--seeds",
            *map(str, range(seeds)),
            "--outputs",
            *outputs,
        ],
        check=True,
        env=env,
        capture_output=True,
    )
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    digest = hashlib.sha256()
    for path in outputs:
        import numpy as np

        with np.load(path, allow_pickle=False) as z:  # the series, not the provenance (times, commit)
            for key in sorted(z.files):
                if key in ("regret", "reward", "actions", "action") or key.startswith("series"):
                    digest.update(z[key].tobytes())
    return cpu, wall, digest.hexdigest()[:12]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", nargs="+", required=True, help="src folders; the first is the baseline")
    ap.add_argument("--cells", nargs="+", default=list(CELLS), choices=list(CELLS))
    ap.add_argument("--horizon", type=int, default=500)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--params", default="{}", help="policy parameters added to every cell (JSON)")
    args = ap.parse_args()
    params = json.loads(args.params)
    print(
        f"T = {args.horizon}, {args.seeds} seeds per job, one thread, CPU seconds per seed (median of {args.repeats})"
    )
    print("| cell | " + " | ".join(args.trees) + " | ratio (first / each) |")
    print("|---|" + "---|" * (len(args.trees) + 1))
    for name in args.cells:
        cell = cell_json(name, args.horizon, params)
        times: dict[str, list[float]] = {tree: [] for tree in args.trees}
        digests: dict[str, set] = {tree: set() for tree in args.trees}
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(args.repeats):
                for i, tree in enumerate(args.trees):
                    out = Path(tmp) / str(i)
                    out.mkdir(exist_ok=True)
                    cpu, _, digest = run_job(tree, cell, args.seeds, out)
                    times[tree].append(cpu / args.seeds)
                    digests[tree].add(digest)
        medians = [statistics.median(times[tree]) for tree in args.trees]
        ratios = ", ".join(f"{medians[0] / m:.2f}x" for m in medians[1:])
        cols = " | ".join(
            f"{m:.3f} s ({'same bytes' if len(digests[t]) == 1 else 'BYTES DIFFER'})"
            for m, t in zip(medians, args.trees)
        )
        print(f"| {name} | {cols} | {ratios} |", flush=True)
        print("  runs:", {t: [round(x, 3) for x in times[t]] for t in args.trees}, flush=True)


if __name__ == "__main__":
    main()
