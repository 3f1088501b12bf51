"""docs/baselines.md (issue 50): its table is the rendering of the committed measurements
(``benchmarks/authors_baselines.py``), and it names every parameter a preset sets."""

from __future__ import annotations

import re

import pytest

from conftest import load_script, ROOT


@pytest.fixture(scope="module")
def baselines():
    return load_script("benchmarks/authors_baselines.py")


def test_the_page_block_is_the_rendering_of_the_committed_measurements(baselines):
    measured, reference, meta = baselines.load()
    block = baselines.page_block(baselines.PAGE.read_text())
    assert block == baselines.render(measured, reference, meta), "run: python benchmarks/authors_baselines.py render"
    assert meta["dirty"] is False and re.fullmatch(r"[0-9a-f]{40}", meta["commit"])
    assert f"```bash\n{meta['command']}\n" in block
    for label in baselines.ALGORITHMS:
        assert f"\n| {label} | " in block
    counts = measured.groupby(["algorithm", "preset"]).size()
    assert len(counts) == 2 * len(baselines.ALGORITHMS) and counts.nunique() == 1


def test_the_page_names_every_parameter_a_preset_sets():
    from banditbench.policies import contextual_dueling, variance_aware_dueling

    page = (ROOT / "docs/baselines.md").read_text()
    names = [
        *contextual_dueling.SHARED_PRESETS,
        *contextual_dueling.COLSTIM_PRESETS,
        "beta",
        *variance_aware_dueling.PRESETS,
    ]
    missing = [name for name in names if f"`{name}`" not in page]
    assert missing == []
