"""The claims report: every claim of the config (:mod:`banditbench.configuration.claims`) judged on the results.

For a claim on experiment E the per-seed table ``results/<run>/tables/E.parquet`` (:mod:`banditbench.analysis.seedtable`)
gives A's and B's metric per seed; the seeds both have are paired, ``d_s = A_s - B_s`` (or ``A_s - value``), in
increasing seed order (the order ``--until-decided`` adds them), and :func:`banditbench.numerics.sequential.verdict`
judges the mean at the config's ``claims_alpha`` on the running intersection of the claim's confidence sequence
over all its seeds: by default the distribution-free betting CS on the range of ``A - B`` that the environment's
declared metric range gives (the claim's ``method`` and ``bounds`` may say otherwise; a Gaussian t-CS is an opt-in
with a reason, named in the row's ``method``).  *supported*: the interval lies on the claimed side of 0;
*contradicted*: on the other side; *not separated*: it contains 0 (``detectable`` is its half-width, the smallest
effect these seeds could have separated).  The interval stays valid however the seeds were added and whenever the
looking stopped (``banditbench claims --until-decided``).  Claims that cannot be tested say why (``untestable``), as
do claims whose results are missing (``not run``).

One row per claim (one comparison: :mod:`banditbench.configuration.claims` refuses two claims with the same one;
``also`` lists the sentences that restate it), written as ``results/<run>/claims/claims.csv`` (every field), ``.md`` (the table people read)
and ``.html`` (the report's Claims page); :func:`differences_table` gives the per-seed differences behind them.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from ..configuration.claims import Claim, Side
from ..storage.resultio import TIMED_SECONDS
from .seedtable import diverged_runs
from ..numerics.sequential import anytime_pvalue, holm, verdict

#: the verdicts a claim can get, in the order the tables count them
VERDICTS = ("supported", "contradicted", "not separated", "not run", "untestable")
#: the CSV's columns
COLUMNS = (
    "claim", "paper", "where", "quote", "experiment", "comparison", "verdict", "n", "mean", "low", "high",
    "detectable", "alpha", "method", "range_low", "range_high", "p_anytime", "family_wise", "reason", "note", "also",
)  # fmt: skip
#: the columns of the per-seed differences (:func:`differences_table`), rows in each claim's seed order
DIFFERENCE_COLUMNS = ("claim", "seed", "difference")


#: the columns that name one cell's metric at one horizon in a per-seed table
CELL = ["metric", "algorithm", "delay", "budget", "t"]


#: the first element of the key under which :func:`cell_values` keeps a cell's timing provenance per seed
TIMING = "timing"


class IncomparableTimes(ValueError):
    """A time claim's seeds cannot be compared (:func:`_timed` says why): the claim is *not run*, with the reason."""


def cell_values(table: pd.DataFrame, timing: pd.DataFrame | None = None) -> dict[tuple, pd.Series]:
    """An experiment's per-seed table indexed once: ``(metric, algorithm, delay, budget, t)`` -> the values per seed
    (index: seed, increasing), at the table horizons (where the table marks them), where claims read them.
    Runs that diverged are left out (their seeds are then not paired), as the tables leave them out.

    With the experiment's per-seed timing table (:func:`~banditbench.analysis.seedtable.collect_runs`), each run's
    recorded seconds too (metrics :data:`~banditbench.storage.resultio.TIMED_SECONDS` at the run's horizon), and
    under ``("timing", algorithm, delay, budget, t)`` a frame per seed of the measurement it shares, its engine
    and its machine (what :func:`paired` needs to pair times)."""
    if "table_horizon" in table:
        table = table[table["table_horizon"]]
    diverged = diverged_runs(table)
    if diverged.any():
        table = table[~diverged]
    cells = {
        tuple(key): group.set_index("seed")["value"].sort_index()
        for key, group in table.groupby(CELL, observed=True, sort=False)
    }
    if timing is not None:
        timing = timing.assign(machine=timing["host"].astype(str) + " (" + timing["cpu"].astype(str) + ")")
        for (alg, delay, budget, t), group in timing.groupby(["algorithm", "delay", "budget", "t"], observed=True):
            group = group.set_index("seed").sort_index()
            for metric in TIMED_SECONDS:
                cells[(metric, alg, delay, budget, t)] = group[metric]
            cells[(TIMING, alg, delay, budget, t)] = group[["measurement", "engine", "machine"]]
    return cells


