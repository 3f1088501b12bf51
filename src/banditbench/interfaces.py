"""One entry per interface, a policy's (feedback kind, action kind): all that banditbench knows of it, in
:data:`INTERFACES`.

An entry says what the runner hands a policy of the interface and expects back (the contract, shown in
docs/extending.md), the data-free environment every such policy is checked on (:mod:`banditbench.conformance`),
which actions lie in its action space, and the working skeletons ``banditbench new-algorithm`` writes for it
(:mod:`banditbench.scaffold`).  A new interface is one more entry, with its environment (docs/extending.md,
"Adding an interface").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from .feedback import PreferenceCostFeedback, PreferenceFeedback, RewardCostFeedback, RewardFeedback

#: the null action of pair action spaces: skip the round (no reward, no cost, no feedback;
#: the knapsack problems of seed 004, Sec. 2)
NULL = (-1, -1)


@dataclass(frozen=True)
class DataFree:
    """A registered environment that needs no data, with the parameters and budget (None: none) the
    conformance checks run it with (a few dozen rounds); ``example`` (parameters over ``params``) and
    ``example_budget`` (None: ``budget``) size a skeleton's example grid (thousands of rounds)."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    budget: float | None = None
    example: Mapping[str, Any] = field(default_factory=dict)
    example_budget: float | None = None


@dataclass(frozen=True)
class Skeleton:
    """A small, honest policy of one interface that ``banditbench new-algorithm --family <name>`` writes, to be
    replaced by the user's."""

    #: the policy class: a ``str.format`` template of ``name`` (registered name), ``cls`` and ``title``
    code: str
    #: the names it imports from :mod:`banditbench.api`
    imports: tuple[str, ...]
    #: the built-in policy its example grid runs it against
    baseline: str
    #: module-level code the class uses, written above it
    helpers: str = ""


@dataclass(frozen=True)
class Interface:
    """What the runner guarantees a policy of one (feedback kind, action kind), what it expects back, and how
    such a policy is checked and started."""

    #: the feedback item type :meth:`~banditbench.api.Policy.observe` receives (a named tuple; every item has
    #: ``round``)
    feedback: type
    #: what :meth:`~banditbench.api.Policy.act` is handed each round
    context: str
    #: what :meth:`~banditbench.api.Policy.act` returns
    action: str
    #: the data-free environment a policy of this interface is checked on, and its skeletons' example grid
    environment: DataFree
    #: ``valid_action(action, facts)``: whether ``action`` lies in the action space of an environment whose
    #: public facts are ``facts`` (``Environment.public_info()``)
    valid_action: Callable[[Any, Mapping[str, Any]], bool]
    #: the skeletons of ``banditbench new-algorithm``, by family name (none: the command offers no family)
    skeletons: Mapping[str, Skeleton] = field(default_factory=dict)


def _arm(action: Any, facts: Mapping[str, Any]) -> bool:
    """An arm index below ``n_arms``."""
    return isinstance(action, (int, np.integer)) and not isinstance(action, bool) and 0 <= int(action) < facts["n_arms"]


def _pair_or_null(action: Any, facts: Mapping[str, Any]) -> bool:
    """A pair of arm indices, or :data:`NULL`."""
    pair = tuple(action) if isinstance(action, (tuple, list, np.ndarray)) else None
    if pair is None or len(pair) != 2:
        return False
    return all(_arm(a, facts) for a in pair) or tuple(int(a) for a in pair) == NULL


def _point(action: Any, facts: Mapping[str, Any]) -> bool:
    """A point of the unit cube of ``dimension`` coordinates (a number in one dimension)."""
    x = np.atleast_1d(np.asarray(action, dtype=float))
    return x.shape == (facts["dimension"],) and bool(np.all((x >= 0) & (x <= 1)))


