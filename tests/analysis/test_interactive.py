"""The interactive results page (issue 49): one self-contained HTML file whose embedded data are the curves and
paired tables, and which a real browser (headless Chromium) draws and redraws as the selectors change."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from plotly.offline import get_plotlyjs

from banditbench.analysis.aggregate import aggregate_experiment
from banditbench.analysis.interactive import DATA_ID, embedded_data, shown_names, write_interactive
from banditbench.analysis.paired import write_paired
from banditbench.storage.resultio import save_result
from conftest import CELL

T = 30
#: per algorithm, the per-round regret's level: the curves differ visibly between algorithms and delays
LEVELS = {"ldb_df": 0.2, "ldb_ignore": 0.5, "random": 1.0}
DELAYS = {"none": 1.0, "geo": 1.6}
NAMES = {"ldb_df": "LDB-DF (ours)", "random": "uniform pairs"}
#: the dueling experiment's other display names (the logistic one has none: the figures' defaults)
DISPLAY = {
    "experiments": {"dueling": "Duelling, delayed"},
    "metrics": {"cumulative_regret": "Regret R(t)"},
    "delays": {"geo": "Geometric, M = 20"},
}


def _experiment(folder, name, levels=LEVELS, delays=DELAYS, seeds=4, paired=True):
    """An experiment's curves (and paired) CSVs from result files, through the aggregation that writes them."""
    rng = np.random.default_rng(len(name))
    runs = []
    for alg, level in levels.items():
        for delay, scale in delays.items():
            for seed in range(seeds):
                cell = {"experiment": name, "algorithm": alg, "delay_label": delay, "budget": None}
                cell |= {"horizon": T, "seed": seed}
                path = folder / "runs" / name / alg / delay / "none" / CELL / f"{seed}.npz"
                regret = level * scale * (1 + 0.3 * rng.random(T))
                series = {"regret": regret, "weak_regret": regret / 2}
                save_result(path, series, {"cell": cell, "metrics": ["regret", "weak_regret"]}, {"wall_time_s": 0.1})
                runs.append(str(path))
    out = {k: folder / f"{name}.{k}" for k in ("csv", "md", "tex", "curves.csv", "parquet")}
    aggregate_experiment(
        runs, name, [10, 20, T], out["csv"], out["md"], out["tex"], out["curves.csv"], "cumulative_regret",
        seeds_file=out["parquet"], workers=1,
    )  # fmt: skip
    if not paired:
        return out["curves.csv"], None
    first, *others = levels
    spec = {"pairs": [[first, b] for b in others], "metric": "cumulative_regret", "better": "lower", "interval": "t"}
    files = {k: folder / f"{name}.paired.{k}" for k in ("csv", "curves.csv", "md", "tex", "html")}
    write_paired(out["parquet"], name, spec, *files.values())
    return out["curves.csv"], files["csv"]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("interactive")
    curves, paired = _experiment(folder, "dueling")
    other, _ = _experiment(folder, "logistic", {"neural": 0.3, "linear": 0.4}, {"none": 1.0}, paired=False)
    out = folder / "interactive.html"
    write_interactive(
        "default",
        {"dueling": curves, "logistic": other},
        {"dueling": paired},
        out,
        plots={"dueling": {"names": NAMES, "display": DISPLAY}},
        main_metrics={"dueling": "cumulative_regret", "logistic": "cumulative_regret"},
        ci_levels={"dueling": 0.95, "logistic": 0.9},
    )
    return {"html": out, "curves": curves, "paired": paired, "other": other}


def test_the_page_is_self_contained_and_embeds_the_curves_and_paired_tables(page):
    text = page["html"].read_text()
    # nothing is fetched: no script or style sheet from elsewhere, the plotting library inlined
    assert not re.search(r"<script[^>]*\bsrc\s*=", text, re.I) and not re.search(r"<link[^>]*\bhref\s*=", text, re.I)
    markup = re.sub(r"<script[^>]*>.*?</script>", "<script></script>", text, flags=re.S)  # the scripts' text aside
    assert not re.search(r"(https?:)?//", markup, re.I) and markup.count("<script") == 3
    assert get_plotlyjs() in text and "Plotly.react" in text  # the library inlined, and the page's own script
    assert text.count(f'id="{DATA_ID}"') == 1
    data = embedded_data(text)
    assert data["run"] == "default" and list(data["experiments"]) == ["dueling", "logistic"]
    dueling = data["experiments"]["dueling"]
    for name, csv in (("dueling", page["curves"]), ("logistic", page["other"])):
        embedded = pd.DataFrame(data["experiments"][name]["curves"])
        expected = pd.read_csv(csv, dtype={"algorithm": str, "delay": str, "budget": str})[embedded.columns]
        pd.testing.assert_frame_equal(embedded, expected, check_exact=True, check_dtype=False)
    embedded = pd.DataFrame(dueling["paired"])
    expected = pd.read_csv(page["paired"], dtype={"a": str, "b": str, "delay": str, "budget": str})[embedded.columns]
    pd.testing.assert_frame_equal(embedded, expected, check_exact=True, check_dtype=False)
    assert data["experiments"]["logistic"]["paired"] is None
    assert dueling["names"] == {"ldb_df": "LDB-DF (ours)", "ldb_ignore": "ldb_ignore", "random": "uniform pairs"}
    assert dueling["metrics"] == ["cumulative_regret", "cumulative_weak_regret"]
    assert dueling["delays"] == ["none", "geo"] and dueling["budgets"] == ["none"]
    # the experiment, metrics, delays and budgets by their display names, else the figures' defaults
    assert (
        dueling["display_name"] == "Duelling, delayed" and data["experiments"]["logistic"]["display_name"] == "logistic"
    )
    assert dueling["metric_names"] == {
        "cumulative_regret": "Regret R(t)",
        "cumulative_weak_regret": "cumulative weak regret",
    }
    assert dueling["delay_names"] == {"none": "no delay", "geo": "Geometric, M = 20"}
    assert dueling["budget_names"] == {"none": "no budget"}
    assert data["experiments"]["logistic"]["metric_names"]["cumulative_regret"] == "cumulative regret"


