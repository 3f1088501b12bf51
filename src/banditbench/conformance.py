"""The checks every registered algorithm passes, built-in or not (``banditbench check POLICY``,
``tests/test_conformance.py``), each on tiny horizons against the data-free environment of its interface
(:data:`~banditbench.interfaces.INTERFACES`):

* ``same seed, same bytes`` — two runs of one cell give identical metric series;
* ``actions in the action space`` — every action the environment is handed lies in the action space its
  interface declares (``Interface.valid_action``: an arm index below ``n_arms``; a pair of them, or a
  knapsack environment's null action; a point of the unit cube, a number in one dimension);
* ``late and lost feedback`` — a run whose feedback arrives late and partly never (a geometric delay
  cut by a window) plays every round and logs finite metrics;
* ``metrics in their declared ranges`` — every round's value of every metric the environment declares a range
  for (:meth:`~banditbench.api.Environment.metric_ranges`, the ranges the claims' distribution-free intervals
  rest on) lies in it, up to :data:`~banditbench.api.RANGE_TOLERANCE` times its width (at least 1: rounding);
  metrics without a declared range are named;
* ``bad parameters refused`` — for every parameter, a value of the wrong type, and a number outside
  a declared range, is refused before any run, the message naming ``policy.params.<key>``;
* ``every parameter has a description`` — every parameter's annotation carries a non-empty
  :class:`~banditbench.params.Doc` (what the reference page and ``banditbench list`` show);
* ``a seed's result does not depend on its block`` — for a policy with the ``seed-batched`` engine,
  a seed's series alone and inside a block of two are the same bytes;
* ``engine matches the reference`` — for a policy with an engine (``Policy.engines``), each run with its
  declaration's ``check_params``: the ``compiled`` run gives the Python loop's metric series, the same
  bytes ("the same decisions", :meth:`banditbench.api.Policy.run_compiled`); the ``seed-batched``
  engine, on one block of the seeds :data:`ENGINE_SEEDS`, plays the actions the reference loop plays
  for each seed alone in every round before the first that differs, and those rounds are at least
  :data:`ENGINE_AGREEMENT` of all, pooled over the seeds (a pair counts in either order: a symmetric
  rule's two orders score the same, and rounding orders them).

The seed-batched criterion rests on ``policies/neural/batched/__init__.py``: "The batched path is not
bit-identical to the single-seed path (other kernels, other summation order): the two make the same
decisions except near ties."  A near tie may come in any round and a trajectory parts there, so no
round can be required of every seed: the pooled share is the bound the family tests use
(``tests/policies/neural/batched/test_batched_neural.py``, ``_assert_not_vacuous``: 60 %, since a per-seed bound failed under
other BLAS kernels).  Measured on one CPU (``banditbench check --all``, 40 rounds, seeds 1-6), every
built-in engine agrees in all rounds of most seeds; the lowest pooled shares are NVLDB-UCB-CSYM's 75 %
(13, 7, 40, 40, 40, 40 rounds: near ties of relative gap 1.5e-16 and 3.8e-16 in rounds 14 and 5) and
NVLDB-UCB-OSYM's 80 %; an engine whose arms are shifted from round 5 on scores 20 %.  The tie-aware
checks (the reference's scores at the parting round) stay per family, where the scores are known
(``tests/test_batched_neural*.py``).
"""

from __future__ import annotations

import math
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal

import numpy as np

from . import params as param_checks
from . import registry
from .api import ENGINES, RANGE_TOLERANCE
from .errors import POLICY_PARAMS, ConfigError
from .interfaces import INTERFACES, Interface
from .simulation import runner
from .simulation.job import SEED_BATCHED, run_block, run_cell
from .simulation.runner import build, simulate, simulate_block

#: a late and partly lost feedback stream: geometric delays of mean 4, none arriving after 6 rounds
LATE_AND_LOST = {"kind": "geometric", "mean": 4, "window": 6}


@dataclass(frozen=True)
class Outcome:
    """One check of one policy: its name, whether it passed, and what was found."""

    check: str
    passed: bool
    detail: str = ""

    def line(self) -> str:
        return f"{'ok  ' if self.passed else 'FAIL'} {self.check}" + (f": {self.detail}" if self.detail else "")


def interface_of(policy: str) -> Interface:
    """The interface of ``policy`` (:data:`~banditbench.interfaces.INTERFACES`)."""
    cls = registry.get("policy", policy).load()
    return INTERFACES[cls.feedback_kind, cls.action_kind]