# --- the skeletons' code ------------------------------------------------------------
_RIDGE = '''

class _Ridge:
    """Ridge regression of targets on feature vectors, its inverse Gram matrix kept by Sherman–Morrison."""

    def __init__(self, dimension: int, lam: float):
        self.v_inv = np.eye(dimension) / lam
        self.b = np.zeros(dimension)
        self.theta = np.zeros(dimension)

    def add(self, x: np.ndarray, target: float) -> None:
        vx = self.v_inv @ x
        self.v_inv -= np.outer(vx, vx) / (1.0 + x @ vx)
        self.b += target * x
        self.theta = self.v_inv @ self.b
'''

_DUELING = '''

@register("{name}")
class {cls}(Policy):
    """{title}: ε-greedy duels on a ridge estimate of a linear utility (a skeleton to replace)."""

    feedback_kind = "preference"
    action_kind = "pair"

    def __init__(self, problem: Problem, rng: np.random.Generator, *,
                 eps: Annotated[UnitInterval, Doc("Probability of a uniformly random second arm.")] = 0.1,
                 lam: Annotated[Positive, Doc("Ridge regularisation of the utility estimate.")] = 1.0):
        self.rng, self.eps = rng, eps
        self.model = _Ridge(int(problem["dimension"]), lam)
        self.pending: dict[int, np.ndarray] = {{}}     # round -> x_first - x_second, until its outcome arrives

    def observe(self, t: int, arrived: Sequence) -> None:
        for item in arrived:                          # PreferenceFeedback(round, y): y = 1 if the first arm won
            diff = self.pending.pop(item.round, None)
            if diff is not None:
                self.model.add(diff, item.y - 0.5)

    def act(self, t: int, arms: np.ndarray) -> tuple[int, int]:
        scores = arms @ self.model.theta
        first = int(np.argmax(scores))
        if self.rng.random() < self.eps:
            second = int(self.rng.choice([a for a in range(len(arms)) if a != first]))
        else:
            second = int(np.argsort(scores)[-2])
        self.pending[t] = arms[first] - arms[second]
        return first, second
'''

_REWARD = '''

@register("{name}")
class {cls}(Policy):
    """{title}: ε-greedy on a ridge regression of rewards on arm features (a skeleton to replace)."""

    feedback_kind = "reward"
    action_kind = "arm"

    def __init__(self, problem: Problem, rng: np.random.Generator, *,
                 eps: Annotated[UnitInterval, Doc("Probability of a uniformly random arm.")] = 0.1,
                 lam: Annotated[Positive, Doc("Ridge regularisation of the reward model.")] = 1.0):
        self.rng, self.eps = rng, eps
        self.model = _Ridge(int(problem["dimension"]), lam)
        self.pending: dict[int, np.ndarray] = {{}}     # round -> features of the arm played, until its reward arrives

    def observe(self, t: int, arrived: Sequence) -> None:
        for item in arrived:                          # RewardFeedback(round, reward)
            x = self.pending.pop(item.round, None)
            if x is not None:
                self.model.add(x, item.reward)

    def act(self, t: int, arms: np.ndarray) -> int:
        if self.rng.random() < self.eps:
            arm = int(self.rng.integers(len(arms)))
        else:
            arm = int(np.argmax(arms @ self.model.theta))
        self.pending[t] = arms[arm]
        return arm
'''

_LOGISTIC = '''

@register("{name}")
class {cls}(Policy):
    """{title}: ε-greedy on an online logistic-regression estimate (a skeleton to replace)."""

    feedback_kind = "reward"
    action_kind = "arm"

    def __init__(self, problem: Problem, rng: np.random.Generator, *,
                 eps: Annotated[UnitInterval, Doc("Probability of a uniformly random arm.")] = 0.1,
                 step: Annotated[Positive, Doc("Step size of the online gradient step on the log-loss.")] = 0.5):
        self.rng, self.eps, self.step = rng, eps, step
        self.theta = np.zeros(int(problem["dimension"]))
        self.pending: dict[int, np.ndarray] = {{}}     # round -> features of the arm played, until its reward arrives

    def observe(self, t: int, arrived: Sequence) -> None:
        for item in arrived:                          # RewardFeedback(round, reward), a reward in {{0, 1}}
            x = self.pending.pop(item.round, None)
            if x is not None:
                mean = 1.0 / (1.0 + np.exp(-(x @ self.theta)))
                self.theta += self.step * (item.reward - mean) * x

    def act(self, t: int, arms: np.ndarray) -> int:
        if self.rng.random() < self.eps:
            arm = int(self.rng.integers(len(arms)))
        else:
            arm = int(np.argmax(arms @ self.theta))
        self.pending[t] = arms[arm]
        return arm
'''

