r"""Neural logistic bandits (seed 002: Bae and Lee, "Neural Logistic Bandits") and the NCBF-UCB baseline.

Every policy here fits a network ``f(x; theta)`` (:mod:`.nets`) to Bernoulli rewards by
the regularised cross-entropy of Subroutine TrainNN (:mod:`.training`) and selects
:math:`\operatorname*{arg\,max}_x \mathrm{mean}(x) + \mathrm{radius}_{t-1} \lVert\phi(x)\rVert_{M_{t-1}^{-1}}` (UCB) or
the argmax of :math:`\mathcal{N}\bigl(\mathrm{mean}(x), (\mathrm{radius}_{t-1} \lVert\phi(x)\rVert_{M_{t-1}^{-1}})^2\bigr)`
samples (TS):

================  =============================================  ============================  ===================================
policy            mean(x)                                        matrix :math:`M_t`            radius
================  =============================================  ============================  ===================================
NeuralLog-UCB-1   :math:`\mu(f(x; \theta_{t-1}))`                :math:`V_t`                   :math:`R \sqrt{\kappa}\, \nu^{(1)}`
NeuralLog-TS-1    :math:`f(x; \theta_{t-1})` (sampled)           :math:`V_t`                   :math:`\sqrt{\kappa}\, \nu^{(1)}`
NeuralLog-UCB-2   :math:`g(x)^\top (\theta_{t-1} - \theta_0)`    :math:`W_t`                   :math:`\nu^{(2)}`
NeuralLog-TS-2    :math:`g(x)^\top (\theta_{t-1} - \theta_0)`    :math:`W_t`                   :math:`\nu^{(2)}`
NCBF-UCB          :math:`f(x; \theta_{t-1})`                     :math:`V_t` (fixed ``lam``)   Verma et al.
================  =============================================  ============================  ===================================

with :math:`V_t = \sum \phi\phi^\top + \kappa\lambda_t I` and
:math:`W_t = \sum \dot\mu(f(x_i; \theta_i))\, \phi\phi^\top + \lambda_t I` (:math:`\dot\mu = \mu'`).

* NeuralLog-UCB-1: Algorithm 1 line 2 with :math:`\nu^{(1)}` of eq. 1 and :math:`\iota_t` of eq. 2;
  NeuralLog-UCB-2: Algorithm 2 line 2 (eq. 5) with :math:`\nu^{(2)}` of eq. 4.
* NeuralLog-TS-1 / -2 (App. I and J): :math:`\sigma_t(x)^2 = \kappa\lambda_t \lVert\phi\rVert^2_{V_t^{-1}}` and
  :math:`\nu_t = \nu^{(1)}_t \lambda_t^{-1/2}`, so the sampling deviation :math:`\nu\sigma` is
  :math:`\sqrt{\kappa}\, \nu^{(1)} \lVert\phi\rVert_{V^{-1}}`; TS-2 likewise :math:`\nu^{(2)} \lVert\phi\rVert_{W^{-1}}`
  (App. I's :math:`\sigma'_t(x)^2 = \lambda_t \lVert\phi\rVert_{W^{-1}}` lacks the square on the norm that its TS-1
  analogue has; we read it with the square).  The appendix samples with ``nu_T``, the radius at the horizon,
  which is unknown at round t; we use the running ``nu_{t-1}`` as the UCB variants do.
* NCBF-UCB (Verma et al. 2025, neural contextual bandits with binary feedback): the
  latent UCB :math:`f(x; \theta) + \nu_T \sigma_{t-1}(x)` with
  :math:`\sigma = \sqrt{\kappa\lambda}\, \lVert\phi\rVert_{V^{-1}}`,
  :math:`V = \sum \phi\phi^\top + \kappa\lambda I` (``lam / kappa_mu`` with ``kappa_mu = 1 / kappa``) and
  :math:`\nu_T = \bigl(\beta + S\sqrt{\kappa\lambda} + 1\bigr) / (\kappa\lambda)`,
  :math:`\beta = \kappa \sqrt{d_t + 2\log(1/\delta)}`,
  i.e. radius :math:`\bigl(\beta + S\sqrt{\kappa\lambda} + 1\bigr) / \sqrt{\kappa\lambda}`; its effective dimension is
  :math:`d_t = \log\det\bigl(I + \sum \phi\phi^\top / (\kappa\lambda)\bigr)` (Verma et al.; seed 002 App. A writes it
  at lam = 1).

Parameters and choices (all family parameters, declared once in the base class):

* ``mean``: ``"algorithm"`` takes each algorithm's estimate literally (table above):
  NeuralLog-UCB-2 and -TS-2 use ``g(x)^T (theta_{t-1} - theta_0)`` (Algorithm 2 line 2, eq. 5;
  App. J's TS-2), with ``g`` at ``gradient_at``; the paper grid (``config/neural_logistic.yaml``)
  runs this.  ``"network"`` (the class default, kept for the other configs) uses the network's
  output ``f(x; theta_{t-1})``, which the linearisation approximates (``f(x; theta_0) = 0``),
  reading App. A's "mean estimate + bonus" loosely; the paper grid reports it as the named
  variants ``neurallog_ucb2_network`` / ``neurallog_ts2_network``.  The other three variants
  use the network either way.
* ``radius``: ``"order"`` (default) follows seed 002 App. A: the bonus keeps the dependence
  of the theoretical radius on S, lam, kappa and the running effective dimension
  :math:`d_t = \log\det\bigl(I + (R / \lambda_0) \sum \phi\phi^\top\bigr)` (eq. 2's log-determinant, App. A's
  :math:`\log\det\bigl(\sum R g g^\top + I\bigr)`) and drops absolute constants, L, delta and log t factors,
  then is multiplied by the exploration parameter ``nu``: NeuralLog
  :math:`\nu^{(1)} = \nu^{(2)} \to S^2 \bigl(\sqrt{d_t} + \lambda_0^{-1/2}\bigr)`
  (App. I: :math:`\nu_T^{(1)} = O(S^2 \sqrt{d} + S^{2.5})` with
  :math:`\lambda_0 = O(1/S)`), NCBF :math:`\to \sqrt{\kappa d_t / \lambda} + S`.  ``"theory"`` evaluates eqs. 1, 2 and
  4 (Verma's ``nu_T``) as written, with the absolute constants ``C_1 = c1`` and
  ``C_6 = C_7 = c_nu`` (default 1) — radii in the thousands, which is why the paper's
  experiments rescale them.
* ``nu`` and ``lam`` (Sec. 7: "fixed values of nu and lam with the best parameter values
  using grid search over {0.01, 0.1, 1, 10, 100}"): defaults ``nu = 0.01``, ``lam = 10``
  (NCBF-UCB: ``nu = 0.1``), the best pairs in our run of that search on h1 (one tuning
  seed, 1000, not used by the experiments; docs/papers/seed-002-neural-logistic.md).  The
  paper grid sets its own per-family values (``workflow/scripts/tune_neural_logistic.py``).
* ``lam``: a number fixes ``lam_t = lam``; ``"adaptive"`` follows eq. 3 with
  :math:`\lambda_0 = 8\sqrt{2}\, C_1 \sqrt{L} \log(4/\delta) / S` (Algorithm 1, line 0).  With a fixed
  ``lam`` the log-determinant and eq. 2 use ``lam_0 = lam``.  ``t`` in ``log(4 t^2 / delta)``
  counts the observations so far (at least 1, so that round 1 is defined).
* Sec. 7's practical adjustments, each its own option, defaulting to the experiments:
  ``gradient_at: current`` uses ``g(x; theta_{t-1})`` at play time (``initial``: ``g(x; theta_0)``);
  ``gradient_scale: one`` uses ``phi = g`` instead of ``g / sqrt(m)`` (``inverse_sqrt_width``);
  ``regulariser: l2`` uses ``lam ||theta||^2`` instead of TrainNN's ``(m lam / 2) ||theta - theta_0||^2``
  (``ntk``).
* ``confidence``: ``diagonal`` (default) keeps ``diag(M_t)`` — the paper's approximation
  "to reduce the computational burden" — and the Hadamard bound
  ``sum_j log(1 + (R / lam_0) sum_i phi_ij^2)`` of the log-determinant; ``full`` keeps
  ``M_t^{-1}`` and the log-determinant exactly by Sherman–Morrison and the matrix
  determinant lemma (O(p^2) per round; two p x p matrices for NeuralLog, one for
  NCBF-UCB, one more with ``lam: adaptive``).  Measured on h1 (d = 20, m = 20, p = 820,
  T = 2000, three seeds; ``benchmarks/neurallog_speed.py``, docs/papers/seed-002-neural-logistic.md) ``full`` lowers the
  Thompson variants' regret by about 30 % but raises the UCB variants' by 5–16 % at the
  defaults (which were tuned with the diagonal), for up to 3x the time of a job; we ship
  the paper's ``diagonal``.  A full matrix needing more than 2 GiB is refused with an
  error.  With ``lam: adaptive`` the full ridge ``kappa lam_t`` / ``lam_t`` is
  refreshed (one O(p^3) inversion) whenever the network retrains, the diagonal one
  every round.
* ``effective_dimension``: ``"scaled"`` (default) divides by the ridge, ``log det(I + (R / lam_0)
  sum phi phi^T)`` (eq. 2; NCBF-UCB ``log det(I + sum phi phi^T / (kappa lam))``); ``"app_a"`` is
  App. A's d~ without lam, ``log det(sum R g g^T + I)`` (NCBF-UCB: ``log det(sum (1/kappa) g g^T +
  I)``), only with ``radius: order`` and a fixed ``lam`` (eqs. 1-4 use eq. 2's).
* Training (App. A, Sec. 7): width ``m = 20``, depth 2, ``train_every = 50`` rounds,
  ``train_steps = 100`` steps (:mod:`.training`) at ``lr = 0.01``, warm-started.  ``optimizer``:
  ``"adam"`` (default; moments kept across retrains) or ``"gd"`` (Sec. 7: "gradient descent
  steps"); ``minibatch``: null (default, full batch) or B samples per step (App. J.1: "batch
  size 50").  ``kappa = 10``, ``norm_bound = S = 1``; ``delta = 0.05`` (not stated by the paper:
  our choice; it enters only ``radius: theory`` and ``lam: adaptive``).
* ``W_t``'s weight ``mu'(f(x_i; theta_i))`` is taken with the parameters current when
  round i's feedback is absorbed (after the retraining that round triggers, if any).

Feedback is absorbed at the start of the next ``act`` in the order of Algorithm 1 lines 4–6
(radius and ``lam_t``, training, confidence matrix).  Calling ``act`` twice in one round (a
replay environment that declined the first choice) replaces that round's pending choice.

Seed-batched runs (issue #22): :class:`BatchedNeuralLogistic` plays a block of seeds in lockstep for
the order radius, a fixed ``lam`` and the diagonal ``M_t`` (the paper grid's forms and the defaults,
either optimiser, with or without minibatches); :meth:`_NeuralLogisticBase.batch` refuses the others
(``radius: theory``, ``lam: adaptive``, ``confidence: full``), whose seeds run on the single-seed path.
``device``: where the seed-batched path keeps its tensors, ``"cpu"`` (default) or ``"cuda"`` (refused
before any job where torch sees no GPU); the single-seed path always runs on the CPU.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal, Mapping, Sequence

import numpy as np
import torch

from ...api import Policy, Problem, SeedBatched, choose, register
from ...errors import POLICY_PARAMS, ConfigError
from ...feedback import RewardFeedback
from ...numerics.sigmoid import MU_DOT_MAX, sigmoid
from ...params import Doc, NonNegative, OneOf, Positive, PositiveInt, Probability
from ..linalg import DiagonalGram, InverseGram
from . import parameters
from .batched.logistic import BatchedNeuralLogistic
from .nets import DTYPE, generator_from, layer_shapes
from .parameters import Network

#: upper bound of mu' for the logistic link (seed 002 Sec. 2: R <= 1/4)
R = MU_DOT_MAX
CHOICES = {
    "mean": ("network", "algorithm"),
    "radius": ("order", "theory"),
    "gradient_at": ("current", "initial"),
    "gradient_scale": ("one", "inverse_sqrt_width"),
    "regulariser": ("l2", "ntk"),
    "confidence": ("diagonal", "full"),
    "effective_dimension": ("scaled", "app_a"),
    "optimizer": ("adam", "gd"),
}

# --- the family's parameters: what each value may be (the network's: :mod:`.parameters`) and what it means ---
Width = Annotated[parameters.Width, Doc("hidden width ``m`` of the network ``f(x; theta)`` (App. A, Sec. 7: 20).")]
Depth = Annotated[
    parameters.Depth,
    Doc("number of layers ``L`` of the network (Sec. 7: 2); enters ``lam: adaptive``'s ``lam_0``."),
]
Init = Annotated[
    parameters.Init,
    Doc(
        "initialisation of ``theta_0`` (:mod:`banditbench.policies.neural.nets`); ``symmetric`` makes "
        "``f(x; theta_0) = 0``."
    ),
]
Nu = Annotated[
    NonNegative,
    Doc(
        "exploration parameter multiplying the radius (Sec. 7: grid-searched over "
        "{0.01, 0.1, 1, 10, 100}; default from our run of that search on h1)."
    ),
]
#: NCBF-UCB's ``nu``
NcbfNu = Annotated[
    NonNegative,
    Doc(
        "exploration parameter multiplying Verma et al.'s radius (Sec. 7's grid search; default from our "
        "run of it on h1)."
    ),
]
Lam = Annotated[
    Positive | Literal["adaptive"],
    Doc(
        "the regularisation ``lam_t``: a number fixes it (Sec. 7's grid search); ``adaptive`` is eq. 3 "
        "with ``lam_0`` of Algorithm 1 line 0 (not for NCBF-UCB)."
    ),
]
Kappa = Annotated[
    Positive,
    Doc(
        "``kappa``, the inverse lower bound on ``mu'`` (Sec. 7: 10); scales ``V_t``'s ridge "
        "``kappa lam_t`` and the radius."
    ),
]
NormBound = Annotated[Positive, Doc("``S``, the bound on the parameter norm in the radius (Sec. 7: 1).")]
Delta = Annotated[
    Probability,
    Doc(
        "failure probability (our choice, not stated by the paper); enters only ``radius: theory`` and "
        "``lam: adaptive``."
    ),
]
Radius = Annotated[
    str,
    OneOf(CHOICES["radius"]),
    Doc(
        "``order`` keeps the theoretical radius's dependence on S, lam, kappa and ``d_t`` without "
        "constants (App. A); ``theory`` evaluates eqs. 1, 2 and 4 as written."
    ),
]
C1 = Annotated[Positive, Doc("the absolute constant ``C_1`` of ``radius: theory`` and ``lam: adaptive``'s ``lam_0``.")]
CNu = Annotated[Positive, Doc("the absolute constants ``C_6 = C_7`` of ``radius: theory`` (eqs. 1 and 4).")]
Mean = Annotated[
    str,
    OneOf(CHOICES["mean"]),
    Doc(
        "``algorithm`` takes each algorithm's mean estimate literally (NeuralLog-*-2: "
        "``g(x)^T (theta - theta_0)``, Algorithm 2 line 2, eq. 5); ``network`` uses ``f(x; theta)``."
    ),
]
GradientAt = Annotated[
    str,
    OneOf(CHOICES["gradient_at"]),
    Doc("where the gradient features are taken: ``current`` at ``theta_{t-1}`` (Sec. 7), ``initial`` at ``theta_0``."),
]
GradientScale = Annotated[
    str,
    OneOf(CHOICES["gradient_scale"]),
    Doc("``one`` uses ``phi = g`` (Sec. 7), ``inverse_sqrt_width`` ``phi = g / sqrt(m)``."),
]
Regulariser = Annotated[
    str,
    OneOf(CHOICES["regulariser"]),
    Doc(
        "``l2`` regularises training with ``lam ||theta||^2`` (Sec. 7), ``ntk`` with TrainNN's "
        "``(m lam / 2) ||theta - theta_0||^2``."
    ),
]
Confidence = Annotated[
    str,
    OneOf(CHOICES["confidence"]),
    Doc(
        "``diagonal`` keeps ``diag(M_t)`` (the paper's approximation, Sec. 7); ``full`` the exact "
        "inverse and log-determinant (O(p^2) per round; refused above 2 GiB)."
    ),
]
LearningRate = Annotated[parameters.LearningRate, Doc("learning rate of the training steps (Sec. 7: 0.01).")]
TrainSteps = Annotated[parameters.TrainSteps, Doc("optimiser steps of each warm-started retraining (Sec. 7: 100).")]
TrainEvery = Annotated[
    parameters.TrainEvery,
    Doc("retrain every this many rounds (App. A: 50); ``doubling`` at rounds 2, 4, 8, ..."),
]
EffectiveDimension = Annotated[
    str,
    OneOf(CHOICES["effective_dimension"]),
    Doc(
        "``scaled`` divides by the ridge, ``log det(I + (R / lam_0) sum phi phi^T)`` (eq. 2); ``app_a`` is "
        "App. A's ``log det(sum R g g^T + I)`` (only with ``radius: order`` and a fixed lam)."
    ),
]
Optimizer = Annotated[
    str,
    OneOf(CHOICES["optimizer"]),
    Doc('``adam`` (moments kept across retrains) or ``gd`` (Sec. 7: "gradient descent steps").'),
]
Minibatch = Annotated[
    PositiveInt | None, Doc("samples per training step; null is the full batch (App. J.1: batch size 50).")
]
Device = Annotated[
    parameters.Device,
    Doc(
        "where the seed-batched path keeps its tensors, ``cpu`` or ``cuda`` (refused before any job where "
        "torch sees no GPU); the single-seed path always runs on the CPU."
    ),
]


class Design:
    """``M = sum_i w_i phi_i phi_i^T + ridge I`` (full inverse or diagonal) and ``log det(M / ridge_0)``.

    The log-determinant is exact for the full matrix (determinant lemma, while the
    ridge stays at its initial value) and the Hadamard bound ``sum_j log(M_jj / ridge_0)``
    for the diagonal one.  :meth:`set_ridge` moves the ridge (an O(p^3) re-inversion
    for the full matrix, O(p) for the diagonal).
    """

    def __init__(self, dimension: int, ridge: float, full: bool, movable: bool = False):
        self.full, self.ridge, self.ridge0 = full, float(ridge), float(ridge)
        # a full matrix whose ridge may move keeps M itself too, to re-invert it
        self.gram = InverseGram(dimension, ridge, keep_matrix=movable) if full else DiagonalGram(dimension, ridge)
        self._log_det = 0.0

    def update(self, phi: np.ndarray, weight: float = 1.0) -> None:
        if self.full:
            self._log_det += math.log1p(weight * self.gram.update(phi, weight))
        else:
            self.gram.update(phi, weight)

    def norms(self, rows: np.ndarray) -> np.ndarray:
        return self.gram.norms(rows)

    @property
    def log_det(self) -> float:
        """``log det(M) - p log(ridge_0)`` (exact or Hadamard bound, class docstring)."""
        if self.full:
            if self.ridge != self.ridge0:
                raise RuntimeError("the exact log-determinant is tracked only at the initial ridge")
            return self._log_det
        added = np.maximum(self.gram.diagonal - self.ridge, 0.0)  # sum_i w_i phi_ij^2 (>= 0 up to rounding)
        return float(np.log1p(added / self.ridge0).sum())

    def set_ridge(self, ridge: float) -> None:
        if ridge == self.ridge:
            return
        if self.full:
            self.gram.matrix[np.diag_indices_from(self.gram.matrix)] += ridge - self.ridge
            self.gram.inverse = np.linalg.inv(self.gram.matrix)
        else:
            self.gram.diagonal += ridge - self.ridge
        self.ridge = float(ridge)


class _NeuralLogisticBase(Policy):
    """The shared loop of the family (module docstring); subclasses set the four class attributes."""

    feedback_kind = "reward"
    action_kind = "arm"
    #: "V" (Algorithm 1, ridge kappa lam_t) or "W" (Algorithm 2, mu'-weighted, ridge lam_t)
    design: ClassVar[str] = "V"
    #: mean of an arm: "probability" mu(f), "latent" f, or "linearised" g^T (theta - theta_0)
    mean: ClassVar[str] = "probability"
    #: Thompson sampling instead of the upper confidence bound
    sampling: ClassVar[bool] = False
    #: the radius of seed 002 eqs. 1/4 ("neurallog") or of Verma et al. ("ncbf")
    radius_kind: ClassVar[str] = "neurallog"
    #: the five algorithms share :class:`BatchedNeuralLogistic`, which takes the class attributes above per member
    #: (their family), and nu and lam (Sec. 7's nu / lam grid played in lockstep)
    engines = {"seed-batched": SeedBatched(per_member=("nu", "lam"), family="neural_logistic")}

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        width: Width = 20,
        depth: Depth = 2,
        init: Init = "symmetric",
        nu: Nu = 0.01,
        lam: Lam = 10.0,
        kappa: Kappa = 10.0,
        norm_bound: NormBound = 1.0,
        delta: Delta = 0.05,
        radius: Radius = "order",
        c1: C1 = 1.0,
        c_nu: CNu = 1.0,
        mean: Mean = "network",
        gradient_at: GradientAt = "current",
        gradient_scale: GradientScale = "one",
        regulariser: Regulariser = "l2",
        confidence: Confidence = "diagonal",
        lr: LearningRate = 0.01,
        train_steps: TrainSteps = 100,
        train_every: TrainEvery = 50,
        effective_dimension: EffectiveDimension = "scaled",
        optimizer: Optimizer = "adam",
        minibatch: Minibatch = None,
        device: Device = "cpu",
    ):
        network = Network(width, depth, init, lr, train_steps, train_every, device)
        self._check_relations(radius, lam, effective_dimension)
        self.device, self.radius, self.gradient_at, self.regulariser = device, radius, gradient_at, regulariser
        self.mean_kind = "latent" if self.mean == "linearised" and mean != "algorithm" else self.mean
        self.nu, self.kappa, self.S = float(nu), float(kappa), float(norm_bound)
        self.c1, self.c_nu = float(c1), float(c_nu)
        self.delta, self.depth = float(delta), depth
        self.adaptive = lam == "adaptive"
        self.lam0 = self.lam_t = self._initial_lam(lam)
        self.rng, self.horizon = rng, problem.horizon
        self.net = network.mlp(int(problem["dimension"]), generator_from(rng))
        self.phi_scale = 1.0 if gradient_scale == "one" else 1.0 / math.sqrt(width)
        # a minibatch stream only when asked for: the default runs draw nothing more from rng
        self.trainer = network.trainer(
            self.net.theta0,
            self._loss_weight(),
            centre="init" if regulariser == "ntk" else "zero",
            optimizer=optimizer,
            batch=minibatch,
            generator=generator_from(rng) if minibatch is not None else None,
        )
        self._designs(confidence == "full", effective_dimension == "app_a")
        self.X = torch.zeros(self.horizon, int(problem["dimension"]), dtype=DTYPE)
        self.y = torch.zeros(self.horizon, dtype=DTYPE)
        self.n = 0  # observations absorbed
        self.pending: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.arrived: list[tuple[np.ndarray, np.ndarray, float]] = []
        self.conf_radius = self._radius()
        self._trained_at = 0

    def _initial_lam(self, lam: float | str) -> float:
        """``lam_0``: a fixed ``lam``, or with ``lam: adaptive`` Algorithm 1 line 0's (eq. 3 then moves ``lam_t``)."""
        if lam != "adaptive":
            return float(lam)
        self._check_lam(lam)
        return 8.0 * math.sqrt(2.0) * self.c1 * math.sqrt(self.depth) * math.log(4.0 / self.delta) / self.S

    def _designs(self, full: bool, app_a: bool) -> None:
        """``M_t`` (:attr:`matrix`) and the design of the effective dimension's log-determinant (module
        docstring: ``effective_dimension``); full matrices above 2 GiB are refused."""
        p = self.net.n_params
        if full:
            n_matrices = self._n_matrices(self.adaptive, app_a)
            gib = n_matrices * p * p * 8 / 2**30
            if gib > 2:
                raise ConfigError(
                    f"{POLICY_PARAMS}.confidence: 'full' keeps {n_matrices} p x p matrices, {gib:.1f} GiB for "
                    f"p = {p:,} parameters; use 'diagonal' (or a narrower network)"
                )
        self.matrix = Design(p, self._ridge(), full, movable=self.adaptive)
        if app_a:  # App. A: no lam in the effective dimension
            # NCBF: log det(sum (1/kappa) g g^T + I); NeuralLog: log det(sum R g g^T + I)
            self.log_det_design = Design(p, self.kappa if self.radius_kind == "ncbf" else 1.0 / R, full)
        elif self.radius_kind == "ncbf":
            self.log_det_design = self.matrix  # d_t = log det(I + sum phi phi^T / (kappa lam))
        else:
            self.log_det_design = Design(p, self.lam0 / R, full)  # eq. 2: log det(I + (R / lam_0) sum phi phi^T)

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        Network.check(values)
        cls._check_lam(values["lam"])
        cls._check_relations(values["radius"], values["lam"], values["effective_dimension"])

    @classmethod
    def batch(cls, policies: Sequence["_NeuralLogisticBase"]) -> "BatchedNeuralLogistic | None":
        """The block's policies run in lockstep (:class:`BatchedNeuralLogistic`), or None (the runner then
        plays each seed on the single-seed path) for the forms it does not cover: ``radius: theory``,
        ``lam: adaptive`` (a ridge that moves) and ``confidence: full``."""
        first = policies[0]
        if first.radius != "order" or first.adaptive or first.matrix.full:
            return None
        return BatchedNeuralLogistic(policies)

    @classmethod
    def _check_lam(cls, lam) -> None:
        if lam == "adaptive" and cls.radius_kind == "ncbf":
            raise ConfigError(f"{POLICY_PARAMS}.lam: NCBF-UCB uses a constant lam (Verma et al.); got 'adaptive'")

    @staticmethod
    def _check_relations(radius, lam, effective_dimension) -> None:
        if effective_dimension == "app_a" and (radius != "order" or lam == "adaptive"):
            raise ConfigError(
                f"{POLICY_PARAMS}.effective_dimension: 'app_a' is App. A's reading for the experiments' "
                f"order radius with a fixed lam; eqs. 1-4 (radius: theory, lam: adaptive) use eq. 2's "
                f"log det(I + (R / lam_0) sum g g^T) ('scaled'); got radius {radius!r}, lam {lam!r}"
            )

    @classmethod
    def _n_matrices(cls, adaptive: bool, app_a: bool) -> int:
        """p x p (or p-vector) matrices kept: M, the log-determinant's design unless shared, lam_t's copy."""
        return 1 + (cls.radius_kind != "ncbf" or app_a) + adaptive

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        d = facts.get("dimension", 1)
        p = sum(r * c for r, c in layer_shapes(d, values["width"], values["depth"], values["init"]))
        matrices = cls._n_matrices(values["lam"] == "adaptive", values["effective_dimension"] == "app_a")
        design = matrices * 8 * p * (p if values["confidence"] == "full" else 1)
        return 8 * horizon * (d + 1) + design  # every observed arm and reward, V / W

    # --- eqs. 1-4 ------------------------------------------------------------
    def _log_term(self) -> float:
        return math.log(4.0 * max(self.n, 1) ** 2 / self.delta)

    def _adaptive_lambda(self) -> float:
        """Eq. 3."""
        S, L, lt = self.S, self.depth, self._log_term()
        return (64.0 / S**2) * self.log_det_design.log_det * lt + 16.0 * self.c1**2 * L / (S**2 * self.lam0) * lt**2

    def _iota(self) -> float:
        """Eq. 2."""
        lt = self._log_term()
        return (
            16.0 * math.sqrt(self.log_det_design.log_det * lt) + 8.0 * self.c1 * math.sqrt(self.depth / self.lam0) * lt
        )

    def _radius(self) -> float:
        """The multiplier of ``||phi||_{M^{-1}}`` (before ``nu``), from the data absorbed so far."""
        d_t, S, kappa = self.log_det_design.log_det, self.S, self.kappa
        if self.radius_kind == "ncbf":
            kl = kappa * self.lam0
            if self.radius == "order":
                return math.sqrt(kappa * d_t / self.lam0) + S
            beta = kappa * math.sqrt(d_t + 2.0 * math.log(1.0 / self.delta))
            return (beta + S * math.sqrt(kl) + 1.0) / math.sqrt(kl)
        if self.radius == "order":
            nu_t = S**2 * (math.sqrt(d_t) + 1.0 / math.sqrt(self.lam0))
        else:
            L = self.depth
            nu_t = self.c_nu * (1.0 + math.sqrt(L) * S + L * S**2) * self._iota() + 1.0  # eqs. 1 and 4
        if self.design == "W":
            return nu_t
        return math.sqrt(kappa) * nu_t * (1.0 if self.sampling else R)

    def _ridge(self) -> float:
        return self.kappa * self.lam_t if self.design == "V" else self.lam_t

    def _loss_weight(self) -> float:
        """The Trainer's ``lam`` for ``(lam/2) ||theta - c||^2``: ``2 lam_t`` (``l2``) or ``m lam_t`` (``ntk``)."""
        return (self.net.width if self.regulariser == "ntk" else 2.0) * self.lam_t

    # --- feedback ------------------------------------------------------------
    def observe(self, t: int, arrived: Sequence[RewardFeedback]) -> None:
        for fb in arrived:
            phi, x = self.pending.pop(fb.round)
            self.arrived.append((phi, x, float(fb.reward)))

    def _absorb(self, t: int) -> None:
        """Algorithm 1/2 lines 4–6 for the feedback that arrived: radius and lam_t, TrainNN, M_t."""
        new = self.arrived
        self.arrived = []
        for phi, x, r in new:
            self.X[self.n], self.y[self.n] = torch.from_numpy(x), r
            self.n += 1
            if self.log_det_design is not self.matrix:
                self.log_det_design.update(phi)
        if new and self.adaptive:
            self.lam_t = self._adaptive_lambda()
        trained = self.n > 0 and t != self._trained_at and self.trainer.due(t)
        if trained:
            self._trained_at = t
            self.trainer.lam = self._loss_weight()
            X, y = self.X[: self.n], self.y[: self.n]
            self.trainer.fit(lambda theta: self.net.forward(theta, X), y)
        if new:
            weights = np.ones(len(new))
            if self.design == "W":
                with torch.no_grad():
                    f = self.net.forward(self.trainer.current, self.X[self.n - len(new) : self.n]).numpy()
                s = sigmoid(f)
                weights = s * (1.0 - s)
            for (phi, _, _), w in zip(new, weights):
                self.matrix.update(phi, float(w))
            if not self.matrix.full or trained:
                self.matrix.set_ridge(self._ridge())
            self.conf_radius = self._radius()

    # --- selection -----------------------------------------------------------
    def _centre(self, theta: torch.Tensor, x: torch.Tensor, g: np.ndarray) -> np.ndarray:
        """The mean of every arm (module docstring's table); ``g`` the arms' gradients at ``gradient_at``."""
        if self.mean_kind == "linearised":  # Algorithm 2 line 2, eq. 5, App. J
            return g @ (theta - self.net.theta0).numpy()
        with torch.no_grad():
            centre = self.net.forward(theta, x).numpy()
        if self.mean_kind == "probability":  # Algorithm 1, line 2
            centre = sigmoid(centre)
        return centre

    def act(self, t: int, arms: np.ndarray) -> int:
        self._absorb(t)
        theta = self.trainer.current
        x = torch.tensor(arms, dtype=DTYPE)  # a copy: environments' arrays are read-only
        at = theta if self.gradient_at == "current" else self.net.theta0
        g = self.net.gradients(at, x).numpy()
        phi = g * self.phi_scale if self.phi_scale != 1.0 else g
        centre = self._centre(theta, x, g)
        width = self.nu * self.conf_radius * self.matrix.norms(phi)
        if self.sampling:
            scores = centre + width * self.rng.standard_normal(len(centre))
        else:
            scores = centre + width
        arm = choose(scores, "sampled scores" if self.sampling else "UCB scores")  # first maximiser; NaN: diverged
        self.pending[t] = (phi[arm].copy(), np.array(arms[arm], dtype=np.float64))
        return arm


