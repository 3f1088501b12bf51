"""The interface table (``banditbench.interfaces``): each entry names a data-free environment of its kind and
skeletons whose baselines play it, and a new interface is one entry that the conformance checks and
``banditbench new-algorithm`` pick up."""

from __future__ import annotations

import dataclasses
import textwrap
from typing import NamedTuple

import numpy as np
import pytest

from banditbench import registry
from banditbench.api import INTERFACES, NULL, feedback_kinds
from banditbench.cli import main
from banditbench.conformance import check_policy
from banditbench.interfaces import DataFree, Interface, Skeleton
from banditbench.scaffold import families, write


def test_every_interfaces_data_free_environment_gives_its_feedback_on_its_actions():
    for (feedback, action), face in INTERFACES.items():
        env_cls = registry.get("environment", face.environment.name).load()
        assert env_cls.action_kind == action and feedback in feedback_kinds(env_cls)


def test_every_skeletons_baseline_plays_its_interface():
    assert list(families()) == ["dueling", "reward", "logistic", "lipschitz", "knapsack"]
    for key, face in INTERFACES.items():
        for skeleton in face.skeletons.values():
            cls = registry.get("policy", skeleton.baseline).load()
            assert (cls.feedback_kind, cls.action_kind) == key


@pytest.mark.parametrize(
    "key, facts, inside, outside",
    [
        (("reward", "arm"), {"n_arms": 4}, [0, 3, np.int64(2)], [4, -1, True, 1.0, (0, 1)]),
        (("preference", "pair"), {"n_arms": 4}, [(0, 1), [3, 3], np.array([2, 0])], [(0, 4), (0,), 1]),
        (("preference_cost", "pair"), {"n_arms": 4}, [(0, 1), NULL, (-1, -1)], [(0, -1), (4, 0), (0, 1, 2)]),
        (("reward", "point"), {"dimension": 1}, [0.0, 1.0, (0.5,), np.array([0.2])], [1.5, -0.1, (0.2, 0.3)]),
        (("reward", "point"), {"dimension": 2}, [(0.1, 0.9)], [0.5, (0.1, 1.1)]),
    ],
)
def test_each_interface_says_which_actions_lie_in_its_action_space(key, facts, inside, outside):
    valid = INTERFACES[key].valid_action
    assert [a for a in inside if not valid(a, facts)] == []
    assert [a for a in outside if valid(a, facts)] == []


# --- a toy interface: k distinct arms a round, the number of hits among them -------------------------------
KEY = ("count", "subset")


class CountFeedback(NamedTuple):
    """How many of the played arms hit."""

    round: int
    hits: int


def _subset(action, facts) -> bool:
    """``k`` distinct arm indices below ``n_arms``."""
    arms = list(action) if isinstance(action, tuple) else None
    return (
        arms is not None
        and len(set(arms)) == len(arms) == facts["k"]
        and all(isinstance(a, int) and 0 <= a < facts["n_arms"] for a in arms)
    )


#: the skeleton ``new-algorithm --family subsets`` writes
SUBSETS = '''

@register("{name}")
class {cls}(Policy):
    """{title}: the k arms of most hits per play, a random subset with probability eps."""

    feedback_kind = "count"
    action_kind = "subset"

    def __init__(self, problem: Problem, rng: np.random.Generator, *,
                 eps: Annotated[UnitInterval, Doc("Probability of a uniformly random subset.")] = 0.1):
        self.rng, self.eps = rng, eps
        self.n, self.k = int(problem["n_arms"]), int(problem["k"])
        self.hits, self.plays = np.zeros(self.n), np.zeros(self.n)
        self.played: dict[int, list[int]] = {{}}

    def observe(self, t: int, arrived: Sequence) -> None:
        for item in arrived:                          # CountFeedback(round, hits)
            arms = self.played.pop(item.round, None)
            if arms is not None:
                self.hits[arms] += item.hits / self.k
                self.plays[arms] += 1

    def act(self, t: int, context: None) -> tuple[int, ...]:
        if self.rng.random() < self.eps:
            arms = self.rng.choice(self.n, self.k, replace=False)
        else:
            arms = np.argsort(-(self.hits + 1) / (self.plays + 1), kind="stable")[: self.k]
        self.played[t] = [int(a) for a in arms]
        return tuple(self.played[t])
'''

