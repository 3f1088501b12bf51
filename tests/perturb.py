"""Another machine's rounding, emulated: inputs changed at the 1e-15 relative level.

Another CPU can make OpenBLAS (and numpy's SIMD loops, MKL under torch) pick other kernels,
which round differently in the last bit; a bandit trajectory amplifies one near-tie decided
the other way into a different run.  A test that only passes with this machine's last bits
would fail for a user elsewhere.  The suite therefore runs the tests that compare two
implementations, or claim that a policy learns, also on inputs multiplied by
``1 + 1e-15 u`` (``u`` uniform in [-1, 1], a few units in the last place): the same
arithmetic on slightly different numbers, i.e. other last bits everywhere downstream.
An assertion that needs bit-level luck fails in one of the two variants.

* :func:`jitter` — one array (or named tuple of arrays) perturbed, deterministically: the
  perturbation is a function of the array's bytes, so the same input always gives the same
  output (as one machine's rounding does) and a fixed arm set stays fixed.
* the ``rounding`` fixture (``tests/conftest.py``), parametrized ``exact`` / ``perturbed``:
  ``rounding(x)`` is ``x`` or ``jitter(x)``; in the perturbed variant every policy run by
  :func:`banditbench.simulation.runner.simulate` (hence ``run_cell``) sees jittered contexts, while the
  environment keeps scoring its own, exact ones (a policy computing in float32 gets a jitter of
  4e-7, a few units in float32's last place).

A comparison of two implementations that share no code (a vectorised policy against a
transcription of the authors' code) gives only the other implementation jittered inputs: their
arithmetic differs anyway, and this makes it differ in other last bits.  Where the two share a
computation (the same network forward pass on the same inputs gives the same bits on any machine),
both get the same jittered inputs.  Such a comparison asserts the same indices to a stated tolerance
and the same decisions except in near-ties (:func:`assert_same_or_near_tie`).

The tests never set ``OPENBLAS_CORETYPE`` (that is a manual check: docs/reliability.md, Reproducibility).
"""

from __future__ import annotations

import zlib

import numpy as np

#: relative size of the perturbation: a few units in the last place of a float64
REL = 1e-15
#: the same for a policy that computes in float32 (``policy.dtype``; a float64 jitter would vanish in the cast)
REL32 = 4e-7


def jitter(x, rel: float = REL, salt: int = 0):
    """``x * (1 + rel * u)`` for a float array ``x`` (``u`` uniform in [-1, 1], drawn from a seed
    made of ``x``'s bytes and ``salt``); a named tuple has each float array field jittered; anything
    else (None, integers, booleans) is returned as it is.  A read-only input gives a read-only output."""
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(jitter(v, rel, salt) for v in x))
    if not isinstance(x, np.ndarray) or not np.issubdtype(x.dtype, np.floating):
        return x
    seed = zlib.crc32(np.ascontiguousarray(x).tobytes(), salt) + (x.size << 32)
    u = np.random.default_rng(seed).uniform(-1.0, 1.0, x.shape)
    out = x * (1.0 + rel * u)
    if not x.flags.writeable:
        out.flags.writeable = False
    return out


class Rounding:
    """``rounding(x)``: ``x`` in the exact variant, :func:`jitter` ``(x)`` in the perturbed one."""

    def __init__(self, perturbed: bool):
        self.perturbed = perturbed

    def __call__(self, x, salt: int = 0):
        return jitter(x, salt=salt) if self.perturbed else x

    def __repr__(self) -> str:
        return "perturbed" if self.perturbed else "exact"


def jitter_policy_contexts(monkeypatch) -> None:
    """From now on, every policy that :func:`banditbench.simulation.runner.simulate` runs acts on jittered
    contexts (its ``act`` wrapped on the instance); the environment scores its own contexts."""
    from banditbench.simulation import runner

    def wrapping(loop):
        def wrapped(env, policy, *args):
            act = policy.act
            rel = REL32 if str(getattr(policy, "dtype", "")).endswith("float32") else REL

            def jittered_act(t, context):
                return act(t, jitter(context, rel))

            policy.act = jittered_act
            return loop(env, policy, *args)

        return wrapped

    monkeypatch.setattr(runner, "_next_round_loop", wrapping(runner._next_round_loop))
    monkeypatch.setattr(runner, "_queued_loop", wrapping(runner._queued_loop))


def assert_same_or_near_tie(ours: int, theirs: int, values, rtol: float, where="") -> None:
    """Two implementations chose ``ours`` and ``theirs`` where the second scored the choices ``values``
    (its index, maximised): equal, or a near-tie — ``values[ours]`` within ``rtol`` (relative to the
    largest ``|value|``) of ``values[theirs]``, the maximum.  ``rtol`` is how closely the two
    implementations' indices agree; a gap below it is for the last bits to decide."""
    if ours == theirs:
        return
    values = np.asarray(values, dtype=float)
    gap = values[theirs] - values[ours]
    scale = np.abs(values).max()
    assert values[theirs] == values.max() and gap <= rtol * scale, (
        f"{where}: chose {ours}, the other implementation {theirs}, whose indices {values.tolist()} "
        f"put them {gap / scale:.3g} (relative) apart, not a near-tie (<= {rtol:g})"
    )
