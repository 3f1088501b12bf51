"""Lockstep across variants (issue 37, item 3): with ``lockstep_variants`` one simulate job plays every algorithm
of a cell that one seed-batched engine can hold (seed 001's NVLDB / NLDB variants, differing in pair rule,
weighting and per-member parameters), writing the same result files, bit for bit, as one job per algorithm."""

import pandas as pd
import pytest
import yaml

from banditbench.configuration.grid import load_grid
from smk import copy_project, members_but_timing, planned, smk

NET = {"width": 8, "train_steps": 2}
CONFIG = {
    "experiments": {
        "tiny": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4, "utility": "square"}},
            "horizon": 30,
            "seeds": 2,
            "seeds_per_job": 2,
            "table_horizons": [30],
            "algorithms": {
                "NVLDB-UCB-ASYM": {"policy": "nvldb_ucb_asym", "params": NET},
                "NVLDB-TS-CSYM": {"policy": "nvldb_ts_csym", "params": {**NET, "epsilon": 0.2}},
                "NLDB-UCB-OSYM": {"policy": "nldb_ucb_osym", "params": {**NET, "zeta": 0.5}},
                "NVLDB-wide": {"policy": "nvldb_ucb_asym", "params": {**NET, "width": 12}},
                "Random": {"policy": "random_pair"},
            },
            "delays": {"none": {"kind": "none"}},
        }
    }
}
LOCKSTEP = ("NVLDB-UCB-ASYM", "NVLDB-TS-CSYM", "NLDB-UCB-OSYM")


def test_variants_that_share_an_engine_are_grouped_and_others_run_alone():
    grid = load_grid({**CONFIG, "lockstep_variants": True})
    assert grid.variant_groups("tiny") == [LOCKSTEP, ("NVLDB-wide",), ("Random",)]
    assert grid.variant_jobs() == [
        ("tiny", LOCKSTEP, "none", "none", (0, 1)),
        ("tiny", ("NVLDB-wide",), "none", "none", (0, 1)),
        ("tiny", ("Random",), "none", "none", (0, 1)),
    ]
    assert grid.seed_blocks() == {}  # no per-algorithm job
    assert load_grid(CONFIG).variant_jobs() == []


@pytest.mark.slow
def test_a_lockstep_job_writes_the_per_algorithm_jobs_results_bit_for_bit(tmp_path):
    (tmp_path / "plain").mkdir(), (tmp_path / "lockstep").mkdir()
    plain = copy_project(tmp_path / "plain", CONFIG)
    lockstep = copy_project(tmp_path / "lockstep", CONFIG)
    on = ("--config", "lockstep_variants=True")

    dry = smk(lockstep, "-n", *on)
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = {rule: n for rule, n in planned(dry.stdout).items() if rule.startswith("simulate")}
    assert jobs == {"simulate_variants_0": 1, "simulate_variants_1": 1, "simulate_variants_2": 1}

    for work, args in ((plain, ()), (lockstep, on)):
        run = smk(work, "--quiet", *args)
        assert run.returncode == 0, run.stderr[-3000:]
    files = sorted(p.relative_to(plain) for p in (plain / "results/runs").rglob("*.npz"))
    assert len(files) == 5 * 2
    for f in files:
        assert members_but_timing(lockstep / f) == members_but_timing(plain / f), f

    # the timing table: the lockstep job is one row naming its three algorithms, measured once
    timing = pd.read_csv(lockstep / "results/default/timing/tiny.csv")
    rows = sorted(tuple(sorted(a.split(" + "))) for a in timing["algorithm"])
    assert rows == sorted([tuple(sorted(LOCKSTEP)), ("NVLDB-wide",), ("Random",)])
    assert timing.set_index("algorithm")["seeds"].to_dict() == dict.fromkeys(timing["algorithm"], 2 * 3) | {
        "NVLDB-wide": 2,
        "Random": 2,
    }

    # editing one member re-simulates only that member: the others' kept results are put back
    edited = {**CONFIG["experiments"]["tiny"]}
    edited["algorithms"] = {**edited["algorithms"], "NVLDB-TS-CSYM": {"policy": "nvldb_ts_csym", "params": NET}}
    (lockstep / "config.yaml").write_text(yaml.safe_dump({"experiments": {"tiny": edited}}))
    before = {f: (lockstep / f).read_bytes() for f in files}
    rerun = smk(lockstep, "--quiet", *on)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    # the edited member's results go to its new cell folder; the others' are put back, the same bytes
    new = {p.relative_to(lockstep) for p in (lockstep / "results/runs").rglob("*.npz")} - set(files)
    assert new and all("NVLDB-TS-CSYM" in str(f) for f in new), new
    assert {f: (lockstep / f).read_bytes() for f in files} == before
    (log,) = (lockstep / "logs/simulate/tiny").glob("*+2/none/none/*/*.log")  # the group: its first label +2
    assert log.read_text().count("put back as it was") == 2 * 2  # two members x two seeds
    (lockstep / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    assert smk(lockstep, "--quiet", *on).returncode == 0

    # switching it off re-runs no simulation: the per-algorithm jobs put the same results back
    stamps = {f: (lockstep / f).read_bytes() for f in files}
    off = smk(lockstep, "--quiet")
    assert off.returncode == 0, off.stderr[-3000:]
    assert {f: (lockstep / f).read_bytes() for f in files} == stamps
    logs = [p.read_text() for p in (lockstep / "logs/simulate/tiny").rglob("*.log")]
    assert any("put back as it was" in text for text in logs)
