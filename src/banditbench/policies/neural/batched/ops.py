"""Mirrors of single-seed functions (each names its reference: ``nets.MLP``, ``training.adam_step``,
``linalg.sherman_morrison``, ``banditbench.numerics.logistic_mle.fit_logistic``).  Checked by:
``tests/policies/neural/batched/test_batched_neural.py`` (building blocks: rel 1e-5 float32, 1e-9 float64),
``tests/policies/test_logistic.py::test_batched_solver_compares_centred_losses_too``,
``tests/policies/neural/test_neural_dueling.py::test_batched_gradients_equal_per_arm_autograd``.

The tensors of a block have shape ``[S, ...]``; this module holds the pieces the families
share, each the batched mirror of a single-seed function (tested against it in
``tests/policies/neural/batched/test_batched_neural.py``):

* :func:`mlp_forward`, :func:`mlp_backward` — the :class:`~.nets.MLP` forward pass and the
  hand-written backward pass of its weights, on stacked flat parameter vectors ``[S, p]``;
* :func:`mlp_arm_gradients` — :meth:`~.nets.MLP.gradients`, one gradient per arm (the features
  ``g(x; theta_0) / sqrt(m)`` of full-gradient exploration, seed 000 eq. 12);
* :func:`gradient_forms` — the arms' ``||g||^2`` under a diagonal matrix and ``g^T v`` from the
  layers' outer-product factors, without forming the ``[S, n, p]`` gradients (NeuralLog's widths
  and linearised mean);
* :func:`softplus_grad` — the gradient autograd takes of ``F.softplus`` (the cross-entropy of eq. 7);
* :func:`adam_step` — :func:`~.training.adam_step` on ``[S, p]`` with a per-seed step count
  and a mask of the seeds that train this round (bias corrections from :func:`adam_corrections`, on the device);
* :func:`sherman_morrison` — :func:`~banditbench.policies.linalg.sherman_morrison` on
  ``[S, D, D]`` inverses, masked; :func:`sherman_morrison_all` the same for every seed, in place
  (the p x p inverses of NDB);
* :func:`fit_logistic` — :func:`banditbench.numerics.logistic_mle.fit_logistic` (damped Newton) for all
  seeds at once, each seed stopping by its own criterion (one host read per Newton step);
* :func:`to_host` — the host's one read of a round: several ``[S, ...]`` tensors in one copy;
* :class:`NetworkBlock` — what every family's engine keeps of its members' networks: their parameters
  stacked on the seed axis and Adam's state for them.

What a block is and the rules of block independence: :mod:`banditbench.policies.neural.batched`;
the interface, :class:`banditbench.api.BatchedPolicy`.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np
import torch

from ....api import BatchedPolicy, Policy
from ....numerics.logistic_mle import LOSS_RESOLUTION
from ..training import ADAM_BETAS, ADAM_EPS

DEVICES = ("cpu", "cuda")


def check_device(device: str, where: str) -> None:
    """Refuse ``cuda`` where torch sees no GPU (before any job: ``check_params``, and the grid-wide
    ``device`` key with ``where=""``)."""
    from ....errors import ConfigError

    key = f"{where}.device" if where else "device"
    if device not in DEVICES:
        raise ConfigError(f"{key}: {device!r} is not one of {list(DEVICES)}")
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f"{key}: 'cuda' was asked for but torch sees no GPU (torch.cuda.is_available() is False); use 'cpu'"
        )


#: a product whose result has a side narrower than this runs one seed at a time (:func:`bmm`): MKL's
#: batched GEMM picks its kernel for narrow results by the batch size
WIDE = 16


#: a product whose per-seed operands and result are this small (elements of ``[M, N, K]``), or whose
#: ``N x K`` is at most :data:`SHORT`, is written out elementwise (:func:`bmm`)
SMALL, SHORT = 8192, 64


def _aligned(x: torch.Tensor) -> torch.Tensor:
    """``x`` contiguous and starting on a 64-byte boundary (a copy in a fresh allocation if not): a BLAS
    kernel's rounding may depend on where its operands start, and a seed's slice of a block starts
    where the block puts it."""
    if x.is_contiguous() and x.data_ptr() % 64 == 0:
        return x
    return torch.empty(x.shape, dtype=x.dtype, device=x.device).copy_(x)


def bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` per seed (``[S, M, K] @ [S, K, N]``) with a result that does not depend on the batch size S.

    ``torch.bmm`` runs one GEMM per seed, but for narrow results (N of 5 or 1 with M in the
    hundreds, or a 5 x 5 result of a long contraction) MKL's batched GEMM picks another kernel for
    another batch size, and a seed's numbers then change with its block (measured on this project's
    CPUs).  So: outer products (K = 1) are elementwise; wide products (M and N >= :data:`WIDE`) use ``torch.bmm``, which gives a seed the same
    numbers at every batch size; small or short ones (:data:`SMALL`, :data:`SHORT`) are elementwise
    products summed over the innermost axis (an order fixed by K); the others run one ``torch.mm``
    per seed on aligned operands, so what a seed's GEMM sees is its own data and sizes
    (``tests/policies/neural/batched/test_batched_neural.py`` checks a seed's result file alone and in a block)."""
    M, K, N = a.shape[1], a.shape[2], b.shape[2]
    if K == 1:  # an outer product: one multiplication per element, the GEMM's value (and no GEMM's set-up)
        return a * b
    if min(M, N) >= WIDE:
        return torch.bmm(a, b)
    if M * N * K <= SMALL or N * K <= SHORT:
        return (a.contiguous()[:, :, None, :] * b.transpose(1, 2).contiguous()[:, None, :, :]).sum(-1)
    return torch.stack([torch.mm(_aligned(a[s]), _aligned(b[s])) for s in range(a.shape[0])])


