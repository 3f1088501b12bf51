r"""Linear logistic bandits: Logistic-UCB-1 (Faury et al. 2020) and ada-OFU-ECOLog (Faury et al. 2022).

The baselines of seed 002 (Table 1, Sec. 7), with the update rules of the authors'
public implementation (github.com/criteo-research/logistic_bandit, also published as
louisfaury/logistic_bandit, package ``logbexp``), computed without its per-round
O(d^3) work.  ``benchmarks/logistic_speed.py`` runs a direct transcription of that code
next to these classes and checks that both make the same choices.

* :class:`LogisticUCB1` — :math:`\operatorname*{arg\,max}_x \mu(x^\top \hat\theta) + \beta_t \lVert x\rVert_{V_t^{-1}}`
  with :math:`V_t = d I + \sum_s x_s x_s^\top` (updated when the arm is played) and :math:`\hat\theta` the
  regularised MLE (:math:`\lambda_t = d\log(2 + t)`) refined by 5 Newton steps on the whole
  history, every round while ``t < 200`` and then every 10th (the reference's lazy
  schedule), started at a N(0, I) draw as the reference.  ``beta_t`` is the reference's
  refinement of Faury et al.'s Theorem 1 (:math:`\gamma = \min(\gamma_1, \gamma_2)`, then
  :math:`\frac{\sqrt{\kappa}}{4} \min\bigl(\sqrt{1 + 2S}\, \gamma, \gamma + \gamma^2 / \sqrt{\lambda_t}\bigr) + \sqrt{\lambda_t} S`)
  with :math:`\kappa = 1 / \dot\mu(S L)`; it changes only when the estimate does, so it is computed
  once per update (the reference recomputes it, a log-determinant and two chi-square
  CDFs, at every pull), the chi-square CDF as the regularised incomplete gamma function,
  and ``V^{-1}`` is updated in place in O(d^2) (the reference's Sherman–Morrison
  multiplies d x d matrices, O(d^3)).
* :class:`AdaOFUECOLog` — ada-OFU-ECOLog: one online projected-gradient step block per
  observation on the ECOLog loss in the coordinates ``z = V~^{1/2} theta``, the companion
  estimate ``theta_bar``, the data-dependent radius (cumulative loss difference) and the
  bonus :math:`\sqrt{2\lambda S^2 + (1 + S)^2 \gamma_t + L_t}\, \lVert x\rVert_{\tilde V^{-1}}`,
  :math:`\tilde V = \lambda I + \sum \dot\mu(x_s^\top \theta_s) x_s x_s^\top`.  The reference takes four matrix square
  roots per round;
  written back in ``theta`` (``z . V~^{-1/2} a = theta . a`` and ``z^T V~^{-1} z = ||theta||^2``)
  a gradient step is
  :math:`\theta \leftarrow \theta - \eta \bigl[(\theta - \theta_t) + (\mu(a^\top \theta) - r) \tilde V^{-1} a\bigr]`,
  so every iterate is ``anchor + w (P - anchor) + c V~^{-1} a`` (``P``: the last projected point)
  and a step updates two scalars; the projection onto ``{z^T V~^{-1} z <= S^2}`` is
  ``(V~ + l I)^{-1} V~ theta``, solved in the eigenbasis of ``V~`` (one eigendecomposition in
  the rounds where a step leaves the ball) by Newton's method on the secular equation
  instead of the reference's bounded search for ``l``.  Same iterate counts, same iterates up
  to rounding (``benchmarks/logistic_speed.py``: the same choices in every round).

Both classes take ``mode``:

* ``"reference"`` (default) — the authors' code as above; ``nu`` scales its bonus (default 1).
* ``"streamlined"`` — seed 002 App. A: "we streamline all baseline algorithms into two steps:
  (i) choose the action with the highest UCB and (ii) update the parameters via gradient
  descent", with the bonus "match[ing] the orders of lam, S, kappa, and the effective dimension
  d~ ... then multipl[ied] by the exploration parameter nu", :math:`\tilde d = \log\det\bigl(\sum R x x^\top + I\bigr)`
  (``R = 1/4``, the played arms).  No projection, no Newton step, no data-dependent condition.
  The estimate starts at 0 and is fitted by plain gradient descent on
  :math:`\sum_s \bigl[\mathrm{softplus}(x_s^\top \theta) - r_s x_s^\top \theta\bigr] + \lambda \lVert\theta\rVert^2`
  (the neural family's
  ``regulariser: l2`` loss), ``train_steps`` steps at rate ``lr`` after every ``train_every``-th
  observation, on minibatches of ``minibatch`` observations drawn without replacement from the
  policy's stream (null: the whole history) — App. A does not give the schedule; the paper grid
  uses the neural networks' (Sec. 7: 100 steps at 0.01 every 50 rounds; App. J.1: batch 50).
  ``lam`` is fixed (tuned, Sec. 7) and the bonus is :math:`\nu \beta \lVert x\rVert_{M^{-1}}` with

  - Logistic-UCB-1: :math:`M = V = \lambda I + \sum x x^\top` and
    :math:`\beta = \sqrt{\kappa} \sqrt{S} \bigl(\sqrt{\lambda} + \tilde d / \sqrt{\lambda}\bigr) + \sqrt{\lambda} S` — the
    order of the reference's :math:`\frac{\sqrt{\kappa}}{4} \sqrt{1 + 2S}\, \gamma + \sqrt{\lambda} S` with
    :math:`\gamma = \frac{\sqrt{\lambda}}{2} + \frac{2}{\sqrt{\lambda}} \bigl(\log(1/\delta) + \frac{1}{2}\log\det \cdots\bigr)`;
    ``kappa`` as the paper sets it (Sec. 7: 10; App. J.1: 50-200), required in this mode.
  - ada-OFU-ECOLog: :math:`M = \tilde V = \lambda I + \sum \dot\mu(x_s^\top \theta_s) x_s x_s^\top` (:math:`\theta_s`
    the estimate when :math:`x_s` is observed) and
    :math:`\beta = S \sqrt{\lambda + \sqrt{\lambda} + \tilde d / \sqrt{\lambda}}` — the order of
    the reference's :math:`\sqrt{2\lambda S^2 + (1 + S)^2 \gamma_t + L_t}` without the data-dependent
    ``L_t`` (not an order of lam, S, kappa or d~); no kappa (the algorithm's bonus has none).

Arms are the environment's feature vectors; ``arm_norm_bound`` (L, default 1) enters the reference's
``kappa``.
"""

