"""The grid-wide ``device`` switch: one top-level key that sets the ``device`` parameter of every policy of
the grid that has one (the neural families' seed-batched path: NDB, NVLDB / NLDB, NeuralLog)::

    snakemake --config device=cuda                  # or: --workflow-profile profiles/gpu

``cpu`` or ``cuda``; unset (null, the default) leaves each algorithm's own ``params.device`` (default
``cpu``).  Set, it replaces every algorithm's own value, variants' included, and reaches the cells (what a
simulate job runs): ``policy.params.device``.  Policies without a ``device`` parameter (the linear baselines,
random pairs) are left as they are.  ``cuda`` where torch sees no GPU is refused before any job, naming the
key (``device: 'cuda' was asked for but torch sees no GPU ...``), as an algorithm's own ``params.device``
is.  A policy whose seed-batched path declines a cell's parameters (``Policy.batch`` returns None) runs its
seeds one at a time on the CPU; the job's log says so (:func:`banditbench.simulation.job.run_members`).
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

from .. import registry
from ..errors import key_path

KEY = "device"


def has_device(policy: str, where: str) -> bool:
    """Whether the registered policy ``policy`` takes a ``device`` parameter."""
    return KEY in registry.parameters(registry.get("policy", policy, where).load())


def apply(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The config with the top-level ``device`` set on every algorithm whose policy has a ``device``
    parameter; ``config`` itself when the key is unset."""
    device = config.get(KEY)
    if device is None or not isinstance(config.get("experiments"), Mapping):
        return config
    from ..policies.neural.batched.ops import check_device

    check_device(device, "")
    config = copy.deepcopy(dict(config))
    for name, spec in config["experiments"].items():
        for label, alg in spec["algorithms"].items():
            if has_device(alg["policy"], key_path("experiments", name, "algorithms", label, "policy")):
                alg["params"] = {**alg.get("params", {}), KEY: device}
    return config
