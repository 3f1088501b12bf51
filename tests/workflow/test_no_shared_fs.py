"""A grid run the way executors without a shared file system run it (Kubernetes, HTCondor, cloud batch).

Snakemake submits every job through the generic cluster executor to a stand-in "node": a fresh,
empty folder, without the submitting shell's PYTHONPATH.  With ``--shared-fs-usage none
--job-deploy-sources`` the node unpacks the workflow's source archive (the git-tracked files)
into that folder, and every input and output moves through the default storage provider
(``snakemake-storage-plugin-fs``, pointed at a temporary folder).  The results must equal a
local run's, and each job must have run the library deployed on its node.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from smk import copy_project, members_but_timing, smk

pytestmark = pytest.mark.slow

pytest.importorskip("snakemake_storage_plugin_fs", reason="snakemake-storage-plugin-fs is not installed")
pytest.importorskip(
    "snakemake_executor_plugin_cluster_generic", reason="snakemake-executor-plugin-cluster-generic is not installed"
)
if shutil.which("rsync") is None:
    pytest.skip("the fs storage plugin needs rsync", allow_module_level=True)

#: submit: run the job script in a new empty folder (the node), in the background; print the job id
SUBMIT = """#!/bin/bash
node=$(mktemp -d "{nodes}/node.XXXXXX")
# the job runs in the node's folder, not in the submitting copy: nothing on disk is shared but the store
sed "s#--directory {remote} #--directory $node #" "$1" > "$node/job.sh"
(cd "$node" && env -u PYTHONPATH PATH="{bindir}:$PATH" bash job.sh > job.out 2>&1; echo $? > "$node.rc") \
    </dev/null >/dev/null 2>&1 &
echo "$node"
"""
STATUS = """#!/bin/bash
if [ ! -f "$1.rc" ]; then echo running; elif [ "$(cat "$1.rc")" = 0 ]; then echo success; else echo failed; fi
"""
TARGETS = ["results/default/tables/linear_delayed_dueling.csv", "results/default/tables/digits_reward.csv"]


def _tiny_config():
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    del config["claims"]  # they name algorithms and experiments cut below
    experiments = {name: config["experiments"][name] for name in ("linear_delayed_dueling", "digits_reward")}
    for spec in experiments.values():
        spec.update(horizon=60, seeds=2, seeds_per_job=2, table_horizons=[30, 60])
    ldb = experiments["linear_delayed_dueling"]
    ldb["algorithms"] = {name: ldb["algorithms"][name] for name in ("ldb_df", "random")}
    experiments["digits_reward"]["algorithms"] = {"linucb": experiments["digits_reward"]["algorithms"]["linucb"]}
    return {**config, "experiments": experiments}


def _script(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_a_grid_without_a_shared_file_system_equals_the_local_run(tmp_path):
    config = _tiny_config()
    (tmp_path / "local").mkdir()
    (tmp_path / "remote").mkdir()
    local = copy_project(tmp_path / "local", config)
    run = smk(local, *TARGETS, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]

    remote = copy_project(tmp_path / "remote", config)
    # the source archive holds the git-tracked files: the copy is its own repository
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run([*git, *cmd], cwd=remote, check=True)
    nodes, store = tmp_path / "nodes", tmp_path / "store"
    nodes.mkdir()
    submit = _script(
        tmp_path / "submit.sh", SUBMIT.format(nodes=nodes, remote=remote, bindir=Path(sys.executable).parent)
    )
    status = _script(tmp_path / "status.sh", STATUS)
    run = smk(
        remote,
        "--executor",
        "cluster-generic",
        "--cluster-generic-submit-cmd",
        str(submit),
        "--cluster-generic-status-cmd",
        str(status),
        "--jobs",
        "2",
        "--latency-wait",
        "1",
        "--shared-fs-usage",
        "none",
        "--job-deploy-sources",
        "--default-storage-provider",
        "fs",
        "--default-storage-prefix",
        str(store),
        *TARGETS,
        timeout=900,
    )
    if run.returncode != 0:  # the failed jobs' own logs first: their stderr is what says why
        logs = [*remote.glob(".snakemake/storage/**/logs/**/*.log"), *store.glob("logs/**/*.log")]
        failed = [p for p in nodes.glob("node.*") if p.suffix == ".rc" and p.read_text().strip() != "0"]
        pytest.fail(
            "\n".join(
                [
                    *(f"{p}:\n{p.read_text()[-2000:]}" for p in logs if p.stat().st_size),
                    *(
                        f"{p.with_suffix('')}/job.out:\n{(p.with_suffix('') / 'job.out').read_text()[-3000:]}"
                        for p in failed
                    ),
                    run.stderr[-3000:],
                ]
            )
        )

    # jobs ran on nodes, from the sources deployed there, and wrote only to storage
    node_dirs = [p for p in nodes.iterdir() if p.is_dir()]
    assert node_dirs and all((p / "src" / "banditbench" / "simulation" / "runner.py").is_file() for p in node_dirs)
    assert not (remote / "results").exists()
    logs = list((store / "logs" / "simulate").rglob("*.log"))
    assert logs and all(f"from {nodes}" in log.read_text().splitlines()[0] for log in logs)

    local_runs = sorted(p.relative_to(local) for p in (local / "results" / "runs").rglob("*.npz"))
    stored_runs = sorted(p.relative_to(store) for p in (store / "results" / "runs").rglob("*.npz"))
    runs = sum(len(spec["algorithms"]) * len(spec["delays"]) * spec["seeds"] for spec in config["experiments"].values())
    assert local_runs == stored_runs and len(local_runs) == runs
    for path in local_runs:
        assert members_but_timing(store / path) == members_but_timing(local / path), path
    for table in TARGETS:
        assert (store / table).read_text() == (local / table).read_text()
    assert os.path.isfile(store / "data" / "processed" / "digits" / "image_size=4+scaling=feature.npz")
