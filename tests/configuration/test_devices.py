"""The grid-wide ``device`` switch and ``seeds_per_job`` override (banditbench.configuration.devices, issue 37)."""

import json

import pytest
import torch

from banditbench import registry
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.errors import ConfigError
from banditbench.simulation.job import run_members
from conftest import ROOT


def _has_device(policy: str) -> bool:
    return "device" in registry.parameters(registry.get("policy", policy).load())


def _cells(grid):
    for name, exp in grid.experiments.items():
        for alg in exp.algorithms:
            cell = json.loads(grid.cell_json(name, alg, exp.delays[0], exp.budget_labels[0], None))
            yield name, alg, cell


def test_device_cpu_reaches_every_neural_policy_and_no_other():
    """config/variance_dueling.yaml with ``device: cpu``: every NVLDB / NLDB / NDB cell's params carry it,
    the linear baselines' and random pairs' are as configured; the variants of an override get it too."""
    config = load_config_file(ROOT / "config" / "variance_dueling.yaml")
    plain = load_grid({**config, "only_experiments": "vdb_square_d20_T10000,vdb_cosine_d5_k5"})
    grid = load_grid(
        {
            **config,
            "device": "cpu",
            "only_experiments": "vdb_square_d20_T10000,vdb_cosine_d5_k5",
            "override": "vdb_cosine_d5_k5/NDB-UCB-reimpl.lam=2",
        }
    )
    with_device = without = 0
    for name, alg, cell in _cells(grid):
        params = cell["policy"]["params"]
        if _has_device(cell["policy"]["name"]):
            assert params["device"] == "cpu", (name, alg)
            with_device += 1
        else:
            configured = plain.experiments[name].spec["algorithms"][alg].get("params", {})
            assert params == configured and "device" not in params, (name, alg)
            without += 1
        assert grid.gpus(name, alg) == 0
    assert with_device == 6 + 14 + 1 and without == 1 + 3  # the lam-2 variant of NDB-UCB-reimpl included


def test_device_unset_leaves_the_algorithms_own_device():
    config = load_config_file(ROOT / "config" / "variance_dueling.yaml")
    grid = load_grid({**config, "only_experiments": "vdb_square_d20_T10000"})
    assert all("device" not in cell["policy"]["params"] for _, _, cell in _cells(grid))


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is there")
def test_device_cuda_without_a_gpu_is_refused_naming_the_key():
    config = load_config_file(ROOT / "config" / "variance_dueling.yaml")
    with pytest.raises(ConfigError, match=r"^device: 'cuda' was asked for but torch sees no GPU"):
        load_grid({**config, "device": "cuda", "only_experiments": "vdb_square_d20_T10000"})


def test_device_other_values_are_refused_by_the_schema():
    config = load_config_file(ROOT / "config" / "variance_dueling.yaml")
    with pytest.raises(ConfigError, match="device"):
        load_grid({**config, "device": "tpu"})


def test_seeds_per_job_overrides_every_experiment():
    config = load_config_file(ROOT / "config" / "variance_dueling.yaml")
    grid = load_grid({**config, "seeds_per_job": 100, "only_experiments": "vdb_square_d20_T10000"})
    assert grid.experiments["vdb_square_d20_T10000"].seed_blocks == [tuple(range(20))]
    assert list(grid.seed_blocks()) == [tuple(range(20))]


def test_a_cuda_cell_that_falls_back_to_the_cpu_says_so(capsys, monkeypatch):
    """NeuralLog's theory radius has no batched form: asked for cuda, the seeds run on the CPU, one line says so
    (the single-seed path never touches the GPU: with torch told a GPU is there, this runs on any machine)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    cell = {
        "experiment": "x",
        "algorithm": "nl",
        "delay_label": "d",
        "budget": None,
        "environment": {"name": "synthetic_logistic", "params": {"latent": "h1", "dimension": 3, "n_arms": 3}},
        "policy": {
            "name": "neurallog_ucb1",
            "params": {"width": 4, "train_every": 5, "train_steps": 2, "radius": "theory", "device": "cuda"},
        },
        "delay": {"kind": "none"},
        "horizon": 10,
    }
    results = run_members([{**cell, "seed": s} for s in (0, 1)])
    assert [meta["engine"] for _, meta, _ in results] == ["single-seed"] * 2
    err = capsys.readouterr().err
    assert "x/nl (neurallog_ucb1): device 'cuda' asked for, but its seed-batched path declines" in err
    assert "run one at a time on the CPU" in err
    run_members(
        [{**cell, "policy": {**cell["policy"], "params": {**cell["policy"]["params"], "device": "cpu"}}, "seed": 0}]
    )
    assert "CPU" not in capsys.readouterr().err
