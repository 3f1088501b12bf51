"""Real-data layer: preprocessing, oracles, classification / prompt environments and LinUCB.

Raw files come from the offline mirror (``../shared/datasets`` or $BANDITBENCH_DATA_MIRROR)
through the checksummed fetcher; every prepared file is written under tmp_path.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from banditbench import params
from banditbench.api import Environment, Problem
from banditbench.data.fetch import fetch
from banditbench.data.files import load_npz, save_npz
from banditbench.data.oracles import collect_scores, fit_classifier_oracle, fit_prompt_oracle
from banditbench.data.paths import (
    classifier_oracle_path,
    options_key,
    parse_key,
    parse_preprocess_key,
    preprocess_options,
    processed_path,
    prompt_oracle_path,
    prompt_raw_paths,
)
from banditbench.data.preprocess import downsample, encode_categorical, load_prepared, prepare, save_prepared
from banditbench.simulation.delays import make_delay
from banditbench.errors import ConfigError, CorruptFileError
from banditbench.envs.classification import LOGIT_07, ClassificationBandit, ClassificationDueling, block_arms
from banditbench.envs.prompts import PromptDueling
from banditbench.feedback import RewardFeedback
from banditbench.policies.baselines import RandomPair
from banditbench.policies.delayed_dueling import LDBDF
from banditbench.policies.linucb import LinUCB
from banditbench.simulation.runner import simulate
from conftest import MIRROR

NEEDED = (
    "mnist_test",
    "mushroom",
    "shuttle",
    "car",
    "magic",
    "banknote",
    "prompt_pools",
    "prompt_scores",
    "instruction_annotations",
)


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> Path:
    """The raw files, fetched through the mirror with verified checksums."""
    if not (MIRROR / "manifest.json").is_file():
        pytest.skip(f"offline mirror {MIRROR} absent")
    cache = tmp_path_factory.mktemp("raw")
    for name in NEEDED:
        fetch(name, cache_dir=cache, mirror=str(MIRROR))
    return cache


@pytest.fixture(scope="module")
def workdir(raw, tmp_path_factory) -> Path:
    """A working directory with data/raw -> the fetched files; prepared files are built here on demand."""
    work = tmp_path_factory.mktemp("work")
    (work / "data").mkdir()
    (work / "data" / "raw").symlink_to(raw, target_is_directory=True)
    return work


@pytest.fixture
def at_work(workdir, monkeypatch) -> Path:
    monkeypatch.chdir(workdir)
    return workdir


def build(dataset: str, options=None) -> str:
    """Prepare ``dataset`` into the current working directory (once) and return its path."""
    path = processed_path(dataset, options)
    if not Path(path).is_file():
        save_prepared(path, prepare(dataset, options))
    return path


def run(env: Environment, policy_cls, horizon: int, delay=None, seed: int = 1, **params) -> dict[str, np.ndarray]:
    problem = Problem(horizon=horizon, info=env.public_info())
    policy = policy_cls(problem, np.random.default_rng(seed), **params)
    return simulate(env, policy, make_delay(delay or {"kind": "none"}), horizon, np.random.default_rng(seed + 1))


# --- preprocessing -------------------------------------------------------------------------------
MNIST_TEST = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
CASES = [
    # dataset, options, rows, features, class counts (MANIFEST.md)
    ("mnist", {}, 10000, 196, MNIST_TEST),
    ("mnist", {"image_size": 7}, 10000, 49, MNIST_TEST),
    ("digits", {}, 1797, 64, [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]),
    ("mushroom", {}, 8124, 22, [3916, 4208]),  # poisonous, edible
    ("mushroom", {"categorical": "onehot"}, 8124, 117, [3916, 4208]),  # categories present, '?' included
    ("car", {}, 1728, 6, [1210, 384, 69, 65]),
    ("car", {"categorical": "onehot"}, 1728, 21, [1210, 384, 69, 65]),
    ("shuttle", {}, 58000, 9, [34108 + 11478, 37 + 13, 132 + 39, 6748 + 2155, 2458 + 809, 6 + 4, 11 + 2]),
    ("shuttle", {"split": "test"}, 14500, 9, [11478, 13, 39, 2155, 809, 4, 2]),
    ("magic", {}, 19020, 10, [6688, 12332]),  # hadron, gamma
    ("banknote", {}, 1372, 4, [762, 610]),
    ("banknote", {"scaling": "sample"}, 1372, 4, [762, 610]),
]


@pytest.mark.parametrize("dataset, options, rows, d, counts", CASES)
def test_preprocessing_shapes_ranges_and_classes(at_work, dataset, options, rows, d, counts):
    prepared = load_prepared(build(dataset, options))
    X, y = prepared.X, prepared.y
    assert X.shape == (rows, d) and X.dtype == np.float32
    assert np.bincount(y, minlength=len(counts)).tolist() == counts
    assert prepared.n_classes == len(counts)
    assert X.min() >= -1.0 and X.max() <= 1.0
    axis = 1 if options.get("scaling") == "sample" else 0
    lo, hi = X.min(axis=axis), X.max(axis=axis)
    varying = hi > lo
    assert varying.sum() >= 1
    np.testing.assert_allclose(lo[varying], -1.0, atol=1e-6)  # min-max: both ends are attained
    np.testing.assert_allclose(hi[varying], 1.0, atol=1e-6)
    assert np.all(X.T[~varying] == 0) if axis == 0 else np.all(X[~varying] == 0)


def test_random_category_values_follow_the_seed():
    cols = np.array([["a", "x"], ["b", "x"], ["a", "y"], ["c", "y"]])
    first, again = encode_categorical(cols, "random", 3), encode_categorical(cols, "random", 3)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, encode_categorical(cols, "random", 4))
    assert first[0, 0] == first[2, 0] and len(np.unique(first[:, 0])) == 3  # one value per category
    assert np.all(np.abs(first) <= 1)
    np.testing.assert_array_equal(encode_categorical(cols, "onehot", 0).sum(axis=1), [2, 2, 2, 2])


def test_option_keys_survive_a_cluster_jobs_wildcard_list():
    """Cluster executors hand a job its wildcards as ``rule:name=value,name=value``."""
    from snakemake.target_jobs import parse_target_jobs_cli_args

    key = options_key(preprocess_options("mnist", {"image_size": 7}))
    oracle = classifier_oracle_path("mnist", {"image_size": 7}).rsplit("/", 1)[1].removesuffix(".npz")
    (spec,) = parse_target_jobs_cli_args([f"oracle_classifier:dataset=mnist,options={key},oracle={oracle}"])
    assert spec.wildcards_dict == {"dataset": "mnist", "options": key, "oracle": oracle}
    assert parse_preprocess_key("mnist", spec.wildcards_dict["options"])["image_size"] == 7
    # a float's exponent sign would read as a separator: it is left out
    big = options_key({"tolerance": 1e20, "seed": 1})
    assert big == "seed=1+tolerance=1e20" and parse_key({"tolerance": (0.1, float), "seed": (0, int)}, big, "x") == {
        "tolerance": 1e20,
        "seed": 1,
    }


def test_downsample_averages_blocks():
    img = np.arange(16, dtype=float).reshape(1, 4, 4)
    np.testing.assert_allclose(downsample(img, 2), [[2.5, 4.5, 10.5, 12.5]])
    with pytest.raises(ConfigError, match="image_size"):
        downsample(img, 3)


def test_option_keys_round_trip_and_errors():
    key = options_key({"split": "test", "image_size": 14, "scaling": "feature"})
    assert key == "image_size=14+scaling=feature+split=test"
    assert parse_preprocess_key("mnist", key) == {"split": "test", "image_size": 14, "scaling": "feature"}
    with pytest.raises(ConfigError, match="canonical"):
        parse_preprocess_key("mnist", "split=test+image_size=14+scaling=feature")
    with pytest.raises(ConfigError, match="image_size"):
        processed_path("mnist", {"image_size": 5})
    with pytest.raises(ConfigError, match="unknown option"):
        processed_path("magic", {"categorical": "onehot"})
    with pytest.raises(ConfigError, match="dataset"):
        ClassificationBandit.required_files({})


def test_covertype_reader_on_a_file_of_the_same_format(tmp_path):
    """Covertype has no mirror copy: check the reader on a small file in its format (54 attributes, class 1..7)."""
    rng = np.random.default_rng(0)
    rows = np.hstack(
        [rng.integers(0, 4000, size=(14, 10)), rng.integers(0, 2, size=(14, 44)), np.tile(np.arange(1, 8), 2)[:, None]]
    )
    path = tmp_path / "uci/covertype/covtype.data.gz"
    path.parent.mkdir(parents=True)
    with gzip.open(path, "wt") as fh:
        fh.writelines(",".join(map(str, r)) + "\n" for r in rows)
    prepared = prepare("covertype", raw_dir=tmp_path, verify=False)
    with pytest.raises(CorruptFileError, match=r"covtype\.data\.gz: raw file of dataset 'covertype' has sha256"):
        prepare("covertype", raw_dir=tmp_path)  # not the registered file
    assert prepared.X.shape == (14, 54) and prepared.n_classes == 7
    np.testing.assert_array_equal(prepared.y, rows[:, -1] - 1)
    assert prepared.X.min() >= -1 and prepared.X.max() <= 1


# --- environments ----------------------------------------------------------------------------------
def test_block_arms_put_the_context_in_the_arm_block():
    x = np.array([1.0, -2.0, 3.0])
    arms = block_arms(x, 4)
    assert arms.shape == (4, 12)
    for k in range(4):
        np.testing.assert_array_equal(arms[k, 3 * k : 3 * k + 3], x)
        assert np.count_nonzero(arms[k]) == 3


@pytest.mark.parametrize(
    "dataset, options",
    [
        ("mnist", {"image_size": 7}),
        ("digits", {"image_size": 4}),
        ("mushroom", {}),
        ("car", {"categorical": "onehot"}),
        ("shuttle", {}),
        ("magic", {}),
        ("banknote", {}),
    ],
)
def test_every_dataset_feeds_the_reward_bandit(at_work, dataset, options):
    build(dataset, options)
    env = ClassificationBandit(np.random.SeedSequence(5), horizon=40, dataset=dataset, preprocessing=options)
    info = env.public_info()
    assert info["dimension"] == info["n_arms"] * info["context_dimension"] and info["arm_layout"] == "block"
    logs = run(env, LinUCB, 40)
    assert set(np.unique(logs["regret"])) <= {0.0, 1.0}
    np.testing.assert_array_equal(logs["regret"] + logs["reward"], 1.0)


def test_rows_are_a_permutation_per_pass_and_policy_independent(at_work):
    build("banknote")
    a = ClassificationBandit(np.random.SeedSequence(2), horizon=3000, dataset="banknote")
    b = ClassificationBandit(np.random.SeedSequence(2), horizon=3000, dataset="banknote")
    np.testing.assert_array_equal(a.rows, b.rows)
    assert sorted(a.rows[:1372]) == list(range(1372))
    u = ClassificationBandit(np.random.SeedSequence(2), horizon=3000, dataset="banknote", sampling="uniform")
    assert len(np.unique(u.rows)) < 1372


def test_linucb_learns_banknote_under_delays(at_work):
    build("banknote")
    env = ClassificationBandit(np.random.SeedSequence(0), horizon=600, dataset="banknote")
    logs = run(env, LinUCB, 600, delay={"kind": "geometric", "mean": 10, "window": 50})
    assert logs["regret"][-300:].mean() < 0.12  # uniform play: 0.5


def test_linucb_block_path_equals_shared_linucb_on_full_features(at_work):
    """With block arms the K small models are exactly shared LinUCB on the dK-dimensional features."""
    build("digits", {"image_size": 2})
    env = ClassificationBandit(
        np.random.SeedSequence(1), horizon=150, dataset="digits", preprocessing={"image_size": 2}
    )
    info = env.public_info()
    fast = LinUCB(Problem(150, info=info), np.random.default_rng(0))
    plain = LinUCB(
        Problem(150, info={"dimension": info["dimension"], "n_arms": info["n_arms"]}), np.random.default_rng(0)
    )
    assert fast.block and not plain.block
    for t in range(1, 151):
        arms = env.context(t)
        a, b = fast.act(t, arms), plain.act(t, arms)
        assert a == b
        fb, _ = env.step(t, a)
        fast.observe(t + 1, [fb])
        plain.observe(t + 1, [fb])
    np.testing.assert_allclose(plain.ridge.estimate.reshape(info["n_arms"], -1), fast.model.theta, atol=1e-8)


class _ArmIdentityEnv(Environment):
    """All arms share the same context x; the reward depends on the arm index (theta_a . x)."""

    feedback_kind, action_kind, metrics, primary_metric = "reward", "arm", ("regret",), "regret"

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.theta = self.rng.normal(size=(3, 4))

    def public_info(self):
        return {"dimension": 4, "n_arms": 3}

    def context(self, t):
        self.x = self.rng.normal(size=4)
        return np.tile(self.x, (3, 1))

    def step(self, t, a):
        mean = self.theta @ self.x
        return RewardFeedback(t, float(mean[a] + 0.1 * self.rng.normal())), {"regret": float(mean.max() - mean[a])}


def test_disjoint_linucb_separates_arms_with_identical_features():
    disjoint = run(_ArmIdentityEnv(0), LinUCB, 400, mode="disjoint")["regret"]
    shared = run(_ArmIdentityEnv(0), LinUCB, 400, mode="shared")["regret"]
    assert disjoint[-200:].mean() < 0.25 * shared[-200:].mean()


def test_linucb_rejects_bad_parameters():
    with pytest.raises(ConfigError, match=r"policy\.params\.mode: must be one of \['shared', 'disjoint'\]"):
        params.check(LinUCB, {"mode": "hybrid"}, "policy.params")


def test_label_utilities_give_a_70_percent_preference(at_work):
    build("magic")
    env = ClassificationDueling(np.random.SeedSequence(3), horizon=1, dataset="magic")
    env.context(1)
    correct = int(env.y[env._row])
    wins = np.mean([env.step(1, (correct, 1 - correct))[0].y for _ in range(4000)])
    assert abs(wins - 0.7) < 0.025
    assert env.utilities()[correct] == pytest.approx(LOGIT_07)


def test_label_preferences_have_no_randomness(at_work):
    build("shuttle")
    env = ClassificationDueling(
        np.random.SeedSequence(4), horizon=50, dataset="shuttle", preference="label", utility_scale=1.0
    )
    for t in range(1, 51):
        env.context(t)
        c = int(env.y[env._row])
        other = (c + 1) % 7
        low, high = sorted({(c + 2) % 7, (c + 3) % 7})
        assert env.step(t, (c, other))[0].y == 1 and env.step(t, (other, c))[0].y == 0
        assert env.step(t, (high, low))[0].y == 1 and env.step(t, (low, high))[0].y == 0  # tie: higher index wins
        _, truth = env.step(t, (other, low))
        assert truth == {"regret": 2.0, "average_regret": 1.0, "weak_regret": 1.0, "self_duel": 0.0}


def test_dueling_envs_run_with_the_linear_dueling_policies(at_work):
    build("shuttle")
    env = ClassificationDueling(
        np.random.SeedSequence(0), horizon=150, dataset="shuttle", preference="label", utility_scale=1.0
    )
    ldb = run(env, LDBDF, 150)
    env = ClassificationDueling(
        np.random.SeedSequence(0), horizon=150, dataset="shuttle", preference="label", utility_scale=1.0
    )
    rnd = run(env, RandomPair, 150)
    assert ldb["regret"][-75:].mean() < 0.5 * rnd["regret"][-75:].mean()
    build("digits", {"image_size": 2})
    env = ClassificationDueling(
        np.random.SeedSequence(0), horizon=30, dataset="digits", preprocessing={"image_size": 2}
    )
    logs = run(env, LDBDF, 30, delay={"kind": "geometric", "mean": 5, "window": 10})
    np.testing.assert_allclose(logs["average_regret"], logs["regret"] / 2)


# --- oracles -------------------------------------------------------------------------------------------
def test_classifier_oracles_fit_well_and_drive_the_environments(at_work):
    arrays, _, quality = fit_classifier_oracle(load_prepared(build("banknote")))
    assert quality["test_accuracy"] > 0.95 and quality["majority_accuracy"] < 0.6
    arrays, meta, quality = fit_classifier_oracle(load_prepared(build("magic")))
    assert quality["test_accuracy"] > 0.75 and quality["test_log_loss"] < quality["prior_log_loss"] - 0.1
    probs = arrays["probabilities"]
    assert probs.shape == (19020, 2)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    save_npz(classifier_oracle_path("magic"), arrays, meta)
    env = ClassificationBandit(np.random.SeedSequence(0), horizon=60, dataset="magic", reward="classifier")
    assert env.required_files({"dataset": "magic", "reward": "classifier"})[1] == classifier_oracle_path("magic")
    logs = run(env, LinUCB, 60)
    assert np.all(logs["regret"] >= 0) and np.all(logs["regret"] <= 1) and set(np.unique(logs["reward"])) <= {0, 1}
    env = ClassificationDueling(np.random.SeedSequence(0), horizon=20, dataset="magic", utility="classifier")
    env.context(1)
    np.testing.assert_allclose(env.utilities(), LOGIT_07 * probs[env._row], rtol=1e-6)
    run(env, LDBDF, 20)


def _prompt_inputs(task):
    paths = prompt_raw_paths(task)
    return paths["pool"][0], paths["scores"], (paths["annotations"] or [None])[0]


def test_collected_scores_are_accuracies_from_the_mirror(at_work):
    derived = {}
    for line in (MIRROR / "prompts/scored/federated-apohf_instruction_scores.jsonl").read_text().splitlines():
        row = json.loads(line)
        derived.setdefault(row["task"], set()).add((row["instruction"], float(row["score"])))
    expected = {
        "active_to_passive": 210,
        "antonyms": 667,
        "sum": 122,
        "orthography_starts_with": 346,
        "larger_animal": 1255,
        "auto_categorization": 2099,
    }
    for task, n in expected.items():
        pairs, stats = collect_scores(_prompt_inputs(task)[1], task)
        assert len(pairs) == n and set(pairs) <= derived[task]
        assert all(0.0 <= s <= 1.0 for _, s in pairs)
    # the x10 / standardised history fields of larger_animal runs are dropped, not rescaled
    assert stats["history_fields_dropped"] > 0
    assert sum(len(v) for v in derived.values()) == 5482


def test_prompt_oracle_quality_and_environment(at_work):
    pool, scores, gold = _prompt_inputs("antonyms")
    arrays, meta, quality = fit_prompt_oracle("antonyms", pool, scores, gold)
    assert quality["cv_r2"] > 0.4  # held-out instructions, nested CV
    assert arrays["features"].shape == (500, 32) and arrays["utility"].shape == (500,)
    np.testing.assert_allclose(np.linalg.norm(arrays["features"], axis=1), 1.0)
    assert quality["gold_utility_mean"] > quality["utility_mean"]  # human instructions beat the average candidate
    save_npz(prompt_oracle_path("antonyms"), arrays, meta)
    pool, scores, gold = _prompt_inputs("sum")
    arrays, meta, _ = fit_prompt_oracle("sum", pool, scores, gold, {"regressor": "ridge", "embedding_dim": 8})
    save_npz(prompt_oracle_path("sum", {"regressor": "ridge", "embedding_dim": 8}), arrays, meta)
    # seed s plays tasks[s mod n]; the arm set is the task's 500 instructions
    env = PromptDueling(
        np.random.SeedSequence(3),
        horizon=40,
        tasks=["antonyms", "sum"],
        rewards="surrogate",
        oracle={"regressor": "ridge", "embedding_dim": 8},
    )
    assert env.task == "sum" and env.summary()["task_index"] == 1.0 and env.summary()["flat_task"] == 1.0
    assert env.public_info() == {"dimension": 8, "n_arms": 500, "fixed_arms": True}
    logs = run(env, LDBDF, 40, delay={"kind": "geometric", "mean": 5, "window": 20})
    assert np.all(logs["regret"] >= -1e-12)
    env = PromptDueling(np.random.SeedSequence(4), horizon=300, tasks=["antonyms", "sum"], rewards="surrogate")
    assert env.task == "antonyms"
    np.testing.assert_allclose(env.f, 10.0 * load_npz(prompt_oracle_path("antonyms"), "prompt oracle")[0]["utility"])
    ldb, rnd = (
        run(env, LDBDF, 300),
        run(
            PromptDueling(np.random.SeedSequence(4), horizon=300, tasks=["antonyms"], rewards="surrogate"),
            RandomPair,
            300,
        ),
    )
    assert ldb["regret"][-100:].mean() < 0.5 * rnd["regret"][-100:].mean()
    with pytest.raises(ConfigError, match="scored"):
        PromptDueling.required_files({"tasks": ["rhymes"]})
