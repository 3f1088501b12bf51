"""Time and memory of an experiment's simulate jobs, from Snakemake's ``benchmark:`` files.

A simulate job runs a block of seeds in one process.  Snakemake writes the job's
wall time, CPU time and sampled peak memory to ``<block label>.benchmark.tsv``
next to the block's result files, and each result file's ``timing`` member holds
its seed's simulation time and the block it was run in.  The difference between
a job's wall time and its seeds' simulation time is the job's overhead inside
Snakemake's measurement: process start, imports, environment set-up and file
writes (Snakemake's own scheduling between jobs is not in it).

Outputs: one CSV row per job, and an HTML page with a summary per algorithm and
the slowest jobs, shown by ``snakemake --report``.

A job whose benchmark file is missing or holds no measurement (Snakemake could not write it: the disk
filled or turned read-only as the job ended, and its results were whole already) gets a row without
its measurements (NaN), a line in the rule's log and a note on the page: its results are kept, not
simulated again, and nothing needs deleting by hand.
"""

from __future__ import annotations

import html
import io
import logging
import os
from collections import defaultdict
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ..storage.cells import block_label
from ..storage.resultio import atomic_write_bytes, load_result
from ..storage.reuse import kept_benchmark
from .pages import html_page

log = logging.getLogger(__name__)

JOB_COLUMNS = [
    "algorithm",
    "delay",
    "budget",
    "job",
    "seeds",
    "wall_s",
    "overhead_s",
    "max_rss_mb",
    "simulation_s",
    "cpu_s",
]


def benchmark_path(run: str | Path, timing: Mapping) -> Path:
    """The benchmark file of the simulate job that wrote ``run`` (its ``timing`` member): next to its result
    files, or where ``timing["benchmark"]`` says relative to them (a job of several algorithms in lockstep,
    ``lockstep_variants``, writes one, next to its first algorithm's results)."""
    if "benchmark" in timing:
        return Path(os.path.normpath(Path(run).parent / timing["benchmark"]))
    return Path(run).parent / f"{block_label(tuple(timing['block']))}.benchmark.tsv"


def _number(value) -> float:
    return pd.to_numeric(value, errors="coerce")  # Snakemake writes NA / "-" for unmeasured values


def _measurement(bench: Path) -> pd.Series | None:
    """The last line of a job's benchmark file (the last attempt); where the block's results were put back
    after their data were rebuilt (banditbench.storage.reuse), the measurement of the simulation that wrote
    them.  None where the file is missing or holds no measurement."""
    kept = kept_benchmark(bench)
    try:
        measured = pd.read_csv(kept if kept.is_file() else bench, sep="\t")
    except (OSError, pd.errors.EmptyDataError, pd.errors.ParserError):
        return None
    return measured.iloc[-1] if len(measured) and "s" in measured.columns else None


def job_table(runs: Sequence[str | Path]) -> pd.DataFrame:
    """One row per simulate job of ``runs``: its benchmark measurements and its seeds' simulation time."""
    jobs: dict[Path, list] = defaultdict(list)
    for run in runs:
        _, meta, timing = load_result(run)
        if "block" not in timing:
            raise ValueError(
                f"{run}: no 'block' in its timing member: it was not written by a simulate job "
                "(banditbench run-block); delete it and re-run Snakemake"
            )
        jobs[benchmark_path(run, timing)].append((meta["cell"], timing))
    rows = []
    for bench, members in jobs.items():
        measured = _measurement(bench)
        if measured is None:
            log.warning(
                "%s: benchmark file of the simulate job that wrote %d result file(s) in %s is %s; its time and "
                "memory are left blank (NaN), its results are used",
                bench,
                len(members),
                bench.parent,
                "empty" if bench.is_file() else "missing",
            )
            measured = pd.Series(dtype=float)
        cell = members[0][0]
        simulation = sum(t["wall_time_s"] for _, t in members)
        wall = float(_number(measured.get("s")))
        rows.append(
            (
                " + ".join(dict.fromkeys(c["algorithm"] for c, _ in members)),  # several: a lockstep job
                cell["delay_label"],
                "none" if cell["budget"] is None else format(cell["budget"], "g"),
                bench.name.removesuffix(".benchmark.tsv"),
                len(members),
                wall,
                wall - simulation,
                float(_number(measured.get("max_rss"))),
                simulation,
                float(_number(measured.get("cpu_time"))),
            )
        )
    return pd.DataFrame(rows, columns=JOB_COLUMNS)


def summary_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm (and in total): jobs, seeds, job wall time, overhead share and peak memory."""

    def summarise(df: pd.DataFrame) -> dict:
        return {
            "jobs": len(df),
            "seeds": int(df["seeds"].sum()),
            "mean job [s]": df["wall_s"].mean(),
            "max job [s]": df["wall_s"].max(),
            "overhead [%]": 100 * df["overhead_s"].sum() / df["wall_s"].sum(),
            "max RSS [MB]": df["max_rss_mb"].max(),
            "total [s]": df["wall_s"].sum(),
            "simulation [s]": df["simulation_s"].sum(),
        }

    rows = {alg: summarise(df) for alg, df in jobs.groupby("algorithm", sort=False)}
    rows["all"] = summarise(jobs)
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("algorithm")


def to_html(jobs: pd.DataFrame, experiment: str, slowest: int = 10) -> str:
    summary = summary_table(jobs)
    top = jobs.sort_values("wall_s", ascending=False).head(slowest)
    blank = int(jobs["wall_s"].isna().sum())
    unmeasured = (
        [
            f"<p>{blank} of {len(jobs)} jobs have no measurement (NaN): their benchmark file is missing or "
            "empty, as when the disk filled or turned read-only as the job ended; their results are used.</p>"
        ]
        if blank
        else []
    )
    body = [
        f"<h1>{html.escape(experiment)}: simulate jobs</h1>",
        "<p>From Snakemake's benchmark files: wall time, CPU time and sampled peak resident memory "
        "(NaN when the job ended before the first sample) of each simulate job, which runs a block "
        "of seeds in one process. Overhead = job wall time minus its seeds' simulation time "
        "(process start, imports, set-up, file writes).</p>",
        *unmeasured,
        "<h2>Per algorithm</h2>",
        summary.reset_index().to_html(index=False, float_format=lambda v: f"{v:,.2f}", border=0, na_rep="NaN"),
        f"<h2>Slowest {len(top)} of {len(jobs)} jobs</h2>",
        top.to_html(index=False, float_format=lambda v: f"{v:,.2f}", border=0, na_rep="NaN"),
    ]
    return html_page(f"{experiment}: simulate jobs", "\n".join(body))


def write_timing(runs: Sequence[str | Path], experiment: str, csv: str | Path, html_file: str | Path) -> pd.DataFrame:
    """Write the per-job CSV and the HTML summary of an experiment's simulate jobs; return the job table."""
    jobs = job_table(runs)
    buf = io.StringIO()
    jobs.to_csv(buf, index=False, float_format="%.6g")
    atomic_write_bytes(csv, buf.getvalue().encode())
    atomic_write_bytes(html_file, to_html(jobs, experiment).encode())
    return jobs
