"""The Python sources are ruff-clean with the rule set in pyproject.toml ([tool.ruff.lint])."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def test_ruff_check_is_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        pytest.fail("ruff is not installed next to this Python; it is in the test extra (make install)")
    run = subprocess.run([ruff, "check", "."], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