TOY = Interface(
    CountFeedback,
    "None (no context)",
    "a tuple of ``k`` distinct arm indices",
    environment=DataFree("toy_subsets", {"n_arms": 5, "k": 2}, example={"n_arms": 8}),
    valid_action=_subset,
    skeletons={"subsets": Skeleton(SUBSETS, ("Doc", "Policy", "Problem", "UnitInterval", "register"), "random_subset")},
)

#: the toy interface's environment and baseline, a plugin file (its feedback type read from the table)
TOY_PLUGIN = '''
import numpy as np

from banditbench.api import INTERFACES, Environment, Policy, PositiveInt, register

CountFeedback = INTERFACES["count", "subset"].feedback


@register("toy_subsets")
class ToySubsets(Environment):
    """Arms of fixed hit probabilities from 0.1 to 0.9; a round plays k of them."""

    feedback_kind = "count"
    action_kind = "subset"
    metrics = ("regret",)
    primary_metric = "regret"
    has_context = False

    def __init__(self, seed_seq, *, horizon: int, n_arms: PositiveInt = 5, k: PositiveInt = 2):
        self.rng = np.random.default_rng(seed_seq)
        self.k, self.means = k, np.linspace(0.1, 0.9, n_arms)
        self.best = float(np.sort(self.means)[-k:].sum())

    def public_info(self):
        return {"n_arms": len(self.means), "k": self.k}

    def context(self, t):
        return None

    def step(self, t, action):
        means = self.means[list(action)]
        hits = int((self.rng.random(self.k) < means).sum())
        return CountFeedback(t, hits), {"regret": self.best - float(means.sum())}


@register("random_subset")
class RandomSubset(Policy):
    """k distinct arms drawn uniformly."""

    feedback_kind = "count"
    action_kind = "subset"

    def __init__(self, problem, rng):
        self.rng, self.n, self.k = rng, problem["n_arms"], problem["k"]

    def observe(self, t, arrived):
        pass

    def act(self, t, context):
        return tuple(int(a) for a in self.rng.choice(self.n, self.k, replace=False))
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy interface in the table, its environment and baseline registered (a plugin file): the plugin."""
    monkeypatch.setitem(INTERFACES, KEY, TOY)
    plugin = tmp_path / "toy_subsets.py"
    plugin.write_text(textwrap.dedent(TOY_PLUGIN))
    registry.use_plugins([str(plugin)])
    yield plugin
    registry.use_plugins([])


def test_a_new_interface_is_one_entry_that_conformance_and_the_scaffold_pick_up(toy, tmp_path, monkeypatch):
    assert "subsets" in families()
    folder = tmp_path / "mine"
    module, test, config = write("my_subsets", "subsets", folder)
    text = module.read_text()
    assert "from banditbench.api import Doc, Policy, Problem, UnitInterval, register\n" in text
    assert 'class MySubsets(Policy):\n    """my_subsets: the k arms of most hits per play' in text
    assert "name: toy_subsets\n      params:\n        n_arms: 8\n        k: 2\n" in config.read_text()
    assert "random_subset: {policy: random_subset}" in config.read_text()

    registry.use_plugins([str(toy), str(module)])
    outcomes = {o.check: o for o in check_policy("my_subsets", horizon=30)}
    assert [o.line() for o in outcomes.values() if not o.passed] == []
    assert outcomes["actions in the action space"].detail == "30 rounds of subset actions"

    # the check of its actions is the entry's
    monkeypatch.setitem(INTERFACES, KEY, dataclasses.replace(TOY, valid_action=lambda action, facts: len(action) == 3))
    failed = {o.check: o.detail for o in check_policy("my_subsets", horizon=30) if not o.passed}
    assert list(failed) == ["actions in the action space"] and failed[list(failed)[0]].startswith("round 1 played (")


def test_the_command_offers_the_new_interfaces_family(toy, tmp_path, capsys):
    assert main(["new-algorithm", "my_picks", "--family", "subsets", "--dir", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "my_picks.py").is_file()
    with pytest.raises(SystemExit):
        main(["new-algorithm", "my_picks", "--family", "ranking", "--dir", str(tmp_path / "other")])
    assert "knapsack, subsets" in capsys.readouterr().err.replace("'", "")  # the choices, the new one last
