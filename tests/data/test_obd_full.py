"""The full Open Bandit Dataset (dataset obd_full): a checksum pinned in the config, fetching and
verifying against it, preprocessing straight from the archive's members (no network: the archive
is built here from the mirror's sample, in the full archive's layout)."""

import hashlib
import json
import os
import shutil
import zipfile

import numpy as np
import pandas as pd
import pytest
import yaml

from banditbench.cli import main
from banditbench.configuration.grid import load_grid
from banditbench.data import fetch as fetch_mod
from banditbench.data.fetch import DataFetchError, fetch
from banditbench.data.paths import buildable, replay_path
from banditbench.data.open_bandit import prepare_obd
from banditbench.data.quarantine import quarantine_corrupt
from banditbench.data.verify import verify_raw
from banditbench.errors import ConfigError, CorruptFileError
from conftest import MIRROR, ROOT, needs_mirror
from smk import copy_project, smk

pytestmark = needs_mirror

SAMPLE = MIRROR / "obd/random/all"
ARCHIVE = "obd/open_bandit_dataset.zip"


def sha256(path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def build_archive(path, members):
    """A zip with ``members`` (name -> bytes), deflated, as ZOZO's archive is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def full_layout():
    """The sample's two tables at the full archive's places, next to a decoy campaign (bts / all)
    whose log differs, so that reading the wrong member would show."""
    log, items = (SAMPLE / "all.csv").read_bytes(), (SAMPLE / "item_context.csv").read_bytes()
    decoy = b"\n".join(log.split(b"\n")[:200]) + b"\n"
    return {
        "open_bandit_dataset/README": b"Open Bandit Dataset\n",
        "open_bandit_dataset/bts/all/all.csv": decoy,
        "open_bandit_dataset/bts/all/item_context.csv": items,
        "open_bandit_dataset/random/all/all.csv": log,
        "open_bandit_dataset/random/all/item_context.csv": items,
    }


@pytest.fixture
def downloads(monkeypatch):
    """The URLs a fetch tried to download (each fails, as without network)."""
    tried = []

    def offline(url, *args, **kwargs):
        tried.append(url)
        raise ConnectionError("no network in the tests")

    monkeypatch.setattr(fetch_mod, "_download", offline)
    return tried


@pytest.fixture
def mirror(tmp_path, monkeypatch, downloads):
    """A mirror directory holding the archive; the working directory is a fresh project (data/ cache)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    return build_archive(tmp_path / "mirror" / ARCHIVE, full_layout()).parents[1]


def test_fetch_with_a_pinned_checksum_copies_and_verifies_then_uses_the_cache(mirror, tmp_path, downloads):
    pin = {"obd_full": sha256(mirror / ARCHIVE)}
    [path] = fetch("obd_full", cache_dir=tmp_path / "raw", mirror=str(mirror), checksums=pin)
    assert path == tmp_path / "raw" / ARCHIVE and sha256(path) == pin["obd_full"]
    shutil.rmtree(mirror)  # the cached copy is enough now
    assert fetch("obd_full", cache_dir=tmp_path / "raw", mirror=str(mirror), checksums=pin) == [path]
    verify_raw(path, checksums=pin)
    assert downloads == []


def test_without_a_pin_nothing_is_fetched_and_the_error_says_how_to_pin(mirror, tmp_path, downloads):
    with pytest.raises(ConfigError) as err:
        fetch("obd_full", cache_dir=tmp_path / "raw", mirror=str(mirror))
    message = str(err.value)
    assert message.startswith("dataset_checksums.obd_full: dataset 'obd_full' (Open Bandit Dataset, full archive")
    for part in (
        'dataset_checksums: {obd_full: "sha256:<64 hex>"}',
        "`banditbench checksum <file>`",
        "https://research.zozo.com/data_release/open_bandit_dataset.zip",
        f"data/raw/{ARCHIVE}",
    ):
        assert part in message
    assert not (tmp_path / "raw" / ARCHIVE).exists() and downloads == []
    # a local copy is not read without a pin either
    raw = tmp_path / "raw"
    shutil.copytree(mirror, raw, dirs_exist_ok=True)
    with pytest.raises(ConfigError, match="^dataset_checksums.obd_full: "):
        verify_raw(raw / ARCHIVE)
    with pytest.raises(ConfigError, match="^dataset_checksums.obd_full: "):
        prepare_obd({"source": "full"}, raw)
    with pytest.raises(ConfigError, match=r"^dataset_checksums.obd_full: need 'sha256:<64 lowercase hex>'"):
        fetch("obd_full", cache_dir=raw, checksums={"obd_full": "sha256:0123"})


def test_a_wrong_pin_is_a_mismatch_naming_dataset_and_file_and_a_cached_copy_is_kept(mirror, tmp_path, downloads):
    good = sha256(mirror / ARCHIVE)
    wrong = {"obd_full": "sha256:" + "0" * 64}
    raw = tmp_path / "raw"
    with pytest.raises(DataFetchError) as err:
        fetch("obd_full", cache_dir=raw, mirror=str(mirror), checksums=wrong, retries=0)
    message = str(err.value)
    assert message.startswith("dataset 'obd_full' (Open Bandit Dataset, full archive")
    assert f"could not obtain {ARCHIVE} with {wrong['obd_full']} (pinned by dataset_checksums.obd_full)" in message
    assert f"{mirror / ARCHIVE}: checksum mismatch: got {good} (" in message
    assert downloads == ["https://research.zozo.com/data_release/open_bandit_dataset.zip"]  # then ZOZO's URL
    assert not [p for p in raw.rglob("*") if p.is_file()]  # nothing half-copied left behind
    # a copy already in the cache that differs from the pin: an error naming both, the file left in place
    fetch("obd_full", cache_dir=raw, mirror=str(mirror), checksums={"obd_full": good})
    with pytest.raises(DataFetchError) as err:
        fetch("obd_full", cache_dir=raw, mirror=str(mirror), checksums=wrong)
    assert (
        f"dataset 'obd_full': {raw / ARCHIVE} has {good}, not the {wrong['obd_full']} pinned by "
        f"dataset_checksums.obd_full; if the pin is right"
    ) in str(err.value)
    assert sha256(raw / ARCHIVE) == good
    with pytest.raises(CorruptFileError, match="pinned by dataset_checksums.obd_full; if the pin is right"):
        verify_raw(raw / ARCHIVE, checksums=wrong)


def test_pre_job_check_uses_the_pin_and_skips_an_unpinned_archive(mirror, tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(mirror, raw)
    assert quarantine_corrupt([], raw_dir=str(raw)) == []  # no pin: not checked
    assert quarantine_corrupt([], raw_dir=str(raw), checksums={"obd_full": sha256(raw / ARCHIVE)}) == []
    [message] = quarantine_corrupt([], raw_dir=str(raw), checksums={"obd_full": "sha256:" + "1" * 64})
    assert "pinned by dataset_checksums.obd_full" in message and (raw / (ARCHIVE + ".corrupt")).is_file()


@pytest.mark.parametrize("options", [None, {"n_actions": 3, "user_dim": 6, "item_dim": 4, "seed": 7}])
def test_the_archive_gives_the_arrays_of_the_same_csv_bytes(mirror, tmp_path, options):
    sample_raw, full_raw = tmp_path / "sample", tmp_path / "full"
    shutil.copytree(SAMPLE, sample_raw / "obd/random/all")
    shutil.copytree(mirror, full_raw)
    pin = {"obd_full": sha256(full_raw / ARCHIVE)}
    sample, sample_meta = prepare_obd(options, sample_raw)
    full, full_meta = prepare_obd({**(options or {}), "source": "full"}, full_raw, checksums=pin)
    assert sample.keys() == full.keys() == {"features", "items", "click"}
    for name in sample:
        assert sample[name].dtype == full[name].dtype
        np.testing.assert_array_equal(sample[name], full[name])
    assert full_meta == {**sample_meta, "dataset": "obd_full"} and sample_meta["dataset"] == "obd_random_all"
    assert full_meta["n_events"] == 10_000  # the random / all member, not the decoy


def test_chunked_reading_does_not_change_the_arrays(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "obd/random/all")
    whole, meta = prepare_obd(None, tmp_path, chunk_rows=10_000)
    for chunk_rows in (997, 4096):
        parts, parts_meta = prepare_obd(None, tmp_path, chunk_rows=chunk_rows)
        assert parts_meta == meta
        for name in whole:
            assert whole[name].tobytes() == parts[name].tobytes(), (chunk_rows, name)


def test_an_archive_without_the_random_all_campaign_is_a_clear_error(tmp_path):
    layout = {k: v for k, v in full_layout().items() if "/random/" not in k}
    path = build_archive(tmp_path / ARCHIVE, layout)
    with pytest.raises(ConfigError) as err:
        prepare_obd({"source": "full"}, tmp_path, checksums={"obd_full": sha256(path)})
    assert f"{path} has 0 members ending in random/all/all.csv" in str(err.value)
    assert "open_bandit_dataset/bts/all/all.csv" in str(err.value)  # what the archive holds


def test_the_source_picks_the_prepared_files_folder_and_the_sample_keeps_its_name():
    assert replay_path(None) == "data/processed/obd_random_all/item_dim=8+n_actions=5+seed=0+user_dim=16.npz"
    assert replay_path({"source": "sample"}) == replay_path(None)
    assert (
        replay_path({"source": "full", "seed": 2})
        == "data/processed/obd_full/item_dim=8+n_actions=5+seed=2+user_dim=16.npz"
    )
    assert buildable(replay_path({"source": "full"})) and buildable(replay_path(None))
    assert not buildable("data/processed/obd_full/source=full.npz")


def _replay_config(**top):
    return {
        **top,
        "experiments": {
            "e": {
                "environment": {"name": "obd_replay", "params": {"preprocessing": {"source": "full"}}},
                "horizon": 10,
                "seeds": 1,
                "algorithms": {"random": {"policy": "random_arm"}},
                "delays": {"none": {"kind": "none"}},
            }
        },
    }


def test_config_validation_names_the_key():
    pin = "sha256:" + "ab" * 32
    grid = load_grid(_replay_config(dataset_checksums={"obd_full": pin}))
    assert grid.dataset_checksums == {"obd_full": pin} and grid.unpinned() == {}
    assert grid.data_files("e") == ["data/processed/obd_full/item_dim=8+n_actions=5+seed=0+user_dim=16.npz"]
    assert load_grid(_replay_config()).unpinned() == {"obd_full": ["e"]}  # valid; its download will stop
    with pytest.raises(ConfigError, match=r"dataset_checksums\.obd_full: 'sha256:AB' does not match"):
        load_grid(_replay_config(dataset_checksums={"obd_full": "sha256:AB"}))
    with pytest.raises(ConfigError, match=r"^dataset_checksums\.car: 'car' has a published checksum"):
        load_grid(_replay_config(dataset_checksums={"obd_full": pin, "car": pin}))
    with pytest.raises(ConfigError, match=r"^dataset_checksums\.obd: 'obd' is not a registered dataset"):
        load_grid(_replay_config(dataset_checksums={"obd_full": pin, "obd": pin}))
    bad = _replay_config(dataset_checksums={"obd_full": pin})
    bad["experiments"]["e"]["environment"]["params"]["preprocessing"]["source"] = "complete"
    with pytest.raises(
        ConfigError,
        match=r"experiments\.e\.environment\.params\.preprocessing\.source: "
        r"'complete' is not one of \['sample', 'full'\]",
    ):
        load_grid(bad)


def test_the_full_grid_config_is_valid_and_says_it_needs_the_pin(capsys):
    path = ROOT / "config/neural_logistic_obd_full.yaml"
    config = yaml.safe_load(path.read_text())
    experiments = list(config["experiments"])
    assert load_grid(config).unpinned() == {"obd_full": experiments}
    assert main(["validate", str(path)]) == 0
    assert (
        f"note: experiment(s) {', '.join(experiments)} read dataset 'obd_full', which has no published checksum "
        f"and none pinned: its download stops until dataset_checksums.obd_full is set"
    ) in capsys.readouterr().out
    grid = load_grid({**config, "dataset_checksums": {"obd_full": "sha256:" + "0" * 64}})
    assert grid.unpinned() == {}
    assert {e.horizon for e in grid.experiments.values()} == {2000}  # the paper's T
    assert {f for name in grid.experiments for f in grid.data_files(name)} == {
        "data/processed/obd_full/item_dim=8+n_actions=5+seed=0+user_dim=16.npz"
    }


def test_checksum_command_prints_the_config_line(tmp_path, capsys):
    path = build_archive(tmp_path / "open_bandit_dataset.zip", full_layout())
    assert main(["checksum", str(path)]) == 0
    line = capsys.readouterr().out.strip()
    assert line == f'dataset_checksums: {{obd_full: "{sha256(path)}"}}'
    assert load_grid({**_replay_config(), **yaml.safe_load(line)}).dataset_checksums == {"obd_full": sha256(path)}
    assert main(["checksum", str(path), "--dataset", "car"]) == 2
    assert "--dataset: 'car' has a published checksum" in capsys.readouterr().err


@pytest.mark.slow
def test_pipeline_runs_on_the_archive_with_a_pin_given_on_the_command_line(tmp_path):
    """download (from a mirror directory, checked against the pin) -> preprocessing from the zip ->
    replay simulations -> tables; no pin: a warning, and the download stops saying how to pin; a wrong
    pin: the archive is moved aside and the download fails naming dataset, file and config key."""

    mirror = build_archive(tmp_path / "mirror" / ARCHIVE, full_layout()).parents[1]
    pin = sha256(mirror / ARCHIVE)
    experiment = {
        **_replay_config()["experiments"]["e"],
        "horizon": 60,
        "plot_metric": "reward",
        "algorithms": {"random": {"policy": "random_arm"}, "logistic_ucb1": {"policy": "logistic_ucb1"}},
    }
    (tmp_path / "work").mkdir()
    work = copy_project(tmp_path / "work", {"experiments": {"full_replay": experiment}})
    env = dict(os.environ, BANDITBENCH_DATA_MIRROR=str(mirror))

    unpinned = smk(work, "--quiet", env=env)
    assert unpinned.returncode != 0
    assert "none pinned: its download stops until dataset_checksums.obd_full is set" in unpinned.stderr
    download_log = (work / "logs/download/obd_full.log").read_text()
    assert "ConfigError: dataset_checksums.obd_full: dataset 'obd_full'" in download_log
    assert not (work / "data/raw" / ARCHIVE).exists() and not (work / "results/runs").exists()  # nothing simulated

    run = smk(work, "--quiet", "--config", f'dataset_checksums={{obd_full: "{pin}"}}', env=env)
    assert run.returncode == 0, run.stderr[-4000:]
    assert sha256(work / "data/raw" / ARCHIVE) == pin
    assert not (work / "data/raw/obd/random").exists()  # the sample was not used
    prepared = work / "data/processed/obd_full/item_dim=8+n_actions=5+seed=0+user_dim=16.npz"
    with np.load(prepared) as data:
        assert data["features"].shape == (10_000, 5, 42)
        meta = json.loads(str(data["meta"]))
    assert meta["dataset"] == "obd_full" and meta["n_events"] == 10_000
    tidy = pd.read_csv(work / "results/default/tables/full_replay.csv")
    assert set(tidy["algorithm"]) == {"random", "logistic_ucb1"}
    assert (tidy[tidy["metric"] == "events_used"]["mean"] > 60).all()

    wrong = "sha256:" + "0" * 64
    for built in ("data/processed", "results"):  # the raw archive is needed again
        shutil.rmtree(work / built)
    bad = smk(work, "--quiet", "--config", f'dataset_checksums={{obd_full: "{wrong}"}}', env=env)
    assert bad.returncode != 0
    assert "pinned by dataset_checksums.obd_full; if the pin is right" in bad.stdout + bad.stderr
    assert sha256(work / "data/raw" / (ARCHIVE + ".corrupt")) == pin  # moved aside, not deleted
    log = (work / "logs/download/obd_full.log").read_text()
    assert "dataset 'obd_full' (Open Bandit Dataset, full archive" in log
    assert f"could not obtain {ARCHIVE} with {wrong} (pinned by dataset_checksums.obd_full)" in log
