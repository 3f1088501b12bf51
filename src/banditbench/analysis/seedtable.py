"""One results table per experiment: every run's metrics per seed and horizon, in one Parquet file.

The aggregation reads an experiment's result files once (each checked: path, checksums, provenance)
and keeps, per run (one seed of one algorithm x delay x budget cell), the cumulative series at the
table horizons and on the curve grid (at most ``curve_points`` rounds, always including the horizon),
the running averages of ``per_round_metrics`` there, and the run summaries (e.g. a stopping time) at
the final horizon.  The result is one tidy table, one row per (run, t, metric)::

    experiment, algorithm, delay, budget, seed, t, metric, value, table_horizon,
    commit, dirty, host, cpu, blas, python, banditbench, diverged   [, task]

(``table_horizon`` marks the rows at the experiment's table horizons; the provenance columns are
each run's own, from its ``provenance`` member; ``diverged`` is the round at which the run's policy
diverged, 0 for a run that did not (:func:`banditbench.simulation.job.run_cell`: its values are NaN from
that round on, its summaries NaN; the statistics leave such a run out and count it,
:func:`diverged_runs`); ``task`` only for experiments whose seeds are spread over tasks).  It is written to ``results/<run>/tables/<experiment>.parquet`` and everything downstream —
the statistics tables, the curves, the paired comparisons — is computed from it
(:mod:`banditbench.analysis.aggregate`, :mod:`banditbench.analysis.paired`).  Read it with pandas::

    import pandas as pd
    df = pd.read_parquet("results/default/tables/linear_delayed_dueling.parquet")
    df[df.table_horizon & (df.metric == "cumulative_regret")].groupby(["algorithm", "delay", "t"]).value.mean()

Reading thousands of result files is the cost of an aggregation; :func:`collect_seeds` spreads the
files over ``workers`` processes and assembles the table with whole-array operations.
"""

from __future__ import annotations

import io
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..errors import CorruptFileError
from ..storage.resultio import PARALLEL_READ_FROM, atomic_write_bytes, budget_label, identity_from_path, load_run

#: the tidy columns, in order (``task`` is appended when the experiment has tasks)
SEED_COLUMNS = ["experiment", "algorithm", "delay", "budget", "seed", "t", "metric", "value", "table_horizon"]
#: flat provenance columns (each run's own; None where a result records none)
PROVENANCE_COLUMNS = ["commit", "dirty", "host", "cpu", "blas", "python", "banditbench"]
#: rounds of the curve grid (plots and difference curves)
CURVE_POINTS = 100
#: the column of the round at which a run diverged (0: it did not); a table written before it has none
DIVERGED = "diverged"
#: the per-seed timing table's columns (:func:`collect_runs`): each run's recorded time (its result file's ``timing``
#: member; ``t`` is the run's horizon), the measurement it shares with other seeds (a seed-batched block records
#: one time for its members, each getting an equal share), the engine that played it and the machine
TIMING_COLUMNS = [
    "experiment", "algorithm", "delay", "budget", "seed", "t", "cpu_time_s", "wall_time_s", "measurement",
    "batched_block", "engine", "host", "cpu",
]  # fmt: skip


def diverged_runs(seeds: pd.DataFrame) -> np.ndarray:
    """Per row of a per-seed table: whether the row's run diverged (all False for a table without the column)."""
    if DIVERGED not in seeds.columns:
        return np.zeros(len(seeds), dtype=bool)
    return seeds[DIVERGED].to_numpy() > 0


def curve_grid(horizon: int, points: int = CURVE_POINTS) -> np.ndarray:
    """The rounds the curves are drawn at: at most ``points``, evenly spread, always ``1`` and ``horizon``."""
    return np.unique(np.linspace(1, horizon, min(points, horizon)).round().astype(int))


def _flat_provenance(prov: dict | None) -> tuple:
    if not prov:
        return (None,) * len(PROVENANCE_COLUMNS)
    blas = (
        "; ".join(
            dict.fromkeys(
                " ".join(str(b.get(k)) for k in ("internal_api", "version", "architecture") if b.get(k) is not None)
                for b in prov.get("blas") or []
                if isinstance(b, dict)
            )
        )
        or None
    )
    dirty = prov.get("dirty")
    return (
        prov.get("commit"),
        None if not isinstance(dirty, bool) else ("yes" if dirty else "no"),
        prov.get("host"),
        prov.get("cpu"),
        blas,
        prov.get("python"),
        (prov.get("packages") or {}).get("banditbench"),
    )


