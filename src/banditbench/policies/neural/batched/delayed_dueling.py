"""The seed-batched engine of NDB-DF and its baselines (and NDB-UCB / NDB-TS): :class:`BatchedNeuralDueling`.

Reference: ``banditbench.policies.neural.delayed_dueling._NeuralDuelingBase`` (NDB-DF and its baselines;
``neural_dueling.NDBUCB`` / ``NDBTS``).  Must match: every round's pair up to a near tie (rel 1e-6) or a
heuristic's first imputed-only training round; building blocks rel 1e-12; mean regret 5 %; a seed's file
bit-identical alone and in a block.  Checked by: ``tests/policies/neural/batched/test_batched_neural_dueling.py``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

from ....api import Policy
from ....errors import ConfigError, Diverged
from ....feedback import PreferenceFeedback
from . import ops as B

F64 = torch.float64
#: rank-one updates of the full ``V^{-1}`` held back before they are applied to it at once (:meth:`_update`)
DEFERRED = 16


class BatchedNeuralDueling(B.NetworkBlock):
    """Algorithm 2 of seed 000 (and NDB-UCB / NDB-TS) for a block of S seeds in lockstep (:mod:`.batched`):
    the batched mirror of :class:`_NeuralDuelingBase`, line for line.

    Stacked along the seed axis: the parameters ``theta`` ``[S, p]`` and their centre ``theta_0``, Adam's
    moments and step counts, the confidence state of eq. 8 (``V^{-1}`` ``[S, p, p]``, on the features' subspace
    under the symmetric initialisation (:meth:`_arm_features`), its diagonal ``[S, p]``
    or, with ``fixed_arms``, the arm kernel ``Phi V^{-1} Phi^T`` ``[S, K, K]``), and the history (the played
    pairs' network inputs or arm indices, outcomes, arrived flags) ``[S, T, ...]``.  Per round, for all seeds
    at once: the training set of the delay strategy (:mod:`banditbench.policies.delayed_labels`) as labels
    and weights on rows ``0 .. t - 2`` (rows outside the set carrying weight 0: block independence,
    :mod:`.batched`), ``train_steps`` Adam steps on eq. 7 with the backward pass written out, the scores
    ``h(x; theta_t)`` and greedy first arms (eq. 9, on the device), the gradient features
    ``g(x; theta_0) / sqrt(m)`` and widths ``||phi - phi_{t,1}||_{V^{-1}}`` of eq. 12, and V's update (eq. 8,
    line 11).  The second arm (eq. 10, or NDB-TS's draw) is chosen per seed by the seed's own policy on its own
    numpy stream, from the scores and widths the host reads once per round (where it also checks that the
    scores are finite).  The members may be of any class of the NDB family (its ``SeedBatched.family``): each
    member's delay strategy picks its training set (each strategy present in the block computed for all
    members, kept for its own by ``torch.where``), and its second-arm rule and ``nu_T`` are its policy's.

    Where the reference's rounding is cheap to follow it is followed (``F.softplus``'s gradient,
    torch.optim.Adam's rule, the Sherman–Morrison and arm-kernel updates term by term); the sums run in
    other orders, so the two paths make the same decisions except near ties."""

    def __init__(self, policies: Sequence[Policy]):
        super().__init__(policies)
        first, S, dev = policies[0], self.S, self.device
        # each member's delay strategy (its class's: the lockstep family mixes NDB-DF, -Ignore, -Heuristic, ...)
        strategies = [pol.delay_strategy for pol in policies]
        self.strategies = {
            name: torch.tensor([s == name for s in strategies], device=dev) for name in dict.fromkeys(strategies)
        }
        self.fixed_arms, self.confidence = first.fixed_arms, first.confidence
        self.reg = first.lam / first.kappa_mu  # V_0 = (lam / kappa_mu) I
        self.rho, self.window = first.history.rho, first.history.window
        # the network (parameters, Adam's state, history of inputs and labels) in the members' precision, the
        # confidence side (features at theta_0, V^{-1}, widths) in float64
        self.dtype = first.dtype
        T, p, f = first.horizon, self.net.n_params, dict(dtype=self.dtype, device=dev)
        # the symmetric input [x; x] / sqrt(2) folded into the first layer (:meth:`_mats`), and V kept on the
        # subspace of the gradient features it makes (:meth:`_arm_features`)
        self.folded = self.net.symmetric
        self.halved = self.folded and self.confidence == "full"
        self.mats0 = self._mats(self.centre.to(F64))  # the centre is theta_0 (eq. 7), widened exactly
        self.y = torch.zeros(S, T, **f)
        self.arrived = torch.zeros(S, T, dtype=torch.bool, device=dev)
        self._y_np, self._arrived_np = np.zeros((S, T)), np.zeros((S, T), dtype=bool)
        self._seeds = torch.arange(S, device=dev)
        if self.fixed_arms:
            self.played = torch.zeros(S, T, 2, dtype=torch.int64, device=dev)  # set in round 1, with the arms
            self.arm_sets: list[np.ndarray] | None = None
        else:
            d_in = self.net.input_dim if self.folded else self.net.shapes[0][1]
            self.x_first = torch.zeros(S, T, d_in, **f)  # the network's inputs
            self.x_second = torch.zeros(S, T, d_in, **f)
            if self.halved:
                p = sum(a * b for a, b in self._paired_sizes())
            f64 = dict(dtype=F64, device=dev)
            self.gram = (
                (torch.eye(p, **f64) / self.reg).repeat(S, 1, 1)
                if self.confidence == "full"
                else torch.full((S, p), self.reg, **f64)
            )
            if self.confidence == "full":  # V^{-1} = gram - U^T diag(c) U, the held-back updates (:meth:`_update`)
                self.held_u = torch.zeros(S, DEFERRED, p, **f64)
                self.held_c = torch.zeros(S, 1, DEFERRED, **f64)
                self.n_held = 0
        for pol in policies:  # the block carries V: the single-seed policies' own p x p copies go
            pol.gram = None

    # --- feedback -------------------------------------------------------------------
    def observe_all(self, t: int, arrived: Sequence[Sequence[PreferenceFeedback]]) -> None:
        for s, items in enumerate(arrived):
            for fb in items:
                self._y_np[s, fb.round - 1] = fb.y
                self._arrived_np[s, fb.round - 1] = True

    # --- model ----------------------------------------------------------------------
    def _mats(self, params: torch.Tensor) -> list[torch.Tensor]:
        """The weight matrices ``[S, r, c]`` of ``params``; under the symmetric initialisation the first
        layer acts on the raw arm: ``W_1 [x; x] / sqrt(2) = ((W_1^a + W_1^b) / sqrt(2)) x`` with ``W_1^a``,
        ``W_1^b`` its two column halves (half the first layer's flops; the same numbers up to rounding)."""
        mats = B.weights_of(params, self.net.offsets, self.net.shapes)
        if self.folded:
            W, d = mats[0], self.net.input_dim
            mats[0] = (W[:, :, :d] + W[:, :, d:]) / math.sqrt(2.0)
        return mats

    def _input(self, raw: torch.Tensor) -> torch.Tensor:
        """The network's input for arms ``raw`` ``[S, K, d]`` under :meth:`_mats`: the arms themselves when the
        first layer is folded, else :meth:`~.nets.MLP.embed`."""
        return raw if self.folded else self.net.embed(raw)

    def _inputs(self, n: int) -> torch.Tensor:
        """The network's inputs for the logits of rows ``0 .. n - 1``: the arm set (``fixed_arms``) or the
        played first arms stacked on the second ones."""
        if self.fixed_arms:
            return self.arms
        return torch.cat([self.x_first[:, :n], self.x_second[:, :n]], dim=1)

    def _logits(self, h: torch.Tensor, n: int) -> torch.Tensor:
        """``Delta h_s = h(x_{s,1}) - h(x_{s,2})`` ``[S, n]`` from the outputs ``h`` of :meth:`_inputs`."""
        if self.fixed_arms:
            pairs = self.played[:, :n]
            return h.gather(1, pairs[:, :, 0]) - h.gather(1, pairs[:, :, 1])
        return h[:, :n] - h[:, n:]

    def _gradient(
        self, params: torch.Tensor, x: torch.Tensor, n: int, labels: torch.Tensor, w: torch.Tensor
    ) -> torch.Tensor:
        """Gradient ``[S, p]`` of eq. 7's data term ``sum_s w_s [softplus(Delta h_s) - a_s Delta h_s]``."""
        mats = self._mats(params)
        hidden, out = B.mlp_forward(mats, x, self.net.scale, False)
        dz = (B.softplus_grad(self._logits(out[:, :, 0], n)) - labels) * w
        if self.fixed_arms:  # d/dh_k: + dz of the rows whose first arm is k, - of the second
            pairs = self.played[:, :n]
            dh = torch.zeros(self.S, x.shape[1], dtype=x.dtype, device=x.device)
            dh.scatter_add_(1, torch.cat([pairs[:, :, 0], pairs[:, :, 1]], 1), torch.cat([dz, -dz], 1))
        else:
            dh = torch.cat([dz, -dz], dim=1)
        grads = B.mlp_backward(mats, hidden, (self.net.scale * dh)[:, :, None])
        if self.folded:  # both column halves of W_1 get the folded layer's gradient / sqrt(2)
            half = grads[0] / math.sqrt(2.0)
            grads[0] = torch.cat([half, half], dim=2)
        return torch.cat([g.reshape(self.S, -1) for g in grads], dim=1)

    def _training_set(self, t: int, n: int, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Labels and weights ``[S, n]`` of each member's delay strategy's training set at round ``t``
        (:meth:`~banditbench.policies.delayed_labels.DuelHistory.training_set`; weight 0: not in the set); in a
        block of several strategies, each strategy's set is computed for every member and kept for its own."""
        predicted = None
        if {"heuristic", "heuristic_all"} & self.strategies.keys():  # mu(Delta h_s(theta_t)), once for both readings
            h = B.mlp_forward(self._mats(self.params), x, self.net.scale, False)[1][:, :, 0]
            predicted = B.rowwise(torch.sigmoid, self._logits(h, n))
        sets = {name: self._strategy_set(name, t, n, predicted) for name in self.strategies}
        if len(sets) == 1:
            return next(iter(sets.values()))
        labels, weights = torch.zeros_like(self.y[:, :n]), torch.zeros_like(self.y[:, :n])
        for name, (y, w) in sets.items():
            member = self.strategies[name][:, None]
            labels, weights = torch.where(member, y, labels), torch.where(member, w, weights)
        return labels, weights

    def _strategy_set(
        self, strategy: str, t: int, n: int, predicted: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`_training_set` of one delay strategy for every member (``predicted``: the heuristics' soft labels)."""
        y, arrived = self.y[:, :n], self.arrived[:, :n]
        ones = torch.ones_like(y)
        if strategy == "ipw":  # omega_{s,t} y_s (eq. 2)
            return torch.where(arrived, y / self.rho, 0.0), ones
        if strategy == "zero":  # y'_s (eq. 1)
            return torch.where(arrived, y, 0.0), ones
        if strategy == "ignore":
            return y, arrived.to(y.dtype)
        missing = ~arrived
        if strategy == "heuristic" and self.window is not None:  # DuelHistory.pending
            played_round = torch.arange(1, n + 1, device=y.device)
            missing = missing & (t - played_round < max(self.window, 1))
        return torch.where(arrived, y, torch.where(missing, predicted, 0.0)), (arrived | missing).to(y.dtype)

    def _train(self, t: int, n: int) -> None:
        """Algorithm 2 line 7: ``train_steps`` Adam steps on eq. 7 for the seeds with a non-empty training set."""
        self.y[:, :n] = torch.from_numpy(self._y_np[:, :n]).to(self.device, self.dtype)
        self.arrived[:, :n] = torch.from_numpy(self._arrived_np[:, :n]).to(self.device)
        x = self._inputs(n)
        labels, w = self._training_set(t, n, x)
        mask = (w > 0).any(1)  # (where no seed trains, the masked steps leave all as they are: no read to skip them)
        lam = self.trainer.lam
        for _ in range(self.trainer.steps):
            grad = self._gradient(self.params, x, n, labels, w) + lam * (self.params - self.centre)
            self.adam_step(grad, mask)

    # --- selection --------------------------------------------------------------------
    def _start_fixed_arms(self, contexts: Sequence[np.ndarray]) -> None:
        """Round 1 with ``fixed_arms``: each seed's arm set, its gradient features at ``theta_0`` and
        the confidence state (the arm kernel ``Phi V_0^{-1} Phi^T``, or V's diagonal)."""
        self.arm_sets = list(contexts)
        raw = torch.from_numpy(np.stack(contexts)).to(F64).to(self.device)
        arms = self._input(raw)
        self.features = self._arm_features(arms)
        self.arms = arms.to(self.dtype)  # the network's
        if self.confidence == "full":
            self.gram = B.bmm(self.features, self.features.transpose(1, 2).contiguous()) / self.reg
        else:
            self.gram = torch.full((self.S, self.features.shape[2]), self.reg, dtype=F64, device=self.device)

    def _arm_features(self, x: torch.Tensor) -> torch.Tensor:
        """The gradient features ``g(x; theta_0) / sqrt(m)`` (eq. 12) of the arms with network inputs ``x``
        (:meth:`_input`, float64), in the coordinates V is kept in, float64.

        Under the symmetric initialisation the input is ``[x; x] / sqrt(2)``, so the first layer's gradient
        ``delta [x; x]^T / sqrt(2)`` has two equal halves ``a``: every feature, every ``g'`` of eq. 8 and
        every width of eq. 12 lie in the subspace where they agree.  On it, with the orthonormal
        coordinates ``(a + a) / sqrt(2) = sqrt(2) a = delta x^T`` (the folded layer's gradient, :meth:`_mats`),
        V is ``(lam/kappa_mu) I + sum g'_c g'_c^T`` and the widths ``||r||_{V^{-1}} = ||r_c||_{V_c^{-1}}``
        (and the arm kernel's inner products) are the same numbers up to rounding at ``m d`` fewer
        coordinates: the p x p products of the full ``V^{-1}`` shrink by about ``(p / (p - m d))^2``
        (3.8x at d = 20, m = 32, depth 2).  The diagonal approximation is not invariant under that change
        of coordinates and gets the full features."""
        if self.halved:
            return self._paired_features(x)
        phi = B.mlp_arm_gradients(self.mats0, x, self.net.scale) / math.sqrt(self.net.width)
        if not self.folded:
            return phi
        rows, d = self.mats0[0].shape[1:]
        half = phi[:, :, : rows * d].reshape(*phi.shape[:2], rows, d) / math.sqrt(2.0)
        return torch.cat([torch.cat([half, half], dim=3).reshape(*phi.shape[:2], -1), phi[:, :, rows * d :]], dim=2)

    def _paired_sizes(self) -> list[tuple[int, int]]:
        """Per layer, the sizes of its factors ``delta_i`` and ``h_i`` in the paired coordinates
        (:meth:`_paired_features`): a hidden layer's half, the folded input and the scalar output whole."""
        m, sizes = self.net.width, []
        for i, (r, c) in enumerate(self.net.shapes):
            sizes.append((r // 2 if r == m else r, self.net.input_dim if i == 0 else c // 2))
        return sizes

    def _paired_features(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`_arm_features` under the symmetric initialisation with the full ``V^{-1}``: the features in
        orthonormal coordinates of the subspace all of them span at ``theta_0``, ``p' = m d / 2 + m^2 / 4 (L - 2)
        + m / 2`` of them (336 of p = 1,312 at d = 20, m = 32, depth 2).

        Besides the input's two equal halves (:meth:`_arm_features`), the symmetric ``theta_0`` pairs the hidden
        units: every hidden layer is ``[[W, 0], [0, W]]`` on paired inputs, so unit ``j`` and unit ``j + m/2``
        compute the same ``h``, and the output layer ``(w, -w)`` sends them opposite signals ``delta``.  Layer i's
        gradient ``delta_i h_i^T`` thus repeats one block ``D = delta_i^a (h_i^a)^T`` of its first halves, with
        signs (``[D; -D]`` for the folded first layer, ``[[D, D], [-D, -D]]`` for a hidden one, ``[D, D]`` for the
        output layer), and the coordinates ``sqrt(2) D``, ``2 D`` and ``sqrt(2) D`` along those sign patterns are
        orthonormal: the widths of eq. 12 (and the arm kernel) are the same numbers up to rounding, with the
        ``p x p`` products of ``V^{-1}`` about ``(p / p')^2`` times smaller (15x at d = 20, m = 32, depth 2)."""
        hidden, deltas = B.mlp_arm_backprop(self.mats0, x, self.net.scale)
        S, K = x.shape[:2]
        blocks = []
        for (a, b), h, d in zip(self._paired_sizes(), hidden, deltas):
            factor = (math.sqrt(2.0) if a < d.shape[2] else 1.0) * (math.sqrt(2.0) if b < h.shape[2] else 1.0)
            outer = d[:, :, :a, None] * h[:, :, None, :b]
            blocks.append(outer.reshape(S, K, a * b) * (factor / math.sqrt(self.net.width)))
        return torch.cat(blocks, dim=2)

    def _norms(self, phi: torch.Tensor, first: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``||phi(x) - phi(x_{t,1})||_{V_{t-1}^{-1}}`` ``[S, K]`` (eq. 12 without its factor) and, with the
        full ``V^{-1}``, the rows ``(phi(x) - phi(x_{t,1})) V_{t-1}^{-1}`` ``[S, K, p]`` (:meth:`_update` reuses
        the second arm's)."""
        products = None
        if self.fixed_arms and self.confidence == "full":  # ArmKernelGram.pair_norms
            M = self.gram
            col = M[self._seeds, :, first]
            q = torch.diagonal(M, dim1=1, dim2=2) - 2.0 * col + col[self._seeds, first][:, None]
        else:
            rows = phi - phi[self._seeds, first][:, None, :]
            if self.confidence == "full":  # InverseGram.norms, V^{-1} with the held-back updates
                products = B.bmm(rows, self.gram)
                if self.n_held:
                    U = self.held_u
                    products = products - B.bmm(B.bmm(rows, U.transpose(1, 2)) * self.held_c, U)
                q = (products * rows).sum(2)
            else:  # DiagonalGram.norms
                q = (rows * rows / self.gram[:, None, :]).sum(2)
        return torch.sqrt(torch.clamp(q, min=0.0)), products

    def _update(
        self, phi: torch.Tensor, first: torch.Tensor, second: torch.Tensor, products: torch.Tensor | None
    ) -> None:
        """Eq. 8 / line 11: ``V += g' g'^T`` with ``g' = phi(x_{t,1}) - phi(x_{t,2})``.  With the full
        ``V^{-1}``, Sherman–Morrison's ``u = V^{-1} g'`` is the second arm's row of ``products`` up to its sign
        (``V^{-1}`` is symmetric; the sign cancels in the update), so the inverses are read once less; and the
        update ``V^{-1} -= c u u^T`` (``c = 1 / (1 + g'^T u)``) is held back: :data:`DEFERRED` of them are kept
        as the rows of ``U`` and applied at once, ``V^{-1} -= U^T diag(c) U`` (one pass over the ``p x p``
        inverses every :data:`DEFERRED` rounds instead of one a round; :meth:`_norms` applies the held ones to
        its products).  Every seed updates every round, so when the block applies them does not depend on
        the block."""
        if self.fixed_arms and self.confidence == "full":  # ArmKernelGram.update_pair
            M = self.gram
            col = M[self._seeds, :, first] - M[self._seeds, :, second]
            quad = col[self._seeds, first] - col[self._seeds, second]
            M.sub_(col[:, :, None] * col[:, None, :] / (1.0 + quad)[:, None, None])
            return
        g = phi[self._seeds, first] - phi[self._seeds, second]
        if self.confidence == "full":
            u = -products[self._seeds, second]
            slot, self.n_held = self.n_held, self.n_held + 1
            self.held_u[:, slot] = u
            self.held_c[:, 0, slot] = 1.0 / (1.0 + (g * u).sum(1))
            if self.n_held == DEFERRED:
                U = self.held_u
                self.gram.baddbmm_((U * self.held_c.transpose(1, 2)).transpose(1, 2), U, alpha=-1.0)
                U.zero_()
                self.held_c.zero_()
                self.n_held = 0
        else:
            self.gram.add_(g * g)

    @torch.no_grad()
    def act_all(self, t: int, contexts: Sequence[np.ndarray]) -> list[tuple[int, int]]:
        n = t - 1  # rows of the rounds played so far
        if n and self.trainer.due(t):
            self._train(t, n)
        if self.fixed_arms:
            if self.arm_sets is None:
                self._start_fixed_arms(contexts)
            elif any(c is not a and not np.array_equal(c, a) for c, a in zip(contexts, self.arm_sets)):
                raise ConfigError("environment: publishes fixed_arms but showed a different arm set")
            x, phi = self.arms, self.features
        else:
            x64 = self._input(torch.from_numpy(np.stack(contexts)).to(F64).to(self.device))
            phi = self._arm_features(x64)
            x = x64.to(self.dtype)  # the network's input (x64 itself in float64)
        scores_t = B.mlp_forward(self._mats(self.params), x, self.net.scale, False)[1][:, :, 0]
        first = scores_t.argmax(1)  # eq. 9, the first maximum as ``choose``'s (which checks the scores below)
        norms_t, products = self._norms(phi, first)
        scores, norms = B.to_host(scores_t.to(F64), norms_t)  # the round's one read (float32 scores widen exactly)
        pairs = []
        for s, pol in enumerate(self.policies):
            arm = self.choose_member(s, scores[s], "utility estimates")
            try:
                pairs.append((arm, pol._second_arm(scores[s], arm, norms[s])))  # eq. 10 (NDB-TS: its draw)
            except Diverged as err:  # this member is not played on; the others are
                self.member_diverged(s, err)
                pairs.append((arm, arm))
        second = torch.tensor([b for _, b in pairs], device=self.device)
        if self.fixed_arms:
            self.played[:, n, 0], self.played[:, n, 1] = first, second
        else:
            self.x_first[:, n], self.x_second[:, n] = x[self._seeds, first], x[self._seeds, second]
        self._update(phi, first, second, products)
        return pairs