def cell_for(policy: str, horizon: int = 40, seed: int = 1, delay: dict[str, Any] | None = None) -> dict[str, Any]:
    """A simulate cell of ``policy`` on the data-free environment of its interface (``Interface.environment``)."""
    entry = registry.get("policy", policy)
    environment = interface_of(policy).environment
    return {
        **({"plugins": [entry.plugin]} if entry.plugin else {}),
        "experiment": "conformance",
        "algorithm": policy,
        "delay_label": "delay",
        "seed": seed,
        "horizon": horizon,
        "budget": environment.budget,
        "environment": {"name": environment.name, "params": dict(environment.params)},
        "policy": {"name": policy, "params": {}},
        "delay": delay or {"kind": "none"},
    }


def _intercept(env, before: Callable[[int, Any], None]) -> None:
    """Call ``before(t, action)`` with each action ``env`` is handed, before the environment plays it."""
    name = "play" if env.keeps_truth else "step"
    play = getattr(env, name)

    def intercepted(t, action):
        before(t, action)
        return play(t, action)

    setattr(env, name, intercepted)


def _actions_in_space(policy: str, horizon: int) -> Outcome:
    env, pol, delay, delay_rng = build(cell_for(policy, horizon))
    info, valid, bad = env.public_info(), interface_of(policy).valid_action, []

    class Outside(Exception):
        """An action outside the environment's actions: stop before the environment plays it."""

    def checked(t, action):
        if not valid(action, info):
            bad.append((t, action))
            raise Outside

    _intercept(env, checked)
    try:
        simulate(env, pol, delay, horizon, delay_rng, compiled=False)
    except Outside:
        pass
    return Outcome(
        "actions in the action space",
        not bad,
        f"round {bad[0][0]} played {bad[0][1]!r}" if bad else f"{horizon} rounds of {pol.action_kind} actions",
    )


def _same_bytes(policy: str, horizon: int) -> Outcome:
    cell = cell_for(policy, horizon)
    one, two = run_cell(cell)[0], run_cell(cell)[0]
    differ = [m for m in one if one[m].tobytes() != two[m].tobytes()]
    return Outcome("same seed, same bytes", not differ, f"{differ} differ" if differ else f"{sorted(one)}")


def _late_and_lost(policy: str, horizon: int) -> Outcome:
    series = run_cell(cell_for(policy, horizon, delay=LATE_AND_LOST))[0]
    wrong = [m for m, v in series.items() if v.shape != (horizon,) or not np.all(np.isfinite(v))]
    return Outcome(
        "late and lost feedback",
        not wrong,
        f"{wrong} not {horizon} finite values" if wrong else f"delay {LATE_AND_LOST}",
    )


def outside_range(series: dict[str, np.ndarray], ranges: dict[str, tuple[float, float]]) -> list[str]:
    """Each metric of ``series`` with a value outside its declared range (beyond :data:`~banditbench.api.RANGE_TOLERANCE`),
    naming the first such round."""
    wrong = []
    for name, (lo, hi) in ranges.items():
        values = np.asarray(series.get(name, ()), dtype=float)
        slack = RANGE_TOLERANCE * max(hi - lo, 1.0)
        bad = np.flatnonzero((values < lo - slack) | (values > hi + slack))
        if len(bad):
            wrong.append(
                f"round {bad[0] + 1}'s {name} {float(values[bad[0]])!r} is outside its declared [{lo:g}, {hi:g}]"
            )
    return wrong


def _in_declared_ranges(policy: str, horizon: int) -> Outcome:
    cell = cell_for(policy, horizon)
    env_cls = registry.get("environment", cell["environment"]["name"]).load()
    ranges = env_cls.metric_ranges(registry.values(env_cls, cell["environment"]["params"]))
    series, meta, _ = run_cell(cell)
    series = {**series, **{name: [value] for name, value in meta["summary"].items() if name in ranges}}
    wrong = outside_range(series, ranges)
    undeclared = [m for m in series if m not in ranges]
    found = ", ".join(f"{m} in [{lo:g}, {hi:g}]" for m, (lo, hi) in ranges.items()) or "no ranges declared"
    found += f"; no range declared for {undeclared}" if undeclared else ""
    return Outcome(RANGES, not wrong, "; ".join(wrong) if wrong else found)


def _members(hint: Any) -> list[Any]:
    origin = typing.get_origin(hint)
    return (
        [m for a in typing.get_args(hint) for m in _members(a)] if origin in (typing.Union, types.UnionType) else [hint]
    )


