"""Preprocessing of the classification datasets (seed 002 App. A and J, seed 001 App. E.1.2).

Every dataset becomes ``X`` (n x d, float32, every feature in [-1, 1]), labels
``y`` in ``0..K-1`` and the class names.  The choices, all options in
:data:`banditbench.data.paths.PREPROCESS_OPTIONS`:

* ``scaling``: ``feature`` (default) maps every feature (column) to [-1, 1] by
  ``2 (x_j - min_j) / (max_j - min_j) - 1`` with min / max over the whole dataset;
  ``sample`` applies the same map within each feature vector, with min / max
  over its components — the literal reading of App. A's
  ``2([x]_j - min(x)) / (max(x) - min(x)) - 1``.  A constant column (or row)
  carries no information and is set to 0.
* categorical attributes (mushroom, car): ``categorical: random`` follows App. A
  ("we assign each character a random value in [-1, 1]"): every category of an
  attribute gets a value drawn U(-1, 1) from ``encoding_seed`` (one draw per
  attribute and category, categories in sorted order; the missing-value mark
  ``?`` of mushroom's stalk-root is a category of its own); ``onehot`` gives one
  0/1 column per attribute and category.  Either is then min-max scaled.
* MNIST / digits: images are averaged over ``s x s`` pixel blocks to
  ``image_size x image_size`` (a divisor of 28, resp. 8).  App. A says "resize
  each 28 x 28 image to 7 x 7 ... a 196-dimensional feature vector"; 196 = 14 x
  14, so the default is 14 and 7 is available.  ``split``: ``test`` (the 10,000
  t10k images, available offline), ``train`` (60,000) or ``all`` (train then test).
* Labels: mushroom ``1`` = edible, ``0`` = poisonous (App. A); MAGIC ``1`` =
  gamma, ``0`` = hadron, non-numeric entries imputed with 0 (App. J); banknote
  keeps its 0/1 labels; shuttle and covertype classes ``1..7`` become ``0..6``;
  car classes in the order unacc, acc, good, vgood; digits 0..9.
* Shuttle uses all 9 attributes (App. A says 7 features; the data and seed 001's
  Table E.1 have 9) and, with ``split: all``, the 58,000 rows of the training and
  test files (Table E.1); ``shuttle.tst`` is TAB-separated and read with a
  whitespace splitter.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..errors import ConfigError, CorruptFileError
from .car_oracle import CLASSES as CAR_CLASSES
from .files import load_npz, rebuild_advice, save_npz
from .paths import RAW_DIR, preprocess_options, raw_paths
from .verify import verify_raw

MUSHROOM_CLASSES = ("poisonous", "edible")
SHUTTLE_CLASSES = ("Rad Flow", "Fpv Close", "Fpv Open", "High", "Bypass", "Bpv Close", "Bpv Open")
MAGIC_CLASSES = ("hadron", "gamma")
BANKNOTE_CLASSES = ("0", "1")
COVERTYPE_CLASSES = (
    "Spruce/Fir",
    "Lodgepole Pine",
    "Ponderosa Pine",
    "Cottonwood/Willow",
    "Aspen",
    "Douglas-fir",
    "Krummholz",
)
DIGIT_CLASSES = tuple(str(k) for k in range(10))


@dataclass
class Prepared:
    """A preprocessed classification dataset."""

    X: np.ndarray  # (n, d) float32 in [-1, 1]
    y: np.ndarray  # (n,) int64 in 0..K-1
    class_names: tuple[str, ...]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        return len(self.class_names)


# --- transformations -----------------------------------------------------------
def minmax_scale(X: np.ndarray, mode: str = "feature") -> np.ndarray:
    """Map to [-1, 1] per column (``feature``) or per row (``sample``); constant ones become 0."""
    X = np.asarray(X, dtype=np.float64)
    axis = 0 if mode == "feature" else 1
    lo = X.min(axis=axis, keepdims=True)
    span = X.max(axis=axis, keepdims=True) - lo
    safe = np.where(span > 0, span, 1.0)
    return np.where(span > 0, 2.0 * (X - lo) / safe - 1.0, 0.0)


def encode_categorical(columns: np.ndarray, mode: str, seed: int) -> np.ndarray:
    """Encode an (n, m) array of category strings: ``random`` values or ``onehot`` columns."""
    rng = np.random.default_rng(seed)
    blocks = []
    for j in range(columns.shape[1]):
        cats, codes = np.unique(columns[:, j], return_inverse=True)
        if mode == "random":
            blocks.append(rng.uniform(-1.0, 1.0, size=len(cats))[codes][:, None])
        else:
            blocks.append(np.eye(len(cats))[codes])
    return np.hstack(blocks)


def downsample(images: np.ndarray, size: int) -> np.ndarray:
    """Average (n, s, s) images over blocks to (n, size * size); ``size`` must divide ``s``."""
    n, s, _ = images.shape
    if s % size:
        raise ConfigError(f"preprocessing.image_size: {size} does not divide the image side {s}")
    b = s // size
    return images.reshape(n, size, b, size, b).mean(axis=(2, 4)).reshape(n, size * size)


# --- readers ----------------------------------------------------------------------
def read_idx(path: str | os.PathLike) -> np.ndarray:
    """An MNIST idx file (gzip): images (magic 2051) as (n, rows, cols) uint8 or labels (2049) as (n,)."""
    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    magic = int.from_bytes(raw[:4], "big")
    if magic == 2051:
        n, rows, cols = (int.from_bytes(raw[4 * k : 4 * k + 4], "big") for k in (1, 2, 3))
        return np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, rows, cols)
    if magic == 2049:
        return np.frombuffer(raw, dtype=np.uint8, offset=8).astype(np.int64)
    raise ConfigError(f"{path}: not an MNIST idx file (magic number {magic})")


def _table(path: str, sep: str = ",") -> "Any":
    import pandas as pd

    return pd.read_csv(path, header=None, sep=sep, dtype=str, keep_default_na=False)


def _numeric(frame) -> np.ndarray:
    import pandas as pd

    return frame.apply(pd.to_numeric, errors="coerce").fillna(0.0).to_numpy(dtype=np.float64)


def _labels(values: np.ndarray, codes: tuple[str, ...], path: str) -> np.ndarray:
    """Class index of every raw label; ``codes[k]`` is the raw label of class ``k``."""
    lookup = {c: k for k, c in enumerate(codes)}
    try:
        return np.array([lookup[str(v).strip()] for v in values], dtype=np.int64)
    except KeyError as err:
        raise ConfigError(f"{path}: unknown class label {err}; expected {list(codes)}") from None


def _load(dataset: str, opts: Mapping[str, Any], files: list[str]) -> tuple[np.ndarray, np.ndarray, tuple, bool]:
    """Return (features, labels, class names, categorical?) before scaling."""
    if dataset == "mnist":
        by_name = {Path(f).name: f for f in files}
        parts = {"test": ["t10k"], "train": ["train"], "all": ["train", "t10k"]}[opts["split"]]
        images = np.concatenate([read_idx(by_name[f"{p}-images-idx3-ubyte.gz"]) for p in parts])
        labels = np.concatenate([read_idx(by_name[f"{p}-labels-idx1-ubyte.gz"]) for p in parts])
        return downsample(images.astype(np.float64), opts["image_size"]), labels, DIGIT_CLASSES, False
    if dataset == "digits":
        from sklearn.datasets import load_digits

        digits = load_digits()
        return downsample(digits.images, opts["image_size"]), digits.target.astype(np.int64), DIGIT_CLASSES, False
    if dataset == "mushroom":
        t = _table(files[0]).to_numpy()
        return t[:, 1:], _labels(t[:, 0], ("p", "e"), files[0]), MUSHROOM_CLASSES, True
    if dataset == "car":
        t = _table(files[0]).to_numpy()
        return t[:, :-1], _labels(t[:, -1], CAR_CLASSES, files[0]), CAR_CLASSES, True
    if dataset == "shuttle":
        by_name = {Path(f).name: f for f in files}
        parts = {"all": ["shuttle.trn", "shuttle.tst"], "train": ["shuttle.trn"], "test": ["shuttle.tst"]}[
            opts["split"]
        ]
        t = np.vstack([_numeric(_table(by_name[p], sep=r"\s+")) for p in parts])
        return t[:, :-1], t[:, -1].astype(np.int64) - 1, SHUTTLE_CLASSES, False
    if dataset == "magic":
        t = _table(files[0])
        y = _labels(t.iloc[:, -1].to_numpy(), ("h", "g"), files[0])
        return _numeric(t.iloc[:, :-1]), y, MAGIC_CLASSES, False
    if dataset == "banknote":
        t = _table(files[0])
        y = _labels(t.iloc[:, -1].to_numpy(), ("0", "1"), files[0])
        return _numeric(t.iloc[:, :-1]), y, BANKNOTE_CLASSES, False
    if dataset == "covertype":
        t = _numeric(_table(files[0]))
        return t[:, :-1], t[:, -1].astype(np.int64) - 1, COVERTYPE_CLASSES, False
    raise ConfigError(f"dataset: no reader for {dataset!r}")


def prepare(
    dataset: str, options: Mapping[str, Any] | None = None, raw_dir: str | os.PathLike = RAW_DIR, verify: bool = True
) -> Prepared:
    """Read the raw files of ``dataset`` from ``raw_dir`` and preprocess them (module docstring).

    Each raw file is first checked against its registered checksum (:func:`banditbench.data.verify.verify_raw`);
    ``verify=False`` skips that, for tests of a reader on a synthetic file of the same format.
    """
    opts = preprocess_options(dataset, options)
    files = [str(Path(raw_dir) / Path(p).relative_to(RAW_DIR)) for p in raw_paths(dataset, opts)]
    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        raise ConfigError(
            f"{missing[0]}: raw file of dataset {dataset!r} missing (all missing: {missing}); "
            f"fetch them first (banditbench.data.fetch or the Snakemake download rules)"
        )
    if verify:
        for f in files:
            verify_raw(f)
    features, y, classes, categorical = _load(dataset, opts, files)
    if categorical:
        features = encode_categorical(features, opts["categorical"], opts["encoding_seed"])
    X = minmax_scale(features, opts["scaling"]).astype(np.float32)
    if y.min() < 0 or y.max() >= len(classes):
        raise ConfigError(
            f"{files[0] if files else dataset}: labels of dataset {dataset!r} outside 0..{len(classes) - 1}"
        )
    meta = {
        "dataset": dataset,
        "options": opts,
        "n_rows": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "class_counts": np.bincount(y, minlength=len(classes)).tolist(),
        "raw_files": [Path(f).name for f in files],
    }
    return Prepared(X, y, tuple(classes), meta)


def save_prepared(path: str | os.PathLike, prepared: Prepared) -> None:
    """Write ``X``, ``y``, class names and meta to an uncompressed ``.npz`` (atomically)."""
    save_npz(path, {"X": prepared.X, "y": prepared.y, "class_names": np.array(prepared.class_names)}, prepared.meta)


def load_prepared(
    path: str | os.PathLike, dataset: str | None = None, options: Mapping[str, Any] | None = None
) -> Prepared:
    """Read a file written by :func:`save_prepared`, checked (:func:`~banditbench.data.files.load_npz`):
    given ``dataset`` (and its resolved ``options``), the file must hold that preparation, and
    ``X`` must be a matrix with one label in ``0..K-1`` per row."""
    expect = {"dataset": dataset, **({"options": dict(options)} if options is not None else {})} if dataset else None
    arrays, meta = load_npz(path, "prepared dataset", required=("X", "y", "class_names"), expect=expect)
    X, y, names = arrays["X"], arrays["y"], arrays["class_names"]
    if (
        X.ndim != 2
        or y.shape != (len(X),)
        or y.dtype.kind not in "iu"
        or names.ndim != 1
        or len(X) == 0
        or y.min() < 0
        or y.max() >= len(names)
    ):
        raise CorruptFileError(
            f"{path}: prepared dataset is inconsistent (X {X.shape}, y {y.shape} {y.dtype}, "
            f"{names.shape[0] if names.ndim else '?'} classes); {rebuild_advice(path, 'prepared dataset')}"
        )
    return Prepared(X, y, tuple(str(c) for c in names), meta)
