"""Logged bandit data for replay: the Open Bandit Dataset as seed 002 App. J.1 prepares it.

Each logged event of the random / all campaign becomes a reduced action set of ``K``
candidates — the logged item first, then the ``K - 1`` other items with the highest
user–item affinity — with one feature vector per candidate, and the logged click.
The feature vector of (event, item) concatenates, in this order (App. J.1):

* the user embedding (``user_dim``, default 16): the event's four categorical user
  features one-hot encoded and compressed by truncated SVD;
* the item embedding (``item_dim``, default 8): the item's categorical features of
  ``item_context.csv`` one-hot encoded, with its numeric feature, compressed the same way;
* the display position of the event, scaled to [-1, 1];
* the log-affinity ``log(1 + a)`` of the (user, item) pair, scaled to [-1, 1] over the data;
* the interaction: the user embedding times the scaled log-affinity.

Choices the appendix leaves open: truncated SVD without centring (as scikit-learn's
``TruncatedSVD``), computed exactly from the eigendecomposition of ``X^T X`` with the sign
of each component fixed (largest entry positive); the item's numeric feature joins its
one-hot columns before the SVD; ties in affinity are broken uniformly at random
(``seed``).  In the 10,000-event sample 99.9 % of the affinities are 0, so the four
alternatives are in effect drawn uniformly from the other 79 items.

Arrays of the prepared file (:mod:`banditbench.data.files`): ``features`` (events x K x
dim, float32), ``items`` (events x K, logged item in column 0), ``click`` (events,).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..errors import ConfigError
from .paths import RAW_DIR, replay_options, replay_raw_paths
from .verify import verify_raw


def truncated_svd(X: np.ndarray, k: int) -> np.ndarray:
    """Scores ``X V_k`` on the top-k right singular vectors of X (uncentred), signs fixed."""
    if k > X.shape[1]:
        raise ConfigError(f"preprocessing: cannot compress {X.shape[1]} columns to {k} SVD components")
    evals, evecs = np.linalg.eigh(X.T @ X)
    V = evecs[:, ::-1][:, :k]
    V = V * np.where(V[np.abs(V).argmax(axis=0), np.arange(k)] < 0, -1.0, 1.0)
    return X @ V


def one_hot(columns: np.ndarray) -> np.ndarray:
    """One 0/1 column per (column, category), categories in sorted order."""
    blocks = []
    for j in range(columns.shape[1]):
        _, codes = np.unique(columns[:, j], return_inverse=True)
        blocks.append(np.eye(codes.max() + 1)[codes])
    return np.hstack(blocks)


def scale_unit(x: np.ndarray) -> np.ndarray:
    """Min-max to [-1, 1] over all entries (a constant array becomes 0)."""
    lo, hi = float(x.min()), float(x.max())
    return np.zeros_like(x, dtype=np.float64) if hi == lo else 2.0 * (x - lo) / (hi - lo) - 1.0


def prepare_obd(options: Mapping[str, Any] | None = None, raw_dir: str | os.PathLike = RAW_DIR
                ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read the random / all campaign from ``raw_dir`` and build the replay arrays (module docstring)."""
    import pandas as pd

    opts = replay_options(options)
    files = [Path(raw_dir) / Path(p).relative_to(RAW_DIR) for p in replay_raw_paths()]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise ConfigError(f"dataset 'obd_random_all': raw file(s) {missing} missing; fetch them first "
                          f"(banditbench.data.fetch or the Snakemake download rules)")
    for f in files:
        verify_raw(f)                                   # the registered bytes, or a CorruptFileError
    log = pd.read_csv(files[0], index_col=0)
    item_table = pd.read_csv(files[1], index_col=0).sort_values("item_id")
    n_items = len(item_table)
    K = opts["n_actions"]
    if not 2 <= K <= n_items:
        raise ConfigError(f"preprocessing.n_actions: need 2 <= K <= {n_items} items, got {K}")
    user_cols = [c for c in log.columns if c.startswith("user_feature_")]
    affinity = log[[f"user-item_affinity_{j}" for j in range(n_items)]].to_numpy(dtype=np.float64)
    logged = log["item_id"].to_numpy(dtype=np.int64)
    n = len(log)

    rng = np.random.default_rng(opts["seed"])
    others = affinity.copy()
    others[np.arange(n), logged] = -np.inf                               # the logged item is not an alternative
    order = np.lexsort((rng.random((n, n_items)), -others), axis=1)      # highest affinity first, ties at random
    items = np.concatenate([logged[:, None], order[:, : K - 1]], axis=1)

    users = truncated_svd(one_hot(log[user_cols].astype(str).to_numpy()), opts["user_dim"])
    item_num = [c for c in item_table.columns
                if c.startswith("item_feature_") and pd.api.types.is_numeric_dtype(item_table[c])]
    item_cat = [c for c in item_table.columns if c.startswith("item_feature_") and c not in item_num]
    item_matrix = np.hstack([one_hot(item_table[item_cat].astype(str).to_numpy()),
                             item_table[item_num].to_numpy(dtype=np.float64)])
    item_emb = truncated_svd(item_matrix, opts["item_dim"])
    position = scale_unit(log["position"].to_numpy(dtype=np.float64))
    log_aff = scale_unit(np.log1p(affinity))[np.arange(n)[:, None], items]      # (n, K)

    U = np.broadcast_to(users[:, None, :], (n, K, users.shape[1]))
    features = np.concatenate([U, item_emb[items], np.broadcast_to(position[:, None, None], (n, K, 1)),
                               log_aff[..., None], U * log_aff[..., None]], axis=2).astype(np.float32)
    click = log["click"].to_numpy(dtype=np.int64)
    meta = {"dataset": "obd_random_all", "options": opts, "n_events": n, "n_items": n_items,
            "feature_dim": int(features.shape[2]), "click_rate": float(click.mean()),
            "nonzero_affinity_fraction": float((affinity > 0).mean()),
            "layout": {"user": opts["user_dim"], "item": opts["item_dim"], "position": 1, "log_affinity": 1,
                       "interaction": opts["user_dim"]}}
    return {"features": features, "items": items, "click": click}, meta
