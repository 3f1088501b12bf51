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
* ``"block"`` — the same draws applied to the raw input (seed 001 eq. 3 as
  written, ``W^1`` in R^{m x d}): the first layer's two diagonal blocks act on
  the two halves of ``x`` (zero-padded to even length when d is odd), so the
  output at ``theta_0`` is not zero.
* ``"independent"`` — every entry drawn from N(0, 2/m) on the raw input
  (pre-activations of the same variance as above, ``h(x; theta_0) != 0``).
* ``"normal"`` — every entry drawn from N(0, 1) on the raw input, the biases too
  (``biases``): the initialisation of the NDB authors' code (``xqlin98/APOHF``,
  ``Induction/experiments/LlamaForMLPRegression.py`` lines 268-271, ``torch.nn.init.normal_``
  with std 1 on every weight and bias).

Biases (``biases = True``; the NDB authors' ``nn.Linear`` layers, lines 262-265) add a vector
``b_l`` to every layer, ``ReLU(W_l h + b_l)`` and ``W_L h + b_L``, kept after all the weights
in the flat parameter vector (the weights' offsets are those of the network without biases);
they are drawn N(0, 1) under ``init = "normal"`` and start at 0 otherwise.  ``output_scale``:
``"sqrt_width"`` (default) multiplies the output by ``sqrt(m)`` as above; ``"one"`` does not
(the authors' code, line 282).

Outputs: ``outputs = 1`` (default) is the scalar network above.  ``outputs = D``
with ``output_relu = True`` is seed 001's feature map
``phi(x; W) = sqrt(m) ReLU(W^L ReLU(... ReLU(W^1 x)))`` in R^D (eq. 2), whose
last layer ``W^L`` is ``(omega, -omega)`` with ``omega`` in R^{D x m/2} under the
paired initialisations.  With the symmetric input such a ``phi`` is 0 at
``W_0`` and the ReLU passes no gradient there, so the network could never
leave its initialisation: that combination is refused.

All randomness comes from a ``torch.Generator`` seeded from the policy's numpy
stream (:func:`generator_from`), and :func:`configure_torch` pins one thread
and deterministic kernels, so a job's result bytes depend only on its seed.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable, Mapping

import numpy as np
import torch
from torch.func import grad, vmap

from ...errors import POLICY_PARAMS, ConfigError

DTYPE = torch.float64
INITS = ("symmetric", "block", "independent", "normal")
#: the initialisations whose layers are built of paired halves (an even width)
PAIRED_INITS = ("symmetric", "block")
#: the output scalings of :class:`MLP`: ``sqrt(m)`` (NTK) or none
OUTPUT_SCALES = ("sqrt_width", "one")


def layer_shapes(input_dim: int, width: int, depth: int, init: str, outputs: int = 1) -> list[tuple[int, int]]:
    """Shapes of the weight matrices of :class:`MLP` (the symmetric initialisation doubles the input,
    the block one pads it to an even length)."""
    in_dim = {"symmetric": 2 * input_dim, "block": input_dim + input_dim % 2}.get(init, input_dim)
    return [(width, in_dim)] + [(width, width)] * (depth - 2) + [(outputs, width)]


def check_network(values: Mapping[str, Any], output_relu: bool = False, where: str = POLICY_PARAMS) -> None:
    """The relations :class:`MLP` requires of ``width`` and ``init``, on a policy's parameter values
    (defaults filled in), before any job (``check_params``)."""
    width, init = values["width"], values["init"]
    if init in PAIRED_INITS and width % 2:
        raise ConfigError(f"{where}.width: need an even width for the {init} initialisation, got {width}")
    if output_relu and init == "symmetric":
        raise ConfigError(
            f"{where}.init: with the symmetric initialisation a ReLU output layer is 0 with zero "
            f"gradient at theta_0 and never trains; use 'block' or 'independent'"
        )


def configure_torch() -> None:
    """One thread per job (jobs run in parallel) and deterministic kernels (identical result bytes).

    ``torch.use_deterministic_algorithms`` also sets the flag of torch's compiler (``torch._inductor.config``),
    whose import loads the whole compiler stack (dynamo, sympy): about 2 s of CPU, once per job process, more
    than a 10-seed NeuralLog job's rounds at T = 500 (issue 48).  Nothing here compiles, so the kernels' flag is
    set directly; where the compiler's config is already loaded, through the public function as before."""
    torch.set_num_threads(1)
    if torch.are_deterministic_algorithms_enabled() and not torch.is_deterministic_algorithms_warn_only_enabled():
        return
    if "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(True)
    else:
        torch._C._set_deterministic_algorithms(True, warn_only=False)


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
    width : hidden width m (even for the paired initialisations).
    depth : number of weight matrices L.
    init : ``"symmetric"``, ``"block"``, ``"independent"`` or ``"normal"`` (module docstring).
    generator : the source of the initial weights.
    outputs, output_relu : output dimension D and whether the output layer is ReLU'd
        (seed 001's feature map, module docstring); :meth:`gradients` needs a scalar network.
    dtype : the parameters' precision (float64 by default; the initial draws are made in
        float64 and rounded, so they do not depend on it).
    biases, output_scale : a bias per layer, and the output's scaling (module docstring).
    """

    def __init__(
        self,
        input_dim: int,
        width: int,
        depth: int,
        init: str,
        generator: torch.Generator,
        where: str = "policy.params",
        outputs: int = 1,
        output_relu: bool = False,
        dtype: torch.dtype = DTYPE,
        biases: bool = False,
        output_scale: str = "sqrt_width",
    ):
        if depth < 2:
            raise ConfigError(f"{where}.depth: the network needs depth >= 2, got {depth}")
        if init not in INITS:
            raise ConfigError(f"{where}.init: {init!r} is not one of {list(INITS)}")
        if width < 2 or (init in PAIRED_INITS and width % 2):
            raise ConfigError(f"{where}.width: need an even width >= 2 for the {init} initialisation, got {width}")
        if outputs < 1:
            raise ConfigError(f"{where}.feature_dim: must be a positive integer, got {outputs}")
        if output_relu and init == "symmetric":
            raise ConfigError(
                f"{where}.init: with the symmetric initialisation a ReLU output layer is 0 with zero "
                f"gradient at theta_0 and never trains; use 'block' or 'independent'"
            )
        if output_scale not in OUTPUT_SCALES:
            raise ConfigError(f"{where}.output_scale: {output_scale!r} is not one of {list(OUTPUT_SCALES)}")
        self.width, self.depth, self.init = width, depth, init
        self.outputs, self.output_relu = outputs, output_relu
        self.input_dim = input_dim
        self.symmetric = init == "symmetric"
        self.shapes = layer_shapes(input_dim, width, depth, init, outputs)
        sizes = [r * c for r, c in self.shapes]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        self.has_biases = biases
        # the biases after all the weights: b_l at bias_offsets[l] .. bias_offsets[l + 1]
        self.bias_offsets = np.concatenate(
            [[self.offsets[-1]], self.offsets[-1] + np.cumsum([r for r, _ in self.shapes])]
        )
        self.n_params = int(self.bias_offsets[-1] if biases else self.offsets[-1])
        self.scale = math.sqrt(width) if output_scale == "sqrt_width" else 1.0
        self.dtype = dtype
        self.theta0 = self._initial_parameters(generator).to(dtype)  # the same draws in any precision
        self._grad_one = vmap(grad(self._forward_one), in_dims=(None, 0))

    def _initial_parameters(self, gen: torch.Generator) -> torch.Tensor:
        if self.init == "normal":  # each layer's weights, then its bias, all N(0, 1)
            drawn = [
                (torch.randn(r * c, generator=gen, dtype=DTYPE), torch.randn(r, generator=gen, dtype=DTYPE))
                for r, c in self.shapes
            ]
            return torch.cat([w for w, _ in drawn] + ([b for _, b in drawn] if self.has_biases else []))
        m = self.width
        blocks = []
        for i, (rows, cols) in enumerate(self.shapes):
            last = i == len(self.shapes) - 1
            if self.init == "independent":
                blocks.append(torch.randn(rows, cols, generator=gen, dtype=DTYPE) * math.sqrt(2.0 / m))
            elif last:
                w = torch.randn(rows, m // 2, generator=gen, dtype=DTYPE) * math.sqrt(2.0 / m)
                blocks.append(torch.cat([w, -w], dim=1))
            else:
                half = torch.randn(m // 2, cols // 2, generator=gen, dtype=DTYPE) * math.sqrt(4.0 / m)
                blocks.append(torch.block_diag(half, half))
        if self.has_biases:  # biases start at 0
            blocks.append(torch.zeros(int(self.bias_offsets[-1] - self.bias_offsets[0]), dtype=DTYPE))
        return torch.cat([b.reshape(-1) for b in blocks])

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """The network's input: ``[x; x] / sqrt(2)`` (symmetric), x zero-padded to even length (block), else x."""
        if self.symmetric:
            return torch.cat([x, x], dim=-1) / math.sqrt(2.0)
        if self.init == "block" and self.input_dim % 2:
            return torch.nn.functional.pad(x, (0, 1))
        return x

    def weights(self, theta: torch.Tensor) -> list[torch.Tensor]:
        return [theta[a:b].view(shape) for a, b, shape in zip(self.offsets[:-1], self.offsets[1:], self.shapes)]

    def biases(self, theta: torch.Tensor) -> list[torch.Tensor]:
        """The biases ``b_l`` of ``theta`` (none without ``biases``)."""
        if not self.has_biases:
            return []
        return [theta[a:b] for a, b in zip(self.bias_offsets[:-1].tolist(), self.bias_offsets[1:].tolist())]

    def hidden(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Last hidden layer ``ReLU(W_{L-1} ... ReLU(W_1 x))`` of every row of ``x`` (shape ``(..., m)``)."""
        h = self.embed(x)
        if self.has_biases:
            for W, b in zip(self.weights(theta)[:-1], self.biases(theta)):
                h = torch.relu(h @ W.T + b)
            return h
        for W in self.weights(theta)[:-1]:
            h = torch.relu(h @ W.T)
        return h

    def forward(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``h(x; theta)`` for every row of ``x``: shape ``x.shape[:-1]`` (one output) or ``(..., outputs)``."""
        W_L = self.weights(theta)[-1]
        if self.has_biases:
            out = self.scale * (self.hidden(theta, x) @ W_L.T + self.biases(theta)[-1])
            out = torch.relu(out) if self.output_relu else out
            return out[..., 0] if self.outputs == 1 else out
        if self.outputs == 1 and not self.output_relu:
            return self.scale * (self.hidden(theta, x) @ W_L[0])
        out = self.scale * (self.hidden(theta, x) @ W_L.T)
        if self.output_relu:
            out = torch.relu(out)
        return out[..., 0] if self.outputs == 1 else out

    def numpy_pass(self, theta: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
        """:meth:`forward` in numpy on the rows of the network's input ``x`` (:meth:`embed` applied; a scalar
        output without ReLU), and the backward pass written out: the map from ``dL/dh`` (one value per row) to
        ``dL/dtheta`` (p values, in ``theta``'s layout).  The same numbers as autograd's up to rounding, without
        its per-call overhead (:meth:`~.training.Trainer.fit_gradient` on the tiny networks of the NDB authors)."""
        mats = [theta[a:b].reshape(shape) for a, b, shape in zip(self.offsets[:-1], self.offsets[1:], self.shapes)]
        bounds = self.bias_offsets.tolist()
        biases = [theta[a:b] for a, b in zip(bounds[:-1], bounds[1:])] if self.has_biases else [None] * len(mats)
        inputs = [x]  # the input of each layer
        for W, b in zip(mats[:-1], biases[:-1]):
            pre = inputs[-1] @ W.T
            inputs.append(np.maximum(pre if b is None else pre + b, 0.0))
        out = inputs[-1] @ mats[-1][0] + (0.0 if biases[-1] is None else biases[-1][0])

        def backward(d_out: np.ndarray) -> np.ndarray:
            delta = (self.scale * d_out)[:, None]  # dL / d(pre-activation) of the last layer
            d_mats, d_biases = [], []
            for layer in range(len(mats) - 1, -1, -1):
                d_mats.append((delta.T @ inputs[layer]).ravel())
                d_biases.append(delta.sum(axis=0))
                if layer:
                    delta = (delta @ mats[layer]) * (inputs[layer] > 0)
            return np.concatenate(d_mats[::-1] + (d_biases[::-1] if self.has_biases else []))

        return self.scale * out, backward

    def gradient_factors(self, theta: np.ndarray, x: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per layer l, the factors of every row's gradient (numpy; a scalar output without ReLU): ``(delta_l,
        input_l)`` (rows x r_l and rows x c_l) with ``d h(x_s) / d W_l = outer(delta_l[s], input_l[s])`` and
        ``d h(x_s) / d b_l = delta_l[s]``, for the rows of the network's input ``x`` (:meth:`embed` applied)."""
        mats = [theta[a:b].reshape(shape) for a, b, shape in zip(self.offsets[:-1], self.offsets[1:], self.shapes)]
        bounds = self.bias_offsets.tolist()
        biases = [theta[a:b] for a, b in zip(bounds[:-1], bounds[1:])] if self.has_biases else [None] * len(mats)
        inputs = [x]
        for W, b in zip(mats[:-1], biases[:-1]):
            pre = inputs[-1] @ W.T
            inputs.append(np.maximum(pre if b is None else pre + b, 0.0))
        delta = np.full((len(x), 1), self.scale)
        factors = []
        for layer in range(len(mats) - 1, -1, -1):
            factors.append((delta, inputs[layer]))
            if layer:
                delta = (delta @ mats[layer]) * (inputs[layer] > 0)
        return factors[::-1]

    def _forward_one(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.forward(theta, x)

    def gradients(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``g(x; theta) = d h(x; theta) / d theta`` for all rows of ``x`` at once: shape ``(K, p)``.

        One vectorised pass (``torch.func.vmap`` over ``torch.func.grad``), never a
        Python loop with one backward pass per arm.
        """
        return self._grad_one(theta, x)
