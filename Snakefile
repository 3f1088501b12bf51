"""banditbench: simulations -> aggregate tables -> plots (see README.md).

Only includes the rule files and validates the configuration; all logic lives
in src/banditbench.  `--configfile config/<family>.yaml` replaces the default
grid instead of being merged into it.  The config files are re-read strictly
(a duplicate key is an error, as is a YAML error, named by file and line) and the
whole configuration is validated by banditbench.config.load_grid (workflow/rules/common.smk)
before any job.
"""

import os
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

min_version("9.0")

# Every step runs this checkout's library, src/.  Jobs get it first on their PYTHONPATH
# (script and shell rules inherit it, --use-conda envs included; `envvars` passes it on to
# cluster jobs), and the workflow itself refuses a banditbench imported from anywhere else,
# so another installed copy can never plan or run the jobs of this one (README, "Development").
SRC = Path(workflow.basedir).resolve() / "src"
if os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] != str(SRC):
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))


envvars:
    "PYTHONPATH",


import banditbench

if Path(banditbench.__file__).resolve().parent != SRC / "banditbench":
    raise WorkflowError(
        f"banditbench is imported from {Path(banditbench.__file__).parent}, not from this "
        f"checkout's {SRC}: install the checkout in editable mode (make install, or "
        f"pip install -e .) or start Snakemake with PYTHONPATH={SRC}"
    )


from banditbench.config import checked, load_config_file

for _path in workflow.overwrite_configfiles:
    checked(load_config_file, _path)

if "experiments" not in config:
    checked(load_config_file, "config.yaml")

    configfile: "config.yaml"


# first page of `snakemake --report report.html`
report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/oracles.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