def weights_of(params: torch.Tensor, offsets: Sequence[int], shapes: Sequence[tuple[int, int]]) -> list[torch.Tensor]:
    """The weight matrices ``[S, r, c]`` of stacked flat parameter vectors ``params`` ``[S, p]``."""
    S = params.shape[0]
    return [params[:, a:b].reshape(S, *shape) for a, b, shape in zip(offsets[:-1], offsets[1:], shapes)]


def mlp_forward(
    mats: Sequence[torch.Tensor], x: torch.Tensor, scale: float, output_relu: bool
) -> tuple[list[torch.Tensor], torch.Tensor]:
    """:meth:`~.nets.MLP.forward` of embedded inputs ``x`` ``[S, n, d_in]`` under stacked weights ``mats``:
    ``(hidden, out)`` with ``hidden[i]`` the input of layer i (``hidden[0] = x``) and ``out`` ``[S, n, D]``."""
    hidden = [x]
    for W in mats[:-1]:  # (a contiguous W^T: bmm with a transposed view is twice as slow)
        hidden.append(torch.relu(bmm(hidden[-1], W.transpose(1, 2).contiguous())))
    out = bmm(hidden[-1], mats[-1].transpose(1, 2).contiguous()) * scale
    if output_relu:
        out = torch.relu(out)
    return hidden, out


