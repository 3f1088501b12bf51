"""Fully connected ReLU networks on a flat parameter vector, with batched per-arm gradients.

The network is seed 000's ``h(x; theta) = W_L ReLU(W_{L-1} ... ReLU(W_1 x))``
(Sec. 2.2; no biases) in the NTK parametrisation of the neural bandit
literature (Zhou et al. 2020, NeuralUCB, which seeds 000–002 follow): the
output is scaled by ``sqrt(m)`` so that ``g(x; theta) / sqrt(m)`` — the feature
of eqs. 8 and 12 — is of order one.

Initialisation (``init``):

* ``"symmetric"`` (default) — NeuralUCB's construction, which makes
  ``h(x; theta_0) = 0`` for every x: each hidden layer is block-diagonal
  ``[[W, 0], [0, W]]`` with entries of ``W`` drawn from N(0, 4/m), the output
  layer is ``(w, -w)`` with entries of ``w`` from N(0, 2/m).  The construction
  needs inputs whose two halves are equal (seed 000 Assumption B3,
  ``x_j = x_{j + d/2}``); we build such an input from any arm as
  ``[x; x] / sqrt(2)``, which keeps ``||x|| = 1``.  The first layer therefore
  has ``2 d m`` parameters.
* ``"independent"`` — every entry drawn from N(0, 2/m) on the raw input
  (pre-activations of the same variance as above, ``h(x; theta_0) != 0``).

All randomness comes from a ``torch.Generator`` seeded from the policy's numpy
stream (:func:`generator_from`), and :func:`configure_torch` pins one thread
and deterministic kernels, so a job's result bytes depend only on its seed.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.func import grad, vmap

from ...errors import ConfigError

DTYPE = torch.float64
INITS = ("symmetric", "independent")


def configure_torch() -> None:
    """One thread per job (jobs run in parallel) and deterministic kernels (identical result bytes)."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)


def generator_from(rng: np.random.Generator) -> torch.Generator:
    """A ``torch.Generator`` seeded from a numpy stream (never from the clock)."""
    gen = torch.Generator()
    gen.manual_seed(int(rng.integers(0, 2**63 - 1)))
    return gen


class MLP:
    """``h(x; theta)`` of depth ``L >= 2`` and width ``m``; ``theta`` is one flat vector of p parameters.

    Parameters
    ----------
    input_dim : arm feature dimension d.
    width : hidden width m (even for the symmetric initialisation).
    depth : number of weight matrices L.
    init : ``"symmetric"`` or ``"independent"`` (module docstring).
    generator : the source of the initial weights.
    """

    def __init__(self, input_dim: int, width: int, depth: int, init: str, generator: torch.Generator,
                 where: str = "policy.params"):
        if depth < 2:
            raise ConfigError(f"{where}.depth: the network needs depth >= 2, got {depth}")
        if init not in INITS:
            raise ConfigError(f"{where}.init: {init!r} is not one of {list(INITS)}")
        if width < 2 or (init == "symmetric" and width % 2):
            raise ConfigError(f"{where}.width: need an even width >= 2 for the symmetric initialisation, got {width}")
        self.width, self.depth, self.init = width, depth, init
        self.symmetric = init == "symmetric"
        in_dim = 2 * input_dim if self.symmetric else input_dim
        self.shapes = [(width, in_dim)] + [(width, width)] * (depth - 2) + [(1, width)]
        sizes = [r * c for r, c in self.shapes]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        self.n_params = int(self.offsets[-1])
        self.scale = math.sqrt(width)
        self.theta0 = self._initial_parameters(generator)
        self._grad_one = vmap(grad(self._forward_one), in_dims=(None, 0))

    def _initial_parameters(self, gen: torch.Generator) -> torch.Tensor:
        m = self.width
        blocks = []
        for i, (rows, cols) in enumerate(self.shapes):
            last = i == len(self.shapes) - 1
            if not self.symmetric:
                blocks.append(torch.randn(rows, cols, generator=gen, dtype=DTYPE) * math.sqrt(2.0 / m))
            elif last:
                w = torch.randn(1, m // 2, generator=gen, dtype=DTYPE) * math.sqrt(2.0 / m)
                blocks.append(torch.cat([w, -w], dim=1))
            else:
                half = torch.randn(m // 2, cols // 2, generator=gen, dtype=DTYPE) * math.sqrt(4.0 / m)
                blocks.append(torch.block_diag(half, half))
        return torch.cat([b.reshape(-1) for b in blocks])

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """The network's input: ``[x; x] / sqrt(2)`` for the symmetric construction, else x."""
        return torch.cat([x, x], dim=-1) / math.sqrt(2.0) if self.symmetric else x

    def weights(self, theta: torch.Tensor) -> list[torch.Tensor]:
        return [theta[a:b].view(shape) for a, b, shape in zip(self.offsets[:-1], self.offsets[1:], self.shapes)]

    def hidden(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Last hidden layer ``ReLU(W_{L-1} ... ReLU(W_1 x))`` of every row of ``x`` (shape ``(..., m)``)."""
        h = self.embed(x)
        for W in self.weights(theta)[:-1]:
            h = torch.relu(h @ W.T)
        return h

    def forward(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``h(x; theta)`` for every row of ``x`` (shape ``x.shape[:-1]``)."""
        W_L = self.weights(theta)[-1]
        return self.scale * (self.hidden(theta, x) @ W_L[0])

    def _forward_one(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.forward(theta, x)

    def gradients(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``g(x; theta) = d h(x; theta) / d theta`` for all rows of ``x`` at once: shape ``(K, p)``.

        One vectorised pass (``torch.func.vmap`` over ``torch.func.grad``), never a
        Python loop with one backward pass per arm.
        """
        return self._grad_one(theta, x)
