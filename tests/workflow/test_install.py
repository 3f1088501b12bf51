"""A non-editable install works away from the checkout: the schema ships as package data and
nothing reads files through the source tree.

The fresh virtual environment borrows the test environment's third-party packages through a
path entry (building torch & co. again would take minutes); banditbench itself is built from a
copy of the project and installed as a regular (non-editable) package.  The borrowed
site-packages is a plain path entry, not a site directory, so its editable-install ``.pth`` of
this checkout is not processed: the only banditbench the fresh environment sees is the installed one.
"""

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("install")
    pkg = tmp / "pkg"
    pkg.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, pkg / name)
    shutil.copytree(ROOT / "src", pkg / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    borrowed = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (Path(site) / "borrowed_dependencies.pth").write_text("\n".join(borrowed) + "\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(pkg),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    work = tmp / "elsewhere"  # outside the checkout and the package copy
    work.mkdir()
    shutil.copy2(ROOT / "config.yaml", work / "my_config.yaml")
    return venv, work


def _cli(venv, work, *args):
    return subprocess.run(
        [str(venv / "bin" / "banditbench"), *args],
        capture_output=True,
        text=True,
        cwd=work,
        env={"PATH": "/usr/bin:/bin"},
    )


def test_the_installed_package_is_a_regular_install_outside_the_checkout(installed):
    venv, work = installed
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import banditbench, banditbench.configuration.grid as c; print(banditbench.__file__); "
            "print(c.SCHEMA_PATH.is_file())",
        ],
        capture_output=True,
        text=True,
        cwd=work,
        env={"PATH": "/usr/bin:/bin"},
    )
    file, schema_shipped = where.stdout.split()
    assert file.startswith(str(venv)) and not file.startswith(str(ROOT))
    assert schema_shipped == "True"


def test_the_installed_cli_validates_a_config_and_runs_a_cell(installed):
    venv, work = installed
    check = _cli(venv, work, "validate", "my_config.yaml")
    assert check.returncode == 0, check.stderr
    assert "my_config.yaml: valid" in check.stdout
    run = _cli(
        venv,
        work,
        "run-one",
        "--config",
        "my_config.yaml",
        "--experiment",
        "linear_delayed_dueling",
        "--algorithm",
        "ldb_df",
        "--delay",
        "geometric_mean50_M20",
        "--seed",
        "0",
        "--horizon",
        "40",
        "--output",
        "out/run.npz",
        "--no-progress",
    )
    assert run.returncode == 0, run.stderr
    assert "cumulative regret" in run.stdout and (work / "out" / "run.npz").stat().st_size > 0


def test_the_installed_cli_names_a_bad_key(installed):
    venv, work = installed
    bad = yaml.safe_load((work / "my_config.yaml").read_text())
    bad["experiments"]["linear_delayed_dueling"]["delays"]["x"] = {"kind": "geometric", "mean": 0.5}
    (work / "bad.yaml").write_text(yaml.safe_dump(bad))
    check = _cli(venv, work, "validate", "bad.yaml")
    assert check.returncode == 2
    assert "experiments.linear_delayed_dueling.delays.x.mean: 0.5 is less than the minimum of 1" in check.stderr
