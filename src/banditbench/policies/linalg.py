"""Shared linear-algebra building blocks: incremental inverses and a logistic MLE solver.

Nothing here is recomputed from scratch per round when an update rule exists:
:func:`sherman_morrison` is the one rank-one update of an inverse (O(d^2) per
update instead of O(d^3)); ``InverseGram`` keeps ``V^{-1}`` with it and ``Ridge``
a ridge regression on top; ``fit_logistic`` (:mod:`banditbench.numerics.logistic_mle`, which the data layer's oracles use
too) warm-starts Newton's method from the previous estimate, so a round
typically costs one or two O(n d^2) Newton steps.
"""

from __future__ import annotations

import numpy as np

from ..numerics.sigmoid import sigmoid
from ..numerics.logistic_mle import fit_logistic, logistic_loss, softplus

__all__ = [
    "ArmKernelGram",
    "DiagonalGram",
    "InverseGram",
    "Ridge",
    "fit_logistic",
    "logistic_loss",
    "sherman_morrison",
    "sigmoid",
    "softplus",
]


def sherman_morrison(inverse: np.ndarray, x: np.ndarray, weight: float = 1.0) -> float:
    """In place: turn ``inverse = V^{-1}`` into ``(V + weight x x^T)^{-1}`` (Sherman–Morrison, O(d^2)).

    ``inverse`` must be a C-contiguous float64 array (one arm's slice of a C-contiguous
    stack of inverses is); BLAS updates it in place, with no d x d temporaries.
    Returns ``x^T V^{-1} x`` before the update.
    """
    if not (inverse.flags.c_contiguous and inverse.dtype == np.float64):
        raise ValueError("sherman_morrison needs a C-contiguous float64 inverse")
    v = inverse @ x
    q = float(x @ v)
    c = weight / (1.0 + weight * q)
    from scipy.linalg import blas  # here only: a job that never updates an inverse need not import scipy

    # V^{-1} is symmetric, so its transpose is the Fortran-ordered view BLAS updates in place
    blas.dger(-c, v, v, a=inverse.T, overwrite_a=True)
    return q


class InverseGram:
    """``V = reg * I + sum_s w_s x_s x_s^T`` and its inverse, updated in O(d^2) per rank-one term.

    ``keep_matrix=False`` skips maintaining ``V`` itself (only ``V^{-1}`` is needed
    to select arms; the p x p neural case halves its work and memory that way).
    """

    def __init__(self, dimension: int, reg: float, keep_matrix: bool = True):
        if reg <= 0:
            raise ValueError(f"regularisation must be positive, got {reg}")
        self.matrix = reg * np.eye(dimension) if keep_matrix else None
        self.inverse = np.eye(dimension) / reg

    def update(self, x: np.ndarray, weight: float = 1.0) -> float:
        """``V += weight * x x^T`` (Sherman–Morrison on the inverse, in place: no p x p temporaries).

        Returns ``x^T V^{-1} x`` before the update, so that callers can follow
        ``log det V`` by the matrix determinant lemma (it grows by ``log(1 + weight x^T V^{-1} x)``).
        """
        q = sherman_morrison(self.inverse, x, weight)
        if self.matrix is not None:
            from scipy.linalg import blas

            blas.dger(weight, x, x, a=self.matrix.T, overwrite_a=True)
        return q

    def norms(self, rows: np.ndarray) -> np.ndarray:
        """``||x||_{V^{-1}}`` for every row of ``rows`` at once."""
        q = ((rows @ self.inverse) * rows).sum(axis=1)
        return np.sqrt(np.maximum(q, 0.0))


class Ridge:
    """Ridge regression kept up to date: ``A = lam I + sum x x^T``, ``u = sum x v`` and the
    estimate ``A^{-1} u`` (computed when asked for), O(d^2) per observed row.

    With ``capacity > 0`` the observed rows are kept (``rows[:n]``), e.g. for sampling
    from ``N(0, A^{-1})`` without factorising ``A``.
    """

    def __init__(self, dimension: int, lam: float, capacity: int = 0):
        self.lam = lam
        self.gram = InverseGram(dimension, lam)
        self.u = np.zeros(dimension)
        self.rows = np.zeros((capacity, dimension))
        self.n = 0
        self._estimate: np.ndarray | None = np.zeros(dimension)

    def add(self, rows: np.ndarray, values: np.ndarray) -> None:
        """Observe ``values[i]`` at ``rows[i]``."""
        for row in rows:  # rank-one Sherman–Morrison per observed row
            self.gram.update(row)
        if len(self.rows):
            self.rows[self.n : self.n + len(rows)] = rows
        self.n += len(rows)
        self.u += values @ rows
        self._estimate = None

    @property
    def estimate(self) -> np.ndarray:
        if self._estimate is None:
            self._estimate = self.gram.inverse @ self.u
        return self._estimate


class DiagonalGram:
    """The diagonal approximation of ``V = reg * I + sum_s x_s x_s^T`` used by public neural-bandit code:
    O(p) per update and per norm instead of O(p^2)."""

    def __init__(self, dimension: int, reg: float):
        if reg <= 0:
            raise ValueError(f"regularisation must be positive, got {reg}")
        self.diagonal = np.full(dimension, float(reg))

    def update(self, x: np.ndarray, weight: float = 1.0) -> None:
        self.diagonal += weight * x * x

    def norms(self, rows: np.ndarray) -> np.ndarray:
        """``||x||_{diag(V)^{-1}}`` for every row of ``rows``."""
        return np.sqrt((rows * rows / self.diagonal).sum(axis=1))


class ArmKernelGram:
    """``V = reg * I + sum_s u_s u_s^T`` seen only through a fixed set of K feature vectors ``Phi`` (K x p).

    When every update is a difference of two rows, ``u = Phi_a - Phi_b``, the
    K x K matrix ``M = Phi V^{-1} Phi^T`` carries everything the pair bonuses
    need: Sherman–Morrison gives ``M <- M - (M_a - M_b)(M_a - M_b)^T / (1 + u^T V^{-1} u)``
    with ``u^T V^{-1} u = M_aa - 2 M_ab + M_bb``, so a round costs O(K^2)
    whatever the feature dimension p (exact, not an approximation).
    """

    def __init__(self, features: np.ndarray, reg: float):
        if reg <= 0:
            raise ValueError(f"regularisation must be positive, got {reg}")
        self.kernel = features @ features.T / reg

    def update_pair(self, a: int, b: int) -> None:
        """``V += (Phi_a - Phi_b)(Phi_a - Phi_b)^T``."""
        M = self.kernel
        col = M[:, a] - M[:, b]
        quad = col[a] - col[b]
        M -= np.outer(col, col) / (1.0 + quad)

    def pair_norms(self, first: int) -> np.ndarray:
        """``||Phi_x - Phi_first||_{V^{-1}}`` for every arm x."""
        M = self.kernel
        q = np.diag(M) - 2.0 * M[:, first] + M[first, first]
        return np.sqrt(np.maximum(q, 0.0))
