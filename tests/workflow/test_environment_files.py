"""The files that install the project agree with what its code imports.

* Every third-party module imported by the library (``src/banditbench``) or a rule's script
  (``workflow/scripts``) belongs to a distribution that ``pyproject.toml`` depends on and that
  ``envs/banditbench.yaml`` (the jobs' conda environment, and the container image's) lists —
  or, when every import of it sits inside a function (imported lazily, only by the code that needs
  it), to an optional dependency group ``<extra>`` of ``pyproject.toml`` whose conda file
  ``envs/<extra>.yaml`` (the environment of the rules that need it) lists it.  Such a file carries
  the jobs' environment plus the group, with the same bounds.
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


def _module_level_imports(*folders) -> set[str]:
    """Top-level module names imported outside any function body (at import time of the file)."""
    found: set[str] = set()

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            visit(ast.parse(path.read_text(), filename=str(path)))
    return found


def _optional_requirements() -> dict[str, tuple[str, Requirement]]:
    """Distribution -> (optional dependency group, requirement) of pyproject.toml's extras."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {
        canonicalize_name(r.name): (extra, r)
        for extra, reqs in project.get("optional-dependencies", {}).items()
        for r in map(Requirement, reqs)
    }


def _lazy_distributions() -> set[str]:
    """Distributions whose modules the library and scripts import only inside functions."""
    eager = _module_level_imports("src/banditbench", "workflow/scripts")
    owners = importlib.metadata.packages_distributions()
    lazy = set(_imported_modules("src/banditbench", "workflow/scripts")) - eager
    return {canonicalize_name(d) for m in lazy for d in owners.get(m, [])} - {
        canonicalize_name(d) for m in eager for d in owners.get(m, [])
    }


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


def _conda_requirements(env_name: str = "banditbench") -> dict[str, SpecifierSet]:
    """Package -> bounds of ``envs/<env_name>.yaml`` (its ``pip:`` list included, by PyPI name)."""
    env = yaml.safe_load((ROOT / "envs" / f"{env_name}.yaml").read_text())
    specs = {}
    for dep in (p for d in env["dependencies"] if isinstance(d, dict) for p in d.get("pip", [])):
        req = Requirement(dep)  # pip's syntax
        specs[canonicalize_name(req.name)] = req.specifier
    for dep in env["dependencies"]:
        if not isinstance(dep, str) or dep == "pip":
            continue
        name, spec = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", dep).groups()
        specs[canonicalize_name(name)] = SpecifierSet(spec) if not spec.startswith("=") else SpecifierSet("=" + spec)
    return specs


def _conda_name(dist: str) -> str:
    return canonicalize_name(CONDA_NAME.get(dist, dist))


def test_every_imported_distribution_is_declared_in_pyproject_and_the_conda_file():
    dists = _third_party_distributions()
    assert {"numpy", "torch", "numba", "scikit-learn", "pyyaml"} <= set(dists)  # the scan sees the imports
    declared, conda = _pyproject_requirements(), _conda_requirements()
    optional, lazy = _optional_requirements(), _lazy_distributions()
    extras = {d: optional[d][0] for d in dists if d not in declared and d in optional and d in lazy}
    for dist, extra in extras.items():
        assert _conda_name(dist) in _conda_requirements(extra), f"{dist} (extra {extra!r}) is not in envs/{extra}.yaml"
    missing_pyproject = {d: sorted(f)[:3] for d, f in dists.items() if d not in declared and d not in extras}
    missing_conda = {d: sorted(f)[:3] for d, f in dists.items() if _conda_name(d) not in conda and d not in extras}
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


def test_an_optional_extra_env_is_the_jobs_env_plus_the_extra():
    """``envs/<extra>.yaml`` of each extra a rule needs: every package of envs/banditbench.yaml with the same
    bounds, and the extra's packages with pyproject.toml's bounds."""
    base = _conda_requirements()
    optional = _optional_requirements()
    extras = {extra for extra, _ in optional.values() if (ROOT / "envs" / f"{extra}.yaml").is_file()}
    assert "prompts" in extras
    for extra in extras:
        env = _conda_requirements(extra)
        assert {k: v for k, v in env.items() if k in base} == base, f"envs/{extra}.yaml differs from the jobs' env"
        for dist, (group, req) in optional.items():
            if group == extra:
                assert env.get(_conda_name(dist)) == req.specifier, f"envs/{extra}.yaml: {dist} needs {req.specifier}"


def test_lazy_imports_are_told_apart_from_module_level_ones(tmp_path, monkeypatch):
    fake = tmp_path / "src" / "banditbench"
    fake.mkdir(parents=True)
    (fake / "m.py").write_text("import numpy\n\ndef f():\n    import transformers\n    from torch import nn\n")
    (tmp_path / "workflow" / "scripts").mkdir(parents=True)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _module_level_imports("src/banditbench", "workflow/scripts") == {"numpy"}
    assert set(_imported_modules("src/banditbench", "workflow/scripts")) == {"numpy", "transformers", "torch"}


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
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--containerize"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "COPY envs/banditbench.yaml" in run.stdout
    assert (ROOT / "Dockerfile").read_text() == run.stdout, (
        "Dockerfile is stale: regenerate it with `make Dockerfile` (snakemake --containerize > Dockerfile)"
    )
