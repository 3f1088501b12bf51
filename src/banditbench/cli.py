"""Command line: ``banditbench run-one`` (people), ``run-block`` (Snakemake), ``validate``, ``list``, ``checksum``,
``provenance``, ``precompile``, ``check`` and ``new-algorithm``.

Examples
--------
Check a config (schema, registered names, parameters, delays, budgets) and count its jobs::

    banditbench validate config/knapsack.yaml

Run one cell of a config interactively (progress bar on a terminal)::

    banditbench run-one --config config.yaml --experiment linear_delayed_dueling \\
        --algorithm ldb_df --delay geometric_mean50_M20 --seed 0

Run the conformance checks every algorithm passes (:mod:`banditbench.conformance`: same seed, same
bytes; actions in the action space; late and lost feedback; metrics in their declared ranges; bad parameters
refused; a seed's result independent of its block; an engine's decisions the reference loop's) on one registered
policy, or on all of them; exit 1 when one fails::

    banditbench check nvldb_ucb_asym
    banditbench check --all

Judge the config's claims on its results (``--until-decided --max-seeds 30 --step 5``: run Snakemake with
5 more seeds for the cells of the undecided claims, look again, until each is decided or has 30 seeds)::

    banditbench claims config.yaml

Start an algorithm of your own, outside this checkout: a working skeleton of its family, its test, and
a config that runs it against a built-in baseline (the plugin path, docs/extending.md)::

    banditbench new-algorithm my_eps --family reward --dir lab
    banditbench check my_eps --plugins lab/my_eps.py

Run a block of seeds of one resolved cell in one process, one result file per seed
(what a Snakemake simulate job does; each file has the same bytes, ``timing`` aside,
as a one-seed run; the neural families run the block's seeds in lockstep, seed-batched,
and a seed's file does not depend on the block)::

    banditbench run-block --cell '{...}' --seeds 0 1 2 --outputs r/0.npz r/1.npz r/2.npz

Several cells that one seed-batched engine can hold together (``lockstep_variants``: seed 001's NVLDB / NLDB
variants) play their seeds as one block; the outputs are one per cell and seed, cell by cell::

    banditbench run-block --cell '{...A...}' '{...B...}' --seeds 0 1 --outputs a/0.npz a/1.npz b/0.npz b/1.npz

A run whose policy diverges (its scores, estimates or confidence widths become NaN or infinite) stops at
that round and is recorded as diverged, on ``run-one`` and ``run-block`` alike: its result file says so
(``meta["diverged"]``), one line on stderr names it (``banditbench: diverged: <experiment> / <algorithm>
(policy <name>) / ... / seed <s>: diverged at round <t> of <T> (...)``), and the command exits 0, so a grid
goes on; the tables count it instead of averaging it, and the tuning never chooses it.

List what can be put in a config (``--plugins``: your modules' too)::

    banditbench list policies
    banditbench list policies --plugins lab/my_eps.py

Print the config line that pins the checksum of a dataset whose publisher gives none
(the full Open Bandit Dataset archive)::

    banditbench checksum data/raw/obd/open_bandit_dataset.zip

Say what produced the result files under a folder (commits, hosts, CPUs, BLAS kernels,
versions, with counts) and warn when they are mixed::

    banditbench provenance results/runs

Compile the Lipschitz family's numba functions into numba's on-disk cache, once per machine
(``make install`` does; otherwise the first jobs that need them each compile them)::

    banditbench precompile
"""

from __future__ import annotations

import argparse
import sys

from .errors import ConfigError, CorruptFileError, Diverged


