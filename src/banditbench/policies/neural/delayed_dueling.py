r"""Neural dueling bandits with stochastic delayed feedback (seed 000: Wang et al., 2026, Sec. 3.2, Algorithm 2).

* :class:`NDBDF` — NDB-DF: the network ``h(x; theta_t)`` minimises the IPW-weighted
  cross-entropy of eq. 7 (weights :math:`\omega_{s,t}` of eq. 2, regulariser
  :math:`\frac{\lambda}{2} \lVert\theta - \theta_0\rVert^2`); the first arm is greedy on ``h`` (eq. 9), the
  second maximises :math:`h(x; \theta_t) + \nu_T \sigma_{t-1}(x, x_{t,1})` (eq. 10) with
  :math:`\sigma_{t-1}(x, x') = \sqrt{\lambda/\kappa_\mu}\, \left\lVert (g(x; \theta_0) - g(x'; \theta_0)) / \sqrt{m} \right\rVert_{V_{t-1}^{-1}}`
  (eq. 12) and :math:`V_{t-1} = (\lambda/\kappa_\mu) I + \frac{1}{m} \sum_s g'_s {g'_s}^\top` updated with
  every played pair at play time (eq. 8, line 11).
* :class:`NDBIgnore`, :class:`NDBHeuristic` — the baselines of Sec. 5.2 (:class:`NDBHeuristicAll`:
  the Heuristic that also imputes rounds known to be censored); :class:`NDBZero`
  — the treat-missing-as-zero estimator of Sec. 3.1 eq. 1.  All four differ only in
  their training set (:mod:`banditbench.policies.delayed_labels`).

Choices seed 000 leaves open (all parameters of the family, declared once here):

* ``nu``: a number is a constant ``nu_T``; ``"theory"`` evaluates eq. 11,
  :math:`\nu_T = \bigl(\beta_T + B \sqrt{\lambda/\kappa_\mu} + 1\bigr) \kappa_\mu / \lambda` with Lemma C.5's
  :math:`\beta_T = \sqrt{d_\mathrm{eff} + 2\log(1/\delta)} / \kappa_\mu` (``effective_dimension``
  ``d_eff`` and ``norm_bound`` B must then be given).  The default ``nu = 1``
  follows the constant exploration coefficient used in practice by the neural
  dueling literature (Verma et al. 2024), as ``beta = 1`` does for LDB-DF.
* The regulariser of eq. 7 in the NTK parametrisation: ``regulariser_scale =
  "width"`` (default) uses :math:`\frac{m\lambda}{2} \lVert\theta - \theta_0\rVert^2`, which is
  :math:`\frac{\lambda}{2} \lVert w\rVert^2` for the linearised model :math:`\Delta h = {\phi'}^\top w` with
  :math:`\phi' = g'/\sqrt{m}`, :math:`w = \sqrt{m}\, (\theta - \theta_0)` — the exact analogue of
  LDB-DF's :math:`\frac{\lambda}{2} \lVert\theta\rVert^2` next to eq. 8's ``V`` (and NeuralUCB's ``m lam``).
  ``"one"`` takes eq. 7's ``lam/2`` literally; with the ``sqrt(m)``-scaled output it
  is a ridge of only ``lam/m`` on ``w`` and the network fits the duels' noise.
* ``lam = 1``, ``kappa_mu = 0.1`` (as the linear family), width ``m = 32``,
  depth ``L = 2``, symmetric NTK initialisation (:mod:`.nets`).
* Training (:mod:`.training`): Adam, ``lr = 0.01``, ``train_steps = 10``
  full-batch steps every round (``train_every = 1``), warm-started — Algorithm 2
  line 7 retrains every round and does not say how.
* ``confidence``: ``"full"`` keeps ``V^{-1}`` exactly under Sherman–Morrison
  (O(p^2) per round, p x p memory); ``"diagonal"`` is the diagonal approximation of
  the public neural-bandit code.  When the environment shows the same arm set every
  round (``fixed_arms``, e.g. the 500 prompts), the gradient features at
  ``theta_0`` are computed once and the full matrix is carried exactly in the
  K x K arm kernel (:class:`~banditbench.policies.linalg.ArmKernelGram`).
* ``device``: where the seed-batched path (:class:`BatchedNeuralDueling`, what a simulate
  job runs) keeps its tensors, ``"cpu"`` (default) or ``"cuda"``; the single-seed path
  (``run_cell``, the reference) always runs on the CPU.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal, Mapping, Sequence

import numpy as np
import torch

from ...api import Policy, Problem, SeedBatched, choose, register
from ...errors import POLICY_PARAMS, ConfigError
from ...feedback import PreferenceFeedback
from ...params import Doc, NonNegative, OneOf, Positive, Probability
from ..delayed_labels import DuelHistory
from ..linalg import ArmKernelGram, DiagonalGram, InverseGram
from . import parameters
from .batched.delayed_dueling import BatchedNeuralDueling
from .nets import DTYPE, generator_from, layer_shapes
from .parameters import Network

CONFIDENCES = ("full", "diagonal")

# --- the family's parameters: what each value may be (the network's: :mod:`.parameters`) and what it means ---
Width = Annotated[
    parameters.Width,
    Doc("hidden width ``m`` of the network ``h(x; theta)`` (even for the symmetric initialisation)."),
]
Depth = Annotated[parameters.Depth, Doc("number of layers ``L`` of the network.")]
Init = Annotated[
    parameters.Init,
    Doc(
        "initialisation of ``theta_0`` (:mod:`banditbench.policies.neural.nets`): ``symmetric`` makes "
        "``h(x; theta_0) = 0`` (NTK)."
    ),
]
Lam = Annotated[Positive, Doc("regularisation of the loss of eq. 7 and ``V_0 = (lam / kappa_mu) I`` (eq. 8).")]
KappaMu = Annotated[Positive, Doc("lower bound on the link derivative (Assumption A2), as in the linear family.")]
Nu = Annotated[
    NonNegative | Literal["theory"],
    Doc(
        "exploration coefficient ``nu_T`` of eq. 10: a constant, or ``theory`` for eq. 11 with Lemma C.5's "
        "``beta_T`` (needs ``effective_dimension``)."
    ),
]
Delta = Annotated[Probability, Doc("failure probability of ``nu: theory`` (Lemma C.5).")]
EffectiveDimension = Annotated[
    Positive | None, Doc("``d_eff`` of Lemma C.5's ``beta_T``; required with ``nu: theory``, unused otherwise.")
]
NormBound = Annotated[NonNegative, Doc("``B`` of eq. 11 (``nu: theory`` only).")]
LearningRate = Annotated[
    parameters.LearningRate, Doc("Adam's learning rate (:mod:`banditbench.policies.neural.training`).")
]
TrainSteps = Annotated[
    parameters.TrainSteps, Doc("full-batch Adam steps of each (warm-started) retraining on the loss of eq. 7.")
]
TrainEvery = Annotated[
    parameters.TrainEvery,
    Doc("retrain every this many rounds (Algorithm 2 line 7: every round); ``doubling`` at rounds 2, 4, 8, ..."),
]
Confidence = Annotated[
    str,
    OneOf(CONFIDENCES),
    Doc(
        "``full`` keeps ``V^-1`` exactly (Sherman-Morrison, p x p memory); ``diagonal`` is the diagonal "
        "approximation of the public neural-bandit code."
    ),
]
RegulariserScale = Annotated[
    Literal["width", "one"],
    Doc(
        "``width`` regularises eq. 7 with ``(m lam / 2) ||theta - theta_0||^2`` (the NTK analogue of "
        "LDB-DF's ridge); ``one`` takes eq. 7's ``lam / 2`` literally."
    ),
]


class _NeuralDuelingBase(Policy):
    """Algorithm 2 of seed 000; subclasses name their delay strategy."""

    feedback_kind = "preference"
    action_kind = "pair"
    delay_strategy: ClassVar[str]
    #: NDB-DF, its delay baselines and NDB-UCB / NDB-TS share :class:`BatchedNeuralDueling`, which takes each
    #: member's delay strategy and second-arm rule, and these parameters (its ``nu_T``), per member; checked with
    #: the independent initialisation (the symmetric one scores every arm 0 in round 1: an exact tie that
    #: rounding decides)
    engines = {
        "seed-batched": SeedBatched(
            per_member=("nu", "delta", "effective_dimension", "norm_bound"),
            family="neural_dueling",
            check_params={"init": "independent"},
        )
    }

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        width: Width = 32,
        depth: Depth = 2,
        init: Init = "symmetric",
        lam: Lam = 1.0,
        kappa_mu: KappaMu = 0.1,
        nu: Nu = 1.0,
        delta: Delta = 0.05,
        effective_dimension: EffectiveDimension = None,
        norm_bound: NormBound = 1.0,
        lr: LearningRate = 0.01,
        train_steps: TrainSteps = 10,
        train_every: TrainEvery = 1,
        confidence: Confidence = "full",
        regulariser_scale: RegulariserScale = "width",
        device: parameters.SeedBatchedDevice = "cpu",
    ):
        network = Network(width, depth, init, lr, train_steps, train_every, device)
        self.rng, self.device = rng, device
        self.d, self.horizon = int(problem["dimension"]), problem.horizon
        self.lam, self.kappa_mu = lam, kappa_mu
        self.net = network.mlp(self.d, generator_from(rng))
        # eq. 7's regulariser (m lam / 2) ||theta - theta_0||^2, or lam / 2 with regulariser_scale: one
        self.trainer = network.trainer(self.net.theta0, lam * (width if regulariser_scale == "width" else 1.0))
        self.nu = self._nu(nu, delta, effective_dimension, norm_bound, POLICY_PARAMS)
        self.history = DuelHistory(self.horizon, problem.rho, problem.window)
        self.fixed_arms = bool(problem.info.get("fixed_arms", False))
        self.confidence = confidence
        reg = lam / kappa_mu  # V_0 = (lam / kappa_mu) I
        if self.fixed_arms:
            self.arm_set: np.ndarray | None = None  # set in round 1, with the arm kernel
            self.played = np.zeros((self.horizon, 2), dtype=np.int64)
            self.gram = None
        else:
            self.x_first = torch.zeros(self.horizon, self.d, dtype=DTYPE)
            self.x_second = torch.zeros(self.horizon, self.d, dtype=DTYPE)
            self.gram = (
                InverseGram(self.net.n_params, reg, keep_matrix=False)
                if confidence == "full"
                else DiagonalGram(self.net.n_params, reg)
            )

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        Network.check(values)
        if values["nu"] == "theory" and values["effective_dimension"] is None:
            raise ConfigError(
                f"{POLICY_PARAMS}.effective_dimension: nu = 'theory' (eq. 11) needs a positive effective dimension"
            )

    @classmethod
    def batch(cls, policies: Sequence["_NeuralDuelingBase"]) -> "BatchedNeuralDueling":
        """The block's policies run in lockstep (:class:`BatchedNeuralDueling`)."""
        return BatchedNeuralDueling(policies)

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        d = facts.get("dimension", 1)
        history = 9 * horizon
        if facts.get("fixed_arms"):
            return history + 16 * horizon  # the played pairs
        n_params = sum(r * c for r, c in layer_shapes(d, values["width"], values["depth"], values["init"]))
        gram = 8 * n_params * (n_params if values["confidence"] == "full" else 1)
        return history + 2 * 8 * horizon * d + gram  # both arms of every round, V^{-1}

    def _nu(self, nu, delta, d_eff, norm_bound, where) -> float:
        if nu != "theory":
            return float(nu)
        if d_eff is None:
            raise ConfigError(
                f"{where}.effective_dimension: nu = 'theory' (eq. 11) needs a positive "
                f"effective dimension, got {d_eff!r}"
            )
        beta = math.sqrt(d_eff + 2.0 * math.log(1.0 / delta)) / self.kappa_mu  # Lemma C.5
        return (beta + norm_bound * math.sqrt(self.lam / self.kappa_mu) + 1.0) * self.kappa_mu / self.lam

    # --- feedback and training ------------------------------------------------
    def observe(self, t: int, arrived: Sequence[PreferenceFeedback]) -> None:
        self.history.observe(arrived)

    def _logits(self, theta: torch.Tensor, rows: np.ndarray) -> torch.Tensor:
        """Predicted preference differences ``Delta h_s(theta)`` of the given played rounds."""
        if self.fixed_arms:
            h = self.net.forward(theta, self._arm_tensor)
            pairs = torch.from_numpy(self.played[rows])
            return h[pairs[:, 0]] - h[pairs[:, 1]]
        idx = torch.from_numpy(rows)
        both = self.net.forward(theta, torch.cat([self.x_first[idx], self.x_second[idx]]))
        return both[: len(rows)] - both[len(rows) :]

    def _train(self, t: int) -> None:
        def predict(rows):
            with torch.no_grad():
                return torch.sigmoid(self._logits(self.trainer.current, rows)).numpy()

        rows, labels = self.history.training_set(self.delay_strategy, t, predict)
        if len(rows):
            target = torch.from_numpy(np.ascontiguousarray(labels, dtype=np.float64))
            self.trainer.fit(lambda theta: self._logits(theta, rows), target)

    # --- selection ------------------------------------------------------------
    def _start_fixed_arms(self, arms: np.ndarray) -> None:
        self.arm_set = arms
        self._arm_tensor = torch.tensor(arms, dtype=DTYPE)  # a copy: the arm set is read-only
        features = self.net.gradients(self.net.theta0, self._arm_tensor).numpy() / math.sqrt(self.net.width)
        reg = self.lam / self.kappa_mu
        self.gram = ArmKernelGram(features, reg) if self.confidence == "full" else DiagonalGram(features.shape[1], reg)
        self._features = features

    def _bonus_scale(self) -> float:
        return self.nu * math.sqrt(self.lam / self.kappa_mu)  # nu_T sigma (eqs. 10, 12)

    def _second_arm(self, scores: np.ndarray, first: int, norms: np.ndarray) -> int:
        """The UCB challenger of eq. 10: ``argmax_x h(x; theta_t) + nu_T sigma_{t-1}(x, x_{t,1})``."""
        return choose(scores + self._bonus_scale() * norms, "challenger UCB scores")

    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        if self.history.n_played and self.trainer.due(t):
            self._train(t)
        theta = self.trainer.current
        if self.fixed_arms:
            if self.arm_set is None:
                self._start_fixed_arms(arms)
            elif arms is not self.arm_set and not np.array_equal(arms, self.arm_set):
                raise ConfigError("environment: publishes fixed_arms but showed a different arm set")
            x = self._arm_tensor
        else:
            x = torch.tensor(arms, dtype=DTYPE)
        with torch.no_grad():
            scores = self.net.forward(theta, x).numpy()
        first = choose(scores, "utility estimates")  # eq. 9
        if self.fixed_arms and self.confidence == "full":
            norms = self.gram.pair_norms(first)
        else:
            phi = (
                self._features
                if self.fixed_arms
                else (self.net.gradients(self.net.theta0, x).numpy() / math.sqrt(self.net.width))
            )
            norms = self.gram.norms(phi - phi[first])
        second = self._second_arm(scores, first, norms)  # eq. 10
        row = self.history.record_play()
        if self.fixed_arms:
            self.played[row] = first, second
            if self.confidence == "full":
                self.gram.update_pair(first, second)
            else:
                self.gram.update(self._features[first] - self._features[second])
        else:
            self.x_first[row], self.x_second[row] = x[first], x[second]
            self.gram.update(phi[first] - phi[second])  # eq. 8 / line 11
        return first, second