def paired(claim: Claim, cells: Mapping[tuple, pd.Series]) -> pd.Series:
    """The claim's paired differences ``A_s - B_s`` indexed by seed, increasing (the order they are added), from
    an experiment's :func:`cell_values`; a time claim's per independent measurement (:func:`_timed`)."""
    empty = pd.Series(dtype=float)

    def values(side: Side) -> pd.Series:
        return cells.get((claim.metric, side.algorithm, side.delay, side.budget, side.horizon), empty)

    a = values(claim.a)
    if claim.b.value is not None:
        d = a - claim.b.value
    else:
        b = values(claim.b)
        seeds = a.index.intersection(b.index)
        d = a.loc[seeds] - b.loc[seeds]
    return _timed(claim, cells, d) if claim.metric in TIMED_SECONDS else d


def _timed(claim: Claim, cells: Mapping[tuple, pd.Series], d: pd.Series) -> pd.Series:
    """A time claim's differences, one per independent measurement: the seeds of a seed-batched block share one
    recorded time (each gets an equal share), so the seeds joined by a shared measurement on either side form one
    unit, whose difference is the mean of its seeds' (indexed by its first seed).  An exception says why the
    times cannot be compared: none recorded (the timing table is missing, or older results record no time), the
    seeds timed on more than one machine, or one side's seeds played by more than one engine
    (:class:`IncomparableTimes`)."""
    sides = [s for s in (claim.a, claim.b) if s.value is None]
    infos = [cells.get((TIMING, s.algorithm, s.delay, s.budget, s.horizon)) for s in sides]
    if any(info is None for info in infos):
        raise IncomparableTimes(
            f"no per-seed timing table for {claim.experiment!r} (tables/{claim.experiment}.timing.parquet; results "
            f"aggregated before it was written: run snakemake again to aggregate them)"
        )
    if d.isna().any():
        raise IncomparableTimes(
            f"{int(d.isna().sum())} paired seed(s) record no {claim.metric} (results from before it)"
        )
    infos = [info.loc[d.index] for info in infos]
    machines = sorted(set().union(*(info["machine"] for info in infos)))
    if len(machines) > 1:
        raise IncomparableTimes(
            f"its seeds were timed on {len(machines)} machines ({'; '.join(machines)}); times compare on one"
        )
    for side, info in zip(sides, infos):
        engines = sorted(set(info["engine"]))
        if len(engines) > 1:
            raise IncomparableTimes(
                f"{side.algorithm}'s seeds were played by {len(engines)} engines ({', '.join(engines)})"
            )
    unit = {seed: seed for seed in d.index}

    def root(seed):
        while unit[seed] != seed:
            seed = unit[seed]
        return seed

    for info in infos:
        first: dict[str, int] = {}
        for seed, measurement in info["measurement"].items():
            if measurement in first:
                a, b = root(first[measurement]), root(seed)
                unit[max(a, b)] = min(a, b)
            else:
                first[measurement] = seed
    units = pd.Series([root(seed) for seed in d.index], index=d.index)
    return d.groupby(units).mean().sort_index()


def differences(claim: Claim, table: pd.DataFrame | Mapping[tuple, pd.Series]) -> np.ndarray:
    """The claim's paired differences ``A_s - B_s``, seeds in increasing order (the order they are added), from
    an experiment's per-seed table or its :func:`cell_values`."""
    cells = cell_values(table) if isinstance(table, pd.DataFrame) else table
    return paired(claim, cells).to_numpy()


