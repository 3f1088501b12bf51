"""Provenance in every result: what produced it (commit, versions, CPU, BLAS kernel, host), kept
out of the byte-identical members, checked against damage, summarised by the CLI and the report."""

import io
import json
import platform
import shutil
import socket
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from banditbench import __version__
from banditbench.storage import provenance
from banditbench.analysis.run_info import provenance_html, run_info_html
from banditbench.cli import main
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.errors import CorruptFileError
from banditbench.storage.resultio import load_provenance, load_result, save_result, summarize_files
from banditbench.simulation.job import run_cell
from banditbench.storage.fingerprint import fingerprint
from conftest import CELL as CELL_FOLDER, ROOT
from smk import copy_project, members_but_timing, smk

CELL = {
    "experiment": "e",
    "algorithm": "ldb_df",
    "delay_label": "geo",
    "seed": 3,
    "horizon": 40,
    "budget": None,
    "environment": {"name": "synthetic_dueling", "params": {"dimension": 4, "n_arms": 5}},
    "policy": {"name": "ldb_df", "params": {}},
    "delay": {"kind": "geometric", "mean": 5, "window": 10},
}


@pytest.fixture
def fresh(monkeypatch):
    """Provenance found anew (not cached), outside Snakemake (no commit handed over)."""
    monkeypatch.setattr(provenance, "_static", None)
    monkeypatch.setattr(provenance, "_dynamic", {})
    monkeypatch.delenv(provenance.COMMIT_VAR, raising=False)
    monkeypatch.delenv(provenance.DIRTY_VAR, raising=False)


def _git(*args, cwd=ROOT) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_a_result_records_what_produced_it(tmp_path, fresh):
    path = tmp_path / "r.npz"
    save_result(path, *run_cell(CELL))
    prov = load_provenance(path)
    if provenance.source_checkout() is not None and shutil.which("git"):  # run inside the checkout
        assert prov["commit"] == _git("rev-parse", "HEAD") and prov["commit_from"] == "checkout"
        assert prov["dirty"] is bool(_git("status", "--porcelain", "--untracked-files=no"))
    assert prov["host"] == socket.gethostname() and prov["python"] == platform.python_version()
    assert prov["cpu"] and prov["machine"] == platform.machine()
    assert prov["code"] == fingerprint(ROOT / "src" / "banditbench")  # the code itself
    assert prov["packages"]["numpy"] == np.__version__ and prov["packages"]["banditbench"] == __version__
    assert set(prov["packages"]) == {"banditbench", "numpy", "scipy", "torch", "numba", "snakemake"}
    blas = [lib for lib in prov["blas"] if lib["user_api"] == "blas"]
    assert blas and all(lib["internal_api"] and lib["version"] and lib["num_threads"] >= 1 for lib in blas)
    assert set(provenance.THREAD_VARS) <= set(prov["threads"])
    assert provenance.blas_label(prov) != provenance.UNKNOWN
    assert load_result(path)[1]["cell"] == CELL  # the result itself loads as before


def test_the_commit_handed_over_by_snakemake_wins(fresh, monkeypatch):
    monkeypatch.setenv(provenance.COMMIT_VAR, "c0ffee" * 6 + "beef")
    monkeypatch.setenv(provenance.DIRTY_VAR, "1")
    prov = provenance.collect()
    assert (prov["commit"], prov["dirty"], prov["commit_from"]) == ("c0ffee" * 6 + "beef", True, "snakemake")


def test_a_folder_that_is_not_the_top_of_a_checkout_has_no_commit(tmp_path):
    assert provenance.git_state(tmp_path) == {"commit": "unknown", "dirty": None}
    assert provenance.git_state(ROOT / "src")["commit"] == "unknown"  # inside a checkout, not its top
    assert provenance.git_environment(tmp_path) == {provenance.COMMIT_VAR: "unknown", provenance.DIRTY_VAR: "unknown"}


