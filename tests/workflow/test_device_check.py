"""The GPU machine's preparations (issue 37): profiles/gpu and benchmarks/device_check.py, tested on the CPU."""

import json
import os
import subprocess
import sys

import pytest
import torch
import yaml

from conftest import ROOT
from smk import copy_project, planned, smk

E3 = ["--configfile", "config/variance_dueling.yaml", "--config"]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("gpu"), yaml.safe_load((ROOT / "config.yaml").read_text()))


def _table_e3_jobs(project, *config) -> dict[str, int]:
    """The simulate jobs ``profiles/gpu`` plans for Table E.3 on the CPU (device=cpu), ``config`` added."""
    run = smk(
        project,
        "-n",
        "--workflow-profile",
        "profiles/gpu",
        *E3,
        "device=cpu",
        "seeds_per_job=100",
        *config,
        "only_experiments=vdb_square_d20_T10000",
    )
    assert run.returncode == 0, run.stderr
    return {rule: n for rule, n in planned(run.stdout).items() if rule.startswith("simulate")}


def test_the_gpu_profile_plans_one_job_per_cell(project):
    """All 20 seeds of a Table E.3 cell in one job (seeds_per_job=100), on the CPU here (device=cpu)."""
    assert _table_e3_jobs(project) == {"simulate_seeds_0_to_19": 7}
    profile = yaml.safe_load((ROOT / "profiles/gpu/config.yaml").read_text())
    assert "device=cuda" in profile["config"] and "gpu=4" in profile["resources"]
    assert "lockstep_variants=True" in profile["config"]


def test_the_gpu_profile_plays_table_e3s_six_variants_in_one_job(project):
    """lockstep_variants: the six NVLDB variants x 20 seeds one job, random pairs (no seed-batched engine) its own."""
    jobs = _table_e3_jobs(project, "lockstep_variants=True")
    assert sorted(jobs.values()) == [1, 1] and all(rule.startswith("simulate_variants_") for rule in jobs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is there")
def test_the_gpu_profile_without_a_gpu_is_refused_before_any_job_naming_the_key(project):
    run = smk(
        project,
        "-n",
        "--workflow-profile",
        "profiles/gpu",
        *E3,
        "device=cuda",
        "only_experiments=vdb_square_d20_T10000",
    )
    assert run.returncode != 0
    assert "device: 'cuda' was asked for but torch sees no GPU" in run.stdout + run.stderr
    assert "simulate" not in run.stdout


@pytest.mark.slow
def test_the_device_check_smoke_runs_every_step(tmp_path):
    """``device_check.py --smoke``: every step done (or skipped with its reason), the summary written, the smoke
    Table E.3 copied out; under two minutes on two cores."""
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks/device_check.py"), "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["device"] == "cpu" and summary["mode"].startswith("smoke")
    steps = {s["name"]: s for s in summary["steps"]}
    assert list(steps) == ["cuda_tests", "speed", "table_e3", "seed000_neural"]
    for step in steps.values():
        assert step["status"] == "done" or (step["status"] == "skipped" and step["reason"]), step
    assert steps["table_e3"]["status"] == "done"
    table = (out / "table_e3" / "vdb_square_d20_T10000.md").read_text()
    assert "NVLDB-UCB-ASYM" in table and "n = 2 seeds" in table
    # lockstep_variants: the six NVLDB variants in one job, random pairs in its own
    assert len(steps["table_e3"]["jobs"]) == 2 and not steps["table_e3"]["cpu_fallbacks"]
    assert json.loads((out / "speed" / "rows.json").read_text())
    assert (out / "summary.md").read_text().count("| done |") >= 3
