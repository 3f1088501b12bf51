"""banditbench: simulations -> aggregate tables -> plots (see README.md).

Only includes the rule files and validates the configuration; all logic lives
in src/banditbench.  `--configfile config/<family>.yaml` replaces the default
grid instead of being merged into it.
"""

import sys
from pathlib import Path

from snakemake.utils import min_version, validate

min_version("9.0")

# the library, importable without installation (jobs get it through their PYTHONPATH)
SRC = str(Path(workflow.basedir) / "src")
sys.path.insert(0, SRC)


if "experiments" not in config:

    configfile: "config.yaml"


validate(config, schema="src/banditbench/schema.yaml")


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
