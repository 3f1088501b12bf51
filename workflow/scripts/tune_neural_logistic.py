"""Seed 002's nu / lam grid search per environment family (logic in banditbench.analysis.tuning).

Not a Snakemake rule's script: a command line run by hand after (or instead of) the tuning grid.

    # full tuning in-process (paper T = 2000, tuning seeds 1000-1002; each network algorithm's 25 pairs
    # x 3 seeds of an experiment in one lockstep block), then set the values in the paper grids:
    .venv/bin/python workflow/scripts/tune_neural_logistic.py --run --jobs 2 \\
        --apply config/neural_logistic.yaml config/neural_logistic_obd_full.yaml
    # or through Snakemake (one job per algorithm label, on a cluster), then pick:
    .venv/bin/snakemake --cores 16 --configfile config/neural_logistic_tuning.yaml
    .venv/bin/python workflow/scripts/tune_neural_logistic.py --tables results/neural_logistic_tuning/tables

It prints, per family and algorithm, the chosen nu and lam (YAML; ``--write FILE`` saves it;
``--apply CONFIG ...`` sets them in the paper-grid configs).  A pair with a diverged run (gradient descent
that blew up: the run's line ``banditbench: diverged: ...`` names it) is never chosen; the YAML's comment and
one line on stderr per algorithm list such pairs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from banditbench.analysis.tuning import apply_choice, as_yaml, choose, diverged_text, read_tables, run_grid
    from banditbench.configuration.grid import load_config_file

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tables", help="folder of Snakemake's tidy tables (reads tune_*.csv)")
    source.add_argument("--run", action="store_true", help="run the grid in-process")
    parser.add_argument("--config", default="config/neural_logistic_tuning.yaml")
    parser.add_argument("--horizon", type=int, default=None, help="override the grid's horizon (--run)")
    parser.add_argument("--seeds", default=None, help="comma-separated tuning seeds (--run; default: the config's)")
    parser.add_argument("--experiments", default=None, help="comma-separated tuning experiments (default: all)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--block",
        type=int,
        default=None,
        help="--run: at most this many runs (nu, lam, seed) in one lockstep block (default: all "
        "of an experiment's runs of one algorithm)",
    )
    parser.add_argument("--write", default=None, help="also write the chosen values to this YAML file")
    parser.add_argument(
        "--apply",
        nargs="*",
        default=[],
        metavar="CONFIG",
        help="set the chosen nu and lam in these paper-grid configs, in place (analysis.tuning."
        "apply_choice), e.g. config/neural_logistic.yaml config/neural_logistic_obd_full.yaml",
    )
    parser.add_argument(
        "--cache",
        default="results/tuning/runs.csv",
        help="CSV of finished runs (--run): appended as they finish, reused on a re-run",
    )
    args = parser.parse_args(argv)

    config = load_config_file(args.config)
    names = args.experiments.split(",") if args.experiments else sorted(config["experiments"])
    if args.run:
        seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else None
        if seeds is None:
            seeds = sorted({s for n in names for s in config["experiments"][n]["seeds"]})
        Path(args.cache).parent.mkdir(parents=True, exist_ok=True)
        rows = run_grid(config, names, seeds, args.horizon, args.jobs, cache=args.cache, block=args.block)
    else:
        rows = read_tables(sorted(Path(args.tables).glob("tune_*.csv")))
        rows = [r for r in rows if r[0] in names]
    chosen = choose(rows)
    text = as_yaml(chosen)
    sys.stdout.write(text)
    for family, algorithms in chosen.items():  # pairs whose runs diverged: recorded, never chosen
        for algorithm, values in algorithms.items():
            if values.get("diverged"):
                print(
                    f"tune_neural_logistic: {family} / {algorithm}: diverged, never chosen: "
                    f"{diverged_text(values['diverged'])}"
                    + ("; every pair diverged, none chosen" if values["nu"] is None else ""),
                    file=sys.stderr,
                )
    if args.write:
        Path(args.write).write_text(text)
    for path in args.apply:
        target = Path(path)
        target.write_text(apply_choice(target.read_text(), chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