#: an experiment's per-seed table, or its :func:`cell_values`, or None where it has no results yet
Tables = Mapping[str, "pd.DataFrame | Mapping[tuple, pd.Series] | None"]


def _indexed(tables: Tables) -> dict[str, Mapping[tuple, pd.Series]]:
    return {
        name: cell_values(table) if isinstance(table, pd.DataFrame) else table
        for name, table in tables.items()
        if table is not None
    }


def differences_table(claims: Mapping[str, Claim], tables: Tables) -> pd.DataFrame:
    """Every testable claim's per-seed differences (:data:`DIFFERENCE_COLUMNS`: claim id, seed, ``A - B``), each
    claim's rows in seed order: what its verdict was read from, so that it can be re-judged or calibrated
    (``banditbench claims calibrate``) without re-simulating."""
    indexed = _indexed(tables)
    frames = []
    for claim in claims.values():
        if claim.untestable or claim.skipped or claim.experiment not in indexed:
            continue
        try:
            d = paired(claim, indexed[claim.experiment])
        except IncomparableTimes:  # the claim is not run, saying why (evaluate)
            continue
        frames.append(pd.DataFrame({"claim": claim.id, "seed": d.index.astype(int), "difference": d.to_numpy()}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(DIFFERENCE_COLUMNS))


def judge(claim: Claim, d: np.ndarray, alpha: float) -> dict:
    """A testable claim's fields on its differences ``d`` (at least 2): the verdict of its method on the running
    intersection, the interval, the range of ``A - B`` and the anytime p-value; differences outside the range
    (an environment that breaks its declared metric range, or a claim's wrong ``bounds``) are *not run*, saying so."""
    lo, hi = claim.bounds if claim.bounds is not None else (np.nan, np.nan)
    fields = {"n": len(d), "range_low": lo, "range_high": hi, "reason": ""}
    try:
        v = verdict(d, claim.relation, alpha, claim.bounds, method=claim.method or None, reason=claim.reason)
        p = anytime_pvalue(d, method=claim.method or None, bounds=claim.bounds, alpha=alpha)
    except ValueError as err:
        return {**fields, "verdict": "not run", "reason": f"{err}: the range of A - B does not hold"}
    return {
        **fields, "verdict": v.verdict, "mean": v.mean, "low": v.low, "high": v.high, "detectable": v.detectable,
        "method": v.method, "p_anytime": p, "reason": v.note,
    }  # fmt: skip


def evaluate(claims: Mapping[str, Claim], tables: Tables, alpha: float) -> pd.DataFrame:
    """One row per claim (:data:`COLUMNS`); ``tables`` maps an experiment to its per-seed table or its
    :func:`cell_values` (None: not run)."""
    rows = []
    indexed = _indexed(tables)
    for claim in claims.values():
        row = {
            "claim": claim.id, "paper": claim.paper, "where": claim.where, "quote": claim.quote,
            "experiment": claim.experiment, "comparison": claim.statement(), "alpha": alpha, "note": claim.note,
            "also": json.dumps([asdict(r) for r in claim.also]) if claim.also else "",
        }  # fmt: skip
        if claim.untestable:
            rows.append({**row, "verdict": "untestable", "reason": claim.untestable})
            continue
        if claim.skipped:
            rows.append({**row, "verdict": "not run", "reason": claim.skipped})
            continue
        cells = indexed.get(claim.experiment)
        try:
            d = differences(claim, cells) if cells is not None else np.empty(0)
        except IncomparableTimes as err:
            rows.append({**row, "verdict": "not run", "reason": str(err)})
            continue
        if len(d) < 2:
            unit = "independent time measurement(s)" if claim.metric in TIMED_SECONDS else "paired seed(s)"
            reason = "no results yet" if cells is None else f"{len(d)} {unit} in the results; 2 are needed"
            rows.append({**row, "verdict": "not run", "n": len(d), "reason": reason})
            continue
        rows.append({**row, **judge(claim, d, alpha)})
    return family_wise(pd.DataFrame(rows, columns=list(COLUMNS)))


def family_wise(results: pd.DataFrame) -> pd.DataFrame:
    """``family_wise``, per paper *per table*: each paper's claims of this table (one run, or the slice of a paper
    grid it covered) judged together, Holm's step-down on their anytime p-values
    (:func:`banditbench.numerics.sequential.holm`) at the claims' alpha: a claim keeps its verdict where Holm rejects
    a zero mean (family-wise error <= alpha over the paper's claims in this table), else *not separated*; empty for
    claims without a p-value (untestable, not run).  The docs' paper pages judge each paper's claims over all its
    committed runs together (:func:`banditbench.analysis.claim_pages.family_wise_per_paper`)."""
    out = results.copy()
    out["family_wise"] = ""
    judged = out["p_anytime"].notna()
    for _, group in out[judged].groupby("paper", sort=False):
        rejected = holm(group["p_anytime"].to_numpy(), float(group["alpha"].iloc[0]))
        out.loc[group.index, "family_wise"] = np.where(rejected, group["verdict"], "not separated")
    return out


#: a row's comparison as :meth:`banditbench.configuration.claims.Claim.statement` words it
_STATEMENT = re.compile(r"^(?P<a>\S+) (?P<sign>[<>]) (?P<b>\S+) \((?P<where>.*)\)$")


def comparison_of(experiment: str, statement: str) -> tuple[str, str] | None:
    """The comparison a row makes, from its experiment and its ``comparison`` words: the same for two rows that make
    the same comparison, a mirrored one included (``B > A`` is ``A < B``: the labels swapped, the sign turned, every
    ``x vs y`` of the settings swapped; the two wordings' first in sort order stands for both; a constant B is not
    mirrored).  None for a row without one (untestable, not run at this horizon).  It reads the CSV of any run, one
    recorded before restatements were folded included, as :func:`banditbench.configuration.claims.comparison_key`
    reads resolved claims."""
    m = _STATEMENT.match(str(statement))
    if m is None:
        return None
    words = str(statement)
    try:
        float(m["b"])
        return (str(experiment), words)  # against a constant
    except ValueError:
        pass
    flipped = ">" if m["sign"] == "<" else "<"
    where = re.sub(r"([^\s,]+) vs ([^\s,]+)", r"\2 vs \1", m["where"])
    mirrored = f"{m['b']} {flipped} {m['a']} ({where})"
    return (str(experiment), min(words, mirrored))


def _also_entries(row) -> list[dict]:
    text = row.get("also", "")
    return json.loads(text) if isinstance(text, str) and text.strip() else []


def fold_restatements(results: pd.DataFrame) -> pd.DataFrame:
    """The rows with one row per comparison (:func:`comparison_of`): a row that makes the same comparison as an
    earlier one (a run recorded before restatements were folded into ``also``) is dropped, its sentence (paper,
    where, quote, and its claim id as ``claim``) added to the earlier row's ``also``; ``folded`` counts them
    (``attrs["folded"]``).  A run whose claims are distinct is returned as it is, with ``also`` and ``note``
    columns where it lacked them."""
    out = results.copy()
    for column in ("also", "note"):
        if column not in out:
            out[column] = ""
    out["also"] = out["also"].fillna("")
    first: dict[tuple[str, str], int] = {}
    drop = []
    for i, row in out.iterrows():
        key = comparison_of(row.get("experiment", ""), row.get("comparison", ""))
        if key is None:
            continue
        if key not in first:
            first[key] = i
            continue
        keep = first[key]
        entries = _also_entries(out.loc[keep])
        same = [e for e in entries if (e.get("where"), e.get("quote")) == (row.get("where"), row.get("quote"))]
        if same:  # the restatement is in the claim's also already: say which row recorded it
            same[0]["claim"] = row["claim"]
            out.at[keep, "also"] = json.dumps(entries)
            drop.append(i)
            continue
        entries += [
            {
                "paper": row.get("paper", ""),
                "where": row.get("where", ""),
                "quote": row.get("quote", ""),
                "claim": row["claim"],
            }  # fmt: skip
        ]
        out.at[keep, "also"] = json.dumps(entries)
        drop.append(i)
    out = out.drop(index=drop).reset_index(drop=True)
    out.attrs["folded"] = len(drop)
    return out


def counts_line(results: pd.DataFrame, column: str = "verdict", title: str = "Claims") -> str:
    """``Claims: 12 supported, 3 contradicted, 5 not separated, 2 untestable``: the verdicts present, counted over
    distinct comparisons (:func:`fold_restatements`: a run recorded before restatements were folded counts each
    comparison once)."""
    counts = fold_restatements(results)[column].value_counts()
    return f"{title}: " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts)


