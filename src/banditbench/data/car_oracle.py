"""Ground-truth oracle for the online content moderation experiment (seed 004, Sec. 6).

The paper emulates a human moderator by "a logistic regression with the logistic
function ``p(c, a, theta*) = 1 / (1 + exp(-<phi(c, a), theta*>))``" trained on the
UCI car evaluation data, and then uses the linear score ``r(c, a) = <phi(c, a), theta*>``
as the reward of review ``a`` (one of the four classes) for car ``c``.  The paper
does not give the features; our choices (all documented, all in the ``.npz``):

* Context features ``x_c``: one-hot encoding of the six categorical attributes
  (4 + 4 + 4 + 3 + 3 + 3 = 21 levels) plus an intercept, 22 numbers with exactly
  seven ones.  Action features ``phi(c, a) = feature_norm * e_a (x) x_c / sqrt(7)``: the
  context block placed in the slot of review ``a`` (d = 4 * 22 = 88), scaled to norm
  ``feature_norm`` (default 1: Assumption 2's ``||phi|| <= 1`` with equality).
* One binary logistic regression over all (car, review) pairs with label
  ``1{a is the car's class}`` and ridge penalty ``lam/2 ||theta||^2``, solved by
  Newton's method (:func:`banditbench.numerics.logistic_mle.fit_logistic`).  With the
  block features this is one-vs-rest multiclass logistic regression.
* The oracle's scale.  The fitted score ``s(c, a) = <phi(c, a), theta_LR>`` (``logit_theta``)
  is a log-odds whose spread is set by the fit, not by the data alone: the feature norm and
  the ridge penalty decide how large ``theta_LR`` may grow (with the defaults, ``lam = 1`` and
  unit-norm features, the scores run from about -8.6 to 11.3).  Both are parameters of
  :func:`fit_car_oracle` and are stored in the file with the resulting range (``feature_norm``,
  ``lam``, ``score_min``, ``score_max``, ``negative_fraction``), because every reward and
  cost of :class:`~banditbench.envs.knapsack.CarModeration` is read off this score; the
  environment's ``reward_scale`` / ``score_scale`` say how.
* For ``reward_scale = "unit_interval"`` (the environment's default, Assumption 2's
  ``r in [0, 1]``) the file also holds ``theta``: the scores mapped affinely onto [0, 1]
  (min-max over all 1728 x 4 pairs).  Because every block carries an intercept,
  ``alpha * score + beta`` is still linear in ``phi``: ``theta = alpha * theta_LR + beta *
  sqrt(7) / feature_norm * (sum of the intercept unit vectors)``, with min 0 and max 1, and
  the order of the reviews per car is the regression's.
* ``theta*`` is fitted on all rows; the held-out accuracy stored with it comes
  from a second fit on a stratified train split (``test_fraction``), evaluated on
  the remaining rows by ``argmax_a p(c, a)``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ConfigError
from ..numerics.logistic_mle import fit_logistic
from .paths import CAR_ORACLE
from .verify import verify_raw

#: attribute levels in the order of car.names (ordinal from worst to best where it applies)
ATTRIBUTES = (
    ("buying", ("vhigh", "high", "med", "low")),
    ("maint", ("vhigh", "high", "med", "low")),
    ("doors", ("2", "3", "4", "5more")),
    ("persons", ("2", "4", "more")),
    ("lug_boot", ("small", "med", "big")),
    ("safety", ("low", "med", "high")),
)
#: the four reviews (actions), indexed 0..3
CLASSES = ("unacc", "acc", "good", "vgood")
#: one-hot levels of the six attributes plus the intercept (22)
CONTEXT_DIMENSION = sum(len(levels) for _, levels in ATTRIBUTES) + 1
N_ROWS = 1728
DEFAULT_ORACLE = CAR_ORACLE


def read_car_data(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Parse ``car.data``; return the one-hot context encodings with intercept (n, 22) and class ids (n,)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: does not exist (the UCI car evaluation file car.data)")
    rows = [line.strip().split(",") for line in path.read_text().splitlines() if line.strip()]
    if len(rows) != N_ROWS or any(len(r) != 7 for r in rows):
        raise ConfigError(
            f"{path}: not the UCI car evaluation data (expected {N_ROWS} rows of 7 comma-separated fields)"
        )
    raw = np.array(rows)
    blocks = []
    for j, (name, levels) in enumerate(ATTRIBUTES):
        lookup = {v: i for i, v in enumerate(levels)}
        try:
            idx = np.array([lookup[v] for v in raw[:, j]])
        except KeyError as err:
            raise ConfigError(f"{path}: unknown level {err} of attribute {name!r}") from None
        blocks.append(np.eye(len(levels))[idx])
    blocks.append(np.ones((len(raw), 1)))
    labels = {c: i for i, c in enumerate(CLASSES)}
    try:
        y = np.array([labels[v] for v in raw[:, 6]])
    except KeyError as err:
        raise ConfigError(f"{path}: unknown class {err}") from None
    return np.hstack(blocks), y


def action_features(x: np.ndarray, n_actions: int = len(CLASSES), feature_norm: float = 1.0) -> np.ndarray:
    """``phi(c, a) = feature_norm * e_a (x) x_c / ||x_c||`` for every row of ``x``: shape (n, K, K * p)."""
    n, p = x.shape
    phi = np.zeros((n, n_actions, n_actions * p))
    scaled = feature_norm * x / np.linalg.norm(x, axis=1, keepdims=True)
    for a in range(n_actions):  # K = 4 block copies, not a per-round loop
        phi[:, a, a * p : (a + 1) * p] = scaled
    return phi


def _fit(x: np.ndarray, y: np.ndarray, lam: float, feature_norm: float) -> np.ndarray:
    phi = action_features(x, feature_norm=feature_norm)
    k = phi.shape[1]
    labels = (y[:, None] == np.arange(k)).astype(float)
    return fit_logistic(
        phi.reshape(-1, phi.shape[2]), labels.ravel(), lam, np.zeros(phi.shape[2]), max_iter=100, tol=1e-8
    )


def _stratified_split(y: np.ndarray, test_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    test = []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        test.append(idx[: int(round(test_fraction * len(idx)))])
    test_idx = np.sort(np.concatenate(test))
    return np.setdiff1d(np.arange(len(y)), test_idx), test_idx


def fit_car_oracle(
    car_data_path: str | Path,
    *,
    lam: float = 1.0,
    feature_norm: float = 1.0,
    test_fraction: float = 0.25,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Fit the moderator oracle on ``car.data``; return the arrays of its oracle file
    (:func:`banditbench.data.files.save_npz`, read by :class:`banditbench.envs.knapsack.CarModeration`).

    Keys: ``contexts`` (1728, 22) one-hot encodings with intercept, ``labels`` (1728,),
    ``logit_theta`` (88,) the regression weights (``r = phi @ logit_theta``, the paper's reward),
    ``theta`` (88,) the [0, 1]-mapped parameter, ``alpha``/``beta`` the affine map,
    ``test_accuracy``, ``train_accuracy``, ``majority_accuracy`` (of the held-out rows),
    the oracle's scale: ``lam``, ``feature_norm`` and the resulting ``score_min``, ``score_max`` and
    ``negative_fraction`` (of the 1728 x 4 scores), and ``test_fraction``, ``seed``.
    """
    if lam <= 0:
        raise ConfigError(f"oracle.lam: the ridge penalty must be positive, got {lam}")
    if not 0 < feature_norm <= 1:
        raise ConfigError(f"oracle.feature_norm: must lie in (0, 1] (Assumption 2: ||phi|| <= 1), got {feature_norm}")
    if not 0 < test_fraction < 1:
        raise ConfigError(f"oracle.test_fraction: must lie in (0, 1), got {test_fraction}")
    verify_raw(car_data_path)
    x, y = read_car_data(car_data_path)
    train, test = _stratified_split(y, test_fraction, np.random.default_rng(seed))
    phi = action_features(x, feature_norm=feature_norm)
    theta_split = _fit(x[train], y[train], lam, feature_norm)
    pred = (phi @ theta_split).argmax(axis=1)
    theta_lr = _fit(x, y, lam, feature_norm)
    logits = phi @ theta_lr
    lo, hi = float(logits.min()), float(logits.max())
    alpha, beta = 1.0 / (hi - lo), -lo / (hi - lo)
    p = x.shape[1]
    norm = float(np.sqrt(x[0].sum())) / feature_norm  # every row has the same number of ones
    intercepts = np.zeros(len(CLASSES) * p)
    intercepts[p - 1 :: p] = 1.0
    theta = alpha * theta_lr + beta * norm * intercepts
    return {
        "contexts": x,
        "labels": y,
        "theta": theta,
        "logit_theta": theta_lr,
        "alpha": np.float64(alpha),
        "beta": np.float64(beta),
        "test_accuracy": np.float64((pred[test] == y[test]).mean()),
        "train_accuracy": np.float64((pred[train] == y[train]).mean()),
        "majority_accuracy": np.float64((y[test] == np.bincount(y[train]).argmax()).mean()),
        "lam": np.float64(lam),
        "feature_norm": np.float64(feature_norm),
        "score_min": np.float64(lo),
        "score_max": np.float64(hi),
        "negative_fraction": np.float64((logits < 0).mean()),
        "test_fraction": np.float64(test_fraction),
        "seed": np.int64(seed),
    }
