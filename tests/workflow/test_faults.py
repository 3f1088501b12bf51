"""Faults tried by hand on a tiny grid, and the pipeline's answer to each (issues 38 and 45).

Each fault ended badly before: a stale lock after ``kill -9``, a damaged result in a read-only
results folder, a truncated file in the download mirror, a damaged raw file moved aside but never
fetched again, a prepared dataset rebuilt mid-grid re-running every finished simulation of it, and a
full disk; then (issue 45) faults that still ended in Snakemake's words or blocked the rerun: a second
``snakemake`` on a project where one runs, a SIGTERM mid-grid, a disk filling up as a job ends, and a
results folder turned read-only mid-run.  Each has a fast test of the function that answers it and,
marked slow, an end-to-end run of Snakemake on a copy of the project (tests/smk.py) that shows what the
user sees.  The full-disk and read-only runs mount a small tmpfs over the results folder and are
skipped where that is not allowed (not root, no mount).  Runs held or changed mid-grid get a
``sitecustomize`` on their jobs' import path (:data:`HOOK`); the tests find result files by name
(``rglob``), not by their folder, whose layout is the pipeline's business.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from snakemake_interface_logger_plugins.common import LogEvent

import snakemake_logger_plugin_banditbench as plugin

from banditbench import cli
from banditbench.analysis.timing import job_table, write_timing
from banditbench.configuration.grid import load_grid
from banditbench.storage.cells import RESULT_PATH
from banditbench.data import quarantine, verify
from banditbench.data.catalog import DATASETS
from banditbench.data.fetch import DataFetchError, fetch
from banditbench.errors import CorruptFileError
from banditbench.simulation.job import run_cell
from banditbench.storage import resultio, reuse, runlock
from banditbench.storage.logs import CONSOLE_VAR, storage_problem
from banditbench.storage.resultio import identity_from_path, load_provenance, load_result, save_result
from conftest import CELL, MIRROR, needs_mirror
from smk import copy_project, members_but_timing, smk

BANKNOTE = "uci/banknote/data_banknote_authentication.txt"
RESULT = f"results/runs/exp/ldb_df/none/none/{CELL}/{{}}.npz"
RUN_CELL = {
    "experiment": "exp",
    "algorithm": "ldb_df",
    "delay_label": "none",
    "seed": 0,
    "horizon": 40,
    "budget": None,
    "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
    "policy": {"name": "ldb_df", "params": {}},
    "delay": {"kind": "none"},
}


def _grid(experiment: dict, seeds: int = 4) -> dict:
    return {
        "seeds": None,
        "horizon": None,
        "experiments": {
            "exp": {
                **experiment,
                "horizon": 40,
                "seeds": seeds,
                "seeds_per_job": 1,
                "delays": {"none": {"kind": "none"}},
            }
        },
    }


#: a grid reading a downloaded dataset (the download, preprocess and simulate rules)
BANK = _grid(
    {
        "environment": {"name": "classification_bandit", "params": {"dataset": "banknote"}},
        "algorithms": {"linucb": {"policy": "linucb"}},
    }
)
#: a grid without data files (only simulate and aggregate rules)
DUEL = _grid(
    {
        "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
        "algorithms": {"ldb": {"policy": "ldb_df"}},
    },
    seeds=6,
)
#: a grid reading a prepared dataset that needs no download (digits, bundled with scikit-learn)
DIGITS = _grid(
    {
        "environment": {
            "name": "classification_bandit",
            "params": {"dataset": "digits", "preprocessing": {"image_size": 2}},
        },
        "algorithms": {"linucb": {"policy": "linucb"}},
    }
)


def _project(path: Path, grid: dict) -> Path:
    path.mkdir(parents=True)
    return copy_project(path, grid)


def _run(work: Path, *args, env=None):
    run = smk(work, *args, "--quiet", env=env)
    return run, run.stdout + run.stderr


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@contextmanager
def _tmpfs(path: Path, size: str):
    """A tmpfs of ``size`` mounted on ``path`` (skips the test where mounting is not allowed)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _remount(path: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(path)], check=True, capture_output=True)


def _damage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[100:107] = b"garbage"  # inside a member's compressed payload
    path.write_bytes(bytes(data))


# --- 1. a lock left by a killed run -----------------------------------------------------------------------

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")


@pytest.fixture
def locked(tmp_path, monkeypatch):
    """A working directory holding Snakemake's lock files, as a killed run leaves them."""
    monkeypatch.chdir(tmp_path)
    runlock.LOCKS.mkdir(parents=True)
    for kind in ("input", "output"):
        (runlock.LOCKS / f"0.{kind}.lock").write_text("results/tables/exp.csv\n")
    return tmp_path


def _record(pid: int, started, host: str | None = None) -> Path:
    """A run's record as :func:`runlock.register` writes it, for another process."""
    record = {
        "host": host or socket.gethostname(),
        "boot": runlock._boot_id(),
        "pid": pid,
        "started": started,
        "since": time.time(),
    }
    path = runlock.RUNS / f"{record['host']}.{pid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return path


@contextmanager
def _process(*argv: str, cwd=None, shows: str | None = None):
    """A running process (killed at the end), once ``/proc`` shows ``shows`` as its command (after an exec)."""
    proc = subprocess.Popen(list(argv), cwd=cwd)
    try:
        for _ in range(250):
            if Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")[0] == (shows or argv[0]).encode():
                break
            time.sleep(0.02)
        yield proc
    finally:
        proc.kill()
        proc.wait()


@needs_proc
def test_a_lock_whose_run_was_killed_is_removed_in_one_line(locked):
    """Before: every plain rerun failed with Snakemake's "Directory cannot be locked ... --unlock"."""
    proc = subprocess.Popen(["true"])
    proc.wait()  # its run was killed: it no longer runs
    record = _record(proc.pid, 12345)
    note = runlock.release_stale()
    assert note.startswith(".snakemake/locks: removed the lock left by the snakemake run started at ")
    assert note.endswith(f"(pid {proc.pid}), which no longer runs (killed?); this run resumes it")
    assert not runlock.LOCKS.exists() and not record.exists()
    assert runlock.release_stale() is None  # nothing more to say


@needs_proc
def test_a_lock_whose_pid_now_belongs_to_another_process_is_removed(locked):
    with _process("sleep", "30") as proc:
        _record(proc.pid, runlock._started(proc.pid) - 1)  # the pid was reused after the run ended
        assert "removed the lock" in runlock.release_stale()


@needs_proc
def test_a_lock_of_a_run_still_running_is_kept(locked):
    with _process("sleep", "30") as proc:
        _record(proc.pid, runlock._started(proc.pid))
        assert runlock.release_stale() is None
        assert sorted(p.name for p in runlock.LOCKS.iterdir()) == ["0.input.lock", "0.output.lock"]


