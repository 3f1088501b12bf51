"""banditbench: simulations -> aggregate tables -> plots (see README.md).

Only includes the rule files and validates the configuration; all logic lives
in src/banditbench.  `--configfile config/<family>.yaml` replaces the default
grid instead of being merged into it.  The config files are re-read strictly
(a duplicate key is an error, as is a YAML error, named by file and line; 1e-3 is
a number, as in YAML 1.2) and that reading is the config; the whole configuration is
validated by banditbench.configuration.grid.load_grid (workflow/rules/common.smk)
before any job.
"""

import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

min_version("9.0")

# Every step runs this workflow's library, src/: it comes first on this process's import path and
# on the jobs' PYTHONPATH (script and shell rules inherit it, --use-conda envs included; `envvars`
# passes it on to cluster jobs, whose Snakefile puts its own deployed src/ first again).  A
# banditbench imported before this file ran must be the same code: compared by a fingerprint of
# the sources, not by path, since executors without a shared file system deploy the workflow into
# a fresh folder per job (docs/extending.md, "Development").
SRC = Path(workflow.basedir).resolve() / "src"
if not (SRC / "banditbench").is_dir():
    raise WorkflowError(f"{SRC / 'banditbench'} is missing: the workflow runs the library next to its Snakefile")
if sys.path[:1] != [str(SRC)]:
    sys.path.insert(0, str(SRC))
if os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] != str(SRC):
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))


envvars:
    "PYTHONPATH",


import banditbench
from banditbench.storage.fingerprint import fingerprint

if Path(banditbench.__file__).resolve().parent != SRC / "banditbench" and fingerprint(
    Path(banditbench.__file__).parent
) != fingerprint(SRC / "banditbench"):
    raise WorkflowError(
        f"banditbench was imported from {Path(banditbench.__file__).parent}, whose code differs from this "
        f"workflow's {SRC / 'banditbench'}: run Snakemake in a fresh process (or install this checkout: "
        f"make install, or pip install -e .)"
    )


from banditbench.configuration.grid import checked, load_config_file
from snakemake.utils import update_config
from banditbench.storage.logs import CONSOLE_VAR

# banditbench's console (profiles/default; its handler alone has `passthrough`, False unless a flag asks for
# Snakemake's own output) shows a failed job's one-line error from the job's log: the jobs print it there only
if any(
    getattr(handler, "passthrough", None) is False
    for handler in getattr(getattr(workflow, "logger_manager", None), "plugin_handlers", [])
):
    os.environ[CONSOLE_VAR] = "1"

_read = [checked(load_config_file, _path) for _path in workflow.overwrite_configfiles]

if "experiments" not in config:
    _read.insert(0, checked(load_config_file, "config.yaml"))

    configfile: "config.yaml"


# The config is the files as banditbench reads them (Snakemake's YAML 1.1 reads 1e-3 as a string; YAML 1.2, a
# number), merged in Snakemake's order with the --config entries on top: what `banditbench validate` checks.
_strict = {}
for _part in [*_read, workflow.config_settings.config]:
    update_config(_strict, _part)
config.clear()
config.update(_strict)


# the image every job runs in under `--software-deployment-method conda apptainer` (config key
# `container`; build it from the Dockerfile, which `snakemake --containerize` generates)
if config.get("container"):

    containerized: config["container"]


# first page of `snakemake --report report.html`
report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/oracles.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/report.smk"


# finished simulations about to re-run are kept, for their jobs to put back if their data bytes are unchanged
# (workflow/rules/simulate.smk); SIGTERM lets the running jobs finish, then stops the run, without the hang
# that Snakemake's own handler can cause (banditbench.storage.runlock.graceful_sigterm)
onstart:
    keep_finished_simulations()
    record_run_owner()
    runlock.graceful_sigterm(workflow.scheduler)


# the scheduler's re-evaluation timers end with the run (workflow/rules/common.smk)
onsuccess:
    cancel_scheduler_timers()


onerror:
    cancel_scheduler_timers()


rule all:
    default_target: True
    input:
        all_outputs(),
