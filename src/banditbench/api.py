"""The small interfaces every environment and policy implements.

A policy sees only a :class:`Problem` (public facts: horizon, dimensions,
observation probability of the delay model) and, each round, the environment's
public context; it never sees the hidden truth.  An environment never sees the
policy.  :func:`register` marks a class so that :mod:`banditbench.registry` can
find it by name without importing every module.

A plugin imports everything from here: this module also hands on the interfaces of
:mod:`banditbench.interfaces` (what the runner hands each kind of policy, the null action), the parameter
vocabulary of :mod:`banditbench.params` (``Doc``, ``Range``, ``Positive``, ...) and the feedback items of
:mod:`banditbench.feedback` (:data:`__all__`).
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Mapping, Sequence

from .errors import Diverged
from .feedback import PreferenceCostFeedback, PreferenceFeedback, RewardCostFeedback, RewardFeedback, new_feedback
from .interfaces import INTERFACES, NULL, DataFree, Interface, Skeleton
from .params import (
    DataFile,
    DataPath,
    Doc,
    NonNegative,
    NonNegativeInt,
    OneOf,
    Positive,
    PositiveInt,
    Probability,
    Range,
    UnitInterval,
)

#: the contract: what this module defines and what it hands on from interfaces.py, params.py and feedback.py
__all__ = [
    "register",
    "choose",
    "check_finite",
    "Problem",
    "Environment",
    "feedback_kinds",
    "Policy",
    "self_duel_rule",
    "ENGINES",
    "BatchedPolicy",
    # the interfaces: what the runner hands each kind of policy, and how one is checked (banditbench.interfaces)
    "Interface",
    "DataFree",
    "Skeleton",
    "INTERFACES",
    "NULL",
    # parameters (banditbench.params)
    "Doc",
    "Range",
    "OneOf",
    "DataFile",
    "Positive",
    "NonNegative",
    "Probability",
    "UnitInterval",
    "PositiveInt",
    "NonNegativeInt",
    "DataPath",
    # feedback items (banditbench.feedback)
    "PreferenceFeedback",
    "RewardFeedback",
    "PreferenceCostFeedback",
    "RewardCostFeedback",
    "new_feedback",
]


def register(name: str):
    """Class decorator: make an environment or policy available under ``name`` in configs.

    The registry finds decorated classes by reading the source (no import), so the
    name must be a string literal.
    """

    def deco(cls):
        cls.registry_name = name
        return cls

    return deco


def choose(scores: Any, what: str = "scores") -> int:
    """``int(np.argmax(scores))`` (flat index, first maximum), refusing scores that are not finite: the
    decision of every policy whose scores can diverge goes through here.

    numpy's argmax answers the first NaN when there is one, so looking at the chosen value alone (O(1))
    catches a NaN anywhere, and a maximum of +inf (or -inf: every score -inf); either raises
    :class:`~banditbench.errors.Diverged` naming ``what`` (e.g. ``UCB scores``), and the simulation loop ends
    the run at that round (:func:`banditbench.simulation.runner.simulate`)."""
    index = int(scores.argmax())
    value = float(scores.flat[index])
    if not math.isfinite(value):
        raise Diverged(
            f"its {what} contain NaN" if value != value else f"its {what} are {'+inf' if value > 0 else 'all -inf'}"
        )
    return index


def check_finite(what: str, *values: Any) -> None:
    """Raise :class:`~banditbench.errors.Diverged` when an array of ``values`` (numpy or torch) holds a NaN
    or an infinity, for estimates or widths that a policy does not maximise directly (e.g. they go
    through masks that could hide a NaN); one sum per array, so O(size), no copy."""
    if not math.isfinite(sum(float(v.sum()) for v in values)):
        raise Diverged(f"its {what} are not finite (NaN or infinite)")


@dataclass(frozen=True)
class Problem:
    """What a policy may know before the first round.

    ``info`` holds the environment's public facts (``dimension``, ``n_arms``,
    action space, budget, ...); ``rho`` and ``window`` come from the delay model.
    """

    horizon: int
    rho: float = 1.0
    window: int | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        try:
            return self.info[key]
        except KeyError:
            raise KeyError(f"the environment does not publish {key!r}; it publishes {sorted(self.info)}") from None


#: how far, relative to a declared metric range's width, a recorded value may lie outside it (the rounding of the
#: metric's arithmetic): the conformance check allows it and a claim's range of ``A - B`` is widened by it
RANGE_TOLERANCE = 1e-9


class Environment(abc.ABC):
    """A bandit environment.

    Subclasses set ``feedback_kind`` (matched against policies'), ``metrics``
    (names of the per-round truth values ``step`` returns, logged by the runner)
    and ``action_kind``.  Constructed as ``Environment(seed_seq, *, horizon, **params)``;
    parameters are declared and inherited as for :class:`Policy`, and bad values are
    named ``environment.params.<key>``.
    """

    feedback_kind: ClassVar[str]
    #: set when the environment can answer in several feedback kinds (e.g. preferences or
    #: absolute rewards); the runner then passes ``feedback_kind=<the policy's kind>``
    feedback_kinds: ClassVar[tuple[str, ...]] = ()
    action_kind: ClassVar[str]
    metrics: ClassVar[tuple[str, ...]]
    #: metric whose cumulative curve is plotted by default
    primary_metric: ClassVar[str]
    #: metrics every experiment also tabulates as running averages (``per_round_<metric>``), whatever
    #: its ``per_round_metrics`` (e.g. the dueling environments' self-duel rate)
    rate_metrics: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    def public_info(self) -> dict[str, Any]:
        """Facts a policy may know in advance (dimension, number of arms, ...)."""

    @abc.abstractmethod
    def context(self, t: int) -> Any:
        """What the learner sees at the start of round ``t`` (1-based)."""

    @abc.abstractmethod
    def step(self, t: int, action: Any) -> tuple[Any | None, Mapping[str, float] | None]:
        """Play ``action`` in round ``t``; return (feedback or None, per-round truth values).

        The truth values are a new mapping every round with exactly the keys ``metrics``
        (the runner keeps it until it writes a block of rounds to the logs).  A replay
        environment returns ``(None, None)`` to skip a logged event: the round is not
        consumed and the policy acts again in round ``t`` (so ``Policy.act`` may be called
        more than once per round; the last call's action is the round's).
        """

    #: False for an environment whose context is None every round: the loop hands the policy None without
    #: calling :meth:`context`
    has_context: ClassVar[bool] = True

    #: forms of the context the environment can hand out instead of :meth:`context`'s default, on a
    #: policy's request (``Policy.context_form``; e.g. ``row``: a classification row instead of the
    #: matrix of block arm features built from it)
    context_forms: ClassVar[tuple[str, ...]] = ()

    def use_context_form(self, form: str) -> None:
        """From now on, :meth:`context` answers in ``form`` (one of ``context_forms``)."""
        raise ValueError(f"{type(self).__name__} offers no context form {form!r}; it offers {list(self.context_forms)}")

    #: set by an environment that keeps its per-round truth values itself: the runner then plays
    #: its rounds through ``play(t, action)`` (:meth:`step` without the truth values: keep them,
    #: return the feedback or None) and takes ``truth_log(horizon)`` at the end (one sequence of
    #: ``horizon`` numbers per metric); such a class must define both (checked when it is defined)
    keeps_truth: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        missing = [name for name in ("play", "truth_log") if cls.keeps_truth and not callable(getattr(cls, name, None))]
        if missing:
            raise TypeError(f"{cls.__name__} sets keeps_truth but does not define {' and '.join(missing)}")

    @classmethod
    def required_files(cls, params: Mapping[str, Any]) -> list[str]:
        """Prepared data files (paths relative to the working directory) this environment reads;
        Snakemake builds them before the simulation."""
        return []

    # The three hooks below run before any job, without data, on ``values``: every parameter's
    # value (the configured ones, defaults filled in), each already checked against its annotation.
    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        """Relations between parameters that their annotations cannot say (:mod:`banditbench.params`);
        raise a :class:`~banditbench.errors.ConfigError` naming ``environment.params.<key>``."""

    @classmethod
    def known_facts(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """The public facts (:meth:`public_info`) that follow from the parameters alone, without data
        (e.g. ``dimension``); used to estimate a policy's memory."""
        return {}

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        """A lower bound on the bytes of the arrays this environment allocates for a run of ``horizon``
        rounds (those whose size the config fixes); checked against ``resources.mem_mb``."""
        return 0

    @classmethod
    def metric_ranges(cls, values: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
        """The range ``(lo, hi)`` of every round's value of each metric of ``metrics`` that the parameters alone
        bound (``values``, as for :meth:`known_facts`; no data): ``regret`` of a utility in ``[0, 1]`` duelled
        twice lies in ``(0.0, 2.0)``; and of each run summary of :meth:`summary` they bound (a dueling run's
        ``late_regret_rate``).  A claim's interval is distribution-free on the range of ``A - B`` these
        give (:mod:`banditbench.configuration.claims`), and the conformance checks fail a run that records a
        value outside (:mod:`banditbench.conformance`).  A metric left out has no declared range (e.g. a cost
        with Gaussian noise): a claim on it is refused unless it opts into the Gaussian t interval
        (``method: gaussian-t`` with a ``reason``).  Default: none declared."""
        return {}

    def summary(self) -> dict[str, float]:
        """Scalar facts about the whole run (e.g. a stopping time), stored with the result."""
        return {}


def feedback_kinds(env_cls: type[Environment]) -> tuple[str, ...]:
    """The feedback kinds an environment class can give."""
    return env_cls.feedback_kinds or (env_cls.feedback_kind,)


@dataclass(frozen=True, kw_only=True)
class Engine:
    """The declaration of an engine a policy offers besides the reference loop (a value of ``Policy.engines``,
    under its :attr:`name`)."""

    #: its name in ``Policy.engines`` and the :class:`Policy` method that implements it
    name: ClassVar[str]
    method: ClassVar[str]
    #: parameters under which the engine makes the reference loop's decisions (up to near ties), where the
    #: defaults leave exact ties in the reference itself that rounding decides; the conformance suite compares
    #: the engine with the reference under these (:mod:`banditbench.conformance`)
    check_params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "check_params", MappingProxyType(dict(self.check_params)))


@dataclass(frozen=True, kw_only=True)
class Compiled(Engine):
    """The ``compiled`` engine: :meth:`Policy.run_compiled` plays a whole run in compiled code, with the
    reference loop's decisions."""

    name: ClassVar[str] = "compiled"
    method: ClassVar[str] = "run_compiled"


@dataclass(frozen=True, kw_only=True)
class SeedBatched(Engine):
    """The ``seed-batched`` engine: :meth:`Policy.batch` stacks a block's policies into one
    :class:`BatchedPolicy` that plays them in lockstep."""

    name: ClassVar[str] = "seed-batched"
    method: ClassVar[str] = "batch"
    #: parameters the engine takes per member, so that one block may play several values of them in lockstep
    #: (e.g. a hyperparameter grid; :func:`banditbench.simulation.runner.lockstep_key`)
    per_member: tuple[str, ...] = ()
    #: policies of one family (registered classes that differ in class-level settings, e.g. seed 001's pair rule
    #: and variance weighting) share one engine that takes those settings per member, so a block may mix them
    #: (``lockstep_variants``)
    family: str | None = None
    #: the fewest members from which the engine outruns the single-seed path on a CPU, measured per family
    #: (``benchmarks/batched_speed.py``); smaller blocks on a CPU run one seed after the other on the single-seed
    #: path, and None keeps every CPU block there (the engine is then the GPU's shape: ``device: cuda``)
    cpu_min_block: int | None = 1

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "per_member", tuple(self.per_member))
        if self.cpu_min_block is not None and self.cpu_min_block < 1:
            raise ValueError(f"SeedBatched.cpu_min_block: at least 1 member, or None; got {self.cpu_min_block!r}")

    def wins(self, members: int, device: str) -> bool:
        """Whether a block of ``members`` on ``device`` is played by this engine rather than one seed after the
        other on the single-seed path (a GPU always takes it)."""
        if device != "cpu":
            return True
        return self.cpu_min_block is not None and members >= self.cpu_min_block