def test_the_page_names_budgets_and_per_round_metrics_as_the_figures_do():
    display = {"budgets": {75: "small budget"}, "metrics": {"regret": "regret r(t)"}}
    shown = shown_names(display, "e", ["cumulative_regret", "per_round_regret"], ["none"], ["75", "225", "none"])
    assert shown["budget_names"] == {"75": "small budget", "225": "B = 225", "none": "no budget"}
    assert shown["metric_names"] == {
        "cumulative_regret": "cumulative regret r(t)",
        "per_round_regret": "average regret r(t)",
    }


CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


def _browse(url, tmp_path, name):
    """Headless Chromium on ``url``, its scripts given time to run: the screenshot's bytes and the DOM as drawn."""
    shot = tmp_path / f"{name}.png"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]
    cmd += [f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,1100", "--virtual-time-budget=3000"]
    run = subprocess.run([*cmd, f"--screenshot={shot}", "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    return shot.read_bytes(), run.stdout


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium; CI does)")
def test_a_browser_draws_the_chosen_setting_and_redraws_when_it_changes(page, tmp_path):
    """The selectors preset from the address (the page's script sets them and fires their change events, as a
    reader's choice does): another delay, metric and algorithms, then another experiment, each redraw differs."""
    url = page["html"].resolve().as_uri()
    views = {
        "default": "",  # the first experiment, its plot metric, the first delay, every algorithm
        "chosen": "#delay=geo&algorithms=ldb_df,random&metric=cumulative_weak_regret",
        "other": "#experiment=logistic",
    }
    shots, doms = {}, {}
    for name, fragment in views.items():
        shots[name], doms[name] = _browse(url + fragment, tmp_path, name)
        assert shots[name][:8] == b"\x89PNG\r\n\x1a\n" and len(shots[name]) > 20_000
    # every change of the selectors redraws the plot
    assert len(set(shots.values())) == len(views)
    # the heading, the selectors and the axis label by the display names (the figures' defaults without), the
    # selectors' values the labels (the address's parameters)
    heading = {name: re.search(r'<h2 id="heading">(.*?)</h2>', dom).group(1) for name, dom in doms.items()}
    assert heading == {
        "default": "Duelling, delayed: Regret R(t), no delay",
        "chosen": "Duelling, delayed: cumulative weak regret, Geometric, M = 20",
        "other": "logistic: cumulative regret, no delay",
    }
    assert (
        "<title>banditbench default: Duelling, delayed: cumulative weak regret, Geometric, M = 20</title>"
        in doms["chosen"]
    )
    options = {
        name: {
            k: re.findall(r'<option value="([^"]*)">([^<]*)<', v)
            for k, v in re.findall(r'<select id="(\w+)"[^>]*>(.*?)</select>', dom, re.S)
        }
        for name, dom in doms.items()
    }
    assert options["chosen"] == {
        "experiment": [("dueling", "Duelling, delayed"), ("logistic", "logistic")],
        "metric": [("cumulative_regret", "Regret R(t)"), ("cumulative_weak_regret", "cumulative weak regret")],
        "delay": [("none", "no delay"), ("geo", "Geometric, M = 20")],
        "budget": [("none", "no budget")],
    }
    assert options["other"]["metric"] == [
        ("cumulative_regret", "cumulative regret"),
        ("cumulative_weak_regret", "cumulative weak regret"),
    ]
    ytitle = {name: re.findall(r'class="g-ytitle".*?>([^<]*)</text>', dom, re.S) for name, dom in doms.items()}
    assert ytitle == {"default": ["Regret R(t)"], "chosen": ["cumulative weak regret"], "other": ["cumulative regret"]}
    legend = {name: re.findall(r'class="legendtext"[^>]*>([^<]*)<', dom) for name, dom in doms.items()}
    assert legend == {
        "default": ["LDB-DF (ours)", "ldb_ignore", "uniform pairs"],
        "chosen": ["LDB-DF (ours)", "uniform pairs"],
        "other": ["neural", "linear"],
    }
    # the paired table of the chosen setting: the pairs of the chosen algorithms, the differences with a true minus
    assert "LDB-DF (ours) − ldb_ignore" in doms["default"] and "LDB-DF (ours) − uniform pairs" in doms["chosen"]
    assert "LDB-DF (ours) − ldb_ignore" not in doms["chosen"] and "no paired comparisons" in doms["other"]
    assert re.search(r"<td>−\d+\.\d\d ± \d+\.\d\d \(4/4\)</td>", doms["chosen"])
    assert "the per-seed difference of Regret R(t) on the same seeds" in doms["chosen"]