from __future__ import annotations

import abc
import math
from typing import Annotated, Any, Mapping, Sequence

import numpy as np
from scipy.linalg.lapack import dposv
from scipy.special import gammainc

from ..api import Policy, Problem, choose, register
from ..errors import POLICY_PARAMS, ConfigError, key_path
from ..feedback import RewardFeedback
from ..numerics.sigmoid import sigmoid
from ..params import Doc, NonNegative, NonNegativeInt, OneOf, Positive, PositiveInt, Probability
from .linalg import InverseGram

#: ``mode`` of the linear baselines (module docstring)
MODES = ("reference", "streamlined")
#: upper bound of mu' for the logistic link (App. A's d~ = log det(sum R x x^T + I))
R = 0.25


#: Logistic-UCB-1 stops its Newton steps once a step is this small relative to the estimate
NEWTON_ROUNDING = 1e-14


def _mu_dot(z):
    s = sigmoid(z)
    return s * (1.0 - s)


def _mu_dot_scalar(z: float) -> float:
    """``mu'(z)`` of one float (``_mu_dot`` without numpy's per-call overhead)."""
    s = 0.5 * (1.0 + math.tanh(0.5 * z))
    return s * (1.0 - s)


def _softplus_scalar(z: float) -> float:
    """``log(1 + e^z)`` of one float, without overflow."""
    return max(z, 0.0) + math.log1p(math.exp(-abs(z)))