def test_collecting_imports_neither_torch_nor_numba_and_finds_their_versions():
    code = (
        "import sys, banditbench.storage.provenance as p; prov = p.collect(); "
        "assert 'torch' not in sys.modules and 'numba' not in sys.modules, sorted(sys.modules); "
        "assert 'torch' not in prov['threads']; from importlib import metadata; "
        "assert prov['packages'] == {'banditbench': p.__version__, "
        "**{n: metadata.version(n) for n in p.PACKAGES}}, prov['packages']; print('ok')"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


def test_the_reproducible_members_stay_byte_identical_whatever_produced_them(tmp_path):
    series, meta, timing = run_cell(CELL)
    again = run_cell(CELL)
    save_result(tmp_path / "a.npz", series, meta, timing)
    other = {**provenance.collect(), "host": "elsewhere", "dirty": True, "commit": "f" * 40}
    save_result(tmp_path / "b.npz", *again, provenance=other)
    a, b = members_but_timing(tmp_path / "a.npz"), members_but_timing(tmp_path / "b.npz")
    assert a == b and "checksum.npy" in a and "provenance.npy" not in a
    assert load_provenance(tmp_path / "b.npz")["host"] == "elsewhere"
    assert load_provenance(tmp_path / "a.npz")["host"] == socket.gethostname()


def _rewrite(path, name: str, data: bytes | None) -> None:
    """Replace (or with ``None`` drop) one member, keeping the zip valid (an edit, not noise)."""
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    if data is None:
        del members[name]
    else:
        members[name] = data
    with zipfile.ZipFile(path, "w") as zf:
        for n, d in members.items():
            zf.writestr(n, d)


def _json_member(value) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.frombuffer(json.dumps(value, sort_keys=True).encode(), dtype=np.uint8))
    return buf.getvalue()


@pytest.fixture
def result(tmp_path):
    path = tmp_path / "r.npz"
    save_result(path, *run_cell(CELL))
    return path


@pytest.mark.parametrize("member", ["provenance", "timing"])
def test_an_edited_provenance_or_timing_member_is_caught(result, member):
    value = load_provenance(result) if member == "provenance" else load_result(result)[2]
    _rewrite(result, f"{member}.npy", _json_member({**value, "host": "forged"}))
    for load in (load_result, load_provenance):
        with pytest.raises(CorruptFileError, match=r"checksum mismatch in its timing or provenance"):
            load(result)


def test_a_result_missing_one_provenance_member_is_caught(result):
    _rewrite(result, "run_checksum.npy", None)
    with pytest.raises(CorruptFileError, match=r"lacks \['run_checksum'\]"):
        load_result(result)


def test_a_result_written_before_provenance_still_loads(result):
    _rewrite(result, "run_checksum.npy", None)
    _rewrite(result, "provenance.npy", None)
    assert load_result(result)[1]["cell"] == CELL and load_provenance(result) is None
    summary, damaged = summarize_files([result])
    assert not damaged and "no result records its provenance (1 written before" in summary.warnings()[0]


def _fake_runs(root, produced: dict[int, dict]) -> list:
    """Small result files of experiment ``exp``, seed -> provenance (no simulation: fast)."""
    paths = []
    for seed, prov in produced.items():
        cell = {
            "experiment": "exp",
            "algorithm": "alg",
            "delay_label": "none",
            "budget": None,
            "seed": seed,
            "horizon": 2,
        }
        path = root / "runs/exp/alg/none/none" / CELL_FOLDER / f"{seed}.npz"
        save_result(path, {"regret": np.zeros(2)}, {"cell": cell}, {"wall_time_s": 0.1}, provenance=prov)
        paths.append(path)
    return paths


