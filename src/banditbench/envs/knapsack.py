r"""Preference-based (linear contextual) bandits with knapsacks (seed 004: Liu, AISTATS 2025).

Each round ``t`` a context ``c_t ~ p_c`` is drawn i.i.d. from a finite set; the learner
sees the reward and cost feature matrices ``phi(c_t, .)``, ``psi(c_t, .)`` of all ``K``
actions and plays a duel ``(x_t, y_t)`` or the null action ``NULL = (-1, -1)`` (skip the
round: no reward, no cost, no feedback; Sec. 2).  Expected rewards
:math:`r(c, a) = \langle\phi(c, a), \theta^*\rangle` and costs :math:`w(c, a) = \langle\psi(c, a), \omega^*\rangle`
(Assumption 1).  The preference bit
:math:`o_t \sim \mathrm{Bernoulli}\bigl(\sigma(r(c_t, x_t) - r(c_t, y_t))\bigr)` is the BT model (1);
the noisy costs ``W(c_t, x_t), W(c_t, y_t)`` of both actions are always observed.

Budget: the costs actually drawn are charged to the total budget ``B``.  The stopping
time ``tau`` is the first round whose charge makes the spend reach ``B`` (eq. 16); that
round still counts (so the spend exceeds ``B`` by less than one round's cost) and every
later round is the null action whatever the learner plays.  The context tells the
learner whether the process has stopped (the knapsack is visibly empty), nothing more.

Per-round metrics (the environment keeps them, the runner logs them; the aggregator reports
cumulative sums):

* ``reward``  ``r(c_t, x_t) + r(c_t, y_t)`` for ``t <= tau`` and 0 after (expected reward of eq. 2),
* ``regret``  :math:`v^* - \mathrm{reward}_t`, so
  :math:`\mathrm{cumulative\_regret}(T) = T v^* - \sum_{t \le \tau} r(c_t, x_t, y_t)`
  is the regret of eq. (14); :math:`v^*` is the value of the offline LP (4)-(6), whose
  objective :math:`r(c, x, y) = r(c, x) + r(c, y)` already counts both actions (the "factor 2"),
* ``cost``    the noisy spend charged in round ``t`` (``cumulative_cost`` is the budget
  consumption over time),
* ``active``  ``1{t <= tau}`` (``cumulative_active`` is ``min(t, tau)``).

Each environment answers in one of two feedback kinds, chosen by the runner from the
policy (``feedback_kinds``): ``preference_cost`` gives ``PreferenceCostFeedback`` (what
Algorithms 1-2 and CD-EXP3 learn from) and ``reward_cost`` gives ``RewardCostFeedback``
with noisy absolute rewards of both actions (what the ideal baselines BwK-Ideal /
LinCBwK-Ideal learn from).  Everything else is shared (same streams, so the same seed
gives the same contexts and noise), and all algorithms of Tables 1-2 run in one experiment.

Noise (Assumption 1/2: zero-mean, sub-Gaussian): ``bernoulli`` draws ``W ~ Bernoulli(w)``
(resp. ``R ~ Bernoulli(r)``), the classic BwK outcome model, non-negative and bounded;
``gaussian`` adds ``N(0, noise_std^2)`` (a negative draw then refunds the budget);
``bernoulli_factor`` (car moderation only, see :class:`CarModeration`) charges
``W(c, a) = V_a r(c, a)`` with ``V_a ~ Bernoulli(v(a))``, mean ``v(a) r(c, a) = w(c, a)``, and
gives the ideal baseline Gaussian reward noise.  All random numbers of a run are drawn up front
from streams spawned from the job seed, so they do not depend on the policy.

What a budget allows (reported with every run, :meth:`_DuelKnapsack.summary`):

* ``instance_T_v_star = T v*``, the offline LP (4)-(6)'s value over the horizon: no policy's
  expected cumulative reward exceeds it by more than the last round's overshoot of the budget
  (the LP at per-round budget ``(B + one round's largest charge) / T`` bounds it);
* ``instance_budget_ceiling = B max_{c, a} r(c, a) / w(c, a)``, the stopping rule's ceiling:
  with non-negative costs every unit of expected reward costs at least ``1 / rho`` units of
  expected budget (``rho = max r / w``), the spend up to ``tau`` is below ``B`` plus one round's
  charge, and by optional stopping the expected spend equals the expected sum of the played
  ``w``, so ``E[reward up to tau] <= rho (B + largest one-round charge)``.  For costs
  proportional to rewards (the car, ``w = v(a) r``) ``rho = 1 / min_a v(a)``: the ceiling is
  ``B / min v`` whatever the scale of the rewards.  Infinite when an action with positive reward
  costs nothing or costs can be negative (then nothing bounds the reward but the horizon).

Both are constants of the instance (the same for every algorithm of a table column); the
aggregated tables show summaries named ``instance_*`` as extra rows of the headline table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Mapping, NamedTuple, Sequence

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from ..api import NULL, Environment, register
from ..data.car_oracle import CLASSES, CONTEXT_DIMENSION, DEFAULT_ORACLE, action_features
from ..data.files import load_npz, rebuild_advice
from ..errors import ENVIRONMENT_PARAMS, ConfigError, CorruptFileError, key_path
from ..feedback import PreferenceCostFeedback, RewardCostFeedback, new_feedback
from ..numerics.sigmoid import sigmoid
from ..params import DataPath, Doc, NonNegative, OneOf, Positive, data_file_path

NOISES = ("bernoulli", "gaussian")
#: cost laws of the car moderation instance (``noise``): ``bernoulli_factor`` is Sec. 6's cost sentence
CAR_NOISES = ("bernoulli_factor", "gaussian", "bernoulli")


@dataclass(frozen=True)
class LPSolution:
    """Optimum of the offline problem (4)-(6): value ``v*`` per round, the budget
    constraint's Lagrange multiplier ``lambda*`` and an optimal ``pi`` of shape (C, m):
    ``m = K*K + 1`` (pairs ``(x, y)`` row-major, then null) for ``pairs="all"``,
    ``m = K + 1`` (pairs ``(a, a)``, then null) for ``pairs="symmetric"``."""

    value: float
    multiplier: float
    policy: np.ndarray


def offline_lp(
    p_c: np.ndarray, r: np.ndarray, w: np.ndarray, b: float, pairs: str = "symmetric", method: str = "highs-ipm"
) -> LPSolution:
    """Solve the offline problem (4)-(6) with ``scipy.optimize.linprog`` (HiGHS).

    ``p_c`` (C,) context probabilities, ``r`` and ``w`` (C, K) expected rewards and costs,
    ``b = B / T``.  Variables ``pi(c, x, y)`` and ``pi(c, null)``; the null action (reward
    and cost 0) belongs to the decision set (Sec. 2: "we assume a null action exists"),
    which keeps the LP feasible for every ``b >= 0``.

    ``pairs="all"`` is (4)-(6) verbatim over every ordered pair.  ``pairs="symmetric"``
    (the default) keeps only the pairs ``(a, a)``: it has the same optimal value, because
    ``r(c, x, y)`` and ``w(c, x, y)`` are additive, so the marginal
    ``mu(c, a) = 1/2 sum_y [pi(c, a, y) + pi(c, y, a)]`` placed on ``(a, a)`` has the
    same reward and cost as any ``pi`` (Sec. 3: an optimal solution with ``x* = y*``
    exists).  It has K + 1 instead of K^2 + 1 variables per context, and HiGHS' interior
    point method with crossover (``highs-ipm``, a basic optimal solution) solves the
    1728-context car instance in about 0.05 s instead of about 1 s for the full LP with the
    simplex; the tests check that both give the same value.
    """
    if pairs not in ("all", "symmetric"):
        raise ConfigError(f"pairs: must be 'all' or 'symmetric', got {pairs!r}")
    p_c, r, w = np.asarray(p_c, float), np.asarray(r, float), np.asarray(w, float)
    n_ctx, k = r.shape
    if pairs == "all":
        pair_r = (r[:, :, None] + r[:, None, :]).reshape(n_ctx, k * k)
        pair_w = (w[:, :, None] + w[:, None, :]).reshape(n_ctx, k * k)
    else:
        pair_r, pair_w = 2.0 * r, 2.0 * w
    zero = np.zeros((n_ctx, 1))
    pair_r, pair_w = np.hstack([pair_r, zero]), np.hstack([pair_w, zero])
    m = pair_r.shape[1]
    objective = -(p_c[:, None] * pair_r).ravel()
    a_ub = (p_c[:, None] * pair_w).reshape(1, -1)
    a_eq = sparse.kron(sparse.eye(n_ctx, format="csr"), np.ones((1, m)), format="csr")
    res = linprog(objective, A_ub=a_ub, b_ub=[b], A_eq=a_eq, b_eq=np.ones(n_ctx), bounds=(0, None), method=method)
    if res.status != 0:
        raise RuntimeError(f"offline LP (4)-(6) failed: {res.message}")
    return LPSolution(float(-res.fun), float(-res.ineqlin.marginals[0]), res.x.reshape(n_ctx, m))


def _read_only_rows(array: np.ndarray) -> list[np.ndarray]:
    """One read-only view per row of ``array`` (per context of the (C, K, d) features, per round of
    the observed costs): handed to the policy, they let it change nothing of the environment."""
    rows = list(array)
    for row in rows:
        row.flags.writeable = False
    return rows


class KnapsackContext(NamedTuple):
    """What the learner sees in round t: reward features ``phi`` (K, d), cost features
    ``psi`` (K, d_w) of every action, and whether the budget is already exhausted
    (an immutable named tuple of read-only views: the environment makes one per instance context and
    stopping state and hands the same one out whenever that context comes up)."""

    phi: np.ndarray
    psi: np.ndarray
    stopped: bool


class _DuelKnapsack(Environment):
    """Shared simulation of a finite-context PbLinCBwK instance (see the module docstring).

    Declares the family's shared parameters; a variant builds its instance (features,
    expected rewards and costs, context distribution) and hands it to :meth:`_setup`.
    """

    feedback_kind = "preference_cost"
    feedback_kinds = ("preference_cost", "reward_cost")
    action_kind = "pair"
    metrics = ("reward", "regret", "cost", "active")
    primary_metric = "reward"
    keeps_truth = True
    #: ``bernoulli_factor`` only: ``P(V_a = 1)`` per action (K,), set by the variant before :meth:`_setup`
    _cost_probability: np.ndarray | None = None

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        horizon: Annotated[int, Doc("the run's rounds T, set from the experiment's ``horizon``.")],
        budget: Annotated[
            Positive,
            Doc(
                "the total budget B; the run stops once the spent cost exceeds it (set from the experiment's "
                "``budgets``)."
            ),
        ],
        noise: Annotated[
            str,
            OneOf(NOISES),
            Doc(
                "the law of the observed costs (and of BwK-Ideal's absolute rewards), not stated by the paper: "
                "``bernoulli`` draws ``Bernoulli(w)``, ``gaussian`` adds ``N(0, noise_std^2)``."
            ),
        ] = "bernoulli",
        noise_std: Annotated[
            Positive,
            Doc(
                "standard deviation of the ``gaussian`` noise (and of the Ideal baselines' reward noise under "
                "``bernoulli_factor``)."
            ),
        ] = 0.1,
        feedback_kind: Annotated[
            str,
            OneOf(("preference_cost", "reward_cost")),
            Doc(
                "set from the policy: ``preference_cost`` (a duel's preference bit and both costs) or "
                "``reward_cost`` (both noisy rewards and costs, the Ideal baselines)."
            ),
        ] = "preference_cost",
    ):
        self.feedback_kind = feedback_kind
        self._streams = seed_seq.spawn(3)  # contexts, outcomes, costs
        self.horizon, self.budget, self.noise, self.noise_std = int(horizon), float(budget), noise, float(noise_std)

    @classmethod
    def reward_range(cls, values: Mapping[str, Any]) -> tuple[float, float] | None:
        """The range of one action's expected reward ``r(c, a)`` from the parameters alone (None: it depends on
        data); each variant declares its own."""
        return None

    @classmethod
    def metric_ranges(cls, values: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
        """With one action's expected reward in ``[r0, r1]`` (:meth:`reward_range`), a round's ``reward`` (a duel's
        two, or 0 for the null action and after the stop) lies in ``[lo, hi] = [min(0, 2 r0), max(0, 2 r1)]`` and
        ``regret = v* - reward`` in ``[-hi, hi - lo]`` (``0 <= v* <= hi``: the null action is in the LP); ``cost``
        in ``[0, 2]`` for Bernoulli costs, ``[lo, hi]`` for ``bernoulli_factor`` (``W = V_a r``), none for Gaussian
        noise; ``active`` in ``[0, 1]``."""
        out = {"active": (0.0, 1.0)}
        reward = cls.reward_range(values)
        if reward is not None:
            lo, hi = min(0.0, 2 * float(reward[0])), max(0.0, 2 * float(reward[1]))
            out.update(reward=(lo, hi), regret=(-hi, hi - lo))
            if values["noise"] == "bernoulli_factor":
                out["cost"] = (lo, hi)
        if values["noise"] == "bernoulli":
            out["cost"] = (0.0, 2.0)
        return out

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        # every round's context, outcome and two cost draws, three truth values, two costs and two rewards
        return 11 * 8 * horizon

    def _setup(self, phi: np.ndarray, psi: np.ndarray, r: np.ndarray, w: np.ndarray, p_c: np.ndarray) -> None:
        """The instance: features ``phi`` (C, K, d), ``psi`` (C, K, d_w), expected rewards ``r`` and costs
        ``w`` (C, K), context probabilities ``p_c`` (C,)."""
        if self.noise == "bernoulli" and (r.min() < 0 or r.max() > 1 or w.min() < 0 or w.max() > 1):
            raise ConfigError(f"{key_path(ENVIRONMENT_PARAMS, 'noise')}: 'bernoulli' needs rewards and costs in [0, 1]")
        if (self.noise == "bernoulli_factor") != (self._cost_probability is not None):
            raise ValueError("noise 'bernoulli_factor' needs the variant's cost probabilities, and only it uses them")
        self.phi, self.psi, self.r, self.w, self.p_c = phi, psi, r, w, p_c
        self.n_arms = r.shape[1]
        self.per_round_budget = self.budget / self.horizon
        self.lp = offline_lp(p_c, r, w, self.per_round_budget)
        self.v_star = self.lp.value
        ctx_seq, outcome_seq, cost_seq = self._streams
        # every random number of the run, drawn up front: independent of the policy
        self._ctx = np.random.default_rng(ctx_seq).choice(len(p_c), size=self.horizon, p=p_c)
        self._outcome_u = self._draw_outcomes(np.random.default_rng(outcome_seq))
        cost_rng = np.random.default_rng(cost_seq)
        self._cost_u = (
            cost_rng.random((self.horizon, 2))
            if self.noise in ("bernoulli", "bernoulli_factor")
            else cost_rng.standard_normal((self.horizon, 2))
        )
        self.spent = 0.0
        self.tau: int | None = None
        # the per-round path reads Python numbers from lists (no numpy call on 2-vectors)
        self._round_ctx, self._round_cost_u = self._ctx.tolist(), self._cost_u.tolist()
        self._round_outcome_u = self._outcome_u.tolist()
        self._r_rows, self._w_rows = r.tolist(), w.tolist()
        self._factor_p = None if self._cost_probability is None else self._cost_probability.tolist()
        self._win_prob = sigmoid(r[:, :, None] - r[:, None, :]).tolist()  # [c][x][y] = sigma(r(c,x) - r(c,y))
        # what the learner sees, per context and whether the process has stopped: made once, handed out every round
        phi_views, psi_views = _read_only_rows(phi), _read_only_rows(psi)
        self._contexts = [
            [KnapsackContext(f, g, stopped) for f, g in zip(phi_views, psi_views)] for stopped in (False, True)
        ]
        # every round's observed costs (and absolute rewards), written when the round is played (through a
        # memoryview of the flat array: a float item assignment without numpy's) and handed to the policy as
        # that round's read-only view (no array made per round)
        costs = np.zeros((self.horizon, 2, 1))
        self._cost_flat, self._cost_views = memoryview(costs.reshape(-1)), _read_only_rows(costs)
        rewards = np.zeros((self.horizon, 2))
        self._reward_flat, self._reward_views = memoryview(rewards.reshape(-1)), _read_only_rows(rewards)
        # every round's truth values (keeps_truth): reward, charged cost, 1{t <= tau}; regret = v* - reward
        self._reward, self._cost, self._active = [0.0] * self.horizon, [0.0] * self.horizon, [0.0] * self.horizon

    # --- feedback variants -------------------------------------------------
    def _draw_outcomes(self, rng: np.random.Generator) -> np.ndarray:
        """Random numbers behind the reward-side feedback of every round."""
        if self.feedback_kind == "preference_cost":
            return rng.random(self.horizon)
        return rng.random((self.horizon, 2)) if self.noise == "bernoulli" else rng.standard_normal((self.horizon, 2))

    def _feedback(self, t: int, c: int, x: int, y: int, costs: np.ndarray):
        """Round ``t``'s feedback: the BT preference bit (eq. 1), or both noisy absolute rewards."""
        if self.feedback_kind == "preference_cost":
            return new_feedback(
                PreferenceCostFeedback, (t, 1 if self._round_outcome_u[t - 1] < self._win_prob[c][x][y] else 0, costs)
            )
        flat = self._reward_flat
        flat[2 * t - 2], flat[2 * t - 1] = self._noisy_pair(self._r_rows[c], x, y, self._round_outcome_u[t - 1])
        return new_feedback(RewardCostFeedback, (t, self._reward_views[t - 1], costs))

    def _noisy_pair(self, means: list[float], x: int, y: int, u: list[float]) -> tuple[float, float]:
        """Noisy draws with means ``means[x]`` and ``means[y]`` from their random numbers ``u[0]``, ``u[1]``
        (uniforms: Bernoulli outcomes 1.0 / 0.0; standard normals: the mean plus ``noise_std`` times it)."""
        if self.noise == "bernoulli":
            return 1.0 if u[0] < means[x] else 0.0, 1.0 if u[1] < means[y] else 0.0
        std = self.noise_std
        return means[x] + std * u[0], means[y] + std * u[1]

    # --- interface ---------------------------------------------------------
    def public_info(self) -> dict[str, Any]:
        return {
            "dimension": self.phi.shape[-1],
            "cost_dimension": self.psi.shape[-1],
            "n_arms": self.n_arms,
            "budget": self.budget,
            "per_round_budget": self.per_round_budget,
            "horizon": self.horizon,
            "n_resources": 1,
        }

    def context(self, t: int) -> KnapsackContext:
        return self._contexts[self.tau is not None][self._round_ctx[t - 1]]

    def play(self, t: int, action: Sequence[int]):
        if action is NULL and self.tau is not None:
            return None  # after the stopping time: the round's truth values stay the zeros they start at
        x, y = int(action[0]), int(action[1])
        n = self.n_arms
        if not (0 <= x < n and 0 <= y < n):
            if (x, y) != NULL:
                raise ValueError(
                    f"round {t}: action {action!r} is neither a pair of arms in [0, {n}) nor the null action {NULL}"
                )
            self._active[t - 1] = float(self.tau is None)  # the null action: no reward, no cost
            return None
        if self.tau is not None:
            return None  # after the stopping time: nothing happens
        c = self._round_ctx[t - 1]
        u = self._round_cost_u[t - 1]
        if self._factor_p is None:
            cost_x, cost_y = self._noisy_pair(self._w_rows[c], x, y, u)
        else:  # W(c, a) = V_a r(c, a), V_a ~ Bernoulli(v(a))
            p, rewards = self._factor_p, self._r_rows[c]
            cost_x, cost_y = rewards[x] if u[0] < p[x] else 0.0, rewards[y] if u[1] < p[y] else 0.0
        charge = cost_x + cost_y
        self.spent += charge
        if self.spent >= self.budget:
            self.tau = t
        rewards = self._r_rows[c]
        self._reward[t - 1], self._cost[t - 1], self._active[t - 1] = rewards[x] + rewards[y], charge, 1.0
        flat = self._cost_flat
        flat[2 * t - 2], flat[2 * t - 1] = cost_x, cost_y
        return self._feedback(t, c, x, y, self._cost_views[t - 1])

    def step(self, t: int, action: Sequence[int]):
        feedback = self.play(t, action)
        reward = self._reward[t - 1]
        return feedback, {
            "reward": reward,
            "regret": self.v_star - reward,
            "cost": self._cost[t - 1],
            "active": self._active[t - 1],
        }

    def truth_log(self, horizon: int) -> dict[str, Any]:
        reward = np.array(self._reward[:horizon])
        return {
            "reward": reward,
            "regret": self.v_star - reward,
            "cost": self._cost[:horizon],
            "active": self._active[:horizon],
        }

    def reward_per_cost(self) -> float:
        """``rho = max_{c, a} r(c, a) / w(c, a)`` over the actions with positive expected reward: the most
        expected reward one unit of expected budget can buy (infinite when such an action costs nothing
        or a cost is negative)."""
        positive = self.r > 0
        if self.w.min() < 0 or np.any(positive & (self.w <= 0)):
            return float("inf")
        return float((self.r[positive] / self.w[positive]).max()) if positive.any() else 0.0

    def largest_charge(self) -> float:
        """The largest budget one round can charge: twice the largest realised cost of one action
        (unbounded for Gaussian noise, where this is the expected cost)."""
        top = (
            self.r.max() if self._cost_probability is not None else (1.0 if self.noise == "bernoulli" else self.w.max())
        )
        return 2.0 * float(top)

    def summary(self) -> dict[str, float]:
        return {
            "tau": float(self.tau if self.tau is not None else self.horizon),
            "exhausted": float(self.tau is not None),
            "spent": self.spent,
            "budget": self.budget,
            "v_star": self.v_star,
            "lp_multiplier": self.lp.multiplier,
            "instance_T_v_star": self.horizon * self.v_star,
            "instance_budget_ceiling": self.budget * self.reward_per_cost(),
        }


