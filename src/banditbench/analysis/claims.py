"""The claims report: every claim of the config (:mod:`banditbench.configuration.claims`) judged on the results.

For a claim on experiment E the per-seed table ``results/<run>/tables/E.parquet`` (:mod:`banditbench.analysis.seedtable`)
gives A's and B's metric per seed; the seeds both have are paired, ``d_s = A_s - B_s`` (or ``A_s - value``),
and :func:`banditbench.analysis.sequential.verdict` judges the mean with an anytime-valid interval at the
config's ``claims_alpha``: *supported* (the interval lies on the claimed side of 0), *contradicted* (on
the other side) or *not separated* (it contains 0; ``detectable`` is the interval's half-width, the smallest
effect these seeds could have separated).  The interval stays valid however many times seeds were added
before this look (``banditbench claims --until-decided``).  Claims that cannot be tested say why
(``untestable``), as do claims whose results are missing (``not run``).

One row per claim, written as ``results/<run>/claims/claims.csv`` (every field), ``.md`` (the table people read)
and ``.html`` (the report's Claims page).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from ..configuration.claims import Claim, Side
from .seedtable import diverged_runs
from .sequential import anytime_pvalue, holm, verdict

#: the verdicts a claim can get, in the order the tables count them
VERDICTS = ("supported", "contradicted", "not separated", "not run", "untestable")
#: the CSV's columns
COLUMNS = (
    "claim", "paper", "where", "quote", "experiment", "comparison", "verdict", "n", "mean", "low", "high",
    "detectable", "alpha", "method", "p_anytime", "family_wise", "reason",
)  # fmt: skip


#: the columns that name one cell's metric at one horizon in a per-seed table
CELL = ["metric", "algorithm", "delay", "budget", "t"]


def cell_values(table: pd.DataFrame) -> dict[tuple, pd.Series]:
    """An experiment's per-seed table indexed once: ``(metric, algorithm, delay, budget, t)`` -> the values per seed
    (index: seed, increasing), at the table horizons (where the table marks them), where claims read them.
    Runs that diverged are left out (their seeds are then not paired), as the tables leave them out."""
    if "table_horizon" in table:
        table = table[table["table_horizon"]]
    diverged = diverged_runs(table)
    if diverged.any():
        table = table[~diverged]
    return {
        tuple(key): group.set_index("seed")["value"].sort_index()
        for key, group in table.groupby(CELL, observed=True, sort=False)
    }


def differences(claim: Claim, table: pd.DataFrame | Mapping[tuple, pd.Series]) -> np.ndarray:
    """The claim's paired differences ``A_s - B_s``, seeds in increasing order (the order they are added), from
    an experiment's per-seed table or its :func:`cell_values`."""
    cells = cell_values(table) if isinstance(table, pd.DataFrame) else table
    empty = pd.Series(dtype=float)

    def values(side: Side) -> pd.Series:
        return cells.get((claim.metric, side.algorithm, side.delay, side.budget, side.horizon), empty)

    a = values(claim.a)
    if claim.b.value is not None:
        return (a - claim.b.value).to_numpy()
    b = values(claim.b)
    seeds = a.index.intersection(b.index)
    return (a.loc[seeds] - b.loc[seeds]).to_numpy()


def evaluate(claims: Mapping[str, Claim], tables: Mapping[str, pd.DataFrame | None], alpha: float) -> pd.DataFrame:
    """One row per claim (:data:`COLUMNS`); ``tables`` maps an experiment to its per-seed table (None: not run)."""
    rows = []
    indexed = {name: cell_values(table) for name, table in tables.items() if table is not None}
    for claim in claims.values():
        row = {
            "claim": claim.id, "paper": claim.paper, "where": claim.where, "quote": claim.quote,
            "experiment": claim.experiment, "comparison": claim.statement(), "alpha": alpha,
        }  # fmt: skip
        if claim.untestable:
            rows.append({**row, "verdict": "untestable", "reason": claim.untestable})
            continue
        if claim.skipped:
            rows.append({**row, "verdict": "not run", "reason": claim.skipped})
            continue
        cells = indexed.get(claim.experiment)
        d = differences(claim, cells) if cells is not None else np.empty(0)
        if len(d) < 2:
            reason = "no results yet" if cells is None else f"{len(d)} paired seed(s) in the results; 2 are needed"
            rows.append({**row, "verdict": "not run", "n": len(d), "reason": reason})
            continue
        v = verdict(d, claim.relation, alpha, claim.bounds)
        p = anytime_pvalue(d) if claim.bounds is None else np.nan
        rows.append({
            **row, "verdict": v.verdict, "n": v.n, "mean": v.mean, "low": v.low, "high": v.high,
            "detectable": v.detectable, "method": v.method, "p_anytime": p, "reason": claim.note,
        })  # fmt: skip
    return family_wise(pd.DataFrame(rows, columns=list(COLUMNS)))