def family_wise_line(results: pd.DataFrame) -> str:
    """The family-wise verdicts' counts (:func:`family_wise`, per paper within this table), of the claims with an
    anytime p-value."""
    judged = results[results["family_wise"].fillna("") != ""]
    return counts_line(judged, "family_wise", "Family-wise per paper within this table (Holm on the anytime p-values)")


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
            method = str(getattr(r, "method", "") or "")
            stats += f"; {method}" if method and not method.startswith("betting") else ""
        cells = [r.claim, r.paper, r.where, f"**{r.verdict}**", r.comparison, stats, _number(r.detectable), r.quote]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    alpha = results["alpha"].iloc[0] if len(results) else 0.05
    lines += [
        "",
        f"Each interval is the running intersection, over the seeds so far, of an anytime-valid "
        f"{100 * (1 - alpha):g} % confidence sequence for the mean paired difference A - B "
        f"(banditbench.numerics.sequential): it stays valid however seeds were added and whenever the looking "
        f"stopped, so the verdict is read at the last look. Unless a row names another method, it is the betting "
        f"(hedged-capital) confidence sequence on the range of A - B that the environment's declared metric range "
        f"gives, valid for any distribution there; a Gaussian t interval is a claim's opt-in, named with its reason. "
        f"supported: on the claimed side of 0; contradicted: on the other side; not separated: it contains 0, and "
        f"'detectable' is its half-width, the smallest difference these seeds could have separated. Error rate "
        f"{alpha:g} per claim; the family-wise line judges each paper's claims in this table together, per table "
        f"(Holm's step-down on the anytime-valid p-values: family-wise error <= {alpha:g} over the paper's claims in "
        f"this table; the CSV's family_wise column). Counts are of distinct comparisons.",
    ]
    return "\n".join(lines) + "\n"


