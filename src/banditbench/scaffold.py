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

import json
import keyword
import re
import shlex
import unicodedata
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
from banditbench.simulation.job import run_cell

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


#: names the skeleton's module itself uses: a class of one of these names would hide it
_SKELETON_NAMES = frozenset({"Annotated", "Sequence", "Policy", "Problem", "Doc", "Positive", "UnitInterval", "Range"})
#: the longest name: it labels the example config's experiment and algorithm (at most 100 characters each)
NAME_MAX = 100


def class_name(name: str) -> str:
    """The skeleton's class name: ``my_duel`` -> ``MyDuel`` (``MyDuelPolicy`` where that would be a keyword
    such as ``None``, or hide a name the module uses)."""
    cls = "".join(part.capitalize() for part in name.split("_") if part) or "Policy"
    return f"{cls}Policy" if keyword.iskeyword(cls) or cls in _SKELETON_NAMES else cls


#: what a usable name is
_NAME_RULE = "a name is lower-case letters, digits and _, starting with a letter"


def _name_problem(name: str) -> str | None:
    """What makes ``name`` unusable as a plugin's registered name and module name, in words (None: nothing)."""
    if not name:
        return f"it is empty ({_NAME_RULE})"
    if len(name) > NAME_MAX:
        return f"it is {len(name)} characters long, more than {NAME_MAX} (it labels the example config's experiment)"
    if keyword.iskeyword(name):
        return f"it is a Python keyword (e.g. 'my_{name}')"
    if name == "conftest":
        return "pytest reads a file conftest.py as its own configuration"
    bad = sorted({c for c in name if not (c.isascii() and (c.islower() or c.isdigit() or c == "_"))})
    problem = (
        "it has upper-case letters"
        if any(c.isupper() for c in bad)
        else f"it holds {', '.join(map(repr, bad))}"
        if bad
        else f"it starts with {name[0]!r}, not with a letter"
        if not name[0].isalpha()
        else None
    )
    if problem is None:
        return None
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    suggestion = re.sub(r"[^a-z0-9_]+", "_", ascii_name).lstrip("_0123456789")
    usable = suggestion and not keyword.iskeyword(suggestion) and len(suggestion) <= NAME_MAX
    return f"{problem} ({_NAME_RULE}{f', e.g. {suggestion!r}' if usable else ''})"


def _shadowed_module(name: str) -> str | None:
    """The module that a file ``<name>.py`` next to the skeleton's test would hide (None: none)."""
    import importlib.util
    import sys

    if name in sys.stdlib_module_names:
        return "the standard library's"
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return None if spec is None else f"the installed ({spec.origin or 'namespace package'})"


def _check_name(name: str) -> None:
    problem = _name_problem(name)
    if problem:
        raise ConfigError(f"new-algorithm: {name!r} is not a usable name: {problem}")
    from . import registry

    if name in registry.policies():
        raise ConfigError(
            f"new-algorithm: {name!r} is already a registered policy ({registry.policies()[name].origin})"
        )
    module = _shadowed_module(name)
    if module:
        raise ConfigError(
            f"new-algorithm: {name!r} is the name of {module} module {name!r}, which a file {name}.py beside the "
            f"skeleton's test would hide; choose another name"
        )
    from .configuration.runs import run_name

    try:
        run_name({}, [f"{name}.yaml"], {})  # the example config's run is named after its file
    except ConfigError as err:
        raise ConfigError(f"new-algorithm: {name!r} cannot name the example config {name}.yaml: {err}") from None


def _folder(folder: Path) -> Path:
    """``folder``, created with its parents; a path that cannot be one is one line naming it."""
    if any(not c.isprintable() for c in str(folder)):
        raise ConfigError(f"--dir: {str(folder)!r} holds a control character (a line break?); give a plain path")
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"--dir: {folder} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        above = next((p for p in folder.parents if p.exists()), None)
        why = f"{above} is a file, not a folder" if above is not None and not above.is_dir() else err.strerror
        raise ConfigError(f"--dir: cannot create the folder {folder}: {why}") from None
    return folder


def _doc(text: object) -> str:
    """``text`` as it may stand inside a docstring (its backslashes and double quotes escaped)."""
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def write(name: str, family: str, folder: Path) -> list[Path]:
    """Write ``<name>.py``, ``test_<name>.py`` and ``<name>.yaml`` into ``folder``; refuse to overwrite.  A name or
    folder that cannot be used is a :class:`ConfigError` of one line naming the problem."""
    if family not in FAMILIES:
        raise ConfigError(f"--family: {family!r} is not one of {list(FAMILIES)}")
    _check_name(name)
    paths = {"module": folder / f"{name}.py", "test": folder / f"test_{name}.py", "config": folder / f"{name}.yaml"}
    existing = [str(p) for p in paths.values() if p.exists()]
    if existing:
        raise ConfigError(f"new-algorithm: {existing[0]} exists; not overwritten")
    _folder(folder)
    environment, env_params, budget, baseline = FAMILIES[family]
    body, ridge = _BODIES[family]
    imports = ", ".join(["NULL"] * (family == "knapsack") + ["Policy", "Problem", "register"])
    module = _HEADER.format(
        title=name,
        family=family,
        imports=imports,
        test=_doc(shlex.quote(str(paths["test"]))),
        file=_doc(shlex.quote(str(paths["module"]))),
        config=_doc(shlex.quote(str(paths["config"]))),
    )
    if family == "lipschitz":
        module = module.replace("import Doc, Positive, UnitInterval", "import Doc, Positive, Range")
    module += (_RIDGE_HELPERS if ridge else "") + body.format(name=name, cls=class_name(name), title=name)
    params = "".join(f"\n        {k}: {v}" for k, v in env_params.items())
    config = _CONFIG.format(
        name=name,
        baseline=baseline,
        environment=environment,
        config_path=shlex.quote(str(paths["config"])),
        plugin_path=json.dumps(str(paths["module"].resolve())),  # a JSON string is a YAML string
        env_params=f"\n      params:{params}" if params else "",
        budgets=f"\n    budgets: [{budget:g}]" if budget else "",
    )
    test = _TEST.format(
        name=name,
        test=_doc(shlex.quote(str(paths["test"]))),
        file=paths["module"].name,
        config=paths["config"].name,
        budget=budget_label(budget),
    )
    written = []
    try:
        for key, text in (("module", module), ("test", test), ("config", config)):
            paths[key].write_text(text)
            written.append(paths[key])
    except OSError as err:
        for path in written:  # nothing half-written is left behind
            path.unlink(missing_ok=True)
        raise ConfigError(f"--dir: cannot write {paths[key]}: {err.strerror or err}") from None
    return list(paths.values())
