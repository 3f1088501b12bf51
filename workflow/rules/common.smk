"""Shared definitions: the validated experiment grid, the check of existing data files, path helpers."""

import functools
import hashlib
import os
import re
import sys
from pathlib import Path

from snakemake.logging import logger
from snakemake.settings.types import DeploymentMethod, SharedFSUsage

from banditbench.configuration.grid import load_grid, unpinned_note
from banditbench.configuration.runs import (
    check_owner,
    owner,
    record_owner,
    report_only,
    run_name,
    unmade_report,
    with_run_as_given,
)
from banditbench.storage.cells import CELL_DIR, block_label
from banditbench.data.quarantine import Unmovable, quarantine_corrupt
from banditbench.errors import ConfigError
from banditbench.storage import reuse, runlock
from banditbench.storage.provenance import COMMIT_VAR, RUN_VAR, git_environment
from banditbench.storage.resultio import reading_threads


def stop(message):
    """End the run before any job with ``message`` alone: no Snakemake error frame, no traceback."""
    logger.error(message)
    sys.exit(1)


# A lock that a killed run left (kill -9, out of memory, power cut) is removed when no run holds it, so that a
# plain rerun resumes; this process is recorded as a run here first (banditbench.storage.runlock).
if workflow.is_main_process:
    runlock.register()
    _note = runlock.release_stale()
    if _note:
        logger.warning(_note)


# One validation pass before any job: schema, names, every parameter value, data files, memory (a
# --config run=NAME of digits first back as typed: Snakemake reads run=007 as 7).
config.update(with_run_as_given(config, workflow.config_settings.config))
GRID = checked(load_grid, config)

# The run's namespace, results/<run>/ (banditbench.configuration.runs): named once, by the process that
# plans the jobs, and handed to every job in the environment (a job's provenance records it as `run`).
if workflow.is_main_process or RUN_VAR not in os.environ:
    os.environ[RUN_VAR] = checked(run_name, config, workflow.configfiles, workflow.config_settings.config)
RUN = os.environ[RUN_VAR]
RESULTS = f"results/{RUN}"
config["run"] = RUN  # the report's first page, workflow/report/workflow.rst, embeds this run's run_info.html


envvars:
    "BANDITBENCH_RUN",


# Raw and prepared data files and result files that exist are checked (cached by size and
# mtime); a corrupt one is moved aside as <name>.corrupt, so it is rebuilt before any job reads
# it.  Once, by the process that plans the jobs (not again in each cluster job that re-reads
# this file).
if workflow.is_main_process:
    _moved_results = []
    try:
        _moved = quarantine_corrupt(
            [f for name in GRID.experiments for f in GRID.data_files(name)],
            checksums=GRID.dataset_checksums,
            results=[f for name in GRID.experiments for f in GRID.result_files(name)],
            moved_results=_moved_results,
        )
    except Unmovable as _stuck:  # a corrupt file in a read-only folder: one line each, and the run stops
        for _message in _stuck.moved:
            logger.warning(_message)
        stop(str(_stuck))
    except ConfigError as _blocked:  # a file where a folder of results belongs
        stop(str(_blocked))
    for _message in _moved:
        logger.warning(_message)
    # Snakemake leaves a missing input of an up-to-date job missing (as if a temp file): so that a
    # result moved aside is rebuilt in this run, the tables that read it (one output of each job
    # that reads an experiment's results: aggregate, timing) are removed too, and rebuilt after it.
    for _experiment in dict.fromkeys(path.split("/")[2] for path in _moved_results):
        for _reader in (f"{RESULTS}/tables/{{}}.csv", f"{RESULTS}/timing/{{}}.csv"):
            Path(_reader.format(_experiment)).unlink(missing_ok=True)
    for _dataset, _experiments in GRID.unpinned().items():
        logger.warning(unpinned_note(_dataset, _experiments))

# The code commit every result records (banditbench.storage.provenance): found once, by the process that
# plans the jobs, in the checkout holding this Snakefile, and handed to every job in the environment
# (cluster jobs, which may run where there is no checkout, too: `envvars`).  Not a param or an
# input: a new commit re-runs nothing that exists.
if workflow.is_main_process or COMMIT_VAR not in os.environ:
    os.environ.update(git_environment(workflow.basedir))


envvars:
    "BANDITBENCH_COMMIT",
    "BANDITBENCH_DIRTY",


# Code as a job's input.  With a shared file system a job's source files are its inputs (editing one
# algorithm re-runs only its jobs), flagged local so a default storage provider never looks for
# them.  Without one (--shared-fs-usage none, e.g. Kubernetes) an input flagged local would pin
# the job to the submitting machine, and the sources reach each node in Snakemake's source
# archive instead: there a digest of the same files is a parameter, so the params trigger re-runs
# the same jobs.
SHARED_FS = SharedFSUsage.INPUT_OUTPUT in workflow.storage_settings.shared_fs_usage


def code_inputs(paths):
    """A job's source files as its inputs, relative to the working directory where inside it: an absolute
    path would change when the project is moved or copied, and Snakemake's input trigger re-run every job."""
    return [local(p) for p in _relative(tuple(str(p) for p in paths))] if SHARED_FS else []