_LIPSCHITZ = '''

@register("{name}")
class {cls}(Policy):
    """{title}: UCB1 over a uniform grid of the unit cube (a skeleton to replace)."""

    feedback_kind = "reward"
    action_kind = "point"

    def __init__(self, problem: Problem, rng: np.random.Generator, *,
                 points_per_axis: Annotated[int, Range(ge=2, le=64), Doc("Grid points along each axis.")] = 8,
                 bonus: Annotated[Positive, Doc("Scale of the UCB1 exploration bonus.")] = 1.0):
        self.dimension = int(problem["dimension"])
        axis = (np.arange(points_per_axis) + 0.5) / points_per_axis
        self.grid = np.stack(np.meshgrid(*[axis] * self.dimension, indexing="ij"), axis=-1).reshape(-1, self.dimension)
        self.bonus = bonus
        self.count = np.zeros(len(self.grid))
        self.total = np.zeros(len(self.grid))
        self.played: dict[int, int] = {{}}           # round -> grid index, until its reward arrives

    def observe(self, t: int, arrived: Sequence) -> None:
        for item in arrived:                          # RewardFeedback(round, reward)
            cell = self.played.pop(item.round, None)
            if cell is not None:
                self.count[cell] += 1
                self.total[cell] += item.reward

    def act(self, t: int, context: None) -> float | tuple[float, ...]:
        unseen = np.flatnonzero(self.count == 0)
        if len(unseen):
            cell = int(unseen[0])
        else:
            ucb = self.total / self.count + self.bonus * np.sqrt(2 * np.log(t) / self.count)
            cell = int(np.argmax(ucb))
        self.played[t] = cell
        point = tuple(float(c) for c in self.grid[cell])
        return point[0] if self.dimension == 1 else point
'''

_KNAPSACK = '''

@register("{name}")
class {cls}(Policy):
    """{title}: ε-greedy duels on a ridge estimate of the reward utility, the null action once the budget
    is spent (a skeleton to replace: it does not pace the budget)."""

    feedback_kind = "preference_cost"
    action_kind = "pair"

    def __init__(self, problem: Problem, rng: np.random.Generator, *,
                 eps: Annotated[UnitInterval, Doc("Probability of a uniformly random second arm.")] = 0.1,
                 lam: Annotated[Positive, Doc("Ridge regularisation of the utility estimate.")] = 1.0):
        self.rng, self.eps = rng, eps
        self.model = _Ridge(int(problem["dimension"]), lam)
        self.pending: dict[int, np.ndarray] = {{}}     # round -> phi_first - phi_second, until its outcome arrives

    def observe(self, t: int, arrived: Sequence) -> None:
        for item in arrived:                          # PreferenceCostFeedback(round, y, costs)
            diff = self.pending.pop(item.round, None)
            if diff is not None:
                self.model.add(diff, item.y - 0.5)

    def act(self, t: int, context) -> tuple[int, int]:
        if context.stopped:                           # KnapsackContext(phi, psi, stopped)
            return NULL
        scores = context.phi @ self.model.theta
        first = int(np.argmax(scores))
        if self.rng.random() < self.eps:
            second = int(self.rng.choice([a for a in range(len(scores)) if a != first]))
        else:
            second = int(np.argsort(scores)[-2])
        self.pending[t] = context.phi[first] - context.phi[second]
        return first, second
'''


