"""Options refused while a config is planned, not minutes later inside a job (issue 38).

1. Every option of the prepared data (preprocessing of the classification datasets, classifier and
   prompt oracles, prompt arms, replay logs: the option tables of :mod:`banditbench.data.paths`) and
   every declared parameter of every registered environment: a value outside its declaration is
   refused by ``load_grid`` (what ``banditbench validate`` and the Snakefile run) with one line that
   starts with the full key path.  The bad values are derived from the declarations themselves, so a
   new option or parameter is covered as soon as it is declared; an option left unbounded must be
   listed below as one that any value >= 0 suits.  What only the data can tell (more candidates than
   items, more SVD components than features, a held-out split without a row per class) is refused by
   the data's own step, with one line naming the option.
2. Data-file parameters (``DataFile``): a directory, a non-regular file, a file of another kind (by its
   name, or by its first bytes where no rule builds it) is refused while planned, and every piece of
   advice names ``snakemake <path>`` only for a path that a rule of the pipeline builds.
"""

from __future__ import annotations

import math
import re
import types
import typing
from collections.abc import Mapping as MappingABC
from collections.abc import Sequence as SequenceABC
from typing import Annotated, Any, Literal, Mapping

import numpy as np
import pytest

from banditbench import registry
from banditbench.api import feedback_kinds
from banditbench.cli import main
from banditbench import params
from banditbench.configuration.grid import RESERVED_ENVIRONMENT_PARAMS, load_grid
from banditbench.data import paths
from banditbench.data.files import load_npz, rebuild_advice, rule_target, save_npz
from banditbench.data.paths import CAR_ORACLE, buildable
from banditbench.errors import ConfigError, CorruptFileError
from conftest import MIRROR, needs_mirror

EXP = "e"
ENV_KEY = f"experiments.{EXP}.environment.params"

#: per registered environment: parameters that make a minimal valid experiment (a budget where it has one)
BASE_PARAMS: dict[str, dict[str, Any]] = {
    "classification_bandit": {"dataset": "digits"},
    "classification_dueling": {"dataset": "digits"},
    "prompt_dueling": {"arms": {"embedding": "tfidf_word_svd"}},  # no sentence encoder needed to plan
}
BUDGETED = {"car_moderation", "pbbwk_synthetic"}

#: per option table of :mod:`banditbench.data.paths`: the environment that reads it, its parameters (a
#: valid experiment) and the parameter that holds the options
OPTION_GROUPS = [
    *(
        (f"preprocessing of {dataset}", spec, "classification_bandit", {"dataset": dataset}, "preprocessing")
        for dataset, spec in paths.PREPROCESS_OPTIONS.items()
    ),
    (
        "classifier oracle",
        paths.CLASSIFIER_OPTIONS,
        "classification_bandit",
        {"dataset": "digits", "reward": "classifier"},
        "oracle",
    ),
    (
        "classifier oracle (dueling)",
        paths.CLASSIFIER_OPTIONS,
        "classification_dueling",
        {"dataset": "digits", "utility": "classifier"},
        "oracle",
    ),
    ("replay", paths.REPLAY_OPTIONS, "obd_replay", {}, "preprocessing"),
    ("prompt oracle", paths.PROMPT_ORACLE_OPTIONS, "prompt_dueling", {"rewards": "surrogate"}, "oracle"),
    ("prompt arms", paths.PROMPT_ARM_OPTIONS, "prompt_dueling", BASE_PARAMS["prompt_dueling"], "arms"),
]

#: options whose declaration is a plain ``int`` / ``float`` (any value >= 0): every value is one their
#: preprocessing step can use.  A new unbounded option must be added here on purpose, or declare its bounds.
UNBOUNDED_OPTIONS = {
    "encoding_seed",  # a seed
    "seed",  # a seed
    "arm_seed",  # a seed
    "user_dim",  # 0 drops the user embedding; above the data's columns: refused by the replay preprocessing
    "item_dim",  # likewise for the item embedding
    "tolerance",  # a distance between scores; 0 keeps only exact agreement
    "embedding_dim",  # of the prompt arms: checked by prompt_arms_options (>= 2 with a TF-IDF embedding)
}
#: environment parameters declared as plain numbers (no bounds) on purpose
UNBOUNDED_PARAMETERS = {("pbbwk_synthetic", "rewards")}  # expected rewards may be any real (gaussian noise)


