"""The differential test of issue 50 for NDB-UCB: our ``ndb_ucb`` with ``preset: authors`` on issue 50's neural dueling
task (``fixed_arm_dueling``: d = 5, K = 10, ``(theta^T x)^2``) against reference numbers made once from the authors'
code (xqlin98/APOHF at 26eea14, ``NeuralDBDiag``; ``tests/data/authors_ndb_reference.csv``, how:
``tests/data/authors_ndb_reference.md``).

Pooled over the seeds, the 95 % two-sample interval of the difference of the mean cumulative regret at T (ours -
theirs) must contain 0 or lie within 10 % of the authors' mean (``benchmarks/authors_baselines.py``'s
``agreement``; the full size, T = 300 on 20 seeds, is ``benchmarks/authors_ndb.py``'s table on docs/baselines.md),
and neither side may play an arm against itself.  Here T = 100 and the same 16 seeds (the same instances and
outcome streams) on both sides, of the reference's 20: about 20 s of CPU.
"""

from __future__ import annotations


import pandas as pd
import pytest

from conftest import load_script

HORIZON, SEEDS = 100, 16
#: seeds per horizon in the reference file, and its horizons (the test's and the table's)
REFERENCE_SEEDS, REFERENCE_HORIZONS = 20, {100, 300}


@pytest.fixture(scope="module")
def ndb():
    return load_script("benchmarks/authors_ndb.py")


@pytest.fixture(scope="module")
def reference(ndb):
    return pd.read_csv(ndb.REFERENCE)


@pytest.mark.slow
def test_ours_under_the_authors_preset_agrees_with_the_authors_code(ndb, reference):
    theirs = reference[(reference["horizon"] == HORIZON) & (reference["seed"] < SEEDS)]
    assert sorted(theirs["seed"]) == list(range(SEEDS))
    ours = ndb.measure({"preset": "authors"}, range(SEEDS), HORIZON)
    result = ndb.agreement(ours["cumulative_regret"], theirs["cumulative_regret"])
    assert result["agrees"], result
    assert ours["self_duels"].sum() == 0 and theirs["self_duels"].sum() == 0


def test_the_reference_data_say_how_they_were_made(ndb, reference):
    readme = ndb.REFERENCE.with_suffix(".md").read_text()
    for needed in ("26eea14b1f89efc1b6d61bed8d154f44fa236b79", "benchmarks/authors_ndb_reference.py", "git clone"):
        assert needed in readme
    assert list(reference.columns) == ["algorithm", "horizon", "steps", "seed", "cumulative_regret", "self_duels"]
    counts = reference.groupby("horizon").size()
    assert set(counts.index) == REFERENCE_HORIZONS and (counts == REFERENCE_SEEDS).all()
    assert set(reference["steps"]) == {30}  # the preset's train_steps: the class's default
