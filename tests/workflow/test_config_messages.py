"""Snakemake reads a config as ``banditbench validate`` does (``1e-3`` a number, as in YAML 1.2), and a config
file it cannot read is one line, not a traceback (issue 45)."""

import pytest

from smk import copy_project, smk

#: a grid written as people write numbers: 1e-3 (a string to YAML 1.1, which Snakemake reads)
GRID = """
claims_alpha: 5e-2
experiments:
  duel:
    environment: {name: synthetic_dueling, params: {dimension: 3, n_arms: 4}}
    horizon: 30
    seeds: 2
    seeds_per_job: 2
    table_horizons: [30]
    algorithms:
      ldb: {policy: ldb_df, params: {lam: 1e-3, beta: 5e-1}}
    delays:
      late: {kind: geometric, mean: 2e1}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    work = copy_project(tmp_path_factory.mktemp("messages"), {"experiments": {}})
    (work / "config.yaml").write_text(GRID)
    (work / "grid.yaml").write_text(GRID.replace("duel:", "other:"))
    return work


@pytest.mark.slow
def test_snakemake_reads_1e_3_in_the_config_files_and_on_the_command_line_as_numbers(project):
    for args in ([], ["--configfile", "grid.yaml", "--config", "override=ldb.lam=1e-2"]):
        run = smk(project, "-n", *args)
        out = run.stdout + run.stderr
        assert run.returncode == 0, out[-3000:]
        assert "read as a string" not in out and "Traceback" not in out
    assert "experiment=other, algorithm=ldb.lam-0.01, delay=late" in run.stdout
