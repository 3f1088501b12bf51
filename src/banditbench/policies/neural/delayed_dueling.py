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
* ``precision``: the network's floating-point type — its parameters, Adam's state, the training of
  eq. 7 and the scores ``h(x; theta_t)`` — ``"float32"`` (the default) or ``"float64"``.  The
  confidence side is float64 whatever the network's: the gradient features ``g(x; theta_0) / sqrt(m)``
  (taken at ``theta_0`` as the network holds it, widened exactly), ``V^{-1}`` and its rank-one updates, the
  widths of eq. 12 and the second arm's index.  Float32 halves the training's cost, most of a job's at
  d = K = 20; ``benchmarks/precision_regret.py`` compares the regret of the two on the same seeds.

``preset: authors`` (:mod:`.dueling_presets`; docs/baselines.md) runs the family as the NDB authors' group's
public ``NeuralDBDiag`` runs (xqlin98/APOHF): every parameter above and below that its code sets otherwise takes
``auto``, the preset's value — a second arm other than the first (``distinct_arms``), the gradient features at the
trained parameters with V rebuilt every round from all pairs played (``gradient_at: current``), V's diagonal, the
network re-initialised and retrained every round (``retrain: reinit``; Adam at 1e-3, 30 steps, the mean loss and
the ridge ``lam / (n + 50)`` centred at 0), biases and N(0, 1) weights, no ``sqrt(m)``, depth 3, ``lam = 0.1``,
``kappa_mu = 1``, the factor ``sqrt(nu)`` and 5 random first pairs.  ``preset: ours`` (the default) is the
behaviour described above.  Under the authors' values the seed-batched engine declines (:meth:`_NeuralDuelingBase.batch`)
and the reference engine runs the seeds; its re-initialised training takes its steps on the gradient written out
(:meth:`~.nets.MLP.numpy_pass`).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Callable, ClassVar, Literal, Mapping, Sequence

import numpy as np
import torch

from ...api import Policy, Problem, SeedBatched, choose, register
from ...errors import POLICY_PARAMS, ConfigError
from ...feedback import PreferenceFeedback
from ...numerics.sigmoid import sigmoid
from ...params import Doc, NonNegative, Positive, Probability
from ..delayed_labels import DuelHistory
from ..linalg import ArmKernelGram, DiagonalGram, InverseGram
from ..presets import AUTO
from . import dueling_presets as P
from . import parameters
from .batched.delayed_dueling import BatchedNeuralDueling
from .nets import generator_from, layer_shapes
from .parameters import PRECISIONS, Network
from .training import Trainer

# --- the family's parameters: what each value may be (the network's: :mod:`.parameters`; those a preset sets,
# ``auto`` by default: :mod:`.dueling_presets`) and what it means ---
Width = Annotated[
    parameters.Width,
    Doc(
        "hidden width ``m`` of the network ``h(x; theta)`` (even for the symmetric initialisation; 32 as the authors')."
    ),
]
Nu = Annotated[
    NonNegative | Literal["theory"],
    Doc(
        "exploration coefficient ``nu_T`` of eq. 10: a constant, or ``theory`` for eq. 11 with Lemma C.5's "
        "``beta_T`` (needs ``effective_dimension``); 1 as the authors' (``--nu 1``, ``run_dbandits_po.sh`` line 7)."
    ),
]
Delta = Annotated[Probability, Doc("failure probability of ``nu: theory`` (Lemma C.5).")]
EffectiveDimension = Annotated[
    Positive | None, Doc("``d_eff`` of Lemma C.5's ``beta_T``; required with ``nu: theory``, unused otherwise.")
]
NormBound = Annotated[NonNegative, Doc("``B`` of eq. 11 (``nu: theory`` only).")]
TrainEvery = Annotated[
    parameters.TrainEvery,
    Doc("retrain every this many rounds (Algorithm 2 line 7: every round); ``doubling`` at rounds 2, 4, 8, ..."),
]
Precision = Annotated[
    parameters.Precision,
    Doc(
        "floating-point type of the network (its parameters, Adam's state, eq. 7's training and the scores): "
        "``float32`` or ``float64``; the features at ``theta_0``, ``V^-1`` and the widths of eq. 12 are float64."
    ),
]
#: the default ``precision`` (:func:`benchmarks/precision_regret.py`: the regret of float32 and float64 on the same
#: seeds agrees)
PRECISION_DEFAULT = "float32"


