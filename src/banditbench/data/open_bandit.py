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

Sources (the replay option ``source``): ``sample`` reads the 10,000-event sample of obp
(dataset ``obd_random_all``: ``all.csv`` and ``item_context.csv``); ``full`` reads the same
two tables of the random / all campaign straight from the members ``.../random/all/all.csv``
and ``.../random/all/item_context.csv`` of ZOZO's archive (dataset ``obd_full``, checked
against the checksum pinned in the config), without extracting it.  Both go through the
same code, so the same bytes give the same arrays.

The log is read twice in chunks of :data:`CHUNK_ROWS` events (the result does not depend on
the chunk size): a first pass collects what the features need over the whole log (the
user-feature categories and their co-occurrence counts, whose Gram matrix gives the SVD
exactly, and the ranges of position and log-affinity), the second builds the action sets
and features chunk by chunk into the output arrays.  Peak memory is therefore about the
output (events x K x dim float32: 1.15 GB for the 1.37 M events of the full random / all
campaign with the defaults) plus one chunk's work (a few hundred MB), and twice the output
while the prepared file is written (measured: 2.6 GiB for 1.37 M events,
docs/papers/seed-002-neural-logistic.md).

Arrays of the prepared file (:mod:`banditbench.data.files`): ``features`` (events x K x
dim, float32), ``items`` (events x K, logged item in column 0), ``click`` (events,).
"""

from __future__ import annotations

import os
import zipfile
from contextlib import ExitStack
from pathlib import Path, PurePosixPath
from typing import IO, Any, Callable, Mapping, NamedTuple

import numpy as np

from ..errors import ConfigError
from .paths import RAW_DIR, replay_dataset, replay_options, replay_raw_paths
from .verify import verify_raw

#: events read and processed at a time (bounds the working memory; the arrays do not depend on it)
CHUNK_ROWS = 100_000
#: the members of the full archive that preprocessing reads (the random / all campaign)
ARCHIVE_MEMBERS = ("random/all/all.csv", "random/all/item_context.csv")


def svd_basis(gram: np.ndarray, k: int, key: str = "preprocessing") -> np.ndarray:
    """The top-k right singular vectors of X (uncentred) from ``gram = X^T X``, signs fixed
    (largest entry positive); ``key``: the option that asks for ``k`` (for the message)."""
    if k > gram.shape[0]:
        raise ConfigError(
            f"{key}: {k} SVD components asked of {gram.shape[0]} feature columns; choose at most {gram.shape[0]}"
        )
    evals, evecs = np.linalg.eigh(gram)
    V = evecs[:, ::-1][:, :k]
    return V * np.where(V[np.abs(V).argmax(axis=0), np.arange(k)] < 0, -1.0, 1.0)


def truncated_svd(X: np.ndarray, k: int, key: str = "preprocessing") -> np.ndarray:
    """Scores ``X V_k`` on the top-k right singular vectors of X (uncentred), signs fixed."""
    return X @ svd_basis(X.T @ X, k, key)


def one_hot(columns: np.ndarray, categories: list[np.ndarray] | None = None) -> np.ndarray:
    """One 0/1 column per (column, category), categories in sorted order (``categories``: those of
    each column, sorted, when the rows are only part of the data)."""
    blocks = []
    for j in range(columns.shape[1]):
        if categories is None:
            cats, codes = np.unique(columns[:, j], return_inverse=True)
        else:
            cats = categories[j]
            codes = np.searchsorted(cats, columns[:, j])
        blocks.append(np.eye(len(cats))[codes])
    return np.hstack(blocks)


def scale_unit(x: np.ndarray, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    """Min-max to [-1, 1] over all entries, or over the range ``[lo, hi]`` of the whole data when
    ``x`` is a part of it (a constant array becomes 0)."""
    lo = float(x.min()) if lo is None else lo
    hi = float(x.max()) if hi is None else hi
    return np.zeros_like(x, dtype=np.float64) if hi == lo else 2.0 * (x - lo) / (hi - lo) - 1.0


def _member(archive: zipfile.ZipFile, suffix: str, where: Path) -> str:
    """The one member of the archive whose path ends with ``suffix`` (any root folder)."""
    want = PurePosixPath(suffix).parts
    found = [n for n in archive.namelist() if PurePosixPath(n).parts[-len(want) :] == want]
    if len(found) != 1:
        names = archive.namelist()
        raise ConfigError(
            f"dataset 'obd_full': {where} has {len(found)} members ending in {suffix} ({found}); "
            f"need exactly one (the archive's layout <root>/random/all/...); its first members: "
            f"{names[:12]}"
        )
    return found[0]


def _tables(
    dataset: str, raw_dir: str | os.PathLike, checksums: Mapping[str, str] | None, stack: ExitStack
) -> tuple[Callable[[], IO[bytes]], Callable[[], IO[bytes]]]:
    """Openers of the logged events and of the item table of ``dataset``, its raw files verified."""
    files = [Path(raw_dir) / Path(p).relative_to(RAW_DIR) for p in replay_raw_paths(dataset)]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise ConfigError(
            f"dataset {dataset!r}: raw file(s) {missing} missing; fetch them first "
            f"(banditbench.data.fetch or the Snakemake download rules)"
        )
    for f in files:
        verify_raw(f, checksums=checksums)  # the registered (or pinned) bytes, or an error
    if [f.suffix for f in files] == [".zip"]:  # the full archive: its random / all members
        archive = stack.enter_context(zipfile.ZipFile(files[0]))
        log_member, item_member = (_member(archive, m, files[0]) for m in ARCHIVE_MEMBERS)
        return (
            lambda: stack.enter_context(archive.open(log_member)),
            lambda: stack.enter_context(archive.open(item_member)),
        )
    log_file, item_file = files  # the sample: all.csv, item_context.csv
    return (lambda: stack.enter_context(open(log_file, "rb")), lambda: stack.enter_context(open(item_file, "rb")))


def _chunks(open_log: Callable[[], IO[bytes]], user_cols: list[str], chunk_rows: int):
    import pandas as pd

    return pd.read_csv(open_log(), index_col=0, chunksize=chunk_rows, dtype={c: str for c in user_cols})


def _log_columns(open_log: Callable[[], IO[bytes]], n_items: int, dataset: str) -> tuple[list[str], list[str]]:
    """The log's user-feature columns and its affinity columns (one per item); a column the features need and
    the log lacks is an error."""
    import pandas as pd

    header = pd.read_csv(open_log(), index_col=0, nrows=0).columns
    user_cols = [c for c in header if c.startswith("user_feature_")]
    aff_cols = [f"user-item_affinity_{j}" for j in range(n_items)]
    absent = sorted({"item_id", "position", "click", *aff_cols} - set(header))
    if absent:
        raise ConfigError(f"dataset {dataset!r}: the logged events lack the column(s) {absent[:5]}")
    return user_cols, aff_cols


class _LogScan(NamedTuple):
    """What the first pass over the log collects for the features."""

    n: int  #: events
    nonzero: int  #: non-zero affinities
    counts: Any  #: events per user-feature combination (a pandas Series indexed by the combination)
    lo_aff: float  #: the range of the log-affinities
    hi_aff: float
    lo_pos: float  #: the range of the display positions
    hi_pos: float


def _scan_log(
    open_log: Callable[[], IO[bytes]], user_cols: list[str], aff_cols: list[str], chunk_rows: int, dataset: str
) -> _LogScan:
    """Pass 1: size, user-feature combinations with their counts, ranges of position and log-affinity."""
    import pandas as pd

    n, nonzero, combos = 0, 0, []
    lo_aff, hi_aff, lo_pos, hi_pos = np.inf, -np.inf, np.inf, -np.inf
    for chunk in _chunks(open_log, user_cols, chunk_rows):
        n += len(chunk)
        combos.append(chunk[user_cols].astype(str).value_counts())
        affinity = chunk[aff_cols].to_numpy(dtype=np.float64)
        nonzero += int((affinity > 0).sum())
        log_affinity = np.log1p(affinity)
        lo_aff, hi_aff = min(lo_aff, float(log_affinity.min())), max(hi_aff, float(log_affinity.max()))
        position = chunk["position"].to_numpy(dtype=np.float64)
        lo_pos, hi_pos = min(lo_pos, float(position.min())), max(hi_pos, float(position.max()))
    if n == 0:
        raise ConfigError(f"dataset {dataset!r}: the log of the random / all campaign has no events")
    counts = pd.concat(combos).groupby(level=list(range(len(user_cols)))).sum()
    return _LogScan(n, nonzero, counts, lo_aff, hi_aff, lo_pos, hi_pos)


def _user_basis(counts, n_user_cols: int, user_dim: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The categories of each user feature and the SVD basis of the user embedding, from the combinations'
    counts (their weighted Gram matrix is X^T X of the one-hot events)."""
    unique_users = np.array(counts.index.to_list(), dtype=object).reshape(len(counts), n_user_cols)
    categories = [np.unique(unique_users[:, j]) for j in range(n_user_cols)]
    X = one_hot(unique_users, categories)
    V_user = svd_basis(
        X.T @ (counts.to_numpy(dtype=np.float64)[:, None] * X), user_dim, "preprocessing.user_dim"
    )  # = X^T X
    return categories, V_user