#: the optional engines a policy may offer (``Policy.engines``): each name with the class that declares it
ENGINES: dict[str, type[Engine]] = {engine.name: engine for engine in (Compiled, SeedBatched)}


def _check_engines(cls: type["Policy"]) -> None:
    """Refuse a policy class whose ``engines`` are not declarations of known engines, or whose declared engines
    and implemented ones (:attr:`Engine.method` overridden) differ."""
    engines = cls.engines
    if not isinstance(engines, Mapping):
        raise TypeError(
            f"{cls.__name__}.engines: a mapping of engine names to their declarations "
            f"(e.g. {{'compiled': Compiled()}}), got {engines!r}"
        )
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise TypeError(f"{cls.__name__}.engines: {sorted(unknown)} are not engines; known: {list(ENGINES)}")
    for name, declared in engines.items():
        if not isinstance(declared, ENGINES[name]):
            raise TypeError(
                f"{cls.__name__}.engines[{name!r}]: a {ENGINES[name].__name__}(...) declaration, got {declared!r}"
            )
    for name, engine in ENGINES.items():
        owner = next(klass for klass in cls.__mro__ if engine.method in vars(klass))
        implemented = owner is not Policy
        if implemented != (name in engines):
            raise TypeError(
                f"{cls.__name__} {'implements' if implemented else 'declares'} the {name} engine "
                f"({engine.method}) but {'does not declare it in' if implemented else 'lacks'} "
                f"{'engines' if implemented else engine.method}"
            )