# --- helpers ------------------------------------------------------------------------------------------
def _policy_for(env_cls) -> str:
    """A registered policy (not a neural one: no torch to import) that plays this environment."""
    for name, entry in sorted(registry.policies().items()):
        if ".neural" in str(getattr(entry, "module", "")):
            continue
        cls = entry.load()
        if cls.feedback_kind in feedback_kinds(env_cls) and cls.action_kind == env_cls.action_kind:
            if not registry.required_parameters(cls):
                return name
    raise AssertionError(f"no policy plays {env_cls.registry_name!r}")


def _config(env: str, env_params: Mapping[str, Any]) -> dict[str, Any]:
    env_cls = registry.get("environment", env).load()
    experiment = {
        "environment": {"name": env, "params": dict(env_params)},
        "horizon": 20,
        "seeds": 1,
        "algorithms": {"a": {"policy": _policy_for(env_cls)}},
        "delays": {"none": {"kind": "none"}},
    }
    if env in BUDGETED:
        experiment["budgets"] = [5]
    return {"experiments": {EXP: experiment}}


def _refused(config: Mapping[str, Any]) -> str:
    with pytest.raises(ConfigError) as err:
        load_grid(config)
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message, message
    return message


def _bad_values(hint: Any) -> list[Any]:
    """Values that ``hint`` does not allow, derived from it: outside each bound, outside each closed set,
    of the wrong type, non-finite."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        base, marks = args[0], args[1:]
        out = _bad_values(base)
        for mark in marks:
            if isinstance(mark, params.Range):
                step = 1 if base is int else 1e-9
                for bound, beyond in (
                    (mark.gt, mark.gt),
                    (mark.ge, None if mark.ge is None else mark.ge - step),
                    (mark.lt, mark.lt),
                    (mark.le, None if mark.le is None else mark.le + step),
                ):
                    if bound is not None:
                        out.append(int(beyond) if base is int else float(beyond))
            elif isinstance(mark, params.OneOf):
                out.append("no-such-value")
        return out
    if origin is Literal:
        return ["no-such-value"]
    if origin in (typing.Union, types.UnionType):
        return [v for member in args for v in _bad_values(member) if not params.conforms(v, hint)]
    if hint is int:
        return [1.5, "3", True]
    if hint is float:
        return ["0.5", math.nan, math.inf]
    if hint is str:
        return [3]
    if hint is bool:
        return ["yes"]
    if origin in (SequenceABC, list, tuple):
        return ["not-a-list"] + [[v] for v in _bad_values(args[0])] if args else ["not-a-list"]
    if origin in (MappingABC, dict):
        return ["not-a-mapping"]
    return []


def _option_cases():
    for group, spec, env, base, key in OPTION_GROUPS:
        for name, (default, allowed) in spec.items():
            hint = paths.option_hint(allowed)
            if hint is None:
                bad = ["no-such-value"] + ([max(allowed) + 1] if all(type(a) is int for a in allowed) else [])
            else:
                bad = _bad_values(hint)
            for value in bad:
                yield pytest.param(env, base, key, name, value, id=f"{group}-{name}-{value!r}")


def _parameter_cases():
    for env, entry in sorted(registry.environments().items()):
        cls = entry.load()
        for name, hint in params.hints(cls).items():
            if name in RESERVED_ENVIRONMENT_PARAMS:
                continue
            for value in _bad_values(hint):
                yield pytest.param(env, name, value, id=f"{env}-{name}-{value!r}")


# --- 1. options and parameters: refused while planned, by their full key path ---------------------------
@pytest.mark.parametrize("env", sorted(registry.environments()))
def test_every_environment_plans_with_its_base_parameters(env):
    load_grid(_config(env, BASE_PARAMS.get(env, {})))


@pytest.mark.parametrize("env, base, key, name, value", list(_option_cases()))
def test_a_bad_data_option_is_refused_while_planned_naming_its_full_key(env, base, key, name, value):
    env_params = {**base, key: {**base.get(key, {}), name: value}}
    message = _refused(_config(env, env_params))
    assert message.startswith(f"{ENV_KEY}.{key}.{name}: "), message


@pytest.mark.parametrize("env, name, value", list(_parameter_cases()))
def test_a_bad_environment_parameter_is_refused_while_planned_naming_its_full_key(env, name, value):
    message = _refused(_config(env, {**BASE_PARAMS.get(env, {}), name: value}))
    assert message.startswith(f"{ENV_KEY}.{name}: "), message


def test_every_option_group_of_the_data_is_swept():
    """A new option table in banditbench.data.paths must join OPTION_GROUPS (and so the sweep above)."""
    tables = [v for k, v in vars(paths).items() if k.endswith("_OPTIONS") and isinstance(v, dict)]
    swept = {id(spec) for _, spec, *_ in OPTION_GROUPS}
    for table in tables:
        nested = table.values() if all(isinstance(v, dict) for v in table.values()) else [table]
        assert all(id(spec) in swept for spec in nested), [k for k, v in vars(paths).items() if v is table]


def test_an_unbounded_option_or_parameter_is_one_that_any_value_suits():
    """Options and parameters typed plain ``int`` / ``float`` take every value >= 0 (resp. every finite
    number): each such one is listed on purpose, all others declare their bounds."""
    for _, spec, *_ in OPTION_GROUPS:
        for name, (_, allowed) in spec.items():
            if allowed in (int, float):
                assert name in UNBOUNDED_OPTIONS, f"option {name!r}: declare its bounds or list it"

    def plain(hint):
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin is Annotated:
            return not any(isinstance(m, (params.Range, params.OneOf)) for m in args[1:]) and plain(args[0])
        if origin in (SequenceABC, list, tuple):
            return bool(args) and plain(args[0])
        return hint in (int, float)

    for env, entry in registry.environments().items():
        for name, hint in params.hints(entry.load()).items():
            if name not in RESERVED_ENVIRONMENT_PARAMS and plain(hint):
                assert (env, name) in UNBOUNDED_PARAMETERS, f"{env}.{name}: declare its bounds or list it"


@pytest.mark.parametrize(
    "options, message",
    [
        ({"test_fraction": 1.0}, "oracle.test_fraction: need a finite number > 0 and < 1, got 1.0"),
        ({"test_fraction": 0}, "oracle.test_fraction: need a finite number > 0 and < 1, got 0"),
        ({"seed": -1}, "oracle.seed: need an integer >= 0, got -1"),
    ],
)
def test_the_classifier_oracle_options_and_their_messages(options, message):
    config = _config("classification_bandit", {"dataset": "digits", "reward": "classifier", "oracle": options})
    assert _refused(config) == f"{ENV_KEY}.{message}"


def test_the_data_options_messages_read_as_documented():
    cases = [
        ("obd_replay", {"preprocessing": {"n_actions": 1}}, "preprocessing.n_actions: need an integer >= 2, got 1"),
        ("prompt_dueling", {"rewards": "surrogate", "oracle": {"embedding_dim": 1}}, "oracle.embedding_dim: "),
        ("prompt_dueling", {"rewards": "surrogate", "oracle": {"tolerance": math.nan}}, "oracle.tolerance: "),
        ("prompt_dueling", {"arms": {"embedding": "tfidf_word_svd", "max_arms": 1}}, "arms.max_arms: "),
        ("prompt_dueling", {"arms": {"embedding": "tfidf_word_svd", "embedding_dim": 1}}, "arms.embedding_dim: "),
    ]
    for env, env_params, message in cases:
        assert _refused(_config(env, env_params)).startswith(f"{ENV_KEY}.{message}")
    assert _refused(_config("prompt_dueling", {"rewards": "surrogate", "oracle": {"embedding_dim": 1}})) == (
        f"{ENV_KEY}.oracle.embedding_dim: need an integer >= 2, got 1"
    )


def test_a_file_name_with_a_refused_option_is_not_one_a_rule_builds():
    good = "data/oracles/classifiers/digits/image_size=8+scaling=feature/model=logistic+seed=0+test_fraction=0.25.npz"
    assert buildable(good)
    assert not buildable(good.replace("test_fraction=0.25", "test_fraction=0.0"))
    assert not buildable("data/processed/obd_random_all/item_dim=8+n_actions=1+seed=0+user_dim=16.npz")


def test_car_moderation_bernoulli_costs_need_factors_at_most_one():
    env_params = {"noise": "bernoulli", "cost_factors": [0.5, 1.5, 0.3, 0.5]}
    assert _refused(_config("car_moderation", env_params)).startswith(
        f"{ENV_KEY}.cost_factors: with noise 'bernoulli' the costs are drawn Bernoulli(w)"
    )
    load_grid(_config("car_moderation", {"noise": "bernoulli", "cost_factors": [0.5, 1.0, 0.3, 0.5]}))


# --- what only the data tells: refused by the data's own step, one line naming the option ----------------
def test_a_held_out_split_without_a_row_per_class_names_test_fraction():
    from banditbench.data.oracles import fit_classifier_oracle
    from banditbench.data.preprocess import Prepared

    y = np.repeat(np.arange(4), 5)  # 20 rows, 4 classes of 5
    prepared = Prepared(np.zeros((20, 2), np.float32), y, ("a", "b", "c", "d"), {"dataset": "tiny"})
    for fraction in (0.1, 0.9):
        with pytest.raises(ConfigError) as err:
            fit_classifier_oracle(prepared, {"test_fraction": fraction})
        assert str(err.value).startswith(f"oracle.test_fraction: {fraction} of the 20 rows of dataset 'tiny' holds")
        assert "choose a fraction between 0.2 and 0.8" in str(err.value)


def test_more_svd_components_than_tf_idf_features_names_embedding_dim():
    from banditbench.data.oracles import fit_embedder

    texts = ["add the two numbers", "sum them up", "write the word backwards"]
    for where in ("oracle", "arms"):
        with pytest.raises(ConfigError, match=rf"^{where}\.embedding_dim: 50 exceeds the \d+ tfidf_word_svd features"):
            fit_embedder("tfidf_word_svd", 50, 0, texts, where, "sum")
    fit_embedder("tfidf_word_svd", 2, 0, texts, "oracle", "sum")


def test_more_svd_components_than_columns_names_the_replay_option():
    from banditbench.data.open_bandit import svd_basis

    with pytest.raises(ConfigError, match=r"^preprocessing\.user_dim: 5 SVD components asked of 3 feature columns"):
        svd_basis(np.eye(3), 5, "preprocessing.user_dim")


@needs_mirror
def test_more_candidates_than_items_names_n_actions(tmp_path):
    import shutil

    from banditbench.data.open_bandit import prepare_obd

    raw = tmp_path / "raw"
    for f in paths.replay_raw_paths():
        name = f.removeprefix("data/raw/")
        (raw / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MIRROR / name, raw / name)
    with pytest.raises(ConfigError) as err:
        prepare_obd({"n_actions": 81}, raw_dir=raw)
    assert str(err.value) == (
        "preprocessing.n_actions: 81 candidates per event, but the log of dataset 'obd_random_all' has 80 items; "
        "choose at most 80"
    )


# --- 2. data-file paths that exist but are wrong -----------------------------------------------------------
SNAKEMAKE = re.compile(r"`snakemake --cores 1 ([^`]+)`")


def _advice_builds(message: str) -> None:
    """Every ``snakemake <path>`` a message suggests names a path that a rule builds."""
    for target in SNAKEMAKE.findall(message):
        assert buildable(target), f"advice names {target!r}, which no rule builds: {message}"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project folder as the working directory (data files must lie inside it)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "oracles").mkdir(parents=True)
    return tmp_path


def _car(oracle: str, **config) -> dict[str, Any]:
    return {**_config("car_moderation", {"oracle": oracle}), **config}


def _npz(path) -> None:
    save_npz(path, {"x": np.zeros(1)}, {})


DEFAULT_ADVICE = (
    "point it at a .npz array file, e.g. the default 'data/oracles/car_evaluation.npz', "
    "which `snakemake --cores 1 data/oracles/car_evaluation.npz` builds"
)


def test_a_directory_is_refused_while_planned(project):
    (project / "data" / "oracles" / "mine").mkdir()
    message = _refused(_car("data/oracles/mine"))
    assert message == f"{ENV_KEY}.oracle: 'data/oracles/mine' is a directory, not a .npz array file; {DEFAULT_ADVICE}"
    _advice_builds(message)


def test_a_directory_where_a_rule_builds_the_file_is_refused_with_the_rule(project):
    (project / CAR_ORACLE).mkdir()
    message = _refused(_car(CAR_ORACLE))
    assert message == (
        f"{ENV_KEY}.oracle: '{CAR_ORACLE}' is a directory, not a .npz array file; remove it; "
        f"`snakemake --cores 1 {CAR_ORACLE}` then builds it"
    )
    _advice_builds(message)


def test_a_directory_in_the_data_root_is_refused(project, tmp_path_factory):
    root = tmp_path_factory.mktemp("shared-data")
    (root / "car.npz").mkdir()
    message = _refused(_car(str(root / "car.npz"), data_root=str(root)))
    assert message.startswith(f"{ENV_KEY}.oracle: '{root / 'car.npz'}' is a directory, not a .npz array file;")
    _advice_builds(message)


@pytest.mark.parametrize(
    "name, content, problem",
    [
        ("notes.txt", b"PK\x03\x04 a zip by another name", "is not a .npz array file: its name does not end in .npz"),
        ("data/oracles/mine.npz", b"hello, an oracle", "is not a .npz array file: it starts with b'hell', not with "),
        ("data/oracles/empty.npz", b"", "is not a .npz array file: it is empty (a text file, or a file of another"),
    ],
)
def test_an_existing_file_of_another_kind_is_refused_while_planned(project, name, content, problem):
    (project / name).write_bytes(content)
    message = _refused(_car(name))
    assert message.startswith(f"{ENV_KEY}.oracle: {name!r} {problem}"), message
    assert message.endswith(DEFAULT_ADVICE)
    _advice_builds(message)


def test_a_missing_file_that_no_rule_builds_says_which_file_a_rule_builds(project):
    message = _refused(_car("data/oracles/my_oracle.npz"))
    assert message == (
        f"{ENV_KEY}.oracle: 'data/oracles/my_oracle.npz' does not exist and no rule of the pipeline builds it; "
        f"{DEFAULT_ADVICE}"
    )
    _advice_builds(message)


def test_valid_files_and_files_a_rule_rebuilds_plan(project):
    _npz(project / "data" / "oracles" / "mine.npz")
    load_grid(_car("data/oracles/mine.npz"))
    load_grid(_car(CAR_ORACLE))  # absent: its rule builds it
    (project / CAR_ORACLE).write_bytes(b"garbled")  # the pre-job check moves it aside and has it rebuilt
    load_grid(_car(CAR_ORACLE))


def test_validate_prints_one_line_naming_the_key(project, capsys):
    import yaml

    (project / "data" / "oracles" / "notes.npz").write_text("not an oracle\n")
    (project / "bad.yaml").write_text(yaml.safe_dump(_car("data/oracles/notes.npz")))
    assert main(["validate", "bad.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"banditbench: configuration error: {ENV_KEY}.oracle: 'data/oracles/notes.npz' is not a")


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, plant, message",
    [
        ("data/oracles/mine", lambda path: path.mkdir(), "is a directory, not a .npz array file"),
        ("data/oracles/mine.npz", lambda path: path.write_text("an oracle, really\n"), "is not a .npz array file"),
    ],
    ids=["directory", "text-file"],
)
def test_snakemake_stops_before_any_job_on_a_wrong_data_file(tmp_path, name, plant, message):
    from smk import copy_project, smk

    work = copy_project(tmp_path, _car(name))
    (work / "data/oracles").mkdir(parents=True)
    plant(work / name)
    run = smk(work, "--quiet")
    out = run.stdout + run.stderr
    assert run.returncode != 0 and f"{ENV_KEY}.oracle: {name!r} {message}" in out, out[-3000:]
    assert "Traceback" not in out and not (work / "results").exists() and not (work / "logs").exists()


# --- the job's advice: the snakemake command only for a file a rule builds ---------------------------------
def test_load_npz_advice_names_snakemake_only_where_a_rule_builds_the_file(project):
    (project / CAR_ORACLE).write_bytes(b"garbled")
    with pytest.raises(CorruptFileError) as err:
        load_npz(CAR_ORACLE, "car oracle")
    assert str(err.value).endswith(f"delete it and rebuild it with `snakemake --cores 1 {CAR_ORACLE}`")

    mine = "data/oracles/mine.npz"
    (project / mine).write_bytes(b"garbled")
    for call, advice in (
        (lambda: load_npz(mine, "car oracle"), "replace it with a valid car oracle, or point the config at one"),
        (
            lambda: load_npz("data/oracles", "car oracle"),
            "replace it with a valid car oracle, or point the config at one",
        ),
        (
            lambda: load_npz("data/oracles/absent.npz", "car oracle"),
            "put a valid car oracle there, or point the config at one",
        ),
    ):
        with pytest.raises((CorruptFileError, ConfigError)) as err:
            call()
        assert "snakemake" not in str(err.value)
        assert str(err.value).endswith(f"; no rule of the pipeline builds it: {advice}")
    with pytest.raises(ConfigError, match=r"^data/oracles: is a directory, not a car oracle;"):
        load_npz("data/oracles", "car oracle")
    with pytest.raises(ConfigError, match=rf"does not exist; build it with `snakemake --cores 1 {CAR_ORACLE}`$"):
        (project / CAR_ORACLE).unlink()
        load_npz(CAR_ORACLE, "car oracle")


def test_a_job_reading_a_user_oracle_of_the_wrong_content_names_the_parameter_and_the_default(project):
    from banditbench.envs.knapsack import CarModeration

    _npz(project / "data" / "oracles" / "mine.npz")  # a .npz, but not a car oracle
    with pytest.raises(CorruptFileError) as err:
        CarModeration(np.random.SeedSequence(0), horizon=10, budget=5, oracle="data/oracles/mine.npz")
    message = str(err.value)
    assert message.startswith("data/oracles/mine.npz: car oracle lacks")
    assert message.endswith(
        "point the experiment's environment.params.oracle at a car oracle, e.g. the default "
        f"'{CAR_ORACLE}', which `snakemake --cores 1 {CAR_ORACLE}` builds"
    )
    _advice_builds(message)


def test_a_located_copy_is_rebuilt_by_its_configured_path(project, monkeypatch):
    """Under a storage provider a job reads a local copy of its input; the advice names the rule's target."""
    from banditbench.data import files

    monkeypatch.setattr(files, "_LOCATED", {})
    copy = project / ".snakemake" / "storage" / "fs" / "bucket" / CAR_ORACLE
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"garbled")
    files.use_inputs([str(copy.relative_to(project))])
    with pytest.raises(CorruptFileError) as err:
        load_npz(CAR_ORACLE, "car oracle")
    assert str(err.value).startswith(f".snakemake/storage/fs/bucket/{CAR_ORACLE}: car oracle is unreadable")
    assert str(err.value).endswith(f"delete it and rebuild it with `snakemake --cores 1 {CAR_ORACLE}`")
    assert rule_target(CAR_ORACLE) == CAR_ORACLE
    assert rule_target(project / CAR_ORACLE) == CAR_ORACLE
    assert rule_target(f"/elsewhere/{CAR_ORACLE}") is None  # not the project's: no rule builds it
    assert rebuild_advice(f"/elsewhere/{CAR_ORACLE}", "car oracle") == (
        "no rule of the pipeline builds it: replace it with a valid car oracle, or point the config at one"
    )
