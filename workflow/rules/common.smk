"""Shared definitions: the validated experiment grid and path helpers."""

import sys

from snakemake.settings.types import DeploymentMethod

from banditbench.config import load_grid

# Semantic validation (registered names, parameters, delays, budgets) on top of the schema.
GRID = load_grid(config)

# Jobs run with the interpreter that runs Snakemake, unless --use-conda gives each its env.
PYTHON = "python" if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method else sys.executable


wildcard_constraints:
    experiment=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    algorithm=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    delay=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    budget=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    seed=r"\d+",


def experiment_runs(wildcards):
    pattern = "results/runs/{experiment}/{algorithm}/{delay}/{budget}/{seed}.npz"
    return [pattern.format(**job) for job in GRID.jobs(wildcards.experiment)]


def experiment_resources(wildcards, key, default):
    return GRID.experiments[wildcards.experiment].spec.get("resources", {}).get(key, default)


def all_outputs():
    out = []
    for name in GRID.experiments:
        out += [f"results/tables/{name}.{ext}" for ext in ("csv", "md", "tex")]
        out += [f"results/plots/{name}.{ext}" for ext in ("pdf", "png")]
        out += [f"results/plots/{name}/{metric}.png" for metric in GRID.experiments[name].extra_plots]
    return out