class _Streamlined:
    """App. A's streamlined baselines (module docstring): the played arms, the estimate fitted by
    minibatch gradient descent, ``d~ = log det(sum R x x^T + I)`` and the bonus matrix ``M``."""

    def __init__(
        self,
        d: int,
        horizon: int,
        lam: float,
        lr: float,
        steps: int,
        every: int,
        batch: int | None,
        rng: np.random.Generator,
    ):
        self.lam, self.lr, self.steps, self.every, self.batch, self.rng = lam, lr, steps, every, batch, rng
        self.theta = np.zeros(d)
        self.X, self.y, self.n = np.zeros((horizon, d)), np.zeros(horizon), 0
        self.matrix = InverseGram(d, lam, keep_matrix=False)  # V (Logistic-UCB-1) or V~ (ECOLog)
        self.dimension_design = InverseGram(d, 1.0 / R, keep_matrix=False)  # R sum x x^T + I, scaled by 1/R
        self.log_det = 0.0  # d~

    def learn(self, x: np.ndarray, r: float, weight: float) -> None:
        self.X[self.n], self.y[self.n] = x, r
        self.n += 1
        self.matrix.update(x, weight)
        self.log_det += math.log1p(self.dimension_design.update(x))  # determinant lemma
        if self.n % self.every == 0:
            self.fit()

    def fit(self) -> None:
        """``steps`` gradient-descent steps on ``sum [softplus(x^T theta) - r x^T theta] + lam ||theta||^2``."""
        X, y, n = self.X[: self.n], self.y[: self.n], self.n
        for _ in range(self.steps):
            if self.batch is not None and n > self.batch:
                idx = self.rng.permutation(n)[: self.batch]
                Xb, yb = X[idx], y[idx]
            else:
                Xb, yb = X, y
            grad = Xb.T @ (sigmoid(Xb @ self.theta) - yb) + 2.0 * self.lam * self.theta
            self.theta = self.theta - self.lr * grad


