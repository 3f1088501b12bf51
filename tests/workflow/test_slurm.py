"""The Slurm profile on a real cluster: a tiny grid (with a preprocessing job) gives the local run's bytes.

Runs only where Slurm answers (e.g. after ``../shared/tools/slurm-local.sh start``); skipped otherwise.
"""

import re
import shutil
import subprocess

import pytest

from smk import copy_project, members_but_timing, smk

GRID = {
    "experiments": {
        "dueling": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 4, "n_arms": 5}},
            "horizon": 60,
            "seeds": 3,
            "seeds_per_job": 2,
            "algorithms": {"ldb_df": {"policy": "ldb_df"}, "random": {"policy": "random_pair"}},
            "delays": {"none": {"kind": "none"}, "geo": {"kind": "geometric", "mean": 5, "window": 10}},
        },
        # a preprocessing job whose options key is a wildcard: image_size=4+scaling=feature
        "digits": {
            "environment": {
                "name": "classification_bandit",
                "params": {"dataset": "digits", "preprocessing": {"image_size": 4}},
            },
            "horizon": 50,
            "seeds": 2,
            "seeds_per_job": 2,
            "algorithms": {"linucb": {"policy": "linucb"}},
            "delays": {"none": {"kind": "none"}},
        },
    }
}


def _slurm_cpus() -> int | None:
    """CPUs of a node that is up, or None when there is no working Slurm."""
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        return None
    info = subprocess.run(["sinfo", "-h", "-o", "%c %T"], capture_output=True, text=True)
    up = [
        int(line.split()[0])
        for line in info.stdout.splitlines()
        if info.returncode == 0 and line.split()[1].startswith(("idle", "mixed", "allocated"))
    ]
    return max(up) if up else None


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(_slurm_cpus() is None, reason="no Slurm cluster answers (sbatch/sinfo)"),
]


def test_slurm_profile_reproduces_the_local_run(tmp_path):
    (tmp_path / "local").mkdir()
    (tmp_path / "cluster").mkdir()
    local, cluster = copy_project(tmp_path / "local", GRID), copy_project(tmp_path / "cluster", GRID)
    run = smk(local, "--quiet")
    assert run.returncode == 0, run.stderr[-3000:]
    # docs/running-grids.md, "Running on a cluster": no accounting database here, so squeue tells when jobs end;
    # --cores caps the CPUs of a grouped job at what the node has
    run = smk(
        cluster,
        "--workflow-profile",
        str(cluster / "profiles/slurm"),
        "--slurm-status-command",
        "squeue",
        "--slurm-init-seconds-before-status-checks",
        "5",
        cores=str(min(8, _slurm_cpus())),
        timeout=1200,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    # the console shows progress only (the profile's logger); each submission is in Snakemake's full log
    [full_log] = (cluster / ".snakemake/log").glob("*.snakemake.log")
    submitted = re.findall(r"submitted with SLURM jobid \d+ \(log: \S*/slurm_logs/(\w+)/", full_log.read_text())
    assert "rule_preprocess" in submitted
    assert [s for s in submitted if s.startswith("group_simulations")]  # simulate jobs grouped
    runs = sorted(p.relative_to(local) for p in (local / "results/runs").rglob("*.npz"))
    assert len(runs) == 2 * 2 * 3 + 2
    assert runs == sorted(p.relative_to(cluster) for p in (cluster / "results/runs").rglob("*.npz"))
    for path in runs:
        assert members_but_timing(cluster / path) == members_but_timing(local / path), path
    for path in [
        "results/default/tables/dueling.csv",
        "results/default/tables/digits.csv",
        "data/processed/digits/image_size=4+scaling=feature.npz",
    ]:
        assert (cluster / path).read_bytes() == (local / path).read_bytes(), path
