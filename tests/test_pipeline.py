"""End-to-end Snakemake runs on a copy of the project in a temporary directory."""

import os
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from conftest import MIRROR, ROOT, needs_mirror

pytestmark = pytest.mark.slow

TINY = {
    "seeds": None,
    "horizon": None,
    "experiments": {
        "tiny": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 4, "n_arms": 5}},
            "horizon": 60,
            "seeds": 2,
            "table_horizons": [30, 60],
            "algorithms": {"ldb_df": {"policy": "ldb_df"}, "random": {"policy": "random_pair"},
                           "ndb_df": {"policy": "ndb_df", "params": {"width": 8, "train_steps": 2}},
                           "nvldb": {"policy": "nvldb_ts_osym", "params": {"width": 8, "train_steps": 2}}},
            "delays": {"none": {"kind": "none"}, "geo": {"kind": "geometric", "mean": 5, "window": 10}},
        },
        "tinylog": {
            "environment": {"name": "synthetic_logistic",
                            "params": {"latent": "h1", "dimension": 4, "n_arms": 3, "n_contexts": None}},
            "horizon": 40,
            "seeds": 2,
            "algorithms": {"neurallog_ucb2": {"policy": "neurallog_ucb2",
                                              "params": {"width": 4, "train_every": 10, "train_steps": 2}},
                           "logistic_ucb1": {"policy": "logistic_ucb1"}, "random": {"policy": "random_arm"}},
            "delays": {"none": {"kind": "none"}},
        },
    },
}


def _copy_project(dest):
    for item in ("Snakefile", "src", "workflow", "config", "envs"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dest / item)
    (dest / "config.yaml").write_text(yaml.safe_dump(TINY))
    return dest


def _smk(workdir, *args, env=None, own_src=True):
    """Snakemake on a copy of the project; ``own_src``: with the copy's src/ on PYTHONPATH (the
    installed banditbench is the original checkout's, which the copy's Snakefile refuses)."""
    env = dict(os.environ if env is None else env)
    if own_src:
        env["PYTHONPATH"] = str(workdir / "src")
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--directory", str(workdir),
           "--snakefile", str(workdir / "Snakefile"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=workdir, env=env)


def _planned(dry_run_output: str) -> dict[str, int]:
    """Job counts per rule from the 'Job stats' table of a dry run."""
    counts = {}
    for line in dry_run_output.split("Job stats:")[1].splitlines()[3:]:
        if line.startswith("total"):
            break
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if m:
            counts[m.group(1)] = int(m.group(2))
    return counts


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    work = _copy_project(tmp_path_factory.mktemp("project"))
    run = _smk(work, "--quiet")
    assert run.returncode == 0, run.stderr[-3000:]
    return work


def test_default_pipeline_produces_tables_and_plots(project):
    tidy = pd.read_csv(project / "results/tables/tiny.csv")
    assert set(tidy["algorithm"]) == {"ldb_df", "random", "ndb_df", "nvldb"} and set(tidy["delay"]) == {"none", "geo"}
    assert set(tidy["t"]) == {30, 60} and (tidy["n"] == 2).all()
    assert {"cumulative_regret", "cumulative_weak_regret"} <= set(tidy["metric"])
    assert "| geo | none | ldb_df |" in (project / "results/tables/tiny.md").read_text()
    assert (project / "results/tables/tiny.tex").stat().st_size > 200
    assert (project / "results/plots/tiny.pdf").read_bytes()[:4] == b"%PDF"
    assert (project / "results/plots/tiny.png").stat().st_size > 10_000
    bench = project / "results/runs/tiny/ldb_df/geo/none/1.benchmark.tsv"
    assert bench.read_text().startswith("s\th:m:s")