def bad_values(hint: Any) -> list[Any]:
    """Values the annotation ``hint`` must refuse: one of a wrong type, and for a number with a declared
    range one just outside it (nothing for ``Any``)."""
    members = _members(hint)
    if hint is Any or Any in members:
        return []
    bases = [typing.get_args(m)[0] if typing.get_origin(m) is Annotated else m for m in members]
    takes_text = any(b is str or typing.get_origin(b) is Literal for b in bases)
    out: list[Any] = [[1.5] if takes_text else "not-a-value"]
    for member in members:
        if typing.get_origin(member) is not Annotated:
            continue
        for mark in typing.get_args(member)[1:]:
            if isinstance(mark, param_checks.Range):
                low = mark.gt if mark.gt is not None else (mark.ge - 1 if mark.ge is not None else None)
                high = mark.lt if mark.lt is not None else (mark.le + 1 if mark.le is not None else None)
                out += [v for v in (low, high) if v is not None and not math.isinf(v)]
    return out


def _bad_parameters(policy: str, horizon: int) -> Outcome:
    cls = registry.get("policy", policy).load()
    hints = param_checks.hints(cls)
    wrong = [f"{name} declares no type" for name, hint in hints.items() if hint is Any]
    for name, hint in hints.items():
        for value in bad_values(hint):
            if param_checks.conforms(value, hint):
                continue  # a bound another member of a union allows (e.g. None | 0)
            try:
                param_checks.check(cls, {name: value}, POLICY_PARAMS)
                wrong.append(f"{name}={value!r} accepted")
            except ConfigError as err:
                if not str(err).startswith(f"{POLICY_PARAMS}.{name}:"):
                    wrong.append(f"{name}={value!r} refused without naming the key: {err}")
    return Outcome("bad parameters refused", not wrong, "; ".join(wrong) if wrong else f"{len(hints)} parameters")


def _described(policy: str, horizon: int) -> Outcome:
    cls = registry.get("policy", policy).load()
    texts = param_checks.descriptions(cls)
    missing = [f"{name} has no description" for name, text in texts.items() if not (text and text.strip())]
    return Outcome(DESCRIBED, not missing, "; ".join(missing) if missing else f"{len(texts)} parameters")


def _on_the_engine(cell: dict[str, Any], seeds: list[int]) -> dict[str, Any]:
    """The first seed's series of ``seeds`` played as one block on the seed-batched engine itself, whatever a CPU
    job would choose for a block this small (``SeedBatched.cpu_min_block``); one after the other where the engine
    declines the parameters (as a job plays them)."""
    try:
        return runner.run_seed_batched([{**cell, "seed": seed} for seed in seeds])[0][0]
    except runner.Declined:
        return run_block(cell, seeds)[0][0]


def _block_independent(policy: str, horizon: int) -> Outcome | None:
    cell = cell_for(policy, horizon)
    if SEED_BATCHED not in registry.get("policy", policy).load().engines:
        return None
    alone, in_block = _on_the_engine(cell, [1]), _on_the_engine(cell, [1, 2])
    differ = [m for m in alone if alone[m].tobytes() != in_block[m].tobytes()]
    return Outcome(BLOCK, not differ, f"{differ} differ" if differ else "seed 1 alone and in a block of 2")


RANGES = "metrics in their declared ranges"
BLOCK = "a seed's result does not depend on its block"
DESCRIBED = "every parameter has a description"
ENGINE = "engine matches the reference"
#: the seeds the engine check plays (one block for the seed-batched engine, each alone in the reference loop)
ENGINE_SEEDS = (1, 2, 3, 4, 5, 6)
#: the share of the rounds, pooled over :data:`ENGINE_SEEDS`, before each seed's first differing action
ENGINE_AGREEMENT = 0.6


def _compiled_matches(cell: dict[str, Any], horizon: int) -> str | None:
    """Why the compiled run's series are not the Python loop's bytes (None: they are)."""
    series, ran = [], []
    for compiled in (True, False):
        env, pol, delay, delay_rng = build(cell)
        run = pol.run_compiled
        pol.run_compiled = lambda *args: ran.append(run(*args)) or ran[-1]
        series.append(simulate(env, pol, delay, horizon, delay_rng, compiled=compiled))
    if ran != [True]:
        return "the compiled engine declined the run"
    differ = [m for m in series[1] if series[0][m].tobytes() != series[1][m].tobytes()]
    return f"compiled: {differ} differ from the Python loop's" if differ else None


