"""Every damaged file is caught: a sweep of damage over result, prepared-data and oracle files.

For each kind of file the pipeline reads back, the sweep makes damaged copies of one
valid file, by class: every byte of a local header, of a central-directory entry and of
the end record (each flipped two ways), bytes of every member's payload (and the
reported case: 7 bytes overwritten at offset 100), truncation at several lengths, a
zero-length file, bytes added before or after, a valid zip that lacks a member, has one
more, or has a member replaced by another array, and another run's (dataset's) file
copied over it.  For each it asserts that (a) the loader raises
:class:`~banditbench.errors.CorruptFileError` naming the file, and (b) the pre-job check
(:func:`banditbench.data.quarantine.quarantine_corrupt`) names it in one line and moves it
aside as ``<name>.corrupt``, leaving the valid file next to it alone.

The only bytes whose change is not caught are each central-directory entry's four bytes of
external attributes (file permissions for extracting to disk), which nothing reads: the
sweep checks that changing them changes nothing a loader returns.

One end-to-end run (marked slow) damages two results of a tiny grid and checks that a
single ``snakemake`` run names them, moves them aside and rebuilds them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from banditbench.data import quarantine, verify
from banditbench.data.files import load_npz, save_npz
from banditbench.data.paths import (
    CLASSIFIER_OPTIONS,
    classifier_oracle_path,
    parse_key,
    parse_preprocess_key,
    processed_path,
)
from banditbench.data.preprocess import load_prepared, prepare, save_prepared
from banditbench.errors import CorruptFileError
from banditbench.storage.resultio import identity_from_path, load_result, save_result
from banditbench.simulation.job import run_cell
from conftest import CELL, ROOT

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
RESULT = f"results/runs/exp/ldb_df/none/none/{CELL}/{{}}.npz"
CD_EXTERNAL_ATTRIBUTES = range(38, 42)  # offsets inside a central-directory entry: read by nothing


# --- the files: a valid one of each kind, and another one (another run, another preparation) ------------


def _oracle_identity(path: str) -> dict:
    parts = path.split("/")
    return {
        "dataset": parts[3],
        "preprocessing": parse_preprocess_key(parts[3], parts[4]),
        "options": parse_key(CLASSIFIER_OPTIONS, parts[-1].removesuffix(".npz"), path),
    }


def _load(kind: str, path: str):
    """What a job reads from the file (the loader, with the identity its path gives)."""
    if kind == "result":
        return load_result(path, identity_from_path(path))
    if kind == "prepared":
        stem = Path(path).name.removesuffix(".npz")
        prepared = load_prepared(path, "digits", parse_preprocess_key("digits", stem))
        return {"X": prepared.X, "y": prepared.y, "names": prepared.class_names, "meta": prepared.meta}
    return load_npz(path, "classifier oracle", required=("probabilities",), expect=_oracle_identity(path))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """For each kind: (path of the file, its valid bytes, path and bytes of another file of its kind)."""
    root = tmp_path_factory.mktemp("originals")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        for seed in (0, 1):
            save_result(RESULT.format(seed), *run_cell({**RUN_CELL, "seed": seed}))
        prepared = [processed_path("digits", {"image_size": size}) for size in (2, 4)]
        oracles = [classifier_oracle_path("digits", {"image_size": size}) for size in (2, 4)]
        for size, path, oracle in zip((2, 4), prepared, oracles):
            data = prepare("digits", {"image_size": size})
            save_prepared(path, data)
            probabilities = np.random.default_rng(size).dirichlet(np.ones(10), size=len(data.y))
            save_npz(oracle, {"probabilities": probabilities}, _oracle_identity(oracle))
        paths = {"result": [RESULT.format(0), RESULT.format(1)], "prepared": prepared, "oracle": oracles}
        return {
            kind: (first, Path(first).read_bytes(), other, Path(other).read_bytes())
            for kind, (first, other) in paths.items()
        }
    finally:
        os.chdir(cwd)


# --- the damage -------------------------------------------------------------------------------------------


def _changed(data: bytes, offset: int, new: bytes) -> bytes:
    return data[:offset] + new + data[offset + len(new) :]


def _flips(data: bytes, start: int, stop: int, label: str, skip=()) -> dict[str, bytes]:
    """Every byte of ``data[start:stop]`` flipped two ways (all bits, lowest bit)."""
    return {
        f"{label}+{i - start}^{mask:#x}": _changed(data, i, bytes([data[i] ^ mask]))
        for i in range(start, stop)
        if i - start not in skip
        for mask in (0xFF, 0x01)
    }


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def _zip(members: dict[str, bytes], compression: int) -> bytes:
    """A valid zip of ``members`` (as the pipeline's writers make them: fixed time, no attributes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, content in members.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = compression
            zf.writestr(info, content)
    return buf.getvalue()


def _npy(arr) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(arr), allow_pickle=False)
    return buf.getvalue()


