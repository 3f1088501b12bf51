"""The report's captions (workflow/report/*.rst, Jinja templates Snakemake renders) name the metric by its display
name (issue 49: the ``display`` block's names in the report too), as the figures do without one."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from docutils.core import publish_parts
from jinja2 import Environment

from banditbench.configuration.display import Names
from conftest import ROOT

REPORT = ROOT / "workflow" / "report"
#: caption -> (the params naming its metric, its metric param's key)
CAPTIONS = {
    "plot.rst": "main_metric",
    "plot_extra.rst": "metric",
    "plot_panels.rst": "metric",
    "paired_plot.rst": "paired",
    "paired_table.rst": "paired",
    "compute_plot.rst": "main_metric",
    "compute_table.rst": "main_metric",
    "sweep.rst": "main_metric",
}


def _render(caption: str, metric: str, display: dict) -> str:
    """The caption as Snakemake renders it (its Jinja environment; the reST turned into HTML), its text joined."""
    params = {"plot": {"display": display}, "ci_level": 0.95, "spread": "ci", "caption": "Panels."}
    params["paired"] = {"metric": metric, "better": "lower", "interval": "t", "resamples": 9999}
    params["main_metric"] = params["metric"] = metric
    snakemake = SimpleNamespace(
        params=SimpleNamespace(**params),
        wildcards=SimpleNamespace(experiment="exp_one", metric="weak_regret", plot="p"),
    )
    env = Environment(trim_blocks=True, lstrip_blocks=True)
    text = env.from_string((REPORT / caption).read_text()).render(snakemake=snakemake)
    publish_parts(text, writer="html", settings_overrides={"halt_level": 2})  # valid reST
    return " ".join(text.split())


@pytest.mark.parametrize("caption", sorted(CAPTIONS))
@pytest.mark.parametrize(
    "metric, display",
    [
        ("cumulative_regret", {"metrics": {"cumulative_regret": "Regret R(t)"}}),
        ("cumulative_weak_regret", {"metrics": {"weak_regret": "weak regret w(t)"}}),
        ("per_round_weak_regret", {"metrics": {"weak_regret": "weak regret w(t)"}}),
        ("cumulative_weak_regret", {}),
    ],
)
def test_a_caption_names_the_metric_by_its_display_name(caption, metric, display):
    shown = Names.of(display, figure=True).metric(metric)
    text = _render(caption, metric, display)
    assert shown[1:] in text and (shown[0] in text or shown[0].upper() in text), text
    if display:
        rest = text.lower().replace(shown.lower(), "")  # the metric's label nowhere else
        assert metric not in rest and metric.replace("_", " ") not in rest
