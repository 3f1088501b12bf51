"""``banditbench new-algorithm``: a working skeleton of a policy in your own folder, with its test and a
config that runs it against a built-in baseline.

The families are the skeletons the interfaces declare (``Interface.skeletons`` of
:data:`banditbench.interfaces.INTERFACES`), each a small, honest algorithm of its interface (the context it
is handed, the action it returns, the feedback it learns from), written to be replaced by yours:

* ``dueling`` — ε-greedy duels on a ridge estimate of a linear utility fitted to the duel outcomes;
* ``reward`` — ε-greedy on a ridge regression of rewards on arm features (Sherman–Morrison updates);
* ``logistic`` — ε-greedy on an online logistic-regression estimate (one gradient step per reward);
* ``lipschitz`` — UCB1 over a uniform grid of the unit cube;
* ``knapsack`` — the dueling skeleton on the reward features, playing the null action once stopped.

Its example grid runs on the interface's data-free environment (``Interface.environment``, at its example
size).  Every skeleton passes the conformance checks (:mod:`banditbench.conformance`); its test says so.
"""

from __future__ import annotations

import json
import keyword
import re
import shlex
import unicodedata
from pathlib import Path

from .errors import ConfigError
from .interfaces import INTERFACES, Interface, Skeleton
from .storage.resultio import budget_label


def families() -> dict[str, tuple[Interface, Skeleton]]:
    """Every skeleton of :data:`~banditbench.interfaces.INTERFACES`, by family name, with its interface."""
    return {family: (face, skeleton) for face in INTERFACES.values() for family, skeleton in face.skeletons.items()}


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
'''

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


#: names every skeleton's module imports besides those from banditbench.api (:attr:`Skeleton.imports`)
_HEADER_NAMES = ("Annotated", "Sequence")
#: the longest name: it labels the example config's experiment and algorithm (at most 100 characters each)
NAME_MAX = 100


def class_name(name: str) -> str:
    """The skeleton's class name: ``my_duel`` -> ``MyDuel`` (``MyDuelPolicy`` where that would be a keyword
    such as ``None``, or hide a name the module uses)."""
    cls = "".join(part.capitalize() for part in name.split("_") if part) or "Policy"
    used = {*_HEADER_NAMES, *(n for _, skeleton in families().values() for n in skeleton.imports)}
    return f"{cls}Policy" if keyword.iskeyword(cls) or cls in used else cls


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
    if family not in families():
        raise ConfigError(f"--family: {family!r} is not one of {list(families())}")
    _check_name(name)
    paths = {"module": folder / f"{name}.py", "test": folder / f"test_{name}.py", "config": folder / f"{name}.yaml"}
    existing = [str(p) for p in paths.values() if p.exists()]
    if existing:
        raise ConfigError(f"new-algorithm: {existing[0]} exists; not overwritten")
    _folder(folder)
    face, skeleton = families()[family]
    environment = face.environment
    env_params = {**environment.params, **environment.example}
    budget = environment.budget if environment.example_budget is None else environment.example_budget
    module = _HEADER.format(
        title=name,
        family=family,
        imports=", ".join(skeleton.imports),
        test=_doc(shlex.quote(str(paths["test"]))),
        file=_doc(shlex.quote(str(paths["module"]))),
        config=_doc(shlex.quote(str(paths["config"]))),
    )
    module += skeleton.helpers + skeleton.code.format(name=name, cls=class_name(name), title=name)
    params = "".join(f"\n        {k}: {v}" for k, v in env_params.items())
    config = _CONFIG.format(
        name=name,
        baseline=skeleton.baseline,
        environment=environment.name,
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