@register("neurallog_ucb1")
class NeuralLogUCB1(_NeuralLogisticBase):
    """NeuralLog-UCB-1 (seed 002 Algorithm 1): ``mu(f(x; theta)) + R sqrt(kappa) nu^(1) ||phi(x)||_{V^{-1}}``."""


@register("neurallog_ucb2")
class NeuralLogUCB2(_NeuralLogisticBase):
    """NeuralLog-UCB-2 (seed 002 Algorithm 2, eq. 5): ``nu^(2) ||phi(x)||_{W^{-1}}`` bonus, ``W`` weighted by mu'(f).

    ``W = sum mu'(f(x_i; theta_i)) phi_i phi_i^T + lam I``: the network's variance estimate.
    """

    design = "W"
    mean = "linearised"


@register("neurallog_ts1")
class NeuralLogTS1(_NeuralLogisticBase):
    """NeuralLog-TS-1 (seed 002 App. I): samples ``N(f(x), (sqrt(kappa) nu^(1) ||phi(x)||_{V^{-1}})^2)``, argmax."""

    mean = "latent"
    sampling = True


@register("neurallog_ts2")
class NeuralLogTS2(_NeuralLogisticBase):
    """NeuralLog-TS-2 (seed 002 App. I, Remark I.2): samples ``N(mean(x), (nu^(2) ||phi(x)||_{W^{-1}})^2)``, argmax."""

    design = "W"
    mean = "linearised"
    sampling = True


@register("ncbf_ucb")
class NCBFUCB(_NeuralLogisticBase):
    """NCBF-UCB (Verma et al. 2025, binary feedback): ``f(x; theta) + nu_T sigma(x)``, worst-case-variance ``V``.

    ``V = sum phi phi^T + kappa lam I`` with a constant ``lam``.
    """

    mean = "latent"
    radius_kind = "ncbf"

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        nu: NcbfNu = 0.1,
        **params,
    ):
        super().__init__(problem, rng, nu=nu, **params)
