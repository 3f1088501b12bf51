"""Options and file names of prepared data: processed datasets and fitted oracles.

Light on purpose (no pandas / scikit-learn): environments import it to declare
the files they read (``required_files``), Snakemake rules to parse wildcards.

A prepared file is named by its options, so different preprocessing choices
live side by side and a rule can rebuild any of them from its path::

    data/processed/<dataset>/<options>.npz
    data/oracles/classifiers/<dataset>/<preprocessing options>/<oracle options>.npz
    data/oracles/prompts/<task>/<oracle options>.npz
    data/processed/prompt_embeddings/<task>/<encoder>.npz  (every instruction of a task, a sentence encoder)
    data/processed/prompt_arms/<task>/<arm options>.npz    (scored instructions: features and measured accuracy)
    data/processed/obd_random_all/<replay options>.npz     (logged events for replay: the sample)
    data/processed/obd_full/<replay options>.npz           (the same from the full archive)

``<options>`` is the canonical key ``name=value+name=value`` (names sorted, every
option present, defaults filled in), e.g. ``image_size=14+scaling=feature+split=test``.
The key is a Snakemake wildcard value: it contains no comma, because cluster
executors pass a job's wildcards as one comma-separated ``name=value`` list.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, Mapping

from ..params import NonNegative, NonNegativeInt, Range, conforms, describe
from ..errors import ConfigError, did_you_mean, key_path
from ._prompt_files import PROMPT_POOLS
from .catalog import ENCODERS, POOL_VARIANTS, SCORED_TASKS, annotation_file, get_dataset, pool_file, score_files

RAW_DIR = "data/raw"
PROCESSED_DIR = "data/processed"
ORACLE_DIR = "data/oracles"
#: the car moderation oracle (seed 004), fitted by the pipeline from UCI car.data
CAR_ORACLE = f"{ORACLE_DIR}/car_evaluation.npz"

_SCALING = ("feature", ("feature", "sample"))
_CATEGORICAL = {"categorical": ("random", ("random", "onehot")), "encoding_seed": (0, int), "scaling": _SCALING}

#: what an option may be, besides a tuple of allowed values: ``int`` (an integer >= 0), ``float`` (a finite
#: number >= 0) or an annotation of :mod:`banditbench.params` with the option's own bounds, so
#: that every value its preprocessing step cannot use is refused while the config is planned (:func:`resolve`)
#: and a file name with such a value is not one a rule builds (:func:`parse_key`)
AT_LEAST_TWO = Annotated[int, Range(ge=2)]
#: a fraction strictly between 0 and 1 (a held-out split)
FRACTION = Annotated[float, Range(gt=0, lt=1)]

#: per dataset: option -> (default, allowed values, ``int`` / ``float`` or an annotation)
PREPROCESS_OPTIONS: dict[str, dict[str, tuple[Any, Any]]] = {
    "mnist": {
        "split": ("test", ("test", "train", "all")),
        "image_size": (14, (1, 2, 4, 7, 14, 28)),
        "scaling": _SCALING,
    },
    "digits": {"image_size": (8, (1, 2, 4, 8)), "scaling": _SCALING},
    "mushroom": _CATEGORICAL,
    "car": _CATEGORICAL,
    "shuttle": {"split": ("all", ("all", "train", "test")), "scaling": _SCALING},
    "magic": {"scaling": _SCALING},
    "banknote": {"scaling": _SCALING},
    "covertype": {"scaling": _SCALING},
}
CLASSIFICATION_DATASETS = tuple(PREPROCESS_OPTIONS)

#: the Open Bandit Dataset prepared for replay (banditbench.data.open_bandit): the replay option
#: ``source`` picks the registered dataset read, whose name is the prepared file's folder
#: (the other options are its name), so the sample's and the full data's files coexist
REPLAY_SOURCES = {"sample": "obd_random_all", "full": "obd_full"}
REPLAY_DATASET = REPLAY_SOURCES["sample"]
REPLAY_OPTIONS: dict[str, tuple[Any, Any]] = {
    "n_actions": (5, AT_LEAST_TWO),  # at most the log's items: checked by its preprocessing
    "user_dim": (16, int),
    "item_dim": (8, int),
    "seed": (0, int),
}

CLASSIFIER_OPTIONS: dict[str, tuple[Any, Any]] = {
    "model": ("logistic", ("logistic", "mlp", "hist_gradient_boosting")),
    "test_fraction": (0.25, FRACTION),
    "seed": (0, int),
}

PROMPT_ORACLE_OPTIONS: dict[str, tuple[Any, Any]] = {
    "pool": ("query", tuple(POOL_VARIANTS)),
    "embedding": ("tfidf_word_svd", ("tfidf_word_svd", "tfidf_char_svd")),
    "embedding_dim": (32, AT_LEAST_TWO),  # at most the TF-IDF features: checked by the fit
    "regressor": ("kernel_ridge", ("kernel_ridge", "ridge")),
    "tolerance": (0.15, float),
    "seed": (0, int),
}

#: the measured-reward prompt environment's arms (banditbench.data.prompt_arms): the embedding (a sentence
#: encoder of the registry, or TF-IDF + SVD to ``embedding_dim``, which only the TF-IDF embeddings read), how
#: repeated scores of one instruction are combined (``duplicates``), at most ``max_arms`` arms drawn with
#: ``arm_seed``, the scale check of the result logs (``tolerance``) and the SVD's ``seed``
PROMPT_EMBEDDINGS = (*ENCODERS, "tfidf_word_svd", "tfidf_char_svd")
PROMPT_ARM_OPTIONS: dict[str, tuple[Any, Any]] = {
    "embedding": ("all-MiniLM-L6-v2", PROMPT_EMBEDDINGS),
    "embedding_dim": (32, int),
    "duplicates": ("whitespace", ("whitespace", "exact")),
    "max_arms": (500, AT_LEAST_TWO),
    "arm_seed": (0, int),
    "tolerance": (0.15, float),
    "seed": (0, int),
}
EMBEDDING_DIR = f"{PROCESSED_DIR}/prompt_embeddings"
ARMS_DIR = f"{PROCESSED_DIR}/prompt_arms"


def option_hint(allowed: Any) -> Any:
    """The annotation an option's ``allowed`` entry stands for (``None`` for a tuple of values)."""
    if isinstance(allowed, tuple):
        return None
    return {int: NonNegativeInt, float: NonNegative}.get(allowed, allowed)


