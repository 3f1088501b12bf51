"""The action space ``([0,1]^d, l_inf)`` of seed 003: balls as boxes, the exact covering oracles."""

from __future__ import annotations

import numpy as np
import pytest

from banditbench.policies.lipschitz.metric_space import ball_boxes, cover_box, find_uncovered, in_balls, linf_distance


def test_covering_oracle_is_exact_at_boundaries():
    lo, hi = ball_boxes(np.array([[0.25], [0.75]]), np.array([0.25, 0.25]))
    assert find_uncovered(np.zeros(1), np.ones(1), lo, hi, rule="midpoint") is None  # closed balls touch
    lo, hi = ball_boxes(np.array([[0.25], [0.75 + 1e-9]]), np.array([0.25, 0.25]))
    p = find_uncovered(np.zeros(1), np.ones(1), lo, hi, np.random.default_rng(0))
    assert 0.5 < p[0] < 0.5 + 1e-9 and not in_balls(p, lo, hi).any()  # a 1e-9 gap is found
    centers = np.array([[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]])
    lo, hi = ball_boxes(centers, np.full(4, 0.25))
    assert find_uncovered(np.zeros(2), np.ones(2), lo, hi, rule="midpoint") is None
    lo, hi = ball_boxes(centers, np.array([0.25, 0.25, 0.25, 0.25 - 1e-7]))
    for rule in ("uniform", "midpoint"):
        p = find_uncovered(np.zeros(2), np.ones(2), lo, hi, np.random.default_rng(1), rule)
        assert not in_balls(p, lo, hi).any()
        assert 0.25 - 1e-7 < linf_distance(p, centers[3]) <= 0.25  # in the 1e-7 sliver
    assert linf_distance(np.array([0.1, 0.9]), np.array([0.3, 0.2])) == pytest.approx(0.7)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_covering_oracle_agrees_with_dense_sampling(d):
    rng = np.random.default_rng(d)
    probe = rng.random((20000, d))
    outcomes = set()
    for trial in range(60):
        k = int(rng.integers(1, 12 * d))
        lo, hi = ball_boxes(rng.random((k, d)), rng.uniform(0.05, 0.6, size=k))
        rlo = rng.random(d) * 0.5
        rhi = rlo + rng.uniform(0.1, 0.5, size=d)
        p = find_uncovered(rlo, rhi, lo, hi, rng, "uniform" if trial % 2 else "midpoint")
        pts = rlo + probe * (rhi - rlo)
        covered = np.any(np.all((lo[:, None, :] <= pts) & (pts <= hi[:, None, :]), axis=2), axis=0)
        if p is None:
            assert covered.all(), "oracle said covered but a sampled point is not"
            outcomes.add("covered")
        else:
            assert np.all((rlo <= p) & (p <= rhi)) and not in_balls(p, lo, hi).any()
            outcomes.add("uncovered")
    assert outcomes == {"covered", "uncovered"}


def test_uniform_activation_is_uniform_on_the_uncovered_set():
    lo, hi = ball_boxes(np.array([[0.55]]), np.array([0.35]))  # covers [0.2, 0.9]
    rng = np.random.default_rng(5)
    pts = np.array([find_uncovered(np.zeros(1), np.ones(1), lo, hi, rng)[0] for _ in range(4000)])
    assert np.all((pts < 0.2) | (pts > 0.9))
    assert abs(np.mean(pts < 0.2) - 2 / 3) < 0.03
    assert abs(np.mean(pts[pts < 0.2]) - 0.1) < 0.005


def test_cover_box_is_an_r_covering():
    rng = np.random.default_rng(2)
    for d in (1, 2):
        c = cover_box(np.full(d, 0.25), np.full(d, 0.75), 0.125)  # dyadic: 2^d children
        assert c.shape == (2**d, d)
        assert np.allclose(np.sort(c[:, 0]), np.repeat([0.375, 0.625], 2 ** (d - 1)))
        lo, hi = rng.random(d) * 0.4, 0.6 + rng.random(d) * 0.4
        r = 0.07
        c = cover_box(lo, hi, r)
        pts = lo + rng.random((5000, d)) * (hi - lo)
        assert linf_distance(pts[:, None, :], c[None]).min(axis=1).max() <= r + 1e-12
        assert np.all((c >= lo) & (c <= hi))
    assert cover_box(np.zeros(2), np.ones(2), 0.5).tolist() == [[0.5, 0.5]]
