"""The conformance suite (``banditbench.conformance``, ``banditbench check``): every registered
algorithm passes it, and each check fails on a policy that breaks what it checks."""

from __future__ import annotations

from typing import Annotated

import numpy as np
import pytest

from banditbench import registry
from banditbench.api import INTERFACES, BatchedPolicy, Policy, SeedBatched
from banditbench.cli import main
from banditbench.conformance import DESCRIBED, RANGES, bad_values, check_policy
from banditbench.params import Doc, Positive
from banditbench.policies.lipschitz import DelayedZooming
from banditbench.policies.neural.logistic import NeuralLogUCB1


@pytest.mark.parametrize("policy", sorted(registry.policies()))
def test_every_registered_algorithm_passes_the_conformance_checks(policy):
    outcomes = check_policy(policy, horizon=30)
    assert [o.line() for o in outcomes if not o.passed] == []
    names = {o.check for o in outcomes}
    assert {
        "same seed, same bytes",
        "actions in the action space",
        "late and lost feedback",
        "bad parameters refused",
        DESCRIBED,
        RANGES,
    } <= names
    cls = registry.get("policy", policy).load()
    assert ("a seed's result does not depend on its block" in names) == ("seed-batched" in cls.engines)
    assert ("engine matches the reference" in names) == bool(cls.engines)


class _Dueller(Policy):
    """A valid dueling policy (random distinct pairs from its own stream); the broken ones below change
    one thing each."""

    feedback_kind, action_kind = "preference", "pair"

    def __init__(self, problem, rng, *, lam: Annotated[Positive, Doc("unused regularisation")] = 1.0):
        self.rng, self.n = rng, problem.info["n_arms"]

    def observe(self, t, arrived):
        pass

    def act(self, t, context):
        i, j = self.rng.choice(self.n, size=2, replace=False)
        return int(i), int(j)


class _ClockSeeded(_Dueller):
    def act(self, t, context):
        i, j = np.random.default_rng().choice(self.n, size=2, replace=False)  # fresh OS entropy
        return int(i), int(j)


class _OffByOne(_Dueller):
    def act(self, t, context):
        return self.n, 0  # arm n does not exist


class _ExpectsPromptFeedback(_Dueller):
    def observe(self, t, arrived):
        if any(item.round != t - 1 for item in arrived):
            raise RuntimeError(f"round {t}: feedback of an earlier round")


class _Unannotated(_Dueller):
    def __init__(self, problem, rng, *, lam=1.0):
        super().__init__(problem, rng)


class _Undescribed(_Dueller):
    def __init__(self, problem, rng, *, lam: Positive = 1.0, beta: Annotated[Positive, Doc(" ")] = 1.0):
        super().__init__(problem, rng)


class _BlockSized(BatchedPolicy):
    """Plays arm ``block size`` against arm 0: a seed's actions depend on its block."""

    def __init__(self, policies):
        self.size = len(policies)

    def observe_all(self, t, arrived):
        pass

    def act_all(self, t, contexts):
        return [(self.size, 0)] * self.size


class _Batched(_Dueller):
    engines = {"seed-batched": SeedBatched()}

    @classmethod
    def batch(cls, policies):
        return _BlockSized(policies)


class _Shifted(BatchedPolicy):
    """A seed-batched engine whose arms from round 5 on are the real engine's shifted by one."""

    def __init__(self, engine):
        self.engine, self.n = engine, INTERFACES["reward", "arm"].environment.params["n_arms"]

    def observe_all(self, t, arrived):
        self.engine.observe_all(t, arrived)

    def act_all(self, t, contexts):
        arms = self.engine.act_all(t, contexts)
        return arms if t < 5 else [(int(a) + 1) % self.n for a in arms]


class _ShiftedEngine(NeuralLogUCB1):
    @classmethod
    def batch(cls, policies):
        return _Shifted(super().batch(policies))


class _CompiledDeclines(DelayedZooming):
    """A subclass, which the compiled engine declines to play (it may change any step)."""


class _CompiledExtraDraw(DelayedZooming):
    def _compiled_step(self, env, cls, fresh, horizon):
        self.rng.random()  # a draw the Python loop does not make
        return env.compiled_step()