def squared_differences(first: list, second: list, biases: bool) -> np.ndarray:
    """``sum_s (g_{s,1} - g_{s,2})^2``, elementwise in the parameters' layout, from the rows' gradient factors
    (:meth:`~.nets.MLP.gradient_factors` of the pairs' first and second arms): per layer, with ``g = outer(a, b)``,
    ``sum_s (a_1 b_1^T - a_2 b_2^T)^2 = (a_1^2)^T b_1^2 - 2 (a_1 a_2)^T (b_1 b_2) + (a_2^2)^T b_2^2`` (three
    products of n x r and n x c, never the n x p gradients)."""
    weights, bias_terms = [], []
    for (a1, b1), (a2, b2) in zip(first, second):
        weights.append(((a1 * a1).T @ (b1 * b1) - 2.0 * (a1 * a2).T @ (b1 * b2) + (a2 * a2).T @ (b2 * b2)).ravel())
        bias_terms.append(((a1 - a2) ** 2).sum(axis=0))
    return np.concatenate(weights + (bias_terms if biases else []))


def gradients_of(factors: list, biases: bool) -> np.ndarray:
    """Every row's gradient (rows x p, the parameters' layout) from its factors (:func:`squared_differences`)."""
    weights = [(a[:, :, None] * b[:, None, :]).reshape(len(a), -1) for a, b in factors]
    return np.concatenate(weights + ([a for a, _ in factors] if biases else []), axis=1)


def rebuilt_widths(differences: np.ndarray, rows: np.ndarray, reg: float, full: bool) -> np.ndarray:
    """``||r||_{V^{-1}}`` for every row r of ``rows`` with ``V = reg I + sum_s u_s u_s^T`` over the rows u_s of
    ``differences`` (n x p), built afresh: its diagonal, or (``full``) V itself, through the n x n kernel
    ``reg I + U U^T`` (Woodbury) while n < p."""
    if not full:
        diagonal = reg + (differences * differences).sum(axis=0)
        return np.sqrt((rows * rows / diagonal).sum(axis=1))
    n, p = differences.shape
    if n < p:  # r^T V^{-1} r = (||r||^2 - (U r)^T (reg I + U U^T)^{-1} (U r)) / reg
        projected = differences @ rows.T
        solved = np.linalg.solve(reg * np.eye(n) + differences @ differences.T, projected)
        quad = ((rows * rows).sum(axis=1) - (projected * solved).sum(axis=0)) / reg
    else:
        quad = (rows * np.linalg.solve(reg * np.eye(p) + differences.T @ differences, rows.T).T).sum(axis=1)
    return np.sqrt(np.clip(quad, 0.0, None))