def _check_value(name: str, value: Any, allowed: Any, where: str) -> Any:
    hint = option_hint(allowed)
    if hint is None:
        if value not in allowed:
            raise ConfigError(
                f"{key_path(where, name)}: {value!r} is not one of {list(allowed)}{did_you_mean(value, allowed)}"
            )
        return value
    if not conforms(value, hint):
        raise ConfigError(f"{key_path(where, name)}: need {describe(hint)}, got {value!r}")
    base = typing.get_args(hint)[0] if typing.get_origin(hint) is Annotated else hint
    return base(value)


def resolve(spec: Mapping[str, tuple[Any, Any]], options: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    """Fill in defaults and validate ``options`` against ``spec``; unknown names are an error.

    ``where`` is the key path of ``options`` (see :mod:`banditbench.errors`)."""
    options = dict(options or {})
    unknown = set(options) - set(spec)
    if unknown:
        raise ConfigError(f"{where}: unknown option(s) {sorted(unknown)}; known: {sorted(spec)}")
    return {
        name: _check_value(name, options.get(name, default), allowed, where)
        for name, (default, allowed) in spec.items()
    }


#: separator of the ``name=value`` pairs of a key
KEY_SEP = "+"


def _key_value(value: Any) -> str:
    # floats round-trip through repr; an exponent's "+" is dropped (1e+20 -> 1e20), it is the separator
    return repr(value).replace("e+", "e") if isinstance(value, float) else str(value)


def options_key(options: Mapping[str, Any]) -> str:
    """Canonical file-name key of resolved options (sorted ``name=value`` pairs)."""
    return KEY_SEP.join(f"{k}={_key_value(v)}" for k, v in sorted(options.items()))


def parse_key(spec: Mapping[str, tuple[Any, Any]], key: str, where: str) -> dict[str, Any]:
    """Inverse of :func:`options_key`; only canonical keys are accepted (one file per option set)."""
    raw: dict[str, Any] = {}
    for part in key.split(KEY_SEP):
        name, sep, text = part.partition("=")
        if not sep or name not in spec:
            raise ConfigError(f"{where}: cannot read option {part!r} of {key!r}; known: {sorted(spec)}")
        default = spec[name][0]
        try:
            raw[name] = type(default)(text) if not isinstance(default, str) else text
        except ValueError:
            raise ConfigError(f"{where}: option {name!r} needs a {type(default).__name__}, got {text!r}") from None
    options = resolve(spec, raw, where)
    if options_key(options) != key:
        raise ConfigError(f"{where}: {key!r} is not canonical; expected {options_key(options)!r}")
    return options


# The path functions below take ``where``, the key path of the parameters that hold
# ``dataset``, ``preprocessing``, ``oracle`` or ``tasks`` (an environment passes
# ``environment.params``), so their errors name the config key.
def preprocess_options(dataset: str, options: Mapping[str, Any] | None = None, where: str = "") -> dict[str, Any]:
    if dataset not in PREPROCESS_OPTIONS:
        raise ConfigError(
            f"{key_path(where, 'dataset')}: {dataset!r} is not one of {list(CLASSIFICATION_DATASETS)}"
            f"{did_you_mean(dataset, CLASSIFICATION_DATASETS)}"
        )
    return resolve(PREPROCESS_OPTIONS[dataset], options, key_path(where, "preprocessing"))


def processed_path(dataset: str, options: Mapping[str, Any] | None = None, where: str = "") -> str:
    return f"{PROCESSED_DIR}/{dataset}/{options_key(preprocess_options(dataset, options, where))}.npz"


def classifier_oracle_path(
    dataset: str,
    preprocessing: Mapping[str, Any] | None = None,
    oracle: Mapping[str, Any] | None = None,
    where: str = "",
) -> str:
    pkey = options_key(preprocess_options(dataset, preprocessing, where))
    okey = options_key(resolve(CLASSIFIER_OPTIONS, oracle, key_path(where, "oracle")))
    return f"{ORACLE_DIR}/classifiers/{dataset}/{pkey}/{okey}.npz"


def prompt_oracle_path(task: str, oracle: Mapping[str, Any] | None = None, where: str = "") -> str:
    if task not in SCORED_TASKS:
        raise ConfigError(
            f"{key_path(where, 'tasks')}: {task!r} has no LLM-scored instructions; scored tasks: {list(SCORED_TASKS)}"
        )
    options = resolve(PROMPT_ORACLE_OPTIONS, oracle, key_path(where, "oracle"))
    pool_file(task, options["pool"], key_path(where, "tasks"))  # the task must have a pool of that variant
    return f"{ORACLE_DIR}/prompts/{task}/{options_key(options)}.npz"


def _scored_task(task: str, where: str) -> None:
    if task not in SCORED_TASKS:
        raise ConfigError(
            f"{key_path(where, 'tasks')}: {task!r} has no LLM-scored instructions; scored tasks: {list(SCORED_TASKS)}"
        )


def prompt_arms_options(arms: Mapping[str, Any] | None = None, where: str = "") -> dict[str, Any]:
    options = resolve(PROMPT_ARM_OPTIONS, arms, key_path(where, "arms"))
    if options["embedding"] not in ENCODERS and options["embedding_dim"] < 2:
        raise ConfigError(
            f"{key_path(where, 'arms', 'embedding_dim')}: need at least 2, got {options['embedding_dim']}"
        )
    return options


def prompt_arms_path(task: str, arms: Mapping[str, Any] | None = None, where: str = "") -> str:
    _scored_task(task, where)
    return f"{ARMS_DIR}/{task}/{options_key(prompt_arms_options(arms, where))}.npz"


def prompt_embedding_path(task: str, encoder: str) -> str:
    if encoder not in ENCODERS:
        raise ConfigError(f"encoder: {encoder!r} is not a registered sentence encoder: {sorted(ENCODERS)}")
    return f"{EMBEDDING_DIR}/{task}/{encoder}.npz"


def parse_arms_key(key: str) -> dict[str, Any]:
    return prompt_arms_options(parse_key(PROMPT_ARM_OPTIONS, key, f"prompt arms file name {key}"))


def prompt_embedding_raw_paths(task: str) -> dict[str, list[str]]:
    """Raw files holding the instructions of ``task`` that its embedding file embeds: every candidate pool
    of the task, its result logs, its gold instructions."""
    gold = annotation_file(task)
    return {
        "pools": [
            f"{RAW_DIR}/{pool_file(task, v).path}"
            for v in POOL_VARIANTS
            if (POOL_VARIANTS[v], task) in {(variant, t) for variant, t, _ in PROMPT_POOLS}
        ],
        "scores": [f"{RAW_DIR}/{f.path}" for f in score_files(task)],
        "annotations": [f"{RAW_DIR}/{gold.path}"] if gold else [],
    }


def prompt_arms_inputs(task: str, arms: Mapping[str, Any] | None = None) -> dict[str, list[str]]:
    """Files the arms of ``task`` are built from: its result logs, and its encoder embeddings or (TF-IDF)
    its query pool and gold instructions."""
    options = prompt_arms_options(arms)
    raw = prompt_raw_paths(task)
    if options["embedding"] in ENCODERS:
        return {"scores": raw["scores"], "embeddings": [prompt_embedding_path(task, options["embedding"])]}
    return raw


def replay_dataset(options: Mapping[str, Any] | None = None, where: str = "preprocessing") -> str:
    """The registered dataset that the replay options' ``source`` (``sample``, default, or ``full``) reads."""
    source = (options or {}).get("source", "sample")
    if not isinstance(source, str) or source not in REPLAY_SOURCES:
        raise ConfigError(
            f"{key_path(where, 'source')}: {source!r} is not one of {list(REPLAY_SOURCES)}"
            f"{did_you_mean(source, REPLAY_SOURCES)}"
        )
    return REPLAY_SOURCES[source]


def replay_options(options: Mapping[str, Any] | None = None, where: str = "preprocessing") -> dict[str, Any]:
    """The replay options but ``source`` (it picks the folder), defaults filled in."""
    return resolve(REPLAY_OPTIONS, {k: v for k, v in (options or {}).items() if k != "source"}, where)


def replay_path(options: Mapping[str, Any] | None = None, where: str = "preprocessing") -> str:
    return f"{PROCESSED_DIR}/{replay_dataset(options, where)}/{options_key(replay_options(options, where))}.npz"


def replay_raw_paths(dataset: str = REPLAY_DATASET) -> list[str]:
    """The raw files (under ``data/raw``) of a replay dataset: the sample's logged events and item
    table of the random / all campaign, or the full archive."""
    return [f"{RAW_DIR}/{f.path}" for f in get_dataset(dataset).files]


def parse_replay_key(key: str) -> dict[str, Any]:
    return parse_key(REPLAY_OPTIONS, key, "replay preprocessing")


def replay_dataset_of(path: str) -> str | None:
    """The replay dataset whose prepared log ``path`` is (``data/processed/<dataset>/<options>.npz``), or None."""
    parts = path.split("/")
    if parts[:2] == ["data", "processed"] and len(parts) == 4 and parts[2] in REPLAY_SOURCES.values():
        return parts[2]
    return None


def pinned_datasets(path: str) -> list[str]:
    """Registered datasets without a published checksum that the prepared file at ``path`` is built from."""
    dataset = replay_dataset_of(path)
    return [dataset] if dataset is not None and get_dataset(dataset).pinned else []


def raw_paths(dataset: str, options: Mapping[str, Any] | None = None) -> list[str]:
    """Raw files (under ``data/raw``) that preprocessing ``dataset`` with ``options`` reads."""
    opts = preprocess_options(dataset, options)
    if dataset == "digits":  # bundled with scikit-learn: nothing to download
        return []
    if dataset == "mnist":
        names = {"test": ["mnist_test"], "train": ["mnist_train"], "all": ["mnist_train", "mnist_test"]}[opts["split"]]
    else:
        names = [dataset]
    return [f"{RAW_DIR}/{f.path}" for name in names for f in get_dataset(name).files]


def prompt_raw_paths(task: str, oracle: Mapping[str, Any] | None = None) -> dict[str, list[str]]:
    """Raw files the prompt oracle of ``task`` reads: its pool, its result logs, its gold instructions."""
    options = resolve(PROMPT_ORACLE_OPTIONS, oracle, "oracle")
    gold = annotation_file(task)
    return {
        "pool": [f"{RAW_DIR}/{pool_file(task, options['pool']).path}"],
        "scores": [f"{RAW_DIR}/{f.path}" for f in score_files(task)],
        "annotations": [f"{RAW_DIR}/{gold.path}"] if gold else [],
    }


def parse_preprocess_key(dataset: str, key: str) -> dict[str, Any]:
    """Options of a processed file name ``data/processed/<dataset>/<key>.npz``."""
    if dataset not in PREPROCESS_OPTIONS:
        raise ConfigError(f"data/processed/{dataset}: {dataset!r} is not one of {list(CLASSIFICATION_DATASETS)}")
    return parse_key(PREPROCESS_OPTIONS[dataset], key, f"data/processed/{dataset}/{key}")


def parse_classifier_key(key: str) -> dict[str, Any]:
    return parse_key(CLASSIFIER_OPTIONS, key, f"classifier oracle file name {key}")


def parse_prompt_key(key: str) -> dict[str, Any]:
    return parse_key(PROMPT_ORACLE_OPTIONS, key, f"prompt oracle file name {key}")


def buildable(path: str) -> bool:
    """Whether a data rule of the pipeline builds the file at ``path`` (relative to the project, as
    :func:`banditbench.params.data_file_path` gives it): a processed dataset or replay log, a classifier
    or prompt oracle, or the car oracle, named canonically."""
    parts = path.split("/")
    stem = parts[-1].removesuffix(".npz")
    try:
        if replay_dataset_of(path) is not None:
            parse_replay_key(stem)
        elif parts[:2] == ["data", "processed"] and len(parts) == 4:
            parse_preprocess_key(parts[2], stem)
        elif parts[:3] == ["data", "oracles", "classifiers"] and len(parts) == 6:
            parse_preprocess_key(parts[3], parts[4])
            parse_classifier_key(stem)
        elif parts[:3] == ["data", "oracles", "prompts"] and len(parts) == 5:
            prompt_oracle_path(parts[3], parse_prompt_key(stem))
        elif parts[:3] == ["data", "processed", "prompt_arms"] and len(parts) == 5:
            prompt_arms_path(parts[3], parse_arms_key(stem))
        elif parts[:3] == ["data", "processed", "prompt_embeddings"] and len(parts) == 5:
            return parts[3] in SCORED_TASKS and path == prompt_embedding_path(parts[3], stem)
        else:
            return path == CAR_ORACLE
    except ConfigError:
        return False
    return parts[-1].endswith(".npz")
