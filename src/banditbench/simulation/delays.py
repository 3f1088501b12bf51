"""Delay models and the delay queue.

A delay ``D_s`` is a non-negative integer number of rounds.  Feedback of round
``s`` becomes usable at the start of round ``s + max(D_s, 1)``: the policy
decides in round ``s`` before the environment answers, so ``D = 0`` and
``D = 1`` both mean "known before the next decision" (as in seed 000, where
feedback of round ``s`` is usable at round ``t`` iff ``s < t`` and
``s + D_s <= t``).

Every model may be censored by an observation window ``M`` (seed 000, Sec. 2):
feedback with ``D_s > M`` never arrives.  ``rho = P(D <= M)`` is exposed to the
policies that need it (inverse probability weighting).  Delays are orthogonal
to policies and environments: they are drawn from their own random stream.
"""

from __future__ import annotations

import abc
import heapq
import math
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Mapping

import numpy as np

from ..errors import ConfigError, did_you_mean, key_path


def parameter(description: str, schema: dict[str, Any], default: Any = MISSING):
    """A delay parameter: a dataclass field that carries its config description and JSON schema."""
    return field(default=default, metadata={"description": description, "schema": schema})


@dataclass(frozen=True)
class Parameter:
    """One config key of a delay kind: what it means, its JSON schema, whether it must be given."""

    description: str
    schema: dict[str, Any]
    required: bool

    def __str__(self) -> str:
        return f"{self.description}; {_describe(self.schema)}"


@dataclass(frozen=True, kw_only=True)
class DelayModel(abc.ABC):
    """Base class: a distribution over non-negative integer delays plus an optional window.

    The subclasses below are the one description of the delay kinds: their fields
    (declared with :func:`parameter`) are the config keys of a kind, and the
    factory (:func:`make_delay`), the config schema (:func:`delay_schema`) and
    ``banditbench list delays`` are derived from them.
    """

    window: int | None = parameter(
        "observation window M: feedback with D > M never arrives (null: none)",
        {"type": ["integer", "null"], "minimum": 0},
        default=None,
    )

    kind: ClassVar[str] = "abstract"
    #: config keys accepted instead of a field: key -> (field it replaces, description, JSON schema)
    alternatives: ClassVar[dict[str, tuple[str, str, dict[str, Any]]]] = {}

    @classmethod
    def parameters(cls) -> dict[str, Parameter]:
        """Every config key of this kind (besides ``kind``), fields first, then alternatives."""
        replaced = {target for target, _, _ in cls.alternatives.values()}
        out = {
            f.name: Parameter(
                f.metadata["description"], f.metadata["schema"], f.default is MISSING and f.name not in replaced
            )
            for f in fields(cls)
        }
        out.update(
            {key: Parameter(description, schema, False) for key, (_, description, schema) in cls.alternatives.items()}
        )
        return out

    @classmethod
    def from_config(cls, values: dict[str, Any], where: str) -> DelayModel:
        """Build from config values that passed their schemas (subclasses check relations between them)."""
        return cls(**values)

    @abc.abstractmethod
    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw ``n`` uncensored delays."""

    @abc.abstractmethod
    def cdf(self, m: int) -> float:
        """P(D <= m) of the uncensored delay."""

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw ``n`` delays (int64; uncensored — use :meth:`arrives` for the window)."""
        return np.asarray(self._sample(rng, n), dtype=np.int64)

    def arrives(self, delays: np.ndarray) -> np.ndarray:
        """Boolean mask: which delays fall inside the observation window."""
        if self.window is None:
            return np.ones(np.shape(delays), dtype=bool)
        return np.asarray(delays) <= self.window

    def arrival_rounds(self, delays: np.ndarray, horizon: int) -> np.ndarray:
        """Round at whose start the feedback of round ``s = 1, 2, ...`` arrives, ``s + max(D_s, 1)``
        (``delays[s - 1] = D_s``), or 0 where it never arrives within ``horizon`` rounds
        (censored by the window, or due after the last round)."""
        delays = np.asarray(delays, dtype=np.int64)
        rounds = np.arange(1, delays.shape[0] + 1) + np.maximum(delays, 1)
        rounds[~self.arrives(delays) | (rounds > horizon)] = 0
        return rounds

    @property
    def rho(self) -> float:
        """Observation probability ``rho = P(D <= M)`` (1 without a window)."""
        return 1.0 if self.window is None else float(self.cdf(self.window))

    @property
    @abc.abstractmethod
    def mean(self) -> float:
        """Mean of the uncensored delay."""


_ROUNDS = {"type": "integer", "minimum": 0}


@dataclass(frozen=True, kw_only=True)
class NoDelay(DelayModel):
    """Feedback arrives before the next decision."""

    kind = "none"

    def _sample(self, rng, n):
        return np.zeros(n, dtype=np.int64)

    def cdf(self, m):
        return 1.0 if m >= 0 else 0.0

    @property
    def mean(self):
        return 0.0


@dataclass(frozen=True, kw_only=True)
class ConstantDelay(DelayModel):
    """Every delay equals ``value``."""

    value: int = parameter("delay in rounds", _ROUNDS)
    kind = "constant"

    def _sample(self, rng, n):
        return np.full(n, self.value, dtype=np.int64)

    def cdf(self, m):
        return 1.0 if self.value <= m else 0.0

    @property
    def mean(self):
        return float(self.value)