_ARMS = (
    "the round's arms: an array (K, d), one feature row per arm (environments with block arms also offer "
    "the ``row`` context form: the round's classification row, K from ``problem['n_arms']``)"
)
_KNAPSACK_CONTEXT = (
    "a ``KnapsackContext`` (``banditbench.envs.knapsack``): ``phi`` (K, d) reward features and ``psi`` "
    "(K, d_w) cost features of every arm, ``stopped``: whether the budget is spent (read-only arrays)"
)
_DUEL = "a duel ``(i, j)`` of arm indices, or :data:`NULL` to skip the round (no reward, cost or feedback)"
#: what a skeleton imports from banditbench.api (the Lipschitz one bounds an integer with Range)
_IMPORTS = ("Doc", "Policy", "Positive", "Problem", "UnitInterval", "register")
_IMPORTS_RANGE = ("Doc", "Policy", "Positive", "Problem", "Range", "register")
_ARM_ENVIRONMENT = {"dimension": 3, "n_arms": 4}
_ARM_EXAMPLE = {"dimension": 5, "n_arms": 10}
_KNAPSACK_ENVIRONMENT = DataFree("pbbwk_synthetic", budget=10.0, example_budget=300.0)

#: per ``(feedback_kind, action_kind)`` of a policy: the runner's side of the contract, and how a policy of
#: that kind is checked and started.  The facts of ``Problem.info`` are the environment's ``public_info()``:
#: ``dimension`` and ``n_arms`` always where there are arms, ``budget`` and ``per_round_budget`` with a budget.
#: Feedback arrives when the delay model says (late, or never when a window cuts it off), each item naming the
#: round whose action produced it.
INTERFACES: dict[tuple[str, str], Interface] = {
    ("preference", "pair"): Interface(
        PreferenceFeedback,
        _ARMS,
        "a pair ``(i, j)`` of arm indices (``y = 1``: i won)",
        environment=DataFree("synthetic_dueling", _ARM_ENVIRONMENT, example=_ARM_EXAMPLE),
        valid_action=_pair_or_null,
        skeletons={"dueling": Skeleton(_DUELING, _IMPORTS, "random_pair", _RIDGE)},
    ),
    ("reward", "arm"): Interface(
        RewardFeedback,
        _ARMS,
        "an arm index",
        environment=DataFree("synthetic_logistic", _ARM_ENVIRONMENT, example=_ARM_EXAMPLE),
        valid_action=_arm,
        skeletons={
            "reward": Skeleton(_REWARD, _IMPORTS, "linucb", _RIDGE),
            "logistic": Skeleton(_LOGISTIC, _IMPORTS, "random_arm"),
        },
    ),
    ("reward", "point"): Interface(
        RewardFeedback,
        "None (no context)",
        "a point of [0, 1]^d: a tuple of d floats (a float when d = 1)",
        environment=DataFree("lipschitz", {"function": "triangle", "noise_sigma": 0.1}),
        valid_action=_point,
        skeletons={"lipschitz": Skeleton(_LIPSCHITZ, _IMPORTS_RANGE, "delayed_zooming")},
    ),
    ("preference_cost", "pair"): Interface(
        PreferenceCostFeedback,
        _KNAPSACK_CONTEXT,
        _DUEL,
        environment=_KNAPSACK_ENVIRONMENT,
        valid_action=_pair_or_null,
        skeletons={"knapsack": Skeleton(_KNAPSACK, ("NULL", *_IMPORTS), "pblincbwk_alg1", _RIDGE)},
    ),
    ("reward_cost", "pair"): Interface(
        RewardCostFeedback,
        _KNAPSACK_CONTEXT,
        _DUEL,
        environment=_KNAPSACK_ENVIRONMENT,
        valid_action=_pair_or_null,
    ),
}
