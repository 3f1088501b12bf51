"""A claims run for the docs: ``banditbench claims CONFIG --until-decided`` recorded as ``docs/runs/NAME.{csv,json}``,
with each claim's per-seed paired differences in ``docs/runs/NAME.differences.csv`` (claim, seed, difference; what
``banditbench claims calibrate NAME`` resamples, and what any verdict can be re-judged from without re-simulating).

The docs show a committed run with the marker ``<!-- claims run: NAME -->`` (docs/hooks.py renders the CSV), so
the claims tables on the pages are generated from a named run, never typed::

    .venv/bin/python benchmarks/claims_run.py default config.yaml --max-seeds 24 --step 4 --cores 2

With ``--rejudge`` it judges results an earlier recording of the run simulated (their code unchanged since, so
Snakemake reuses them) at this commit, e.g. after a change to the claims or their statistics; the JSON keeps the
earlier recording's commit, date, machine and CPU as ``simulated``.

Run it in the checkout, on a committed tree (the JSON records the commit and whether the tree was dirty; the runs
recorded in docs/runs/ before it, uncommitted, do not count).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import sys
from pathlib import Path

from banditbench.analysis.claims import until_decided
from banditbench.storage.provenance import cpu_model, git_state

RUNS = Path(__file__).resolve().parents[1] / "docs" / "runs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name", help="the run's name: docs/runs/<name>.{csv,differences.csv,json}")
    parser.add_argument("config")
    parser.add_argument("--max-seeds", type=int, required=True)
    parser.add_argument("--step", type=int, default=4)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--only-experiments", nargs="+")
    parser.add_argument("--only-algorithms", nargs="+")
    parser.add_argument("--start-seeds", type=int)
    parser.add_argument(
        "--rejudge", action="store_true",
        help="the results were simulated by the run's earlier recording (docs/runs/NAME.json) and are judged again "
        "at this commit: that recording's commit, date, machine and CPU are kept as 'simulated'",
    )  # fmt: skip
    args = parser.parse_args(argv)
    earlier = json.loads((RUNS / f"{args.name}.json").read_text()) if args.rejudge else None
    started = datetime.datetime.now(datetime.timezone.utc)
    results = until_decided(
        args.config, args.max_seeds, args.step, args.cores, only_experiments=args.only_experiments,
        start_seeds=args.start_seeds, only_algorithms=args.only_algorithms,
    )  # fmt: skip
    only = f" --only-experiments {' '.join(args.only_experiments)}" if args.only_experiments else ""
    only += f" --only-algorithms {' '.join(args.only_algorithms)}" if args.only_algorithms else ""
    only += f" --start-seeds {args.start_seeds}" if args.start_seeds else ""
    command = (
        f"banditbench claims {args.config} --until-decided --max-seeds {args.max_seeds} --step {args.step} "
        f"--cores {args.cores}{only}"
    )
    state = git_state(Path.cwd(), outputs=(f"{os.path.relpath(RUNS)}/",))  # the runs recorded before this one
    RUNS.mkdir(exist_ok=True)
    results.to_csv(RUNS / f"{args.name}.csv", index=False)
    results.attrs["differences"].to_csv(RUNS / f"{args.name}.differences.csv", index=False)
    meta = {
        "command": command,
        "recorded_by": "benchmarks/claims_run.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
        "commit": state.get("commit") or "unknown",
        "dirty": state.get("dirty"),
        "date": started.strftime("%Y-%m-%d"),
        "machine": f"{cpu_model()}, {os.cpu_count()} cores",
        "looks": results.attrs["looks"],
        "seeds": results.attrs["seeds"],
        "cpu_s": round(results.attrs["cpu_s"], 1),
    }
    if earlier is not None:
        meta["simulated"] = earlier.get("simulated") or {k: earlier[k] for k in ("commit", "date", "machine", "cpu_s")}
    (RUNS / f"{args.name}.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote {RUNS / args.name}.csv, .differences.csv and .json ({meta['looks']} looks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