def read_cells(seeds: str | Path, timing: str | Path | None = None) -> dict[tuple, pd.Series]:
    """An experiment's :func:`cell_values` from its per-seed table and, where the file is there, its per-seed
    timing table (written beside it since timing claims read it)."""
    from .seedtable import read_seeds, read_timing

    timing = read_timing(timing) if timing is not None and Path(timing).is_file() else None
    return cell_values(read_seeds(seeds), timing)


def read_tables(experiments, results_dir: str | Path = "results") -> dict[str, dict[tuple, pd.Series] | None]:
    """Each experiment's :func:`cell_values` from its tables in ``results_dir/tables`` (a run's folder,
    ``results/<run>``: ``E.parquet`` and ``E.timing.parquet``; None where they are not there yet)."""
    out = {}
    for name in experiments:
        path = Path(results_dir) / "tables" / f"{name}.parquet"
        out[name] = read_cells(path, path.with_suffix(".timing.parquet")) if path.is_file() else None
    return out


#: the verdicts that end a claim's looking (its interval is on one side of 0, or it cannot be run)
DECIDED = ("supported", "contradicted", "untestable")


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

    The stopping rule.  Each look reads the per-seed tables and judges every claim (:func:`evaluate`) on the
    running intersection of its confidence sequence over all its paired seeds so far; a claim is decided when
    that interval lies on one side of 0 (or it is untestable).  The experiments of the claims still *not
    separated* or *not run* get ``step`` more seeds (their total rounded up to a multiple of ``step``, at most
    ``max_seeds``), and Snakemake runs just those experiments' simulations and tables, with only the algorithms
    those claims compare (a sliced copy of the config: ``only_experiments`` and ``only_algorithms``, and
    ``seeds_per_job = step``); the looking ends when no claim is open or every open claim's experiment has
    ``max_seeds``.  The verdicts are those of the last look, each on all the seeds its comparison has then
    (seeds added for other claims of the same algorithms included): the running intersection is a confidence
    sequence too, valid at this data-dependent stopping time, and it only narrows, so a claim decided at an
    earlier look keeps its side (unless the intersection empties, a miss of probability at most alpha, which
    reads *not separated*).  Finished seeds are reused (a seed's file does not depend on the blocking).

    An experiment whose results are not there yet is first run with its configured seeds; ``start_seeds`` starts
    every experiment at that many seeds instead (at most its configured ones: a paper grid's 200 trials begun at
    10), its tables rebuilt for them first.  ``only_experiments`` and ``only_algorithms`` restrict the looking to
    the claims of those experiments and comparing only those algorithms (the slicing keys of the same names: a
    paper grid's cheap cells).  ``say`` gets one progress line per look.  The table's ``attrs`` say how it was
    reached: ``looks``, ``seeds`` per experiment, ``cpu_s`` of the Snakemake runs, and ``differences``, the
    per-seed differences of the last look (:func:`differences_table`).
    """
    import resource

    looks = _Looks.start(config_path, results_dir, only_experiments, only_algorithms, start_seeds)
    grid, cpu0, look = looks.grid, resource.getrusage(resource.RUSAGE_CHILDREN), 0
    while True:
        look += 1
        tables = looks.read(results_dir)
        results = evaluate(grid.claims, tables, grid.claims_alpha)
        open_claims = [
            grid.claims[cid]
            for cid, v in zip(results["claim"], results["verdict"])
            if v not in DECIDED and not grid.claims[cid].skipped
        ]
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = max(0.0, cpu.ru_utime + cpu.ru_stime - cpu0.ru_utime - cpu0.ru_stime)
        shown = ", ".join(f"{name} {looks.seeds[name]}" for name in grid.claim_experiments())
        say(
            f"look {look}: {len(results) - len(open_claims)} of {len(results)} claims decided; "
            f"seeds: {shown}; CPU {spent:.0f} s"
        )
        grow = looks.grow(open_claims, tables, max_seeds, step)
        if not grow:
            break
        looks.run_snakemake(grow, open_claims, step, cores, results_dir, snakemake_args, look)
    seeds = {name: looks.seeds[name] for name in grid.claim_experiments()}
    results.attrs.update(looks=look, seeds=seeds, cpu_s=spent, differences=differences_table(grid.claims, tables))
    return results


class _Looks:
    """The state of :func:`until_decided` between looks: the config, its grid, the looks' run, the seeds per
    experiment, the experiments whose tables must first be rebuilt for their starting seeds, and every cell's
    values so far (:meth:`read`)."""

    def __init__(self, config, grid, run: str, env: dict, seeds: dict[str, int], rebuild: set[str]):
        self.config, self.grid, self.run, self.env, self.seeds, self.rebuild = config, grid, run, env, seeds, rebuild
        self.cells: dict[str, dict[tuple, pd.Series]] = {}

    @classmethod
    def start(cls, config_path, results_dir, only_experiments, only_algorithms, start_seeds) -> "_Looks":
        import json
        import os

        from ..configuration.grid import load_config_file, load_grid
        from ..configuration.runs import OWNER_VAR, check_owner, owner, run_name

        config = load_config_file(config_path)
        # every look writes its tables to one run of its own, results/<config's run>.claims (given on the command
        # line: the looks' slices differ, their namespace does not)
        run = f"{run_name(config, [config_path], {})}.claims"
        # the looks run sliced copies of the config: the run belongs to the config itself
        looks_owner = owner([config_path], {})
        check_owner(run, looks_owner, results_dir)
        env = {**os.environ, OWNER_VAR: json.dumps(looks_owner)}
        for key, names in (("only_experiments", only_experiments), ("only_algorithms", only_algorithms)):
            if names:
                config[key] = list(names)
        grid = load_grid(config)
        seeds = {name: len(exp.seeds) for name, exp in grid.experiments.items()}
        rebuild = set()
        if start_seeds is not None:
            seeds = {name: min(n, start_seeds) for name, n in seeds.items()}
            rebuild = set(grid.claim_experiments())
        return cls(config, grid, run, env, seeds, rebuild)

    def read(self, results_dir) -> dict[str, dict | None]:
        """Each claim experiment's cells (:func:`cell_values`) as of this look, None where it has no results yet: a
        look's table holds only the algorithms that look ran (a sliced config), so each cell keeps its values from
        the last table that had it (the cells of a decided claim's algorithms stop growing there)."""
        tables = read_tables(self.grid.claim_experiments(), Path(results_dir) / self.run)
        tables.update({name: None for name in self.rebuild})
        self.rebuild = set()
        for name, cells in tables.items():
            if cells is not None:
                self.cells.setdefault(name, {}).update(cells)
        return {name: self.cells.get(name) for name in tables}

    def grow(self, open_claims, tables, max_seeds: int, step: int) -> set[str]:
        """The experiments the next look runs (none: the looking ends): those of open claims without results
        yet, at their seeds, and those below ``max_seeds``, with ``step`` more."""
        missing = {c.experiment for c in open_claims if tables[c.experiment] is None}
        more = {c.experiment for c in open_claims if self.seeds[c.experiment] < max_seeds} - missing
        for name in more:
            self.seeds[name] = min(max_seeds, -(-(self.seeds[name] + 1) // step) * step)
        return missing | more

    def run_snakemake(self, grow, open_claims, step, cores, results_dir, snakemake_args, look: int) -> None:
        """Snakemake on a sliced copy of the config: the ``grow`` experiments' tables at their seeds, with only
        the algorithms the open claims compare; a failure raises ``RuntimeError`` with the output's tail."""
        import subprocess
        import sys
        import tempfile

        import yaml

        algorithms = sorted(
            {s.algorithm for c in open_claims if c.experiment in grow for s in (c.a, c.b) if s.algorithm is not None}
        )
        sliced = {**self.config, "only_experiments": sorted(grow), "only_algorithms": algorithms}
        sliced["experiments"] = {
            name: {**spec, "seeds": list(range(self.seeds[name])), "seeds_per_job": step} if name in grow else spec
            for name, spec in self.config["experiments"].items()
        }
        sliced.pop("seeds", None)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=".", prefix=".claims-look-", delete=False) as f:
            yaml.safe_dump(sliced, f, sort_keys=False)
        try:
            targets = [f"{results_dir}/{self.run}/tables/{name}.parquet" for name in sorted(grow)]
            done = subprocess.run(
                [sys.executable, "-m", "snakemake", *targets, "--cores", str(cores), "--configfile", f.name,
                 "--config", f"run={self.run}", *snakemake_args],
                capture_output=True, text=True, env=self.env,
            )  # fmt: skip
        finally:
            Path(f.name).unlink()
        if done.returncode != 0:
            raise RuntimeError(f"look {look}: snakemake failed:\n{(done.stdout + done.stderr)[-3000:]}")
