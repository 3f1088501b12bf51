"""What was run: the grid of every experiment and the software versions, as an HTML fragment.

``snakemake --report`` opens on the workflow description (``workflow/report/workflow.rst``),
which embeds this fragment.
"""

from __future__ import annotations

import html
import json
import platform
from importlib import metadata
from typing import Any, Mapping, Sequence

import pandas as pd

from .. import __version__
from ..config import ExperimentGrid, budget_label
from .aggregate import ci_percent

#: distributions whose versions the report lists
PACKAGES = ("numpy", "scipy", "pandas", "scikit-learn", "matplotlib", "torch", "snakemake",
            "snakemake-executor-plugin-slurm")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _compact(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in params.items())


def grid_table(grid: ExperimentGrid) -> pd.DataFrame:
    rows = []
    for name, exp in grid.experiments.items():
        spec = exp.spec
        env = spec["environment"]
        algorithms = [f"{label} ({alg['policy']})" if label != alg["policy"] else label
                      for label, alg in spec["algorithms"].items()]
        cells = len(exp.algorithms) * len(exp.delays) * len(exp.budgets)
        rows.append({
            "experiment": name,
            "environment": f"{env['name']}({_compact(env.get('params', {}))})",
            "horizon T": exp.horizon,
            "seeds": len(exp.seeds),
            "seeds per job": exp.seeds_per_job,
            "algorithms": ", ".join(algorithms),
            "delays": ", ".join(exp.delays),
            "budgets": ", ".join(budget_label(b) for b in exp.budgets),
            "runs": cells * len(exp.seeds),
            "simulate jobs": cells * len(exp.seed_blocks),
            "CI level": exp.ci_level,
        })
    return pd.DataFrame(rows)


def _experiment_item(row: Mapping[str, Any], description: str) -> str:
    e = {k: html.escape(str(v)) for k, v in row.items()}
    text = (f"<code>{e['experiment']}</code>: {e['environment']}, T = {e['horizon T']}, {e['seeds']} seeds "
            f"({e['seeds per job']} per job); algorithms {e['algorithms']}; delays {e['delays']}; "
            f"budgets {e['budgets']}; {ci_percent(row['CI level'])} % confidence intervals "
            f"&mdash; {e['runs']} runs in {e['simulate jobs']} simulate jobs.")
    return f"<li>{text}" + (f" <em>{html.escape(description)}</em>" if description else "") + "</li>"


def _summary_items(grid: ExperimentGrid) -> str:
    """One phrase per summary table: its name, metric and rows."""
    return "; ".join(f"<code>{html.escape(name)}</code> ({html.escape(t.metric)} of {', '.join(t.algorithms)} "
                     f"over {len(t.rows)} rows of {', '.join(t.experiments)})"
                     for name, t in grid.summary_tables.items())


def run_info_html(grid: ExperimentGrid, config_files: Sequence[str]) -> str:
    """An HTML fragment: config files and overrides, one item per experiment, package versions.

    A list rather than a wide table: the report shows it in a narrow column beside the rule graph.
    """
    overrides = {k: grid.config[k] for k in ("seeds", "horizon", "ci_level") if grid.config.get(k) is not None}
    table = grid_table(grid)
    items = [_experiment_item(row, grid.experiments[row["experiment"]].spec.get("description", ""))
             for row in table.to_dict("records")]
    versions = {"python": platform.python_version(), "banditbench": __version__, **{p: _version(p) for p in PACKAGES}}
    parts = [
        "<h2>What was run</h2>",
        "<p>Configuration: " + (", ".join(f"<code>{html.escape(f)}</code>" for f in config_files) or "none")
        + ("; overrides: " + html.escape(_compact(overrides)) if overrides else "")
        + f". {int(table['runs'].sum())} runs in {int(table['simulate jobs'].sum())} simulate jobs:</p>",
        "<ul>" + "\n".join(items) + "</ul>",
        *([f"<p>Summary tables: {summaries}.</p>"] if (summaries := _summary_items(grid)) else []),
        "<h2>Versions</h2>",
        "<p>" + ", ".join(f"{html.escape(k)} {html.escape(v)}" for k, v in versions.items()) + ".</p>",
    ]
    return "\n".join(parts) + "\n"