@needs_proc
def test_a_lock_is_kept_while_a_snakemake_runs_in_the_directory(locked):
    proc = subprocess.Popen(["true"])
    proc.wait()
    _record(proc.pid, 12345)  # the recorded run was killed, but ...
    with _process(
        "bash", "-c", "exec -a snakemake sleep 30", cwd=locked, shows="snakemake"
    ) as running:  # ... one runs here
        assert runlock.snakemake_here() == [running.pid]
        assert runlock.release_stale() is None
        assert runlock.LOCKS.is_dir()
    assert runlock.snakemake_here() == []


@needs_proc
@pytest.mark.parametrize("host", ["another-node", None], ids=["run-on-another-machine", "no-record"])
def test_a_lock_that_cannot_be_checked_from_here_is_kept_and_the_line_says_what_to_run(locked, host):
    if host:
        _record(4242, 1, host=host)
    note = runlock.release_stale()
    assert note.startswith(".snakemake/locks: Snakemake's lock ")
    assert note.endswith("`snakemake --unlock`, then run again")
    assert (host or "recorded nothing") in note
    assert runlock.LOCKS.is_dir()


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["snakemake", "--cores", "2"], True),
        (["/venv/bin/python", "-m", "snakemake", "--cores", "2"], True),
        (["/venv/bin/python", "/venv/bin/snakemake"], True),
        (["python3", "-u", "-m", "snakemake"], True),
        (["/venv/bin/python", ".snakemake/scripts/tmpab12.data_fetch.py"], False),
        (["bash", "-c", "python -m banditbench run-block --outputs .snakemake/x"], False),
        ([""], False),
    ],
)
def test_what_counts_as_a_snakemake_process(argv, expected):
    assert runlock.is_snakemake(argv) is expected