class _LinearLogistic(Policy):
    """Shared state: problem dimension, norm bounds, failure level, exploration multiplier, pending arms,
    and App. A's streamlined mode (module docstring)."""

    feedback_kind = "reward"
    action_kind = "arm"

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        norm_bound: Annotated[
            Positive,
            Doc(
                "``S``, the bound on ``||theta||`` of the radius and of the reference's ``kappa = 1 / mu'(S L)`` "
                "(Faury et al.)."
            ),
        ] = 1.0,
        arm_norm_bound: Annotated[
            Positive, Doc("``L``, the bound on the arms' norm that enters the reference's ``kappa = 1 / mu'(S L)``.")
        ] = 1.0,
        delta: Annotated[Probability, Doc("failure probability of the confidence radius.")] = 0.05,
        nu: Annotated[
            NonNegative,
            Doc(
                "multiplier of the exploration bonus (seed 002 App. A's exploration parameter in mode ``streamlined``)."
            ),
        ] = 1.0,
        mode: Annotated[
            str,
            OneOf(MODES),
            Doc(
                "``reference``: the authors' public code; ``streamlined``: seed 002 App. A's two-step baseline "
                "(highest UCB, then gradient descent; module docstring)."
            ),
        ] = "reference",
        lr: Annotated[Positive, Doc("gradient-descent step size of mode ``streamlined``.")] = 0.01,
        train_steps: Annotated[
            PositiveInt, Doc("gradient steps of each refit in mode ``streamlined`` (the paper grid uses Sec. 7's 100).")
        ] = 100,
        train_every: Annotated[
            PositiveInt, Doc("mode ``streamlined`` refits after every ``train_every``-th observation (Sec. 7: 50).")
        ] = 50,
        minibatch: Annotated[
            PositiveInt | None,
            Doc(
                "observations per gradient step in mode ``streamlined``, drawn without replacement; null is the "
                "whole history (App. J.1: 50)."
            ),
        ] = None,
    ):
        self.rng = rng
        self.d = int(problem["dimension"])
        self.S = float(norm_bound)
        self.L = float(arm_norm_bound)
        self.delta, self.nu = float(delta), float(nu)
        self.pending: dict[int, np.ndarray] = {}
        self.mode = mode
        self._training = (float(lr), train_steps, train_every, minibatch)
        self.streamlined: _Streamlined | None = None

    def _streamline(self, problem: Problem, lam: float) -> None:
        lr, steps, every, batch = self._training
        self.streamlined = _Streamlined(self.d, problem.horizon, lam, lr, steps, every, batch, self.rng)

    @staticmethod
    def _required(name: str, value, mode: str):
        """A parameter the streamlined mode needs (a number) and the reference mode does not take (null)."""
        if mode == "streamlined" and value is None:
            raise ConfigError(
                f"{key_path(POLICY_PARAMS, name)}: mode 'streamlined' needs a number "
                f"(seed 002 Sec. 7 sets it), got null"
            )
        return value

    def observe(self, t: int, arrived: Sequence[RewardFeedback]) -> None:
        for fb in arrived:
            self.learn(self.pending.pop(fb.round), float(fb.reward))

    @abc.abstractmethod
    def learn(self, x: np.ndarray, r: float) -> None:
        """Update the estimate with arm ``x`` and its reward ``r``."""

    def _choose(self, t: int, arms: np.ndarray, theta: np.ndarray, gram: InverseGram, radius: float) -> int:
        ucb = sigmoid(arms @ theta) + self.nu * radius * gram.norms(arms)
        arm = choose(ucb, "UCB scores")  # first maximiser, as the reference's max(); NaN: diverged
        self.pending[t] = np.array(arms[arm], dtype=np.float64)
        return arm

    # --- App. A's streamlined mode ------------------------------------------------
    @abc.abstractmethod
    def streamlined_beta(self) -> float:
        """The multiplier of ``||x||_{M^{-1}}`` before ``nu`` (module docstring)."""

    def ucb(self, arms: np.ndarray) -> np.ndarray:
        """Streamlined mode: ``mu(x^T theta) + nu beta ||x||_{M^{-1}}`` of every arm."""
        st = self.streamlined
        return sigmoid(arms @ st.theta) + self.nu * self.streamlined_beta() * st.matrix.norms(arms)

    def _act_streamlined(self, t: int, arms: np.ndarray) -> int:
        arm = choose(self.ucb(arms), "UCB scores")
        self.pending[t] = np.array(arms[arm], dtype=np.float64)
        return arm


