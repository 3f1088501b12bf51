"""Ground-truth oracles fitted once on real data (a Snakemake rule) and loaded by simulations.

Classifier oracles (:func:`fit_classifier_oracle`)
    A probabilistic classifier on a prepared dataset whose class probabilities
    ``p(k | x)`` serve as smooth utilities where a protocol needs them (Bernoulli
    rewards, BTL preferences).  Quality: accuracy and log-loss on a stratified
    held-out split (``test_fraction``), next to the majority-class accuracy and
    the log-loss of the class prior; the stored probabilities come from a refit
    on all rows.  Models: multinomial ``logistic`` regression (C = 1), an
    ``mlp`` (one hidden layer of 64 ReLU units) or ``hist_gradient_boosting``.

Prompt oracles (:func:`fit_prompt_oracle`), for seed 000 Sec. 5.1
    Each instruction is embedded with TF-IDF (word 1–2-grams, or character
    2–4-grams within word boundaries) followed by truncated SVD to
    ``embedding_dim`` dimensions and scaled to unit norm; the vocabulary and SVD
    are fitted on the task's candidate pool, scored instructions and gold
    instructions.  A regressor (RBF ``kernel_ridge`` or linear ``ridge``, its
    hyper-parameters chosen by 3-fold cross-validation) maps embedding to
    gpt-3.5-turbo execution accuracy, and its prediction, clipped to [0, 1], is
    every pool instruction's ground-truth utility.  Repeated scores of one
    instruction are evaluation noise: the regressor fits each instruction's mean
    score weighted by its number of scores (so no instruction is split between
    training and test folds).  Held-out R^2 and RMSE (count-weighted, on
    instruction means) come from an outer 5-fold cross-validation with the
    hyper-parameter search nested inside; ``repeat_noise_std`` is the pooled
    spread of repeated scores.

Scored instructions (:func:`collect_scores`).  The Federated-APOHF result logs
hold scores in ``prompts_set`` ({instruction: score}), ``best_instruction_over_iter``
([iter, instruction, score]) and ``instruction_select_history`` ([instr, score]
or [instr1, s1, instr2, s2]).  ``prompts_set`` holds raw validation accuracies.
Some runs store the two history fields on another scale (x10 "magnitude",
standardised or max-normalised values), so a history field of a file is kept
only if all its values lie in [0, 1] and, on the instructions it shares with
the task's ``prompts_set`` scores, its median absolute difference from their
mean is at most ``tolerance`` (0.15 by default, about twice the spread of
repeated evaluations); a field with no shared instruction (all of
``orthography_starts_with``) is kept when its values lie in [0, 1].  Unique
(instruction, score) pairs are kept; the same instruction scored differently
is treated as evaluation noise (averaged, see above).
"""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ConfigError
from ..storage.resultio import atomic_write_bytes
from .paths import CLASSIFIER_OPTIONS, PROMPT_ORACLE_OPTIONS, resolve
from .preprocess import Prepared
from .verify import verify_raw

log = logging.getLogger(__name__)


# --- fit-quality tables (oracle files: banditbench.data.files) ---------------------
def write_quality(rows: Sequence[Mapping[str, Any]], csv_path: str | os.PathLike, md_path: str | os.PathLike) -> None:
    """The fit-quality table as CSV and Markdown (numbers to 4 significant digits in Markdown)."""
    import pandas as pd

    frame = pd.DataFrame(list(rows))
    atomic_write_bytes(csv_path, frame.to_csv(index=False).encode())
    cells = [[f"{v:.4g}" if isinstance(v, float) else str(v) for v in row] for row in frame.itertuples(index=False)]
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "|".join("---" for _ in frame.columns) + "|"]
    lines += ["| " + " | ".join(c) + " |" for c in cells]
    atomic_write_bytes(md_path, ("\n".join(lines) + "\n").encode())


# --- classifier oracles --------------------------------------------------------------
def _classifier(model: str, seed: int):
    if model == "logistic":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=1.0, max_iter=2000)
    if model == "mlp":
        from sklearn.neural_network import MLPClassifier

        return MLPClassifier(hidden_layer_sizes=(64,), max_iter=500, random_state=seed)
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(random_state=seed)


def _full_proba(clf, X: np.ndarray, n_classes: int) -> np.ndarray:
    """Class probabilities with one column per class (classes the model never saw get 0)."""
    out = np.zeros((X.shape[0], n_classes))
    out[:, clf.classes_] = clf.predict_proba(X)
    return out


def check_split(n_rows: int, per_side: int, test_fraction: float, prepared: Prepared) -> None:
    """The held-out split of ``test_fraction`` must leave ``per_side`` rows on each side (one per class when
    the split is stratified): the data's own check of ``oracle.test_fraction``, named as the config names it."""
    n_test = math.ceil(test_fraction * n_rows)  # as scikit-learn's train_test_split counts
    if n_test < per_side or n_rows - n_test < per_side:
        unit = f"{per_side} (one per class)" if per_side > 1 else "1"
        raise ConfigError(
            f"oracle.test_fraction: {test_fraction} of the {n_rows} rows of dataset "
            f"{prepared.meta.get('dataset', '?')!r} holds out {n_test} and trains on {n_rows - n_test}; each side "
            f"needs at least {unit}: choose a fraction between {per_side / n_rows:.3g} and "
            f"{(n_rows - per_side) / n_rows:.3g}"
        )


