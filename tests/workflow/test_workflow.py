"""Catalog habits of the Snakemake workflow: `snakemake --lint` clean and `snakefmt` formatted."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

WORKFLOW_FILES = [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]


def test_workflow_lints_clean():
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--lint", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert "Congratulations, your workflow is in a good condition!" in run.stdout + run.stderr, run.stdout[-3000:]


def test_workflow_files_are_snakefmt_formatted():
    snakefmt = shutil.which("snakefmt", path=str(Path(sys.executable).parent))
    if snakefmt is None:
        pytest.fail("snakefmt is not installed next to this Python; it is in the test extra (make install)")
    run = subprocess.run([snakefmt, "--check", *map(str, WORKFLOW_FILES)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