@pytest.mark.slow
@needs_proc
def test_a_rerun_after_kill_9_resumes_and_gives_the_uninterrupted_results(tmp_path):
    reference = _project(tmp_path / "reference", DUEL)
    run, out = _run(reference)
    assert run.returncode == 0, out[-3000:]
    work = _project(tmp_path / "work", DUEL)
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--directory", str(work)]
    cmd += ["--snakefile", str(work / "Snakefile")]
    env = {**os.environ, "PYTHONPATH": str(work / "src")}
    # its own session: the jobs it started, which outlive it, are ended at the end of the test
    killed = subprocess.Popen(
        cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    runs = work / "results/runs/exp/ldb/none/none"
    try:
        for _ in range(1200):  # mid-run: locked, some results written, not all
            if list((work / runlock.LOCKS).glob("*.lock")) and list(runs.glob("*/*.npz")):
                break
            time.sleep(0.05)
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        assert len(list(runs.glob("*/*.npz"))) < 6 and list((work / runlock.LOCKS).glob("*.lock"))
        rerun, out = _run(work)  # a plain rerun
        assert rerun.returncode == 0, out[-3000:]
        [line] = [line for line in out.splitlines() if line.startswith(".snakemake/locks: ")]
        assert line.endswith(f"(pid {killed.pid}), which no longer runs (killed?); this run resumes it")
        assert "LockException" not in out and "Traceback" not in out
        for path in sorted((reference / "results/runs").rglob("*.npz")):
            assert members_but_timing(work / path.relative_to(reference)) == members_but_timing(path)
        for table in ("results/default/tables/exp.csv", "results/default/tables/exp.md"):
            assert (work / table).read_bytes() == (reference / table).read_bytes()
        assert not list((work / runlock.RUNS).glob("*.json"))  # the killed run's record is gone, and the rerun's
    finally:
        try:
            os.killpg(killed.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# --- 2. a damaged result in a read-only results folder ----------------------------------------------------


@pytest.fixture
def results(tmp_path, monkeypatch):
    """Two valid results of a tiny run, in a project folder that is the working directory."""
    monkeypatch.chdir(tmp_path)
    for seed in (0, 1):
        save_result(RESULT.format(seed), *run_cell({**RUN_CELL, "seed": seed}))
    return [Path(RESULT.format(seed)) for seed in (0, 1)]


@pytest.mark.parametrize(
    "code, why",
    [(errno.EROFS, "is read-only (a read-only file system)"), (errno.EACCES, "is read-only (no permission")],
    ids=["read-only-fs", "no-permission"],
)
def test_a_damaged_result_that_cannot_be_moved_aside_is_named_damaged_and_read_only(results, monkeypatch, code, why):
    """Before: the move raised a raw OSError (Errno 30 or 13) out of workflow/rules/common.smk."""
    _damage(results[1])
    real = os.replace

    def replace(src, dst):  # the folder refuses the rename (root ignores permissions: simulated)
        if str(dst).endswith(".corrupt"):
            raise OSError(code, os.strerror(code), str(src))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(quarantine.Unmovable) as err:
        quarantine.quarantine_corrupt([], results=[str(p) for p in results])
    [line] = str(err.value).splitlines()
    assert line.startswith(f"{results[1]}: unreadable result file")
    assert f"this damaged file cannot be moved aside: {results[1].parent} {why}" in line
    assert line.endswith("make the folder writable (or delete the file) and run again")
    assert results[1].is_file() and not Path(f"{results[1]}.corrupt").exists()  # left as it was
    assert isinstance(err.value, CorruptFileError)


def test_the_check_cache_in_a_read_only_folder_is_skipped_not_an_error(results, monkeypatch):
    """The pre-job check of valid results in a read-only folder runs; only its cache is not written."""

    def refuse(path, data):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    monkeypatch.setattr(verify, "atomic_write_bytes", refuse)
    assert quarantine.quarantine_corrupt([], results=[str(p) for p in results]) == []


@pytest.mark.slow
def test_snakemake_names_a_damaged_result_in_a_read_only_results_folder_in_one_line(tmp_path):
    work = _project(tmp_path / "work", DUEL)
    with _tmpfs(work / "results", "8m") as folder:
        first, out = _run(work)
        assert first.returncode == 0, out[-3000:]
        (victim,) = (work / "results/runs/exp/ldb/none/none").glob("*/1.npz")
        _damage(victim)
        _remount(folder, "ro")
        run, out = _run(work)
        assert run.returncode != 0
        rel = victim.relative_to(work)
        assert [line for line in out.splitlines() if not line.startswith("Using workflow specific profile")] == [
            f"{rel}: unreadable result file (error: Error -3 while decompressing data: invalid distance too far "
            f"back); this damaged file cannot be moved aside: {rel.parent} is read-only (a read-only file system); "
            f"make the folder writable (or delete the file) and run again"
        ]
        _remount(folder, "rw")  # made writable: moved aside and rebuilt in one run
        rerun, out = _run(work)
        assert rerun.returncode == 0, out[-3000:]
        assert f"moved to {rel}.corrupt" in out and "Traceback" not in out
        load_result(victim, identity_from_path(victim))


# --- 3. a truncated file in the download mirror -------------------------------------------------------------


@pytest.fixture
def bad_mirror(tmp_path):
    """A mirror holding the banknote file cut to 1,000 bytes; returns (mirror, its bytes)."""
    if not (MIRROR / BANKNOTE).is_file():
        pytest.skip(f"offline mirror {MIRROR} absent")
    data = (MIRROR / BANKNOTE).read_bytes()[:1000]
    (tmp_path / "mirror" / BANKNOTE).parent.mkdir(parents=True)
    (tmp_path / "mirror" / BANKNOTE).write_bytes(data)
    return tmp_path / "mirror", data


#: no network: every URL goes through a proxy that refuses connections
OFFLINE = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}


def _source_lines(text: str, mirror: Path, data: bytes) -> None:
    """One line per source, the mirror's with the actual checksum and size of what it holds."""
    expected = DATASETS["banknote"].files[0].known_hash
    lines = text.splitlines()
    [line] = [line for line in lines if line.startswith(f"  - {mirror / BANKNOTE}: ")]
    assert line.endswith(f": checksum mismatch: got {_sha256(data)} (1,000 bytes), not {expected}")
    for url in DATASETS["banknote"].files[0].urls:
        [line] = [line for line in lines if line.startswith(f"  - {url}: ")]
        assert "(the proxy): connection refused" in line


def test_a_truncated_mirror_file_is_named_with_its_actual_checksum(bad_mirror, tmp_path, monkeypatch):
    """Before: the mirror's line said only that the copy did not have the expected checksum."""
    mirror, data = bad_mirror
    for key, value in OFFLINE.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(DataFetchError) as err:
        fetch("banknote", cache_dir=tmp_path / "raw", mirror=str(mirror), retries=0)
    _source_lines(str(err.value), mirror, data)
    assert not [p for p in (tmp_path / "raw").rglob("*") if p.is_file()]  # nothing half-copied left


@pytest.mark.slow
def test_snakemake_reports_a_truncated_mirror_file_per_source_without_a_traceback(bad_mirror, tmp_path):
    """Before: a raw DataFetchError traceback in Snakemake's output and in the download log."""
    mirror, data = bad_mirror
    work = _project(tmp_path / "work", BANK)
    env = {**os.environ, **OFFLINE, "BANDITBENCH_DATA_MIRROR": str(mirror)}
    run, out = _run(work, env=env)
    assert run.returncode != 0
    log = (work / "logs/download/banknote.log").read_text()
    for text in (out, log):
        assert "Traceback" not in text
        _source_lines(text, mirror, data)
        assert f"could not obtain {BANKNOTE} with {DATASETS['banknote'].files[0].known_hash}" in text
    assert not (work / "data/raw" / BANKNOTE).exists()


# --- 4. a damaged raw file in data/raw -------------------------------------------------------------------


@needs_mirror
def test_a_damaged_raw_file_says_when_it_is_downloaded_again_and_how_to_do_it_now(tmp_path, monkeypatch):
    """Before: "... is rebuilt before it is used", then Snakemake had nothing to do."""
    monkeypatch.chdir(tmp_path)
    raw = Path("data/raw") / BANKNOTE
    raw.parent.mkdir(parents=True)
    raw.write_bytes((MIRROR / BANKNOTE).read_bytes() + b"1.0,2.0,3.0,4.0,1\n")
    [message] = quarantine.quarantine_corrupt([])
    assert message.startswith(f"{raw}: raw file of dataset 'banknote' has sha256 ")
    assert message.endswith(
        f"; moved to {raw}.corrupt; {raw} is downloaded again when a job next reads it "
        f"(now: `snakemake --cores 1 {raw}`)"
    )


@pytest.mark.slow
@needs_mirror
def test_snakemake_downloads_a_damaged_raw_file_again_with_the_command_it_names(tmp_path):
    work = _project(tmp_path / "work", BANK)
    first, out = _run(work)
    assert first.returncode == 0, out[-3000:]
    raw = work / "data/raw" / BANKNOTE
    with raw.open("a") as fh:
        fh.write("1.0,2.0,3.0,4.0,1\n")
    run, out = _run(work)
    assert run.returncode == 0, out[-3000:]
    rel = raw.relative_to(work)
    [line] = [line for line in out.splitlines() if line.startswith(f"{rel}: ")]
    command = line.split("(now: `")[1].removesuffix("`)")
    assert command == f"snakemake --cores 1 {rel}"
    assert not raw.exists()  # nothing read it in that run, as the line says
    fetched = smk(work, *command.split()[1:])
    assert fetched.returncode == 0, fetched.stderr[-3000:]
    assert _sha256(raw.read_bytes()) == DATASETS["banknote"].files[0].known_hash
    results = {p: p.read_bytes() for p in (work / "results/runs").rglob("*.npz")}
    plain, out = _run(work)  # and the next run simulates nothing again
    assert plain.returncode == 0, out[-3000:]
    assert {p: p.read_bytes() for p in (work / "results/runs").rglob("*.npz")} == results


# --- 5. a prepared dataset rebuilt mid-grid -----------------------------------------------------------------


def _block(capsys, *extra: str) -> tuple[int, str]:
    """``banditbench run-block`` of seeds 0 and 1 of RUN_CELL, as a simulate job runs it."""
    cell = json.dumps({k: v for k, v in RUN_CELL.items() if k != "seed"})
    outputs = [RESULT.format(seed) for seed in (0, 1)]
    code = cli.main(["run-block", "--cell", cell, "--seeds", "0", "1", "--outputs", *outputs, *extra])
    return code, capsys.readouterr().err


def test_a_result_records_the_bytes_of_its_sources_and_data(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    data = Path("data/processed/x.npz")
    data.parent.mkdir(parents=True)
    data.write_bytes(b"prepared")
    assert _block(capsys, "--inputs", str(data))[0] == 0
    made_from = load_provenance(RESULT.format(0))
    assert made_from["inputs"] == {"data/processed/x.npz": _sha256(b"prepared")}
    assert made_from["sources"] == reuse.sources_digest(RUN_CELL) and made_from["sources"].startswith("sha256:")


def test_a_job_re_run_for_its_data_puts_back_what_the_same_bytes_gave(tmp_path, monkeypatch, capsys):
    """Before: Snakemake re-ran it (its input was rebuilt) and it simulated again."""
    monkeypatch.chdir(tmp_path)
    assert _block(capsys)[0] == 0
    outputs = [Path(RESULT.format(seed)) for seed in (0, 1)]
    before = [p.read_bytes() for p in outputs]
    bench = outputs[0].parent / "seeds_0-1.benchmark.tsv"
    bench.write_text("s\tcpu_time\n9.5\t9.0\n")  # the simulation's measurement (Snakemake's benchmark file)
    reuse.keep([str(p) for p in outputs])  # onstart: the job is about to re-run
    for p in outputs:
        p.unlink()  # Snakemake deletes a job's outputs as it starts it
    code, err = _block(capsys)
    assert code == 0 and [p.read_bytes() for p in outputs] == before  # the same bytes, timing too: not simulated
    assert [line.split(":")[0] for line in err.splitlines()[1:]] == [str(p) for p in outputs]
    assert all(": put back as it was, not simulated again" in line for line in err.splitlines()[1:])
    assert reuse.kept_benchmark(bench).read_text() == "s\tcpu_time\n9.5\t9.0\n"  # what the timing table reads
    assert not any(reuse.KEPT.rglob("*.npz"))


@pytest.mark.parametrize("change", ["data", "sources", "cell", "damaged"])
def test_a_kept_result_of_other_bytes_or_another_cell_is_simulated_again(tmp_path, monkeypatch, capsys, change):
    monkeypatch.chdir(tmp_path)
    assert _block(capsys)[0] == 0
    outputs = [RESULT.format(seed) for seed in (0, 1)]
    reuse.keep(outputs)
    made_from = reuse.facts(RUN_CELL, [])
    cell = {k: v for k, v in RUN_CELL.items() if k != "seed"}
    if change == "data":
        made_from["inputs"] = {"data/processed/x.npz": "sha256:" + "0" * 64}
    elif change == "sources":
        made_from["sources"] = "sha256:" + "0" * 64
    elif change == "cell":
        cell["horizon"] = 41
    else:
        _damage(reuse.kept_path(outputs[1]))
    bench = Path(outputs[0]).parent / "seeds_0-1.benchmark.tsv"
    reuse.kept_benchmark(bench).write_text("old")
    assert reuse.take_back([cell], [0, 1], [outputs], [made_from], bench) is None
    assert not any(reuse.KEPT.rglob("*.npz")) and not reuse.kept_benchmark(bench).exists()


@pytest.mark.slow
def test_a_prepared_dataset_deleted_mid_grid_costs_no_finished_simulation(tmp_path):
    """Before: its rebuild re-ran every finished simulate job of the dataset ("Input files updated by another job")."""
    reference = _project(tmp_path / "reference", DIGITS)
    run, out = _run(reference)
    assert run.returncode == 0, out[-3000:]
    work = _project(tmp_path / "work", DIGITS)
    jobs = [job for job in load_grid(DIGITS).jobs("exp") if job["algorithm"] == "linucb" and job["seed"] in "01"]
    finished = [work / RESULT_PATH.format(**job) for job in jobs]
    first, out = _run(work, *[str(p.relative_to(work)) for p in finished])
    assert first.returncode == 0, out[-3000:]
    before = {p: p.read_bytes() for p in finished}
    benchmarks = {p: p.with_name(f"seed_{p.stem}.benchmark.tsv").read_text() for p in finished}
    [prepared] = (work / "data/processed/digits").glob("*.npz")
    prepared.unlink()  # deleted mid-grid
    rerun, out = _run(work)
    assert rerun.returncode == 0, out[-3000:]
    assert prepared.is_file()  # rebuilt for the unfinished seeds ...
    for path, data in before.items():  # ... and the finished ones were not simulated again
        assert path.read_bytes() == data
        log = (
            work / "logs/simulate" / path.parent.relative_to(work / "results/runs") / f"seed_{path.stem}.log"
        ).read_text()
        assert f"{path.relative_to(work)}: put back as it was, not simulated again" in log
        bench = path.with_name(f"seed_{path.stem}.benchmark.tsv")
        assert reuse.kept_benchmark(bench).read_text() == benchmarks[path]
    for path in sorted((reference / "results/runs").rglob("*.npz")):
        assert members_but_timing(work / path.relative_to(reference)) == members_but_timing(path)
    for table in ("results/default/tables/exp.csv", "results/default/tables/exp.md"):
        assert (work / table).read_bytes() == (reference / table).read_bytes()
    timing = (work / "results/default/timing/exp.csv").read_text().splitlines()
    wall = {row.split(",")[3]: row.split(",")[5] for row in timing[1:]}
    # the simulation's time (compared as numbers: the table writes 2.9 where the benchmark file says 2.90)
    assert float(wall["seed_0"]) == float(benchmarks[finished[0]].splitlines()[1].split("\t")[0])
    again = smk(work, "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


# --- 6. a full disk ---------------------------------------------------------------------------------------


def _full_disk(monkeypatch, after: int = 0):
    """Writes of result files fail with ENOSPC after ``after`` of them succeeded."""
    real = resultio.os.fdopen
    written = []

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            if len(written) >= after:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            written.append(len(data))
            return self.fh.write(data)

    monkeypatch.setattr(resultio.os, "fdopen", lambda fd, mode: Full(real(fd, mode)))


def test_a_write_on_a_full_disk_keeps_nothing_half_written(results, monkeypatch):
    before = results[0].read_bytes()
    _full_disk(monkeypatch)
    with pytest.raises(OSError) as err:
        save_result(results[0], *run_cell({**RUN_CELL, "seed": 0}))
    assert err.value.errno == errno.ENOSPC
    assert results[0].read_bytes() == before  # the file as it was, no temporary file left
    assert sorted(p.name for p in results[0].parent.iterdir()) == ["0.npz", "1.npz"]
    err.value.filename = str(results[0])
    assert storage_problem(err.value) == (
        f"cannot write {results[0]}: no space left on device (the disk is full); nothing half-written is kept "
        "(every file is written under a temporary name and renamed when whole): free space, then run snakemake "
        "again, which resumes where it stopped"
    )


def test_a_simulate_job_on_a_full_disk_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    """Before: an OSError traceback in the job's log, and nothing in Snakemake's output but its exit status."""
    monkeypatch.chdir(tmp_path)
    _full_disk(monkeypatch, after=1)  # seed 0's result is written, seed 1's is not
    outputs = [RESULT.format(seed) for seed in (0, 1)]
    cell = json.dumps({k: v for k, v in RUN_CELL.items() if k != "seed"})
    code = cli.main(["run-block", "--cell", cell, "--seeds", "0", "1", "--outputs", *outputs])
    assert code == 4
    out, err = capsys.readouterr()
    line = f"banditbench: cannot write {outputs[1]}: no space left on device (the disk is full);"
    assert out.startswith(line) and len(out.splitlines()) == 1  # Snakemake shows the job's stdout
    assert line in err and "Traceback" not in err
    load_result(outputs[0], identity_from_path(outputs[0]))  # whole, or
    assert sorted(p.name for p in Path(outputs[0]).parent.iterdir()) == ["0.npz"]  # not there at all


def test_under_banditbench_console_a_job_prints_its_full_disk_line_to_its_log_only(tmp_path, monkeypatch, capsys):
    """Before: the job printed it to its standard output as well, which the console's own line repeated."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CONSOLE_VAR, "1")  # set by the workflow when the console shows the run
    _full_disk(monkeypatch)
    cell = json.dumps({k: v for k, v in RUN_CELL.items() if k != "seed"})
    assert cli.main(["run-block", "--cell", cell, "--seeds", "0", "--outputs", RESULT.format(0)]) == 4
    out, err = capsys.readouterr()
    assert out == "" and f"banditbench: cannot write {RESULT.format(0)}: no space left on device" in err


@pytest.mark.slow
def test_a_run_on_a_full_disk_stops_in_one_line_per_job_and_the_rerun_resumes(tmp_path):
    reference = _project(tmp_path / "reference", DUEL)
    run, out = _run(reference)
    assert run.returncode == 0, out[-3000:]
    work = _project(tmp_path / "work", DUEL)
    with _tmpfs(work / "results" / "runs", "64k") as runs:
        (runs / "filler").write_bytes(b"\0" * 64 * 1024)  # a full disk (tmpfs counts whole pages)
        stopped, out = _run(work)
        assert stopped.returncode != 0 and "Traceback" not in out
        lines = [line for line in out.splitlines() if "no space left on device" in line]
        assert lines and all(
            line.startswith("banditbench: cannot write results/runs/exp/ldb/none/none/")
            and line.endswith("free space, then run snakemake again, which resumes where it stopped")
            for line in lines
        )
        assert not [p for p in runs.rglob("*") if p.name != "filler"]  # nothing half-written kept
        console = smk(work)  # a plain run: the console shows the jobs' line from their logs, once per folder
        assert console.returncode != 0
        [line, last] = _said(console.stderr)
        assert re.fullmatch(
            r"cannot write results/runs/\S+\.npz: no space left on device \(the disk is full\); nothing "
            r"half-written is kept \(.*\): free space, then run snakemake again, which resumes where it stopped",
            line,
        ), console.stderr
        assert last.startswith("Stopped: 0/12 jobs done, ")
        assert "cannot write" not in console.stdout  # not printed by the jobs as well (issue 45)
        (runs / "filler").unlink()  # space freed: the rerun resumes
        rerun, out = _run(work)
        assert rerun.returncode == 0, out[-3000:]
        for path in sorted((reference / "results/runs").rglob("*.npz")):
            assert members_but_timing(work / path.relative_to(reference)) == members_but_timing(path)
        for table in ("results/default/tables/exp.csv", "results/default/tables/exp.md"):
            assert (work / table).read_bytes() == (reference / table).read_bytes()


def test_a_file_where_a_folder_of_results_belongs_is_named_in_one_line(tmp_path, monkeypatch):
    """results/runs/<experiment> as a file (a stray download, say): planning names it, no NotADirectoryError."""
    from banditbench.data.quarantine import quarantine_corrupt
    from banditbench.errors import ConfigError

    monkeypatch.chdir(tmp_path)
    (tmp_path / "results" / "runs").mkdir(parents=True)
    (tmp_path / "results" / "runs" / "duel").write_text("x")
    with pytest.raises(ConfigError, match=r"^results/runs/duel is a file where the pipeline keeps a folder of results"):
        quarantine_corrupt([], results=["results/runs/duel/ldb/none/none/0.npz"])


# --- 7. a job whose benchmark file was never written (issue 45) ---------------------------------------------


@pytest.mark.parametrize("benchmark", ["missing", "empty"])
def test_a_result_whose_benchmark_file_was_not_written_is_timed_blank_not_an_error(results, benchmark, caplog):
    """Before: the timing rule failed ("... delete those result files and re-run Snakemake"; pandas'
    EmptyDataError for an empty file) until files were deleted by hand."""
    bench = results[1].with_name("seed_1.benchmark.tsv")
    results[0].with_name("seed_0.benchmark.tsv").write_text("s\th:m:s\tmax_rss\tcpu_time\n2.5\t0:00:02\t50.5\t2.0\n")
    if benchmark == "empty":
        bench.write_text("")
    for path in results:  # a job's seeds and block, as run-block records them
        data, meta, timing = load_result(path)
        save_result(path, data, meta, {**timing, "block": [int(path.stem)]})
    with caplog.at_level(logging.WARNING):
        jobs = job_table(results).set_index("job")
    assert jobs.loc["seed_0", "wall_s"] == 2.5
    assert jobs.loc["seed_1"][["wall_s", "overhead_s", "max_rss_mb", "cpu_s"]].isna().all()
    assert jobs.loc["seed_1", "simulation_s"] > 0
    assert f"{bench}: benchmark file of the simulate job that wrote 1 result file(s)" in caplog.text
    write_timing(results, "exp", Path("t.csv"), Path("t.html"))
    assert "1 of 2 jobs have no measurement (NaN)" in Path("t.html").read_text()


# --- 8. a SIGTERM as Snakemake chooses jobs (issue 45) ------------------------------------------------------


def test_a_sigterm_while_snakemake_chooses_jobs_stops_the_run_instead_of_hanging_it():
    """Before: Snakemake's handler took the scheduler's lock, which the main thread holds while it chooses
    jobs: a SIGTERM at the end of a job hung the run for ever (found by the end-to-end SIGTERM test, 9b)."""
    scheduler = SimpleNamespace(_user_kill=None, _open_jobs=threading.Semaphore(0), _lock=threading.Lock())
    before = signal.getsignal(signal.SIGTERM)
    try:
        assert runlock.graceful_sigterm(scheduler)
        with scheduler._lock:  # choosing jobs
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(100):  # the handler runs between two bytecodes of this thread
                if scheduler._user_kill:
                    break
                time.sleep(0.01)
            assert scheduler._user_kill == "graceful"
        assert scheduler._open_jobs.acquire(timeout=10)  # the scheduler is woken to stop
    finally:
        signal.signal(signal.SIGTERM, before)
    assert not runlock.graceful_sigterm(object())  # not a scheduler it knows: Snakemake's own handler stays


# --- 9. what the console shows of a fault outside the code (issue 45) ---------------------------------------


def _console(**common) -> plugin.LogHandler:
    """The console (src/snakemake_logger_plugin_banditbench) as a plain run has it, writing to a string."""
    settings = dict(
        dryrun=False,
        printshellcmds=False,
        nocolor=True,
        quiet=set(),
        debug_dag=False,
        verbose=False,
        show_failed_logs=False,
        stdout=False,
    )
    handler = plugin.LogHandler(SimpleNamespace(**{**settings, **common}), plugin.LogHandlerSettings(interval=60))
    if not handler.passthrough:
        handler.stream, handler.tty, handler.color = io.StringIO(), False, False
        handler.clock = lambda: 1000.0
    return handler


def _log(msg=None, level=logging.INFO, **extra) -> logging.LogRecord:
    """A log record as Snakemake hands it to the console."""
    record = logging.LogRecord("snakemake.logging", level, __file__, 0, msg, None, None)
    record.__dict__.update(extra)
    return record


def _error(text: str, exception: str) -> logging.LogRecord:
    """An exception as Snakemake prints it (snakemake.exceptions.print_exception)."""
    return _log(text, logging.ERROR, event=LogEvent.ERROR, exception=exception)


RECORDS = "results/runs/exp/ldb/none/none"  # a folder of the unit tests' own records, not the pipeline's layout
STATS = {"simulate_seed_0": 6, "aggregate": 1, "all": 1, "total": 8}
FULL_LOG = "/p/.snakemake/log/x.snakemake.log"


def _start(handler, seeds=(0, 1, 2)) -> None:
    """Jobs planned, and a simulate job per seed started (their JOB_INFO records)."""
    handler.handle(_log("Job stats:", event=LogEvent.RUN_INFO, stats=STATS))
    for seed in seeds:
        info = dict(
            jobid=seed,
            rule_name=f"simulate_seed_{seed}",
            wildcards={"experiment": "exp"},
            log=[f"logs/seed_{seed}.log"],
            output=[f"{RECORDS}/{seed}.npz"],
            benchmark=f"{RECORDS}/seed_{seed}.benchmark.tsv",
        )
        handler.handle(_log(f" Rule: simulate_seed_{seed}", event=LogEvent.JOB_INFO, **info))


def _job_error(handler, seed: int) -> None:
    error = dict(jobid=seed, rule_name=f"simulate_seed_{seed}", log=[f"logs/seed_{seed}.log"], aux={})
    handler.handle(_log(f"Error in rule simulate_seed_{seed}", logging.ERROR, event=LogEvent.JOB_ERROR, **error))


def _end(handler, done: int) -> list[str]:
    """Snakemake's closing records after a stopped run, its final WorkflowError too; the console's lines."""
    handler.handle(_log(event=LogEvent.PROGRESS, done=done, total=8))
    handler.handle(_log("Exiting because a job execution failed. Look above for error messages", logging.ERROR))
    handler.handle(_log(f"Complete log(s): {FULL_LOG}"))
    handler.handle(_log("Elapsed time: 0:00:05.123"))
    handler.handle(_error("WorkflowError:\nAt least one job did not complete successfully.", "WorkflowError"))
    handler.close()
    return handler.stream.getvalue().splitlines()


def _command(seed: int, ending: str) -> str:
    """A simulate job's RuleException as Snakemake words it (its command quoted whole)."""
    command = (
        f"set -euo pipefail; python -m banditbench run-block --cell '{{}}' --seeds {seed} --outputs {RECORDS}/{seed}.npz "
        f"--inputs  2> logs/seed_{seed}.log"
    )
    return f"RuleException:\nCalledProcessError in file \"/p/workflow/rules/simulate.smk\", line 73:\nCommand '{command}' {ending}"


#: a sitecustomize put on a run's import path (its jobs inherit it): the first two simulate jobs (banditbench
#: run-block) run, the others wait, each after touching $FAULT_GATE.waiting-<first seed>, until the file
#: $FAULT_GATE exists (a run held mid-grid); a job of seed $FAULT_SEED turns the folder $FAULT_READ_ONLY
#: read-only as it exits, after its result is written (a results folder turned read-only mid-run)
HOOK = """
import atexit, os, subprocess, time
from pathlib import Path

argv = Path("/proc/self/cmdline").read_bytes().decode().split("\\0")
if "run-block" in argv:
    seeds = []
    for arg in argv[argv.index("--seeds") + 1 :]:
        if not arg.isdigit():
            break
        seeds.append(int(arg))
    gate = os.environ.get("FAULT_GATE")
    if gate:
        for n in range(2):
            try:
                os.close(os.open(f"{gate}.pass-{n}", os.O_CREAT | os.O_EXCL))
                break
            except FileExistsError:
                pass
        else:
            Path(f"{gate}.waiting-{seeds[0]}").touch()
            deadline = time.monotonic() + 300
            while not Path(gate).exists() and time.monotonic() < deadline:
                time.sleep(0.05)
    folder = os.environ.get("FAULT_READ_ONLY")
    if folder and int(os.environ["FAULT_SEED"]) in seeds:
        atexit.register(subprocess.run, ["mount", "-o", "remount,ro", folder], check=True)
"""


def _hooked(work: Path, tmp_path: Path, **fault: str) -> dict:
    """The environment of a run whose jobs import :data:`HOOK` (with ``fault``'s FAULT_* variables)."""
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(HOOK)
    return {**os.environ, "PYTHONPATH": f"{work / 'src'}{os.pathsep}{hook}", **fault}


def _measured(work: Path) -> list[Path]:
    """The benchmark files Snakemake has written (after a simulate job, before it counts it done)."""
    return [p for p in (work / "results/runs").rglob("*.benchmark.tsv") if p.stat().st_size]


def _snakemake(work: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        "2",
        "--directory",
        str(work),
        "--snakefile",
        str(work / "Snakefile"),
    ]


def _wait(condition, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


PROGRESS = re.compile(r"^\d+/\d+ jobs \(\d+%\)")


def _said(stderr: str) -> list[str]:
    """What the console said besides Snakemake's profile line, the planned jobs and the progress lines."""
    return [
        line
        for line in stderr.splitlines()
        if not line.startswith("Using workflow specific profile")
        and " jobs to run (" not in line
        and not PROGRESS.match(line)
    ]


# --- 9a. a second snakemake on a project where one runs ----------------------------------------------------


@needs_proc
def test_a_lock_of_a_run_in_progress_is_named_by_its_pid_and_never_to_be_unlocked(locked, capsys):
    """Before: Snakemake's LockException, advising `--unlock`, which would let two runs write the same files."""
    with _process("bash", "-c", "exec -a snakemake sleep 30", cwd=locked, shows="snakemake") as running:
        record = json.loads(_record(running.pid, runlock._started(running.pid)).read_text())
        note = runlock.lock_note()
        assert note == (
            f".snakemake/locks: a snakemake run is in progress in this folder (pid {running.pid}, started at "
            f"{runlock._when(record)}); this run stops without touching its files: wait for that one to end (or "
            f"stop it), then run again"
        )
        lock = "Error: Directory cannot be locked. ... It can be removed with the --unlock argument."
        console = _console()
        console.handle(_error(lock, "LockException"))
        console.close()
        assert console.stream.getvalue().splitlines() == [note]  # in place of Snakemake's words
        own = _console(printshellcmds=True)  # Snakemake's own output (-p, --quiet, ...): the same line
        own.handle(_error(lock, "LockException"))
        own.close()
        assert note in capsys.readouterr().err
    assert runlock.LOCKS.is_dir()  # nothing removed


@pytest.mark.slow
@needs_proc
def test_a_second_snakemake_is_told_in_one_line_that_a_run_is_in_progress(tmp_path):
    work = _project(tmp_path / "work", DUEL)
    gate = tmp_path / "gate"
    first = subprocess.Popen(
        _snakemake(work),
        cwd=work,
        env=_hooked(work, tmp_path, FAULT_GATE=str(gate)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait(lambda: list(tmp_path.glob("gate.waiting-*")))  # held mid-grid, its lock taken
        second = smk(work)  # a plain `snakemake`
        assert second.returncode != 0
        [line] = _said(second.stderr)
        assert re.fullmatch(
            rf"\.snakemake/locks: a snakemake run is in progress in this folder \(pid {first.pid}, started at "
            r"[-\d]+ [:\d]+\); this run stops without touching its files: wait for that one to end \(or stop it\), "
            r"then run again",
            line,
        ), second.stderr
        quiet, out = _run(work)  # Snakemake's own output (--quiet): the same line, no advice to unlock
        assert quiet.returncode != 0 and line in out
        for text in (second.stdout + second.stderr, out):
            assert "--unlock" not in text and "LockException" not in text
        gate.touch()
        assert first.wait(timeout=300) == 0, first.stderr.read()[-3000:]  # the first run was not disturbed
    finally:
        gate.touch()
        try:
            os.killpg(first.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    again = smk(work, "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


# --- 9b. SIGTERM mid-grid ---------------------------------------------------------------------------------


def test_a_run_stopped_by_sigterm_ends_in_one_line_naming_where_its_outputs_go(monkeypatch):
    """Before: a failure block per job killed with it, then `Stopped: ...` and Snakemake's redundant
    `WorkflowError: At least one job did not complete successfully.`"""
    monkeypatch.setenv("BANDITBENCH_RUN", "exp")
    console = _console()
    _start(console)
    console.handle(_log(event=LogEvent.PROGRESS, done=2, total=8))
    console.handle(_log("Will exit after finishing currently running jobs (scheduler)."))  # Snakemake's SIGTERM
    # jobs that got the signal too (sent to the process group): cut short, not failed, whatever the order
    console.handle(_error(_command(1, "died with <Signals.SIGTERM: 15>."), "RuleException"))
    console.handle(_error(_command(2, "returned non-zero exit status 143."), "RuleException"))
    _job_error(console, 2)
    _job_error(console, 1)
    assert _end(console, done=2) == [
        "8 jobs to run (6 simulate, 1 aggregate, 1 all)",
        "2/8 jobs (25%), ETA -:--:--, elapsed 0:00:00",
        "Stopped by SIGTERM: 2/8 jobs done, 2 cut short, after 0:00:00; outputs go to results/exp/ (run snakemake "
        f"again to resume); full log: {FULL_LOG}",
    ]


def test_a_failed_job_is_still_a_block_and_the_last_line_names_the_outputs(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BANDITBENCH_RUN", "exp")
    console = _console()
    _start(console, seeds=(0,))
    console.handle(_error(_command(0, "returned non-zero exit status 1."), "RuleException"))
    _job_error(console, 0)
    lines = _end(console, done=1)
    assert lines[1:4] == [
        "Job failed: rule simulate_seed_0 (jobid 0)",
        "    wildcards: experiment=exp",
        "    log: logs/seed_0.log",
    ]
    assert lines[4].startswith("    error: RuleException: CalledProcessError")
    assert lines[4].endswith("its command exited with status 1")
    assert (
        lines[-1]
        == f"Stopped: 1/8 jobs done, 1 failed, after 0:00:00; outputs go to results/exp/; full log: {FULL_LOG}"
    )
    assert not [line for line in lines if "WorkflowError" in line or "Exiting because" in line]


@pytest.mark.slow
@needs_proc
@pytest.mark.parametrize(
    "group",
    [
        False,
        pytest.param(
            True,
            # passes alone (and three times in a row), but once timed out after 300 s in the full suite on the
            # 2-core machine: Snakemake's shutdown after SIGTERM to its whole process group can still hang
            marks=pytest.mark.xfail(reason="intermittent: shutdown hung once under full-suite load", strict=False),
        ),
    ],
    ids=["to-snakemake", "to-its-process-group"],
)
def test_a_sigterm_mid_grid_ends_in_one_line_and_a_plain_rerun_finishes_the_grid(tmp_path, group):
    """SIGTERM to snakemake lets its running jobs finish; to its process group (a batch system's stop) it
    ends them too."""
    work = _project(tmp_path / "work", DUEL)
    gate = tmp_path / "gate"
    run = subprocess.Popen(
        _snakemake(work),
        cwd=work,
        env=_hooked(work, tmp_path, FAULT_GATE=str(gate)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        # two jobs finished (their benchmark files written), the others held
        _wait(lambda: len(_measured(work)) == 2 and list(tmp_path.glob("gate.waiting-*")))
        if group:
            os.killpg(run.pid, signal.SIGTERM)
            # the held jobs are ended by the signal; a job Snakemake starts as the signal arrives (before its
            # handler has run) never got it: released, it finishes instead of holding the shutdown at the gate
            time.sleep(3)
            gate.touch()
        else:
            os.kill(run.pid, signal.SIGTERM)
            _wait(
                lambda: (
                    "Will exit after finishing" in "".join(p.read_text() for p in (work / ".snakemake/log").iterdir())
                )
            )
            gate.touch()  # the running jobs finish
        out, err = run.communicate(timeout=120)
    finally:
        gate.touch()
        try:
            os.killpg(run.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert run.returncode != 0
    [last] = _said(err)
    cut = ", 2 cut short" if group else ""
    outputs = re.fullmatch(
        rf"Stopped by SIGTERM: \d+/12 jobs done{cut}, after [:\d]+; outputs go to (results/[^/ ]+/) \(run snakemake "
        r"again to resume\); full log: \S+/\.snakemake/log/\S+\.snakemake\.log",
        last,
    )
    assert outputs, err
    assert "Traceback" not in out + err and "WorkflowError" not in out + err
    finished = {p: p.read_bytes() for p in (work / "results/runs").rglob("*.npz")}
    assert 2 <= len(finished) < 6
    rerun = smk(work)  # a plain rerun
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert len(list((work / "results/runs").rglob("*.npz"))) == 6
    assert {p: p.read_bytes() for p in finished} == finished  # finished seeds were not simulated again
    assert (work / outputs.group(1) / "tables/exp.csv").is_file()


# --- 9c. a disk filling up as a job ends ------------------------------------------------------------------


def test_snakemakes_own_write_on_a_full_disk_is_one_line_naming_the_file(tmp_path, monkeypatch):
    """Before: `WorkflowError: OSError: [Errno 28] No space left on device`, naming no file (Snakemake's write
    of a job's benchmark file), and a failure block per job."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BANDITBENCH_RUN", raising=False)
    console = _console()
    _start(console)
    # seed 0's result was written, then Snakemake's write of its benchmark file failed (opened: no name)
    console.handle(_error("WorkflowError:\nOSError: [Errno 28] No space left on device", "WorkflowError"))
    # seed 1's own write failed (banditbench run-block: one line in its log); the same disk, so not repeated
    Path("logs").mkdir()
    err = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f"{RECORDS}/1.npz")
    Path("logs/seed_1.log").write_text(f"banditbench 0.1.0 from src\nbanditbench: {storage_problem(err)}\n")
    console.handle(_error(_command(1, "returned non-zero exit status 4."), "RuleException"))
    _job_error(console, 0)
    _job_error(console, 1)
    assert _end(console, done=0) == [
        "8 jobs to run (6 simulate, 1 aggregate, 1 all)",
        f"cannot write {RECORDS}/seed_0.benchmark.tsv: no space left on device (the disk is full): free space, then "
        "run snakemake again, which resumes where it stopped",
        f"Stopped: 0/8 jobs done, 2 failed, after 0:00:00; full log: {FULL_LOG}",
    ]


@pytest.mark.slow
def test_a_disk_filling_up_as_a_job_ends_is_one_line_naming_the_file_and_the_rerun_resumes(tmp_path):
    reference = _project(tmp_path / "reference", DUEL)
    run, out = _run(reference)
    assert run.returncode == 0, out[-3000:]
    work = _project(tmp_path / "work", DUEL)
    with _tmpfs(work / "results" / "runs", "64k") as runs:
        (runs / "filler").write_bytes(b"\0" * 60 * 1024)  # room for one result file, not its benchmark file
        stopped = smk(work, cores="1")  # a plain run
        assert stopped.returncode != 0
        [line, last] = _said(stopped.stderr)
        assert re.fullmatch(
            r"cannot write results/runs/\S+\.benchmark\.tsv: no space left on device \(the disk is full\): free "
            r"space, then run snakemake again, which resumes where it stopped",
            line,
        ), stopped.stderr
        assert last.startswith("Stopped: 0/12 jobs done, 1 failed, after ")
        said = stopped.stdout + stopped.stderr
        assert "Errno" not in said and "WorkflowError" not in said and "Traceback" not in said
        (runs / "filler").unlink()  # space freed: the rerun resumes
        rerun = smk(work)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        for path in sorted((reference / "results/runs").rglob("*.npz")):
            assert members_but_timing(work / path.relative_to(reference)) == members_but_timing(path)
        for table in ("results/default/tables/exp.csv", "results/default/tables/exp.md"):
            assert (work / table).read_bytes() == (reference / table).read_bytes()


# --- 9d. a results folder turned read-only mid-run --------------------------------------------------------


def test_a_folder_turned_read_only_mid_run_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    """Before: `WorkflowError: OSError: [Errno 30] ...` per job, a failure block per job, then a 15-frame
    traceback of Snakemake removing a failed job's result."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BANDITBENCH_RUN", raising=False)
    console = _console()
    _start(console)
    for seed in (1, 2):
        error = f"WorkflowError:\nOSError: [Errno 30] Read-only file system: '{RECORDS}/seed_{seed}.benchmark.tsv'"
        console.handle(_error(error, "WorkflowError"))
    _job_error(console, 1)
    _job_error(console, 2)
    traceback = (
        'Traceback (most recent call last):\n\n  File ".../snakemake/io/__init__.py", line 1273, in remove\n'
        f"    os.remove(file)\n\nOSError: [Errno 30] Read-only file system: '{RECORDS}/2.npz'\n"
    )
    console.handle(_error(traceback, "OSError"))
    lines = _end(console, done=1)
    assert lines[1:-2] == [
        f"cannot write {RECORDS}/seed_1.benchmark.tsv: read-only file system: make it writable, then run snakemake "
        "again, which resumes where it stopped",
    ]
    assert lines[-1] == f"Stopped: 1/8 jobs done, 2 failed, after 0:00:00; full log: {FULL_LOG}"
    own = _console(printshellcmds=True)  # Snakemake's own output: the traceback is one line too
    own.handle(_error(traceback, "OSError"))
    own.close()
    err = capsys.readouterr().err
    assert f"cannot write {RECORDS}/2.npz: read-only file system: make it writable" in err and "Traceback" not in err


@pytest.mark.slow
def test_a_results_folder_turned_read_only_mid_run_is_one_line_and_the_rerun_needs_no_deleting(tmp_path):
    work = _project(tmp_path / "work", DUEL)
    with _tmpfs(work / "results", "8m") as folder:
        env = _hooked(work, tmp_path, FAULT_READ_ONLY=str(folder), FAULT_SEED="2")
        stopped = smk(work, env=env, own_src=False, cores="1")  # seed 2's job turns it read-only as it ends
        assert stopped.returncode != 0
        [line, last] = _said(stopped.stderr)
        assert re.fullmatch(
            r"cannot write (results/runs/\S+): read-only file system: make it writable, then run snakemake again, "
            r"which resumes where it stopped",
            line,
        ), stopped.stderr
        assert re.match(r"Stopped: \d/12 jobs done, 1 failed, after ", last)
        said = stopped.stdout + stopped.stderr
        assert "Errno" not in said and "WorkflowError" not in said and "Traceback" not in said
        finished = {p: p.read_bytes() for p in (work / "results/runs").rglob("*.npz") if p.name != "2.npz"}
        _remount(folder, "rw")  # made writable: a plain rerun finishes, nothing deleted by hand
        rerun = smk(work)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert len(list((work / "results/runs").rglob("*.npz"))) == 6
        assert {p: p.read_bytes() for p in finished} == finished  # finished seeds were not simulated again
        timing = (work / "results/default/timing/exp.csv").read_text().splitlines()
        assert len(timing) == 7  # a row per job
