"""The engine that plays a cell or block is chosen in one function, :func:`banditbench.simulation.job.engine`
(issue 46): it names the engine of each kind of cell, and every way of running cells (``run_cell``,
``run_block``, ``run_members``, ``banditbench run-one`` and ``run-block``) plays the engine it names."""

import json

import pytest

from banditbench.cli import main
from banditbench.conformance import cell_for
from banditbench.simulation import job, runner
from banditbench.simulation.job import COMPILED, REFERENCE, SEED_BATCHED
from banditbench.storage.resultio import load_result


def _neural(policy="ndb_df", seeds=(1, 2), **params):
    return [{**cell_for(policy, horizon=8, seed=s), "policy": {"name": policy, "params": params}} for s in seeds]


LIPSCHITZ = [cell_for("dlpp", horizon=30)]
NEURAL = _neural(width=8, train_steps=2)
BASELINE = [{**cell, "policy": {"name": "random_pair", "params": {}}} for cell in NEURAL]
PLAIN = [cell_for("ldb_df", horizon=20)]
# NVLDB's engine loses to the single-seed path on a CPU at every measured block size (its cpu_min_block: None);
# NDB-DF's wins from one seed
NVLDB_ON_CPU = _neural("nvldb_ucb_asym", seeds=(1, 2), width=8, train_steps=2)
NDB_ALONE = _neural(seeds=(3,), width=8, train_steps=2)

CASES = {
    "a compiled Lipschitz cell": (LIPSCHITZ, COMPILED, [("single-seed", True)]),
    "a seed-batched neural block": (NEURAL, SEED_BATCHED, [("seed-batched", 2)]),
    "a neural block with a non-batchable policy": (BASELINE, REFERENCE, [("single-seed", False)] * 2),
    "a plain cell": (PLAIN, REFERENCE, [("single-seed", False)]),
    "an NVLDB block on a CPU": (NVLDB_ON_CPU, REFERENCE, [("single-seed", False)] * 2),
    "a one-seed NDB-DF job on a CPU": (NDB_ALONE, SEED_BATCHED, [("seed-batched", 1)]),
}


@pytest.fixture
def paths(monkeypatch):
    """The runner paths the runs took, in order: ``("single-seed", compiled allowed)`` per run, or
    ``("seed-batched", block size)`` per block."""
    seen = []
    single, batched = runner.run_single_seed, runner.run_seed_batched

    def run_single_seed(cell, progress, compiled):
        seen.append(("single-seed", compiled))
        return single(cell, progress, compiled)

    def run_seed_batched(cells):
        seen.append(("seed-batched", len(cells)))
        return batched(cells)

    monkeypatch.setattr(runner, "run_single_seed", run_single_seed)
    monkeypatch.setattr(runner, "run_seed_batched", run_seed_batched)
    return seen


@pytest.mark.parametrize("case", list(CASES))
def test_engine_names_the_engine_of_each_kind_of_cell_and_run_members_plays_it(case, paths):
    cells, named, played = CASES[case]
    assert job.engine(cells) == named
    # without the seed-batched engine (it declined the block; a single-seed run): the compiled or the reference loop
    assert job.engine(cells, batched=False) == (REFERENCE if named == SEED_BATCHED else named)
    # a GPU takes the seed-batched engine wherever the policy declares it
    on_gpu = [
        {**cell, "policy": {**cell["policy"], "params": {**cell["policy"]["params"], "device": "cuda"}}}
        for cell in cells
    ]
    declared = runner.policy_class(cells[0]).engines
    assert (job.engine(on_gpu) == SEED_BATCHED) == (SEED_BATCHED in declared)
    results = job.run_members(cells)
    assert paths == played
    assert [meta["engine"] for _, meta, _ in results] == [
        "seed-batched" if named == SEED_BATCHED else "single-seed"
    ] * len(cells)


def test_a_block_the_seed_batched_engine_declines_is_played_on_the_engine_it_names_without_it(paths, monkeypatch):
    """NeuralLog's theory radius has no batched form (batch() returns None): the members run one at a time, on the
    engine :func:`job.engine` names when asked again without the seed-batched engine."""
    asked = []
    real = job.engine
    monkeypatch.setattr(job, "engine", lambda cells, batched=True: asked.append(batched) or real(cells, batched))
    cells = _neural("neurallog_ucb1", width=4, train_every=4, train_steps=2, radius="theory")
    assert [meta["engine"] for _, meta, _ in job.run_members(cells)] == ["single-seed"] * 2
    assert asked == [True, False] and paths == [("seed-batched", 2), ("single-seed", False), ("single-seed", False)]


@pytest.fixture
def reference_only(monkeypatch):
    """:func:`job.engine` made to name the reference loop for every cell and block; each call's cells recorded."""
    asked = []
    monkeypatch.setattr(job, "engine", lambda cells, batched=True: asked.append(list(cells)) or REFERENCE)
    return asked


def test_run_cell_run_block_and_run_members_follow_the_engine_named(reference_only, paths):
    """Told to use the reference loop, a Lipschitz cell (which declares the compiled engine) and a neural block
    (the seed-batched one) run on the reference loop, one seed at a time."""
    assert job.run_cell(LIPSCHITZ[0])[1]["engine"] == "single-seed"
    job.run_block({k: v for k, v in NEURAL[0].items() if k != "seed"}, [1, 2])
    job.run_members(NEURAL)
    assert paths == [("single-seed", False)] * 5
    assert [[c["policy"]["name"] for c in cells] for cells in reference_only] == [
        ["dlpp"],
        ["ndb_df", "ndb_df"],
        ["ndb_df", "ndb_df"],
    ]


def test_run_one_and_run_block_follow_the_engine_named(reference_only, paths, tmp_path, capsys):
    assert main(["run-one", "--cell", json.dumps(LIPSCHITZ[0]), "--output", str(tmp_path / "one.npz")]) == 0
    cell = json.dumps({k: v for k, v in NEURAL[0].items() if k != "seed"})
    outputs = [str(tmp_path / f"{seed}.npz") for seed in (1, 2)]
    assert main(["run-block", "--cell", cell, "--seeds", "1", "2", "--outputs", *outputs]) == 0
    assert paths == [("single-seed", False)] * 3
    assert [load_result(path)[1]["engine"] for path in [tmp_path / "one.npz", *outputs]] == ["single-seed"] * 3
    assert [len(cells) for cells in reference_only] == [1, 2]
