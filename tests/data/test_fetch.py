"""Checksummed fetching: cache -> mirror -> canonical URL, against a local HTTP server (no internet)."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import shutil
import stat
import threading
from collections import Counter
from pathlib import Path

import pytest

from banditbench.data import fetch as fetch_mod
from banditbench.data.fetch import MIRROR_ENV, DataFetchError, fetch, fetch_file
from banditbench.data.catalog import DATASETS, Dataset, RemoteFile
from banditbench.errors import ConfigError
from conftest import MIRROR, needs_mirror

SMALL = ("uci/car/car.data", "uci/banknote/data_banknote_authentication.txt")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves ``root``; ``/error500/...`` answers 500, ``/truncated/...`` announces more bytes than it sends and
    closes, ``/flaky/...`` is truncated on the first request only, ``/corrupt/...`` flips the first byte."""

    root: Path
    hits: Counter

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=str(self.root), **kwargs)

    def log_message(self, *args):
        pass

    def _file(self, rel: str) -> bytes | None:
        path = self.root / rel
        return path.read_bytes() if path.is_file() else None

    def do_GET(self):
        self.hits[self.path] += 1
        mode, _, rel = self.path.lstrip("/").partition("/")
        if mode == "error500":
            self.send_error(500, "boom")
            return
        if mode in ("truncated", "flaky", "corrupt"):
            body = self._file(rel)
            if body is None:
                self.send_error(404)
                return
            if mode == "corrupt":
                body = bytes([body[0] ^ 0xFF]) + body[1:]
            cut = mode == "truncated" or (mode == "flaky" and self.hits[self.path] == 1)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + (1000 if cut else 0)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2] if cut else body)
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A local mirror of a few small files, served on 127.0.0.1; yields (root dir, base URL, hit counter)."""
    if not (MIRROR / SMALL[0]).is_file():
        pytest.skip(f"offline mirror {MIRROR} absent")
    root = tmp_path_factory.mktemp("served")
    for rel in SMALL:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(MIRROR / rel, root / rel)
    hits: Counter = Counter()
    handler = type("Handler", (_Handler,), {"root": root, "hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def no_mirror(monkeypatch):
    monkeypatch.delenv(MIRROR_ENV, raising=False)


def car_dataset(*urls: str) -> Dataset:
    real = DATASETS["car"].files[0]
    return Dataset(
        "car",
        "UCI Car Evaluation (test copy)",
        "CC BY 4.0",
        "https://example.invalid",
        (RemoteFile(real.path, real.known_hash, tuple(urls)),),
    )


def leftovers(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.is_file()]


def test_download_verifies_and_cache_is_reused(served, tmp_path):
    root, base, hits = served
    url = f"{base}/uci/car/car.data"
    ds = car_dataset(url)
    before = hits[url.removeprefix(base)]
    path = fetch_file(ds, ds.files[0], cache_dir=tmp_path, retries=0)
    assert path == tmp_path / "uci/car/car.data"
    assert sha256(path) == sha256(root / "uci/car/car.data")
    assert hits["/uci/car/car.data"] == before + 1
    fetch(ds, cache_dir=tmp_path, retries=0)  # cached and valid: no request
    assert hits["/uci/car/car.data"] == before + 1


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664)])
def test_fetched_files_get_the_permissions_of_the_umask(served, tmp_path, umask, mode):
    """Downloads and mirror copies pass through temporary files (0600); the result follows the umask."""
    root, base, _ = served
    ds = car_dataset(f"{base}/uci/car/car.data")
    old = os.umask(umask)
    try:
        downloaded = fetch_file(ds, ds.files[0], cache_dir=tmp_path / "a", mirror="", retries=0)
        copied = fetch_file(ds, ds.files[0], cache_dir=tmp_path / "b", mirror=str(root), retries=0)
    finally:
        os.umask(old)
    assert stat.S_IMODE(downloaded.stat().st_mode) == mode == stat.S_IMODE(copied.stat().st_mode)


def test_corrupt_cache_is_replaced(served, tmp_path):
    root, base, hits = served
    ds = car_dataset(f"{base}/uci/car/car.data")
    target = tmp_path / "uci/car/car.data"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not the car data")
    fetch(ds, cache_dir=tmp_path, retries=0)
    assert sha256(target) == sha256(root / "uci/car/car.data")


def test_checksum_mismatch_fails_clearly_and_leaves_nothing(served, tmp_path):
    _, base, hits = served
    url = f"{base}/corrupt/uci/car/car.data"
    with pytest.raises(DataFetchError) as err:
        fetch(car_dataset(url), cache_dir=tmp_path, retries=1)
    msg = str(err.value)
    assert "'car'" in msg and url in msg and "by hand" in msg and "uci/car/car.data" in msg
    assert hits["/corrupt/uci/car/car.data"] == 2  # tried, deleted, retried
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("path, code", [("/error500/uci/car/car.data", "500"), ("/uci/car/missing.data", "404")])
def test_server_errors(served, tmp_path, path, code):
    _, base, hits = served
    with pytest.raises(DataFetchError) as err:
        fetch(car_dataset(base + path), cache_dir=tmp_path, retries=1)
    assert code in str(err.value) and base + path in str(err.value)
    assert hits[path] >= 2
    assert leftovers(tmp_path) == []


def test_interrupted_transfer_is_deleted_then_retried(served, tmp_path):
    root, base, hits = served
    with pytest.raises(DataFetchError) as err:
        fetch(car_dataset(f"{base}/truncated/uci/car/car.data"), cache_dir=tmp_path, retries=0)
    assert "IncompleteRead" in str(err.value)  # the broken transfer itself, not a checksum check
    assert leftovers(tmp_path) == []
    path = fetch(car_dataset(f"{base}/flaky/uci/car/car.data"), cache_dir=tmp_path, retries=1)[0]
    assert hits["/flaky/uci/car/car.data"] == 2
    assert sha256(path) == sha256(root / "uci/car/car.data")


def test_sources_in_order_mirror_then_canonical(served, tmp_path, monkeypatch):
    root, base, hits = served
    canonical = f"{base}/error500/canonical/car.data"
    ds = car_dataset(canonical)
    # a mirror directory (from the environment variable) is used before the URLs
    monkeypatch.setenv(MIRROR_ENV, str(root))
    fetch(ds, cache_dir=tmp_path / "a", retries=0)
    assert hits["/error500/canonical/car.data"] == 0
    # a file:// mirror and an http mirror work the same way
    fetch(ds, cache_dir=tmp_path / "b", mirror=root.as_uri(), retries=0)
    fetch(ds, cache_dir=tmp_path / "c", mirror=base + "/", retries=0)
    assert hits["/error500/canonical/car.data"] == 0
    # a mirror without the file, or with a corrupt copy, falls through to the canonical URL
    bad = tmp_path / "badmirror"
    (bad / "uci/car").mkdir(parents=True)
    (bad / "uci/car/car.data").write_bytes(b"corrupt")
    good = car_dataset(f"{base}/uci/car/car.data")
    fetch(good, cache_dir=tmp_path / "d", mirror=str(tmp_path / "empty"), retries=0)
    path = fetch(good, cache_dir=tmp_path / "e", mirror=str(bad), retries=0)[0]
    assert sha256(path) == sha256(root / "uci/car/car.data")
    with pytest.raises(DataFetchError) as err:
        fetch(ds, cache_dir=tmp_path / "f", mirror=str(bad), retries=0)
    assert "checksum mismatch" in str(err.value) and canonical in str(err.value)


def test_real_urls_are_never_contacted_when_cached(tmp_path, monkeypatch):
    """A valid cache short-circuits everything, including registered internet URLs."""
    real = DATASETS["car"]
    src = MIRROR / real.files[0].path
    if not src.is_file():
        pytest.skip("offline mirror absent")
    (tmp_path / real.files[0].path).parent.mkdir(parents=True)
    shutil.copyfile(src, tmp_path / real.files[0].path)
    monkeypatch.setattr(fetch_mod, "_download", lambda *a, **k: pytest.fail("network used"))
    assert fetch("car", cache_dir=tmp_path)[0].is_file()


@needs_mirror
def test_every_registered_file_resolves_through_the_mirror(tmp_path, monkeypatch):
    monkeypatch.setenv(MIRROR_ENV, str(MIRROR))
    monkeypatch.setattr(fetch_mod, "_download", lambda *a, **k: pytest.fail("network used"))
    manifest = {f["path"]: f["sha256"] for f in json.loads((MIRROR / "manifest.json").read_text())["files"]}
    n = 0
    for ds in DATASETS.values():
        for f in ds.files:
            if not f.mirrored:
                assert not (MIRROR / f.path).exists()
                continue
            assert f.known_hash == f"sha256:{manifest[f.path]}", f.path
            path = fetch_file(ds, f, cache_dir=tmp_path)
            assert sha256(path) == manifest[f.path]
            n += 1
    # every data file of the mirror is registered (not: documentation, the derived JSONL)
    registered = {f.path for ds in DATASETS.values() for f in ds.files}
    unregistered = {p for p in manifest if p not in registered}
    assert all(p.endswith((".names", ".doc", ".jsonl")) for p in unregistered)
    assert n == len(manifest) - len(unregistered) == 209 + 9 + 2  # + the Open Bandit Dataset sample


def test_unmirrored_files_have_published_checksums():
    covtype = DATASETS["covertype"].files[0]
    assert covtype.known_hash == "sha256:614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771"
    assert covtype.urls[0].startswith("https://archive.ics.uci.edu/")
    images = DATASETS["mnist_train"].file("mnist/train-images-idx3-ubyte.gz")
    assert images.known_hash == "md5:f68b3c2dcbeaaa9fbdd348bbdeb94873" and not images.mirrored


def test_a_download_without_a_published_checksum_is_verified_against_the_pin(served, tmp_path):
    """A file registered without a checksum (as obd_full's archive) is downloaded only with a pinned one,
    and pooch checks the transfer against it."""
    root, base, hits = served
    url = f"{base}/uci/car/car.data"
    unpublished = Dataset(
        "obd_full",
        "a file without a published checksum",
        "CC BY 4.0",
        "https://example.invalid",
        (RemoteFile("uci/car/car.data", None, (url,), mirrored=False),),
    )
    before = hits["/uci/car/car.data"]
    with pytest.raises(ConfigError, match="^dataset_checksums.obd_full: "):
        fetch(unpublished, cache_dir=tmp_path, retries=0)
    assert hits["/uci/car/car.data"] == before and leftovers(tmp_path) == []  # nothing requested
    wrong = "sha256:" + "0" * 64
    with pytest.raises(DataFetchError, match=r"with sha256:0{64} \(pinned by dataset_checksums.obd_full\)"):
        fetch(unpublished, cache_dir=tmp_path, retries=0, checksums={"obd_full": wrong})
    assert leftovers(tmp_path) == []
    pin = "sha256:" + sha256(root / "uci/car/car.data")
    [path] = fetch(unpublished, cache_dir=tmp_path, retries=0, checksums={"obd_full": pin})
    assert sha256(path) == pin.removeprefix("sha256:") and hits["/uci/car/car.data"] == before + 2
    with pytest.raises(ConfigError, match="registry: dataset 'obd_full' has a file without a published checksum"):
        Dataset("obd_full", "two files", "", "", (RemoteFile("a", None, ()), RemoteFile("b", None, ())))