@functools.lru_cache(maxsize=None)
def _relative(paths):
    """The paths as :func:`code_inputs` gives them (computed once per set of sources: a paper grid asks for
    the same few sets for thousands of jobs)."""
    inside = os.getcwd() + os.sep
    absolute = [os.path.abspath(p) for p in paths]
    return tuple(os.path.relpath(p) if p.startswith(inside) else p for p in absolute)


def code_digest(paths):
    return "" if SHARED_FS else _files_digest(tuple(str(p) for p in paths))


@functools.lru_cache(maxsize=None)
def _files_digest(paths):
    h = hashlib.sha256()
    for path in paths:
        h.update(Path(path).read_bytes())
    return h.hexdigest()


# Jobs run with the interpreter that runs Snakemake, unless --use-conda gives each its env.  Handed to
# the simulate jobs in the environment, not as a param: a param holding its absolute path would re-run
# every job of a project moved or copied to another folder (Snakemake's params trigger).  Each process
# reading this file (a cluster job's too) sets its own.
os.environ["BANDITBENCH_PYTHON"] = (
    "python" if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method else sys.executable
)


envvars:
    "BANDITBENCH_PYTHON",


wildcard_constraints:
    experiment=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    algorithm=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    delay=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    budget=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    seed=r"\d+",
    table=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    metric=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    plot=r"[A-Za-z0-9][A-Za-z0-9_.-]*",


# A run name belongs to the config (and slice) that made it (results/<run>/run.json): another config naming it
# is refused before any job, in one line; the first run that executes jobs records itself as the owner
# (record_run_owner, the Snakefile's onstart: not a dry run, --lint or --report).  With a default storage
# provider the results live in the storage, not in the local results folder: there is no owner file to read
# or write here (run names are then the user's to keep apart).
RECORDS_OWNER = workflow.is_main_process and workflow.storage_settings.default_storage_provider is None
if RECORDS_OWNER:
    RUN_OWNER = owner(workflow.configfiles, config)
    checked(check_owner, RUN, RUN_OWNER)


def record_run_owner():
    if not RECORDS_OWNER:
        return
    try:
        record_owner(RUN, RUN_OWNER)
    except OSError:  # a read-only or full results folder: the jobs that write there name it
        pass


def variant_cells(experiment, algorithms, delay, budget):
    """The resolved cells of a lockstep job's algorithms (``--cell`` of ``run-block``), derived from its outputs
    (as the per-algorithm rule's ``cell``: not compared by the params trigger)."""
    return lambda wc, output: [GRID.cell_json(experiment, a, delay, budget, None) for a in algorithms]


def experiment_runs(wildcards):
    return GRID.result_files(wildcards.experiment)


def experiment_resources(wildcards, key):
    return GRID.experiments[wildcards.experiment].resources[key]


@functools.lru_cache(maxsize=None)
def _aggregate_params(experiment):
    return GRID.experiments[experiment].aggregate_params()


def aggregate_param(key):
    """The aggregate rule's param ``key`` for the job's experiment (banditbench.configuration.grid.Experiment
    .aggregate_params, which the Python API gathers with too)."""
    return lambda wc: _aggregate_params(wc.experiment)[key]


def extra_plot_title(experiment, metric):
    """An extra plot's title (drawn with plot.title: true): the experiment's and the cumulative metric's display
    names, as the report's caption gives them."""
    exp = GRID.experiments[experiment]
    return f"{exp.display_name()}: {exp.metric_name(f'cumulative_{metric}')}"


def aggregate_outputs(paired):
    """The aggregate rule's outputs (workflow/rules/aggregate.smk), the paired comparisons' when ``paired``."""
    outputs = dict(
        csv=f"{RESULTS}/tables/{{experiment}}.csv",
        md=f"{RESULTS}/tables/{{experiment}}.md",
        tex=f"{RESULTS}/tables/{{experiment}}.tex",
        html=report(
            f"{RESULTS}/tables/{{experiment}}.html",
            caption="../report/table.rst",
            category="Tables",
            labels={"experiment": "{experiment}", "content": "mean ± CI"},
        ),
        curves=f"{RESULTS}/curves/{{experiment}}.csv",
        # every run's metrics per seed and horizon, one table (tables, curves and paired comparisons read it)
        seeds=f"{RESULTS}/tables/{{experiment}}.parquet",
        # each run's recorded CPU and wall time, a table of its own (re-runs keep the per-seed table's bytes)
        timing=f"{RESULTS}/tables/{{experiment}}.timing.parquet",
        plot_pdf=f"{RESULTS}/plots/{{experiment}}.pdf",
        plot_png=report(
            f"{RESULTS}/plots/{{experiment}}.png",
            caption="../report/plot.rst",
            category="Plots",
            labels={"experiment": "{experiment}", "figure": "main metric"},
        ),
    )
    if paired:
        outputs.update(
            paired_csv=f"{RESULTS}/paired/{{experiment}}.csv",
            paired_curves=f"{RESULTS}/paired/curves/{{experiment}}.csv",
            paired_md=f"{RESULTS}/paired/{{experiment}}.md",
            paired_tex=f"{RESULTS}/paired/{{experiment}}.tex",
            paired_html=report(
                f"{RESULTS}/paired/{{experiment}}.html",
                caption="../report/paired_table.rst",
                category="Paired comparisons",
                labels={"experiment": "{experiment}", "content": "A − B table"},
            ),
            paired_pdf=f"{RESULTS}/paired/{{experiment}}.pdf",
            paired_png=report(
                f"{RESULTS}/paired/{{experiment}}.png",
                caption="../report/paired_plot.rst",
                category="Paired comparisons",
                labels={"experiment": "{experiment}", "content": "A − B curves"},
            ),
        )
    return outputs


