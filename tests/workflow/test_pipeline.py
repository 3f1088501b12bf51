"""End-to-end Snakemake runs on a copy of the project in a temporary directory."""

import json
import os
import re
import subprocess
import sys
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import MIRROR, ROOT, needs_mirror
from smk import copy_project, members_but_timing, planned, smk

pytestmark = pytest.mark.slow

TINY = {
    "seeds": None,
    "horizon": None,
    "experiments": {
        "tiny": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 4, "n_arms": 5}},
            "horizon": 60,
            "seeds": 3,
            "seeds_per_job": 2,  # jobs: seeds (0, 1) and (2,)
            "table_horizons": [30, 60],
            "extra_plots": ["weak_regret"],
            "algorithms": {
                "ldb_df": {"policy": "ldb_df"},
                "random": {"policy": "random_pair"},
                "ndb_df": {"policy": "ndb_df", "params": {"width": 8, "train_steps": 2}},
                "nvldb": {"policy": "nvldb_ts_osym", "params": {"width": 8, "train_steps": 2}},
                "vacdb": {"policy": "vacdb"},
            },
            "panel_plots": {
                "pairs": {
                    "caption": "Linear against neural duelling, side by side.",
                    "panels": {"linear": ["ldb_df", "vacdb"], "neural": ["ndb_df", "nvldb"]},
                }
            },
            "delays": {"none": {"kind": "none"}, "geo": {"kind": "geometric", "mean": 5, "window": 10}},
            "plot": {"names": {"ldb_df": "LDB-DF"}},  # the tables' and figures' display name
        },
        "tinylog": {
            "environment": {
                "name": "synthetic_logistic",
                "params": {"latent": "h1", "dimension": 4, "n_arms": 3, "n_contexts": None},
            },
            "horizon": 40,
            "seeds": 2,
            "seeds_per_job": 2,  # the same block (0, 1) as tiny's first: one rule serves both
            "paired": False,  # gathered by the rule without paired comparisons
            "algorithms": {
                "neurallog_ucb2": {
                    "policy": "neurallog_ucb2",
                    "params": {"width": 4, "train_every": 10, "train_steps": 2},
                },
                "logistic_ucb1": {"policy": "logistic_ucb1"},
                "random": {"policy": "random_arm"},
            },
            "delays": {"none": {"kind": "none"}},
        },
    },
    "summary_tables": {  # one row per delay setting of tiny; the best cell of a row in bold
        "tiny_final": {
            "metric": "cumulative_regret",
            "better": "lower",
            "bold": 1,
            "algorithms": ["ldb_df", "random"],
            "rows": [
                {"group": "delay", "label": "none", "experiment": "tiny", "delay": "none"},
                {"group": "delay", "label": "geo", "experiment": "tiny", "delay": "geo"},
            ],
        },
    },
}


def _simulate_jobs(experiment: str, algorithms) -> Counter:
    """Simulate jobs per rule of these algorithms of an experiment: a rule per block of seeds."""
    spec = TINY["experiments"][experiment]
    n, per_job = spec["seeds"], spec.get("seeds_per_job", 1)
    rules = [
        f"simulate_seed_{s}" if min(s + per_job, n) - s == 1 else f"simulate_seeds_{s}_to_{min(s + per_job, n) - 1}"
        for s in range(0, n, per_job)
    ]
    return Counter({rule: len(algorithms) * len(spec["delays"]) for rule in rules})


