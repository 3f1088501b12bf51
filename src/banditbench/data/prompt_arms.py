"""Arms of the measured-reward prompt environment: scored instructions with their measured accuracy.

Two prepared files per task (Snakemake rules of ``workflow/rules/preprocess.smk``):

``data/processed/prompt_embeddings/<task>/<encoder>.npz`` (:func:`build_embeddings`)
    Every instruction of the task — its candidate pools, every instruction in its
    result logs, its gold instructions — embedded once by a pretrained sentence
    encoder (:mod:`.encoder`).  Arrays ``texts``, ``features`` (float32, unit
    norm); the meta holds the encoder's identity (model, revision, the sha256 of
    its files, pooling, versions) and the sha256 of the embedded texts.

``data/processed/prompt_arms/<task>/<arm options>.npz`` (:func:`build_arms`)
    The arms: the task's scored instructions (the registered result logs,
    scale-checked by :func:`banditbench.data.oracles.collect_scores`: the
    derived JSONL of the mirror holds the same triples plus history fields on
    other scales, x10 or standardised, which are dropped), each rewarded by its
    measured gpt-3.5-turbo execution accuracy.

Duplicates.  The logs repeat evaluations: the same (instruction, score) pair in
several logs or fields is one measurement (``collect_scores`` keeps unique
pairs).  An instruction scored differently is measured several times; its
accuracy is the mean of its distinct scores.  With ``duplicates: whitespace``
(default) instructions equal up to whitespace (leading / trailing spaces, line
breaks, repeated spaces: 56 of auto_categorization's 540 logged strings, 86 of
larger_animal's 533) are one arm — the encoder's tokenizer splits on whitespace,
so they would be arms with the same features and different rewards — whose
measurements are pooled; its text is the first variant in sorted order.
``duplicates: exact`` keeps every distinct string.  At most ``max_arms`` arms,
a uniform sample without replacement drawn with ``arm_seed`` when a task has
more (none of the six does after merging; the seed is recorded either way).

Features: the encoder's embeddings of the arms' texts, or (``tfidf_word_svd``,
``tfidf_char_svd``) the prompt oracle's TF-IDF + truncated SVD to
``embedding_dim``, fitted on the query pool, the scored instructions and the gold
instructions, unit norm.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ConfigError
from .paths import PROMPT_ARM_OPTIONS, resolve
from .catalog import ENCODERS
from .verify import verify_raw


def normalise(text: str) -> str:
    """The key of ``duplicates: whitespace``: runs of whitespace become one space, none at either end."""
    return " ".join(text.split())


def measured_arms(
    pairs: Sequence[tuple[str, float]], duplicates: str = "whitespace", max_arms: int = 500, arm_seed: int = 0
) -> dict[str, np.ndarray]:
    """Arms from unique (instruction, score) pairs: ``instructions``, ``accuracy`` (mean of the arm's
    distinct measurements), ``n_scores`` (how many), ``spread`` (their standard deviation), sorted by text
    (module docstring)."""
    if duplicates not in ("whitespace", "exact"):
        raise ConfigError(f"arms.duplicates: {duplicates!r} is not one of ['whitespace', 'exact']")
    groups: dict[str, list[tuple[str, float]]] = {}
    for text, score in sorted(set((str(t), float(s)) for t, s in pairs)):
        groups.setdefault(normalise(text) if duplicates == "whitespace" else text, []).append((text, score))
    keys = sorted(groups)
    if len(keys) > max_arms:
        chosen = np.sort(np.random.default_rng(arm_seed).choice(len(keys), size=max_arms, replace=False))
        keys = [keys[i] for i in chosen]
    scores = [np.array([s for _, s in groups[k]]) for k in keys]
    return {
        "instructions": np.array([groups[k][0][0] for k in keys]),
        "accuracy": np.array([s.mean() for s in scores]),
        "n_scores": np.array([len(s) for s in scores]),
        "spread": np.array([s.std() for s in scores]),
    }


def logged_instructions(result_paths: Sequence[str | os.PathLike]) -> list[str]:
    """Every instruction string in the result logs (any field, any scale)."""
    from .oracles import _history_rows

    found: set[str] = set()
    for path in result_paths:
        result = json.loads(Path(path).read_text())
        found.update(str(i) for i in result.get("prompts_set", {}))
        for rows in _history_rows(result).values():
            found.update(text for text, _ in rows)
    return sorted(found)


def _instructions(path: str | os.PathLike, key: str) -> list[str]:
    return [str(s) for s in json.loads(Path(path).read_text())[key]]


def texts_sha256(texts: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps(list(texts)).encode()).hexdigest()


def build_embeddings(
    task: str,
    pool_paths: Sequence[str | os.PathLike],
    result_paths: Sequence[str | os.PathLike],
    annotation_paths: Sequence[str | os.PathLike] = (),
    encoder: str = "all-MiniLM-L6-v2",
    threads: int = 1,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Embed every instruction of ``task`` once; return (arrays, meta) of its embedding file."""
    from .encoder import embed

    for path in [*pool_paths, *result_paths, *annotation_paths]:
        verify_raw(path)
    texts = set(logged_instructions(result_paths))
    for path in pool_paths:
        texts.update(_instructions(path, "instructions"))
    for path in annotation_paths:
        texts.update(_instructions(path, "annotations"))
    texts = sorted(texts)
    features, identity = embed(texts, encoder, threads=threads)
    meta = {"task": task, "encoder": identity, "n_texts": len(texts), "texts_sha256": texts_sha256(texts)}
    return {"texts": np.array(texts), "features": features}, meta