def self_duel_rule(cls: type["Policy"], values: Mapping[str, Any]) -> str | None:
    """What ``cls`` with the parameters ``values`` (defaults filled in) declares about self-duels
    (:attr:`Policy.self_duels`), in words: ``self-duels allowed`` or ``no self-duels``, followed by the
    parameter and its value where a parameter decides; None where the class states nothing."""
    rule = getattr(cls, "self_duels", None)
    if rule is None:
        return None
    if rule in ("allowed", "never"):
        return "self-duels allowed" if rule == "allowed" else "no self-duels"
    value = values.get(rule)
    if value == "auto" and hasattr(cls, "preset_values"):  # the class's preset decides (e.g. the NDB family's)
        value = cls.preset_values(values)[rule]
    forbidden = bool(value)
    return f"{'no self-duels' if forbidden else 'self-duels allowed'} ({rule}: {str(forbidden).lower()})"


class Policy(abc.ABC):
    """A bandit algorithm.  Constructed as ``Policy(problem, rng, **params)``.

    All keyword-only constructor parameters are the algorithm's configurable
    parameters: the registry lists them, and their annotations say what a value may be
    (:mod:`banditbench.params`), checked before any job and again before a job builds
    the policy; :meth:`check_params` adds relations between them.
    A family declares its shared parameters once, in its base class; a variant
    declares only its own and forwards the rest, ``def __init__(self, problem, rng,
    *, own=1.0, **shared): super().__init__(problem, rng, **shared)``, and the
    registry follows the ``**shared`` up to the base (environments likewise).
    Constructors name a bad value by its key relative to the job cell,
    ``policy.params.<key>`` (see :mod:`banditbench.errors`).
    """

    #: the feedback it learns from; with :attr:`action_kind` a key of :data:`INTERFACES`, which says what the
    #: runner hands it (checked when the class is defined)
    feedback_kind: ClassVar[str]
    #: the kind of action it plays (``arm``, ``pair``, ``point``), matched against the environment's
    action_kind: ClassVar[str]
    #: the context form it asks the environment for (one of ``Environment.context_forms``, which
    #: the environment publishes in its facts); None: the environment's default context
    context_form: str | None = None
    #: the engines it offers besides the reference loop of :meth:`observe` and :meth:`act`, each name of
    #: :data:`ENGINES` with its declaration: ``{"compiled": Compiled()}`` (it implements :meth:`run_compiled`),
    #: ``{"seed-batched": SeedBatched(per_member=..., family=...)}`` (it implements :meth:`batch`).  Checked when
    #: the class is defined: a declared engine must be implemented, and an implemented one declared.
    engines: ClassVar[Mapping[str, Engine]] = MappingProxyType({})
    #: for a policy that plays pairs: whether it may duel an arm with itself (a self-duel, which carries no
    #: information to a learner driven by the two arms' difference): ``"allowed"``, ``"never"``, or the name of
    #: its boolean parameter that forbids self-duels when true; None: not stated.  The paired tables'
    #: self-duel lock-in line names it (:func:`self_duel_rule`)
    self_duels: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _check_engines(cls)
        kinds = (getattr(cls, "feedback_kind", None), getattr(cls, "action_kind", None))
        if not getattr(cls, "__abstractmethods__", None) and None not in kinds and kinds not in INTERFACES:
            raise TypeError(
                f"{cls.__name__}: no interface for {kinds[0]!r} feedback on {kinds[1]!r} actions; "
                f"known: {sorted(INTERFACES)}"
            )

    @classmethod
    def batch(cls, policies: Sequence["Policy"]) -> "BatchedPolicy | None":
        """The ``seed-batched`` engine: the block's policies (one per seed, each built as for a single-seed
        run) stacked into one :class:`BatchedPolicy` that plays them in lockstep; None refuses this
        block's parameter set, whose seeds then run one after the other.  A seed's result must not
        depend on the other members of its block."""
        return None

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        """Relations between parameters that their annotations cannot say; as for environments
        (``values``: every parameter, defaults filled in), naming ``policy.params.<key>``."""

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int, facts: Mapping[str, Any]) -> int:
        """A lower bound on the bytes of the arrays this policy allocates for ``horizon`` rounds;
        ``facts`` are the environment's :meth:`Environment.known_facts` (a missing fact counts as 1)."""
        return 0

    def run_compiled(self, env: Environment, arrival: Any, horizon: int) -> bool:
        """The ``compiled`` engine: play all ``horizon`` rounds against ``env`` in compiled code, if this policy has such a form for
        this environment: the same decisions as :meth:`observe` and :meth:`act` in the loop of
        :func:`banditbench.simulation.runner.simulate`, ``arrival`` its delay queue
        (:meth:`banditbench.simulation.delays.DelayModel.arrival_rounds`).  Leaves the policy's state and the
        environment's truth values as that loop would, and says whether it ran (default: no)."""
        return False

    @abc.abstractmethod
    def observe(self, t: int, arrived: Sequence[Any]) -> None:
        """Feedback that arrived at the start of round ``t`` (each item carries its own round)."""

    @abc.abstractmethod
    def act(self, t: int, context: Any) -> Any:
        """Choose the action of round ``t``.

        Called again in the same round when a replay environment skipped the event
        (:meth:`Environment.step`); a policy that plays against replay environments must
        let the later call replace what the earlier one recorded for round ``t``.
        """