def family_wise(results: pd.DataFrame) -> pd.DataFrame:
    """``family_wise``: each paper's claims judged together, Holm's step-down on their anytime p-values
    (:func:`banditbench.analysis.sequential.holm`) at the claims' alpha: a claim keeps its verdict where Holm
    rejects a zero mean (family-wise error <= alpha per paper), else *not separated*; empty for claims without
    a p-value (untestable, not run, or judged with a bounded interval, for which Bonferroni's alpha/m applies)."""
    out = results.copy()
    out["family_wise"] = ""
    judged = out["p_anytime"].notna()
    for _, group in out[judged].groupby("paper", sort=False):
        rejected = holm(group["p_anytime"].to_numpy(), float(group["alpha"].iloc[0]))
        out.loc[group.index, "family_wise"] = np.where(rejected, group["verdict"], "not separated")
    return out


def counts_line(results: pd.DataFrame, column: str = "verdict", title: str = "Claims") -> str:
    """``Claims: 12 supported, 3 contradicted, 5 not separated, 2 untestable`` (the verdicts present)."""
    counts = results[column].value_counts()
    return f"{title}: " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts)


def family_wise_line(results: pd.DataFrame) -> str:
    """The family-wise verdicts' counts (:func:`family_wise`), of the claims with an anytime p-value."""
    judged = results[results["family_wise"].fillna("") != ""]
    return counts_line(judged, "family_wise", "Family-wise per paper (Holm on the anytime p-values)")


def brief(results: pd.DataFrame) -> str:
    """One line per claim, no quotes (what ``make pipeline`` prints): verdict, comparison, interval, claim id."""
    lines = [counts_line(results)]
    for r in results.itertuples(index=False):
        if r.verdict == "untestable":
            lines.append(f"  {r.verdict:<14} {r.reason}  ({r.claim})")
            continue
        stats = (
            r.reason if pd.isna(r.mean) else f"{_number(r.mean)} [{_number(r.low)}, {_number(r.high)}], n = {int(r.n)}"
        )
        lines.append(f"  {r.verdict:<14} {r.comparison}: {stats}  ({r.claim})")
    return "\n".join(lines) + "\n"


def _number(x) -> str:
    return "" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.4g}"


