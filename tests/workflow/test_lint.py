"""The Python sources are ruff-clean with the rule set in pyproject.toml ([tool.ruff.lint]) and formatted as
``ruff format`` writes them ([tool.ruff], line length 120)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def _ruff(*args: str) -> subprocess.CompletedProcess:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        pytest.fail("ruff is not installed next to this Python; it is in the test extra (make install)")
    return subprocess.run([ruff, *args], capture_output=True, text=True, cwd=ROOT)


def test_ruff_check_is_clean():
    run = _ruff("check", ".")
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]


def test_the_sources_are_ruff_formatted():
    run = _ruff("format", "--check", ".")
    assert run.returncode == 0, f"run `ruff format .` (make lint checks it):\n{(run.stdout + run.stderr)[-3000:]}"