def _count(low: int, what: str):
    """An argparse type: an integer >= ``low`` (``what`` names it in the message)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{what} must be >= {low}, got {value}")
        return value

    return parse


def _output_file(path: str, option: str, folder_must_exist: bool = False) -> str:
    """A file to write, ``path``, checked before any work: the nearest folder on its way that exists must be a
    folder (``folder_must_exist``: its own folder must exist)."""
    from pathlib import Path

    if Path(path).is_dir():
        raise ConfigError(f"{option}: {path} is a folder, not a file")
    parent = Path(path).parent
    if folder_must_exist and not parent.is_dir():
        what = "is a file, not a folder" if parent.exists() else "no such folder"
        raise ConfigError(f"{option}: {parent}: {what} (for {path})")
    above = next((p for p in [parent, *parent.parents] if p.exists()), None)
    if above is not None and not above.is_dir():
        raise ConfigError(f"{option}: {above} is a file, not a folder (for {path})")
    return path


def _run_one(args) -> int:
    from .simulation import job

    if args.cell:
        from .storage.logs import provenance

        print(provenance(), file=sys.stderr)  # a pipeline job: its log names the code that ran
        cell = job.cell_argument(args.cell)
    else:
        missing = [k for k in ("experiment", "algorithm", "delay") if getattr(args, k) is None]
        if missing:
            raise ConfigError(f"run-one with --config needs --{' --'.join(missing)}")
        from .configuration.grid import config_cell

        cell = config_cell(
            args.config, args.experiment, args.algorithm, args.delay, args.budget, args.seed, args.horizon
        )
    if args.output:
        _output_file(args.output, "--output")
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    series, meta, timing = job.run_one(cell, args.output, progress)
    if not args.cell or not args.output:
        print(
            f"{cell['experiment']} / {cell['algorithm']} / delay {cell['delay_label']} / "
            f"budget {cell['budget']} / seed {cell['seed']}: T = {cell['horizon']}, "
            f"{timing['wall_time_s']:.2f} s"
        )
        diverged = meta.get("diverged")
        played = int(cell["horizon"]) if diverged is None else diverged["round"] - 1
        if diverged is not None:  # the line naming the run went to stderr (runner.diverged_line)
            print(f"  diverged at round {diverged['round']} ({diverged['reason']}); rounds 1 .. {played}:")
        for name, arr in series.items():
            print(f"  cumulative {name}: {arr[:played].sum():.4f}")
        for name, value in meta["summary"].items():
            print(f"  {name}: {value}")
    return 0


def command_line_config(entries: list[str]) -> dict:
    """``KEY=VALUE`` entries parsed as ``snakemake --config`` parses them (``banditbench validate`` merges them
    as Snakemake does, so it sees exactly the slice and overrides Snakemake would run)."""
    from snakemake.cli import parse_config

    try:
        return parse_config(entries)
    except (ValueError, SystemExit) as err:
        raise ConfigError(f"--config: {err} (entries are KEY=VALUE, e.g. only_algorithms=ldb_df)") from None


def _validate(args) -> int:
    from .configuration.grid import load_config_file, load_grid, unpinned_note
    from .configuration.runs import check_owner, owner, run_name, with_run_as_given
    from snakemake.utils import update_config

    config = load_config_file(args.config)
    command_line = command_line_config(args.set or [])
    update_config(config, command_line)
    config = with_run_as_given(config, command_line)
    grid = load_grid(config)
    run = run_name(config, [args.config], command_line)
    runs = jobs = 0
    for name, exp in grid.experiments.items():
        n = sum(1 for _ in grid.jobs(name))
        groups = len(grid.variant_groups(name)) if grid.lockstep_variants else len(exp.algorithms)
        j = groups * len(exp.delays) * len(exp.budgets) * len(exp.seed_blocks)
        runs, jobs = runs + n, jobs + j
        print(f"{name}: {n} runs in {j} simulate jobs")
    for name, table in grid.summary_tables.items():
        print(f"summary table {name}: {table.metric}, {len(table.rows)} rows x {len(table.algorithms)} algorithms")
    check_owner(run, owner([args.config], config))  # against results/ in the current directory, as Snakemake checks
    print(f"{args.config}: valid, {len(grid.experiments)} experiments, {runs} runs in {jobs} simulate jobs")
    print(f"run: {run} (its tables, plots and report in results/{run}/)")
    for dataset, experiments in grid.unpinned().items():
        print(f"note: {unpinned_note(dataset, experiments)}")
    return 0


def _run_block(args) -> int:
    from .simulation import job

    job.block_job([job.cell_argument(text) for text in args.cell], args.seeds, args.outputs, args.inputs)
    return 0


def _migrate_results(args) -> int:
    from pathlib import Path

    from .configuration.migrate import migrate

    if args.results is None:  # the project's own: none there yet is nothing to move
        args.results = "results/runs"
        if not Path(args.results).exists():
            print("moved 0 result file(s): results/runs does not exist (no results in this folder yet)")
            return 0
    if not Path(args.results).is_dir():
        raise ConfigError(f"{args.results}: no such folder (the per-seed results are in results/runs)")
    done = migrate(args.results, dry_run=args.dry_run)
    for line in done.moved + done.left:
        print(line)
    verb = "would move" if args.dry_run else "moved"
    print(f"{verb} {len(done.moved)} result file(s) into their cell folders; {len(done.left)} left where they are")
    return 1 if done.left else 0


def _list(args) -> int:
    from . import params
    from . import registry
    from .api import feedback_kinds
    from .simulation.delays import DELAY_KINDS, DelayModel

    registry.use_plugins(args.plugins, "--plugins")

    if args.what in ("delays", "all"):
        print("delays (config: delays: {label: {kind: ..., window: M or null, ...}}):")
        common = DelayModel.parameters()
        for kind, cls in DELAY_KINDS.items():
            own = {k: p for k, p in cls.parameters().items() if k not in common}
            extra = ", ".join(f"{k} ({p})" for k, p in own.items()) or "no parameters"
            print(f"  {kind}: {extra}")
        for name, param in common.items():
            print(f"  any kind: {name} ({param})")
    for what, table in (("environments", registry.environments()), ("policies", registry.policies())):
        if args.what not in (what, "all"):
            continue
        print(f"{what}:")
        for name, entry in sorted(table.items()):
            cls = entry.load()
            kinds = " | ".join(feedback_kinds(cls)) if what == "environments" else cls.feedback_kind
            origin = "" if entry.origin == "built-in" else f"  ({entry.origin})"
            print(f"  {name}  [{kinds} feedback]{origin}  {registry.summary_line(cls)}")
            hints = params.hints(cls)
            for pname, default in registry.parameters(cls).items():
                if pname not in ("horizon",):
                    print(
                        f"      {pname} = {default!r}  ({params.describe(hints[pname])})  "
                        f"{params.description(cls, pname) or ''}".rstrip()
                    )
    return 0


def _checksum(args) -> int:
    from pathlib import Path

    from .data.catalog import PIN_KEY, get_dataset
    from .data.verify import file_hash

    dataset = get_dataset(args.dataset, "--dataset")
    if not dataset.pinned:
        raise ConfigError(f"--dataset: {args.dataset!r} has a published checksum; nothing to pin")
    if not Path(args.file).is_file():
        raise ConfigError(f"{args.file}: no such file")
    print(f'{PIN_KEY}: {{{dataset.name}: "sha256:{file_hash(args.file, "sha256")}"}}')
    return 0


def _provenance(args) -> int:
    from pathlib import Path

    from .storage.provenance import summary_lines
    from .storage.resultio import summarize_files

    folder = Path(args.results)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: {'a file, not a folder' if folder.exists() else 'no such folder'}")
    manifest = folder / "manifest.csv"
    if manifest.is_file():  # a run's folder, results/<run>: exactly its result files (paths from the project folder)
        import pandas as pd

        try:
            listed = pd.read_csv(manifest, usecols=["path"])["path"]
        except (ValueError, pd.errors.ParserError) as err:
            raise ConfigError(f"{manifest}: not a run's manifest ({err}); rebuild it with snakemake") from None
        root = folder.parent.parent
        paths = [root / p for p in listed]
    else:
        root = folder
        paths = sorted(p for p in folder.rglob("*.npz") if p.stem.isdigit())  # result files are <seed>.npz
    missing = [p for p in paths if not p.exists()]
    summary, damaged = summarize_files([p for p in paths if p.exists()], root)
    for line in summary_lines(summary, str(folder)):
        print(line)
    for path in missing:
        print(f"missing: {path.relative_to(root) if manifest.is_file() else path}")
    if missing:
        print(
            f"warning: {len(missing)} of the run's per-seed result file(s) missing, not counted above; "
            "the next snakemake run of its config simulates them again"
        )
    for message in damaged:
        print(f"damaged: {message}")
    if damaged:
        print(f"warning: {len(damaged)} damaged result file(s), not counted above")
    return 3 if damaged or missing else 0


def _precompile(args) -> int:
    import time

    from .policies.lipschitz.compiled import precompile

    start = time.perf_counter()
    used = precompile()
    print(
        f"compiled or loaded from numba's cache: {', '.join(used)} and their callees "
        f"({time.perf_counter() - start:.1f} s)"
    )
    return 0


def _check(args) -> int:
    from . import registry
    from .conformance import check_policy

    if bool(args.policy) == args.all:
        raise ConfigError("check: name one registered policy, or give --all")
    registry.use_plugins(args.plugins, "--plugins")
    failed = 0
    for name in sorted(registry.policies()) if args.all else [args.policy]:
        outcomes = check_policy(name, args.horizon)
        failed += not all(o.passed for o in outcomes)
        print(name)
        for outcome in outcomes:
            print(f"  {outcome.line()}")
    return 1 if failed else 0


def _claims(args) -> int:
    from pathlib import Path

    from .analysis.claims import brief, counts_line, differences_table, evaluate, markdown, read_tables, until_decided
    from .configuration.grid import load_config_file, load_grid

    for option in ("csv", "differences"):
        if getattr(args, option):
            _output_file(getattr(args, option), f"--{option}", folder_must_exist=True)
    if args.until_decided:
        if args.max_seeds is None:
            raise ConfigError("claims --until-decided needs --max-seeds")
        try:
            results = until_decided(
                args.config,
                args.max_seeds,
                args.step,
                args.cores,
                args.results,
                only_experiments=args.only_experiments,
                start_seeds=args.start_seeds,
                only_algorithms=args.only_algorithms,
            )
        except RuntimeError as err:  # a look's Snakemake run failed: its output's tail, not a traceback
            print(f"banditbench: {err}", file=sys.stderr)
            return 1
    else:
        from .configuration.runs import run_name

        config = load_config_file(args.config)
        run = run_name(config, [args.config], {})
        folder = Path(args.results) / run  # the config's run: its tables
        for key in ("only_experiments", "only_algorithms"):
            if getattr(args, key):
                config[key] = getattr(args, key)
        grid = load_grid(config)
        if not grid.claims:
            raise ConfigError(f"{args.config}: the config states no claims (config key claims)")
        if not Path(args.results).is_dir():
            what = "a file, not a folder" if Path(args.results).exists() else "no such folder"
            raise ConfigError(f"--results: {args.results}: {what}")
        if not folder.is_dir():
            raise ConfigError(
                f"{folder}: no such folder: run {run!r} of {args.config} has no results under {args.results} "
                f"(run `snakemake --configfile {args.config}` first, or give --results)"
            )
        tables = read_tables(grid.claim_experiments(), folder)
        results = evaluate(grid.claims, tables, grid.claims_alpha)
        results.attrs["differences"] = differences_table(grid.claims, tables)
    print((brief if args.brief else markdown)(results), end="")
    if args.csv:
        results.to_csv(Path(args.csv), index=False)
    if args.differences:
        results.attrs["differences"].to_csv(Path(args.differences), index=False)
    print(counts_line(results), file=sys.stderr)
    return 0


def _claims_calibrate(args) -> int:
    from .analysis.calibrate import calibrate_run

    print(calibrate_run(args.run, args.runs, args.resamples, args.seed)[1], end="")
    return 0


def _claims_calibrate_parser() -> argparse.ArgumentParser:
    """``banditbench claims calibrate RUN`` (a parser of its own: ``claims`` takes a config as its first word)."""
    cal = argparse.ArgumentParser(
        prog="banditbench claims calibrate",
        description="false-separation rate of each claim of a committed claims run, per method: its per-seed "
        "differences recentred to a zero mean and resampled under the run's look schedule "
        "(banditbench.analysis.calibrate)",
    )
    cal.add_argument("run", help="the run's name: RUNS/RUN.{json,csv,differences.csv} (benchmarks/claims_run.py)")
    cal.add_argument("--runs", default="docs/runs", help="the folder of the committed runs (default docs/runs)")
    cal.add_argument("--resamples", type=_count(10, "--resamples"), default=2000, help="per claim (default 2000)")
    cal.add_argument("--seed", type=_count(0, "--seed"), default=0, help="of the resampling (default 0)")
    cal.set_defaults(func=_claims_calibrate, command="claims calibrate")
    return cal


def _new_algorithm(args) -> int:
    import shlex
    from pathlib import Path

    from .scaffold import write

    paths = write(args.name, args.family, Path(args.dir).expanduser())
    for path in paths:
        print(f"wrote {path}")
    test, config = (shlex.quote(str(p)) for p in paths[1:])
    print(f"next: pytest {test}   (then: snakemake --cores 2 --configfile {config})")
    return 0


#: ``banditbench claims --help``: what a verdict says and how it is reached (docs/claims.md)
CLAIMS_HELP = """judge the config's claims on the results (docs/claims.md)