def markdown(results: pd.DataFrame) -> str:
    """The claims table for people: verdict, comparison, the interval with n, and the quoted sentence."""
    lines = [
        counts_line(results),
        "",
        family_wise_line(results),
        "",
        "| claim | paper | where | verdict | comparison | mean A - B [interval], n | detectable | quote |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results.itertuples(index=False):
        if pd.isna(r.mean):
            stats = r.reason
        else:
            stats = f"{_number(r.mean)} [{_number(r.low)}, {_number(r.high)}], n = {int(r.n)}"
        cells = [r.claim, r.paper, r.where, f"**{r.verdict}**", r.comparison, stats, _number(r.detectable), r.quote]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    alpha = results["alpha"].iloc[0] if len(results) else 0.05
    lines += [
        "",
        f"Each interval is an anytime-valid {100 * (1 - alpha):g} % confidence sequence for the mean paired difference "
        f"A - B over seeds (banditbench.analysis.sequential: it stays valid when seeds are added until a verdict); "
        f"supported: on the claimed side of 0; contradicted: on the other side; not separated: it contains 0, and "
        f"'detectable' is its half-width, the smallest difference these seeds could have separated. Error rate "
        f"{alpha:g} per claim; the family-wise line judges each paper's claims together (Holm's step-down on the "
        f"anytime-valid p-values: family-wise error <= {alpha:g} per paper; the CSV's family_wise column).",
    ]
    return "\n".join(lines) + "\n"


def write_claims(results: pd.DataFrame, csv: str | Path, md: str | Path, html_file: str | Path | None = None) -> None:
    """The claims table as CSV (every field), Markdown and, for the report, HTML."""
    results.to_csv(csv, index=False)
    Path(md).write_text(markdown(results))
    if html_file is not None:
        body = results[["claim", "paper", "where", "verdict", "comparison", "n", "mean", "low", "high", "quote"]]
        Path(html_file).write_text(
            f"<html><body><h1>Claims</h1><p>{html.escape(counts_line(results))}</p>"
            + body.to_html(index=False, na_rep="", float_format=lambda x: f"{x:.4g}")
            + "</body></html>\n"
        )


def read_tables(experiments, results_dir: str | Path = "results") -> dict[str, pd.DataFrame | None]:
    """Each experiment's per-seed table from ``results_dir/tables`` (a run's folder, ``results/<run>``; None
    where it is not there yet)."""
    out = {}
    for name in experiments:
        path = Path(results_dir) / "tables" / f"{name}.parquet"
        out[name] = pd.read_parquet(path) if path.is_file() else None
    return out


#: the verdicts that end a claim's looking (its interval is on one side of 0, or it cannot be run)
DECIDED = ("supported", "contradicted", "untestable")


def _looks_run(config: dict, config_path: str | Path, results_dir: str | Path) -> tuple[str, dict]:
    """The run the looks write their tables to, ``<config's run>.claims``, checked to belong to the config; and
    the environment that names that owner to the looks' Snakemake runs."""
    import json
    import os

    from ..configuration.runs import OWNER_VAR, check_owner, owner, run_name

    # every look writes its tables to one run of its own, results/<config's run>.claims (given on the command
    # line: the looks' slices differ, their namespace does not)
    run = f"{run_name(config, [config_path], {})}.claims"
    # the looks run sliced copies of the config: the run belongs to the config itself
    looks_owner = owner([config_path], {})
    check_owner(run, looks_owner, results_dir)
    return run, {**os.environ, OWNER_VAR: json.dumps(looks_owner)}


def _judge_look(grid, decided: dict[str, dict], tables) -> tuple[pd.DataFrame, list[Claim]]:
    """One look: the claims not yet decided judged on ``tables`` (``decided`` gains the rows of those it decides),
    the others keeping the row of the look that decided them; and the claims still open."""
    pending = {cid: c for cid, c in grid.claims.items() if cid not in decided}
    current = evaluate(pending, tables, grid.claims_alpha)
    decided.update({r["claim"]: r for r in current.to_dict("records") if r["verdict"] in DECIDED})
    rows = {**{r["claim"]: r for r in current.to_dict("records")}, **decided}
    results = pd.DataFrame([rows[cid] for cid in grid.claims], columns=list(COLUMNS))
    open_claims = [grid.claims[cid] for cid in grid.claims if cid not in decided and not grid.claims[cid].skipped]
    return results, open_claims


def _sliced_config(config: dict, open_claims: list[Claim], grow: set[str], seeds: dict[str, int], step: int) -> dict:
    """The config of a look's run: only the experiments that grow, at their new seed counts, and only the
    algorithms their open claims compare."""
    algorithms = sorted(
        {s.algorithm for c in open_claims if c.experiment in grow for s in (c.a, c.b) if s.algorithm is not None}
    )
    sliced = {**config, "only_experiments": sorted(grow), "only_algorithms": algorithms}
    sliced["experiments"] = {
        name: {**spec, "seeds": list(range(seeds[name])), "seeds_per_job": step} if name in grow else spec
        for name, spec in config["experiments"].items()
    }
    sliced.pop("seeds", None)
    return sliced


def _run_look(look: int, sliced: dict, targets: list[str], run: str, cores: int, snakemake_args, env) -> None:
    """Snakemake makes ``targets`` from the sliced config (written to a temporary file in the working directory)."""
    import subprocess
    import sys
    import tempfile

    import yaml

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=".", prefix=".claims-look-", delete=False) as f:
        yaml.safe_dump(sliced, f, sort_keys=False)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "snakemake", *targets, "--cores", str(cores), "--configfile", f.name,
             "--config", f"run={run}", *snakemake_args],
            capture_output=True, text=True, env=env,
        )  # fmt: skip
    finally:
        Path(f.name).unlink()
    if done.returncode != 0:
        raise RuntimeError(f"look {look}: snakemake failed:\n{(done.stdout + done.stderr)[-3000:]}")


