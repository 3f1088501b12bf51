"""A seeded random walk over valid configs (issue 38): each case mutates one place of the default grid or of a
paper grid (a value replaced by a wrong type, NaN, infinity, an empty list, unicode, a long or odd label; a
key removed; an unknown key added; a label renamed) and planning must either succeed or refuse with a
:class:`ConfigError` naming a key of the config — never another exception, never a traceback."""

import copy
import math
import random
import re

import pytest

from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.errors import ConfigError
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: cases per config in CI (each one plans the grid once: a few ms to 0.1 s)
CASES = 100
CONFIGS = ["config.yaml", "config/delayed_dueling.yaml", "config/knapsack.yaml", "config/neural_logistic.yaml"]
ODD_VALUES = [
    math.nan, math.inf, -math.inf, -1, 0, 0.5, 2.0, 1e300, -1e-300, True, False, None, "", " ", "abc", "ä",
    "x" * 300, "a\n", "../../etc/passwd", "/tmp", [], [None], [math.nan], [1, 1], {}, {"unknown_key": 1},
    {"name": "nope"}, ["a", "a"], 10**12,
]  # fmt: skip
ODD_LABELS = ["x" * 300, "a\n", " a", "a/b", "", "ä", "-a", "a b", "A" * 101, ".hidden", "con"]


def _places(node, path=()):
    """Every (path, value) of a config, mappings and lists included."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _places(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _places(value, (*path, i))


def _at(config, path):
    for key in path:
        config = config[key]
    return config


def _mutate(config, rng: random.Random) -> str:
    """Change one place of ``config`` in place; return what was done (for the failure message)."""
    places = [(p, v) for p, v in _places(config) if p]
    path, value = rng.choice(places)
    parent, key = _at(config, path[:-1]), path[-1]
    kind = rng.choice(["value", "value", "value", "delete", "unknown", "label"])
    if kind == "delete":
        del parent[key]
    elif kind == "unknown" and isinstance(value, dict):
        value[rng.choice(["unknwon", "Name", "params ", "x" * 50])] = rng.choice(ODD_VALUES)
    elif kind == "label" and isinstance(parent, dict):
        parent[rng.choice(ODD_LABELS)] = parent.pop(key)
    else:
        kind = "value"
        parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return f"{kind} at {'.'.join(map(str, path))}"


def _key_names(node) -> set[str]:
    return {str(p[-1]) for p, _ in _places(node) if p and isinstance(p[-1], str)}


@pytest.mark.parametrize("config_file", CONFIGS)
def test_planning_a_mutated_config_succeeds_or_refuses_naming_a_key(config_file, monkeypatch):
    monkeypatch.chdir(ROOT)
    original = load_config_file(ROOT / config_file)
    rng = random.Random(f"fuzz {config_file}")
    refused = 0
    for case in range(CASES):
        config = copy.deepcopy(original)
        done = _mutate(config, rng)
        try:
            load_grid(config)
        except ConfigError as err:
            refused += 1
            message = str(err)
            assert "Traceback" not in message and message.strip(), (case, done, message)
            keys = _key_names(config) | _key_names(original) | {"<top level>", "override", "claims"}
            named = {k for k in keys if re.search(rf"(^|[\s.'\"(]){re.escape(k)}($|[\s.:'\")\][])", message)}
            assert named, f"case {case} ({done}) refused without naming a key: {message}"
        except Exception as err:  # anything but a ConfigError reaches the user as a traceback
            raise AssertionError(f"case {case} ({done}): {type(err).__name__}: {err}") from err
    assert refused > CASES // 3  # the walk does reach bad inputs
