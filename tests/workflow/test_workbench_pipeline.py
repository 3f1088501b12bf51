"""The Python API against Snakemake, end to end: the same slice of the default grid gives the same per-seed
bytes, tidy table, paired table and claims either way; each reuses the other's per-seed results; and the
notebook docs/workbench.ipynb runs, cell after cell."""

import contextlib
import shutil

import nbformat
import pytest

import banditbench
from banditbench.analysis.aggregate import csv_bytes
from banditbench.analysis.claim_pages import write_claims
from banditbench.configuration.grid import load_config_file
from conftest import ROOT
from smk import copy_project, members_but_timing, planned, smk

EXPERIMENT = "linear_delayed_dueling"
#: the slice both run: the smallest experiment of the default grid, its claim's two algorithms, 2 seeds
SLICE = {"only_experiments": EXPERIMENT, "only_algorithms": ["ldb_df", "ldb_ignore"], "seeds": 2}
COMMAND_LINE = [f"only_experiments={EXPERIMENT}", "only_algorithms=ldb_df,ldb_ignore", "seeds=2"]


def _results(folder) -> dict:
    """The per-seed result files under ``folder`` (relative paths) with their modification times."""
    return {p.relative_to(folder): p.stat().st_mtime_ns for p in sorted((folder / "results/runs").rglob("*.npz"))}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The slice run by Snakemake in one copy of the project and by the API (2 worker processes) in another."""
    config = load_config_file(ROOT / "config.yaml")
    by_smk = copy_project(tmp_path_factory.mktemp("snakemake"), config)
    run = smk(by_smk, "--quiet", "--config", *COMMAND_LINE)
    assert run.returncode == 0, run.stderr[-3000:]
    by_api = copy_project(tmp_path_factory.mktemp("api"), config)
    with contextlib.chdir(by_api):
        grid = banditbench.Grid("config.yaml", **SLICE)
        results = grid.run(n_jobs=2)
    return by_smk, by_api, grid, results


@pytest.mark.slow
def test_the_api_and_snakemake_give_the_same_bytes(made, tmp_path):
    by_smk, by_api, grid, results = made
    files = list(_results(by_api))
    assert files == list(_results(by_smk)) and len(files) == 2 * 2 * 2  # algorithms x delays x seeds
    assert sorted(results.simulated) == sorted(map(str, files))
    for path in files:
        assert members_but_timing(by_api / path) == members_but_timing(by_smk / path), path
    # the same run name, so the tables are where Snakemake put this slice's
    run = by_smk / "results" / grid.run_name
    assert csv_bytes(results.tidy()) == (run / f"tables/{EXPERIMENT}.csv").read_bytes()
    assert csv_bytes(results.paired()) == (run / f"paired/{EXPERIMENT}.csv").read_bytes()
    claims = results.claims
    assert "not separated" in set(claims["verdict"])  # the claim the slice keeps, judged on 2 seeds
    write_claims(claims, tmp_path / "claims.csv", tmp_path / "claims.md")
    assert (tmp_path / "claims.csv").read_bytes() == (run / "claims/claims.csv").read_bytes()


@pytest.mark.slow
def test_the_api_reuses_snakemakes_results(made):
    by_smk = made[0]
    before = _results(by_smk)
    with contextlib.chdir(by_smk):
        results = banditbench.Grid("config.yaml", **SLICE).run()
    assert results.simulated == [] and sorted(results.reused) == sorted(map(str, before))
    assert _results(by_smk) == before


@pytest.mark.slow
def test_snakemake_reuses_the_apis_results(made):
    by_api = made[1]
    before = _results(by_api)
    dry = smk(by_api, "-n", "--config", *COMMAND_LINE)
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = planned(dry.stdout + dry.stderr)
    assert jobs.get("aggregate") == 1 and not [rule for rule in jobs if rule.startswith("simulate")], jobs
    assert _results(by_api) == before


def test_the_notebook_runs_cell_after_cell(tmp_path, monkeypatch):
    notebook = nbformat.read(ROOT / "docs" / "workbench.ipynb", as_version=4)
    nbformat.validate(notebook)
    cells = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    assert len(cells) >= 5
    shutil.copy(ROOT / "config.yaml", tmp_path / "config.yaml")
    monkeypatch.chdir(tmp_path)  # restored afterwards, whatever the notebook's first cell does
    namespace: dict = {}
    for i, source in enumerate(cells):
        exec(compile(source, f"workbench.ipynb, code cell {i + 1}", "exec"), namespace)  # noqa: S102
    results = namespace["results"]
    assert results.experiments == [EXPERIMENT] and len(results.simulated) == 4 * 2 * 2
    assert not namespace["tidy"].empty and not namespace["paired"].empty
    figure = tmp_path / "results" / "workbench" / f"{EXPERIMENT}.png"
    assert figure.read_bytes().startswith(b"\x89PNG")