def fit_classifier_oracle(
    prepared: Prepared, options: Mapping[str, Any] | None = None, name: str = ""
) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, Any]]:
    """Fit the classifier oracle; return (arrays, meta, quality row).  Arrays: ``probabilities`` (n, K) float32;
    meta: the dataset, its preprocessing options and the oracle options (what the file is checked against
    when read) and the quality row."""
    from sklearn.metrics import log_loss
    from sklearn.model_selection import train_test_split

    opts = resolve(CLASSIFIER_OPTIONS, options, "oracle")  # 0 < test_fraction < 1 (checked when planned)
    X, y, K = prepared.X, prepared.y, prepared.n_classes
    idx = np.arange(len(y))
    counts = np.bincount(y, minlength=K)
    stratify = y if counts[counts > 0].min() >= 2 else None
    check_split(len(y), int((counts > 0).sum()) if stratify is not None else 1, opts["test_fraction"], prepared)
    train, test = train_test_split(idx, test_size=opts["test_fraction"], random_state=opts["seed"], stratify=stratify)
    clf = _classifier(opts["model"], opts["seed"]).fit(X[train], y[train])
    p_test = np.clip(_full_proba(clf, X[test], K), 1e-12, 1.0)
    prior = np.bincount(y[train], minlength=K) / len(train)
    quality = {
        "oracle": name or f"{prepared.meta.get('dataset', '?')}/{opts['model']}",
        "model": opts["model"],
        "n_train": int(len(train)),
        "n_test": int(len(test)),
        "test_accuracy": float((p_test.argmax(1) == y[test]).mean()),
        "test_log_loss": float(log_loss(y[test], p_test / p_test.sum(1, keepdims=True), labels=np.arange(K))),
        "majority_accuracy": float((y[test] == prior.argmax()).mean()),
        "prior_log_loss": float(
            log_loss(y[test], np.tile(np.clip(prior, 1e-12, 1), (len(test), 1)), labels=np.arange(K))
        ),
    }
    full = _classifier(opts["model"], opts["seed"]).fit(X, y)
    arrays = {"probabilities": _full_proba(full, X, K).astype(np.float32)}
    meta = {
        "dataset": prepared.meta.get("dataset"),
        "preprocessing": prepared.meta.get("options"),
        "options": opts,
        "quality": quality,
    }
    return arrays, meta, quality


# --- prompt oracles ----------------------------------------------------------------------
def _history_rows(result: Mapping[str, Any]) -> dict[str, list[tuple[str, float]]]:
    best = result.get("best_instruction_over_iter", [])
    history = result.get("instruction_select_history", [])
    return {
        "best_instruction_over_iter": [(str(it[1]), float(it[2])) for it in best],
        "instruction_select_history": [(str(h[k]), float(h[k + 1])) for h in history for k in range(0, len(h) - 1, 2)],
    }


def collect_scores(
    result_paths: Sequence[str | os.PathLike], task: str, tolerance: float = 0.15
) -> tuple[list[tuple[str, float]], dict[str, int]]:
    """Unique (instruction, accuracy) pairs of ``task`` from Federated-APOHF result logs (module docstring)."""
    results = []
    for path in result_paths:
        result = json.loads(Path(path).read_text())
        if result.get("task") != task:
            raise ConfigError(f"{path}: result log of task {result.get('task')!r}, expected {task!r}")
        results.append(result)
    pairs: set[tuple[str, float]] = set()
    for result in results:
        pairs.update((str(i), float(s)) for i, s in result.get("prompts_set", {}).items())
    reference: dict[str, list[float]] = {}
    for instruction, score in pairs:
        reference.setdefault(instruction, []).append(score)
    ref_mean = {k: float(np.mean(v)) for k, v in reference.items()}
    stats = {
        "files": len(results),
        "prompts_set_pairs": len(pairs),
        "history_fields_kept": 0,
        "history_fields_dropped": 0,
    }
    for result in results:
        for rows in _history_rows(result).values():
            if not rows:
                continue
            scores = np.array([s for _, s in rows])
            shared = [abs(s - ref_mean[i]) for i, s in rows if i in ref_mean]
            ok = bool(np.all((scores >= 0) & (scores <= 1))) and (not shared or float(np.median(shared)) <= tolerance)
            stats["history_fields_kept" if ok else "history_fields_dropped"] += 1
            if ok:
                pairs.update(rows)
    return sorted(pairs), stats


def _embedder(method: str, dim: int, seed: int):
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    if method == "tfidf_word_svd":
        tfidf = TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True)
    else:
        tfidf = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True)
    return make_pipeline(tfidf, TruncatedSVD(n_components=dim, random_state=seed))


