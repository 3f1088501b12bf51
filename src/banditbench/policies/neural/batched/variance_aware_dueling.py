"""The seed-batched engine of NVLDB / NLDB: :class:`BatchedNeuralLinearDueling`.

Reference: ``banditbench.policies.neural.variance_aware_dueling._NeuralLinearDueling`` (NVLDB/NLDB).  Must
match: in float64 the same pairs up to near ties (rel 1e-6); in float32 the mean regret over 8 seeds
within 35 %; a seed's file bit-identical alone and in a block.  Checked by: the NVLDB tests of
``tests/policies/neural/batched/test_batched_neural.py``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from ....api import Policy
from ....errors import Diverged
from ....feedback import PreferenceFeedback
from ...pair_selection import pair_widths, select_pair
from . import ops as B


class BatchedNeuralLinearDueling(B.NetworkBlock):
    """Algorithm 1 for a block of S seeds in lockstep (:mod:`.batched`): the batched mirror of
    :class:`_NeuralLinearDueling`, line for line.

    Stacked along the seed axis: the parameters ``[W; theta]`` ``[S, p + D]``, Adam's moments and
    step counts, ``V^{-1}`` ``[S, D, D]`` (eq. 6), and the history (embedded arm pairs, outcomes,
    ``zeta^2``, ``Delta phi``, the arrived / weighted flags) ``[S, T, ...]``.  Per round, for all
    seeds at once: the ``train_steps`` Adam steps on eq. 4 (line 9; hand-written backward pass as
    ``backprop: manual``, whatever ``backprop`` says), the Newton refit of ``theta`` (line 10), eq. 5's
    ``zeta`` and V's Sherman–Morrison terms (lines 12–13), and the arms' features.  The pair rule
    (Sec. 4.2) runs per seed on that seed's numpy stream (:func:`select_pair`), as in the reference, on the
    features, ``theta`` and ``V^{-1}`` the host reads once per round; which rows are weighted the host keeps
    itself (it knows which outcomes arrived), so the refit's Newton steps are the round's only other reads.
    Eq. 4's sum runs over rows ``0 .. t - 2`` of every seed, those without a weighted outcome
    carrying weight 0 (block independence, :mod:`.batched`).

    The members may be any of the twelve NVLDB / NLDB classes (their ``SeedBatched.family``) with their own
    ``a``, ``epsilon``, ``zeta``, ``csym_sample`` and ``distinct_pair`` (``SeedBatched.per_member``): the pair
    rule is each member's on the host, eq. 5's ``zeta`` is set only for the variance-aware members and eq. 4's weights ``1/zeta^2``
    only for those with a weighted loss (``torch.where`` per member, so a member's numbers are those of a block
    of its own class)."""

    def __init__(self, policies: Sequence[Policy]):
        super().__init__(policies)
        first, S, dev = policies[0], self.S, self.device
        self.dtype, self.gram_mode = first.dtype, first.gram_mode
        self.refit_theta, self.newton_steps = first.refit_theta, first.newton_steps
        self.lam, self.last = first.lam, first.last
        # per member (the family's lockstep variants, ``SeedBatched.family``): the pair rule and its settings
        # (read on the host from each member's policy), eq. 5's weighting and its floor, the weighted loss
        self.variance_aware = torch.tensor([p.variance_aware for p in policies], device=dev)
        self.any_variance_aware = any(p.variance_aware for p in policies)
        self.epsilon = torch.tensor([p.epsilon for p in policies], dtype=torch.float64, device=dev)
        self.weighted_loss = torch.tensor([p.weighted_loss for p in policies], device=dev)
        self.any_weighted_loss = any(p.weighted_loss for p in policies)
        T, d = first.x_first.shape
        D = len(first.theta0)
        d_in = self.net.shapes[0][1]
        f = dict(device=dev)
        self.theta0 = torch.from_numpy(np.stack([p.theta0 for p in policies])).to(dev)  # float64
        self.inverse = torch.eye(D, dtype=torch.float64, **f).repeat(S, 1, 1) / self.lam  # V_0^{-1}
        self.reset_inverse = np.linalg.inv(self.lam * np.eye(D))  # gram: reset
        self.x_first = torch.zeros(S, T, d_in, dtype=self.dtype, **f)  # embedded arms
        self.x_second = torch.zeros(S, T, d_in, dtype=self.dtype, **f)
        self.dphi = torch.zeros(S, T, D, dtype=torch.float64, **f)
        self.labels = torch.zeros(S, T, dtype=torch.float64, **f)
        self.zeta2 = torch.from_numpy(np.stack([p.zeta2 for p in policies])).to(dev)  # NLDB: its constant
        self.weighted = torch.zeros(S, T, dtype=torch.bool, **f)
        self._arrived_np = np.zeros((S, T), dtype=bool)
        self._weighted_np = np.zeros((S, T), dtype=bool)  # the host's copy of ``weighted``: no read to decide on it
        self._labels_np = np.zeros((S, T))
        self._seeds = torch.arange(S, device=dev)

    # --- feedback -------------------------------------------------------------------
    def observe_all(self, t: int, arrived: Sequence[Sequence[PreferenceFeedback]]) -> None:
        for s, items in enumerate(arrived):
            for fb in items:
                self._labels_np[s, fb.round - 1] = fb.y
                self._arrived_np[s, fb.round - 1] = True

    # --- model ----------------------------------------------------------------------
    def _mats(self, params: torch.Tensor) -> list[torch.Tensor]:
        return B.weights_of(params, self.net.offsets, self.net.shapes)

    def _features(self, params: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``phi(x; W)`` ``[S, n, D]`` of embedded inputs ``x`` ``[S, n, d_in]``."""
        return B.mlp_forward(self._mats(params), x, self.net.scale, True)[1]

    def _pair_features(self, params: torch.Tensor, n: int) -> torch.Tensor:
        """``Delta phi`` ``[S, n, D]`` of rows ``0 .. n - 1`` under ``params`` (one forward pass)."""
        phi = self._features(params, torch.cat([self.x_first[:, :n], self.x_second[:, :n]], dim=1))
        return phi[:, :n] - phi[:, n:]

    def _gradient(self, params: torch.Tensor, x: torch.Tensor, labels: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """:meth:`_NeuralLinearDueling._gradient` for all seeds: ``[S, p + D]``."""
        net, n = self.net, x.shape[1] // 2
        mats = self._mats(params)
        theta = params[:, self.last]
        hidden, phi = B.mlp_forward(mats, x, net.scale, True)
        dphi = phi[:, :n] - phi[:, n:]
        dz = (B.rowwise(torch.sigmoid, B.bmm(dphi, theta[:, :, None])[:, :, 0]) - labels) * w
        grad_theta = B.bmm(dphi.transpose(1, 2), dz[:, :, None])[:, :, 0]
        g1 = dz[:, :, None] * (net.scale * theta)[:, None, :]
        g = B.relu_backward(torch.cat([g1, -g1], dim=1), phi)
        grads = B.mlp_backward(mats, hidden, g)
        return torch.cat([gr.reshape(self.S, -1) for gr in grads] + [grad_theta], dim=1)

    def _train(self, n: int, mask: torch.Tensor) -> None:
        """Lines 9–10 for the seeds in ``mask``, on rows ``0 .. n - 1`` (weight 0 where not yet weighted)."""
        ready = self.weighted[:, :n]
        if self.any_weighted_loss:  # 1 / zeta^2 for the members that weight eq. 4's terms, 1 for the others
            w64 = torch.where(ready & self.weighted_loss[:, None], 1.0 / self.zeta2[:, :n], ready.to(torch.float64))
        else:
            w64 = ready.to(torch.float64)
        w = w64.to(self.dtype)
        labels = self.labels[:, :n].to(self.dtype)
        x = torch.cat([self.x_first[:, :n], self.x_second[:, :n]], dim=1)
        last, lam = self.last, self.lam
        for _ in range(self.trainer.steps):
            grad = self._gradient(self.params, x, labels, w)
            grad[:, last] += lam * (self.params[:, last] - self.centre[:, last])
            self.adam_step(grad, mask)
        if self.refit_theta:
            X = self._pair_features(self.params, n).double()
            theta = B.fit_logistic(
                X,
                self.labels[:, :n],
                lam,
                self.params[:, last].double(),
                w64,
                mask,
                max_iter=self.newton_steps,
                centre=self.theta0,
            )
            self.params[:, last] = torch.where(mask[:, None], theta.to(self.dtype), self.params[:, last])

    def _set_weights(self, n: int, pending: np.ndarray) -> None:
        """Lines 12–13 for the rows ``pending`` ``[S, n]``: eq. 5's ``zeta`` under the current parameters,
        then ``V += Delta phi Delta phi^T / zeta^2`` row by row in round order (incremental V).  Only the
        pending rows pass through the network, one row per seed at a time (``[S, 2, d]``, the same shape
        alone or in a block), so a round costs O(1) in t, as in the single-seed path.  ``pending`` is the host's
        (it knows which outcomes arrived), so the number of row steps needs no read."""
        steps = int(pending.sum(1).max())  # the most rows one seed weights
        rows = torch.from_numpy(pending).to(self.device)
        counts = rows.sum(1)
        order = torch.argsort((~rows).to(torch.int8), dim=1, stable=True)  # pending rows first, in order
        if self.any_variance_aware:  # eq. 5 for the NVLDB members; NLDB's constant zeta stays
            params, seeds = self.params, self._seeds
            for j in range(steps):
                row = order[:, j]
                phi = self._features(params, torch.stack([self.x_first[seeds, row], self.x_second[seeds, row]], dim=1))
                delta_f = B.bmm(phi[:, :1] - phi[:, 1:], params[:, self.last, None])[:, :, 0].double()
                p = B._sigmoid(delta_f)[:, 0]
                zeta2 = torch.maximum(torch.sqrt(p * (1.0 - p)), self.epsilon) ** 2
                set_now = (j < counts) & self.variance_aware
                self.zeta2[seeds, row] = torch.where(set_now, zeta2, self.zeta2[seeds, row])
        if self.gram_mode == "incremental":
            for j in range(steps):
                row = order[:, j]
                x = self.dphi[self._seeds, row]
                B.sherman_morrison(self.inverse, x, 1.0 / self.zeta2[self._seeds, row], j < counts)
        self.weighted[:, :n] |= rows
        self._weighted_np[:, :n] |= pending

    def _inverses(self, n: int) -> torch.Tensor | None:
        """``V_{t-1}^{-1}`` of every seed as ``gram`` says, ``[S, D, D]`` float64 on the device; None where it is
        ``(lam I)^{-1}`` for every seed (``gram: reset``, or no seed has a weighted row yet)."""
        if self.gram_mode == "incremental":
            return self.inverse
        if self.gram_mode == "reset" or not self._weighted_np[:, :n].any():
            return None
        X = self._pair_features(self.params, n).double()
        Xt = torch.where(self.weighted[:, None, :n], X.transpose(1, 2) / self.zeta2[:, None, :n], 0.0)
        D = X.shape[2]
        V = self.lam * torch.eye(D, dtype=torch.float64, device=X.device) + B.bmm(Xt, X)
        return torch.linalg.inv_ex(V)[0]  # (inv's error check would read)

    # --- selection --------------------------------------------------------------------
    @torch.no_grad()
    def act_all(self, t: int, contexts: Sequence[np.ndarray]) -> list[tuple[int, int]]:
        n = t - 1  # rows of rounds 1 .. t - 1
        if n:
            self.labels[:, :n] = torch.from_numpy(self._labels_np[:, :n]).to(self.device)
            if self.trainer.due(t) and self._weighted_np[:, :n].any():
                self._train(n, self.weighted[:, :n].any(1))
            pending = self._arrived_np[:, :n] & ~self._weighted_np[:, :n]
            if pending.any():
                self._set_weights(n, pending)
        x = torch.from_numpy(np.stack(contexts)).to(self.dtype).to(self.device)
        xe = self.net.embed(x)
        phi64 = self._features(self.params, xe).double()
        theta64, inverse = self.params[:, self.last].double(), self._inverses(n)
        if inverse is None:
            phi, theta = B.to_host(phi64, theta64)  # the round's one read
            inverses = np.broadcast_to(self.reset_inverse, (self.S, *self.reset_inverse.shape))
        else:
            phi, theta, inverses = B.to_host(phi64, theta64, inverse)  # the round's one read
        actions = []
        for s, policy in enumerate(self.policies):
            u = phi[s] @ theta[s]
            widths = pair_widths(phi[s], inverses[s])
            try:
                pair = select_pair(
                    policy.strategy, u, widths, policy.a, policy.rng, t, policy.csym_sample, policy.distinct_pair
                )
            except Diverged as err:  # this member is not played on; the others are
                self.member_diverged(s, err)
                pair = (0, 0)
            actions.append(pair)
        played = torch.tensor(actions, device=self.device)
        i1, i2 = played[:, 0], played[:, 1]
        self.x_first[:, t - 1] = xe[self._seeds, i1]
        self.x_second[:, t - 1] = xe[self._seeds, i2]
        self.dphi[:, t - 1] = phi64[self._seeds, i1] - phi64[self._seeds, i2]
        return actions
