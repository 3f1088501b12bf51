"""One code version per run, wherever the workflow is deployed.

The Snakefile imports its own ``src/`` first and accepts a ``banditbench`` imported before it ran
only when the code is the same (a fingerprint of the sources, not their path); a job reads the
data files its cell names from the inputs Snakemake hands it (a storage provider's local copies).
"""

import shutil
import subprocess
import sys

import numpy as np
import pytest
import yaml

from banditbench.data import files
from banditbench.storage.fingerprint import fingerprint
from conftest import ROOT
from smk import copy_project


def test_the_fingerprint_follows_the_code_not_its_location(tmp_path):
    copy = tmp_path / "elsewhere" / "banditbench"
    shutil.copytree(ROOT / "src" / "banditbench", copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert fingerprint(copy) == fingerprint(ROOT / "src" / "banditbench") == fingerprint()
    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"compiled")  # caches are not code
    assert fingerprint(copy) == fingerprint()
    runner = copy / "simulation" / "runner.py"
    runner.write_text(runner.read_text() + "\n")
    assert fingerprint(copy) != fingerprint()
    with pytest.raises(FileNotFoundError, match="no banditbench sources"):
        fingerprint(tmp_path / "missing")


def _plan_after_importing(workdir, package_parent):
    """A dry run of the workflow in ``workdir`` by a process that imported banditbench from ``package_parent``."""
    code = (
        f"import sys; sys.path.insert(0, {str(package_parent)!r}); import banditbench; "
        f"from snakemake.cli import main; main(['-n', '--cores', '1', '--directory', {str(workdir)!r}, "
        f"'--snakefile', {str(workdir / 'Snakefile')!r}])"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=workdir, timeout=300)


@pytest.mark.slow
def test_a_banditbench_imported_before_the_workflow_must_be_the_same_code(tmp_path):
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config["experiments"] = {"lipschitz_triangle": config["experiments"]["lipschitz_triangle"]}
    del config["claims"]  # they name the experiments cut here
    (tmp_path / "work").mkdir()
    work = copy_project(tmp_path / "work", config)
    same = tmp_path / "same"
    shutil.copytree(ROOT / "src", same, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    ok = _plan_after_importing(work, same)
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert "This was a dry-run" in ok.stdout + ok.stderr

    other = tmp_path / "other"
    shutil.copytree(same, other)
    delays = other / "banditbench" / "simulation" / "delays.py"
    delays.write_text(delays.read_text() + "\n# edit\n")
    refused = _plan_after_importing(work, other)
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr
    assert f"banditbench was imported from {other / 'banditbench'}, whose code differs" in said


def test_a_job_reads_its_data_from_the_inputs_it_was_handed(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "_LOCATED", {})
    stored = tmp_path / ".snakemake" / "storage" / "fs" / "store" / "data" / "processed" / "d" / "k.npz"
    stored.parent.mkdir(parents=True)
    files.save_npz(stored, {"x": np.arange(3.0)}, {"dataset": "d"})
    with pytest.raises(Exception, match="data/processed/d/k.npz: prepared data does not exist"):
        files.load_npz("data/processed/d/k.npz", "prepared data")
    files.use_inputs([str(stored), str(tmp_path / "data" / "oracles" / "o.npz")])
    assert files.located("data/processed/d/k.npz") == str(stored)
    assert files.located("./data/processed/d/../d/k.npz") == str(stored)
    assert files.located("data/processed/d/other.npz") == "data/processed/d/other.npz"  # not an input: as named
    arrays, meta = files.load_npz("data/processed/d/k.npz", "prepared data", expect={"dataset": "d"})
    assert np.array_equal(arrays["x"], np.arange(3.0)) and meta["dataset"] == "d"
