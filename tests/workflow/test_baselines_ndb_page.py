"""docs/baselines.md's NDB section (issue 50): its table is the rendering of the committed measurements
(``benchmarks/authors_ndb.py``), and it names every parameter the NDB presets set."""

from __future__ import annotations

import re

import pytest

from conftest import load_script, ROOT


@pytest.fixture(scope="module")
def ndb():
    return load_script("benchmarks/authors_ndb.py")


def test_the_ndb_block_is_the_rendering_of_the_committed_measurements(ndb):
    measured, reference, meta = ndb.load()
    block = ndb.page_block(ndb.PAGE.read_text())
    assert block == ndb.render(measured, reference, meta), "run: python benchmarks/authors_ndb.py render"
    assert meta["dirty"] is False and re.fullmatch(r"[0-9a-f]{40}", meta["commit"])
    assert f"```bash\n{meta['command']}\n" in block and f"\n| {ndb.LABEL} | " in block
    counts = measured.groupby("preset").size()
    assert sorted(counts.index) == ["authors", "ours"] and counts.nunique() == 1


def test_the_page_names_every_parameter_the_ndb_presets_set():
    from banditbench.policies.neural.dueling_presets import NDB_PRESETS

    page = (ROOT / "docs/baselines.md").read_text()
    assert [name for name in NDB_PRESETS if f"`{name}`" not in page] == []