Each claim compares A with B on one experiment; its per-seed differences A - B (the seeds both have, in seed
order) are judged with an anytime-valid confidence sequence for their mean, at the error rate claims_alpha (the
config key, default 0.05, per claim), read on the running intersection of its intervals over all the seeds:
  supported       the interval lies on the claimed side of 0
  contradicted    it lies on the other side
  not separated   it contains 0 ('detectable' is its half-width)
  not run         no results, or fewer than two paired seeds
  untestable      the grids cannot test it (the reason is given)
The interval (the row's method): by default the betting (hedged-capital) confidence sequence on the range of
A - B that the environment's declared metric range gives (horizon x per-round range for a cumulative metric),
valid for any distribution there; a claim may name method: empirical-bernstein, or method: gaussian-t with a
reason (it assumes Gaussian differences; the row names it). With --until-decided, seeds are added to the
undecided claims' cells look by look until each is decided or has --max-seeds; every verdict is read at the last
look, which the intersection keeps valid. The family_wise column is per table: Holm's step-down over each
paper's claims in this table, on the anytime p-values (the docs' paper pages use one family per paper across all
its committed runs). Counts are of distinct comparisons; a claim's note and restating sentences (also) are in
the CSV.

banditbench claims calibrate RUN [--resamples N] [--runs DIR]: for a committed run (docs/runs/RUN.json, .csv,
.differences.csv), each claim's false-separation rate per method, its differences recentred to a zero mean and
resampled under the run's look schedule."""


