"""Running Snakemake on a copy of the project in a temporary directory (for the end-to-end tests)."""

import os
import re
import shutil
import subprocess
import sys
import zipfile

import yaml

from conftest import ROOT


def copy_project(dest, config):
    """The workflow, library and profiles copied to ``dest``, with ``config`` as its config.yaml."""
    for item in ("Snakefile", "src", "workflow", "config", "envs", "profiles"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dest / item)
    (dest / "config.yaml").write_text(yaml.safe_dump(config))
    return dest


def smk(workdir, *args, env=None, own_src=True, cores="2", timeout=None):
    """Snakemake on a copy of the project; ``own_src``: with the copy's src/ on PYTHONPATH (the
    installed banditbench is the original checkout's, which the copy's Snakefile refuses)."""
    env = dict(os.environ if env is None else env)
    if own_src:
        env["PYTHONPATH"] = str(workdir / "src")
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        cores,
        "--directory",
        str(workdir),
        "--snakefile",
        str(workdir / "Snakefile"),
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=workdir, env=env, timeout=timeout)


def planned(dry_run_output: str) -> dict[str, int]:
    """Job counts per rule from the 'Job stats' table of a dry run."""
    counts = {}
    for line in dry_run_output.split("Job stats:")[1].splitlines()[3:]:
        if line.startswith("total"):
            break
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if m:
            counts[m.group(1)] = int(m.group(2))
    return counts


def members_but_timing(path) -> dict[str, bytes]:
    """The members of a result file that are reproducible bit for bit (all but its ``timing``, ``provenance``
    and ``run_checksum``: resultio.VARYING)."""
    from banditbench.storage.resultio import VARYING

    with zipfile.ZipFile(path) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist() if i.filename.removesuffix(".npy") not in VARYING}
