"""The trainer shared by the neural families: warm-started gradient steps on a weighted logistic loss.

Every neural loss in seeds 000–002 has the form

    L(theta) = sum_s w_s [softplus(z_s(theta)) - a_s z_s(theta)] + lam/2 ||theta - c||^2,

with ``z_s`` the network's logit of sample s (a predicted preference
difference ``h(x_{s,1}) - h(x_{s,2})`` for dueling, ``h(x_s)`` for logistic
rewards), ``a_s`` its (possibly IPW-weighted or imputed) label and ``w_s`` a
per-sample weight; ``softplus(z) - a z`` is the cross-entropy
``-[a log mu(z) + (1 - a) log mu(-z)]`` written so that it stays convex for
labels above one.  The centre ``c`` is ``theta_0`` (seed 000 eq. 7) or 0; the
ridge may cover only part of the parameter vector (``penalised``: seed 001 eq. 4
regularises the last layer ``theta`` and not the feature weights ``W``).

Seeds 000–002 do not prescribe the optimiser; by default (``optimizer="adam"``)
we use Adam (learning rate ``lr``, as seeds 001 and 002 use in practice)
warm-started from the previous parameters, with its moment estimates kept across
updates, and ``steps`` full-batch steps per update.  ``optimizer="gd"`` takes
plain gradient-descent steps ``theta <- theta - lr grad L(theta)`` instead (seed
002 Sec. 7: "100 gradient descent steps per update"; no state kept between
updates).  ``batch=B`` (default None: full batch) computes each step's data term
on ``B`` samples drawn uniformly without replacement from the ``n`` available
(all of them while ``n <= B``) with the trainer's ``generator``; the ridge term
is taken whole at every step (the batch's loss is not rescaled by ``n / B``).  ``reduction="mean"``
divides the data term by the number of its samples (the mean cross-entropy of the NDB authors' code,
``F.binary_cross_entropy_with_logits``); the default ``"sum"`` is the sum above.
The schedule ``every`` is a number of rounds H (train when ``(t - 1) % H == 0``)
or ``"doubling"`` (train at t = 2, 4, 8, ...).

Two ways to take the steps: :meth:`Trainer.fit` differentiates the loss with
autograd and steps ``torch.optim.Adam``; :meth:`Trainer.fit_gradient` takes the
data term's gradient from the caller (a hand-written backward pass in numpy) and
applies torch's Adam update rule in numpy (:func:`adam_step`) — the same
iterates up to floating-point rounding, without autograd's and the optimiser's
per-operation overhead, which dominates on the tiny networks of seed 001.  A
trainer uses one of the two throughout (each keeps its own moment estimates).
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from ...errors import ConfigError


def check_schedule(every, where: str = "policy.params.train_every") -> None:
    if every != "doubling" and not (isinstance(every, int) and not isinstance(every, bool) and every >= 1):
        raise ConfigError(f"{where}: must be a positive integer or 'doubling', got {every!r}")


ADAM_BETAS, ADAM_EPS = (0.9, 0.999), 1e-8  # torch.optim.Adam's defaults
#: the optimisers a Trainer takes (module docstring)
OPTIMIZERS = ("adam", "gd")
#: the data term: the samples' sum or their mean (module docstring)
REDUCTIONS = ("sum", "mean")


def adam_step(theta: np.ndarray, grad: np.ndarray, m: np.ndarray, v: np.ndarray, k: int, lr: float) -> None:
    """In place: step ``k`` (from 1) of Adam on ``theta`` with moments ``m``, ``v`` — torch.optim.Adam's
    update (default betas and eps, no weight decay): ``theta -= lr / (1 - b1^k) * m / (sqrt(v) / sqrt(1 - b2^k) + eps)``."""
    b1, b2 = ADAM_BETAS
    m += (1 - b1) * (grad - m)
    v *= b2
    v += (1 - b2) * grad * grad
    denom = np.sqrt(v) / math.sqrt(1 - b2**k) + ADAM_EPS
    theta -= (lr / (1 - b1**k)) * m / denom


class Trainer:
    """Minimises the weighted logistic loss (module docstring) by warm-started Adam (or gradient-descent) steps."""

    def __init__(
        self,
        theta0: torch.Tensor,
        *,
        lam: float,
        lr: float,
        steps: int,
        every: int | str = 1,
        centre: str = "init",
        penalised: slice = slice(None),
        where: str = "policy.params",
        optimizer: str = "adam",
        batch: int | None = None,
        generator: torch.Generator | None = None,
        reduction: str = "sum",
    ):
        if not lam > 0:
            raise ConfigError(f"{where}.lam: must be positive, got {lam}")
        if not lr > 0:
            raise ConfigError(f"{where}.lr: must be positive, got {lr}")
        if not (isinstance(steps, int) and steps >= 1):
            raise ConfigError(f"{where}.train_steps: must be a positive integer, got {steps!r}")
        check_schedule(every, f"{where}.train_every")
        if centre not in ("init", "zero"):
            raise ConfigError(f"{where}.regulariser_centre: must be 'init' or 'zero', got {centre!r}")
        if optimizer not in OPTIMIZERS:
            raise ConfigError(f"{where}.optimizer: {optimizer!r} is not one of {list(OPTIMIZERS)}")
        if reduction not in REDUCTIONS:
            raise ConfigError(f"{where}.loss_reduction: {reduction!r} is not one of {list(REDUCTIONS)}")
        if batch is not None:
            if not (isinstance(batch, int) and not isinstance(batch, bool) and batch >= 1):
                raise ConfigError(f"{where}.minibatch: must be a positive integer or null, got {batch!r}")
            if generator is None:
                raise ValueError("Trainer: minibatches need a torch.Generator (generator=...)")
        self.optimizer_kind, self.batch, self.generator, self.reduction = optimizer, batch, generator, reduction
        self.lam, self.lr, self.steps, self.every, self.penalised = lam, lr, steps, every, penalised
        self.centre = theta0.clone() if centre == "init" else torch.zeros_like(theta0)
        self.theta = theta0.clone().requires_grad_(True)
        self._moments: tuple[np.ndarray, np.ndarray] | None = None  # fit_gradient's Adam state
        self._k = 0

    @functools.cached_property
    def optimizer(self) -> torch.optim.Optimizer:
        """The torch optimiser of :meth:`fit`, made when first used: constructing one imports torch's compiler
        stack (about 1.5 s of CPU, issue 48), which the seed-batched engines and :meth:`fit_gradient` never need."""
        if self.optimizer_kind == "adam":
            return torch.optim.Adam([self.theta], lr=self.lr)
        return torch.optim.SGD([self.theta], lr=self.lr)  # SGD without momentum: plain GD

    def due(self, t: int) -> bool:
        """Whether the schedule trains at the start of round ``t``."""
        if self.every == "doubling":
            return t >= 2 and t & (t - 1) == 0
        return (t - 1) % self.every == 0

    def loss(self, logits: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
        per = F.softplus(logits) - labels * logits
        if weights is not None:
            per = per * weights
        gap = (self.theta - self.centre)[self.penalised]
        data = per.sum() if self.reduction == "sum" else per.mean()
        return data + 0.5 * self.lam * gap.square().sum()

    def fit(
        self,
        logits_fn: Callable[[torch.Tensor], torch.Tensor],
        labels: torch.Tensor,
        weights: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Run ``steps`` optimiser steps; ``logits_fn(theta)`` gives the samples' logits. Returns theta (detached).

        With ``batch`` set, each step's data term covers ``batch`` samples drawn without replacement
        (:meth:`draw`); the logits of the others are computed and not used."""
        for _ in range(self.steps):
            self.optimizer.zero_grad(set_to_none=True)
            logits = logits_fn(self.theta)
            index = self.draw(len(labels))
            if index is None:
                loss = self.loss(logits, labels, weights)
            else:
                loss = self.loss(logits[index], labels[index], None if weights is None else weights[index])
            loss.backward()
            self.optimizer.step()
        return self.theta.detach()

    def draw(self, n: int) -> torch.Tensor | None:
        """The indices of one step's minibatch of ``n`` samples (None: all of them, full batch)."""
        if self.batch is None or n <= self.batch:
            return None
        return torch.randperm(n, generator=self.generator)[: self.batch]

    def fit_gradient(self, gradient: Callable[[np.ndarray], np.ndarray]) -> torch.Tensor:
        """Run ``steps`` Adam steps (:func:`adam_step`; plain ``theta -= lr grad`` with ``optimizer="gd"``) with
        ``gradient(theta)`` the gradient of the data term ``sum_s w_s [softplus(z_s) - a_s z_s]`` (divided by the
        samples' number with ``reduction="mean"``: the caller's to divide) at the numpy view of the parameters
        (the ridge is added here).  Full batch only.  Returns theta (detached)."""
        if self.batch is not None:
            raise ValueError("Trainer.fit_gradient takes full-batch steps; use fit for minibatches")
        theta = self.theta.detach().numpy()  # shares the parameters' memory: updated in place
        if self._moments is None:
            self._moments = (np.zeros_like(theta), np.zeros_like(theta))
        centre = self.centre.numpy()[self.penalised]
        for _ in range(self.steps):
            grad = gradient(theta)
            grad[self.penalised] += self.lam * (theta[self.penalised] - centre)
            if self.optimizer_kind == "gd":
                theta -= self.lr * grad
                continue
            self._k += 1
            adam_step(theta, grad, *self._moments, self._k, self.lr)
        return self.theta.detach()

    def assign(self, index: slice, values: torch.Tensor) -> None:
        """Overwrite part of the parameters in place (e.g. an exact refit of the last layer);
        the optimiser's moment estimates are kept."""
        with torch.no_grad():
            self.theta[index] = values

    @property
    def current(self) -> torch.Tensor:
        return self.theta.detach()