def _add_run_one(sub) -> None:
    """``run-one``: one simulation cell, from a resolved cell or picked from a config."""
    run = sub.add_parser("run-one", help="run one simulation cell")
    src = run.add_mutually_exclusive_group(required=True)
    src.add_argument("--cell", help="resolved cell as JSON (what Snakemake passes)")
    src.add_argument("--config", help="config file; pick the cell with the options below")
    run.add_argument("--experiment")
    run.add_argument("--algorithm", help="algorithm label in the experiment")
    run.add_argument("--delay", help="delay label in the experiment")
    run.add_argument("--budget", default="none", help="budget label (default: none)")
    run.add_argument("--seed", type=_count(0, "the seed"), default=0)
    run.add_argument("--horizon", type=_count(1, "the horizon"), help="override the horizon")
    run.add_argument("--output", help="write the result file here (.npz)")
    run.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: when attached to a terminal)",
    )
    run.set_defaults(func=_run_one)


def _add_validate(sub) -> None:
    """``validate``: check a config file and count its jobs."""
    val = sub.add_parser("validate", help="validate a config file and count its jobs")
    val.add_argument("config", help="config file (YAML)")
    val.add_argument(
        "--config",
        dest="set",
        nargs="+",
        metavar="KEY=VALUE",
        help="set config keys as snakemake --config does (slices and overrides: only_algorithms=..., "
        "override=ldb_df.beta=0.5,2)",
    )
    val.set_defaults(func=_validate)


