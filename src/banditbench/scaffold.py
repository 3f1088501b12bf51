"""``banditbench new-algorithm``: a working skeleton of a policy in your own folder, with its test and a
config that runs it against a built-in baseline.

Each family's skeleton is a small, honest algorithm of that family's interface (the context it is
handed, the action it returns, the feedback it learns from), written to be replaced by yours:

* ``dueling`` — ε-greedy duels on a ridge estimate of a linear utility fitted to the duel outcomes;
* ``reward`` — ε-greedy on a ridge regression of rewards on arm features (Sherman–Morrison updates);
* ``logistic`` — ε-greedy on an online logistic-regression estimate (one gradient step per reward);
* ``lipschitz`` — UCB1 over a uniform grid of the unit cube;
* ``knapsack`` — the dueling skeleton on the reward features, playing the null action once stopped.

Every skeleton passes the conformance checks (:mod:`banditbench.conformance`); its test says so.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from .errors import ConfigError
from .storage.resultio import budget_label

#: per family: the data-free environment, its params, the budget (None: none), a built-in baseline
FAMILIES = {
    "dueling": ("synthetic_dueling", {"dimension": 5, "n_arms": 10}, None, "random_pair"),
    "reward": ("synthetic_logistic", {"dimension": 5, "n_arms": 10}, None, "linucb"),
    "logistic": ("synthetic_logistic", {"dimension": 5, "n_arms": 10}, None, "random_arm"),
    "lipschitz": ("lipschitz", {"function": "triangle", "noise_sigma": 0.1}, None, "delayed_zooming"),
    "knapsack": ("pbbwk_synthetic", {}, 300.0, "pblincbwk_alg1"),
}

_HEADER = '''"""{title} — a banditbench plugin written by ``banditbench new-algorithm`` ({family} family).

Replace the method with yours; keep the interface (banditbench.api.Policy): ``observe`` takes the
feedback that arrived at the start of a round (late, or never: each item names its own round), ``act``
returns the round's action.  Run its checks with ``pytest {test}``, list it with
``banditbench list policies --plugins {file}``, and run the example grid with
``snakemake --cores 2 --configfile {config}`` from the banditbench checkout.
"""

from __future__ import annotations

from typing import Annotated, Sequence

import numpy as np

from banditbench.api import {imports}
from banditbench.configuration.params import Doc, Positive, UnitInterval
'''

_RIDGE_HELPERS = '''

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

_BODIES = {
    "dueling": (_DUELING, True),
    "reward": (_REWARD, True),
    "logistic": (_LOGISTIC, False),
    "lipschitz": (_LIPSCHITZ, False),
    "knapsack": (_KNAPSACK, True),
}

_TEST = '''"""Checks of the {name} plugin (written by ``banditbench new-algorithm``): run with ``pytest {test}``."""

from pathlib import Path

import numpy as np

from banditbench import registry
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.conformance import check_policy
from banditbench.simulation.runner import run_cell

HERE = Path(__file__).resolve().parent
PLUGIN = str(HERE / "{file}")


def test_{name}_passes_the_conformance_checks():
    registry.use_plugins([PLUGIN])
    failed = [outcome.line() for outcome in check_policy("{name}") if not outcome.passed]
    assert not failed, "\\n".join(failed)


def test_{name}_runs_in_its_example_grid():
    config = load_config_file(HERE / "{config}")
    grid = load_grid({{**config, "plugins": [PLUGIN], "horizon": 200, "seeds": 2}})
    series, meta, _ = run_cell(grid.cell("{name}", "{name}", "none", "{budget}", 0))
    assert all(values.shape == (200,) and np.all(np.isfinite(values)) for values in series.values())
'''

_CONFIG = """# An example grid for the {name} plugin (written by `banditbench new-algorithm`): it runs against the
# built-in {baseline} on banditbench's data-free {environment} environment, with and without delays.
# Run from the banditbench checkout:  snakemake --cores 2 --configfile {config_path}
# (`plugins:` takes absolute paths, paths relative to the working directory, or module names.)
plugins: [{plugin_path}]
experiments:
  {name}:
    environment:
      name: {environment}{env_params}
    horizon: 2000
    seeds: 5
    table_horizons: [500, 1000, 2000]{budgets}
    algorithms:
      {name}: {{policy: {name}}}
      {baseline}: {{policy: {baseline}}}
    delays:
      none: {{kind: none}}
      geometric_mean20: {{kind: geometric, mean: 20}}
"""


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_") if part) or "Policy"


def write(name: str, family: str, folder: Path) -> list[Path]:
    """Write ``<name>.py``, ``test_<name>.py`` and ``<name>.yaml`` into ``folder``; refuse to overwrite."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise ConfigError(
            f"new-algorithm: {name!r} is not a usable name (lower case letters, digits and _, starting with a letter)"
        )
    if family not in FAMILIES:
        raise ConfigError(f"--family: {family!r} is not one of {list(FAMILIES)}")
    from . import registry

    if name in registry.policies():
        raise ConfigError(
            f"new-algorithm: {name!r} is already a registered policy ({registry.policies()[name].origin})"
        )
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"module": folder / f"{name}.py", "test": folder / f"test_{name}.py", "config": folder / f"{name}.yaml"}
    existing = [str(p) for p in paths.values() if p.exists()]
    if existing:
        raise ConfigError(f"new-algorithm: {existing[0]} exists; not overwritten")
    environment, env_params, budget, baseline = FAMILIES[family]
    body, ridge = _BODIES[family]
    imports = ", ".join(["NULL"] * (family == "knapsack") + ["Policy", "Problem", "register"])
    module = _HEADER.format(
        title=name, family=family, imports=imports, test=paths["test"], file=paths["module"], config=paths["config"]
    )
    if family == "lipschitz":
        module = module.replace("import Doc, Positive, UnitInterval", "import Doc, Positive, Range")
    module += (_RIDGE_HELPERS if ridge else "") + body.format(name=name, cls=class_name(name), title=name)
    params = "".join(f"\n        {k}: {v}" for k, v in env_params.items())
    config = _CONFIG.format(
        name=name,
        baseline=baseline,
        environment=environment,
        config_path=paths["config"],
        plugin_path=paths["module"].resolve(),
        env_params=f"\n      params:{params}" if params else "",
        budgets=f"\n    budgets: [{budget:g}]" if budget else "",
    )
    test = _TEST.format(
        name=name,
        test=paths["test"],
        file=paths["module"].name,
        config=paths["config"].name,
        budget=budget_label(budget),
    )
    for key, text in (("module", module), ("test", test), ("config", config)):
        paths[key].write_text(text)
    return list(paths.values())