def _downstream(experiments) -> dict[str, int]:
    """Jobs after the simulations of these experiments: one gathering job each (tables, plot, paired
    comparisons unless ``paired: false``), timing summary, regret against compute, further plots, the run's
    interactive page, run information."""
    extra = sum(len(TINY["experiments"][e].get("extra_plots", [])) for e in experiments)
    panels = sum(len(TINY["experiments"][e].get("panel_plots", {})) for e in experiments)
    unpaired = sum(TINY["experiments"][e].get("paired", True) is False for e in experiments)
    counts = {
        "all": 1,
        "run_info": 1,
        "aggregate": len(experiments) - unpaired,
        "aggregate_unpaired": unpaired,
        "timing": len(experiments),
        "compute": len(experiments),
        "interactive": 1,
        "plot_extra": extra,
        "plot_panels": panels,
        "summary_table": int("tiny" in experiments),
    }
    return {k: v for k, v in counts.items() if v}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The tiny grid, run once.  Its rate limit's timespan is an hour: Snakemake's scheduler leaves a
    threading.Timer of that timespan running per finished job while jobs wait for cores, so a run
    whose workflow did not cancel them when it ends (the Snakefile's onsuccess) would outlive its
    jobs by an hour and hit the timeout here."""
    work = copy_project(tmp_path_factory.mktemp("project"), TINY)
    try:
        run = smk(work, "--quiet", "--max-jobs-per-timespan", "100000/1h", timeout=1200)
    except subprocess.TimeoutExpired:
        pytest.fail(
            "Snakemake did not exit within 20 minutes of starting the tiny grid: the scheduler's "
            "re-evaluation timers outlived the run (Snakefile onsuccess / onerror)"
        )
    assert run.returncode == 0, run.stderr[-3000:]
    return work


def test_default_pipeline_produces_tables_and_plots(project):
    tidy = pd.read_csv(project / "results/default/tables/tiny.csv")
    assert set(tidy["algorithm"]) == {"ldb_df", "random", "ndb_df", "nvldb", "vacdb"}
    assert set(tidy["delay"]) == {"none", "geo"}
    assert set(tidy["t"]) == {30, 60} and (tidy["n"] == 3).all()
    assert {"cumulative_regret", "cumulative_weak_regret"} <= set(tidy["metric"])
    assert "| geo | none | LDB-DF |" in (project / "results/default/tables/tiny.md").read_text()
    tex = (project / "results/default/tables/tiny.tex").read_text()
    assert r"\label{tab:default-tiny}" in tex and r"\label{tab:default-tiny-cumulative-regret}" in tex
    assert (
        "\nLDB-DF & " in tex
        and r"\label{tab:default-summary-tiny-final}"
        in (project / "results/default/summary/tiny_final.tex").read_text()
    )
    assert "LDB-DF" in (project / "results/default/paired/tiny.md").read_text()
    assert "<h2>cumulative_regret at T = 60</h2>" in (project / "results/default/tables/tiny.html").read_text()
    assert (project / "results/default/plots/tiny.pdf").read_bytes()[:4] == b"%PDF"
    assert (project / "results/default/plots/tiny.png").stat().st_size > 10_000
    assert (project / "results/default/plots/tiny/panels/pairs.pdf").read_bytes()[:4] == b"%PDF"
    assert (project / "results/default/plots/tiny/panels/pairs.png").stat().st_size > 10_000
    # one benchmark file per simulate job (a block of seeds), one result file per seed
    (cell,) = (project / "results/runs/tiny/ldb_df/geo/none").iterdir()  # the cell's folder: its digest
    assert sorted(p.name for p in cell.iterdir()) == [
        "0.npz",
        "1.npz",
        "2.npz",
        "cell.json",
        "seed_2.benchmark.tsv",
        "seeds_0-1.benchmark.tsv",
    ]
    assert (cell / "seeds_0-1.benchmark.tsv").read_text().startswith("s\th:m:s")
    timing = pd.read_csv(project / "results/default/timing/tiny.csv")
    assert len(timing) == 5 * 2 * 2 and sorted(timing["seeds"]) == [1] * 10 + [2] * 10
    assert "tinylog" in (project / "results/default/report/run_info.html").read_text()
    # the experiment without paired comparisons has everything else
    assert (project / "results/default/plots/tinylog.png").stat().st_size > 10_000
    assert len(pd.read_csv(project / "results/default/timing/tinylog.csv")) == 3
    assert (project / "results/default/paired/tiny.md").is_file() and not list(
        (project / "results/paired").glob("tinylog*")
    )
    # the summary table: a row per delay setting, the lower final regret of ldb_df and random in bold
    final = tidy[(tidy["metric"] == "cumulative_regret") & (tidy["t"] == 60)].set_index(["delay", "algorithm"])["mean"]
    summary = pd.read_csv(project / "results/default/summary/tiny_final.csv")
    assert list(zip(summary["label"], summary["algorithm"])) == [
        ("none", "ldb_df"),
        ("none", "random"),
        ("geo", "ldb_df"),
        ("geo", "random"),
    ]
    for (delay, alg), bold in zip(zip(summary["label"], summary["algorithm"]), summary["bold"]):
        assert bold == (final[(delay, alg)] == min(final[(delay, "ldb_df")], final[(delay, "random")]))
    md = (project / "results/default/summary/tiny_final.md").read_text()
    # the algorithms by their display names (the experiment's plot.names), the CSV keeps the labels
    assert "| parameter | value | LDB-DF | random |" in md and md.count("**") == 2 * 2
    # regret against compute: the tidy table's final regret against each cell's CPU seconds per seed
    compute = pd.read_csv(project / "results/default/compute/tiny.csv").set_index(["algorithm", "delay"])
    final = tidy[(tidy["metric"] == "cumulative_regret") & (tidy["t"] == 60)].set_index(["algorithm", "delay"])
    assert len(compute) == len(final) == 10 and (compute.loc[final.index, "mean"] == final["mean"]).all()
    assert (compute["cpu_s"] > 0).all() and set(compute["cpu_seeds"]) == {3}
    assert r"\label{tab:default-tiny-compute}" in (project / "results/default/compute/tiny.tex").read_text()
    assert (project / "results/default/compute/tiny.pdf").read_bytes()[:4] == b"%PDF"
    # the interactive page: every experiment's curves, the paired table where there is one
    from banditbench.analysis.interactive import embedded_data

    data = embedded_data((project / "results/default/interactive.html").read_text())
    assert list(data["experiments"]) == ["tiny", "tinylog"] and data["experiments"]["tinylog"]["paired"] is None
    assert data["experiments"]["tiny"]["names"]["ldb_df"] == "LDB-DF"


def test_plain_snakemake_loads_the_default_profile(project):
    """`snakemake` with no flags in the project folder: profiles/default supplies --cores (and the rest)."""
    env = dict(os.environ, PYTHONPATH=str(project / "src"))
    plain = subprocess.run([sys.executable, "-m", "snakemake"], capture_output=True, text=True, cwd=project, env=env)
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert "Using workflow specific profile profiles/default" in plain.stderr
    assert "Nothing to be done" in plain.stdout + plain.stderr
    bare = subprocess.run(
        [sys.executable, "-m", "snakemake", "--workflow-profile", "none"],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
    )
    assert bare.returncode != 0 and "cores" in bare.stdout + bare.stderr


@pytest.mark.parametrize(
    "module, rerun",
    [
        ("policies/delayed_dueling.py", {"tiny": {"ldb_df"}}),  # one family: only its jobs
        ("policies/neural/nets.py", {"tiny": {"ndb_df", "nvldb"}, "tinylog": {"neurallog_ucb2"}}),  # every neural job
        ("policies/neural/delayed_dueling.py", {"tiny": {"ndb_df"}}),
        ("policies/neural/variance_aware_dueling.py", {"tiny": {"nvldb"}}),
        ("policies/neural/batched/ops.py", {"tiny": {"ndb_df", "nvldb"}, "tinylog": {"neurallog_ucb2"}}),
        ("policies/neural/batched/logistic.py", {"tinylog": {"neurallog_ucb2"}}),
        ("policies/pair_selection.py", {"tiny": {"nvldb", "vacdb"}}),
        ("policies/variance_aware_dueling.py", {"tiny": {"vacdb"}}),
        ("policies/delayed_labels.py", {"tiny": {"ldb_df", "ndb_df"}}),  # shared by the linear and neural families
        ("policies/neural/logistic.py", {"tinylog": {"neurallog_ucb2"}}),
        ("policies/logistic.py", {"tinylog": {"logistic_ucb1"}}),
        ("envs/logistic.py", {"tinylog": {"neurallog_ucb2", "logistic_ucb1", "random"}}),  # every job on it
    ],
)
def test_editing_one_algorithm_reruns_only_its_jobs(project, module, rerun):
    assert "Nothing to be done" in smk(project, "-n").stdout
    path = project / "src/banditbench" / module
    original = path.read_text()
    path.write_text(original + "\n# an edit\n")
    try:
        dry = smk(project, "-n")
        assert dry.returncode == 0, dry.stderr[-2000:]
        # every delay x seed block of each affected algorithm; none of the others; then those tables, plots, timing
        simulate = sum((_simulate_jobs(e, algs) for e, algs in rerun.items()), Counter())
        assert planned(dry.stdout) == {**simulate, **_downstream(rerun)}
        jobs = set(re.findall(r"experiment=(\w+), algorithm=(\w+)", dry.stdout))
        assert jobs == {(e, a) for e, algs in rerun.items() for a in algs}
    finally:
        path.write_text(original)


def test_a_run_interrupted_midway_resumes_where_it_stopped(project):
    """As after a crash: one seed's result and the tables missing; only that seed's block and the tables are rebuilt."""
    (random,) = (project / "results/runs/tiny/random/geo/none").iterdir()
    (ldb_df,) = (project / "results/runs/tiny/ldb_df/geo/none").iterdir()
    victim = random / "1.npz"
    partner = random / "0.npz"  # same block (seeds 0, 1)
    survivors = [random / "2.npz", ldb_df / "1.npz"]
    before = [p.stat().st_mtime_ns for p in survivors]
    partner_bytes = members_but_timing(partner)
    victim.unlink()
    (project / "results/default/tables/tiny.csv").unlink()
    dry = smk(project, "-n")
    assert planned(dry.stdout) == {"simulate_seeds_0_to_1": 1, **_downstream(["tiny"])}
    run = smk(project, "--quiet")
    assert run.returncode == 0, run.stderr[-2000:]
    assert victim.exists() and members_but_timing(partner) == partner_bytes
    assert [p.stat().st_mtime_ns for p in survivors] == before


def test_changing_seeds_per_job_reruns_nothing(project):
    """Blocks are a scheduling choice: the existing per-seed results stay valid."""
    config = project / "config.yaml"
    original = config.read_text()
    changed = yaml.safe_load(original)
    changed["experiments"]["tiny"]["seeds_per_job"] = 3
    config.write_text(yaml.safe_dump(changed))
    try:
        dry = smk(project, "-n")
        assert dry.returncode == 0, dry.stderr[-2000:]
        assert "Nothing to be done" in dry.stdout, dry.stdout[-3000:]
    finally:
        config.write_text(original)


def test_report_opens_on_the_run_and_shows_tables_plots_and_timing(project):
    run = smk(project, "--report", "report.html")
    assert run.returncode == 0, run.stderr[-3000:]
    page = (project / "report.html").read_text()
    description = json.loads(re.search(r"var workflow_desc = (\".*?\");\n", page).group(1))
    assert "What was run" in description and "synthetic_dueling" in description and "Versions" in description
    results = json.loads(re.search(r"var results = (\{.*?\});\n", page).group(1))
    kinds = {path: entry["mime_type"] for path, entry in results.items()}
    assert kinds == {
        **{
            f"results/default/{kind}/{e}.html": "text/html"
            for kind in ("tables", "timing")
            for e in TINY["experiments"]
        },
        **{f"results/default/plots/{e}.png": "image/png" for e in TINY["experiments"]},
        **{f"results/default/paired/tiny.{ext}": mime for ext, mime in (("html", "text/html"), ("png", "image/png"))},
        "results/default/plots/tiny/weak_regret.png": "image/png",
        "results/default/plots/tiny/panels/pairs.png": "image/png",
        "results/default/summary/tiny_final.html": "text/html",
        **{
            f"results/default/compute/{e}.{ext}": m
            for e in TINY["experiments"]
            for ext, m in (("html", "text/html"), ("png", "image/png"))
        },
        "results/default/interactive.html": "text/html",
    }
    # every plot has its own caption
    assert "Cumulative regret of" in results["results/default/plots/tiny.png"]["caption"]
    assert "weak_regret" in results["results/default/plots/tiny/weak_regret.png"]["caption"]
    assert "Linear against neural duelling" in results["results/default/plots/tiny/panels/pairs.png"]["caption"]
    assert "Tables of experiment" in results["results/default/tables/tiny.html"]["caption"]
    assert "Summary table" in results["results/default/summary/tiny_final.html"]["caption"]
    assert "Student-t" in results["results/default/paired/tiny.html"]["caption"]
    assert "Difference curves" in results["results/default/paired/tiny.png"]["caption"]
    caption = {path: " ".join(entry["caption"].split()) for path, entry in results.items()}  # lines joined
    assert "against the CPU seconds one seed costs" in caption["results/default/compute/tiny.png"]
    assert "CPU seconds per seed" in caption["results/default/compute/tiny.html"]
    assert "interactive.html" in caption["results/default/interactive.html"]
    assert "Interactive results" in description and "Regret against compute" in description


def test_bad_config_stops_before_any_job(tmp_path):
    work = copy_project(tmp_path, TINY)
    bad = yaml.safe_load((work / "config.yaml").read_text())
    bad["experiments"]["tiny"]["algorithms"]["ldb_df"]["params"] = {"lamda": 1.0}
    (work / "config.yaml").write_text(yaml.safe_dump(bad))
    run = smk(work, "-n")
    assert run.returncode != 0
    assert "experiments.tiny.algorithms.ldb_df.params: unknown parameter(s) ['lamda']" in run.stdout + run.stderr
    assert not (work / "results").exists()


def test_a_copy_runs_its_own_library_not_the_installed_checkouts(tmp_path):
    """Without PYTHONPATH the installed banditbench is this checkout's; the copy's Snakefile imports the
    copy's src/ first (its code differs here), so the copy plans with its own library instead of refusing
    or mixing (a banditbench imported before the Snakefile ran: tests/storage/test_code_identity.py)."""
    work = copy_project(tmp_path, TINY)
    init = work / "src" / "banditbench" / "__init__.py"
    init.write_text(init.read_text() + "\nimport sys\nprint('the copy banditbench', file=sys.stderr)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run(
        [sys.executable, "-c", "import banditbench; print(banditbench.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert probe.stdout.startswith(str(ROOT / "src"))  # the installed library is the original's ...
    run = smk(work, "-n", env=env, own_src=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "the copy banditbench" in run.stderr  # ... yet the copy's planned the jobs


def test_slurm_profile_is_valid(project):
    dry = smk(project, "--workflow-profile", str(project / "profiles/slurm"), "-n", "--forceall")
    assert dry.returncode == 0, dry.stderr[-2000:]
    simulate = sum((_simulate_jobs(e, spec["algorithms"]) for e, spec in TINY["experiments"].items()), Counter())
    assert {k: v for k, v in planned(dry.stdout).items() if k.startswith("simulate")} == simulate


@needs_mirror
def test_reduced_real_data_grid_runs_end_to_end_through_the_mirror(tmp_path):
    """download (checksummed, from the mirror) -> preprocess -> oracles -> simulations -> tables, plots."""
    work = copy_project(tmp_path, TINY)
    env = dict(os.environ, BANDITBENCH_DATA_MIRROR=str(MIRROR))
    run = smk(work, "--quiet", "--configfile", str(work / "config/real_data_ci.yaml"), env=env)
    assert run.returncode == 0, run.stderr[-4000:]
    grid = yaml.safe_load((work / "config/real_data_ci.yaml").read_text())["experiments"]
    for name in grid:
        tidy = pd.read_csv(work / f"results/real_data_ci/tables/{name}.csv")
        assert len(tidy) and tidy["mean"].notna().all(), name
        assert (work / f"results/real_data_ci/plots/{name}.png").stat().st_size > 10_000
    assert "ndb_df" in set(
        pd.read_csv(work / "results/real_data_ci/tables/ci_prompt.csv")["algorithm"]
    )  # neural, fixed arms
    replay = pd.read_csv(work / "results/real_data_ci/tables/ci_obd_replay.csv")
    assert {"cumulative_reward", "ctr", "events_used"} <= set(replay["metric"])
    assert (replay[replay["metric"] == "events_used"]["mean"] > 150).all()  # skipped events were replayed
    ctr = pd.read_csv(work / "results/real_data_ci/summary/ci_obd_ctr.csv")  # a run summary, Table 2 layout
    assert list(ctr["algorithm"]) == ["neurallog_ts1", "logistic_ucb1", "random"]
    np.testing.assert_allclose(
        ctr["mean"], replay[replay["metric"] == "ctr"].set_index("algorithm").loc[ctr["algorithm"], "mean"]
    )
    assert "| replay | 150 events |" in (work / "results/real_data_ci/summary/ci_obd_ctr.md").read_text()
    assert any((work / "data/oracles").rglob("*.quality.csv"))
    assert (work / "data/raw/uci/banknote/data_banknote_authentication.txt").is_file()
