"""FLOPs per round of the three neural families, from their definitions (issue 48).

Each model counts the matrix products a round performs (two FLOPs per multiply-add), on the path a CPU job takes
(:func:`banditbench.simulation.job.engine`); element-wise work, the Newton refit's small ``D x D`` systems and the
pair rules are left out (they are named below with their share).  Notation: a network of layers ``W_i`` with
``in_i x out_i`` weights, ``P = sum_i in_i out_i``, ``P_1 = in_1 out_1``; ``R`` rows pass through it.

* **NVLDB / NLDB** (seed 001, Algorithm 1, single-seed path, ``backprop: manual``): round t trains (lines 9-10)
  when the schedule says so on the ``n`` pairs with weights set (``n = t - 2`` without delays: eq. 4's rounds up
  to ``t - 2``), ``R = 2n`` stacked arms.  One Adam step is a forward pass ``2 R P``, the weights' gradients
  ``2 R P`` and the inputs' gradients below the first layer ``2 R (P - P_1)``, plus ``theta``'s ``2 n D`` twice:
  ``2 R (3 P - P_1) + 4 n D``; then the refit's features, one forward pass ``2 R P`` (not counted: its Newton
  iterations, ``O(n D^2)`` each, below 10 %).
* **NDB-DF** and its baselines (seed 000, the seed-batched engine): every round trains ``steps`` Adam steps on the
  ``n = t - 1`` pairs, with the first layer folded to the raw arm (``in_1 = d``); then the widths of eq. 12, a
  ``K x p_c`` by ``p_c x p_c`` product with ``V^{-1}`` (``p_c`` the coordinates V is kept in) and the held-back
  rank-one updates' two ``K x p_c`` by ``p_c x H`` products (``H = 16`` held), their application every ``H``
  rounds (``2 H p_c^2``, so ``2 p_c^2`` a round), the arms' scores (``2 K P``) and gradient features (about
  ``4 K P``).
* **NeuralLog** (seed 002, the seed-batched engine): when the schedule trains, ``steps`` steps on minibatches of
  ``B`` rows, each ``2 B (3 P - P_1)``; the arms' scores and widths of every round are element-wise products of
  the gradients' layer factors (under 1 % of the products: not counted).  Its rounds cost interpreter time, not
  FLOPs (0.3 MFLOP a round at B = 50), so its CPU time is projected by rounds, not FLOPs.

A counter checks the models: tests/test_flop_model.py counts the products a short run performs (torch's
``FlopCounterMode`` for the torch engines, the calls of NVLDB's numpy backward pass) and compares them with these
formulas.  The counter sees ``mm`` and ``bmm`` only: products done elementwise (a scalar output layer's, a narrow
product's) and ``baddbmm`` are in a model and not in its count, which is up to 15 % lower.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Network:
    """A network's layer shapes ``(out, in)`` as :class:`banditbench.policies.neural.nets.MLP` keeps them."""

    shapes: tuple[tuple[int, int], ...]

    @property
    def products(self) -> int:
        """``P``: the multiply-adds of one row's forward pass."""
        return sum(rows * cols for rows, cols in self.shapes)

    @property
    def first(self) -> int:
        """``P_1``: the first layer's."""
        rows, cols = self.shapes[0]
        return rows * cols

    def train_step(self, rows: int) -> int:
        """FLOPs of one forward and backward pass over ``rows`` rows: ``2 R (3 P - P_1)``."""
        return 2 * rows * (3 * self.products - self.first)


def nvldb_round(net: Network, t: int, steps: int, trains: bool, feature_dim: int) -> int:
    """FLOPs of NVLDB's round ``t`` without delays (module docstring)."""
    n = max(t - 2, 0)
    if not trains or n == 0:
        return 0
    rows = 2 * n
    return steps * (net.train_step(rows) + 4 * n * feature_dim) + 2 * rows * net.products


#: the rank-one updates of ``V^{-1}`` NDB's engine holds back before it applies them together
HELD = 16


def ndb_round(net: Network, t: int, steps: int, arms: int, confidence_dim: int) -> int:
    """FLOPs of NDB-DF's round ``t`` on the seed-batched engine (module docstring); ``net`` with its first layer
    folded."""
    n, p = t - 1, confidence_dim
    training = steps * net.train_step(2 * n) if n else 0
    widths = 2 * arms * p**2 + 2 * 2 * arms * p * HELD + 2 * p**2
    return training + widths + 6 * arms * net.products


def neurallog_round(net: Network, t: int, steps: int, trains: bool, minibatch: int) -> int:
    """FLOPs of NeuralLog's round ``t`` on the seed-batched engine (module docstring)."""
    rows = min(t - 1, minibatch)
    return steps * net.train_step(rows) if trains and rows else 0


def per_seed(round_flops, horizon: int) -> int:
    """FLOPs of one seed over ``horizon`` rounds: ``round_flops(t)`` summed."""
    return sum(round_flops(t) for t in range(1, horizon + 1))


def folded(shapes: Sequence[tuple[int, int]], arm_dim: int) -> Network:
    """The network with its first layer acting on the raw arm (NDB's symmetric input ``[x; x] / sqrt(2)``)."""
    (rows, _), *rest = shapes
    return Network(((rows, arm_dim), *map(tuple, rest)))
