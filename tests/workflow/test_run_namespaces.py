"""Run namespaces end to end (issues 35 and 45): two configs and a slice in one project, each report showing
exactly its own experiments, variants and seeds; a same-named experiment of another config with other settings
runs beside the first one's results, never over them; per-seed results shared by the configs are computed once;
a config that names a run another config owns is refused before any job, in one line."""

import json
import re
import subprocess
import sys

import pytest
import yaml

from smk import copy_project, planned, smk


def _experiment(horizon=30, seeds=2, **algorithms):
    return {
        "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
        "horizon": horizon,
        "seeds": seeds,
        "seeds_per_job": seeds,
        "table_horizons": [horizon],
        "algorithms": algorithms or {"ldb_df": {"policy": "ldb_df"}, "ldb_zero": {"policy": "ldb_zero"}},
        "delays": {"none": {"kind": "none"}},
    }


MAIN = {"experiments": {"duel": _experiment(), "shared": _experiment(seeds=3)}}
OTHER = {"experiments": {"shared": _experiment(seeds=3), "solo": _experiment(horizon=20, seeds=4)}}
CLASH = {"experiments": {"duel": _experiment(horizon=25)}}
COPY = {"run": "default", **OTHER}


def _report(work, name, *args):
    """The report's result files (path -> entry) and its first page, built with ``args``."""
    run = smk(work, "--report", name, *args)
    assert run.returncode == 0, run.stderr[-3000:]
    page = (work / name).read_text()
    results = json.loads(re.search(r"var results = (\{.*?\});\n", page).group(1))
    description = json.loads(re.search(r"var workflow_desc = (\".*?\");\n", page).group(1))
    return results, description


def _experiments_shown(results, run):
    assert all(path.startswith(f"results/{run}/") for path in results), sorted(results)
    per_experiment = rf"results/{re.escape(run)}/(?:tables|timing|plots|paired|compute|sweeps)/([^/.]+)"
    shown = {path: re.match(per_experiment, path) for path in results}
    # besides the experiments' files, the run's interactive page
    assert {path for path, m in shown.items() if m is None} <= {f"results/{run}/interactive.html"}, sorted(results)
    return {m.group(1) for m in shown.values() if m is not None}