def until_decided(
    config_path: str | Path,
    max_seeds: int,
    step: int,
    cores: int = 2,
    results_dir: str | Path = "results",
    snakemake_args: tuple[str, ...] = (),
    say=print,
    only_experiments: list[str] | None = None,
    start_seeds: int | None = None,
    only_algorithms: list[str] | None = None,
) -> pd.DataFrame:
    """Add seeds to the cells of undecided claims until every claim is decided or has ``max_seeds`` seeds.

    Each look reads the per-seed tables and judges every claim not yet decided (:func:`evaluate`; a claim's
    verdict is the one of the look that decided it, where its looking stopped); the experiments of the
    claims still *not separated* or *not run* get ``step`` more seeds (their total rounded up to a multiple of
    ``step``, at most ``max_seeds``), and Snakemake runs just those experiments' simulations and tables, with
    only the algorithms those claims compare (a sliced copy of the config: ``only_experiments`` and
    ``only_algorithms``, and ``seeds_per_job = step``).  Finished seeds are reused (a seed's file does not
    depend on the blocking), so the verdicts do not depend on how many looks were taken; the intervals
    are anytime-valid, so the looks cost no error rate.  An experiment whose results are not there yet is first
    run with its configured seeds; ``start_seeds`` starts every experiment at that many seeds instead (at most
    its configured ones: a paper grid's 200 trials begun at 10), its tables rebuilt for them first.  ``only_experiments`` and ``only_algorithms`` restrict the looking to the claims of those experiments and
    comparing only those algorithms (the slicing keys of the same names: a paper grid's cheap cells).  ``say`` gets one progress line per look.  The
    table's ``attrs`` say how it was reached: ``looks``, ``seeds`` per experiment, ``cpu_s`` of the Snakemake runs.
    """
    import resource

    from ..configuration.grid import load_config_file, load_grid

    config = load_config_file(config_path)
    run, look_env = _looks_run(config, config_path, results_dir)
    for key, names in (("only_experiments", only_experiments), ("only_algorithms", only_algorithms)):
        if names:
            config[key] = list(names)
    grid = load_grid(config)
    seeds = {name: len(exp.seeds) for name, exp in grid.experiments.items()}
    rebuild = set()  # experiments whose tables must first be rebuilt for their starting seeds
    if start_seeds is not None:
        seeds = {name: min(n, start_seeds) for name, n in seeds.items()}
        rebuild = set(grid.claim_experiments())
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    look = 0
    decided: dict[str, dict] = {}  # a claim's row at the look that decided it: looking stops there
    while True:
        look += 1
        tables = read_tables(grid.claim_experiments(), Path(results_dir) / run)
        tables.update({name: None for name in rebuild})
        rebuild = set()
        results, open_claims = _judge_look(grid, decided, tables)
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = max(0.0, cpu.ru_utime + cpu.ru_stime - cpu0.ru_utime - cpu0.ru_stime)
        shown = ", ".join(f"{name} {seeds[name]}" for name in grid.claim_experiments())
        say(
            f"look {look}: {len(results) - len(open_claims)} of {len(results)} claims decided; "
            f"seeds: {shown}; CPU {spent:.0f} s"
        )
        missing = {c.experiment for c in open_claims if tables[c.experiment] is None}
        more = {c.experiment for c in open_claims if seeds[c.experiment] < max_seeds} - missing
        grow = missing | more
        if not grow:
            break
        for name in more:
            seeds[name] = min(max_seeds, -(-(seeds[name] + 1) // step) * step)
        targets = [f"{results_dir}/{run}/tables/{name}.parquet" for name in sorted(grow)]
        _run_look(
            look, _sliced_config(config, open_claims, grow, seeds, step), targets, run, cores, snakemake_args, look_env
        )
    results = family_wise(results)
    results.attrs.update(looks=look, seeds={name: seeds[name] for name in grid.claim_experiments()}, cpu_s=spent)
    return results