@dataclass(frozen=True, kw_only=True)
class UniformDelay(DelayModel):
    """Delays uniform on the integers ``{low, ..., high}`` (inclusive)."""

    low: int = parameter("smallest delay", _ROUNDS)
    high: int = parameter("largest delay (>= low)", _ROUNDS)
    kind = "uniform"

    @classmethod
    def from_config(cls, values, where):
        if values["high"] < values["low"]:
            raise ConfigError(f"{key_path(where, 'high')}: must be >= low ({values['low']}), got {values['high']}")
        return cls(**values)

    def _sample(self, rng, n):
        return rng.integers(self.low, self.high + 1, size=n)

    def cdf(self, m):
        width = self.high - self.low + 1
        return float(np.clip((math.floor(m) - self.low + 1) / width, 0.0, 1.0))

    @property
    def mean(self):
        return (self.low + self.high) / 2.0


@dataclass(frozen=True, kw_only=True)
class GeometricDelay(DelayModel):
    """Geometric delays on ``{1, 2, ...}``: ``P(D = k) = (1-p)^(k-1) p``, mean ``1/p``."""

    p: float = parameter(
        "success probability; or give mean = 1/p instead", {"type": "number", "exclusiveMinimum": 0, "maximum": 1}
    )
    kind = "geometric"
    alternatives = {
        "mean": (
            "p",
            "mean delay 1/p (geometric support starts at 1); alternative to p",
            {"type": "number", "minimum": 1},
        )
    }

    @classmethod
    def from_config(cls, values, where):
        if ("p" in values) == ("mean" in values):
            raise ConfigError(f"{where}: geometric delay needs exactly one of 'p' or 'mean'")
        p = values["p"] if "p" in values else 1.0 / values["mean"]
        return cls(window=values.get("window"), p=float(p))

    def _sample(self, rng, n):
        return rng.geometric(self.p, size=n)

    def cdf(self, m):
        return 0.0 if m < 1 else 1.0 - (1.0 - self.p) ** math.floor(m)

    @property
    def mean(self):
        return 1.0 / self.p


DELAY_KINDS: dict[str, type[DelayModel]] = {
    cls.kind: cls for cls in (NoDelay, ConstantDelay, UniformDelay, GeometricDelay)
}


def delay_schema() -> dict[str, Any]:
    """JSON schema of one delay entry of a config: a ``kind`` and the keys of the kinds.

    Which keys a kind accepts, and relations between them, are checked by :func:`make_delay`.
    """
    properties: dict[str, Any] = {"kind": {"enum": list(DELAY_KINDS)}}
    for cls in DELAY_KINDS.values():
        for name, param in cls.parameters().items():
            if properties.setdefault(name, param.schema) != param.schema:
                raise RuntimeError(f"delay parameter {name!r} has two schemas; give it one meaning")
    return {"type": "object", "required": ["kind"], "properties": properties, "additionalProperties": False}


def _describe(schema: Mapping[str, Any]) -> str:
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    text = "an integer" if "integer" in types else "a finite number"
    if "exclusiveMinimum" in schema and "maximum" in schema:
        text += f" in ({schema['exclusiveMinimum']}, {schema['maximum']}]"
    elif "minimum" in schema:
        text += f" >= {schema['minimum']}"
    return text + (" or null" if "null" in types else "")


def _conforms(value: Any, schema: Mapping[str, Any]) -> bool:
    """``value`` against the few JSON-schema keywords the delay parameters use."""
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if value is None:
        return "null" in types
    if isinstance(value, bool) or not isinstance(value, int if "integer" in types else (int, float)):
        return False
    return (
        math.isfinite(value)
        and value >= schema.get("minimum", -math.inf)
        and value > schema.get("exclusiveMinimum", -math.inf)
        and value <= schema.get("maximum", math.inf)
    )


def make_delay(spec: Mapping[str, Any], where: str = "delay") -> DelayModel:
    """Build a delay model from a config mapping such as ``{kind: geometric, mean: 20, window: 50}``.

    ``where`` is the mapping's key path in the config, used in error messages.
    """
    spec = dict(spec)
    kind = spec.pop("kind", None)
    if kind not in DELAY_KINDS:
        raise ConfigError(
            f"{key_path(where, 'kind')}: unknown delay kind {kind!r}{did_you_mean(kind, DELAY_KINDS)}; "
            f"known kinds: {sorted(DELAY_KINDS)}"
        )
    cls = DELAY_KINDS[kind]
    params = cls.parameters()
    unknown = set(spec) - set(params)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {sorted(unknown)}{did_you_mean(min(unknown), params)} for delay kind {kind!r}; "
            f"allowed: {sorted({'kind', *params})}"
        )
    for name, value in spec.items():
        if not _conforms(value, params[name].schema):
            raise ConfigError(f"{key_path(where, name)}: must be {_describe(params[name].schema)}, got {value!r}")
    for name, param in params.items():
        if param.required and name not in spec:
            raise ConfigError(f"{key_path(where, name)}: required for delay kind {kind!r}")
    model = cls.from_config(spec, where)
    if model.rho <= 0.0:
        raise ConfigError(f"{where}: the window {model.window} censors every feedback (rho = P(D <= M) = 0)")
    return model


class DelayQueue:
    """Pending feedback keyed by arrival round; pops in (arrival round, original round) order.

    For loops that learn each delay as they go (e.g. the reference loops of ``benchmarks/``);
    :func:`banditbench.simulation.runner.simulate` draws every delay up front and files each feedback
    straight into the bucket of its arrival round (:meth:`DelayModel.arrival_rounds`)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, int, Any]] = []
        self._counter = 0

    def push(self, item: Any, origin_round: int, arrival_round: int) -> None:
        heapq.heappush(self._heap, (arrival_round, origin_round, self._counter, item))
        self._counter += 1

    def pop_until(self, t: int) -> list[Any]:
        """Remove and return every item whose arrival round is ``<= t``."""
        out = []
        heap = self._heap
        while heap and heap[0][0] <= t:
            out.append(heapq.heappop(heap)[3])
        return out

    def __len__(self) -> int:
        return len(self._heap)
