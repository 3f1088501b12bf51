"""The action spaces of seed 003 (Lipschitz bandits): ``([0,1]^d, l_inf)`` with exact covering oracles.

``d = 1`` is ``([0,1], |.|)``; ``d = 2`` is ``([0,1]^2, ||.||_inf)`` (seed 003, Sec. 7).
A closed ball ``B(x, r) = {x' in [0,1]^d : ||x - x'||_inf <= r}`` is the
axis-aligned box ``prod_j [max(0, x_j - r), min(1, x_j + r)]``, so every
operation the algorithms need reduces to boxes:

* membership (:func:`in_balls`), the metric (:func:`linf_distance`);
* the zooming algorithm's covering oracle (seed 003, Alg. 1 line 11; Kleinberg
  et al. 2019): :func:`find_uncovered` decides *exactly* whether a finite union
  of closed boxes covers a region and, if not, returns a point that no box
  contains — no sampling grid, so there is no resolution cap;
* the phased-pruning oracle (Alg. 2 lines 2 and 16): :func:`cover_box` returns
  an ``r``-covering of a box.

Exactness of :func:`find_uncovered`: the boundaries of the region and of the
boxes cut the region into open elementary cells on each of which every box is
either all-containing or disjoint.  The uncovered part of the region is
relatively open (region minus a finite union of closed sets), so if it is not
empty it meets some open elementary cell, and then it contains that whole cell;
testing one point per cell is therefore an exact decision, and a point strictly
inside an uncovered cell lies in no box.  (:func:`split_box` halves a region so
that callers can keep the number of boxes per check small.)
Per-cell coverage counts are ``sum_b prod_j [box b spans cell i_j on axis j]``:
one matrix product in two dimensions (``O(k * cells)`` for ``k`` boxes meeting
the region), fully vectorised.
"""

from __future__ import annotations

import itertools

import numpy as np

from ...errors import ConfigError

#: how :func:`find_uncovered` picks a point in the uncovered part of the region
ACTIVATION_RULES = ("uniform", "midpoint")


def linf_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``||a - b||_inf`` along the last axis (broadcasting)."""
    return np.max(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)), axis=-1)


def ball_boxes(centers: np.ndarray, radii: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners of the balls ``B(c_i, r_i)`` of ``([0,1]^d, l_inf)`` (clipped to the cube)."""
    centers = np.asarray(centers, dtype=float)
    r = np.asarray(radii, dtype=float)[..., None]
    return np.maximum(centers - r, 0.0), np.minimum(centers + r, 1.0)