def sweep_outputs():
    """The sweep rule's outputs (workflow/rules/aggregate.smk): the sweep table and figure of an experiment."""
    labels = {"experiment": "{experiment}", "content": "final value against the swept parameter"}
    return dict(
        csv=f"{RESULTS}/sweeps/{{experiment}}.csv",
        md=f"{RESULTS}/sweeps/{{experiment}}.md",
        tex=f"{RESULTS}/sweeps/{{experiment}}.tex",
        html=report(
            f"{RESULTS}/sweeps/{{experiment}}.html", caption="../report/sweep.rst", category="Sweeps", labels=labels
        ),
        pdf=f"{RESULTS}/sweeps/{{experiment}}.pdf",
        png=report(
            f"{RESULTS}/sweeps/{{experiment}}.png",
            caption="../report/sweep.rst",
            category="Sweeps",
            labels={**labels, "content": "figure: final value against the swept parameter"},
        ),
    )


def all_outputs():
    # every per-seed result file of the run, so that one deleted by hand is simulated again (as an input only,
    # Snakemake would leave it missing behind the up-to-date tables that read it)
    out = [f for name in GRID.experiments for f in GRID.result_files(name)]
    out += [f"{RESULTS}/report/run_info.html"]
    out += [f"{RESULTS}/interactive.html"]
    for name in GRID.experiments:
        out += [f"{RESULTS}/tables/{name}.{ext}" for ext in ("csv", "md", "tex", "html", "parquet")]
        if GRID.experiments[name].paired:
            out += [f"{RESULTS}/paired/{name}.{ext}" for ext in ("csv", "md", "tex", "html", "pdf", "png")]
        out += [f"{RESULTS}/timing/{name}.{ext}" for ext in ("csv", "html")]
        out += [f"{RESULTS}/compute/{name}.{ext}" for ext in ("csv", "md", "tex", "html", "pdf", "png")]
        out += [f"{RESULTS}/plots/{name}.{ext}" for ext in ("pdf", "png")]
        out += [f"{RESULTS}/plots/{name}/{metric}.png" for metric in GRID.experiments[name].extra_plots]
        out += [f"{RESULTS}/plots/{name}/panels/{plot}.png" for plot in GRID.experiments[name].panel_plots]
        if GRID.experiments[name].sweeps():
            out += [f"{RESULTS}/sweeps/{name}.{ext}" for ext in ("csv", "md", "tex", "html", "pdf", "png")]
    for table in GRID.summary_tables:
        out += [f"{RESULTS}/summary/{table}.{ext}" for ext in ("csv", "md", "tex", "html")]
    if GRID.claims:
        out += [f"{RESULTS}/claims/claims.{ext}" for ext in ("csv", "md", "html")]
    return out


# Snakemake's scheduler (9.x) arms a threading.Timer of the rate limiter's timespan after every
# scheduling pass that leaves ready jobs waiting for cores, and each finished job starts another
# such chain: under its default of 100 jobs per 1 s the planning process re-ran its job selection
# 5,775 times (120 s of CPU, a third of the default grid's) while 49 simulate jobs queued on 2
# cores.  The profiles count the same rate over a minute (`max-jobs-per-timespan`), so a chain
# passes once a minute; its timers are not daemon threads and would keep the finished process
# alive for up to that minute, so they are cancelled when the run ends.
def cancel_scheduler_timers():
    import threading

    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


def keep_finished_simulations():
    """The Snakefile's onstart: keep the results of each simulate job about to re-run (not forced, not for a
    new software environment) for the job to put back if its cell, sources and data bytes are theirs; of a
    lockstep job, those it has (a member whose settings changed writes to another cell folder: the others'
    results are put back, that member simulated)."""
    results = []
    for job in workflow.dag.needrun_jobs():
        reason = workflow.dag.reason(job)
        if not job.rule.name.startswith("simulate_") or reason.forced or reason.software_stack_changed:
            continue
        outputs = [str(f) for f in job.output]
        results += [f for f in outputs if os.path.isfile(f)]
    try:
        reuse.keep(results)
    except OSError:  # nothing kept (a read-only or full .snakemake): the jobs simulate
        pass


def simulate_rule_name(block):
    return f"simulate_{block_label(block).replace('-', '_to_')}"
