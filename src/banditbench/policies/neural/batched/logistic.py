"""The seed-batched engine of NeuralLog-UCB/TS and NCBF-UCB: :class:`BatchedNeuralLogistic`.

Reference: ``banditbench.policies.neural.logistic._NeuralLogisticBase`` (NeuralLog-UCB/TS, NCBF-UCB).
Must match: TrainNN's iterates rel 1e-9, the decisions up to near ties, mean regret 5 %, a seed's file
bit-identical alone and in a block.  Checked by: ``tests/policies/neural/batched/test_batched_neural_logistic.py``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

from ....api import Policy
from ....feedback import RewardFeedback
from ....numerics.sigmoid import MU_DOT_MAX as R
from ....numerics.sigmoid import sigmoid
from ..nets import DTYPE
from . import ops as B


class BatchedNeuralLogistic(B.NetworkBlock):
    """The family's loop (:class:`_NeuralLogisticBase`) for a block of S seeds in lockstep (:mod:`.batched`),
    for the order radius, a fixed ``lam`` and the diagonal ``M_t`` (the paper's forms; :meth:`~_NeuralLogisticBase.batch`).
    The members may also differ in ``nu`` and ``lam`` (:func:`banditbench.simulation.job.run_members`, Sec. 7's grid
    in lockstep): both, the ridges and the loss weight they set are kept per member; and in their class (the
    ``SeedBatched.family``): each member's ``M_t`` (``V_t`` or ``W_t``), mean (``mu(f)``, ``f`` or the
    linearised one), radius form and Thompson or UCB rule, every form present in the block computed for all
    members and kept for its own (``torch.where``), the rule applied on the host.

    Stacked along the seed axis: the parameters ``theta`` ``[S, p]``, ``theta_0`` and the regulariser's
    centre, Adam's moments and step counts, the diagonals of ``M_t`` (``V_t`` or ``W_t``) and of the
    effective dimension's design ``[S, p]``, and the absorbed arms and rewards ``[S, T, ...]`` in arrival
    order, as the reference keeps them.  Per round, for all seeds at once: TrainNN's ``train_steps``
    steps (Adam or gradient descent) on the regularised cross-entropy with the backward pass written
    out, on each seed's absorbed rows (a minibatch of them gathered per seed: O(B) per step), the means
    of the module table (Algorithm 1 line 2, Algorithm 2 line 2 / eq. 5), the widths
    ``||phi||_{diag(M)^{-1}}`` (the widths and the linearised mean from the gradients' layer factors,
    :func:`.batched.gradient_forms`: only the played arm's ``g(x)`` is formed) and the order
    radius (eqs. 1 / 4 or Verma et al.'s ``nu_T``, App. A) from each seed's log-determinant.  Per seed, on
    the seed's own streams: the minibatch draws (its trainer's ``torch.Generator``, in the reference's
    order, all of a training's steps drawn before its first), the Thompson draws (its numpy ``rng``) and ``W_t``'s
    weights ``mu'(f(x_i; theta_i))`` (the reference's network on the seed's new rows).  The host reads the means
    and widths once per round, and the new rows' ``f`` once more where ``W_t`` takes some.  The sums run in
    other orders than the reference's, so the two paths make the same decisions except near ties."""

    def __init__(self, policies: Sequence[Policy]):
        super().__init__(policies)
        self.first = first = policies[0]
        S, dev, T, d = self.S, self.device, first.horizon, self.net.input_dim
        self.theta0 = torch.stack([pol.net.theta0 for pol in policies]).to(dev)
        self.X = torch.zeros(S, T, d, dtype=DTYPE, device=dev)
        self.y = torch.zeros(S, T, dtype=DTYPE, device=dev)
        self.n = [0] * S
        self.diag = torch.from_numpy(np.stack([pol.matrix.gram.diagonal for pol in policies])).to(dev)
        self.shared = all(pol.log_det_design is pol.matrix for pol in policies)
        self.ld_diag = (
            self.diag
            if self.shared
            else torch.from_numpy(np.stack([pol.log_det_design.gram.diagonal for pol in policies])).to(dev)
        )
        # the class-level forms, per member (the family's lockstep: UCB-1 / 2, TS-1 / 2 and NCBF-UCB in one block)
        flags = lambda values: torch.tensor(values, device=dev)  # noqa: E731
        self.weighted = flags([pol.design == "W" for pol in policies])  # W_t (Algorithm 2) instead of V_t
        self.ncbf = flags([pol.radius_kind == "ncbf" for pol in policies])
        self.kinds = {
            kind: flags([pol.mean_kind == kind for pol in policies])
            for kind in dict.fromkeys(pol.mean_kind for pol in policies)
        }
        member = dict(dtype=DTYPE, device=dev)  # nu and lam may differ by member
        self.ld_ridge = torch.tensor([pol.log_det_design.ridge for pol in policies], **member)[:, None]
        self.ld_ridge0 = torch.tensor([pol.log_det_design.ridge0 for pol in policies], **member)[:, None]
        self.nu = torch.tensor([pol.nu for pol in policies], **member)[:, None]
        self.lam0 = torch.tensor([pol.lam0 for pol in policies], **member)
        self.loss_weight = torch.tensor([pol.trainer.lam for pol in policies], **member)[:, None]
        self.radius = torch.tensor([pol.conf_radius for pol in policies], **member)
        self.kappa = torch.tensor([pol.kappa for pol in policies], **member)
        self.norm_bound = torch.tensor([pol.S for pol in policies], **member)
        # Algorithm 1's radius carries R for UCB-1, not for TS-1 (App. I)
        self.scale = torch.tensor([1.0 if pol.sampling else R for pol in policies], **member)
        self.pending: list[dict[int, tuple[torch.Tensor, torch.Tensor]]] = [{} for _ in range(S)]
        self.arrived: list[list[tuple[torch.Tensor, torch.Tensor, float]]] = [[] for _ in range(S)]

    # --- feedback -------------------------------------------------------------------
    def observe_all(self, t: int, arrived: Sequence[Sequence[RewardFeedback]]) -> None:
        for s, items in enumerate(arrived):
            for fb in items:
                phi, x = self.pending[s].pop(fb.round)
                self.arrived[s].append((phi, x, float(fb.reward)))

    def _orders(self) -> torch.Tensor:
        """The order radius ``[S]`` (before ``nu``; :meth:`_NeuralLogisticBase._radius`) from each seed's
        ``d_t``: the Hadamard bound ``sum_j log(1 + added_j / ridge_0)`` of eq. 2's log-determinant; each
        member's form (NCBF's, ``W_t``'s or ``V_t``'s)."""
        added = torch.clamp(self.ld_diag - self.ld_ridge, min=0.0)
        d_t = B.rowwise(torch.log1p, added / self.ld_ridge0).sum(1)
        S = self.norm_bound
        ncbf = torch.sqrt(self.kappa * d_t / self.lam0) + S
        nu_t = S**2 * (torch.sqrt(d_t) + 1.0 / torch.sqrt(self.lam0))
        order = torch.where(self.weighted, nu_t, torch.sqrt(self.kappa) * nu_t * self.scale)
        return torch.where(self.ncbf, ncbf, order)

    def _absorb(self, t: int) -> None:
        """Algorithm 1/2 lines 4–6 for every seed: its arrivals, TrainNN, ``M_t`` and the radius.  The round's
        arrivals of all seeds are written at once: each seed's rows in arrival order (``index_put_``, and
        ``index_add_``, which adds a seed's terms one after the other in that order, as the reference does)."""
        new, self.arrived = self.arrived, [[] for _ in range(self.S)]
        seeds = [s for s, items in enumerate(new) for _ in items]
        if seeds:
            rows = [self.n[s] + i for s, items in enumerate(new) for i in range(len(items))]
            for s, items in enumerate(new):
                self.n[s] += len(items)
            at = torch.tensor(seeds, device=self.device), torch.tensor(rows, device=self.device)
            phi = torch.stack([phi for items in new for phi, _, _ in items])
            self.X.index_put_(at, torch.stack([x for items in new for _, x, _ in items]))
            self.y.index_put_(
                at, torch.tensor([r for items in new for _, _, r in items], dtype=DTYPE, device=self.device)
            )
            if not self.shared:
                self.ld_diag.index_add_(0, at[0], phi * phi)
        if self.trainer.due(t) and any(self.n):
            self._train(t, torch.tensor([n > 0 for n in self.n], device=self.device))
        if seeds:
            w = torch.from_numpy(self._design_weights(new, at)).to(self.device)
            self.diag.index_add_(0, at[0], w[:, None] * phi * phi)
            fresh = torch.tensor([bool(items) for items in new], device=self.device)
            self.radius = torch.where(fresh, self._orders(), self.radius)

    def _design_weights(self, new: Sequence[Sequence], at: tuple[torch.Tensor, torch.Tensor]) -> np.ndarray:
        """The weights in ``M_t`` of the round's new rows (``at``: their seeds and rows, the seeds' ``new`` in
        order): 1 in ``V_t``; in ``W_t``, ``mu'(f(x_i; theta_i))``, the network ``f`` of each row's seed on the
        device (one row per product: a row's value does not depend on the block), read once for all seeds (the
        round's second read), and the reference's numpy sigmoid on the host."""
        weighted = np.array([self.policies[s].design == "W" for s, items in enumerate(new) for _ in items])
        weights = np.ones(len(weighted))
        if not weighted.any():
            return weights
        seeds, rows = at
        params = self.params[seeds]  # [N, p]: each row under its seed's parameters
        mats = B.weights_of(params, self.net.offsets, self.net.shapes)
        with torch.no_grad():
            f = B.mlp_forward(mats, self.net.embed(self.X[seeds, rows])[:, None, :], self.net.scale, False)[1]
        mu = sigmoid(f[:, 0, 0].cpu().numpy())
        weights[weighted] = (mu * (1.0 - mu))[weighted]
        return weights

    def _train_input(self, raw: torch.Tensor) -> torch.Tensor:
        """The training's network input for arms ``raw``: the arms themselves under the symmetric initialisation
        (its input ``[x; x] / sqrt(2)`` folded into the first layer, :meth:`_train_mats`), else
        :meth:`~.nets.MLP.embed`."""
        return raw if self.net.symmetric else self.net.embed(raw)

    def _train_mats(self, params: torch.Tensor) -> list[torch.Tensor]:
        """The weight matrices ``[S, r, c]`` the training uses: under the symmetric initialisation the first layer
        acts on the raw arm, ``W_1 [x; x] / sqrt(2) = ((W_1^a + W_1^b) / sqrt(2)) x`` (half its flops and no
        embedding of the rows; the same numbers up to rounding), as NDB's engine does."""
        mats = B.weights_of(params, self.net.offsets, self.net.shapes)
        if self.net.symmetric:
            W, d = mats[0], self.net.input_dim
            mats[0] = (W[:, :, :d] + W[:, :, d:]) / math.sqrt(2.0)
        return mats

    def _train(self, t: int, mask: torch.Tensor) -> None:
        """TrainNN (:meth:`.training.Trainer.fit`) for the seeds in ``mask``: ``train_steps`` steps on
        ``sum_i w_i [softplus(f_i) - y_i f_i] + (lam / 2) ||theta - c||^2`` over each seed's absorbed rows.
        With ``minibatch`` B, once some seed holds more than B rows every step gathers B rows per seed (a
        seed's own draw, or its first ``min(n, B)`` rows, zero-padded, while it holds no more than B), so a
        step costs O(B), not O(t)."""
        trainer, rows = self.trainer, max(self.n)
        labels = self.y[:, :rows]
        n = torch.tensor(self.n, device=self.device)
        absorbed = (torch.arange(rows, device=self.device)[None, :] < n[:, None]).to(DTYPE)
        gather = trainer.batch is not None and rows > trainer.batch
        x = None if gather else self._train_input(self.X[:, :rows])
        if gather:  # every step's draw of each seed, from its own generator in its order, copied at once
            draws = torch.stack(
                [
                    torch.stack(
                        [
                            pol.trainer.draw(self.n[s]) if self.n[s] > trainer.batch else torch.arange(trainer.batch)
                            for s, pol in enumerate(self.policies)
                        ]
                    )
                    for _ in range(trainer.steps)
                ]
            ).to(self.device)
            # every step's rows at once ([steps, S, B, ...]): each step then only indexes its own
            X = self.X[:, :rows]
            seeds = torch.arange(self.S, device=self.device)[None, :, None]
            xs_all = self._train_input(X[seeds, draws])
            ys_all = labels[seeds, draws]
            w_all = (draws < n[None, :, None]).to(DTYPE)
        for step in range(trainer.steps):
            xs, ys, w = x, labels, absorbed
            if gather:
                xs, ys, w = xs_all[step], ys_all[step], w_all[step]
            mats = self._train_mats(self.params)
            hidden, out = B.mlp_forward(mats, xs, self.net.scale, False)
            dz = (B.softplus_grad(out[:, :, 0]) - ys) * w
            grads = B.mlp_backward(mats, hidden, (self.net.scale * dz)[:, :, None])
            if self.net.symmetric:  # both column halves of W_1 get the folded layer's gradient / sqrt(2)
                half = grads[0] / math.sqrt(2.0)
                grads[0] = torch.cat([half, half], dim=2)
            grad = torch.cat([g.reshape(self.S, -1) for g in grads], dim=1) + self.loss_weight * (
                self.params - self.centre
            )
            if trainer.optimizer_kind == "gd":
                self.params.copy_(torch.where(mask[:, None], self.params - trainer.lr * grad, self.params))
            else:
                self.adam_step(grad, mask)

    # --- selection ------------------------------------------------------------------
    def act_all(self, t: int, contexts: Sequence[np.ndarray]) -> list[int]:
        self._absorb(t)
        first = self.first
        x = torch.tensor(np.stack(contexts), dtype=DTYPE, device=self.device)
        emb = self.net.embed(x)
        at = self.params if first.gradient_at == "current" else self.theta0
        hidden, deltas = B.mlp_arm_backprop(B.weights_of(at, self.net.offsets, self.net.shapes), emb, self.net.scale)
        linearised = "linearised" in self.kinds  # Algorithm 2 line 2, eq. 5, App. J
        # ||phi||_{diag(M)^-1} and g^T (theta - theta_0) from the layers' factors: no [S, K, p] gradients
        quad, lin = B.gradient_forms(
            hidden, deltas, self.net.offsets, 1.0 / self.diag, self.params - self.theta0 if linearised else None
        )
        centres = {"linearised": lin}
        if any(kind != "linearised" for kind in self.kinds):  # the network's output f, or mu(f) (Algorithm 1, line 2)
            mats = B.weights_of(self.params, self.net.offsets, self.net.shapes)
            centres["latent"] = B.mlp_forward(mats, emb, self.net.scale, False)[1][:, :, 0]
            if "probability" in self.kinds:
                centres["probability"] = B._sigmoid(centres["latent"])
        kinds = iter(self.kinds.items())
        centre = centres[next(kinds)[0]]
        for kind, member in kinds:  # each member's own mean
            centre = torch.where(member[:, None], centres[kind], centre)
        norms = torch.sqrt(quad) * first.phi_scale if first.phi_scale != 1.0 else torch.sqrt(quad)
        centre, widths = B.to_host(centre, self.nu * self.radius[:, None] * norms)  # the round's one read
        arms = []
        for s, pol in enumerate(self.policies):
            if pol.sampling:
                scores = centre[s] + widths[s] * pol.rng.standard_normal(len(centre[s]))
            else:
                scores = centre[s] + widths[s]
            arms.append(self.choose_member(s, scores, "sampled scores" if pol.sampling else "UCB scores"))
        chosen = torch.tensor(arms, device=self.device)[:, None]  # the played arms' features, for M_t
        rows = lambda z: torch.gather(z, 1, chosen[:, :, None].expand(-1, -1, z.shape[2]))  # noqa: E731
        g = B.outer_gradients([rows(h) for h in hidden], [rows(d) for d in deltas])[:, 0]
        phi = g * first.phi_scale if first.phi_scale != 1.0 else g
        for s, arm in enumerate(arms):
            self.pending[s][t] = (phi[s].clone(), x[s, arm].clone())
        return arms