def _decision(action: Any, kind: str) -> tuple:
    """An action as compared: a pair as the set of its arms (a symmetric rule orders equal scores by rounding)."""
    values = np.atleast_1d(np.asarray(action)).tolist()
    return tuple(sorted(values)) if kind == "pair" else tuple(values)


def _batched_matches(cell: dict[str, Any], horizon: int) -> tuple[str | None, str]:
    """Why the seed-batched engine does not make the reference's decisions (None: it does), and what was found."""
    built = [build({**cell, "seed": seed}) for seed in ENGINE_SEEDS]
    envs, policies, delays, delay_rngs = (list(x) for x in zip(*built))
    engine: list[list] = [[] for _ in ENGINE_SEEDS]
    for env, pol, played in zip(envs, policies, engine):
        if pol.context_form is not None:
            env.use_context_form(pol.context_form)
        _intercept(env, lambda t, action, played=played: played.append(action))
    batched = type(policies[0]).batch(policies)
    if batched is None:
        return None, "the seed-batched engine refuses these parameters"
    simulate_block(envs, batched, delays, horizon, delay_rngs)
    kind, agree, parted = policies[0].action_kind, [], []
    for seed, played in zip(ENGINE_SEEDS, engine):
        env, pol, delay, delay_rng = build({**cell, "seed": seed})
        reference: list = []
        _intercept(env, lambda t, action: reference.append(action))
        simulate(env, pol, delay, horizon, delay_rng, compiled=False)
        first = next(
            (t for t, (a, b) in enumerate(zip(played, reference)) if _decision(a, kind) != _decision(b, kind)), horizon
        )
        agree.append(first)
        if first < horizon:
            parted.append(f"seed {seed} round {first + 1}: engine {played[first]!r}, reference {reference[first]!r}")
    share = sum(agree) / (horizon * len(ENGINE_SEEDS))
    found = (
        f"actions agree in {', '.join(map(str, agree))} of {horizon} rounds before they first differ "
        f"(seeds {ENGINE_SEEDS[0]}-{ENGINE_SEEDS[-1]}, pooled {share:.0%} "
        f"{'>=' if share >= ENGINE_AGREEMENT else '<'} {ENGINE_AGREEMENT:.0%})"
        + (f"; {'; '.join(parted)}" if parted else "")
    )
    return (None if share >= ENGINE_AGREEMENT else found), found


def _engine_matches(policy: str, horizon: int) -> Outcome | None:
    cls = registry.get("policy", policy).load()
    wrong, found = [], []
    for name in (name for name in ENGINES if name in cls.engines):  # each engine under its own check_params
        declared = cls.engines[name]
        cell = cell_for(policy, horizon)
        cell["policy"]["params"] = dict(declared.check_params)
        params = (
            f" ({', '.join(f'{k}={v}' for k, v in declared.check_params.items())})" if declared.check_params else ""
        )
        if name == "compiled":
            why = _compiled_matches(cell, horizon)
            what = why or "compiled: the Python loop's bytes"
        else:
            why, what = _batched_matches(cell, horizon)
            what = f"seed-batched: {what}"
        wrong += [why + params] if why else []
        found.append(what + params)
    return Outcome(ENGINE, not wrong, "; ".join(wrong or found)) if found else None


#: each check's name and function (``None``: the check does not apply to the policy)
CHECKS: tuple[tuple[str, Callable[[str, int], Outcome | None]], ...] = (
    ("same seed, same bytes", _same_bytes),
    ("actions in the action space", _actions_in_space),
    ("late and lost feedback", _late_and_lost),
    (RANGES, _in_declared_ranges),
    ("bad parameters refused", _bad_parameters),
    (DESCRIBED, _described),
    (BLOCK, _block_independent),
    (ENGINE, _engine_matches),
)


def check_policy(policy: str, horizon: int = 40) -> list[Outcome]:
    """Every check of the module docstring that applies to ``policy``, each run ``horizon`` rounds; a
    check whose run raises fails, naming the error."""
    registry.get("policy", policy, "policy")  # an unknown name: one ConfigError line
    outcomes = []
    for name, check in CHECKS:
        try:
            outcome = check(policy, horizon)
        except Exception as err:  # the policy under test failed: a finding
            outcome = Outcome(name, False, f"{type(err).__name__}: {err}")
        if outcome is not None:
            outcomes.append(outcome)
    return outcomes