def _task_name(cell, summary) -> str | None:
    """The task a run played, for environments that spread seeds over tasks (``task_index`` in the summary),
    marked "(flat, gap G)" when the environment flags it (``flat_task``: its best arm beats the arms'
    mean score by less than the environment's ``flat_gap``, so no algorithm can separate much there)."""
    if "task_index" not in summary:
        return None
    index = int(summary["task_index"])
    tasks = cell.get("environment", {}).get("params", {}).get("tasks")
    name = str(tasks[index]) if tasks and index < len(tasks) else f"task {index}"
    if summary.get("flat_task") == 1:
        name += f" (flat, gap {summary['score_gap']:.2f})" if "score_gap" in summary else " (flat)"
    return name


def _read_run(path: str, experiment: str, per_round: Sequence[str]):
    """One run, checked, reduced to what the table keeps: ``(path, None, run)`` or ``(path, error, None)``.

    ``run`` holds the cell's labels, the seed, the horizon, the metric names with their full cumulative
    series (cut to the grid by the caller, who knows the common horizon), the summaries, the task and
    the flat provenance."""
    expect = identity_from_path(path)
    if expect.get("experiment") != experiment:
        raise ValueError(
            f"{path}: not a run of experiment {experiment!r} "
            f"(expected results/runs/{experiment}/<algorithm>/<delay>/<budget>/<cell>/<seed>.npz)"
        )
    try:
        data, meta, timing, prov = load_run(path, expect)
    except CorruptFileError as err:
        return path, str(err), None
    cell = meta["cell"]
    names, series = [], []
    for name in meta.get("metrics", sorted(data)):  # the environment's order: primary metric first
        names.append(f"cumulative_{name}")
        series.append(np.cumsum(data[name]))
    for name in per_round:
        if name not in data:
            raise ValueError(f"{path}: per-round metric {name!r} is not in the run (it has {sorted(data)})")
        names.append(f"per_round_{name}")
        series.append(np.cumsum(data[name]) / np.arange(1, len(data[name]) + 1))
    summary = meta.get("summary", {})
    return (
        path,
        None,
        {
            "key": (cell["algorithm"], cell["delay_label"], budget_label(cell["budget"])),
            "seed": int(meta.get("seed", cell.get("seed"))),
            "horizon": int(cell["horizon"]),
            "names": tuple(names),
            "series": np.vstack(series) if series else np.empty((0, int(cell["horizon"]))),
            "summary": {k: float(v) for k, v in summary.items()},
            "task": _task_name(cell, summary),
            "provenance": _flat_provenance(prov),
            "diverged": int((meta.get("diverged") or {}).get("round", 0)),
            "timing": _timing(path, cell, meta, timing),
        },
    )


def _timing(path: str, cell: dict, meta: dict, timing: dict) -> tuple:
    """A run's row of the timing table from ``cpu_time_s`` to ``engine`` (:data:`TIMING_COLUMNS`; NaN where its file
    records no time).  Its measurement: the seed-batched block it shared (the job's benchmark file, which names
    the job, for a lockstep job of several algorithms; else the block's folder and seeds), else the run itself.
    Its engine: the path that played it (``meta["engine"]``), with the device where a policy ran on another."""
    batched = int(timing.get("batched_block", 1) or 1)
    if batched > 1:
        parent = Path(path).parent
        block = "-".join(map(str, timing.get("block", [])))
        measurement = str(parent / timing["benchmark"]) if "benchmark" in timing else f"{parent}:{block}"
    else:
        measurement = str(path)
    device = (cell.get("policy") or {}).get("params", {}).get("device", "cpu")
    engine = str(meta.get("engine", "unrecorded")) + ("" if device == "cpu" else f" on {device}")

    def seconds(key: str) -> float:
        value = timing.get(key)
        return float("nan") if value is None else float(value)

    return (seconds("cpu_time_s"), seconds("wall_time_s"), measurement, batched, engine)