def _another_array(content: bytes) -> bytes:
    """A different array of the same shape and type (or, for a JSON text member, other valid JSON)."""
    arr = np.lib.format.read_array(io.BytesIO(content), allow_pickle=False)
    if arr.dtype == np.uint8:  # a result's JSON (meta, timing, ...) or digest
        return _npy(np.frombuffer(json.dumps({"other": 1}).encode(), dtype=np.uint8))
    if arr.dtype.kind == "U":  # a prepared file's JSON meta or class names
        return _npy(np.full(arr.shape, "1"))
    other = arr.copy()
    other.flat[0] = other.flat[0] + 1 if other.dtype.kind != "b" else not other.flat[0]
    return _npy(other)


def damages(data: bytes, other: bytes) -> dict[str, dict[str, bytes]]:
    """Damaged copies of the zip file ``data`` by class; ``other`` is another valid file of its kind."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos, start_dir = zf.infolist(), zf.start_dir
    size = len(data)
    local, payload, central = {}, {}, {}
    for info in infos:
        name_len, extra_len = struct.unpack_from("<2H", data, info.header_offset + 26)
        header_end = info.header_offset + 30 + name_len + extra_len
        if info in (infos[0], infos[-1]):
            local.update(_flips(data, info.header_offset, header_end, f"local header of {info.filename}"))
        for at in sorted({0, info.compress_size // 2, info.compress_size - 1}):
            payload[f"{info.filename} payload+{at}"] = _changed(
                data, header_end + at, bytes([data[header_end + at] ^ 0xFF])
            )
    payload["7 bytes at offset 100"] = _changed(data, 100, b"garbage")
    entry = start_dir
    for info in infos[:2]:  # the first two central-directory entries
        name_len, extra_len, comment_len = struct.unpack_from("<3H", data, entry + 28)
        stop = entry + 46 + name_len + extra_len + comment_len
        central.update(_flips(data, entry, stop, f"central entry of {info.filename}", skip=CD_EXTERNAL_ATTRIBUTES))
        entry = stop
    central["garbled name in the central directory"] = _changed(
        data, start_dir + 46, bytes([data[start_dir + 46] ^ 0x20])
    )
    members = _members(data)
    compression = infos[0].compress_type
    first = next(iter(members))
    wrong = {f"without {name}": _zip({k: v for k, v in members.items() if k != name}, compression) for name in members}
    wrong.update(
        {
            f"{name} replaced by another array": _zip({**members, name: _another_array(content)}, compression)
            for name, content in members.items()
        }
    )
    wrong["an extra member"] = _zip({**members, "extra.npy": _npy(np.arange(3.0))}, compression)
    wrong[f"{first} twice"] = _duplicated(members, first, compression)
    return {
        "local header": local,
        "payload": payload,
        "central directory": central,
        "end record": _flips(data, size - 22, size, "end record"),
        "truncated": {
            f"first {n} bytes": data[:n] for n in (1, 21, 22, 100, start_dir, size // 2, size - 22, size - 1)
        },
        "zero-length": {"empty": b""},
        "added bytes": {"appended": data + b"\0" * 7, "prepended": b"\0" * 7 + data},
        "wrong members": wrong,
        "another file": {"another run's or preparation's file copied over it": other},
    }


def _duplicated(members: dict[str, bytes], name: str, compression: int) -> bytes:
    buf = io.BytesIO()
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(buf, "w") as zf:
        for member, content in [*members.items(), (name, _another_array(members[name]))]:
            info = zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = compression
            zf.writestr(info, content)
    return buf.getvalue()


CLASSES = [
    "local header",
    "payload",
    "central directory",
    "end record",
    "truncated",
    "zero-length",
    "added bytes",
    "wrong members",
    "another file",
]
KINDS = ["result", "prepared", "oracle"]


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "results").mkdir()
    return tmp_path


def _place(path: str, data: bytes) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(data)


@pytest.mark.parametrize("kind", KINDS)
def test_a_rewritten_zip_with_the_same_members_is_accepted(files, project, kind):
    """The control for the 'wrong members' class: the rewriting alone is no damage."""
    path, data, _, _ = files[kind]
    _place(path, data)
    original = _load(kind, path)
    compression = zipfile.ZipFile(io.BytesIO(data)).infolist()[0].compress_type
    _place(path, _zip(_members(data), compression))
    assert _same(_load(kind, path), original)


@pytest.mark.parametrize("damage", CLASSES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_damage_is_refused_by_the_loader_and_moved_aside_before_any_job(files, project, kind, damage):
    path, data, sibling, other = files[kind]
    _place(sibling, other)  # a valid file next to it
    cases = damages(data, other)[damage]
    assert cases
    missed, unnamed, not_moved = [], [], []
    for label, damaged in cases.items():
        assert damaged != data, label
        _place(path, damaged)
        try:  # (a) the loader names the file
            _load(kind, path)
            missed.append(label)
        except CorruptFileError as err:
            if not str(err).startswith(f"{path}: "):
                unnamed.append((label, str(err)))
        for cache in (verify.CACHE, quarantine.RESULTS_CACHE):  # each case is a new file (mtimes may tie)
            cache.unlink(missing_ok=True)
        data_files, results = ([], [path, sibling]) if kind == "result" else ([path, sibling], [])
        messages = quarantine.quarantine_corrupt(data_files, results=results)  # (b) the pre-job check
        moved = Path(path + ".corrupt")
        if not (
            len(messages) == 1
            and messages[0].startswith(f"{path}: ")
            and "\n" not in messages[0]
            and f"moved to {moved}" in messages[0]
            and not Path(path).exists()
            and moved.read_bytes() == damaged
        ):
            not_moved.append((label, messages))
        moved.unlink(missing_ok=True)
    assert not missed, f"{kind} file: damage not caught by the loader: {missed}"
    assert not unnamed, unnamed
    assert not not_moved, not_moved
    assert Path(sibling).read_bytes() == other  # the valid file next to it is kept


@pytest.mark.parametrize("kind", KINDS)
def test_the_bytes_not_checked_are_read_by_nothing(files, project, kind):
    """The external attributes of a central-directory entry: changing them changes nothing read."""
    path, data, _, _ = files[kind]
    _place(path, data)
    original = _load(kind, path)
    start_dir = zipfile.ZipFile(io.BytesIO(data)).start_dir
    for offset in CD_EXTERNAL_ATTRIBUTES:
        _place(path, _changed(data, start_dir + offset, bytes([data[start_dir + offset] ^ 0xFF])))
        assert _same(_load(kind, path), original)


def test_the_pre_job_check_of_results_is_cached_by_size_and_mtime(files, project, monkeypatch):
    _, data, _, other = files["result"]
    runs = [RESULT.format(seed) for seed in (0, 1)]
    _place(runs[0], data)
    _place(runs[1], other)
    checked = []
    real = quarantine.verify_result
    monkeypatch.setattr(quarantine, "verify_result", lambda path: checked.append(path) or real(path))
    assert quarantine.quarantine_corrupt([], results=[*runs, RESULT.format(2)]) == [] and checked == runs
    assert quarantine.quarantine_corrupt([], results=runs) == [] and checked == runs  # only stat calls
    stat = os.stat(runs[1])
    os.utime(runs[1], ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a new version
    assert quarantine.quarantine_corrupt([], results=runs) == [] and checked == [*runs, runs[1]]
    assert json.loads(quarantine.RESULTS_CACHE.read_text()).keys() == {os.path.abspath(r) for r in runs}


# --- one end-to-end run -----------------------------------------------------------------------------------

GRID = {
    "seeds": None,
    "horizon": None,
    "experiments": {
        "duel": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
            "horizon": 40,
            "seeds": 2,
            "seeds_per_job": 1,
            "algorithms": {"ldb": {"policy": "ldb_df"}},
            "delays": {"none": {"kind": "none"}, "two": {"kind": "constant", "value": 2}},
        },
    },
}
VARYING = ("timing.npy", "provenance.npy", "run_checksum.npy")  # members that differ between two runs of a job


def _stable_members(path: Path) -> dict[str, bytes]:
    return {k: v for k, v in _members(path.read_bytes()).items() if k not in VARYING}


@pytest.mark.slow
def test_damaged_results_are_named_moved_aside_and_rebuilt_in_one_run(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for item in ("Snakefile", "src", "workflow", "config", "envs"):
        src = ROOT / item
        (
            shutil.copytree(src, work / item, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            if src.is_dir()
            else shutil.copy2(src, work / item)
        )
    (work / "config.yaml").write_text(yaml.safe_dump(GRID))
    env = dict(os.environ, PYTHONPATH=str(work / "src"))
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        "2",
        "--directory",
        str(work),
        "--snakefile",
        str(work / "Snakefile"),
        "results/default/tables/duel.csv",
        "results/default/timing/duel.csv",
    ]
    first = subprocess.run(cmd, capture_output=True, text=True, cwd=work, env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    runs = sorted((work / "results/runs/duel").rglob("*.npz"))
    assert len(runs) == 4
    before = {p: (_stable_members(p), p.stat().st_mtime_ns) for p in runs}
    ((payload,), (directory,)) = (
        list((work / f"results/runs/duel/ldb/{d}/none").glob(f"*/{s}.npz")) for d, s in (("none", 0), ("two", 1))
    )
    payload.write_bytes(_changed(payload.read_bytes(), 100, b"garbage"))  # inside the compressed payload
    data = directory.read_bytes()
    start_dir = zipfile.ZipFile(io.BytesIO(data)).start_dir
    directory.write_bytes(_changed(data, start_dir + 46, b"X"))  # a garbled name, central directory
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=work, env=env)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    for victim in (payload, directory):
        rel = victim.relative_to(work)
        [line] = [line for line in out.splitlines() if line.startswith(f"{rel}: ")]
        assert f"moved to {rel}.corrupt" in line
        assert Path(f"{victim}.corrupt").is_file()
        assert _stable_members(victim) == before[victim][0]  # rebuilt, the same bytes
        load_result(victim, identity_from_path(victim))
    for path in set(runs) - {payload, directory}:
        assert path.stat().st_mtime_ns == before[path][1]  # the others untouched
    assert "Traceback" not in "".join(p.read_text() for p in (work / "logs").rglob("*.log"))
    assert (work / "results/default/tables/duel.csv").stat().st_mtime_ns > before[payload][1]