@register("ndb_df")
class NDBDF(_NeuralDuelingBase):
    """NDB-DF (seed 000, Algorithm 2): IPW-weighted neural cross-entropy (eq. 7), UCB second arm (eqs. 10–12)."""

    delay_strategy = "ipw"


@register("ndb_ignore")
class NDBIgnore(_NeuralDuelingBase):
    """NDB-Ignore (seed 000, Sec. 5.2): the network trained on arrived feedback only, unweighted."""

    delay_strategy = "ignore"


@register("ndb_heuristic")
class NDBHeuristic(_NeuralDuelingBase):
    """NDB-Heuristic (seed 000, Sec. 5.2): pending outcomes imputed by the network's predicted
    probability ``mu(Delta h_s(theta_t))`` as soft labels."""

    delay_strategy = "heuristic"


@register("ndb_heuristic_all")
class NDBHeuristicAll(_NeuralDuelingBase):
    """NDB-Heuristic, imputing every missing outcome (seed 000 Sec. 5.2's other reading): rounds whose
    feedback is known to be censored keep the network's predicted probability as a soft label."""

    delay_strategy = "heuristic_all"


@register("ndb_zero")
class NDBZero(_NeuralDuelingBase):
    """NDB-Zero (seed 000, Sec. 3.1 eq. 1): missing feedback counted as ``y' = 0``, no reweighting."""

    delay_strategy = "zero"