def _add_run_block(sub) -> None:
    """``run-block``: several seeds of one resolved cell (or of several, in lockstep), what Snakemake runs."""
    block = sub.add_parser(
        "run-block", help="run several seeds of one resolved cell (or of several, in lockstep), one result file each"
    )
    block.add_argument(
        "--cell",
        required=True,
        nargs="+",
        action="extend",
        help="resolved cell as JSON (without, or with any, seed); several: cells one seed-batched block can "
        "hold together, played in lockstep (lockstep_variants)",
    )
    block.add_argument("--seeds", type=_count(0, "a seed"), nargs="+", required=True)
    block.add_argument(
        "--outputs", nargs="+", required=True, help="one result file (.npz) per cell and seed, cell by cell"
    )
    block.add_argument(
        "--inputs",
        nargs="*",
        default=[],
        help="the job's data files as Snakemake hands them over (read for the paths the cell names)",
    )
    block.set_defaults(func=_run_block)


def _add_list(sub) -> None:
    """``list``: the registered environments, policies and delay models."""
    lst = sub.add_parser("list", help="list registered environments, policies and delay models")
    lst.add_argument("what", nargs="?", default="all", choices=["all", "policies", "environments", "delays"])
    lst.add_argument(
        "--plugins",
        nargs="+",
        default=[],
        metavar="MODULE_OR_FILE",
        help="also your plugin modules (module names or .py files, as the config key plugins)",
    )
    lst.set_defaults(func=_list)


