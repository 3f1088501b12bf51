"""Seed-batched engines: S independent copies of a neural policy run in lockstep (issue #22).

A simulate job runs a block of seeds of one cell.  A policy class that offers a batched
implementation declares the ``seed-batched`` engine (``Policy.engines``: a ``SeedBatched``) and implements the
classmethod ``batch(policies) -> BatchedPolicy`` (:class:`banditbench.api.BatchedPolicy`) that takes the
block's single-seed policies (constructed as usual, so each seed drew its initial parameters
from its own ``torch.Generator`` and keeps its own numpy stream) and stacks their state along a
leading seed axis.  :func:`banditbench.simulation.runner.simulate_block` then plays the block: per round,
each seed's environment, delays and feedback queue stay per seed, and the policy's work for
all seeds is one call,

* ``observe_all(t, arrived)`` — ``arrived[s]`` the feedback items seed s receives in round t;
* ``act_all(t, contexts) -> actions`` — one action per seed.

Block independence.  A seed's numbers must not depend on which seeds share its block, so a
seed's result file is the same whether it runs alone or in a block of 20.  Three rules give
that on one machine: (1) every per-seed quantity is computed by batched matmuls
(:func:`.ops.bmm`: one GEMM per seed, narrow products one ``torch.mm`` per seed on aligned copies) or by elementwise and per-row reductions, never by a
GEMM that folds the seed axis into the rows; (2) training data
are padded to a length fixed by the round, not by the block (rows ``0 .. t - 2`` of every seed,
rounds whose outcome is not there carrying weight 0), so every tensor's shape per seed depends
on ``t`` only; (3) masked updates (``torch.where``) leave a seed that does not train this round
bit for bit unchanged; (4) transcendental elementwise functions run on rows padded to a whole
number of vector blocks (:func:`.ops.rowwise`).  ``tests/policies/neural/batched/test_batched_neural.py`` checks the result bytes of a seed alone
and inside a block.  The batched path is not bit-identical to the single-seed path (other
kernels, other summation order): the two make the same decisions except near ties.

Host reads.  On a GPU every read of a tensor's values on the host (``.cpu()``, ``.item()``, ``.tolist()``,
``float(t)``, ``if t:``) waits for the device, so a round gathers what the host's decisions need (each seed's
pair rule, Thompson draw and divergence check, on its own numpy stream) into one tensor and reads it once
(:func:`.ops.to_host`); what the host already knows (which outcomes arrived, each seed's row count) it decides
on without a read.  Per round: NDB 1, NeuralLog 1 (UCB-2 / TS-2: 2 in a round with new rows of ``W_t``),
NVLDB / NLDB 1 plus one per Newton step of the refit of ``theta``; checked by
``tests/policies/neural/batched/test_host_syncs.py``.

* :mod:`.ops` — the pieces the families share;
* :mod:`.delayed_dueling`, :mod:`.logistic`, :mod:`.variance_aware_dueling` — one engine per family, each the
  batched mirror of the reference module of the same name in :mod:`banditbench.policies.neural`.

This file holds only this docstring: a job that imports one engine depends on its own files only.
"""