@register("logistic_ucb1")
class LogisticUCB1(_LinearLogistic):
    """Logistic-UCB-1 (Faury et al. 2020): Newton-refined regularised MLE and a variance-aware bonus.

    Newton's method converges quadratically from the previous estimate: we stop once a step is
    below ``NEWTON_ROUNDING`` (1e-14) times ``max(1, |theta|_inf)``, after which the reference's
    remaining steps only move ``theta`` by rounding (on the benchmark's instances its 4th and 5th
    steps are below 1e-16; the third usually is already), so the same choices.
    """

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        newton_steps: Annotated[
            PositiveInt,
            Doc(
                "at most this many Newton steps per update of the MLE (reference: 5; we stop once a step is rounding)."
            ),
        ] = 5,
        lazy_every: Annotated[
            PositiveInt,
            Doc(
                "after ``eager_rounds`` observed rewards the estimate is updated every ``lazy_every``-th one "
                "(the reference's lazy schedule: 10)."
            ),
        ] = 10,
        eager_rounds: Annotated[
            NonNegativeInt,
            Doc("the estimate is updated after every reward while fewer than this many are observed (reference: 200)."),
        ] = 200,
        kappa: Annotated[
            Positive | None,
            Doc(
                "null: the reference's ``1 / mu'(S L)``; a number sets it (seed 002 App. J.1 sets kappa for every "
                "algorithm); required with ``mode: streamlined``."
            ),
        ] = None,
        lam: Annotated[
            Positive | None,
            Doc(
                "fixed regularisation of mode ``streamlined`` (required, and only taken, there; tuned, Sec. 7); "
                "mode ``reference`` uses ``lam_t = d log(2 + t)``."
            ),
        ] = None,
        **shared,
    ):
        super().__init__(problem, rng, **shared)
        if self.mode == "streamlined":
            self.kappa = float(self._required("kappa", kappa, self.mode))
            self._streamline(problem, float(self._required("lam", lam, self.mode)))
            return
        if lam is not None:
            raise ConfigError(
                f"{key_path(POLICY_PARAMS, 'lam')}: mode 'reference' uses the reference's "
                f"lam_t = d log(2 + t); lam is taken only with mode 'streamlined', got {lam!r}"
            )
        self.newton_steps, self.lazy_every, self.eager_rounds = newton_steps, lazy_every, eager_rounds
        d = self.d
        self.lam = float(d)
        self.design = InverseGram(d, self.lam, keep_matrix=False)  # V_t = d I + sum x x^T
        self.theta = rng.standard_normal(d)
        self.hessian_log_det = d * math.log(self.lam)
        self.kappa = 1.0 / float(_mu_dot(self.S * self.L)) if kappa is None else float(kappa)
        self.X = np.zeros((problem.horizon, d))
        self.y = np.zeros(problem.horizon)
        self.n = 0
        self.updates = 0
        self.radius = self._radius()

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        return 8 * horizon * (facts.get("dimension", 1) + 1)  # every observed arm and reward

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        if values["mode"] == "streamlined":
            for name in ("kappa", "lam"):
                cls._required(name, values[name], "streamlined")
        elif values["lam"] is not None:
            raise ConfigError(
                f"{key_path(POLICY_PARAMS, 'lam')}: mode 'reference' uses the reference's "
                f"lam_t = d log(2 + t); lam is taken only with mode 'streamlined', got {values['lam']!r}"
            )

    def streamlined_beta(self) -> float:
        st, S = self.streamlined, self.S
        root = math.sqrt(st.lam)
        return math.sqrt(self.kappa) * math.sqrt(S) * (root + st.log_det / root) + root * S

    def learn(self, x: np.ndarray, r: float) -> None:
        if self.streamlined is not None:
            self.streamlined.learn(x, r, 1.0)
            return
        self.X[self.n], self.y[self.n] = x, r
        self.n += 1
        self.lam = self.d * math.log(2.0 + self.n)
        if self.updates % self.lazy_every == 0 or self.n < self.eager_rounds:
            X, y = self.X[: self.n], self.y[: self.n]
            for _ in range(self.newton_steps):
                p = sigmoid(X @ self.theta)
                grad = self.lam * self.theta + X.T @ (p - y)
                scaled = X * np.sqrt(p * (1.0 - p))[:, None]
                hessian = scaled.T @ scaled  # X^T diag(mu') X (a symmetric rank-n update)
                hessian.flat[:: self.d + 1] += self.lam
                chol, step, info = dposv(hessian, grad)  # Cholesky solve (the Hessian is SPD)
                if info:
                    raise RuntimeError(
                        f"logistic_ucb1: the Newton system is not positive definite (LAPACK info {info})"
                    )
                self.theta = self.theta - step
                if np.abs(step).max() <= NEWTON_ROUNDING * max(1.0, np.abs(self.theta).max()):
                    break  # converged: further steps are rounding noise
            # the reference keeps the last Hessian (at the iterate before the last step) for the bonus
            self.hessian_log_det = 2.0 * float(np.log(np.diag(chol)).sum())
        self.updates += 1
        self.radius = self._radius()

    def _radius(self) -> float:
        """The reference's refinement of Faury et al. (2020) Theorem 1 (class docstring)."""
        d, lam, S = self.d, self.lam, self.S
        log_ratio = math.log(gammainc(d / 2.0, lam) / gammainc(d / 2.0, lam / 2.0))  # chi2_d cdf(2 lam) / cdf(lam)
        core = math.log(1.0 / self.delta) + log_ratio + 0.5 * self.hessian_log_det - 0.5 * d * math.log(lam)
        gamma = min(math.sqrt(lam) / 2.0 + 2.0 / math.sqrt(lam) * core, 1.0 + core)
        return (
            0.25 * math.sqrt(self.kappa) * min(math.sqrt(1.0 + 2.0 * S) * gamma, gamma + gamma**2 / math.sqrt(lam))
            + math.sqrt(lam) * S
        )

    def act(self, t: int, arms: np.ndarray) -> int:
        if self.streamlined is not None:
            return self._act_streamlined(t, arms)
        arm = self._choose(t, arms, self.theta, self.design, self.radius)
        self.design.update(self.pending[t])
        return arm


