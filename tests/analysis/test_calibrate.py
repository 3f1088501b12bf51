"""``banditbench claims calibrate RUN`` (banditbench.analysis.calibrate): each claim's false-separation rate per
method, its committed per-seed differences recentred and resampled under the run's look schedule."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from banditbench.analysis.calibrate import Schedule, calibrate, read_run, schedule
from banditbench.cli import main
from banditbench.errors import ConfigError

COMMAND = (
    "banditbench claims config/x.yaml --until-decided --max-seeds 40 --step 10 --cores 2 --only-experiments e "
    "--start-seeds 10"
)
RESAMPLES = 1000
#: alpha + 3 Monte-Carlo standard errors at RESAMPLES
TOLERANCE = 0.05 + 3 * np.sqrt(0.05 * 0.95 / RESAMPLES)


def _write_run(folder, name="synthetic"):
    """Two claims of 20 seeds: a lock-in (16 seeds near -1, 4 near +4, on [-5, 5]) that opted into the Gaussian
    t-CS, and normal differences judged by the default."""
    rng = np.random.default_rng(0)
    lock_in = np.r_[rng.uniform(-1.5, -0.5, 16), rng.uniform(3.5, 4.5, 4)]
    rng.shuffle(lock_in)
    normal = rng.normal(0.3, 1.0, 20)
    (folder / f"{name}.json").write_text(json.dumps({"command": COMMAND}))
    pd.DataFrame({
        "claim": ["lock_in", "normal", "untested"], "paper": ["001", "001", "001"], "alpha": 0.05,
        "method": ["Gaussian t-CS (opt-in: read as Gaussian)", "betting CS (hedged capital) on [-10, 10]", ""],
        "range_low": [-5.0, -10.0, np.nan], "range_high": [5.0, 10.0, np.nan],
    }).to_csv(folder / f"{name}.csv", index=False)  # fmt: skip
    pd.DataFrame({
        "claim": ["lock_in"] * 20 + ["normal"] * 20, "seed": [*range(20), *range(20)], "difference": [*lock_in, *normal]
    }).to_csv(folder / f"{name}.differences.csv", index=False)  # fmt: skip


def test_the_look_schedule_is_read_off_the_runs_command():
    assert schedule(COMMAND) == Schedule(10, 10, 40)
    assert schedule(COMMAND).describe() == "looks at 10 seeds, then every 10 seeds up to 40"
    plain = schedule("banditbench claims config.yaml --until-decided --max-seeds 24 --step 4 --cores 2")
    assert plain == Schedule(None, 4, 24) and "each experiment's configured seeds" in plain.describe()
    with pytest.raises(ConfigError, match="not a claims run with --until-decided"):
        schedule("banditbench claims config.yaml")


def test_a_gaussian_opt_in_on_a_lock_in_separates_a_zero_mean_too_often_where_the_default_does_not(tmp_path):
    _write_run(tmp_path)
    _, results, differences = read_run("synthetic", tmp_path)
    table = calibrate(results, differences, 40, RESAMPLES).set_index("claim")
    assert list(table.index) == ["lock_in", "normal"]  # a claim without differences is left out
    lock_in = table.loc["lock_in"]
    assert lock_in["gaussian-t"] > 0.2 > TOLERANCE  # the lock-in is missing from the first seeds: a false side
    assert lock_in["betting"] <= TOLERANCE and lock_in["empirical-bernstein"] <= TOLERANCE
    assert (table[["betting", "empirical-bernstein"]] <= TOLERANCE).all().all()
    assert table.loc["normal", "gaussian-t"] <= TOLERANCE  # normal differences: the t-CS keeps its level too
    again = calibrate(results, differences, 40, RESAMPLES).set_index("claim")
    assert again.equals(table)  # the resampling is seeded


def test_the_command_prints_the_rate_per_claim_and_method(tmp_path, capsys):
    _write_run(tmp_path)
    argv = ["claims", "calibrate", "synthetic", "--runs", str(tmp_path), "--resamples", str(RESAMPLES)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"False separations of a zero mean: each claim's differences recentred and resampled {RESAMPLES} times, "
        f"looks at 10 seeds, then every 10 seeds up to 40, alpha 0.05"
    )
    assert "| claim | n | its method | betting (default) | PrPl-EB | Gaussian t-CS |" in out
    row = re.search(
        r"^\| lock_in \| 20 \| Gaussian t-CS \(opt-in: read as Gaussian\) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$",
        out,
        re.M,
    )
    assert row and float(row.group(1)) <= TOLERANCE < float(row.group(3))
    assert re.search(r"^Gaussian t-CS: mean [\d.]+, max [\d.]+, 1 of 2 claims above 0\.0707$", out, re.M)
    assert re.search(r"^betting \(default\): mean [\d.]+, max [\d.]+, 0 of 2 claims above 0\.0707$", out, re.M)


def test_a_run_without_its_differences_or_ranges_is_refused_saying_why(tmp_path, capsys):
    _write_run(tmp_path)
    (tmp_path / "synthetic.differences.csv").unlink()
    assert main(["claims", "calibrate", "synthetic", "--runs", str(tmp_path)]) == 2
    assert "synthetic.differences.csv: recorded before runs kept their per-seed differences" in capsys.readouterr().err
    _write_run(tmp_path)
    pd.read_csv(tmp_path / "synthetic.csv").drop(columns=["range_low"]).to_csv(tmp_path / "synthetic.csv")
    with pytest.raises(ConfigError, match="no range_low / range_high columns"):
        read_run("synthetic", tmp_path)
