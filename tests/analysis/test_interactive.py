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
from banditbench.analysis.interactive import DATA_ID, embedded_data, write_interactive
from banditbench.analysis.paired import write_paired
from banditbench.storage.resultio import save_result
from conftest import CELL

T = 30
#: per algorithm, the per-round regret's level: the curves differ visibly between algorithms and delays
LEVELS = {"ldb_df": 0.2, "ldb_ignore": 0.5, "random": 1.0}
DELAYS = {"none": 1.0, "geo": 1.6}
NAMES = {"ldb_df": "LDB-DF (ours)", "random": "uniform pairs"}


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
        plots={"dueling": {"names": NAMES}},
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
    heading = {name: re.search(r'<h2 id="heading">(.*?)</h2>', dom).group(1) for name, dom in doms.items()}
    assert heading == {
        "default": "dueling: cumulative_regret, delay none",
        "chosen": "dueling: cumulative_weak_regret, delay geo",
        "other": "logistic: cumulative_regret, delay none",
    }
    assert "<title>banditbench default: dueling: cumulative_weak_regret, delay geo</title>" in doms["chosen"]
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
