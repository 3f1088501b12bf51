"""What was run: the grid of every experiment, what produced its results, and the software versions,
as an HTML fragment.

What produced the results (commit, host, CPU, BLAS kernel, Python and package versions) is read
from the result files' ``provenance`` members (:mod:`banditbench.storage.provenance`), not from the
machine that builds the report; a grid whose results are mixed (more than one commit, host, CPU,
BLAS kernel or version, or a dirty tree) is flagged.  The versions listed last are those that built
the tables and plots.  ``snakemake --report`` opens on the workflow description
(``workflow/report/workflow.rst``), which embeds this fragment.
"""

from __future__ import annotations

import html
import json
import platform
from importlib import metadata
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from .. import __version__
from ..storage import provenance
from ..configuration.grid import ExperimentGrid
from ..storage.resultio import IDENTITY, budget_label, identity_from_path, summarize_files
from .aggregate import ci_percent

#: distributions whose versions the report lists
PACKAGES = (
    "numpy",
    "scipy",
    "pandas",
    "scikit-learn",
    "matplotlib",
    "torch",
    "snakemake",
    "snakemake-executor-plugin-slurm",
)


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
        algorithms = [
            f"{label} ({alg['policy']})" if label != alg["policy"] else label
            for label, alg in spec["algorithms"].items()
        ]
        cells = len(exp.algorithms) * len(exp.delays) * len(exp.budgets)
        rows.append(
            {
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
            }
        )
    return pd.DataFrame(rows)


def _experiment_item(row: Mapping[str, Any], description: str) -> str:
    e = {k: html.escape(str(v)) for k, v in row.items()}
    text = (
        f"<code>{e['experiment']}</code>: {e['environment']}, T = {e['horizon T']}, {e['seeds']} seeds "
        f"({e['seeds per job']} per job); algorithms {e['algorithms']}; delays {e['delays']}; "
        f"budgets {e['budgets']}; {ci_percent(row['CI level'])} % confidence intervals "
        f"&mdash; {e['runs']} runs in {e['simulate jobs']} simulate jobs."
    )
    return f"<li>{text}" + (f" <em>{html.escape(description)}</em>" if description else "") + "</li>"


def _summary_items(grid: ExperimentGrid) -> str:
    """One phrase per summary table: its name, metric and rows."""
    return "; ".join(
        f"<code>{html.escape(name)}</code> ({html.escape(t.metric)} of {', '.join(t.algorithms)} "
        f"over {len(t.rows)} rows of {', '.join(t.experiments)})"
        for name, t in grid.summary_tables.items()
    )


def provenance_html(runs: Iterable[str]) -> str:
    """What produced the result files ``runs`` (read from their provenance members): one item per
    commit, host, CPU, BLAS kernel, threads, Python and package, with counts, and a warning per
    mixture (:meth:`banditbench.storage.provenance.Summary.warnings`) or damaged file."""
    summary, damaged = summarize_files(runs)
    if not summary.total and not damaged:
        return "<h2>What produced the results</h2>\n<p>No result files.</p>"
    items = []
    for name, values in provenance.summary_rows(summary):
        if len(values) == 1:
            text = f"{html.escape(values[0][0])}"
        else:
            text = "; ".join(f"{html.escape(v)} ({n} results)" for v, n in values)
        items.append(f"<li>{html.escape(name)}: {text}</li>")
    warnings = [*summary.warnings(), *damaged]
    flags = [f'<p style="color:#a00"><strong>Warning:</strong> {html.escape(w)}.</p>' for w in warnings]
    return "\n".join(
        [
            "<h2>What produced the results</h2>",
            f"<p>Read from the {summary.total} result files gathered"
            + (" (all from one commit, host and BLAS kernel):</p>" if not warnings else ":</p>"),
            *flags,
            "<ul>" + "\n".join(items) + "</ul>",
        ]
    )


def manifest_csv(runs: Iterable[str]) -> str:
    """The run's manifest (``results/<run>/manifest.csv``): one row per per-seed result file of the run,
    ``experiment, algorithm, delay, budget, seed, path`` (``path`` relative to the project folder)."""
    rows = [{**identity_from_path(path), "path": str(path)} for path in runs]
    return pd.DataFrame(rows, columns=[*IDENTITY, "path"]).to_csv(index=False)


#: config keys shown as the run's overrides (set on the command line, as a rule)
SHOWN_OVERRIDES = ("seeds", "horizon", "ci_level", "device", "only_experiments", "only_algorithms", "override")


def run_info_html(
    grid: ExperimentGrid, config_files: Sequence[str], runs: Iterable[str] | None = None, run: str | None = None
) -> str:
    """An HTML fragment: the run's name (its outputs' folder ``results/<run>``), config files and overrides,
    one item per experiment, what produced the result files ``runs`` (:func:`provenance_html`; left out
    without them) and the versions that built the report.

    A list rather than a wide table: the report shows it in a narrow column beside the rule graph.
    """
    overrides = {k: grid.config[k] for k in SHOWN_OVERRIDES if grid.config.get(k) is not None}
    table = grid_table(grid)
    items = [
        _experiment_item(row, grid.experiments[row["experiment"]].spec.get("description", ""))
        for row in table.to_dict("records")
    ]
    versions = {"python": platform.python_version(), "banditbench": __version__, **{p: _version(p) for p in PACKAGES}}
    parts = [
        "<h2>What was run</h2>",
        "<p>"
        + (
            f"Run <code>{html.escape(run)}</code> (its outputs: <code>results/{html.escape(run)}/</code>). "
            if run
            else ""
        )
        + "Configuration: "
        + (", ".join(f"<code>{html.escape(f)}</code>" for f in config_files) or "none")
        + ("; overrides: " + html.escape(_compact(overrides)) if overrides else "")
        + f". {int(table['runs'].sum())} runs in {int(table['simulate jobs'].sum())} simulate jobs:</p>",
        "<ul>" + "\n".join(items) + "</ul>",
        *([f"<p>Summary tables: {summaries}.</p>"] if (summaries := _summary_items(grid)) else []),
        *([provenance_html(runs)] if runs is not None else []),
        "<h2>Versions</h2>",
        "<p>Tables and plots built with "
        + ", ".join(f"{html.escape(k)} {html.escape(v)}" for k, v in versions.items())
        + ".</p>",
    ]
    return "\n".join(parts) + "\n"