@pytest.mark.parametrize("module, rerun", [
    ("policies/delayed_dueling.py", {"tiny": {"ldb_df"}}),                   # one family: only its jobs
    ("policies/neural/nets.py", {"tiny": {"ndb_df", "nvldb"}, "tinylog": {"neurallog_ucb2"}}),  # every neural job
    ("policies/neural/delayed_dueling.py", {"tiny": {"ndb_df"}}),
    ("policies/neural/variance_dueling.py", {"tiny": {"nvldb"}}),
    ("policies/pair_selection.py", {"tiny": {"nvldb"}}),
    ("policies/delayed_labels.py", {"tiny": {"ldb_df", "ndb_df"}}),  # shared by the linear and neural families
    ("policies/neural/logistic.py", {"tinylog": {"neurallog_ucb2"}}),
    ("policies/logistic.py", {"tinylog": {"logistic_ucb1"}}),
    ("envs/logistic.py", {"tinylog": {"neurallog_ucb2", "logistic_ucb1", "random"}}),   # every job on it
])
def test_editing_one_algorithm_reruns_only_its_jobs(project, module, rerun):
    assert "Nothing to be done" in _smk(project, "-n").stdout
    path = project / "src/banditbench" / module
    original = path.read_text()
    path.write_text(original + "\n# an edit\n")
    try:
        dry = _smk(project, "-n")
        assert dry.returncode == 0, dry.stderr[-2000:]
        # every delay x seed of each affected algorithm; none of the others; then those tables and plots
        jobs = sum(len(algs) * len(TINY["experiments"][e]["delays"]) * TINY["experiments"][e]["seeds"]
                   for e, algs in rerun.items())
        assert _planned(dry.stdout) == {"all": 1, "simulate": jobs, "aggregate": len(rerun), "plot": len(rerun)}
        planned = set(re.findall(r"experiment=(\w+), algorithm=(\w+)", dry.stdout))
        assert planned == {(e, a) for e, algs in rerun.items() for a in algs}
    finally:
        path.write_text(original)


def test_a_run_interrupted_midway_resumes_where_it_stopped(project):
    """As after a crash: one job's result and the tables missing; only those are rebuilt."""
    victim = project / "results/runs/tiny/random/geo/none/0.npz"
    survivor = project / "results/runs/tiny/ldb_df/geo/none/0.npz"
    before = survivor.stat().st_mtime_ns
    victim.unlink()
    (project / "results/tables/tiny.csv").unlink()
    dry = _smk(project, "-n")
    assert _planned(dry.stdout) == {"all": 1, "simulate": 1, "aggregate": 1, "plot": 1}
    run = _smk(project, "--quiet")
    assert run.returncode == 0, run.stderr[-2000:]
    assert victim.exists() and survivor.stat().st_mtime_ns == before


def test_bad_config_stops_before_any_job(tmp_path):
    work = _copy_project(tmp_path)
    bad = yaml.safe_load((work / "config.yaml").read_text())
    bad["experiments"]["tiny"]["algorithms"]["ldb_df"]["params"] = {"lamda": 1.0}
    (work / "config.yaml").write_text(yaml.safe_dump(bad))
    run = _smk(work, "-n")
    assert run.returncode != 0
    assert "experiments.tiny.algorithms.ldb_df.params: unknown parameter(s) ['lamda']" in run.stdout + run.stderr
    assert not (work / "results").exists()


def test_a_copy_refuses_to_run_with_another_checkouts_library(tmp_path):
    work = _copy_project(tmp_path)
    run = _smk(work, "-n", own_src=False)
    assert run.returncode != 0
    assert f"not from this checkout's {work.resolve() / 'src'}" in run.stdout + run.stderr


def test_slurm_profile_is_valid(project):
    dry = _smk(project, "--workflow-profile", str(project / "workflow/profiles/slurm"), "-n", "--forceall")
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert _planned(dry.stdout)["simulate"] == sum(len(e["algorithms"]) * len(e["delays"]) * e["seeds"]
                                                   for e in TINY["experiments"].values())


@needs_mirror
def test_reduced_real_data_grid_runs_end_to_end_through_the_mirror(tmp_path):
    """download (checksummed, from the mirror) -> preprocess -> oracles -> simulations -> tables, plots."""
    work = _copy_project(tmp_path)
    env = dict(os.environ, BANDITBENCH_DATA_MIRROR=str(MIRROR))
    run = _smk(work, "--quiet", "--configfile", str(work / "config/real_data_ci.yaml"), env=env)
    assert run.returncode == 0, run.stderr[-4000:]
    grid = yaml.safe_load((work / "config/real_data_ci.yaml").read_text())["experiments"]
    for name in grid:
        tidy = pd.read_csv(work / f"results/tables/{name}.csv")
        assert len(tidy) and tidy["mean"].notna().all(), name
        assert (work / f"results/plots/{name}.png").stat().st_size > 10_000
    assert "ndb_df" in set(pd.read_csv(work / "results/tables/ci_prompt.csv")["algorithm"])  # neural, fixed arms
    replay = pd.read_csv(work / "results/tables/ci_obd_replay.csv")
    assert {"cumulative_reward", "ctr", "events_used"} <= set(replay["metric"])
    assert (replay[replay["metric"] == "events_used"]["mean"] > 150).all()         # skipped events were replayed
    assert any((work / "data/oracles").rglob("*.quality.csv"))
    assert (work / "data/raw/uci/banknote/data_banknote_authentication.txt").is_file()

