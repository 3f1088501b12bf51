"""Snakemake reads a config as ``banditbench validate`` does (``1e-3`` a number, as in YAML 1.2), and a config
file it cannot read is one line, not a traceback (issue 45)."""

from pathlib import Path

import pytest

from banditbench.cli import main
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


def _unreadable_file(folder):
    """A file this process cannot read (a file without permissions; a write-only kernel file where it runs as
    root), or None."""
    path = folder / "secret.yaml"
    path.write_text("seeds: 2\n")
    path.chmod(0)
    for candidate in (path, Path("/sys/bus/pci/rescan")):
        try:
            candidate.open().close()
        except PermissionError:
            return candidate
        except OSError:
            continue
    return None


@pytest.mark.slow
def test_a_configfile_that_cannot_be_read_is_one_line_from_snakemake_and_from_validate(project, capsys):
    (project / "folder.yaml").mkdir()
    (project / "binary.yaml").write_bytes(b"\xff\xfe not text")
    cases = [
        ("missing.yaml", "--configfile missing.yaml: config file does not exist", "missing.yaml: config file does"),
        ("folder.yaml", "--configfile folder.yaml: a folder, not a config file", "folder.yaml: a folder, not a"),
        ("binary.yaml", "--configfile: a config file cannot be read (UnicodeDecodeError: ", "binary.yaml: not a YAML"),
    ]
    unreadable = _unreadable_file(project)
    if unreadable is not None:
        why = "cannot read the config file (Permission denied)"
        cases.append((str(unreadable), f"--configfile {unreadable}: {why}", f"{unreadable}: {why}"))
    for path, line, validated in cases:
        for dry_run in ([], ["-n"]):  # the console, and Snakemake's own output (which the console passes on)
            run = smk(project, *dry_run, "--configfile", path)
            shown = [
                text
                for text in (run.stdout + run.stderr).splitlines()
                if text.strip() and not text.startswith("Using workflow specific profile")
            ]
            assert run.returncode == 1 and len(shown) == 1 and shown[0].startswith(line), shown
        assert main(["validate", str(project / path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("banditbench: configuration error: ") and validated in err, err
