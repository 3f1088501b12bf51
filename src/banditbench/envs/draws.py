"""Random numbers an environment draws one per round, drawn a block of rounds at a time."""

from __future__ import annotations

from itertools import chain
from typing import Iterator

import numpy as np

#: uniforms drawn at once by :func:`uniforms`
UNIFORM_BLOCK = 8192


def uniforms(rng: np.random.Generator, block: int = UNIFORM_BLOCK) -> Iterator[float]:
    """An endless iterator over the numbers of successive ``rng.random()`` calls (Python floats, the
    same numbers: a block of n uniforms is n draws of the stream), drawn ``block`` at a time; for a
    stream the environment uses for nothing else, so drawing ahead changes no other number."""
    return chain.from_iterable(iter(lambda: rng.random(block).tolist(), None))