class _NeuralDuelingBase(Policy):
    """Algorithm 2 of seed 000; subclasses name their delay strategy."""

    feedback_kind = "preference"
    action_kind = "pair"
    #: eq. 10's challenger is the arg-max over all arms, the first included; ``distinct_arms`` (the authors'
    #: rule, their preset's) excludes the first
    self_duels = "distinct_arms"
    delay_strategy: ClassVar[str]
    #: NDB-DF, its delay baselines and NDB-UCB / NDB-TS share :class:`BatchedNeuralDueling`, which takes each
    #: member's delay strategy and second-arm rule, and these parameters (its ``nu_T``), per member; checked with
    #: the independent initialisation (the symmetric one scores every arm 0 in round 1: an exact tie that
    #: rounding decides), in float64 (in float32 Adam turns the rounding of gradient terms that cancel exactly into
    #: steps of order lr, and the two paths' trajectories part: tests/policies/neural/batched compares their regret).
    #: It declines (:meth:`batch`) the authors' behaviours it does not implement.
    engines = {
        "seed-batched": SeedBatched(
            per_member=("nu", "delta", "effective_dimension", "norm_bound"),
            family="neural_dueling",
            check_params={"init": "independent", "precision": "float64"},
        )
    }

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        preset: P.Preset = "ours",
        width: Width = 32,
        depth: P.Depth = AUTO,
        init: P.Init = AUTO,
        lam: P.Lam = AUTO,
        kappa_mu: P.KappaMu = AUTO,
        nu: Nu = 1.0,
        delta: Delta = 0.05,
        effective_dimension: EffectiveDimension = None,
        norm_bound: NormBound = 1.0,
        lr: P.LearningRate = AUTO,
        train_steps: P.TrainSteps = AUTO,
        train_every: TrainEvery = 1,
        confidence: P.Confidence = AUTO,
        regulariser_scale: P.RegulariserScale = AUTO,
        regulariser_centre: P.RegulariserCentre = AUTO,
        loss_reduction: P.LossReduction = AUTO,
        retrain: P.Retrain = AUTO,
        warmup_pairs: P.WarmupPairs = AUTO,
        biases: P.Biases = AUTO,
        output_scale: P.OutputScale = AUTO,
        gradient_at: P.GradientAt = AUTO,
        bonus_factor: P.BonusFactor = AUTO,
        distinct_arms: P.DistinctArms = AUTO,
        device: parameters.SeedBatchedDevice = "cpu",
        precision: Precision = PRECISION_DEFAULT,
    ):
        given = {name: value for name, value in locals().items() if name not in ("self", "problem", "rng")}
        v = self.preset_values(given)
        self.settings = v  # every parameter, presets resolved
        self.network = Network(v["width"], v["depth"], v["init"], v["lr"], v["train_steps"], train_every, device)
        self.rng, self.device = rng, device
        self.d, self.horizon = int(problem["dimension"]), problem.horizon
        self.lam, self.kappa_mu = float(v["lam"]), float(v["kappa_mu"])
        self.confidence, self.gradient_at = v["confidence"], v["gradient_at"]
        self.warmup_pairs, self.distinct_arms = int(v["warmup_pairs"]), bool(v["distinct_arms"])
        self.bonus_factor, self.retrain = v["bonus_factor"], v["retrain"]
        self.dtype = PRECISIONS[precision]  # the network's; the confidence side is float64
        self.net = self.network.mlp(
            self.d, generator_from(rng), biases=bool(v["biases"]), output_scale=v["output_scale"], dtype=self.dtype
        )
        self.theta0_64 = self.net.theta0.to(torch.float64)  # theta_0 as the network holds it, widened exactly
        self.trainer = self._trainer(0)
        self.nu = self._nu(nu, delta, effective_dimension, norm_bound, POLICY_PARAMS)
        self.history = DuelHistory(self.horizon, problem.rho, problem.window)
        self.fixed_arms = bool(problem.info.get("fixed_arms", False))
        self._start_confidence()

    @classmethod
    def preset_values(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` with the preset's value for every ``auto`` (:mod:`.dueling_presets`)."""
        return P.resolved(values)

    def _start_confidence(self) -> None:
        """The played pairs' store and V (eq. 8, ``V_0 = (lam / kappa_mu) I``): with ``fixed_arms`` set in round 1
        (:meth:`_start_fixed_arms`); at the current gradients V is rebuilt every round and none is kept."""
        reg = self.lam / self.kappa_mu
        if self.fixed_arms:
            self.arm_set: np.ndarray | None = None  # set in round 1, with the arm kernel
            self.played = np.zeros((self.horizon, 2), dtype=np.int64)
            self.gram = None
        else:
            self.x_first = torch.zeros(self.horizon, self.d, dtype=self.dtype)  # the network's inputs
            self.x_second = torch.zeros(self.horizon, self.d, dtype=self.dtype)
            self.gram = (
                None
                if self.gradient_at == "current"
                else InverseGram(self.net.n_params, reg, keep_matrix=False)
                if self.confidence == "full"
                else DiagonalGram(self.net.n_params, reg)
            )

    def _trainer(self, n: int) -> Trainer:
        """The trainer from ``theta_0`` with eq. 7's ridge for ``n`` training pairs: ``(m lam / 2) ||theta -
        theta_0||^2`` (``regulariser_scale: width``), ``lam / 2`` (``one``) or ``lam / (2 (n + 50))`` (``decaying``),
        centred at ``theta_0`` or 0."""
        v, lam = self.settings, self.lam
        ridge = {"width": lam * v["width"], "one": lam}.get(v["regulariser_scale"], lam / (n + P.DECAY_OFFSET))
        options = {"centre": v["regulariser_centre"], "reduction": v["loss_reduction"]}
        if options == {"centre": "init", "reduction": "sum"}:
            return self.network.trainer(self.net.theta0, ridge)
        return self.network.trainer(self.net.theta0, ridge, **options)

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        values = cls.preset_values(values)
        Network.check(values)
        if values["nu"] == "theory" and values["effective_dimension"] is None:
            raise ConfigError(
                f"{POLICY_PARAMS}.effective_dimension: nu = 'theory' (eq. 11) needs a positive effective dimension"
            )

    #: the parameters' values the seed-batched engine implements (the others: :meth:`batch` declines)
    BATCHED = {
        "regulariser_scale": ("width", "one"),
        "loss_reduction": ("sum",),
        "retrain": ("warm",),
        "warmup_pairs": (0,),
        "biases": (False,),
        "output_scale": ("sqrt_width",),
        "gradient_at": ("init",),
        "regulariser_centre": ("init",),
    }

    @classmethod
    def batch(cls, policies: Sequence["_NeuralDuelingBase"]) -> "BatchedNeuralDueling | None":
        """The block's policies run in lockstep (:class:`BatchedNeuralDueling`), or None (each seed then runs on
        the single-seed path) where a parameter takes a value of the authors' code that the engine does not
        implement (:attr:`BATCHED`: all but ``distinct_arms``, ``bonus_factor``, ``init: normal`` and the
        numbers)."""
        settings = policies[0].settings
        if any(settings[name] not in allowed for name, allowed in cls.BATCHED.items()):
            return None
        return BatchedNeuralDueling(policies)

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        values = cls.preset_values(values)
        d = facts.get("dimension", 1)
        history = 9 * horizon
        n_params = sum(r * c for r, c in layer_shapes(d, values["width"], values["depth"], values["init"]))
        if values["gradient_at"] == "current":  # every played pair's gradients, every round
            return history + 2 * 8 * horizon * (d + n_params)
        if facts.get("fixed_arms"):
            return history + 16 * horizon  # the played pairs
        gram = 8 * n_params * (n_params if values["confidence"] == "full" else 1)
        arm_bytes = 4 if values["precision"] == "float32" else 8
        return history + 2 * arm_bytes * horizon * d + gram  # both arms of every round, V^{-1}

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
            h = self.net.forward(theta, self._arm_net)
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
        if not len(rows):
            return
        if self.retrain == "reinit":  # from theta_0 with a fresh Adam and the ridge of these pairs
            self.trainer = self._trainer(len(rows))
            self.trainer.fit_gradient(self._data_gradient(rows, np.asarray(labels, dtype=np.float64)))
            return
        if self.settings["regulariser_scale"] == "decaying":
            self.trainer.lam = self.lam / (len(rows) + P.DECAY_OFFSET)
        target = torch.from_numpy(np.ascontiguousarray(labels, dtype=np.float64)).to(self.dtype)
        self.trainer.fit(lambda theta: self._logits(theta, rows), target)

    def _data_gradient(self, rows: np.ndarray, labels: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """The gradient of eq. 7's data term on the played rounds ``rows`` (divided by their number with
        ``loss_reduction: mean``), its backward pass written out (:meth:`~.nets.MLP.numpy_pass`): the re-initialised
        training's many steps from ``theta_0`` (:meth:`~.training.Trainer.fit_gradient`) without autograd's
        per-step overhead, the same iterates up to rounding."""
        scale = 1.0 / len(rows) if self.settings["loss_reduction"] == "mean" else 1.0
        n = len(rows)
        if self.fixed_arms:
            x = self.net.embed(self._arm_net).numpy()
            first, second = self.played[rows, 0], self.played[rows, 1]
        else:
            idx = torch.from_numpy(rows)
            x = self.net.embed(torch.cat([self.x_first[idx], self.x_second[idx]])).numpy()

        def gradient(theta: np.ndarray) -> np.ndarray:
            h, backward = self.net.numpy_pass(theta, x)
            z = h[first] - h[second] if self.fixed_arms else h[:n] - h[n:]
            dz = (sigmoid(z) - labels) * scale  # d/dz [softplus(z) - a z]
            if self.fixed_arms:
                return backward(np.bincount(first, dz, len(x)) - np.bincount(second, dz, len(x)))
            return backward(np.concatenate([dz, -dz]))

        return gradient

    # --- selection ------------------------------------------------------------
    def _start_fixed_arms(self, arms: np.ndarray) -> None:
        self.arm_set = arms
        self._arm_tensor = torch.tensor(arms, dtype=torch.float64)  # a copy: the arm set is read-only
        self._arm_net = self._arm_tensor.to(self.dtype)  # the network's input
        if self.gradient_at == "current":
            return
        features = self._features_at_init(self._arm_tensor)
        reg = self.lam / self.kappa_mu
        self.gram = ArmKernelGram(features, reg) if self.confidence == "full" else DiagonalGram(features.shape[1], reg)
        self._features = features

    def _bonus_scale(self) -> float:
        if self.bonus_factor == "sqrt_nu":
            return math.sqrt(self.nu)  # the authors' sqrt(nu) ||.||_{U^-1}
        return self.nu * math.sqrt(self.lam / self.kappa_mu)  # nu_T sigma (eqs. 10, 12)

    def _second_arm(self, scores: np.ndarray, first: int, norms: np.ndarray) -> int:
        """The UCB challenger of eq. 10: ``argmax_x h(x; theta_t) + nu_T sigma_{t-1}(x, x_{t,1})`` (over the
        arms other than the first with ``distinct_arms``)."""
        index = scores + self._bonus_scale() * norms
        if self.distinct_arms:
            index[first] = -np.inf
        return choose(index, "challenger UCB scores")

    def _inputs(self, arms: np.ndarray) -> torch.Tensor:
        """The round's arms, float64 (with ``fixed_arms``, the arm set of round 1, checked); the network takes them
        in its precision."""
        if not self.fixed_arms:
            return torch.tensor(arms, dtype=torch.float64)
        if self.arm_set is None:
            self._start_fixed_arms(arms)
        elif arms is not self.arm_set and not np.array_equal(arms, self.arm_set):
            raise ConfigError("environment: publishes fixed_arms but showed a different arm set")
        return self._arm_tensor

    def _features_at_init(self, x: torch.Tensor) -> np.ndarray:
        """The gradient features ``g(x; theta_0) / s`` of eq. 12 (``s`` the output scale, ``sqrt(m)``), float64 for the
        float64 arms ``x`` whatever the network's precision."""
        return self.net.gradients(self.theta0_64, x).numpy() / self.net.scale

    def _widths(self, x: torch.Tensor, first: int) -> tuple[np.ndarray, np.ndarray | None]:
        """``||phi(x) - phi(x_{t,1})||_{V_{t-1}^{-1}}`` of every arm (eq. 12 without its factor) and the features
        (None where V does not need them)."""
        if self.gradient_at == "current":
            return self._current_widths(x, first), None
        if self.fixed_arms and self.confidence == "full":
            return self.gram.pair_norms(first), None
        phi = self._features if self.fixed_arms else self._features_at_init(x)
        return self.gram.norms(phi - phi[first]), phi

    def _current_widths(self, x: torch.Tensor, first: int) -> np.ndarray:
        """The widths at the trained parameters: the features ``g(x; theta_t) / s``, and V rebuilt from every
        pair played so far at them (the authors' ``select``, lines 319-363); V's diagonal from the gradients'
        factors (:func:`squared_differences`), the full V from the gradients."""
        theta, n = self.trainer.current.to(torch.float64), self.history.n_played  # V in float64
        if self.confidence == "diagonal":
            return self._current_diagonal_widths(x, first)
        phi = self.net.gradients(theta, x).numpy() / self.net.scale
        if self.fixed_arms or not n:
            u = phi[self.played[:n, 0]] - phi[self.played[:n, 1]] if n else phi[:0]
        else:
            history = torch.cat([self.x_first[:n], self.x_second[:n]]).to(torch.float64)
            both = self.net.gradients(theta, history).numpy()
            u = (both[:n] - both[n:]) / self.net.scale
        return rebuilt_widths(u, phi - phi[first], self.lam / self.kappa_mu, self.confidence == "full")

    def _current_diagonal_widths(self, x: torch.Tensor, first: int) -> np.ndarray:
        """:meth:`_current_widths` with V's diagonal, in numpy from the gradients' factors."""
        theta, n, biases = self.trainer.current.to(torch.float64).numpy(), self.history.n_played, self.net.has_biases
        arms = self.net.gradient_factors(theta, self.net.embed(x).numpy())
        if self.fixed_arms:
            rows = [self.played[:n, 0], self.played[:n, 1]]
            ends = [[(a[r], b[r]) for a, b in arms] for r in rows]
        else:
            both = self.net.embed(torch.cat([self.x_first[:n], self.x_second[:n]]).to(torch.float64)).numpy()
            pairs = self.net.gradient_factors(theta, both)
            ends = [[(a[:n], b[:n]) for a, b in pairs], [(a[n:], b[n:]) for a, b in pairs]]
        scale2 = self.net.scale * self.net.scale
        diagonal = self.lam / self.kappa_mu + squared_differences(*ends, biases) / scale2
        phi = gradients_of(arms, biases)
        rows = phi - phi[first]
        return np.sqrt((rows * rows / diagonal).sum(axis=1) / scale2)

    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        if self.history.n_played and t > self.warmup_pairs and self.trainer.due(t):
            self._train(t)
        x = self._inputs(arms)
        if t <= self.warmup_pairs:  # a uniformly random pair of two different arms
            first, second = (int(k) for k in self.rng.choice(len(x), 2, replace=False))
            phi = self._features_at_init(x) if self.gram is not None and not self.fixed_arms else None
        else:
            with torch.no_grad():
                scores = self.net.forward(self.trainer.current, x.to(self.dtype)).numpy()
            first = choose(scores, "utility estimates")  # eq. 9
            norms, phi = self._widths(x, first)
            second = self._second_arm(scores, first, norms)  # eq. 10
        self._record(x, phi, first, second)
        return first, second

    def _record(self, x: torch.Tensor, phi: np.ndarray | None, first: int, second: int) -> None:
        """The played pair, and V's update (eq. 8 / line 11) where V is kept."""
        row = self.history.record_play()
        if self.fixed_arms:
            self.played[row] = first, second
            if self.gram is None:
                return
            if self.confidence == "full":
                self.gram.update_pair(first, second)
            else:
                self.gram.update(self._features[first] - self._features[second])
        else:
            self.x_first[row], self.x_second[row] = x[first], x[second]
            if self.gram is not None:
                self.gram.update(phi[first] - phi[second])  # eq. 8 / line 11


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
