"""Regret against compute (issue 49): the final metric is the tidy table's, the CPU seconds per seed the result
files' timing records (a seed-batched block's share counted once per block), the tables follow the table
conventions and the figure fits its image."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_figures import _check_saved  # the figure checks of every other figure (tests/analysis/test_figures.py)

from banditbench.analysis.aggregate import aggregate_experiment
from banditbench.analysis.compute import compute_figure, compute_table, seed_cpu, write_compute
from banditbench.analysis.seedtable import collect_runs
from banditbench.storage.resultio import save_result
from conftest import CELL

T = 20
#: per algorithm: the seeds' blocks, each block's per-seed CPU seconds as the runner records them, and whether
#: the block ran seed-batched (its time shared equally: batched_block = its size)
PLAN = {
    "single": [((0, 1, 2), [1.0, 2.0, 3.0], False)],  # one job, seeds one after the other: three measurements
    "batched": [((0, 1), [4.0, 4.0], True), ((2,), [5.0], True)],  # two blocks: two measurements
    "one_block": [((0, 1, 2), [0.5, 0.5, 0.5], True)],  # one block: one measurement, no interval
}


def _runs(tmp_path, plan=PLAN, delays=("none", "geo"), cpu=True):
    """Result files as simulate jobs write them (results/runs/<exp>/<alg>/<delay>/<budget>/<cell>/<seed>.npz)."""
    paths = []
    rng = np.random.default_rng(0)
    for d, delay in enumerate(delays):
        for alg, blocks in plan.items():
            for seeds, shares, batched in blocks:
                for seed, share in zip(seeds, shares):
                    cell = {
                        "experiment": "exp",
                        "algorithm": alg,
                        "delay_label": delay,
                        "budget": None,
                        "horizon": T,
                        "seed": seed,
                    }
                    path = tmp_path / "runs/exp" / alg / delay / "none" / CELL / f"{seed}.npz"
                    timing = {"wall_time_s": share * 1.1, "block": list(seeds)}
                    if cpu:
                        timing["cpu_time_s"] = share * (1 + d)
                    if batched:
                        timing["batched_block"] = len(seeds)
                    save_result(path, {"regret": rng.random(T)}, {"cell": cell, "metrics": ["regret"]}, timing)
                    paths.append(str(path))
    return paths


def _aggregate(tmp_path, runs):
    """The tidy table's path; the per-seed timing table beside it (``t.timing.parquet``), as the aggregate rule
    writes them."""
    out = {k: tmp_path / f"t.{k}" for k in ("csv", "md", "tex", "curves")}
    aggregate_experiment(
        runs, "exp", [10, T], out["csv"], out["md"], out["tex"], out["curves"], "cumulative_regret", workers=1,
        timing_file=tmp_path / "t.timing.parquet",
    )  # fmt: skip
    return out["csv"]


def _timing(runs):
    return collect_runs(runs, "exp", [T])[1]


def test_numbers_are_the_tidy_tables_final_metric_and_the_recorded_cpu_time(tmp_path):
    runs = _runs(tmp_path)
    tidy_csv = _aggregate(tmp_path, runs)
    out = {k: tmp_path / f"c.{k}" for k in ("csv", "md", "tex", "html", "pdf", "png")}
    style = {"names": {"single": "Single-seed", "batched": "Seed-batched"}}
    write_compute(
        tmp_path / "t.timing.parquet", tidy_csv, "exp", "cumulative_regret", out["csv"], out["md"], out["tex"], out["html"],
        [out["pdf"], out["png"]], plot=style, run="default",
    )  # fmt: skip
    table = pd.read_csv(out["csv"], dtype={"budget": str})
    tidy = pd.read_csv(tidy_csv, dtype={"budget": str})
    final = tidy[(tidy["metric"] == "cumulative_regret") & (tidy["t"] == T)]
    merged = table.merge(final, on=["algorithm", "delay", "budget"], suffixes=("", "_tidy"))
    assert len(merged) == len(table) == 3 * 2
    for column in ("t", "mean", "ci_low", "ci_high", "n"):
        assert (merged[column] == merged[f"{column}_tidy"]).all(), column  # the tidy table's numbers, as they are
    q2, q1 = stats.t.ppf(0.975, 2), stats.t.ppf(0.975, 1)
    for d, delay in enumerate(("none", "geo")):
        rows = table[table["delay"] == delay].set_index("algorithm")
        scale = 1 + d
        # single-seed path: each seed its own measurement
        single = rows.loc["single"]
        assert single["cpu_s"] == pytest.approx(2.0 * scale) and single["cpu_n"] == 3 and single["cpu_seeds"] == 3
        assert single["cpu_high"] - single["cpu_s"] == pytest.approx(q2 * scale / np.sqrt(3))
        # seed-batched: the per-seed mean is the total over the seeds; one measurement per block
        batched = rows.loc["batched"]
        assert batched["cpu_s"] == pytest.approx(13 / 3 * scale) and batched["cpu_n"] == 2
        half = q1 * np.std([4.0 * scale, 5.0 * scale], ddof=1) / np.sqrt(2)
        assert batched["cpu_high"] - batched["cpu_s"] == pytest.approx(half)
        assert batched["cpu_s"] - batched["cpu_low"] == pytest.approx(half)
        one = rows.loc["one_block"]
        assert one["cpu_s"] == pytest.approx(0.5 * scale) and one["cpu_n"] == 1 and np.isnan(one["cpu_high"])
    # the table conventions: display names, the \label, a true minus, the interval named
    md, tex, page = out["md"].read_text(), out["tex"].read_text(), out["html"].read_text()
    assert "| none | Single-seed |" in md and "| geo | one_block |" in md and "1 measurement |" in md
    assert r"\label{tab:default-exp-compute}" in tex and "Seed-batched &" in tex and "95 \\% Student-t" in tex
    assert "Single-seed" in page and "<table" in page
    assert out["pdf"].read_bytes()[:4] == b"%PDF" and out["png"].stat().st_size > 5_000


def test_the_timing_table_holds_each_result_files_cpu_time_and_its_measurement(tmp_path):
    runs = _runs(tmp_path, delays=("none",))
    seeds = seed_cpu(_timing(runs)).set_index(["algorithm", "seed"])
    assert seeds.loc[("single", 2), "cpu_s"] == 3.0 and seeds.loc[("batched", 2), "cpu_s"] == 5.0
    assert seeds.loc[("batched", 0), "measurement"] == seeds.loc[("batched", 1), "measurement"]
    assert seeds.loc[("batched", 0), "measurement"] != seeds.loc[("batched", 2), "measurement"]
    assert seeds.loc[("single", 0), "measurement"] != seeds.loc[("single", 1), "measurement"]


def test_a_run_without_recorded_cpu_time_is_named_not_drawn(tmp_path):
    runs = _runs(tmp_path, {"old": [((0, 1), [1.0, 1.0], False)], "new": [((0, 1), [1.0, 2.0], False)]}, cpu=False)
    table = compute_table(_aggregate(tmp_path, runs), seed_cpu(_timing(runs)), "cumulative_regret")
    assert table["cpu_s"].isna().all()
    fig = compute_figure(table, "exp")
    assert "No CPU time recorded for: old, new" in " ".join(t.get_text().replace("\n", " ") for t in fig.texts)


@pytest.mark.parametrize("style", [None, {"width": "single"}, {"width": "double", "yscale": "log"}])
def test_the_figure_fits_its_image(tmp_path, style):
    long = {
        "ideal_policy_with_a_long_name": [((0, 1, 2), [0.01, 0.02, 0.03], False)],
        "NVLDB-UCB-ASYM-with-algorithm-1s-variance-estimate": [((0, 1, 2), [3.0, 3.0, 3.0], True)],
        "random_pair_baseline_drawn_uniformly_at_random": [((0, 1, 2), [0.001, 0.002, 0.004], False)],
        "short": [((0, 1), [20.0, 20.0], True), ((2,), [30.0], True)],
    }
    runs = _runs(tmp_path, long, delays=("none", "geometric_mean20_M50_with_a_window", "uniform_1_100"))
    table = compute_table(_aggregate(tmp_path, runs), seed_cpu(_timing(runs)), "cumulative_regret")
    title = "a long experiment name: cumulative regret at the final horizon against CPU seconds per seed"
    fig = compute_figure(table, title, style)
    assert fig.axes[0].get_xscale() == "log"  # by default
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 3
    _check_saved(fig, tmp_path, "compute")
    labels = [t.get_text().replace("\n", "") for t in fig.legends[0].get_texts()]
    assert [s.replace(" ", "") for s in labels] == [s.replace(" ", "") for s in long]