def _prov(commit="a" * 40, host="node1", dirty=False, arch="Haswell"):
    return {
        "commit": commit,
        "dirty": dirty,
        "commit_from": "snakemake",
        "host": host,
        "cpu": "Some CPU",
        "machine": "x86_64",
        "os": "Linux",
        "python": "3.11.7",
        "packages": {"banditbench": "0.1.0", "numpy": "2.0.0", "torch": None},
        "blas": [
            {
                "user_api": "blas",
                "internal_api": "openblas",
                "version": "0.3.27",
                "architecture": arch,
                "num_threads": 1,
            }
        ],
        "threads": {"OMP_NUM_THREADS": "1"},
    }


def test_the_cli_summarises_one_commit_and_host_without_warnings(tmp_path, capsys):
    _fake_runs(tmp_path, {0: _prov(), 1: _prov()})
    assert main(["provenance", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"2 result(s) in {tmp_path}\n")
    assert "commit             2  aaaaaaaaaaaa (clean)" in out and "host               2  node1" in out
    assert "BLAS kernel        2  openblas 0.3.27 Haswell" in out and "torch              2  not installed" in out
    assert "warning" not in out


def test_the_cli_flags_results_of_two_commits_and_hosts(tmp_path, capsys):
    _fake_runs(tmp_path, {0: _prov(), 1: _prov(), 2: _prov(commit="b" * 40, host="node2", dirty=True)})
    assert main(["provenance", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "commit             2  aaaaaaaaaaaa (clean)\n                     1  bbbbbbbbbbbb (dirty tree)" in out
    assert (
        "warning: results from 2 commits (mixed within exp): aaaaaaaaaaaa (clean): 2; bbbbbbbbbbbb (dirty tree): 1"
    ) in out
    assert "warning: results from 2 hosts (mixed within exp): node1: 2; node2: 1" in out
    assert "warning: results from a checkout with uncommitted changes (dirty tree) in exp" in out


def test_the_cli_names_a_damaged_result_and_a_missing_folder(tmp_path, capsys):
    paths = _fake_runs(tmp_path, {0: _prov(), 1: _prov()})
    _rewrite(paths[1], "provenance.npy", _json_member(_prov(host="forged")))
    assert main(["provenance", str(tmp_path)]) == 3
    out = capsys.readouterr().out
    assert out.startswith(f"1 result(s) in {tmp_path}\n")
    assert f"damaged: {paths[1]}: checksum mismatch in its timing or provenance" in out
    assert main(["provenance", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_the_report_shows_what_produced_the_results_and_flags_a_mixture(tmp_path):
    same = _fake_runs(tmp_path / "one", {0: _prov(), 1: _prov()})
    page = provenance_html(same)
    assert "What produced the results" in page and "aaaaaaaaaaaa (clean)" in page and "Warning" not in page
    assert "all from one commit, host and BLAS kernel" in page
    mixed = _fake_runs(tmp_path / "two", {0: _prov(), 1: _prov(host="node2", arch="SkylakeX")})
    page = provenance_html(mixed)
    assert "<strong>Warning:</strong> results from 2 hosts (mixed within exp): node1: 1; node2: 1" in page
    assert "results from 2 BLAS kernels of openblas 0.3.27" in page and "openblas 0.3.27 SkylakeX (1 results)" in page
    grid = load_grid(load_config_file(ROOT / "config.yaml"))
    full = run_info_html(grid, ["config.yaml"], mixed)
    assert "What produced the results" in full and "Tables and plots built with" in full
    assert full.index("What produced the results") < full.index("<h2>Versions</h2>")


TINY = {
    "seeds": None,
    "horizon": None,
    "experiments": {
        "prov": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
            "horizon": 20,
            "seeds": 2,
            "seeds_per_job": 2,
            "table_horizons": [20],
            "algorithms": {"random": {"policy": "random_pair"}},
            "delays": {"none": {"kind": "none"}},
        }
    },
}


@pytest.mark.slow
def test_snakemake_hands_its_commit_to_the_jobs_and_a_new_commit_reruns_nothing(tmp_path):
    project = copy_project(tmp_path, TINY)
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    head = _git("rev-parse", "HEAD", cwd=project)
    run = smk(project, "results/default/report/run_info.html")
    assert run.returncode == 0, run.stderr[-3000:]
    runs = sorted((project / "results/runs").rglob("*.npz"))
    assert len(runs) == 2
    for path in runs:
        prov = load_provenance(path)
        assert (prov["commit"], prov["dirty"], prov["commit_from"]) == (head, False, "snakemake")
        assert prov["threads"]["OPENBLAS_NUM_THREADS"] == "1"
    page = (project / "results/default/report/run_info.html").read_text()
    assert f"{head[:12]} (clean)" in page and "Warning" not in page
    (project / "NOTE").write_text("a new commit\n")
    subprocess.run([*git, "add", "NOTE"], check=True)
    subprocess.run([*git, "commit", "-qm", "two"], check=True)
    dry = smk(project, "-n", "results/default/report/run_info.html")
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout, dry.stdout[-3000:]


def test_a_second_blas_library_loaded_by_some_jobs_is_no_mixture_a_kernel_change_is(tmp_path, capsys):
    """A job importing scipy loads scipy's OpenBLAS beside numpy's: one machine, not two (issue 35)."""
    with_scipy = _prov()
    with_scipy["blas"] = [*with_scipy["blas"], {**with_scipy["blas"][0], "version": "0.3.30"}]
    _fake_runs(tmp_path / "one", {0: _prov(), 1: with_scipy})
    assert main(["provenance", str(tmp_path / "one")]) == 0
    assert "warning" not in capsys.readouterr().out
    _fake_runs(tmp_path / "two", {0: _prov(), 1: _prov(arch="SkylakeX")})
    assert main(["provenance", str(tmp_path / "two")]) == 0
    assert "warning: results from 2 BLAS kernels of openblas 0.3.27" in capsys.readouterr().out


def test_an_untracked_file_among_the_code_makes_the_tree_dirty(tmp_path):
    """A new algorithm file not yet added is code the commit does not name; an untracked file outside the
    code folders (notes, outputs) is not (issue 35)."""

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@t")
    git("config", "user.name", "t")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    git("add", ".")
    git("commit", "-qm", "one")
    assert provenance.git_state(tmp_path)["dirty"] is False
    (tmp_path / "notes.txt").write_text("n")
    assert provenance.git_state(tmp_path)["dirty"] is False
    (tmp_path / "src" / "my_policy.py").write_text("y = 2\n")
    assert provenance.git_state(tmp_path)["dirty"] is True
    (tmp_path / "src" / "my_policy.py").unlink()
    (tmp_path / "src" / "a.py").write_text("x = 2\n")
    assert provenance.git_state(tmp_path)["dirty"] is True
    git("checkout", "src/a.py")


def test_what_the_caller_writes_itself_does_not_make_the_tree_dirty(tmp_path):
    """A claims run recorded after another (benchmarks/claims_run.py) finds the first one's files in docs/runs/,
    uncommitted: its own outputs, not the code that made it; a change anywhere else still counts."""

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@t")
    git("config", "user.name", "t")
    (tmp_path / "src").mkdir()
    (tmp_path / "docs" / "runs").mkdir(parents=True)
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "docs" / "runs" / "one.csv").write_text("a\n")
    git("add", ".")
    git("commit", "-qm", "one")
    (tmp_path / "docs" / "runs" / "one.csv").write_text("b\n")
    (tmp_path / "docs" / "runs" / "two.csv").write_text("c\n")
    assert provenance.git_state(tmp_path)["dirty"] is True
    assert provenance.git_state(tmp_path, outputs=("docs/runs/",))["dirty"] is False
    (tmp_path / "src" / "a.py").write_text("x = 2\n")
    assert provenance.git_state(tmp_path, outputs=("docs/runs/",))["dirty"] is True