class BatchedPolicy(abc.ABC):
    """What :meth:`Policy.batch` returns and :func:`banditbench.simulation.runner.simulate_block` plays: a block of
    S seeds' policies in lockstep.  Each seed sees the calls of the single-seed loop, in its order; a
    seed's decisions must not depend on the other members (the rules in
    :mod:`banditbench.policies.neural.batched`)."""

    #: the ``Policy.context_form`` every seed's environment is asked for
    context_form: str | None = None
    #: the members (index in the block) whose scores, estimates or widths stopped being finite, each with its
    #: :class:`~banditbench.errors.Diverged` (:meth:`choose_member`, :meth:`member_diverged`): one member's
    #: divergence does not stop the others; the runner stops playing that member from the round it diverged
    #: in (:func:`banditbench.simulation.runner.simulate_block`) and sets the error's ``round``
    diverged: Mapping[int, Diverged] = MappingProxyType({})

    def member_diverged(self, s: int, err: Diverged) -> None:
        """Mark member ``s`` diverged (its first error kept); it keeps being computed, never played."""
        if "diverged" not in vars(self):
            self.diverged = {}
        self.diverged.setdefault(s, err)

    def choose_member(self, s: int, scores: Any, what: str = "scores") -> int:
        """:func:`choose` for member ``s``: a member whose scores are not finite is marked diverged
        (:meth:`member_diverged`) and gets the plain argmax, an action the runner will not play."""
        try:
            return choose(scores, what)
        except Diverged as err:
            self.member_diverged(s, err)
            return int(scores.argmax())

    @abc.abstractmethod
    def observe_all(self, t: int, arrived: Sequence[Sequence[Any]]) -> None:
        """Each seed's ``Policy.observe(t, arrived[s])``, for the whole block at once."""

    @abc.abstractmethod
    def act_all(self, t: int, contexts: Sequence[Any]) -> list:
        """Each seed's ``Policy.act(t, contexts[s])``, for the whole block at once: one action per seed."""