def _read_chunk(args):
    paths, experiment, per_round, keep = args
    out = []
    for path in paths:
        path, err, run = _read_run(path, experiment, per_round)
        if run is not None and keep is not None and len(keep) and run["horizon"] >= keep[-1]:
            run["series"] = run["series"][:, keep - 1]  # cut in the worker: less to send back
            run["cut"] = True
        out.append((path, err, run))
    return out


def _read_all(
    runs: Sequence[str], experiment: str, per_round: Sequence[str], keep: np.ndarray | None, workers: int
) -> list:
    runs = [str(p) for p in runs]
    if workers <= 1 or len(runs) < PARALLEL_READ_FROM:
        return _read_chunk((runs, experiment, tuple(per_round), keep))
    size = max(50, -(-len(runs) // (4 * workers)))
    chunks = [(runs[i : i + size], experiment, tuple(per_round), keep) for i in range(0, len(runs), size)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [item for part in pool.map(_read_chunk, chunks) for item in part]


def collect_seeds(
    runs: Sequence[str],
    experiment: str,
    horizons: Sequence[int],
    per_round: Sequence[str] = (),
    remove_corrupt: bool = False,
    curve_points: int = CURVE_POINTS,
    workers: int = 1,
) -> pd.DataFrame:
    """The per-seed table (module docstring) of ``runs`` (:func:`collect_runs` without the timing)."""
    return collect_runs(runs, experiment, horizons, per_round, remove_corrupt, curve_points, workers)[0]


def collect_runs(
    runs: Sequence[str],
    experiment: str,
    horizons: Sequence[int],
    per_round: Sequence[str] = (),
    remove_corrupt: bool = False,
    curve_points: int = CURVE_POINTS,
    workers: int = 1,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-seed table (module docstring) and the per-seed timing table (:data:`TIMING_COLUMNS`, one row per
    run) of ``runs``, from one read of each file, every file checked against the run its path names and its
    checksums.  The timing is a table of its own: a run's time differs between two runs of the same seed, its
    metrics do not, so the per-seed table of a re-run stays byte-identical.

    Every bad file is reported at once, in one :class:`~banditbench.errors.CorruptFileError`; with
    ``remove_corrupt`` they are deleted too, so that the next ``snakemake`` run rebuilds exactly them
    (a corrupt result is never aggregated).  Runs of unequal horizons, or table horizons beyond it, are
    a ``ValueError``.  ``workers`` processes read the files (1: this process).
    """
    runs = [str(p) for p in runs]
    if not runs:
        raise ValueError(f"experiment {experiment!r}: no run files to aggregate")
    # the horizon of the first readable run fixes the grid; the workers cut every run to it
    first = next((r for _, _, r in (_read_run(p, experiment, per_round) for p in runs[:5]) if r is not None), None)
    keep = None
    if first is not None:
        T = first["horizon"]
        too_far = [h for h in horizons if h > T]
        if too_far:
            raise ValueError(f"table horizons {too_far} exceed the runs' horizon {T}")
        keep = np.union1d(curve_grid(T, curve_points), np.asarray(horizons, dtype=int))
    read = _read_all(runs, experiment, per_round, keep, workers)
    bad = [(path, err) for path, err, _ in read if err is not None]
    if bad:
        if remove_corrupt:
            for path, _ in bad:
                Path(path).unlink(missing_ok=True)
        what = (
            f"removed {len(bad)} corrupt result file(s); run snakemake again to rebuild them"
            if remove_corrupt
            else f"{len(bad)} corrupt result file(s); delete them and re-run their jobs"
        )
        raise CorruptFileError("\n".join(err for _, err in bad) + f"\n{what}")
    loaded = [run for _, _, run in read]
    horizons_found = sorted({run["horizon"] for run in loaded})
    if len(horizons_found) > 1:
        raise ValueError(f"runs of one experiment have different horizons {horizons_found}; re-run the stale jobs")
    return _assemble(loaded, experiment, keep, set(int(h) for h in horizons)), _timing_table(loaded, experiment)


def _timing_table(loaded: list, experiment: str) -> pd.DataFrame:
    rows = [
        (experiment, *run["key"], run["seed"], run["horizon"], *run["timing"], *run["provenance"][2:4])
        for run in loaded
    ]
    return pd.DataFrame(rows, columns=TIMING_COLUMNS)


def _codes(values: list, categories: dict) -> np.ndarray:
    return np.fromiter((categories.setdefault(v, len(categories)) for v in values), dtype=np.int32, count=len(values))


def _assemble(loaded: list, experiment: str, keep: np.ndarray, table_t: set[int]) -> pd.DataFrame:
    """The tidy frame of the reduced runs, built with whole-array operations (one small piece per run)."""
    T = int(keep[-1])
    metric_cat: dict[str, int] = {}
    counts, metric_parts, t_parts, value_parts = [], [], [], []
    for run in loaded:
        series = run["series"] if run.get("cut") else run["series"][:, keep - 1]
        names = list(run["names"])
        m, p = series.shape
        summary = run["summary"]
        metric_parts.append(
            np.concatenate([np.repeat(_codes(names, metric_cat), p), _codes(list(summary), metric_cat)])
        )
        t_parts.append(np.concatenate([np.tile(keep, m), np.full(len(summary), T)]))
        value_parts.append(np.concatenate([series.ravel(), np.fromiter(summary.values(), float, len(summary))]))
        counts.append(m * p + len(summary))
    counts = np.asarray(counts)

    def per_run(values: list, categories: dict | None = None) -> pd.Categorical:
        categories = {} if categories is None else categories
        codes = np.repeat(_codes(values, categories), counts)
        names = list(categories)
        if None in categories:  # None is a missing value, not a category
            none = categories[None]
            codes = np.where(codes == none, -1, codes - (codes > none))
            names.remove(None)
        return pd.Categorical.from_codes(codes, categories=names)

    keys = [run["key"] for run in loaded]
    t = np.concatenate(t_parts).astype(np.int64)
    columns: dict[str, Any] = {
        "experiment": pd.Categorical.from_codes(np.zeros(counts.sum(), dtype=np.int8), categories=[experiment]),
        "algorithm": per_run([k[0] for k in keys]),
        "delay": per_run([k[1] for k in keys]),
        "budget": per_run([k[2] for k in keys]),
        "seed": np.repeat(np.fromiter((run["seed"] for run in loaded), np.int64, len(loaded)), counts),
        "t": t,
        "metric": pd.Categorical.from_codes(np.concatenate(metric_parts), categories=list(metric_cat)),
        "value": np.concatenate(value_parts),
        "table_horizon": np.isin(t, sorted(table_t)),
    }
    for i, name in enumerate(PROVENANCE_COLUMNS):
        columns[name] = per_run([run["provenance"][i] for run in loaded])
    columns[DIVERGED] = np.repeat(np.fromiter((run["diverged"] for run in loaded), np.int64, len(loaded)), counts)
    tasks = [run["task"] for run in loaded]
    if any(task is not None for task in tasks):
        columns["task"] = per_run(tasks)
    return pd.DataFrame(columns)


def write_parquet(df: pd.DataFrame, path: str | Path) -> None:
    """Write the per-seed table atomically (the categorical columns dictionary-encoded)."""
    buf = io.BytesIO()
    df.to_parquet(buf, index=False, engine="pyarrow", compression="zstd")
    atomic_write_bytes(path, buf.getvalue())


def read_seeds(path: str | Path) -> pd.DataFrame:
    """A per-seed table written by :func:`write_parquet`, checked: a
    :class:`~banditbench.errors.CorruptFileError` names the file and what is wrong."""
    return _read_checked(path, "per-seed table", SEED_COLUMNS)


def read_timing(path: str | Path) -> pd.DataFrame:
    """A per-seed timing table written by :func:`write_parquet` (:func:`collect_runs`), checked like
    :func:`read_seeds`."""
    return _read_checked(path, "per-seed timing table", TIMING_COLUMNS)


def _read_checked(path: str | Path, what: str, columns: Sequence[str]) -> pd.DataFrame:
    rebuild = "delete it and run snakemake again to rebuild it"
    try:
        df = pd.read_parquet(path, engine="pyarrow")
    except FileNotFoundError:
        raise CorruptFileError(f"{path}: {what} does not exist") from None
    except Exception as err:  # pyarrow's errors for a damaged file are of several types
        raise CorruptFileError(f"{path}: {what} is unreadable ({type(err).__name__}: {err}); {rebuild}") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise CorruptFileError(f"{path}: {what} lacks the columns {missing}; {rebuild}")
    return df


def default_workers() -> int:
    """Processes that read result files: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)