def _add_checksum(sub) -> None:
    """``checksum``: the config line that pins a local file's sha256."""
    pin = sub.add_parser("checksum", help="print the dataset_checksums line that pins a local file's sha256")
    pin.add_argument("file", help="the downloaded file (e.g. data/raw/obd/open_bandit_dataset.zip)")
    pin.add_argument("--dataset", default="obd_full", help="the dataset it belongs to (default: obd_full)")
    pin.set_defaults(func=_checksum)


def _add_provenance(sub) -> None:
    """``provenance``: what produced the result files under a folder."""
    prov = sub.add_parser("provenance", help="count what produced the result files under a folder; warn when mixed")
    prov.add_argument(
        "results",
        help="a run's folder, results/<run> (its manifest's result files), or any folder of result files "
        "(.npz, searched recursively), e.g. results/runs",
    )
    prov.set_defaults(func=_provenance)


def _add_migrate_results(sub) -> None:
    """``migrate-results``: move per-seed results of the older layout into their cell folders."""
    mig = sub.add_parser(
        "migrate-results",
        help="move per-seed results of the older layout (<budget>/<seed>.npz) into their cell folders "
        "(<budget>/<cell>/<seed>.npz), without recomputing them",
    )
    mig.add_argument("results", nargs="?", help="the per-seed results (default: results/runs)")
    mig.add_argument("-n", "--dry-run", action="store_true", help="say what would move, move nothing")
    mig.set_defaults(func=_migrate_results)


def _add_precompile(sub) -> None:
    """``precompile``: fill numba's cache with the Lipschitz family's functions."""
    comp = sub.add_parser(
        "precompile",
        help="compile the Lipschitz family's numba functions into numba's cache "
        "(make install runs it; otherwise the first jobs compile them)",
    )
    comp.set_defaults(func=_precompile)


def _add_check(sub) -> None:
    """``check``: the conformance checks on a registered policy (or all of them)."""
    chk = sub.add_parser(
        "check", help="run the conformance checks on a registered policy (or --all); exit 1 when one fails"
    )
    chk.add_argument("policy", nargs="?", help="the registered name (banditbench list policies)")
    chk.add_argument("--all", action="store_true", help="every registered policy")
    chk.add_argument(
        "--horizon", type=_count(2, "the horizon"), default=40, help="rounds of each check's runs (default 40)"
    )
    chk.add_argument(
        "--plugins",
        nargs="+",
        default=[],
        metavar="MODULE_OR_FILE",
        help="plugin modules that register the policy (module names or .py files)",
    )
    chk.set_defaults(func=_check)


