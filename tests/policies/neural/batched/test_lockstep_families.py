"""Lockstep families (issue 37, item 3): registered policy classes whose seed-batched engines declare one
``family`` share a seed-batched block, each member playing its own class's rule and its own per-member parameters; a member's
result is, bit for bit, the one it has in a block of its own class (block independence, :mod:`.batched`)."""

from collections import defaultdict

import numpy as np
import pytest

from banditbench import registry
from banditbench.simulation.job import run_members
from banditbench.simulation.runner import lockstep_key, run_seed_batched

SEEDS = (0, 1)
GEOMETRIC = {"kind": "geometric", "mean": 3, "window": 10}


def _families() -> dict[str, list[str]]:
    families = defaultdict(list)
    for name, entry in registry.policies().items():
        declared = entry.load().engines.get("seed-batched")
        if declared is not None and declared.family is not None:
            families[declared.family].append(name)
    return dict(families)


DUELING = {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4, "utility": "square"}}
LOGISTIC = {"name": "synthetic_logistic", "params": {"latent": "h1", "dimension": 4, "n_arms": 5}}


def _cell(policy: str, **params) -> dict:
    logistic = registry.get("policy", policy).load().feedback_kind == "reward"
    return {
        "experiment": "x",
        "algorithm": f"label-{policy}",
        "delay_label": "geometric",
        "budget": None,
        "horizon": 40 if logistic else 25,
        "environment": LOGISTIC if logistic else DUELING,
        "policy": {"name": policy, "params": {"width": 8, "train_steps": 3, **params}},
        "delay": dict(GEOMETRIC),
    }


def test_the_neural_families_are_lockstep_families():
    families = _families()
    assert sorted(families["neural_linear_dueling"]) == sorted(
        f"{v}_{s}_{r}" for v in ("nvldb", "nldb") for s in ("ucb", "ts") for r in ("asym", "osym", "csym")
    )
    assert sorted(families["neural_dueling"]) == sorted(
        ["ndb_df", "ndb_ignore", "ndb_heuristic", "ndb_heuristic_all", "ndb_zero", "ndb_ucb", "ndb_ts"]
    )
    assert sorted(families["neural_logistic"]) == sorted(
        ["neurallog_ucb1", "neurallog_ucb2", "neurallog_ts1", "neurallog_ts2", "ncbf_ucb"]
    )


@pytest.mark.parametrize("family", sorted(_families()))
def test_a_mixed_block_gives_each_member_its_own_blocks_bytes(family):
    names = _families()[family]
    cells = [_cell(name) for name in names]
    if family == "neural_linear_dueling":  # per-member parameters too: NLDB's zeta, NVLDB's epsilon, a
        cells = [
            _cell(name, **({"zeta": 0.5} if name.startswith("nldb") else {"epsilon": 0.2}), a=0.5 + i / 10)
            for i, name in enumerate(names)
        ]
    if family == "neural_dueling":  # NDB's delay strategies (heuristic's window: the delay's), its nu_T per member
        cells = [_cell(name, nu=0.5 + i / 10) for i, name in enumerate(names)]
    if family == "neural_logistic":  # V_t / W_t, the means, radii and rules of seed 002's five; nu and lam
        cells = [_cell(name, nu=0.5 + i / 10, lam=1.0 + i, train_every=5) for i, name in enumerate(names)]
    assert len({lockstep_key(c) for c in cells}) == 1
    # the engine itself: a CPU job plays NVLDB's seeds one after the other (its declaration's cpu_min_block)
    mixed = iter(run_seed_batched([{**cell, "seed": seed} for cell in cells for seed in SEEDS]))
    for cell in cells:
        own_block = run_seed_batched([{**cell, "seed": seed} for seed in SEEDS])
        for (series, meta, _), (own, own_meta, _) in zip([next(mixed) for _ in SEEDS], own_block):
            assert meta["cell"] == own_meta["cell"] and meta["engine"] == "seed-batched"
            for name in own:
                assert np.array_equal(series[name], own[name]), (cell["policy"]["name"], name)


def test_members_that_differ_in_a_shared_setting_are_refused():
    cells = [{**_cell("nvldb_ucb_asym"), "seed": 0}, {**_cell("nldb_ts_osym", width=12), "seed": 0}]
    assert lockstep_key(cells[0]) != lockstep_key(cells[1])
    with pytest.raises(ValueError, match="'label-nldb_ts_osym' seed 0 differs from the block's first member"):
        run_members(cells)
    other_family = [{**_cell("nvldb_ucb_asym"), "seed": 0}, {**_cell("ndb_ucb"), "seed": 0}]
    with pytest.raises(ValueError, match="differs from the block's first member"):
        run_members(other_family)