def build_arms(
    task: str,
    result_paths: Sequence[str | os.PathLike],
    options: Mapping[str, Any] | None = None,
    embedding_path: str | os.PathLike | None = None,
    pool_path: str | os.PathLike | None = None,
    annotation_path: str | os.PathLike | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arms file of ``task``: (arrays, meta).  Arrays ``instructions``, ``features``, ``accuracy``,
    ``n_scores``, ``spread``; the meta holds the options, the embedding's identity and the score statistics."""
    from .files import load_npz, rebuild_advice
    from .oracles import collect_scores
    from .paths import prompt_arms_options

    opts = prompt_arms_options(options)
    for path in result_paths:
        verify_raw(path)
    pairs, stats = collect_scores(result_paths, task, opts["tolerance"])
    arms = measured_arms(pairs, opts["duplicates"], opts["max_arms"], opts["arm_seed"])
    texts = [str(t) for t in arms["instructions"]]
    if opts["embedding"] in ENCODERS:
        if embedding_path is None:
            raise ConfigError(f"prompt arms of {task!r}: the {opts['embedding']} embedding needs its embedding file")
        emb, emb_meta = load_npz(
            embedding_path, "prompt embeddings", required=("texts", "features"), expect={"task": task}
        )
        if emb_meta.get("encoder", {}).get("encoder") != opts["embedding"]:
            raise ConfigError(f"{embedding_path}: embeddings of {emb_meta.get('encoder')}, not {opts['embedding']}")
        row = {str(t): i for i, t in enumerate(emb["texts"])}
        absent = [t for t in texts if t not in row]
        if absent:
            raise ConfigError(
                f"{embedding_path}: {len(absent)} scored instruction(s) of {task!r} are not embedded "
                f"(e.g. {absent[0]!r}); {rebuild_advice(embedding_path, 'prompt embeddings file')}"
            )
        features = emb["features"][[row[t] for t in texts]].astype(np.float64)
        embedding = {"encoder": emb_meta["encoder"], "file_texts_sha256": emb_meta["texts_sha256"]}
    else:
        from .oracles import _unit_rows, fit_embedder

        if pool_path is None:
            raise ConfigError(f"prompt arms of {task!r}: the {opts['embedding']} embedding needs the query pool")
        for path in [pool_path, *([annotation_path] if annotation_path else [])]:
            verify_raw(path)
        fit_texts = _instructions(pool_path, "instructions") + texts
        fit_texts += _instructions(annotation_path, "annotations") if annotation_path else []
        model = fit_embedder(opts["embedding"], opts["embedding_dim"], opts["seed"], fit_texts, "arms", task)
        features = _unit_rows(model.transform(texts))
        embedding = {"method": opts["embedding"], "dim": opts["embedding_dim"]}
    accuracy = arms["accuracy"]
    quality = {
        "task": task,
        "embedding": opts["embedding"],
        "n_scores": int(len(pairs)),
        "n_arms": len(texts),
        "accuracy_min": float(accuracy.min()),
        "accuracy_mean": float(accuracy.mean()),
        "accuracy_max": float(accuracy.max()),
        "gap": float(accuracy.max() - accuracy.mean()),
        "repeated_fraction": float(np.mean(arms["n_scores"] > 1)),
    }
    meta = {
        "task": task,
        "options": resolve(PROMPT_ARM_OPTIONS, opts, "arms"),
        "embedding": embedding,
        "score_stats": stats,
        "quality": quality,
    }
    return {**arms, "features": features}, meta