def fit_embedder(method: str, dim: int, seed: int, texts: Sequence[str], where: str, task: str):
    """:func:`_embedder` fitted on ``texts``; its SVD cannot keep more dimensions than the TF-IDF has
    features, which only the texts tell: a :class:`ConfigError` naming ``<where>.embedding_dim`` says so."""
    embedder = _embedder(method, dim, seed)
    tfidf, svd = (step for _, step in embedder.steps)
    features = tfidf.fit_transform(texts)
    if dim > features.shape[1]:
        raise ConfigError(
            f"{where}.embedding_dim: {dim} exceeds the {features.shape[1]} {method} features of the "
            f"instructions of task {task!r}; choose at most {features.shape[1]}"
        )
    svd.fit(features)  # the two steps of Pipeline.fit, one at a time
    return embedder


def _unit_rows(E: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(E, axis=1, keepdims=True)
    return E / np.where(norms > 0, norms, 1.0)


def _regressor_search(name: str, n_rows: int, seed: int):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV, KFold

    if name == "kernel_ridge":
        est, grid = KernelRidge(kernel="rbf"), {"alpha": [0.01, 0.1, 1.0], "gamma": [0.03125, 0.125, 0.5, 2.0]}
    else:
        est, grid = Ridge(), {"alpha": [0.01, 0.1, 1.0, 10.0]}
    return GridSearchCV(est, grid, cv=KFold(n_splits=min(3, n_rows), shuffle=True, random_state=seed), scoring="r2")


def fit_prompt_oracle(
    task: str,
    pool_path: str | os.PathLike,
    result_paths: Sequence[str | os.PathLike],
    annotation_path: str | os.PathLike | None = None,
    options: Mapping[str, Any] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, Any]]:
    """Fit the prompt oracle of ``task``; return (arrays, meta, quality row).

    Arrays: ``instructions`` (K,), ``features`` (K, embedding_dim) unit-norm
    embeddings (the arm features), ``utility`` (K,) predicted accuracy in [0, 1].
    """
    from sklearn.metrics import mean_squared_error, r2_score
    from sklearn.model_selection import KFold

    opts = resolve(PROMPT_ORACLE_OPTIONS, options, "oracle")  # embedding_dim >= 2 (checked when planned)
    for path in [pool_path, *result_paths, *([annotation_path] if annotation_path else [])]:
        verify_raw(path)
    pool = [str(s) for s in json.loads(Path(pool_path).read_text())["instructions"]]
    gold = [str(s) for s in json.loads(Path(annotation_path).read_text())["annotations"]] if annotation_path else []
    pairs, stats = collect_scores(result_paths, task, opts["tolerance"])
    # repeated scores of one instruction are evaluation noise: fit the mean, weighted by the count
    texts = np.array([i for i, _ in pairs])
    unique, inverse, counts = np.unique(texts, return_inverse=True, return_counts=True)
    scores = np.array([s for _, s in pairs])
    y = np.bincount(inverse, weights=scores) / counts
    noise_var = np.bincount(inverse, weights=(scores - y[inverse]) ** 2).sum() / max(len(scores) - len(unique), 1)
    unique = [str(u) for u in unique]
    if len(unique) < 10:
        raise ConfigError(f"tasks: task {task!r} has only {len(unique)} scored instructions; need at least 10")
    embed = fit_embedder(opts["embedding"], opts["embedding_dim"], opts["seed"], pool + unique + gold, "oracle", task)
    E = _unit_rows(embed.transform(unique))
    # held-out quality: outer 5-fold CV over instructions, hyper-parameter search nested inside
    pred = np.empty_like(y)
    for train, test in KFold(n_splits=5, shuffle=True, random_state=opts["seed"]).split(E):
        search = _regressor_search(opts["regressor"], len(train), opts["seed"])
        pred[test] = search.fit(E[train], y[train], sample_weight=counts[train]).predict(E[test])
    final = _regressor_search(opts["regressor"], len(y), opts["seed"]).fit(E, y, sample_weight=counts)
    features = _unit_rows(embed.transform(pool))
    utility = np.clip(final.predict(features), 0.0, 1.0)
    gold_utility = np.clip(final.predict(_unit_rows(embed.transform(gold))), 0.0, 1.0) if gold else np.zeros(0)
    in_pool = np.isin(pool, unique)
    quality = {
        "task": task,
        "regressor": opts["regressor"],
        "embedding": opts["embedding"],
        "embedding_dim": opts["embedding_dim"],
        "n_scores": int(len(scores)),
        "n_instructions": len(unique),
        "cv_r2": float(r2_score(y, pred, sample_weight=counts)),
        "cv_rmse": float(np.sqrt(mean_squared_error(y, pred, sample_weight=counts))),
        "score_mean": float(scores.mean()),
        "score_std": float(scores.std()),
        "repeat_noise_std": float(np.sqrt(noise_var)),
        "pool_scored_fraction": float(in_pool.mean()),
        "utility_min": float(utility.min()),
        "utility_mean": float(utility.mean()),
        "utility_max": float(utility.max()),
        "gold_utility_mean": float(gold_utility.mean()) if gold else float("nan"),
    }
    meta = {"task": task, "options": opts, "best_params": final.best_params_, "score_stats": stats, "quality": quality}
    arrays = {"instructions": np.array(pool), "features": features, "utility": utility}
    return arrays, meta, quality