def _item_embedding(item_table, item_dim: int) -> np.ndarray:
    """Each item's embedding: its categorical features one-hot, with its numeric ones, compressed by SVD."""
    import pandas as pd

    item_num = [
        c for c in item_table.columns if c.startswith("item_feature_") and pd.api.types.is_numeric_dtype(item_table[c])
    ]
    item_cat = [c for c in item_table.columns if c.startswith("item_feature_") and c not in item_num]
    item_matrix = np.hstack(
        [one_hot(item_table[item_cat].astype(str).to_numpy()), item_table[item_num].to_numpy(dtype=np.float64)]
    )
    return truncated_svd(item_matrix, item_dim, "preprocessing.item_dim")


def prepare_obd(
    options: Mapping[str, Any] | None = None,
    raw_dir: str | os.PathLike = RAW_DIR,
    checksums: Mapping[str, str] | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read the random / all campaign of the ``source`` the options name from ``raw_dir`` and build the
    replay arrays (module docstring); ``checksums``: the config's ``dataset_checksums`` (the full archive's)."""
    import pandas as pd

    dataset = replay_dataset(options)
    opts = replay_options(options)
    with ExitStack() as stack:
        open_log, open_items = _tables(dataset, raw_dir, checksums, stack)
        item_table = pd.read_csv(open_items(), index_col=0).sort_values("item_id")
        n_items = len(item_table)
        K = opts["n_actions"]
        if K > n_items:  # K >= 2: checked when planned
            raise ConfigError(
                f"preprocessing.n_actions: {K} candidates per event, but the log of dataset {dataset!r} has "
                f"{n_items} items; choose at most {n_items}"
            )
        user_cols, aff_cols = _log_columns(open_log, n_items, dataset)
        scan = _scan_log(open_log, user_cols, aff_cols, chunk_rows, dataset)  # pass 1
        categories, V_user = _user_basis(scan.counts, len(user_cols), opts["user_dim"])
        item_emb = _item_embedding(item_table, opts["item_dim"])

        # pass 2: action sets and features, chunk by chunk
        dim = 2 * opts["user_dim"] + opts["item_dim"] + 2
        n = scan.n
        features = np.empty((n, K, dim), dtype=np.float32)
        items = np.empty((n, K), dtype=np.int64)
        click = np.empty(n, dtype=np.int64)
        rng = np.random.default_rng(opts["seed"])
        start = 0
        for chunk in _chunks(open_log, user_cols, chunk_rows):
            m = len(chunk)
            rows = np.arange(m)
            affinity = chunk[aff_cols].to_numpy(dtype=np.float64)
            logged = chunk["item_id"].to_numpy(dtype=np.int64)
            others = affinity.copy()
            others[rows, logged] = -np.inf  # the logged item is not an alternative
            order = np.lexsort((rng.random((m, n_items)), -others), axis=1)  # highest affinity first, ties at random
            chunk_items = np.concatenate([logged[:, None], order[:, : K - 1]], axis=1)
            users = one_hot(chunk[user_cols].astype(str).to_numpy(), categories) @ V_user
            position = scale_unit(chunk["position"].to_numpy(dtype=np.float64), scan.lo_pos, scan.hi_pos)
            log_aff = scale_unit(np.log1p(affinity), scan.lo_aff, scan.hi_aff)[rows[:, None], chunk_items]  # (m, K)
            U = np.broadcast_to(users[:, None, :], (m, K, users.shape[1]))
            features[start : start + m] = np.concatenate(
                [
                    U,
                    item_emb[chunk_items],
                    np.broadcast_to(position[:, None, None], (m, K, 1)),
                    log_aff[..., None],
                    U * log_aff[..., None],
                ],
                axis=2,
            )
            items[start : start + m] = chunk_items
            click[start : start + m] = chunk["click"].to_numpy(dtype=np.int64)
            start += m
    meta = {
        "dataset": dataset,
        "options": opts,
        "n_events": n,
        "n_items": n_items,
        "feature_dim": dim,
        "click_rate": float(click.mean()),
        "nonzero_affinity_fraction": scan.nonzero / (n * n_items),
        "layout": {
            "user": opts["user_dim"],
            "item": opts["item_dim"],
            "position": 1,
            "log_affinity": 1,
            "interaction": opts["user_dim"],
        },
    }
    return {"features": features, "items": items, "click": click}, meta
