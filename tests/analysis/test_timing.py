"""Timing summary of simulate jobs (Snakemake benchmark files + the runs' timing) and the run information page."""

import numpy as np
import pandas as pd
import pytest

from banditbench.analysis.run_info import grid_table, run_info_html
from banditbench.analysis.timing import job_table, summary_table, write_timing
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.storage.resultio import save_result
from conftest import ROOT

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _block(folder, alg, seeds, sim_s, wall_s, rss="50.5"):
    folder.mkdir(parents=True, exist_ok=True)
    runs = []
    for seed, sim in zip(seeds, sim_s):
        cell = {
            "experiment": "exp",
            "algorithm": alg,
            "delay_label": "none",
            "budget": 300.0,
            "seed": seed,
            "horizon": 3,
        }
        path = folder / f"{seed}.npz"
        save_result(path, {"regret": np.zeros(3)}, {"cell": cell}, {"wall_time_s": sim, "block": list(seeds)})
        runs.append(str(path))
    label = f"seeds_{seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else f"seed_{seeds[0]}"
    (folder / f"{label}.benchmark.tsv").write_text(HEADER + f"{wall_s}\t0:00:10\t{rss}\t1\t1\t1\t0\t0\t0\t{wall_s}\n")
    return runs


def test_jobs_pair_benchmark_files_with_their_seeds(tmp_path):
    runs = (
        _block(tmp_path / "a", "alg1", (0, 1, 2), [2.0, 3.0, 4.0], 10.0)
        + _block(tmp_path / "a", "alg1", (3,), [1.0], 2.0, rss="NA")
        + _block(tmp_path / "b", "alg2", (0, 1, 2, 3), [0.5] * 4, 4.0)
    )
    jobs = job_table(runs).set_index("job")
    assert len(jobs) == 3
    first = jobs.loc["seeds_0-2"]
    assert first["seeds"] == 3 and first["wall_s"] == 10 and first["simulation_s"] == 9 and first["overhead_s"] == 1
    assert first["budget"] == "300" and first["max_rss_mb"] == 50.5 and np.isnan(jobs.loc["seed_3", "max_rss_mb"])
    summary = summary_table(jobs.reset_index())
    assert summary.loc["alg1", "jobs"] == 2 and summary.loc["alg1", "seeds"] == 4
    assert summary.loc["alg1", "overhead [%]"] == pytest.approx(100 * 2 / 12)
    assert summary.loc["all", "overhead [%]"] == pytest.approx(100 * 4 / 16)
    csv, html = tmp_path / "t.csv", tmp_path / "t.html"
    write_timing(runs, "exp", csv, html)
    assert len(pd.read_csv(csv)) == 3
    page = html.read_text()
    assert "<table" in page and "overhead [%]" in page and "seeds_0-2" in page


def test_a_run_not_written_by_a_simulate_job_is_an_error(tmp_path):
    cell = {"experiment": "exp", "algorithm": "alg1", "delay_label": "none", "budget": None, "seed": 0, "horizon": 2}
    save_result(tmp_path / "x.npz", {"regret": np.zeros(2)}, {"cell": cell}, {"wall_time_s": 1.0})
    with pytest.raises(ValueError, match="x.npz: no 'block'"):
        job_table([tmp_path / "x.npz"])


def test_run_info_lists_the_grid_and_versions():
    config = load_config_file(ROOT / "config/knapsack.yaml")
    config["seeds"] = 10
    grid = load_grid(config)
    table = grid_table(grid).set_index("experiment")
    per_job = table.loc["knapsack_synthetic", "seeds per job"]
    assert per_job == grid.experiments["knapsack_synthetic"].seeds_per_job
    assert table.loc["knapsack_synthetic", "runs"] == 4 * 2 * 4 * 10
    assert table.loc["knapsack_synthetic", "simulate jobs"] == 4 * 2 * 4 * -(-10 // per_job)
    assert table.loc["knapsack_car", "budgets"] == "300, 500, 700, 900"
    assert table.loc["knapsack_car", "CI level"] == 0.95
    page = run_info_html(grid, ["config/knapsack.yaml"])
    assert "<code>config/knapsack.yaml</code>; overrides: seeds=10" in page
    assert "Summary tables" not in page and "; 95 % confidence intervals &mdash;" in page
    row = {"experiment": "knapsack_car", "label": "300", "budget": 300, "delay": "none"}
    config["summary_tables"] = {"final": {"metric": "cumulative_reward", "better": "higher", "rows": [row]}}
    page = run_info_html(load_grid(config), ["config/knapsack.yaml"])
    assert "Summary tables: <code>final</code> (cumulative_reward of " in page
    assert "over 1 rows of knapsack_car)" in page
    assert "<code>knapsack_car</code>: car_moderation(" in page and "Seed 004 Table 2" in page
    runs, jobs = table["runs"].sum(), table["simulate jobs"].sum()
    assert f"{runs} runs in {jobs} simulate jobs:" in page
    assert "numpy " + np.__version__ in page and "snakemake " in page
