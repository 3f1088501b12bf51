"""A simulate job's fixed cost (issue 48): a neural job process loads torch, not its compiler stack.

``torch.use_deterministic_algorithms`` and constructing a ``torch.optim`` optimiser import ``torch._inductor`` /
``torch._dynamo`` (and sympy): about 3.5 s of CPU per job process, more than a 10-seed NeuralLog job's rounds at
T = 500.  A job runs with deterministic kernels all the same.
"""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

CELLS = {
    "neurallog_ucb2": {
        "environment": {
            "name": "synthetic_logistic",
            "params": {"latent": "h1", "dimension": 5, "n_arms": 3, "n_contexts": 50},
        },
        "policy": {"name": "neurallog_ucb2", "params": {"optimizer": "gd", "minibatch": 5, "train_every": 5}},
    },
    "ndb_df": {
        "environment": {
            "name": "synthetic_dueling",
            "params": {"dimension": 3, "n_arms": 4, "utility": "quadratic"},
        },
        "policy": {"name": "ndb_df", "params": {"width": 4, "train_steps": 2}},
    },
}

SCRIPT = """
import json, sys
import torch
from banditbench.simulation.job import run_block
cell = json.loads(sys.argv[1])
run_block(cell, [0, 1])
print(json.dumps({
    "compiler": sorted(m for m in ("torch._dynamo", "torch._inductor", "sympy") if m in sys.modules),
    "deterministic": torch.are_deterministic_algorithms_enabled(),
}))
"""


def test_a_neural_job_runs_with_deterministic_kernels_without_importing_torchs_compiler():
    for name, parts in CELLS.items():
        cell = {"experiment": "x", "algorithm": name, "delay_label": "none", "budget": None, "horizon": 12}
        cell |= parts | {"delay": {"kind": "none"}}
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT, json.dumps(cell)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        seen = json.loads(out.stdout.strip().splitlines()[-1])
        assert seen == {"compiler": [], "deterministic": True}, (name, seen)
