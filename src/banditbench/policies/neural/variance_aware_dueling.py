r"""Variance-aware neural dueling bandits with shallow exploration (seed 001: Oh et al., Algorithm 1).

The utility model is :math:`f(x; \theta, W) = \theta^\top \phi(x; W)` (eq. 2) with
:math:`\phi(x; W) = \sqrt{m}\, \mathrm{ReLU}(W^L \cdots \mathrm{ReLU}(W^1 x)) \in \mathbb{R}^D` the network's last layer
(:class:`~banditbench.policies.neural.nets.MLP` with ``outputs = D``,
``output_relu = True``) and :math:`\theta \in \mathbb{R}^D`; :math:`\theta_0 \sim \mathcal{N}(0, 1/D)` (eq. 3).
Exploration is *shallow*: the confidence matrix lives in the D-dimensional
feature space (eq. 6),

.. math::

    V_t = \lambda I + \sum_{i \le t} \Delta\phi_i \Delta\phi_i^\top / \zeta_i^2

with :math:`\Delta\phi_i = \phi(x_{i,1}; W_{i-1}) - \phi(x_{i,2}; W_{i-1})` the features
the pair was chosen with, updated by Sherman–Morrison (Algorithm 1 line 13) — no
full-gradient pass.  Each round (Algorithm 1):

1. the pair is chosen by one of the six strategies of Sec. 4.2
   (:mod:`banditbench.policies.pair_selection`) from :math:`u_k = \theta^\top \phi(x_k; W)`
   and the pair widths :math:`\lVert\Delta\phi\rVert_{V^{-1}}`;
2. every ``H`` rounds (``episode_length``) ``(theta, W)`` take ``train_steps``
   Adam steps (learning rate ``lr``, App. E.2.1) on the loss of eq. 4,
   :math:`\sum_i \bigl[\mathrm{softplus}(\Delta f_i) - o_i \Delta f_i\bigr] / \zeta_i^2 + \frac{\lambda}{2} \lVert\theta - \theta_0\rVert^2`
   (line 9), and then ``theta`` alone is refit to the minimiser of eq. 4 with ``W``
   fixed — a convex logistic regression on the features, solved by Newton's method
   (line 10, ``refit_theta``);
3. :math:`\zeta_t = \max(\sigma_t, \epsilon)` with :math:`\sigma_t^2 = \mu(\Delta f_t)\bigl(1 - \mu(\Delta f_t)\bigr)`
   under the updated parameters (eq. 5, line 12) for NVLDB, a constant (``zeta``, default 1) for the
   variance-agnostic NLDB; ``V`` takes the round's term (line 13).

Eq. 4's ``L_t`` sums over ``i <= t - 1``: the outcome of round t enters the training
of round t + 1, after its weight ``zeta_t`` has been set (line 12 comes after line 9).
With delayed feedback a round joins the loss and ``V`` once its outcome has arrived.

Choices seed 001 leaves open or states ambiguously (all exposed as parameters):

* ``init``: eq. 3 draws block-diagonal hidden layers and a last layer ``(omega, -omega)``
  (NeuralUCB's construction).  On the symmetric inputs ``[x; x]`` it assumes
  (``phi(x; W_0) = 0``, used in App. B) the ReLU features and all their gradients
  vanish, so gradient steps could never leave ``W_0``; we apply the same draws to
  the raw input (``"block"``, default; ``"independent"`` is He-style).
* ``feature_dim`` D: eq. 2 has ``W^L`` in R^{d x m}, so D = d (the arm dimension) by
  default.  ``depth`` counts the weight matrices of ``phi``: App. E.2.1's "two hidden
  layers of 32 units" is depth 3 (Sec. 6's L = 3), width m = 32.
* ``epsilon`` (eq. 5) is not reported; the theory asks for ``epsilon = O(1/sqrt(d))``
  (Theorem 1).  The weights ``1/zeta^2`` lie in ``[4, 1/epsilon^2]``: the default 0.05 lets a
  confident comparison count up to 100 times a coin flip, ``1/sqrt(d)`` (0.45 at d = 5) keeps
  them within a factor of 1.25.  ``config/variance_dueling.yaml`` sweeps it (``vdb_*_epsilon``).
* ``zeta`` (NLDB only): the constant ``zeta_t`` of the variance-agnostic variants, default 1
  (Corollary 1: "we fix zeta_t = 1 (i.e., epsilon = 1)").  ``zeta = 0.5`` is the control whose
  weight ``1/zeta^2 = 4`` is NVLDB's smallest (``sigma <= 1/2``): against it, NVLDB differs only by
  adapting the weights to the variance, not by a uniformly weaker ridge.  NVLDB refuses it.
* ``a`` = a_t = 1 (App. E.2.1), ``lam = 1``, ``train_steps = 20``,
  ``episode_length = 1``, ``lr = 0.01`` (App. E.2.1; Sec. 6 says 1e-3 and width 100, which
  ``config/variance_dueling.yaml`` runs as experiments of their own).  Adam's
  moments are kept across rounds (warm start, :mod:`.training`).
* ``gram``: ``"incremental"`` (default) is eq. 6 / line 13, Algorithm 1's V.  App. E.2.1 says the
  authors "reinitialize the parameter set V_{t-1} to its initial state at the beginning of each
  round", "as this was found not to incur significant computational overhead".  Read literally,
  ``V_{t-1} = lam I`` whenever a pair is chosen (``"reset"``): the bonus is ``||Delta phi|| / sqrt(lam)``
  and the weights ``1/zeta^2`` act through the loss only — but such a reset costs nothing, so the
  remark on overhead does not fit it.  Read as a rebuild, ``V_{t-1} = lam I + sum_i
  Delta phi_i Delta phi_i^T / zeta_i^2`` over all past pairs with the current features
  ``phi(.; W_{t-1})`` (``"rebuild"``, O(t) per round: an overhead worth remarking on).  The policies
  and ``config/variance_dueling.yaml``'s headline experiments follow Algorithm 1 (eq. 6); the
  experiment ``vdb_square_gram`` compares the three readings
  (``docs/papers/seed-001-variance-dueling.md``).
* ``csym_sample``: TS-CSYM's draw, by Sec. 4.2.2's equation (default) or by Listing 4
  (:mod:`banditbench.policies.pair_selection`).
* ``backprop``: how the gradient steps of line 9 are computed.  ``"manual"`` (default):
  the network's forward and backward passes written out in numpy for this architecture
  (:meth:`_NeuralLinearDueling._gradient`) and torch's Adam rule applied in numpy
  (:meth:`~banditbench.policies.neural.training.Trainer.fit_gradient`); ``"autograd"``:
  PyTorch's autograd and ``torch.optim.Adam``.  The same algorithm and the same
  iterates up to floating-point rounding (summation order, ``exp``), not bit for bit:
  trajectories of the two agree to rounding at first and may part after many rounds.
  On seed 001's tiny networks autograd's per-operation overhead dominates, which the
  manual pass avoids (``benchmarks/nvldb_speed.py``).
* ``precision``: the network computes in float32 (PyTorch's default, which the authors'
  code uses; half the cost of float64); ``V``, the Newton refit of line 10 and the
  selection rules work in float64.  ``"float64"`` is available.
* ``distinct_pair``: ours, not the paper's (default false, as Listings 2-3, which allow
  ``k1 = k2``): the pair rule's best pair of two different arms
  (:func:`~banditbench.policies.pair_selection.select_pair`), so that no round is a self-duel, which
  teaches these learners nothing (Delta phi = 0; seed 001's page, "Self-duel lock-in").
* ``device``: where the seed-batched path (:class:`BatchedNeuralLinearDueling`, what a
  simulate job runs) keeps its tensors, ``"cpu"`` (default) or ``"cuda"``; the single-seed
  path (``run_cell``, the reference) always runs on the CPU.
* The oracle variance of line 12 needs the environment's hidden truth, which a policy
  never sees; it is not offered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Mapping, Sequence

import numpy as np
import torch
from scipy.special import expit

from ...api import Policy, Problem, SeedBatched, register
from ...errors import POLICY_PARAMS, ConfigError
from ...feedback import PreferenceFeedback
from ...numerics.sigmoid import sigmoid
from ...params import Doc, NonNegative, OneOf, Positive, PositiveInt, Range
from ..linalg import InverseGram, fit_logistic
from ..pair_selection import CSYM_SAMPLES, check_strategy, pair_widths, select_pair
from . import parameters
from .batched.variance_aware_dueling import BatchedNeuralLinearDueling
from .nets import generator_from
from .parameters import Network

GRAMS = ("incremental", "rebuild", "reset")
BACKPROPS = ("manual", "autograd")
PRECISIONS = {"float32": torch.float32, "float64": torch.float64}

# --- the family's parameters: what each value may be (the network's: :mod:`.parameters`) and what it means ---
Width = Annotated[parameters.Width, Doc("hidden width ``m`` of ``phi(x; W)`` (App. E.2.1: 32; Sec. 6: 100).")]
Depth = Annotated[
    parameters.Depth,
    Doc(
        'weight matrices of ``phi`` (eq. 2): App. E.2.1\'s "two hidden layers of 32 units" is depth 3 '
        "(Sec. 6's L = 3)."
    ),
]
FeatureDim = Annotated[
    PositiveInt | None,
    Doc(
        "the feature dimension D of ``phi(x; W)`` in R^D; null is d, the arm dimension (eq. 2's ``W^L`` in R^{d x m})."
    ),
]
Init = Annotated[
    parameters.Init,
    Doc(
        "initialisation of ``W_0``: ``block`` applies eq. 3's draws to the raw input, ``independent`` is "
        "He-style (``symmetric`` is refused: its ReLU features vanish)."
    ),
]
Lam = Annotated[Positive, Doc("regularisation ``lam/2 ||theta - theta_0||^2`` of eq. 4 and ``V_0 = lam I`` (eq. 6).")]
A = Annotated[NonNegative, Doc("the exploration coefficient ``a_t`` of the pair rules (Sec. 4.2; App. E.2.1: 1).")]
Epsilon = Annotated[
    float,
    Range(gt=0, le=0.5),
    Doc(
        "floor of NVLDB's ``zeta_t = max(sigma_t, epsilon)`` (eq. 5; not reported, Theorem 1 asks "
        "``O(1/sqrt(d))``); the weights ``1/zeta^2`` lie in ``[4, 1/epsilon^2]``."
    ),
]
Zeta = Annotated[
    Annotated[float, Range(gt=0, le=1)] | None,
    Doc(
        "NLDB only: the constant ``zeta_t`` of the variance-agnostic variants; null is 1 (Corollary 1).  "
        "NVLDB refuses it."
    ),
]
LearningRate = Annotated[
    parameters.LearningRate, Doc("Adam's learning rate on eq. 4 (App. E.2.1: 0.01; Sec. 6 says 1e-3).")
]
TrainSteps = Annotated[
    parameters.TrainSteps, Doc("Adam steps of ``(theta, W)`` on eq. 4 per training (line 9; App. E.2.1: 20).")
]
EpisodeLength = Annotated[PositiveInt, Doc("``H``: the network trains every ``H`` rounds (App. E.2.1: 1).")]
RefitTheta = Annotated[
    bool,
    Doc(
        "after the gradient steps, refit ``theta`` alone to the minimiser of eq. 4 with ``W`` fixed by "
        "Newton's method (line 10)."
    ),
]
NewtonSteps = Annotated[PositiveInt, Doc("Newton steps of the refit of ``theta`` (line 10).")]
Gram = Annotated[
    str,
    OneOf(GRAMS),
    Doc(
        "``incremental`` is eq. 6 / line 13's V; ``reset`` and ``rebuild`` are the two readings of "
        'App. E.2.1\'s "reinitialize the parameter set V_{t-1}" (module docstring).'
    ),
]
CsymSample = Annotated[
    str,
    OneOf(CSYM_SAMPLES),
    Doc("TS-CSYM's draw, by Sec. 4.2.2's equation or by Listing 4 (:mod:`banditbench.policies.pair_selection`)."),
]
Precision = Annotated[
    str,
    OneOf(tuple(PRECISIONS)),
    Doc(
        "floating-point type of the network (``float32``, PyTorch's default and the authors'); V, the "
        "refit and the selection rules work in float64."
    ),
]
Backprop = Annotated[
    str,
    OneOf(BACKPROPS),
    Doc(
        "how line 9's gradient steps are computed: ``manual`` (a numpy backward pass and Adam) or "
        "``autograd`` (PyTorch); the same iterates up to rounding."
    ),
]
DistinctPair = Annotated[
    bool,
    Doc(
        "ours, not the paper's: the pair rule's best pair of two different arms, so that no round is a "
        "self-duel (false, as Listings 2-3, allows ``k1 = k2``)."
    ),
]


def _relu_backward(grad: np.ndarray, activation: np.ndarray) -> None:
    """In place: ``grad`` zeroed where the ReLU output ``activation`` is 0 (ATen's fused ``threshold_backward`` on
    the arrays' memory): ``grad * (activation > 0)`` without a boolean array and its cast to float.  Only the sign
    of a zero may differ (+0 where the product gave -0), which no later sum or Adam step tells apart."""
    grad_t = torch.from_numpy(grad)
    torch.ops.aten.threshold_backward.grad_input(grad_t, torch.from_numpy(activation), 0, grad_input=grad_t)


class _Workspace:
    """The activations and gradients of :meth:`_NeuralLinearDueling._gradient` for up to :attr:`rows` stacked
    arms, grown by doubling as the history grows: one allocation per doubling instead of several per Adam step
    (each multi-megabyte array a page-faulting ``mmap`` and ``munmap``)."""

    def __init__(self, shapes: Sequence[tuple[int, int]], dtype: np.dtype):
        self.widths = [rows for rows, _ in shapes]  # each layer's outputs
        self.dtype, self.rows = dtype, 0

    def views(self, rows: int) -> "_Workspace.Views":
        if rows > self.rows:
            self.rows = max(rows, 2 * self.rows)
            self._hidden = [np.empty((self.rows, w), self.dtype) for w in self.widths[:-1]]
            self._grads = [np.empty((self.rows, w), self.dtype) for w in self.widths]
            self._phi = np.empty((self.rows, self.widths[-1]), self.dtype)
            self._dphi = np.empty((self.rows // 2 + 1, self.widths[-1]), self.dtype)
        return _Workspace.Views(
            hidden=[h[:rows] for h in self._hidden],
            grads=[g[:rows] for g in self._grads],
            phi=self._phi[:rows],
            dphi=self._dphi[: rows // 2],
        )

    @dataclass
    class Views:
        hidden: list[np.ndarray]
        grads: list[np.ndarray]
        phi: np.ndarray
        dphi: np.ndarray


class _NeuralLinearDueling(Policy):
    """Algorithm 1 of seed 001; subclasses name the arm-selection strategy and the variance weighting."""

    feedback_kind = "preference"
    action_kind = "pair"
    #: Listings 2-3 may pick k1 = k2 (ASYM's second arg-max, OSYM's and CSYM's pairs range over all pairs);
    #: ``distinct_pair`` (ours) forbids it
    self_duels = "distinct_pair"
    strategy: ClassVar[str]
    variance_aware: ClassVar[bool]
    #: the twelve NVLDB / NLDB variants share :class:`BatchedNeuralLinearDueling`, which takes each member's pair
    #: rule, weighting and these parameters per member (Table E.3's six variants in one block); checked in float64
    #: (in float32 Adam turns the rounding of gradient terms that cancel exactly into steps of order lr).  On a CPU
    #: no block takes it: one seed ran 0.34x the single-seed path's speed (d = 20, T = 500), five 0.50x
    #: (Algorithm 1's V, T = 2,000; benchmarks/batched_speed.py), so a CPU job plays its seeds one after the other
    engines = {
        "seed-batched": SeedBatched(
            per_member=("a", "epsilon", "zeta", "csym_sample", "distinct_pair"),
            family="neural_linear_dueling",
            check_params={"precision": "float64"},
            cpu_min_block=None,
        )
    }

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        width: Width = 32,
        depth: Depth = 3,
        feature_dim: FeatureDim = None,
        init: Init = "block",
        lam: Lam = 1.0,
        a: A = 1.0,
        epsilon: Epsilon = 0.05,
        zeta: Zeta = None,
        lr: LearningRate = 0.01,
        train_steps: TrainSteps = 20,
        episode_length: EpisodeLength = 1,
        refit_theta: RefitTheta = True,
        newton_steps: NewtonSteps = 50,
        gram: Gram = "incremental",
        csym_sample: CsymSample = "equation",
        precision: Precision = "float32",
        backprop: Backprop = "manual",
        device: parameters.SeedBatchedDevice = "cpu",
        distinct_pair: DistinctPair = False,
    ):
        network = Network(width, depth, init, lr, train_steps, episode_length, device)
        check_strategy(self.strategy, csym_sample, POLICY_PARAMS)
        self.zeta_const = self._constant_zeta(zeta, POLICY_PARAMS)
        d, T = int(problem["dimension"]), problem.horizon
        D = d if feature_dim is None else feature_dim
        self.rng, self.a, self.lam, self.epsilon = rng, float(a), lam, epsilon
        self.gram_mode, self.csym_sample = gram, csym_sample
        self.refit_theta, self.newton_steps, self.backprop = refit_theta, newton_steps, backprop
        self.device, self.distinct_pair = device, distinct_pair
        gen = generator_from(rng)
        self.dtype = PRECISIONS[precision]
        self.net = network.mlp(d, gen, outputs=D, output_relu=True, dtype=self.dtype)
        theta0 = (torch.randn(D, generator=gen, dtype=torch.float64) / math.sqrt(D)).to(self.dtype)  # eq. 3
        self.last = slice(self.net.n_params, None)  # theta within [W; theta]
        self.trainer = network.trainer(torch.cat([self.net.theta0, theta0]), lam, penalised=self.last)
        self.workspace = _Workspace(self.net.shapes, np.dtype(precision))
        self.theta0 = theta0.numpy().astype(np.float64)
        self.gram = InverseGram(D, lam, keep_matrix=False)  # V_0 = lam I
        self.x_first = torch.zeros(T, d, dtype=self.dtype)
        self.x_second = torch.zeros(T, d, dtype=self.dtype)
        self.dphi = np.zeros((T, D))  # Delta phi_s with the features it was chosen with
        self.labels = np.zeros(T)
        # zeta_s^2: eq. 5 for NVLDB (set in line 12), the constant zeta^2 for NLDB (1 by default)
        self.zeta2 = np.full(T, 1.0 if self.zeta_const is None else self.zeta_const**2)
        self.arrived = np.zeros(T, dtype=bool)  # outcome o_s known
        self.weighted = np.zeros(T, dtype=bool)  # zeta_s set: in V and in the loss

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        Network.check(values, output_relu=True)
        cls._constant_zeta(values["zeta"], POLICY_PARAMS)

    @classmethod
    def _constant_zeta(cls, zeta, where: str) -> float | None:
        """NLDB's constant ``zeta`` (default 1: Corollary C.1's ``zeta_t = 1``); None for NVLDB, whose
        ``zeta_t`` is eq. 5's and which refuses a constant."""
        if cls.variance_aware:
            if zeta is not None:
                raise ConfigError(
                    f"{where}.zeta: a constant zeta is NLDB's (the variance-agnostic variants); "
                    f"NVLDB sets zeta_t = max(sigma_t, epsilon) by eq. 5, got {zeta!r}"
                )
            return None
        return 1.0 if zeta is None else float(zeta)

    @property
    def weighted_loss(self) -> bool:
        """Whether eq. 4's terms carry weights other than 1 (NVLDB, or NLDB with a constant zeta != 1)."""
        return self.variance_aware or self.zeta_const != 1.0

    @classmethod
    def batch(cls, policies: Sequence["_NeuralLinearDueling"]) -> "BatchedNeuralLinearDueling":
        """The block's policies run in lockstep (:class:`BatchedNeuralLinearDueling`)."""
        return BatchedNeuralLinearDueling(policies)

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        d = facts.get("dimension", 1)
        D = d if values["feature_dim"] is None else values["feature_dim"]
        arm_bytes = 4 if values["precision"] == "float32" else 8
        # both arms and Delta phi of every round, labels, zeta^2 and two flags per round, V^{-1}
        return horizon * (2 * arm_bytes * d + 8 * D + 18) + 8 * D * D

    # --- feedback ---------------------------------------------------------------
    def observe(self, t: int, arrived: Sequence[PreferenceFeedback]) -> None:
        for fb in arrived:
            self.labels[fb.round - 1] = fb.y
            self.arrived[fb.round - 1] = True

    # --- model ------------------------------------------------------------------
    def features(self, params: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``phi(x; W)`` of every row of ``x`` (the network's last layer, shape ``(n, D)``)."""
        return self.net.forward(params[: self.last.start], x)

    def _played(self, rows: np.ndarray) -> torch.Tensor:
        """The first arms of the given played rounds stacked on their second arms, ``(2n, d)``."""
        idx = torch.from_numpy(rows)
        return torch.cat([self.x_first[idx], self.x_second[idx]])

    def _pair_features(self, params: torch.Tensor, played: torch.Tensor) -> torch.Tensor:
        """``phi(x_{s,1}; W) - phi(x_{s,2}; W)`` of stacked played pairs (:meth:`_played`), one forward pass."""
        phi = self.features(params, played)
        n = len(played) // 2
        return phi[:n] - phi[n:]

    def _train(self, rows: np.ndarray) -> None:
        """Lines 9–10: gradient steps on eq. 4 for ``(theta, W)``, then ``theta`` refit with ``W`` fixed."""
        played = self._played(rows)
        labels = torch.from_numpy(self.labels[rows]).to(self.dtype)
        weights = torch.from_numpy(1.0 / self.zeta2[rows]).to(self.dtype) if self.weighted_loss else None
        last = self.last
        if self.backprop == "manual":
            x = self.net.embed(played).numpy()
            y, w = labels.numpy(), None if weights is None else weights.numpy()
            self.trainer.fit_gradient(lambda params: self._gradient(params, x, y, w))
        else:
            self.trainer.fit(lambda params: self._pair_features(params, played) @ params[last], labels, weights)
        if self.refit_theta:
            with torch.no_grad():
                X = self._pair_features(self.trainer.current, played).double().numpy()
            theta = fit_logistic(
                X,
                self.labels[rows],
                self.lam,
                self.trainer.current[last].double().numpy(),
                weights=None if weights is None else 1.0 / self.zeta2[rows],
                max_iter=self.newton_steps,
                centre=self.theta0,
            )
            self.trainer.assign(last, torch.from_numpy(theta).to(self.dtype))

    def _gradient(
        self, params: np.ndarray, x: np.ndarray, labels: np.ndarray, weights: np.ndarray | None
    ) -> np.ndarray:
        """Gradient in ``[W; theta]`` of eq. 4's data term ``sum_s w_s [softplus(Delta f_s) - o_s Delta f_s]``,
        ``Delta f_s = theta^T (phi(x_{s,1}; W) - phi(x_{s,2}; W))``, by a hand-written backward pass of
        ``phi = sqrt(m) ReLU(W^L ReLU(... ReLU(W^1 x)))``; ``x`` holds the embedded first arms on top of the
        second arms (``backprop: manual``, module docstring).  Every activation and its gradient lives in
        :attr:`workspace` (no allocation per step; ReLU and its derivative in place)."""
        net, rows = self.net, len(x)
        n = rows // 2
        mats = [params[a:b].reshape(shape) for a, b, shape in zip(net.offsets[:-1], net.offsets[1:], net.shapes)]
        theta = params[self.last]
        work = self.workspace.views(rows)
        hidden = [x]
        for W, h in zip(mats[:-1], work.hidden):
            np.matmul(hidden[-1], W.T, out=h)
            hidden.append(np.maximum(h, 0, out=h))
        phi = np.matmul(hidden[-1], mats[-1].T, out=work.phi)
        phi *= net.scale
        np.maximum(phi, 0, out=phi)
        dphi = np.subtract(phi[:n], phi[n:], out=work.dphi)
        # d/d(Delta f) of softplus - o Delta f; expit keeps mu's relative accuracy in float32 (1 + tanh cancels)
        dz = expit(dphi @ theta) - labels
        if weights is not None:
            dz *= weights
        grad = np.empty_like(params)
        grad[self.last] = dphi.T @ dz
        g = work.grads[-1]  # d/d(W^L h): first arms, then second
        np.multiply.outer(dz, net.scale * theta, out=g[:n])
        np.negative(g[:n], out=g[n:])
        _relu_backward(g, phi)
        for i in range(len(mats) - 1, -1, -1):
            np.matmul(g.T, hidden[i], out=grad[net.offsets[i] : net.offsets[i + 1]].reshape(net.shapes[i]))
            if i:
                g = np.matmul(g, mats[i], out=work.grads[i - 1])
                _relu_backward(g, hidden[i])
        return grad

    def _set_weights(self, rows: np.ndarray) -> None:
        """Lines 12–13: ``zeta_s`` by eq. 5 under the current parameters, then
        ``V += Delta phi Delta phi^T / zeta^2``."""
        if self.variance_aware:
            params = self.trainer.current
            with torch.no_grad():
                delta_f = (self._pair_features(params, self._played(rows)) @ params[self.last]).double().numpy()
            p = sigmoid(delta_f)
            self.zeta2[rows] = np.maximum(np.sqrt(p * (1.0 - p)), self.epsilon) ** 2
        for s in rows:
            self.gram.update(self.dphi[s], 1.0 / self.zeta2[s])
        self.weighted[rows] = True

    def _inverse(self, params: torch.Tensor) -> np.ndarray:
        """``V_{t-1}^{-1}`` as ``gram`` says (module docstring)."""
        if self.gram_mode == "incremental":
            return self.gram.inverse
        D = len(self.theta0)
        V = self.lam * np.eye(D)
        rows = np.flatnonzero(self.weighted)
        if self.gram_mode == "rebuild" and len(rows):
            with torch.no_grad():
                X = self._pair_features(params, self._played(rows)).double().numpy()
            V += (X.T / self.zeta2[rows]) @ X
        return np.linalg.inv(V)

    # --- selection ----------------------------------------------------------------
    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        ready = np.flatnonzero(self.weighted)  # rounds i <= t - 2 with zeta_i set: eq. 4's L_{t-1}
        if len(ready) and self.trainer.due(t):
            self._train(ready)
        pending = np.flatnonzero(self.arrived & ~self.weighted)
        if len(pending):
            self._set_weights(pending)
        params = self.trainer.current
        x = torch.tensor(arms, dtype=self.dtype)  # a copy: the arm set is read-only
        with torch.no_grad():
            phi = self.features(params, x).double().numpy()
        u = phi @ params[self.last].double().numpy()
        widths = pair_widths(phi, self._inverse(params))
        first, second = select_pair(self.strategy, u, widths, self.a, self.rng, t, self.csym_sample, self.distinct_pair)
        self.x_first[t - 1], self.x_second[t - 1] = x[first], x[second]
        self.dphi[t - 1] = phi[first] - phi[second]
        return first, second


@register("nvldb_ucb_asym")
class NVLDBUcbAsym(_NeuralLinearDueling):
    """NVLDB-UCB-ASYM (seed 001, Algorithm 1): greedy first arm, UCB second arm (Sec. 4.2.1), variance-aware."""

    strategy, variance_aware = "ucb_asym", True


@register("nvldb_ucb_osym")
class NVLDBUcbOsym(_NeuralLinearDueling):
    """NVLDB-UCB-OSYM (seed 001): the pair maximising summed utilities plus the pair width, variance-aware."""

    strategy, variance_aware = "ucb_osym", True


@register("nvldb_ucb_csym")
class NVLDBUcbCsym(_NeuralLinearDueling):
    """NVLDB-UCB-CSYM (seed 001): the widest pair among the candidate set C_t, variance-aware."""

    strategy, variance_aware = "ucb_csym", True


@register("nvldb_ts_asym")
class NVLDBTsAsym(_NeuralLinearDueling):
    """NVLDB-TS-ASYM (seed 001, Sec. 4.2.2): greedy first arm, Thompson-sampled second arm, variance-aware."""

    strategy, variance_aware = "ts_asym", True


@register("nvldb_ts_osym")
class NVLDBTsOsym(_NeuralLinearDueling):
    """NVLDB-TS-OSYM (seed 001): both arms from one Gaussian draw per pair, variance-aware."""

    strategy, variance_aware = "ts_osym", True


@register("nvldb_ts_csym")
class NVLDBTsCsym(_NeuralLinearDueling):
    """NVLDB-TS-CSYM (seed 001): sampled pair width among the candidate set C_t, variance-aware."""

    strategy, variance_aware = "ts_csym", True


@register("nldb_ucb_asym")
class NLDBUcbAsym(_NeuralLinearDueling):
    """NLDB-UCB-ASYM (seed 001, App. E.3): NVLDB-UCB-ASYM with zeta = 1 (variance-agnostic)."""

    strategy, variance_aware = "ucb_asym", False


@register("nldb_ucb_osym")
class NLDBUcbOsym(_NeuralLinearDueling):
    """NLDB-UCB-OSYM (seed 001, App. E.3): NVLDB-UCB-OSYM with zeta = 1 (variance-agnostic)."""

    strategy, variance_aware = "ucb_osym", False


@register("nldb_ucb_csym")
class NLDBUcbCsym(_NeuralLinearDueling):
    """NLDB-UCB-CSYM (seed 001, App. E.3): NVLDB-UCB-CSYM with zeta = 1 (variance-agnostic)."""

    strategy, variance_aware = "ucb_csym", False


@register("nldb_ts_asym")
class NLDBTsAsym(_NeuralLinearDueling):
    """NLDB-TS-ASYM (seed 001, App. E.3): NVLDB-TS-ASYM with zeta = 1 (variance-agnostic)."""

    strategy, variance_aware = "ts_asym", False


@register("nldb_ts_osym")
class NLDBTsOsym(_NeuralLinearDueling):
    """NLDB-TS-OSYM (seed 001, App. E.3): NVLDB-TS-OSYM with zeta = 1 (variance-agnostic)."""

    strategy, variance_aware = "ts_osym", False


@register("nldb_ts_csym")
class NLDBTsCsym(_NeuralLinearDueling):
    """NLDB-TS-CSYM (seed 001, App. E.3): NVLDB-TS-CSYM with zeta = 1 (variance-agnostic)."""

    strategy, variance_aware = "ts_csym", False