def _add_claims(sub) -> None:
    """``claims``: judge a config's claims on its results, or add seeds until each is decided."""
    cl = sub.add_parser(
        "claims",
        help="judge the config's claims on the results (anytime-valid paired intervals); "
        "--until-decided adds seeds until each is decided",
        description=CLAIMS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cl.add_argument("config", help="config file (YAML) with a claims section")
    cl.add_argument(
        "--results",
        default="results",
        help="results folder: the config's run's tables are read from results/<run>/tables/ (with "
        "--until-decided, its looks' tables go to results/<run>.claims/)",
    )
    cl.add_argument("--csv", help="also write every field to this CSV file")
    cl.add_argument(
        "--differences", help="also write each claim's per-seed differences A - B (claim, seed, difference) to this CSV"
    )
    cl.add_argument("--brief", action="store_true", help="one line per claim, without the quoted sentences")
    cl.add_argument(
        "--until-decided",
        action="store_true",
        help="run Snakemake with more seeds for the cells of undecided claims, look again, repeat",
    )
    cl.add_argument("--max-seeds", type=_count(2, "--max-seeds"), help="the most seeds an experiment gets")
    cl.add_argument("--step", type=_count(1, "--step"), default=5, help="seeds added per look (default 5)")
    cl.add_argument(
        "--start-seeds",
        type=_count(2, "--start-seeds"),
        help="begin each experiment at this many seeds (default: its configured ones)",
    )
    cl.add_argument("--cores", type=_count(1, "--cores"), default=2, help="Snakemake's --cores (default 2)")
    cl.add_argument(
        "--only-experiments",
        nargs="+",
        metavar="EXPERIMENT",
        help="only these experiments' claims (the slicing key only_experiments)",
    )
    cl.add_argument(
        "--only-algorithms",
        nargs="+",
        metavar="ALGORITHM",
        help="only the claims comparing these algorithms (the slicing key only_algorithms)",
    )
    cl.set_defaults(func=_claims)


def _add_new_algorithm(sub) -> None:
    """``new-algorithm``: a working skeleton of a policy, its test and an example config."""
    from .scaffold import families

    new = sub.add_parser(
        "new-algorithm",
        help="write a working skeleton of a policy in your own folder, with its test and an example config",
    )
    new.add_argument("name", help="its registered name (lower case, digits, _)")
    new.add_argument("--family", required=True, choices=list(families()), help="the family whose interface it plays")
    new.add_argument("--dir", default=".", help="folder to write into (default: the working directory)")
    new.set_defaults(func=_new_algorithm)


def build_parser() -> argparse.ArgumentParser:
    """The ``banditbench`` argument parser (the docs' CLI reference is generated from it)."""
    parser = argparse.ArgumentParser(prog="banditbench", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (
        _add_run_one,
        _add_validate,
        _add_run_block,
        _add_list,
        _add_checksum,
        _add_provenance,
        _add_migrate_results,
        _add_precompile,
        _add_check,
        _add_claims,
        _add_new_algorithm,
    ):
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    calibrate = argv[:2] == ["claims", "calibrate"]
    args = _claims_calibrate_parser().parse_args(argv[2:]) if calibrate else build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"banditbench: configuration error: {exc}", file=sys.stderr)
        return 2
    except CorruptFileError as exc:
        print(f"banditbench: corrupt file: {exc}", file=sys.stderr)
        return 3
    except Diverged as exc:  # a run records its divergence (job.run_cell); a bare simulation raises it
        at = "" if exc.round is None else f" at round {exc.round}"
        print(f"banditbench: diverged{at}: {exc.reason}", file=sys.stderr)
        return 4
    except OSError as exc:
        import os

        from .storage.logs import CONSOLE_VAR, storage_problem

        message = storage_problem(exc)  # a full or read-only disk: one line, not a traceback
        if message is None:
            if exc.filename is None or args.command == "run-block":
                raise  # a pipeline job's other failures: the traceback, in its log
            # any other file a command cannot read or write: one line naming it
            message = f"{exc.filename2 or exc.filename}: {exc.strerror or exc}"  # a rename: its target
        # to stderr (a simulate job's log) and, unless banditbench's console shows it from there, to stdout,
        # which Snakemake's own console shows with the failed job
        print(f"banditbench: {message}", file=sys.stderr)
        if args.command == "run-block" and not os.environ.get(CONSOLE_VAR):
            print(f"banditbench: {message}", flush=True)
        return 4


if __name__ == "__main__":
    sys.exit(main())
