"""The files that install the project agree with what its code imports.

* Every third-party module imported by the library (``src/banditbench``) or a rule's script
  (``workflow/scripts``) belongs to a distribution that ``pyproject.toml`` depends on and that
  ``envs/banditbench.yaml`` (the jobs' conda environment, and the container image's) lists.
* The conda file carries every runtime dependency of ``pyproject.toml`` with the same version
  bounds, except those only the submitting Snakemake process uses (``MAIN_PROCESS_ONLY``).
* The committed ``Dockerfile`` is exactly what ``snakemake --containerize`` generates from the
  conda file today (run with a stand-in ``conda`` that answers Snakemake's start-up queries:
  the generated text depends only on the environment files), so the image cannot drift either.
"""

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from conftest import ROOT

#: pip distribution -> conda-forge package, where the names differ
CONDA_NAME = {"torch": "pytorch-cpu", "matplotlib": "matplotlib-base", "snakemake": "snakemake-minimal"}
#: pyproject dependencies that no job imports: the Snakemake process that plans and submits jobs uses them
MAIN_PROCESS_ONLY = {
    "snakemake-executor-plugin-slurm": "submits jobs to Slurm from the main Snakemake process",
    "pygments": "syntax highlighting of `snakemake --report`, built by the main Snakemake process",
}


def _imported_modules(*folders) -> dict[str, set[str]]:
    """Top-level module name -> files importing it (absolute imports, anywhere in the file)."""
    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def _third_party_distributions() -> dict[str, set[str]]:
    """Distribution (canonical name) -> files importing one of its modules."""
    owners = importlib.metadata.packages_distributions()
    dists: dict[str, set[str]] = {}
    for module, files in _imported_modules("src/banditbench", "workflow/scripts").items():
        if module in sys.stdlib_module_names or module in ("banditbench", "__future__"):
            continue
        assert module in owners, f"{sorted(files)} import {module!r}, which no installed distribution provides"
        for dist in owners[module]:
            dists.setdefault(canonicalize_name(dist), set()).update(files)
    return dists


def _pyproject_requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {canonicalize_name(r.name): r for r in map(Requirement, project["dependencies"])}


def _conda_requirements() -> dict[str, SpecifierSet]:
    env = yaml.safe_load((ROOT / "envs" / "banditbench.yaml").read_text())
    specs = {}
    for dep in env["dependencies"]:
        name, spec = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", dep).groups()
        specs[canonicalize_name(name)] = SpecifierSet(spec) if not spec.startswith("=") else SpecifierSet("=" + spec)
    return specs


def _conda_name(dist: str) -> str:
    return canonicalize_name(CONDA_NAME.get(dist, dist))


def test_every_imported_distribution_is_declared_in_pyproject_and_the_conda_file():
    dists = _third_party_distributions()
    assert {"numpy", "torch", "numba", "scikit-learn", "pyyaml"} <= set(dists)   # the scan sees the imports
    declared, conda = _pyproject_requirements(), _conda_requirements()
    missing_pyproject = {d: sorted(f)[:3] for d, f in dists.items() if d not in declared}
    missing_conda = {d: sorted(f)[:3] for d, f in dists.items() if _conda_name(d) not in conda}
    assert not missing_pyproject, f"imported but not in pyproject.toml's dependencies: {missing_pyproject}"
    assert not missing_conda, f"imported but not in envs/banditbench.yaml: {missing_conda}"


def test_the_conda_file_carries_every_runtime_dependency_with_the_same_bounds():
    declared, conda = _pyproject_requirements(), _conda_requirements()
    for dist, req in declared.items():
        if dist in MAIN_PROCESS_ONLY:
            assert _conda_name(dist) not in conda, f"{dist} is marked main-process only but the conda file lists it"
            continue
        name = _conda_name(dist)
        assert name in conda, f"pyproject.toml depends on {dist} ({req}), envs/banditbench.yaml lacks {name}"
        assert conda[name] == req.specifier, f"{dist}: pyproject.toml says {req.specifier}, conda file {conda[name]}"
    python = conda.pop(canonicalize_name("python"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert all(SpecifierSet(project["requires-python"]).contains(v.version.rstrip(".*")) for v in python)
    extra = set(conda) - {_conda_name(d) for d in declared}
    assert not extra, f"envs/banditbench.yaml lists packages pyproject.toml does not: {sorted(extra)}"


def test_the_scan_finds_an_undeclared_import(tmp_path, monkeypatch):
    """The check can fail: a module importing a distribution the files do not declare is reported."""
    declared = _pyproject_requirements()
    fake = tmp_path / "src" / "banditbench"
    fake.mkdir(parents=True)
    (fake / "m.py").write_text("def f():\n    import jinja2\n    from numpy import linalg\n")
    (tmp_path / "workflow" / "scripts").mkdir(parents=True)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = _imported_modules("src/banditbench", "workflow/scripts")
    assert set(found) == {"jinja2", "numpy"}
    if "jinja2" in importlib.metadata.packages_distributions():
        assert "jinja2" in _third_party_distributions() and "jinja2" not in declared


STAND_IN_CONDA = """#!/bin/sh
case "$1" in
  info) echo '{"conda_prefix": "/opt/conda", "envs_dirs": ["/opt/conda/envs"], "pkgs_dirs": ["/opt/conda/pkgs"], \
"conda_version": "24.7.1", "platform": "linux-64"}';;
  --version) echo "conda 24.7.1";;
  config) echo '{"get": {"channel_priority": "strict"}, "success": true, "warnings": []}';;
  *) exit 1;;
esac
"""


@pytest.mark.slow
def test_the_dockerfile_is_what_snakemake_containerize_generates(tmp_path):
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "conda").write_text(STAND_IN_CONDA)
    (shim / "conda").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run([sys.executable, "-m", "snakemake", "--containerize"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "COPY envs/banditbench.yaml" in run.stdout
    assert (ROOT / "Dockerfile").read_text() == run.stdout, (
        "Dockerfile is stale: regenerate it with `make Dockerfile` (snakemake --containerize > Dockerfile)")