def in_balls(point: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Boolean mask: which closed boxes ``[lo_i, hi_i]`` (from :func:`ball_boxes`) contain ``point``."""
    p = np.asarray(point, dtype=float)
    return np.all((lo <= p) & (p <= hi), axis=-1)


def cover_box(lo: np.ndarray, hi: np.ndarray, r: float) -> np.ndarray:
    """Centres of an ``r``-covering of the box ``[lo, hi]`` by ``l_inf`` balls (Alg. 2's covering oracle).

    Per axis ``n_j = ceil((hi_j - lo_j) / (2r))`` centres spaced evenly, so each ball
    has half-width ``(hi_j - lo_j) / (2 n_j) <= r`` and the centres lie inside the box.
    For the dyadic boxes of Alg. 2 (``hi - lo = 2r``, radius ``r/2``) this is the
    minimal split into ``2^d`` half-size boxes.
    """
    lo, hi = np.atleast_1d(np.asarray(lo, dtype=float)), np.atleast_1d(np.asarray(hi, dtype=float))
    if r <= 0:
        raise ValueError(f"covering radius must be positive, got {r}")
    axes = []
    for a, b in zip(lo, hi):
        n = max(1, int(np.ceil((b - a) / (2.0 * r) - 1e-12)))
        axes.append(a + (b - a) * (2.0 * np.arange(n) + 1.0) / (2.0 * n))
    grid = np.meshgrid(*axes, indexing="ij")
    return np.stack([g.ravel() for g in grid], axis=-1)


def split_box(lo: np.ndarray, hi: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``2^d`` closed halves of the box ``[lo, hi]`` (their union is the box)."""
    mid = 0.5 * (lo + hi)
    out = []
    for corner in itertools.product((0, 1), repeat=lo.shape[0]):
        upper = np.array(corner, dtype=bool)
        out.append((np.where(upper, mid, lo), np.where(upper, hi, mid)))
    return out


def _draw_open01(rng: np.random.Generator) -> float:
    """A uniform draw from the open interval (0, 1)."""
    u = rng.random()
    while u == 0.0:
        u = rng.random()
    return u


def find_uncovered(
    region_lo: np.ndarray,
    region_hi: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    rng: np.random.Generator | None = None,
    rule: str = "uniform",
) -> np.ndarray | None:
    """Exact covering oracle: ``None`` if the closed boxes ``[lo_i, hi_i]`` cover the box
    ``[region_lo, region_hi]`` (positive extent on every axis), else a point of the region that no box contains.

    ``rule`` chooses the point among the uncovered open cells (see the module docstring):

    * ``"uniform"`` — uniform on the uncovered part of the region, by inverse CDF:
      one draw ``u`` picks the cell (cells in C order, weighted by volume) and the
      first coordinate inside it, further draws the other coordinates.  In one
      dimension the point is the one with uncovered length ``u * |uncovered|`` to
      its left, whatever the cell decomposition (needs ``rng``).
    * ``"midpoint"`` — the centre of the largest uncovered cell (first in C order on ties).
    """
    rlo, rhi = np.asarray(region_lo, dtype=float), np.asarray(region_hi, dtype=float)
    if lo.shape[0] and ((lo <= rlo) & (hi >= rhi)).all(axis=1).any():
        return None  # one box holds the whole region
    meet = ((lo < rhi) & (hi > rlo)).all(axis=1)
    return grid_uncovered(rlo, rhi, np.maximum(lo[meet], rlo), np.minimum(hi[meet], rhi), rng, rule)


def grid_uncovered(
    rlo: np.ndarray,
    rhi: np.ndarray,
    blo: np.ndarray,
    bhi: np.ndarray,
    rng: np.random.Generator | None = None,
    rule: str = "uniform",
) -> np.ndarray | None:
    """:func:`find_uncovered` for boxes ``[blo_i, bhi_i]`` already clipped to the region ``[rlo, rhi]``."""
    d = rlo.shape[0]
    coords, covers = [], []
    for j in range(d):
        c = np.concatenate(([rlo[j], rhi[j]], blo[:, j], bhi[:, j]))
        c.sort()
        c = c[np.concatenate(([True], c[1:] != c[:-1]))]
        mid = 0.5 * (c[:-1] + c[1:])
        coords.append(c)
        covers.append((blo[:, j, None] <= mid) & (mid <= bhi[:, j, None]))  # box b spans cell i on axis j
    # count[i_1..i_d] = number of boxes containing the cell = sum_b prod_j covers_j[b, i_j]
    if d == 1:
        count = covers[0].sum(axis=0)
    elif d == 2:
        count = covers[0].T.astype(np.float64) @ covers[1].astype(np.float64)
    else:
        count = np.einsum(
            *[x for j in range(d) for x in (covers[j].astype(np.float64), [0, j + 1])], list(range(1, d + 1))
        )
    uncovered = np.flatnonzero(count.ravel() < 0.5)  # counts are exact small integers
    if uncovered.size == 0:
        return None
    widths = [np.diff(c) for c in coords]
    cell_shape = count.shape
    multi = np.unravel_index(uncovered, cell_shape)
    vol = np.ones(uncovered.size)
    for j in range(d):
        vol = vol * widths[j][multi[j]]
    if rule == "midpoint":
        k = int(np.argmax(vol))
        return np.array([coords[j][multi[j][k]] + 0.5 * widths[j][multi[j][k]] for j in range(d)])
    if rule != "uniform":
        raise ConfigError(f"activation: unknown rule {rule!r}; choose from {list(ACTIVATION_RULES)}")
    while True:
        cum = np.cumsum(vol)
        target = _draw_open01(rng) * cum[-1]
        k = min(int(np.searchsorted(cum, target, side="right")), uncovered.size - 1)
        before = cum[k - 1] if k else 0.0
        frac = [(target - before) / vol[k]] + [_draw_open01(rng) for _ in range(d - 1)]
        point = np.array([coords[j][multi[j][k]] + frac[j] * widths[j][multi[j][k]] for j in range(d)])
        # rounding could put the point on a cell face (which a box may contain): redraw then
        if all(coords[j][multi[j][k]] < point[j] < coords[j][multi[j][k] + 1] for j in range(d)):
            return point
