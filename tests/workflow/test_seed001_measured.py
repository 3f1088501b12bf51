"""Seed 001's measured tables on its docs page are generated from the committed per-seed summary
(``benchmarks/seed001_measure.py``), and the rendering computes what its captions say."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import load_script  # noqa: E402


@pytest.fixture(scope="module")
def measure():
    return load_script("benchmarks/seed001_measure.py")


def test_the_page_block_is_the_rendering_of_the_committed_summary(measure):
    summary, meta = measure.load_summary()
    block = measure.page_block(measure.PAGE.read_text())
    assert block == measure.render(summary, meta), "run: python benchmarks/seed001_measure.py render"
    for command in meta["commands"]:
        assert f"```bash\n{command}\n```" in block
    # every reading and strategy of the Statlog claim, every algorithm of Table E.3
    for reading in measure.STATLOG.values():
        assert sum(line.startswith(f"| {reading} | ") for line in block.splitlines()) == len(measure.STRATEGIES)
    for algorithm in measure.TABLE_E3_ALGORITHMS:
        assert f"\n| {algorithm} | " in block


def _summary(measure, nvldb, nldb, late=(1.0, 0.5)):
    """A summary in which every reading and strategy has NVLDB's and NLDB's per-seed values ``nvldb``,
    ``nldb`` and the late self-duel rates ``late``; Table E.3 rows 1, 2, 3, 4 per algorithm."""
    rows = []
    for experiment in measure.STATLOG:
        for strategy in measure.STRATEGIES:
            for family, values, rate in (("NVLDB", nvldb, late[0]), ("NLDB", nldb, late[1])):
                for seed, value in enumerate(values):
                    rows.append((experiment, f"{family}-{strategy}", seed, 200, "per_round_average_regret", value))
                    rows.append((experiment, f"{family}-{strategy}", seed, 200, "late_self_duel_rate", rate))
    for k, algorithm in enumerate(measure.TABLE_E3_ALGORITHMS):
        for seed in range(3):
            for metric in measure.REGRETS:
                rows.append((measure.TABLE_E3, algorithm, seed, 2000, metric, k + 1.0 + seed))
            rows.append((measure.TABLE_E3, algorithm, seed, 2000, "per_round_self_duel", 0.25))
    return pd.DataFrame(rows, columns=["experiment", "algorithm", "seed", "t", "metric", "value"])


def test_the_statlog_rows_hold_the_paired_difference_and_the_late_self_duel_shares(measure):
    nvldb, nldb = np.array([0.0, 0.1, 0.0, 0.3]), np.array([0.5, 0.1, 0.4, 0.2])
    lines = measure.statlog_table(_summary(measure, nvldb, nldb))
    row = next(line for line in lines if line.startswith("| label_coin | TS-OSYM |"))
    d = nvldb - nldb
    half = stats.t.ppf(0.975, 3) * d.std(ddof=1) / 2
    assert f"| {d.mean():.3f} ± {half:.3f} | 2/4 | 100 % / 50 % |" in row  # NVLDB lower on seeds 0 and 2
    assert f"(med {np.median(nvldb):.3f})" in row and f"(med {np.median(nldb):.3f})" in row


def test_table_e3_shows_each_regret_reading_of_each_algorithm(measure):
    lines = measure.table_e3(_summary(measure, [0.0], [0.0]))
    assert [name in lines[0] for name in ("average", "weak", "total")] == [True] * 3
    half = stats.t.ppf(0.975, 2) * 1.0 / np.sqrt(3)
    assert lines[2] == f"| NVLDB-UCB-ASYM | 2.000 ± {half:.3f} | 2.000 ± {half:.3f} | 2.000 ± {half:.3f} | 25 % |"
    assert lines[-1].startswith("| Random-extra | 5.000 ± ")


def test_seeds_the_two_algorithms_do_not_share_are_refused(measure):
    summary = _summary(measure, [0.0, 0.1, 0.2], [0.1, 0.1, 0.1])
    summary = summary[~((summary.algorithm == "NLDB-UCB-ASYM") & (summary.seed == 1))]
    with pytest.raises(ValueError, match="different seeds"):
        measure.statlog_table(summary)