@pytest.mark.slow
def test_two_configs_and_a_slice_each_report_exactly_their_own_run(tmp_path):
    work = copy_project(tmp_path, MAIN)
    (work / "other.yaml").write_text(yaml.safe_dump(OTHER))
    (work / "clash.yaml").write_text(yaml.safe_dump(CLASH))
    (work / "copy.yaml").write_text(yaml.safe_dump(COPY))
    slice_args = ("--config", "only_experiments=duel", "override=ldb_zero.lam=3")

    first = smk(work, "--quiet")
    assert first.returncode == 0, first.stderr[-3000:]
    shared = sorted((work / "results/runs/shared").rglob("*.npz"))
    stamps = [p.stat().st_mtime_ns for p in shared]

    dry = smk(work, "-n", "--configfile", "other.yaml")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert sum(n for rule, n in planned(dry.stdout).items() if rule.startswith("simulate")) == 2  # solo's two
    second = smk(work, "--quiet", "--configfile", "other.yaml")
    assert second.returncode == 0, second.stderr[-3000:]
    # the experiment both configs state alike is computed once: the second config reuses its per-seed files
    assert [p.stat().st_mtime_ns for p in shared] == stamps

    sliced = smk(work, "--quiet", *slice_args)
    assert sliced.returncode == 0, sliced.stderr[-3000:]
    (slice_dir,) = [p for p in (work / "results").iterdir() if p.name.startswith("default.slice-")]

    # each report: its own run's folder, its own experiments, variants and seeds
    results, description = _report(work, "main.html")
    assert _experiments_shown(results, "default") == {"duel", "shared"}
    assert "Run <code>default</code>" in description and "ldb_zero.lam-3" not in description
    assert "ldb_zero.lam-3" not in (work / "results/default/tables/duel.md").read_text()

    results, description = _report(work, "other.html", "--configfile", "other.yaml")
    assert _experiments_shown(results, "other") == {"shared", "solo"}
    assert "Run <code>other</code>" in description and "other.yaml" in description

    results, description = _report(work, "slice.html", *slice_args)
    assert _experiments_shown(results, slice_dir.name) == {"duel"}
    assert f"Run <code>{slice_dir.name}</code>" in description
    assert "ldb_zero.lam-3" in (slice_dir / "tables/duel.md").read_text()

    # seeds: each run's manifest lists exactly its per-seed files
    import pandas as pd

    def seeds(run):
        manifest = pd.read_csv(work / "results" / run / "manifest.csv")
        return {(e, a): sorted(g["seed"]) for (e, a), g in manifest.groupby(["experiment", "algorithm"])}

    assert seeds("default") == {("duel", "ldb_df"): [0, 1], ("duel", "ldb_zero"): [0, 1],
                               ("shared", "ldb_df"): [0, 1, 2], ("shared", "ldb_zero"): [0, 1, 2]}  # fmt: skip
    assert seeds("other")[("solo", "ldb_df")] == [0, 1, 2, 3] and ("duel", "ldb_df") not in seeds("other")
    assert set(seeds(slice_dir.name)) == {("duel", "ldb_df"), ("duel", "ldb_zero"), ("duel", "ldb_zero.lam-3")}
    prov = subprocess.run(
        [sys.executable, "-m", "banditbench", "provenance", "results/other"], cwd=work, capture_output=True, text=True
    )
    assert prov.returncode == 0 and prov.stdout.startswith("14 result(s) in results/other"), prov.stdout + prov.stderr

    # another config whose experiment `duel` has other settings: its results go to their own cell folders
    duel = {p: p.read_bytes() for p in (work / "results/runs/duel").rglob("*.npz")}
    stamps = {p: p.stat().st_mtime_ns for p in duel}
    clash = smk(work, "--quiet", "--configfile", "clash.yaml")
    assert clash.returncode == 0, clash.stderr[-3000:]
    assert {p: p.read_bytes() for p in duel} == duel and {p: p.stat().st_mtime_ns for p in duel} == stamps
    assert len(list((work / "results/runs/duel").rglob("*.npz"))) == len(duel) + 4  # 2 algorithms x 2 seeds beside
    assert (work / "results/clash/tables/duel.csv").is_file()
    again = smk(work, "-n")  # the first config has nothing to do
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-2000:]

    # a copy of the default config that keeps `run: default` is refused before any job, in one line
    files = sorted((work / "results").rglob("*"))
    copy = smk(work, "--configfile", "copy.yaml")
    assert copy.returncode != 0
    lines = [line for line in (copy.stdout + copy.stderr).splitlines() if "belongs to config.yaml" in line]
    assert len(lines) == 1 and "run: 'default'" in lines[0] and "copy.yaml" in lines[0], copy.stderr[-2000:]
    assert "Traceback" not in copy.stderr
    assert sorted((work / "results").rglob("*")) == files


@pytest.mark.slow
def test_the_report_of_a_run_not_made_is_one_line_naming_the_runs_made(tmp_path):
    """After a slice, `snakemake --report` without the slice's --config refuses in one line naming what to run and
    the slice's --config (not Snakemake's error about a missing file marked for the report); with it, the report
    is the slice's."""
    one = {"ldb_df": {"policy": "ldb_df"}}
    work = copy_project(tmp_path, {"experiments": {"a": _experiment(40, **one), "b": _experiment(40, **one)}})
    sliced = ("--config", "seeds=2", "only_experiments=a")
    made = smk(work, "--quiet", *sliced)
    assert made.returncode == 0, made.stderr[-3000:]
    (slice_dir,) = [p for p in (work / "results").iterdir() if p.name.startswith("default.slice-")]

    refused = smk(work, "--report", "report.html")
    assert refused.returncode == 1 and not (work / "report.html").exists()
    lines = [line for line in refused.stderr.splitlines() if line.strip() and "workflow specific profile" not in line]
    assert len(lines) == 1, refused.stderr
    assert re.fullmatch(
        r"snakemake --report: run 'default' is not complete \(results/default/report/run_info\.html and \d+ other "
        r"files missing\): run snakemake with this --configfile and --config first; made here: "
        rf"{re.escape(slice_dir.name)} \(--config only_experiments=a seeds=2\)",
        lines[0],
    )

    results, _ = _report(work, "report.html", *sliced)
    assert _experiments_shown(results, slice_dir.name) == {"a"}