@register("pbbwk_synthetic")
class SyntheticPbBwK(_DuelKnapsack):
    """Synthetic PbBwK (seed 004, Sec. 6): K context-free arms with given expected rewards and costs.

    What Sec. 6 states, and how each piece is modelled here:

    * "four arms with the expected rewards r = [0.1, 0.2, 0.4, 0.7] and expected costs
      w = [0.05, 0.4, 0.5, 0.7]": the defaults.  A multi-armed instance is the linear model
      with one context and one-hot features, ``phi(c, a) = psi(c, a) = e_a`` (d = K),
      ``theta* = rewards``, ``omega* = costs`` (Assumption 1 holds exactly).
    * "the learner takes duel actions x_t, y_t in {0, 1, 2, 3}" and is credited
      ``r(x_t) + r(y_t)`` (objective (2)); the tables' "cumulative reward" is the sum of these
      *expected* rewards up to the stopping time (not of noisy draws), so it has no reward-noise
      variance.
    * "The learner observes the preference feedback on rewards": the BT model (1) on the
      expected rewards, ``P(x > y) = sigma(r(x) - r(y))``.
    * "and the (noisy) costs": the noise law is not stated; ``noise = "bernoulli"`` (default)
      draws ``W ~ Bernoulli(w)``, the classic BwK outcome model, which keeps costs in [0, 1]
      and is zero-mean and 1-sub-Gaussian around ``w`` (Assumption 2); ``"gaussian"`` adds
      ``N(0, noise_std^2)`` instead.  BwK-Ideal's absolute rewards use the same law with mean
      ``r``.
    * Budgets, horizon and trials come from the config (B in {300, 500, 700, 900}, T = 2000,
      200 trials).
    """

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        rewards: Annotated[
            Sequence[float],
            Doc(
                "expected rewards ``r(a)`` of the K arms (Sec. 6: [0.1, 0.2, 0.4, 0.7]); ``theta* = rewards`` "
                "with one-hot features."
            ),
        ] = (0.1, 0.2, 0.4, 0.7),
        costs: Annotated[
            Sequence[NonNegative],
            Doc("expected costs ``w(a)`` of the K arms, as many as ``rewards`` (Sec. 6: [0.05, 0.4, 0.5, 0.7])."),
        ] = (0.05, 0.4, 0.5, 0.7),
        **shared,
    ):
        super().__init__(seed_seq, **shared)
        r = np.asarray(rewards, dtype=float)
        w = np.asarray(costs, dtype=float)
        if r.ndim != 1 or r.shape != w.shape or len(r) < 2:
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'rewards')}: rewards and costs need to be two lists "
                f"of equal length >= 2, got {list(r)} and {list(w)}"
            )
        eye = np.eye(len(r))[None]
        self._setup(eye, eye, r[None], w[None], np.ones(1))

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        rewards, costs = list(values["rewards"]), list(values["costs"])
        if len(rewards) != len(costs) or len(rewards) < 2:
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'rewards')}: rewards and costs need to be two lists "
                f"of equal length >= 2, got {rewards} and {costs}"
            )
        if values["noise"] == "bernoulli" and not all(0 <= v <= 1 for v in rewards + costs):
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'noise')}: 'bernoulli' needs rewards and costs in "
                f"[0, 1], got {rewards} and {costs}"
            )

    @classmethod
    def reward_range(cls, values: Mapping[str, Any]) -> tuple[float, float]:
        return float(min(values["rewards"])), float(max(values["rewards"]))

    @classmethod
    def known_facts(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        k = len(values["rewards"])
        return {"n_arms": k, "dimension": k, "cost_dimension": k}


#: how the car moderation rewards are read off the fitted regression's score (``reward_scale``)
REWARD_SCALES = ("unit_interval", "shifted_logit", "logit")


def car_rewards(score: np.ndarray, reward_scale: str, score_scale: float = 1.0) -> np.ndarray:
    """Expected rewards ``r(c, a)`` (C, K) from the fitted score ``s(c, a) = <phi(c, a), theta_LR>``
    (see :class:`CarModeration`): ``unit_interval`` ``(s - min s) / (max s - min s)``, ``shifted_logit``
    ``score_scale (s - min s)``, ``logit`` ``score_scale s``; the minimum and maximum are over all (car,
    review) pairs.  Each is linear in ``phi``: a multiple of ``theta_LR`` plus a constant, which every
    review's block absorbs in its intercept coordinate."""
    if reward_scale == "unit_interval":
        return (score - score.min()) / (score.max() - score.min())
    if reward_scale == "shifted_logit":
        return score_scale * (score - score.min())
    return score_scale * score


def _car_oracle(oracle: str):
    """The car oracle file's arrays (:mod:`banditbench.data.car_oracle`), their shapes checked: the cars'
    contexts and one block of ``theta`` and ``logit_theta`` per review."""
    # a file the user supplies (no rule builds it): what to do names the parameter and the default's rule
    advice = (
        f"point the experiment's {key_path(ENVIRONMENT_PARAMS, 'oracle')} at a car oracle, e.g. the default "
        f"{DEFAULT_ORACLE!r}, which `snakemake --cores 1 {DEFAULT_ORACLE}` builds"
    )
    data, _ = load_npz(
        oracle,
        "car oracle",
        required=("contexts", "theta", "logit_theta", "feature_norm", "lam"),
        expect={"dataset": "car"},
        advice=advice,
    )
    d = len(CLASSES) * CONTEXT_DIMENSION
    if (
        data["contexts"].ndim != 2
        or data["contexts"].shape[1] != CONTEXT_DIMENSION
        or data["theta"].shape != (d,)
        or data["logit_theta"].shape != (d,)
    ):
        raise CorruptFileError(
            f"{oracle}: car oracle has contexts {data['contexts'].shape}, theta "
            f"{data['theta'].shape} and logit_theta {data['logit_theta'].shape}; expected "
            f"(n, {CONTEXT_DIMENSION}), ({d},) and ({d},); {rebuild_advice(oracle, 'car oracle', advice)}"
        )
    return data


def _check_costs(w: np.ndarray, reward_scale: str, score_scale: float, allow_negative_costs: bool) -> None:
    """Refuse negative expected costs ``w`` unless ``allow_negative_costs`` asks for them."""
    if w.min() < 0 and not allow_negative_costs:
        raise ConfigError(
            f"{key_path(ENVIRONMENT_PARAMS, 'reward_scale')}: {reward_scale!r} with score_scale "
            f"{score_scale} gives negative expected costs (min {w.min():.3g}), which refund budget "
            f"(outside Sec. 2's W: C x A -> R+); set "
            f"{key_path(ENVIRONMENT_PARAMS, 'allow_negative_costs')}: true to run it anyway"
        )


@register("car_moderation")
class CarModeration(_DuelKnapsack):
    """Online content moderation on UCI car evaluation (seed 004, Sec. 6).

    Each choice, against the sentence of Sec. 6 (and the definition of Sec. 2) it implements:

    * "the platform randomly selects a context from the car dataset": the 1728 cars,
      drawn uniformly and i.i.d. (Assumption 2).  Actions: the four reviews (unacc, acc,
      good, vgood); reward features ``phi(c, a)`` of :mod:`banditbench.data.car_oracle`.
    * "we trained ... logistic regression with the logistic function p(c, a, theta*) = 1 /
      (1 + exp(-<phi(c, a), theta*>)) ... The reward function r(c, a) = <phi(c, a), theta*>":
      the fitted model's score ``s(c, a) = <phi(c, a), theta_LR>`` runs from about -8.6 to 11.3
      with the default oracle, and 78 % of the (car, review) pairs score below 0 (the reviews the
      model deems wrong).  Taken literally it breaks the problem the paper solves: Sec. 2 defines
      "R: C x A -> R+ is the reward function ... W: C x A -> R+ is the cost function" and
      Assumption 2 puts ``r, w`` in [0, 1]; with ``w = v(a) r`` a negative score is a negative
      cost that refunds budget.  ``reward_scale`` picks how ``r`` is read off ``s``; the
      candidates, compared by the paper's definitions (not by any result):

      - ``unit_interval`` (default): ``r = (s - min s) / (max s - min s)``.  Sec. 2's ``R+``,
        Assumption 1 (linear in ``phi``: the shift is absorbed by each block's intercept) and
        Assumption 2 (``r, w`` in [0, 1]; with the default cost law the cost noise is bounded,
        hence sub-Gaussian) all hold.  The expert's BT preference (1) becomes
        ``sigma((s(x) - s(y)) / (max s - min s))``: the model's log-odds tempered by the range
        (about 1/20), at most ``sigma(1) ~ 0.73`` — the weak preferences that any reward in
        [0, 1] gives under (1) and that the paper's ``kappa`` accounts for.  The only
        candidate that meets every definition, so the default.
      - ``shifted_logit``: ``r = score_scale (s - min s)``.  Sec. 2 and Assumption 1 hold and the
        BT preferences are exactly the fitted model's (a shift leaves differences unchanged), but
        ``r`` reaches about 20 (Assumption 2 fails, and so does the 1-sub-Gaussian cost noise).
        With ``w = v(a) r`` and rewards that large, the LP (4)-(6) is degenerate on the paper
        grid: ``T v* = B / min v`` at every budget, attained by a context-free policy that plays
        the cheap reviews (acc, good) whatever the car, so the instance cannot reward the
        use of context.  An option.
      - ``logit``: ``r = score_scale s``, the formula verbatim: negative rewards and refunding
        costs, outside Sec. 2's class.  Refused unless ``allow_negative_costs: true`` (the
        named variant ``knapsack_car_logit`` of ``config/knapsack.yaml``).
      - the model's probability ``p(c, a) = sigma(s)`` is in [0, 1] but not linear in ``phi``
        (Assumption 1 fails; every learner here is linear): not offered.

      ``score_scale`` multiplies the score (the expert's inverse temperature, equivalently the
      features' scale) for ``shifted_logit`` and ``logit``, where it sets every reward's level;
      ``unit_interval`` is scale-free, so a ``score_scale`` other than 1 is refused there.  The
      oracle's own scale (its ``feature_norm``, ridge ``lam`` and score range) is recorded in the
      oracle file and on the instance (``oracle_scale``).
    * "the costs are proportional to their underlying rewards w(c, a) = v(a) x r(c, a),
      where the cost factor v(a) is drawn from the set of {acceptable, good, unacceptable,
      very good} with the probability {0.3, 0.3, 0.5, 0.5}": the four numbers sum to 1.6, so
      they are not a distribution over the reviews; "drawn ... with the probability" reads as
      one draw per review and round: ``V_a ~ Bernoulli(p_a)`` with ``p = (0.5, 0.3, 0.3, 0.5)``
      for (unacc, acc, good, vgood) (``cost_factors``), which the next sentence motivates
      ("giving a medium/conservative rating is relatively easier than providing a high/low
      rating").  The realised cost is ``W(c, a) = V_a r(c, a)`` and its mean ``w(c, a) = p_a
      r(c, a)``, the ``v(a) r(c, a)`` of the text.  Cost features ``psi = phi``: ``w`` is linear
      with ``omega*`` = ``theta*`` scaled by ``p_a`` block by block (Assumption 1); the learner is
      not told ``p``.
    * "the platform also observes the labor costs, which are sometimes noisy": that Bernoulli
      draw is the noise, ``noise = "bernoulli_factor"`` (default): the cost is either the full
      ``r(c, a)`` or nothing, zero-mean around ``w`` and, with ``r`` in [0, 1], bounded.
      ``"gaussian"`` charges ``w + N(0, noise_std^2)`` instead (a negative draw refunds budget),
      ``"bernoulli"`` charges ``Bernoulli(w)`` (``unit_interval`` only).  LinCBwK-Ideal's absolute
      rewards get ``r + N(0, noise_std^2)`` under ``bernoulli_factor`` and ``gaussian`` (the paper
      gives no reward-noise law; 0.1 is a small level within Assumption 2's 1-sub-Gaussian bound,
      not calibrated against any result) and ``Bernoulli(r)`` under ``bernoulli``.
    * ``allow_negative_costs`` (default false): an instance whose expected costs can be negative
      is refused, naming the parameters that make it so; true asks for such an instance
      explicitly (the literal-logit variant).
    * Budgets B in {300, 500, 700, 900}, T = 2000, 200 trials: the config.  What each budget
      allows: ``T v*`` and the stopping rule's ceiling ``B / min v`` (module docstring), both in
      every run's summary and beside the tables' rows.
    """

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        oracle: Annotated[
            DataPath,
            Doc(
                "the car oracle file: the cars' contexts and the logistic-regression scores fitted on UCI Car "
                "Evaluation (:mod:`banditbench.data.car_oracle`)."
            ),
        ] = DEFAULT_ORACLE,
        reward_scale: Annotated[
            str,
            OneOf(REWARD_SCALES),
            Doc(
                "how the reward ``r`` is read off the oracle's score ``s`` (class docstring): ``unit_interval``, "
                "``shifted_logit`` or ``logit`` (the formula verbatim)."
            ),
        ] = "unit_interval",
        score_scale: Annotated[
            Positive,
            Doc(
                "multiplies the score (the expert's inverse temperature) for ``shifted_logit`` and ``logit``; "
                "must be 1 with ``unit_interval``."
            ),
        ] = 1.0,
        cost_factors: Annotated[
            Sequence[NonNegative],
            Doc(
                "``P(V_a = 1)`` of the cost factor of each review (unacc, acc, good, vgood); the paper's "
                "{0.3, 0.3, 0.5, 0.5} read as one Bernoulli draw per review and round."
            ),
        ] = (0.5, 0.3, 0.3, 0.5),
        noise: Annotated[
            str,
            OneOf(CAR_NOISES),
            Doc(
                "the cost's noise: ``bernoulli_factor`` (``W = V_a r``), ``gaussian`` (``w + N(0, noise_std^2)``) "
                "or ``bernoulli`` (``Bernoulli(w)``, ``unit_interval`` only)."
            ),
        ] = "bernoulli_factor",
        allow_negative_costs: Annotated[
            bool,
            Doc(
                "false refuses an instance whose expected costs can be negative; true asks for one (the "
                "literal-logit variant)."
            ),
        ] = False,
        **shared,
    ):
        super().__init__(seed_seq, noise=noise, **shared)
        self.check_params(
            {
                "reward_scale": reward_scale,
                "score_scale": score_scale,
                "cost_factors": cost_factors,
                "noise": noise,
                "allow_negative_costs": allow_negative_costs,
            },
            self.horizon,
        )
        v = np.asarray(cost_factors, dtype=float)
        data = _car_oracle(oracle)
        phi = action_features(data["contexts"], feature_norm=float(data["feature_norm"]))
        score = phi @ data["logit_theta"]
        r = car_rewards(score, reward_scale, score_scale)
        w = v[None, :] * r
        _check_costs(w, reward_scale, score_scale, allow_negative_costs)
        n = len(r)
        self.reward_scale, self.score_scale, self.cost_factors = reward_scale, float(score_scale), v
        self.oracle_scale = {
            "feature_norm": float(data["feature_norm"]),
            "lam": float(data["lam"]),
            "score_min": float(score.min()),
            "score_max": float(score.max()),
            "negative_fraction": float((score < 0).mean()),
        }
        if noise == "bernoulli_factor":
            self._cost_probability = v
        self._setup(phi, phi, r, w, np.full(n, 1.0 / n))

    @classmethod
    def required_files(cls, params) -> list[str]:
        oracle = str(params.get("oracle", DEFAULT_ORACLE))
        return [data_file_path(oracle) or oracle]  # inside the project: as the rule names it

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        factors, scale, noise = list(values["cost_factors"]), values["reward_scale"], values["noise"]
        if len(factors) != len(CLASSES) or min(factors) < 0:
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'cost_factors')}: need {len(CLASSES)} non-negative "
                f"factors (order {list(CLASSES)}), got {factors!r}"
            )
        if scale not in REWARD_SCALES:
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'reward_scale')}: {scale!r} is not one of {list(REWARD_SCALES)}"
            )
        if noise not in CAR_NOISES:
            raise ConfigError(f"{key_path(ENVIRONMENT_PARAMS, 'noise')}: {noise!r} is not one of {list(CAR_NOISES)}")
        if noise == "bernoulli_factor" and max(factors) > 1:
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'cost_factors')}: with noise 'bernoulli_factor' each "
                f"factor is the probability P(V_a = 1) and must lie in [0, 1], got {factors!r}"
            )
        if noise == "bernoulli" and scale != "unit_interval":
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'noise')}: 'bernoulli' needs rewards and costs in "
                f"[0, 1], i.e. reward_scale: unit_interval"
            )
        if noise == "bernoulli" and max(factors) > 1:
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'cost_factors')}: with noise 'bernoulli' the costs are drawn "
                f"Bernoulli(w) with w = v(a) r and r up to 1, so each factor must lie in [0, 1], got {factors!r}"
            )
        if scale == "unit_interval" and values["score_scale"] != 1:
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'score_scale')}: has no effect with reward_scale "
                f"'unit_interval' (the map onto [0, 1] is scale-free); leave it at 1"
            )
        if scale == "logit" and not values["allow_negative_costs"]:
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'reward_scale')}: 'logit' takes the fitted score "
                f"itself, negative for the reviews the model deems wrong, so expected costs "
                f"w = v(a) r are negative and refund budget (outside Sec. 2's W: C x A -> R+); "
                f"set {key_path(ENVIRONMENT_PARAMS, 'allow_negative_costs')}: true to run this "
                f"variant explicitly"
            )

    @classmethod
    def reward_range(cls, values: Mapping[str, Any]) -> tuple[float, float] | None:
        """``[0, 1]`` for ``unit_interval``; the logit scales follow the oracle's scores (data): none."""
        return (0.0, 1.0) if values["reward_scale"] == "unit_interval" else None

    @classmethod
    def known_facts(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        d = len(CLASSES) * CONTEXT_DIMENSION
        return {"n_arms": len(CLASSES), "dimension": d, "cost_dimension": d}