@pytest.fixture
def broken(monkeypatch):
    """``broken(cls)``: the name under which ``cls`` is registered for this test."""
    real = registry.get

    class Entry:
        plugin = None

        def __init__(self, cls):
            self.cls = cls

        def load(self):
            return self.cls

    fakes = {}

    def get(kind, name, where=None):
        return Entry(fakes[name]) if kind == "policy" and name in fakes else real(kind, name, where)

    monkeypatch.setattr(registry, "get", get)

    def register(cls):
        fakes[cls.__name__] = cls
        return cls.__name__

    return register


def _failed(policy):
    return {o.check: o.detail for o in check_policy(policy, horizon=20) if not o.passed}


def test_a_valid_policy_passes(broken):
    assert _failed(broken(_Dueller)) == {}


@pytest.mark.parametrize(
    "cls, check, detail",
    [
        (_ClockSeeded, "same seed, same bytes", "differ"),
        (_OffByOne, "actions in the action space", "round 1 played (4, 0)"),
        (_ExpectsPromptFeedback, "late and lost feedback", "RuntimeError: round"),
        (_Unannotated, "bad parameters refused", "lam declares no type"),
        (_Undescribed, DESCRIBED, "lam has no description; beta has no description"),
        (_Batched, "a seed's result does not depend on its block", "differ"),
        (_ShiftedEngine, "engine matches the reference", "actions agree in 4, 4, 4, 4, 4, 4 of 20 rounds"),
        (_CompiledExtraDraw, "engine matches the reference", "differ from the Python loop's"),
        (_CompiledDeclines, "engine matches the reference", "the compiled engine declined the run"),
    ],
)
def test_each_check_fails_on_the_policy_that_breaks_it(broken, cls, check, detail):
    failed = _failed(broken(cls))
    assert check in failed and detail in failed[check]
    if cls not in (_Batched, _OffByOne):  # (the environment cannot play a missing arm in any run)
        # the other checks still pass (an unannotated parameter has no description either)
        assert list(failed) == [check] + ([DESCRIBED] if cls is _Unannotated else [])


def test_a_metric_outside_the_environments_declared_range_fails_the_check(broken, monkeypatch):
    """The environment, not the policy, keeps the metrics: an environment whose declared range is narrower than what
    it records fails every policy's run on it, naming the metric and round."""
    from banditbench.envs.dueling import SyntheticDueling

    narrow = {"regret": (0.0, 1e-3), "self_duel": (0.0, 1.0)}
    monkeypatch.setattr(SyntheticDueling, "metric_ranges", classmethod(lambda cls, values: narrow))
    failed = _failed(broken(_Dueller))
    assert (
        list(failed) == [RANGES]
        and "'s regret " in failed[RANGES]
        and "outside its declared [0, 0.001]" in failed[RANGES]
    )


def test_metrics_without_a_declared_range_are_named_and_pass(broken, monkeypatch):
    from banditbench.envs.dueling import SyntheticDueling

    monkeypatch.setattr(SyntheticDueling, "metric_ranges", classmethod(lambda cls, values: {}))
    outcome = next(o for o in check_policy(broken(_Dueller), horizon=10) if o.check == RANGES)
    assert outcome.passed and "no range declared for ['regret', 'average_regret', 'weak_regret', 'self_duel']" in (
        outcome.detail
    )


def test_bad_values_are_of_the_wrong_type_or_just_outside_the_range():
    assert bad_values(Positive) == ["not-a-value", 0]
    from banditbench.params import NonNegative, Probability

    assert bad_values(NonNegative | None) == ["not-a-value", -1]
    assert bad_values(Probability) == ["not-a-value", 0, 1]
    assert bad_values(str) == [[1.5]]


def test_the_command_prints_each_check_and_exits_1_on_a_failure(broken, capsys):
    assert main(["check", "random_pair", "--horizon", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("random_pair\n  ok   same seed, same bytes")
    assert main(["check", broken(_OffByOne), "--horizon", "10"]) == 1
    assert "FAIL actions in the action space: round 1 played (4, 0)" in capsys.readouterr().out
    assert main(["check", "no_such_policy"]) == 2
    assert "policy: unknown policy 'no_such_policy'" in capsys.readouterr().err


def test_a_policy_of_a_kind_the_api_does_not_declare_is_refused_when_defined():
    with pytest.raises(TypeError, match=r"_Ranker: no interface for 'ranking' feedback on 'list' actions"):

        class _Ranker(_Dueller):
            feedback_kind, action_kind = "ranking", "list"
