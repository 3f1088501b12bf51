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
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from .errors import ConfigError

@dataclass(frozen=True)
class DelayModel(abc.ABC):
    """Base class: a distribution over non-negative integer delays plus an optional window."""

    window: int | None = None

    kind = "abstract"

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

    @property
    def rho(self) -> float:
        """Observation probability ``rho = P(D <= M)`` (1 without a window)."""
        return 1.0 if self.window is None else float(self.cdf(self.window))

    @property
    @abc.abstractmethod
    def mean(self) -> float:
        """Mean of the uncensored delay."""


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class ConstantDelay(DelayModel):
    """Every delay equals ``value``."""

    value: int = 0
    kind = "constant"

    def _sample(self, rng, n):
        return np.full(n, self.value, dtype=np.int64)

    def cdf(self, m):
        return 1.0 if self.value <= m else 0.0

    @property
    def mean(self):
        return float(self.value)


@dataclass(frozen=True)
class UniformDelay(DelayModel):
    """Delays uniform on the integers ``{low, ..., high}`` (inclusive)."""

    low: int = 0
    high: int = 0
    kind = "uniform"

    def _sample(self, rng, n):
        return rng.integers(self.low, self.high + 1, size=n)

    def cdf(self, m):
        width = self.high - self.low + 1
        return float(np.clip((math.floor(m) - self.low + 1) / width, 0.0, 1.0))

    @property
    def mean(self):
        return (self.low + self.high) / 2.0


@dataclass(frozen=True)
class GeometricDelay(DelayModel):
    """Geometric delays on ``{1, 2, ...}``: ``P(D = k) = (1-p)^(k-1) p``, mean ``1/p``."""

    p: float = 1.0
    kind = "geometric"

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

#: parameters each kind accepts (besides ``kind`` and ``window``), with a description
DELAY_PARAMETERS: dict[str, dict[str, str]] = {
    "none": {},
    "constant": {"value": "delay in rounds (int >= 0)"},
    "uniform": {"low": "smallest delay (int >= 0)", "high": "largest delay (int >= low)"},
    "geometric": {"p": "success probability in (0, 1]; or give mean = 1/p instead",
                  "mean": "mean delay (>= 1); alternative to p"},
}


def make_delay(spec: Mapping[str, Any], where: str = "delay") -> DelayModel:
    """Build a delay model from a config mapping such as ``{kind: geometric, mean: 20, window: 50}``.

    ``where`` is the config path used in error messages.
    """
    spec = dict(spec)
    kind = spec.pop("kind", None)
    if kind not in DELAY_KINDS:
        raise ConfigError(f"{where}.kind: unknown delay kind {kind!r}; known kinds: {sorted(DELAY_KINDS)}")
    window = spec.pop("window", None)
    if window is not None and (not isinstance(window, int) or window < 0):
        raise ConfigError(f"{where}.window: must be a non-negative integer or null, got {window!r}")
    allowed = set(DELAY_PARAMETERS[kind])
    unknown = set(spec) - allowed
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)} for delay kind {kind!r}; allowed: {sorted(allowed | {'kind', 'window'})}")

    def _int(key, low=0):
        if key not in spec:
            raise ConfigError(f"{where}.{key}: required for delay kind {kind!r}")
        v = spec[key]
        if not isinstance(v, int) or isinstance(v, bool) or v < low:
            raise ConfigError(f"{where}.{key}: must be an integer >= {low}, got {v!r}")
        return v

    if kind == "none":
        model: DelayModel = NoDelay(window=window)
    elif kind == "constant":
        model = ConstantDelay(window=window, value=_int("value"))
    elif kind == "uniform":
        low, high = _int("low"), _int("high")
        if high < low:
            raise ConfigError(f"{where}.high: must be >= low ({low}), got {high}")
        model = UniformDelay(window=window, low=low, high=high)
    else:
        if ("p" in spec) == ("mean" in spec):
            raise ConfigError(f"{where}: geometric delay needs exactly one of 'p' or 'mean'")
        if "p" in spec:
            p = spec["p"]
            if not isinstance(p, (int, float)) or not 0 < p <= 1:
                raise ConfigError(f"{where}.p: must be in (0, 1], got {p!r}")
        else:
            m = spec["mean"]
            if not isinstance(m, (int, float)) or m < 1:
                raise ConfigError(f"{where}.mean: must be >= 1 (geometric support starts at 1), got {m!r}")
            p = 1.0 / m
        model = GeometricDelay(window=window, p=float(p))
    if model.rho <= 0.0:
        raise ConfigError(f"{where}: the window {window} censors every feedback (rho = P(D <= M) = 0)")
    return model


class DelayQueue:
    """Pending feedback keyed by arrival round; pops in (arrival round, original round) order."""

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
