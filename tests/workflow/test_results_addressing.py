"""Per-seed results addressed by their content, end to end (issue 45): a smoke slice runs beside a full run and
never touches it; a slice that agrees with the full run shares its files; a deleted per-seed file is planned
again, and provenance names the same file missing; results of the older layout are moved into place by
``banditbench migrate-results`` and nothing is simulated again; every shipped config plans after a real run of
the default grid and a paper grid's smoke slice."""

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from banditbench import cli
from banditbench.configuration.grid import load_config_file
from conftest import ROOT
from smk import copy_project, members_but_timing, planned, smk

DUEL = {
    "experiments": {
        "duel": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
            "horizon": 60,
            "seeds": 4,
            "seeds_per_job": 2,
            "table_horizons": [30, 60],
            "algorithms": {"ldb_df": {"policy": "ldb_df"}, "ldb_zero": {"policy": "ldb_zero"}},
            "delays": {"none": {"kind": "none"}},
        }
    }
}


def _results(work: Path) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted((work / "results/runs").rglob("*.npz"))}


def _simulations(run: subprocess.CompletedProcess) -> int:
    text = run.stdout + run.stderr
    if "Nothing to be done" in text:
        return 0
    return sum(n for rule, n in planned(text).items() if rule.startswith("simulate"))


def _banditbench(work: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "banditbench", *args],
        cwd=work,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(work / "src")},
    )


@pytest.mark.slow
def test_a_smoke_slice_runs_beside_the_full_run_and_a_deleted_file_is_planned_again(tmp_path):
    work = copy_project(tmp_path, DUEL)
    full = smk(work, "--quiet")
    assert full.returncode == 0, full.stderr[-3000:]
    before = _results(work)
    assert len(before) == 8

    # the smoke slice the docs recommend for paper grids: its own files, the full run's untouched
    smoke = smk(work, "--quiet", "--config", "seeds=2", "horizon=30", "only_experiments=duel")
    assert smoke.returncode == 0, smoke.stderr[-3000:]
    after = _results(work)
    assert {p: after[p] for p in before} == before  # byte for byte, not even re-dated
    assert len(after) == len(before) + 4
    assert not {p.parent for p in after if p not in before} & {p.parent for p in before}
    rerun = smk(work, "-n")
    assert rerun.returncode == 0 and _simulations(rerun) == 0, rerun.stdout[-2000:]

    # a slice that changes no cell shares the full run's files: nothing to simulate
    shared = smk(work, "-n", "--config", "seeds=2")
    assert shared.returncode == 0 and _simulations(shared) == 0, shared.stdout[-2000:]

    # a per-seed file deleted by hand: provenance names it missing, and planning plans its job again
    victim = next(p for p in before if p.name == "1.npz")
    victim.unlink()
    prov = _banditbench(work, "provenance", "results/default")
    assert prov.returncode == 3, prov.stdout + prov.stderr
    assert f"missing: {victim.relative_to(work)}" in prov.stdout.splitlines()
    plan = smk(work, "-n")
    assert plan.returncode == 0 and _simulations(plan) == 1, plan.stdout[-2000:]
    assert str(victim.relative_to(work)) in plan.stdout
    again = smk(work, "--quiet")
    assert again.returncode == 0, again.stderr[-3000:]
    assert members_but_timing(victim) == members_but_timing(io.BytesIO(before[victim][0]))  # the same run again
    assert _banditbench(work, "provenance", "results/default").returncode == 0


def _to_older_layout(work: Path) -> None:
    """Move every result and benchmark file of ``work`` one folder up, out of its cell folder, as the layout
    before content addressing had them, and forget Snakemake's records (a project of that time has none for
    the new paths)."""
    for cell_folder in sorted({p.parent for p in (work / "results/runs").rglob("*.npz")}):
        for path in cell_folder.iterdir():
            if path.suffix in (".npz", ".tsv"):
                path.rename(cell_folder.parent / path.name)
        shutil.rmtree(cell_folder)
    shutil.rmtree(work / ".snakemake/metadata")


@pytest.mark.slow
def test_results_of_the_older_layout_are_moved_into_place_and_nothing_is_simulated_again(tmp_path):
    work = copy_project(tmp_path, DUEL)
    first = smk(work, "--quiet")
    assert first.returncode == 0, first.stderr[-3000:]
    before = {p.relative_to(work): b for p, (b, _) in _results(work).items()}
    _to_older_layout(work)
    assert _simulations(smk(work, "-n")) == 4  # the files are not where the jobs write them

    dry = _banditbench(work, "migrate-results", "--dry-run")
    assert dry.returncode == 0 and "would move 8 result file(s)" in dry.stdout
    assert len(list((work / "results/runs").glob("*/*/*/*/*.npz"))) == 8  # a dry run moves nothing
    moved = _banditbench(work, "migrate-results")
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert "moved 8 result file(s) into their cell folders; 0 left where they are" in moved.stdout
    assert {p.relative_to(work): b for p, (b, _) in _results(work).items()} == before
    assert all((p.parent / "cell.json").is_file() for p in _results(work))
    plan = smk(work, "-n")
    assert plan.returncode == 0 and _simulations(plan) == 0, plan.stdout[-2000:]
    timing = smk(work, "--quiet")  # the tables and timing are gathered again, from the moved benchmark files
    assert timing.returncode == 0, timing.stderr[-3000:]
    assert "missing" not in (work / "results/default/timing/duel.csv").read_text()
    assert _banditbench(work, "migrate-results").stdout.startswith("moved 0 result file(s)")


def test_migration_leaves_a_damaged_file_where_it_is_and_says_why(tmp_path, capsys):
    older = tmp_path / "results/runs/exp/ldb_df/none/none"
    older.mkdir(parents=True)
    (older / "0.npz").write_bytes(b"not a result")
    assert cli.main(["migrate-results", str(tmp_path / "results/runs")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{older / '0.npz'}: left where it is: {older / '0.npz'}: unreadable result file")
    assert out[-1] == "moved 0 result file(s) into their cell folders; 1 left where they are"
    assert (older / "0.npz").read_bytes() == b"not a result"
    assert cli.main(["migrate-results", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err.strip().endswith("no such folder (the per-seed results are in results/runs)")


@pytest.mark.slow
def test_every_shipped_config_plans_after_the_default_grid_and_a_paper_smoke_slice(tmp_path, monkeypatch):
    """After a small real run of config.yaml and of a paper grid's smoke slice, every config/*.yaml validates
    and plans: nothing another run made is in its way (before, a same-named experiment was refused)."""
    work = copy_project(tmp_path, load_config_file(ROOT / "config.yaml"))
    small = ("--config", "seeds=2", "horizon=40", "only_experiments=linear_delayed_dueling,lipschitz_triangle")
    default = smk(work, "--quiet", *small)
    assert default.returncode == 0, default.stderr[-3000:]
    paper = ("--configfile", "config/lipschitz.yaml", "--config", "seeds=2", "horizon=200")
    smoke = smk(work, "--quiet", *paper, "only_experiments=lipschitz_triangle")
    assert smoke.returncode == 0, smoke.stderr[-3000:]
    monkeypatch.chdir(work)
    for config in ["config.yaml", *sorted(str(p.relative_to(work)) for p in (work / "config").glob("*.yaml"))]:
        assert cli.main(["validate", config]) == 0, config
        plan = smk(work, "-n", "--quiet", "rules", *(["--configfile", config] if config != "config.yaml" else []))
        assert plan.returncode == 0, (config, plan.stderr[-2000:])
        assert "Traceback" not in plan.stderr