@register("ada_ofu_ecolog")
class AdaOFUECOLog(_LinearLogistic):
    """ada-OFU-ECOLog (Faury et al. 2022): online ECOLog estimate, data-dependent radius, O(d^2) per round.

    ``strict`` (the reference's stop on a failed data-dependent condition): seed 002 App. A runs the
    baselines "streamlined", without the steps that keep the estimate in the theory's set, and the
    condition fails regularly once arms are longer than L = 1.
    """

    def __init__(
        self,
        problem: Problem,
        rng: np.random.Generator,
        *,
        lam: Annotated[
            Positive, Doc("regularisation of ``V~ = lam I + sum mu'(x_s^T theta_s) x_s x_s^T`` (reference: 1).")
        ] = 1.0,
        strict: Annotated[
            bool,
            Doc(
                "stop, as the reference does, when the data-dependent condition ``mu'(a^T theta_bar) <= 2 "
                "mu'(a^T theta)`` fails; false goes on.  Not used with ``mode: streamlined``."
            ),
        ] = True,
        **shared,
    ):
        super().__init__(problem, rng, **shared)
        self.lam = float(lam)
        if self.mode == "streamlined":
            self._streamline(problem, self.lam)
        self.strict = strict
        self.vtilde = InverseGram(self.d, self.lam, keep_matrix=True)
        self.theta = np.zeros(self.d)
        self.cum_loss = 0.0
        self.ctr = 1
        self.step = 1.0 / (0.25 + 2.0 / (2.0 + self.S)) / 2.0
        self._eigen: tuple[np.ndarray, np.ndarray] | None = None
        self._rows = np.zeros((3, self.d))
        self._dual = 0.0

    def _iterations(self) -> int:
        S = self.S
        return int(math.ceil((5.0 / 4.0 + S / 8.0) * math.log(2.0 * (2.0 + S) * S**2 * self.ctr)))

    def _project(self, theta_e: np.ndarray, evals: np.ndarray) -> np.ndarray:
        """Onto ``{||theta|| <= S}`` in the ``V~`` metric (the reference's ``project_ellipsoid`` in theta
        coordinates), in the eigenbasis of ``V~`` (``theta_e``: the point's coordinates there):
        ``p(l) = (V~ + l I)^{-1} V~ theta`` with ``l`` in [0, 1000] minimising the dual
        ``l S^2 + sum_i c_i^2 / (e_i + l)`` (``e``: eigenvalues of ``V~``, ``c = e theta_e``).  The
        reference searches ``l`` with a bounded Brent method; the dual is convex, so we solve its
        stationarity condition ``||p(l)|| = S`` as ``1 / ||p(l)|| = 1 / S`` (nearly linear in ``l``:
        the trust-region secular equation) by Newton's method from the previous projection's ``l``
        (0 at the first projection of an observation).  ``1 / ||p||`` is concave and increasing in
        ``l``: from the right of the root a Newton step lands left of it (clamped at 0, which lies
        left of it since the point is outside the ball), and from the left the iterates rise
        monotonically to it; stopped at ``|  ||p||^2 - S^2 | <= 1e-12 S^2``."""
        c = evals * theta_e
        S, S2 = self.S, self.S**2
        l = self._dual
        shifted = evals + l
        p = c / shifted
        for _ in range(100):
            norm2 = p @ p
            if abs(norm2 - S2) <= 1e-12 * S2:
                break
            # Newton on 1/||p(l)|| - 1/S: d/dl ||p||^2 = -2 sum p_i^2 / (e_i + l)
            l = max(l + norm2 * (math.sqrt(norm2) / S - 1.0) / (p @ (p / shifted)), 0.0)
            shifted = evals + l
            p = c / shifted
        if l > 1000.0:  # the reference's search interval
            l = 1000.0
            p = c / (evals + l)
        self._dual = l
        return p

    def _descend(
        self, rows: np.ndarray, products: tuple[float, float, float, float, float], target: float | None, iters: int
    ) -> tuple[float, np.ndarray | None]:
        """``iters`` projected steps from ``anchor`` on ``1/2 ||theta - anchor||^2_{V~} + loss``; ``target``
        None is ``theta_bar``'s gradient ``2 mu(s) - 1 = tanh(s / 2)``, else ``mu(s) - r`` (the
        reference's two fits; ``s = a^T theta``).

        ``rows`` holds ``anchor``, ``D = V~^{-1} a`` and ``a``; ``products`` their dot products
        ``anchor.anchor, anchor.D, anchor.a, D.D, D.a``.  Every iterate is
        ``anchor + w (P - anchor) + c D`` (``P``: the last projected point, ``w = (1 - eta)^j`` after
        ``j`` steps since it), so a step changes only the scalars ``w`` and ``c`` (O(1)), and the
        reference's test ``||theta||^2 - S^2 >= 1e-3`` is a quadratic in them.  Until the first
        projection (``P = anchor``) that test is ``c`` leaving the interval between the
        quadratic's roots.  Projections work in the eigenbasis of ``V~`` (one eigendecomposition
        per observation, then O(d) each).  Returns ``c`` and ``w (P - anchor)`` (None without a
        projection): the last iterate is ``anchor + w (P - anchor) + c D``."""
        step = self.step
        keep, bound = 1.0 - step, self.S**2 + 1e-3
        g, h = (step, 0.0) if target is None else (0.5 * step, step * (0.5 - target))
        aa, ad, za, dd, q = products
        hz, hq, tanh = 0.5 * za, 0.5 * q, math.tanh  # a step: c <- keep c - g tanh(s / 2) - h
        k, c = 0, 0.0
        if dd > 0.0 and aa < bound:  # ||anchor + c D||^2 < bound  <=>  lo < c < hi
            root = math.sqrt(ad * ad + dd * (bound - aa))
            lo, hi = (-ad - root) / dd, (-ad + root) / dd
            for k in range(1, iters + 1):
                c = keep * c - g * tanh(hz + hq * c) - h
                if not lo < c < hi:
                    break
            else:
                return c, None
        if self._eigen is None:
            self._eigen = np.linalg.eigh(self.vtilde.matrix)
        evals, evecs = self._eigen
        anchor_e, direction_e, a_e = rows @ evecs
        moved_e = np.zeros_like(anchor_e)  # P - anchor in the eigenbasis
        w = ee = ae = ed = hw = 0.0
        project = k > 0  # the iterate that left the interval
        while True:
            if project:
                moved_e = self._project(anchor_e + w * moved_e + c * direction_e, evals) - anchor_e
                ee, ae, ed = float(moved_e @ moved_e), float(anchor_e @ moved_e), float(moved_e @ direction_e)
                hw, w, c = 0.5 * float(a_e @ moved_e), 1.0, 0.0
            if k >= iters:
                return c, evecs @ (w * moved_e)
            k += 1
            c = keep * c - g * tanh(hz + hw * w + hq * c) - h
            w *= keep
            project = aa + w * w * ee + c * c * dd + 2.0 * (w * ae + c * ad + w * c * ed) >= bound

    def streamlined_beta(self) -> float:
        st, S = self.streamlined, self.S
        root = math.sqrt(st.lam)
        return S * math.sqrt(st.lam + root + st.log_det / root)

    def learn(self, a: np.ndarray, r: float) -> None:
        if self.streamlined is not None:  # V~ weighted by mu' at the estimate that chose a
            self.streamlined.learn(a, r, _mu_dot_scalar(float(a @ self.streamlined.theta)))
            return
        rows = self._rows  # theta, D = V~^{-1} a, a
        rows[0], rows[2] = self.theta, a
        np.matmul(self.vtilde.inverse, a, out=rows[1])
        (aa, ad, za), (_, dd, q) = (rows[:2] @ rows.T).tolist()
        iters = self._iterations()
        self._eigen, self._dual = None, 0.0  # of V~, computed if a projection needs it
        c, shift = self._descend(rows, (aa, ad, za, dd, q), r, iters)
        theta = rows[0] + c * rows[1]
        if shift is None:  # theta = anchor + c D: its products in closed form
            aa, ad, za = aa + c * (2.0 * ad + c * dd), ad + c * dd, za + c * q
            rows[0] = theta
        else:
            theta += shift
            rows[0] = theta
            aa, ad, za = (theta @ rows.T).tolist()
        c_bar, shift_bar = self._descend(rows, (aa, ad, za, dd, q), None, 4 * iters)
        if shift_bar is None:  # theta_bar - theta = c_bar D, and D^T V~ D = q
            z_bar, disc_norm = za + c_bar * q, abs(c_bar) * math.sqrt(max(q, 0.0))
        else:
            diff = shift_bar + c_bar * rows[1]  # theta_bar - theta
            z_bar = za + float(a @ diff)
            disc_norm = math.sqrt(max(float(diff @ self.vtilde.matrix @ diff), 0.0))
        z = za  # a^T theta
        sensitivity = _mu_dot_scalar(z)
        self.vtilde.update(a, sensitivity)
        if self.strict and _mu_dot_scalar(z_bar) / sensitivity > 2.0:
            raise RuntimeError(
                "ada_ofu_ecolog: the data-dependent condition mu'(a^T theta_bar) <= 2 mu'(a^T theta) "
                "failed (as the reference would); increase policy.params.lam or set strict: false"
            )
        loss, loss_bar = _softplus_scalar(z) - r * z, _softplus_scalar(z_bar) - r * z_bar
        self.cum_loss += 2.0 * (1.0 + self.S) * (loss_bar - loss) - 0.5 * disc_norm
        self.theta = theta

    def _radius(self) -> float:
        lam, S = self.lam, self.S
        gamma = math.sqrt(lam) / 2.0 + 2.0 * math.log(
            2.0 * math.sqrt(1.0 + self.ctr / (4.0 * lam)) / self.delta
        ) / math.sqrt(lam)
        square = 2.0 * lam * S**2 + (1.0 + S) ** 2 * gamma + self.cum_loss
        # the reference clamps at 0 (`res_square = max(0, res_square)`): a cumulative loss difference
        # larger than the other terms leaves a radius of 0 (greedy on theta), not an error
        square = max(0.0, square)
        return math.sqrt(square)

    def act(self, t: int, arms: np.ndarray) -> int:
        if self.streamlined is not None:
            return self._act_streamlined(t, arms)
        arm = self._choose(t, arms, self.theta, self.vtilde, self._radius())
        self.ctr += 1
        return arm