def relu_backward(g: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``g`` where the ReLU output ``out`` is positive, else 0 (``g * (out > 0)`` in one kernel, the one
    autograd uses)."""
    return torch.ops.aten.threshold_backward(g, out, 0.0)


def mlp_backward(mats: Sequence[torch.Tensor], hidden: Sequence[torch.Tensor], g: torch.Tensor) -> list[torch.Tensor]:
    """Gradients ``[S, r, c]`` of every weight matrix, given ``g`` ``[S, n, D]`` the gradient with respect to the
    output layer's pre-activation ``W_L h_{L-1}`` (the output scale and ReLU already applied by the caller)."""
    grads: list[torch.Tensor] = [None] * len(mats)  # type: ignore[list-item]
    for i in range(len(mats) - 1, -1, -1):
        if g.shape[2] == 1:  # a scalar output: h^T g, a matrix-vector product, elementwise whatever the rows
            # (bmm's elementwise form, which it takes for short products: one seed at a time for a long one
            # costs a few dozen small operations per step, most of a step at n in the hundreds)
            grads[i] = (hidden[i].transpose(1, 2).contiguous() * g.transpose(1, 2)).sum(2)[:, None, :]
        else:
            grads[i] = bmm(hidden[i].transpose(1, 2), g).transpose(1, 2)
        if i:
            g = relu_backward(bmm(g, mats[i]), hidden[i])
    return grads


def mlp_arm_backprop(
    mats: Sequence[torch.Tensor], x: torch.Tensor, scale: float
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Per row of the embedded inputs ``x`` ``[S, n, d_in]`` of a scalar network without output ReLU: each
    layer's input ``hidden[i]`` ``[S, n, c_i]`` and back-propagated signal ``delta[i]`` ``[S, n, r_i]``, whose
    outer product ``delta_i h_i^T`` is the gradient of layer i's weights (:func:`mlp_arm_gradients`).

    ``delta_L = sqrt(m)`` (the output scale) and ``delta_{i-1} = (delta_i W_i) * 1[h_{i-1} > 0]`` —
    elementwise products and per-seed products (:func:`bmm`)."""
    hidden, _ = mlp_forward(mats, x, scale, False)
    S, n = x.shape[:2]
    deltas: list[torch.Tensor] = [None] * len(mats)  # type: ignore[list-item]
    deltas[-1] = torch.full((S, n, 1), scale, dtype=x.dtype, device=x.device)
    for i in range(len(mats) - 1, 0, -1):
        deltas[i - 1] = relu_backward(bmm(deltas[i], mats[i]), hidden[i])
    return hidden, deltas


def mlp_arm_gradients(mats: Sequence[torch.Tensor], x: torch.Tensor, scale: float) -> torch.Tensor:
    """:meth:`~.nets.MLP.gradients` of a scalar network without output ReLU: ``g(x; theta)`` ``[S, n, p]`` for
    every row of the embedded inputs ``x`` ``[S, n, d_in]`` (one gradient per arm, not summed), laid out as
    :class:`~.nets.MLP`'s flat parameter vector (:func:`mlp_arm_backprop`)."""
    return outer_gradients(*mlp_arm_backprop(mats, x, scale))


def outer_gradients(hidden: Sequence[torch.Tensor], deltas: Sequence[torch.Tensor]) -> torch.Tensor:
    """The flat gradients ``[S, n, p]``: layer by layer the outer products ``delta_i h_i^T``, row-major."""
    S, n = hidden[0].shape[:2]
    return torch.cat([(d[:, :, :, None] * h[:, :, None, :]).reshape(S, n, -1) for h, d in zip(hidden, deltas)], dim=2)


def gradient_forms(
    hidden: Sequence[torch.Tensor],
    deltas: Sequence[torch.Tensor],
    offsets: Sequence[int],
    weights: torch.Tensor,
    direction: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per row, without forming the gradients ``g`` ``[S, n, p]``: ``sum_j w_j g_j^2`` for the flat weights
    ``weights`` ``[S, p]`` (a diagonal quadratic form, e.g. ``diag(M)^{-1}``) and, given ``direction``
    ``[S, p]``, ``g^T direction``.  Layer i's block of g is ``delta_i h_i^T``, so its share is
    ``sum_j delta_ij^2 (W_i (h_i^2)^T)_j`` and ``sum_j delta_ij (D_i h_i^T)_j`` with ``W_i``, ``D_i`` the block
    of ``weights`` / ``direction`` as an ``r x c`` matrix: two per-seed products per layer instead of
    O(n p) memory traffic.  Returns ``[S, n]`` tensors (the linear form None without a direction)."""
    S = weights.shape[0]
    quad = lin = None
    for (a, b), h, d in zip(zip(offsets[:-1], offsets[1:]), hidden, deltas):
        r, c = d.shape[2], h.shape[2]
        block = weights[:, a:b].reshape(S, r, c).transpose(1, 2).contiguous()
        part = (d * d * bmm(h * h, block)).sum(2)
        quad = part if quad is None else quad + part
        if direction is not None:
            block = direction[:, a:b].reshape(S, r, c).transpose(1, 2).contiguous()
            part = (d * bmm(h, block)).sum(2)
            lin = part if lin is None else lin + part
    return quad, lin


def softplus_grad(z: torch.Tensor) -> torch.Tensor:
    """``d softplus(z) / dz`` as autograd computes it for ``F.softplus`` (beta 1, threshold 20):
    ``e^z / (e^z + 1)``, and exactly 1 above the threshold; rows ``[S, n]`` (:func:`rowwise`)."""
    e = rowwise(torch.exp, z)
    return torch.where(z > 20.0, torch.ones_like(z), e / (e + 1.0))


@functools.lru_cache(maxsize=None)
def adam_corrections(lr: float, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Adam's bias corrections ``lr / (1 - b1^j)`` and ``sqrt(1 - b2^j)`` for the step counts ``j``, on the device:
    row j holds step ``max(j, 1)``'s, in Python floats as the reference computes them (a pow on an ``[S]``
    tensor would round by S: :func:`rowwise`), up to the first step J at which ``1 - b^j`` is 1 for both betas;
    every later step's corrections are row J's (``lr`` and 1), so a step count indexes row ``min(j, J)``."""
    b1, b2 = ADAM_BETAS
    steps = [1]  # row 0: a seed that has not stepped yet (masked out)
    while 1 - b1 ** steps[-1] != 1.0 or 1 - b2 ** steps[-1] != 1.0:
        steps.append(len(steps))
    c1 = torch.tensor([lr / (1 - b1**j) for j in steps], dtype=dtype, device=device)
    c2 = torch.tensor([math.sqrt(1 - b2**j) for j in steps], dtype=dtype, device=device)
    return c1, c2


def adam_step(
    theta: torch.Tensor,
    grad: torch.Tensor,
    m: torch.Tensor,
    v: torch.Tensor,
    k: torch.Tensor,
    lr: float,
    mask: torch.Tensor,
) -> None:
    """In place, for the seeds in ``mask`` ``[S]``: :func:`~.training.adam_step` (torch.optim.Adam's rule) with
    per-seed step counts ``k`` ``[S]`` (incremented here); the other seeds are left unchanged.  The bias
    corrections are gathered from :func:`adam_corrections` on the device (no host read of ``k``)."""
    b1, b2 = ADAM_BETAS
    k_new = k + mask.to(k.dtype)
    m_new = m + (1 - b1) * (grad - m)
    v_new = v * b2 + (1 - b2) * grad * grad
    c1_table, c2_table = adam_corrections(lr, theta.dtype, theta.device)
    row = torch.clamp(k_new, max=len(c1_table) - 1)
    c1, c2 = c1_table[row][:, None], c2_table[row][:, None]
    theta_new = theta - c1 * m_new / (torch.sqrt(v_new) / c2 + ADAM_EPS)
    rows = mask[:, None]
    theta.copy_(torch.where(rows, theta_new, theta))
    m.copy_(torch.where(rows, m_new, m))
    v.copy_(torch.where(rows, v_new, v))
    k.copy_(k_new)


class NetworkBlock(BatchedPolicy):
    """The members' networks of a block, the base of every family's engine: the member ``policies``, the
    network and trainer they share the settings of (the first member's), the ``device`` (the members'
    ``device`` parameter), and stacked on the seed axis each member's current parameters ``params`` ``[S, p]``
    (a copy), its regulariser's centre ``centre``, and Adam's moments ``m``, ``v`` and step counts ``k`` (zero)."""

    def __init__(self, policies: Sequence[Policy]):
        first = policies[0]
        self.policies = list(policies)
        self.S = len(policies)
        self.device = torch.device(first.device)
        self.net, self.trainer = first.net, first.trainer
        self.params = torch.stack([pol.trainer.current for pol in policies]).to(self.device).clone()
        self.centre = torch.stack([pol.trainer.centre for pol in policies]).to(self.device)
        self.m, self.v = torch.zeros_like(self.params), torch.zeros_like(self.params)
        self.k = torch.zeros(self.S, dtype=torch.int64, device=self.device)

    def adam_step(self, grad: torch.Tensor, mask: torch.Tensor) -> None:
        """One Adam step (:func:`adam_step`) on ``params`` for the members in ``mask``, at the trainer's ``lr``."""
        adam_step(self.params, grad, self.m, self.v, self.k, self.trainer.lr, mask)


def sherman_morrison(inverse: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mask: torch.Tensor) -> None:
    """In place, for the seeds in ``mask``: ``inverse`` ``[S, D, D]`` becomes ``(V + w x x^T)^{-1}``
    (:func:`~banditbench.policies.linalg.sherman_morrison`), ``x`` ``[S, D]``, ``weight`` ``[S]``."""
    v = bmm(inverse, x[:, :, None])[:, :, 0]
    q = (x * v).sum(1)
    c = weight / (1.0 + weight * q)
    new = inverse - c[:, None, None] * (v[:, :, None] * v[:, None, :])
    inverse.copy_(torch.where(mask[:, None, None], new, inverse))


def sherman_morrison_all(
    inverse: torch.Tensor, x: torch.Tensor, weight: float = 1.0, v: torch.Tensor | None = None
) -> None:
    """In place, for every seed: ``inverse`` ``[S, D, D]`` becomes ``(V + w x x^T)^{-1}`` — :func:`sherman_morrison`
    without a mask, for large D (the p x p inverses of full-gradient exploration): the rank-one term is
    subtracted elementwise in place (``addcmul_``), with no ``[S, D, D]`` temporaries.  ``v`` is ``V^{-1} x``
    ``[S, D]`` where the caller has it (it is then not recomputed: one pass over the inverses less)."""
    if v is None:
        v = bmm(inverse, x[:, :, None])[:, :, 0]
    c = weight / (1.0 + weight * (x * v).sum(1))
    inverse.addcmul_((c[:, None] * v)[:, :, None], v[:, None, :], value=-1.0)


#: elements per iteration of ATen's vectorised elementwise loops (two AVX-512 float32 vectors)
VECTOR_BLOCK = 32


def rowwise(fn, *xs: torch.Tensor) -> torch.Tensor:
    """``fn(*xs)`` for a transcendental elementwise ``fn`` (exp, tanh, sigmoid, logaddexp) on ``[S, n]`` tensors,
    computed on rows zero-padded to a multiple of :data:`VECTOR_BLOCK`.

    ATen evaluates such functions with vector code (SLEEF) and the elements left over after the last
    full vector block with scalar code, which rounds differently; on a contiguous ``[S, n]`` tensor
    which elements are left over depends on S.  With padded rows every element goes through the
    vector code whatever S is, so a seed's values do not depend on its block."""
    n = xs[0].shape[-1]
    pad = (-n) % VECTOR_BLOCK
    if pad:
        xs = tuple(torch.nn.functional.pad(x, (0, pad)) for x in xs)
    out = fn(*xs)
    return out[..., :n] if pad else out


def _sigmoid(z: torch.Tensor) -> torch.Tensor:
    """:func:`banditbench.numerics.sigmoid.sigmoid`: ``(1 + tanh(z / 2)) / 2``, rows ``[S, n]`` (:func:`rowwise`)."""
    return 0.5 * (1.0 + rowwise(torch.tanh, 0.5 * z))


def logistic_loss(
    theta: torch.Tensor, X: torch.Tensor, labels: torch.Tensor, lam: float, w: torch.Tensor, centre: torch.Tensor | None
) -> torch.Tensor:
    """:func:`banditbench.numerics.logistic_mle.logistic_loss` per seed: ``[S]``."""
    z = bmm(X, theta[:, :, None])[:, :, 0]
    per = (rowwise(torch.logaddexp, torch.zeros_like(z), z) - labels * z) * w
    gap = theta if centre is None else theta - centre
    return per.sum(1) + 0.5 * lam * (gap * gap).sum(1)


def fit_logistic(
    X: torch.Tensor,
    labels: torch.Tensor,
    lam: float,
    theta0: torch.Tensor,
    w: torch.Tensor,
    mask: torch.Tensor,
    max_iter: int = 50,
    tol: float = 1e-8,
    centre: torch.Tensor | None = None,
) -> torch.Tensor:
    """:func:`banditbench.numerics.logistic_mle.fit_logistic` for the seeds in ``mask`` (float64): ``X`` ``[S, n, D]``,
    ``labels``, ``w`` ``[S, n]`` (padding rows weight 0), starts ``theta0`` ``[S, D]``; returns ``[S, D]``
    (``theta0`` for the seeds outside ``mask``).

    Each seed follows its own damped-Newton path: it stops when its gradient's max-norm is below
    ``tol`` and backtracks by its own step length; the loop runs until every seed has stopped or
    ``max_iter`` steps.  Mirrors the reference line by line (every loss it compares, the one after a
    full step included, is the centred objective).  The host reads once per Newton step (is a seed still
    active, must one backtrack past the full step?), so at most ``max_iter`` times per fit: the full step's
    loss is the backtracking's first trial (``eta = 1``), and when some seed must go on, every halving down to
    the reference's last (``eta < 1e-10``) is tried without a read, each seed keeping its first acceptable one."""
    theta = theta0.clone()
    loss = logistic_loss(theta, X, labels, lam, w, centre)
    active = mask.clone()
    eye = torch.eye(X.shape[2], dtype=X.dtype, device=X.device)
    gap_of = (lambda th: th) if centre is None else (lambda th: th - centre)
    for _ in range(max_iter):
        z = bmm(X, theta[:, :, None])[:, :, 0]
        p = _sigmoid(z)
        grad = bmm(X.transpose(1, 2), (w * (p - labels))[:, :, None])[:, :, 0] + lam * gap_of(theta)
        active = active & ~(grad.abs().amax(1) < tol)
        hess = bmm(X.transpose(1, 2) * (w * p * (1.0 - p))[:, None, :], X) + lam * eye
        step = torch.linalg.solve_ex(hess, grad[:, :, None])[0][:, :, 0]  # (solve's error check would read)
        full = active & ((grad * step).sum(1) <= LOSS_RESOLUTION * loss.abs())
        theta_full = theta - step
        loss_full = logistic_loss(theta_full, X, labels, lam, w, centre)
        search = active & ~full
        accepted = search & (loss_full <= loss)
        open_ = search & ~accepted
        any_active, any_open = torch.stack([active.any(), open_.any()]).cpu().tolist()  # the step's one read
        if not any_active:
            break
        cand_best = torch.where(accepted[:, None], theta_full, theta)
        loss_best = torch.where(accepted, loss_full, loss)
        eta = 1.0
        while any_open and eta >= 1e-10:  # the reference halves until it accepts, at the latest below 1e-10
            eta *= 0.5
            cand = theta - eta * step
            new_loss = logistic_loss(cand, X, labels, lam, w, centre)
            stop = open_ & ((new_loss <= loss) | (eta < 1e-10))
            cand_best = torch.where(stop[:, None], cand, cand_best)
            loss_best = torch.where(stop, new_loss, loss_best)
            open_ = open_ & ~stop
        theta = torch.where(full[:, None], theta_full, torch.where(search[:, None], cand_best, theta))
        loss = torch.where(full, loss_full, torch.where(search, loss_best, loss))
    return theta


def to_host(*tensors: torch.Tensor) -> list[np.ndarray]:
    """The values of float64 ``tensors`` ``[S, ...]`` on the host in one read (on a GPU: one transfer, one wait for
    the device): flattened per seed side by side, copied, and split back into numpy arrays of their shapes
    (views of the one copy)."""
    S = tensors[0].shape[0]
    host = torch.cat([t.reshape(S, -1) for t in tensors], dim=1).cpu().numpy()
    arrays, start = [], 0
    for t in tensors:
        size = math.prod(t.shape[1:])
        arrays.append(host[:, start : start + size].reshape(t.shape))
        start += size
    return arrays


def inverse_of_ridge(lam: float, D: int) -> torch.Tensor:
    """``(lam I)^{-1}`` as the reference computes it (``np.linalg.inv``), float64."""
    return torch.from_numpy(np.linalg.inv(lam * np.eye(D)))
