"""An interactive results page per run: one self-contained HTML file, ``results/<run>/interactive.html``.

The reader picks an experiment, a metric, a delay setting, a budget and the algorithms (select and checkbox
elements) and sees the cumulative curves with their confidence bands (Plotly: zoom, hover, toggling) and the
paired comparison table (each pair's per-seed difference A − B at the table horizons) of that setting.  The
page needs no network: the plotting library (``plotly.min.js`` of the ``plotly`` package) is inlined, and the
data are embedded as JSON, column by column, exactly the curves table's numbers
(``results/<run>/curves/<experiment>.csv``: the statistics on the curve grid) and the paired table's
(``results/<run>/paired/<experiment>.csv``), NaN as ``null``.  Algorithms are shown by their display names and
colours (the experiment's ``plot`` block, :class:`banditbench.analysis.plots.PlotStyle`), the experiments, metrics,
delays and budgets by theirs (its ``display`` names, with the figures' defaults for a label without one: ``no delay``,
``B = 75``, ``cumulative regret``; :class:`banditbench.configuration.display.Names`) in the selectors, the heading,
the axis label and the paired table's note, negative numbers with a true minus (U+2212).  The selectors' values stay
the labels, and so do the address's parameters.

The selection is kept in the page's address: ``interactive.html#experiment=E&metric=M&delay=D&budget=B&algorithms=A,B``
opens with it (a link to one view), and every change rewrites it.  A parameter left out, or naming nothing the
experiment has, keeps the default: the experiment's plot metric, its first delay and budget, every algorithm.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any, Mapping

import pandas as pd
from matplotlib.colors import to_hex

from ..configuration.display import Names
from ..storage.resultio import atomic_write_bytes
from .aggregate import read_tidy
from .plots import PlotStyle

#: the curves table's columns the page embeds
CURVE_COLUMNS = ["algorithm", "delay", "budget", "metric", "t", "mean", "ci_low", "ci_high", "n"]
#: the paired table's columns the page embeds
PAIRED_COLUMNS = ["a", "b", "delay", "budget", "t", "metric", "better", "mean", "ci_low", "ci_high", "n"]
PAIRED_COLUMNS += ["a_better", "interval", "level", "diverged"]
#: the id of the ``<script type="application/json">`` element holding the data
DATA_ID = "banditbench-data"


def _plain(value: Any) -> Any:
    """A JSON value: numpy scalars as Python numbers, NaN and infinities as None."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _columns(df: pd.DataFrame, columns: list[str]) -> dict[str, list]:
    return {c: [_plain(v) for v in df[c].tolist()] for c in columns if c in df.columns}


def experiment_data(
    curves: str | Path | pd.DataFrame,
    paired: str | Path | pd.DataFrame | None = None,
    plot: Mapping[str, Any] | None = None,
    main_metric: str | None = None,
    ci_level: float | None = None,
    description: str = "",
    name: str | None = None,
) -> dict[str, Any]:
    """What the page holds of one experiment (``name``): its curves (and paired table, when it has one) column by
    column, its algorithms, metrics, delays and budgets in the tables' order, each algorithm's display name and
    colour, and the display names of the experiment, its metrics, delays and budgets (:func:`shown_names`)."""
    df = read_tidy(curves, "curves table") if not isinstance(curves, pd.DataFrame) else curves
    df = df.astype({"algorithm": str, "delay": str, "budget": str, "metric": str})
    style = PlotStyle.of(plot)
    delays, budgets = list(dict.fromkeys(df["delay"])), list(dict.fromkeys(df["budget"]))
    algorithms = list(dict.fromkeys(df["algorithm"]))
    metrics = list(dict.fromkeys(df["metric"]))
    pairs = None
    if paired is not None:
        p = (
            pd.read_csv(paired, dtype={"a": str, "b": str, "delay": str, "budget": str})
            if not isinstance(paired, pd.DataFrame)
            else paired
        )
        pairs = _columns(p, PAIRED_COLUMNS)
    return {
        "description": description,
        "ci_level": ci_level,
        "main_metric": main_metric if main_metric in metrics else metrics[0],
        "algorithms": algorithms,
        "metrics": metrics,
        "delays": delays,
        "budgets": budgets,
        "names": {a: style.name(a) for a in algorithms},
        **shown_names((plot or {}).get("display"), name, metrics, delays, budgets),
        "colors": {a: to_hex(c) for a, c in style.colours(algorithms).items()},
        "curves": _columns(df, CURVE_COLUMNS),
        "paired": pairs,
    }


def shown_names(
    display: Mapping[str, Any] | None,
    experiment: str | None,
    metrics: list[str],
    delays: list[str],
    budgets: list[str],
) -> dict[str, Any]:
    """The page's names (``display``: the experiment's display names) as the figures give them
    (:class:`banditbench.configuration.display.Names`): ``display_name`` the experiment's (as the figures'
    titles: its label without one), ``metric_names``, ``delay_names`` and ``budget_names`` label by label, with
    the figures' defaults (``cumulative regret``, ``no delay``, ``B = 75``; a budget ``none``: ``no budget``)."""
    names = Names.of(display, figure=True)

    def plain(text: str) -> str:
        return text.replace("\u00a0", " ")  # a figure's unbreakable spaces (B = 75 on one line)

    return {
        "display_name": (display or {}).get("experiments", {}).get(experiment, experiment) if experiment else None,
        "metric_names": {m: plain(names.metric(m)) for m in metrics},
        "delay_names": {d: plain(names.delay(d)) for d in delays},
        "budget_names": {b: "no budget" if b == "none" else plain(names.budget(b)) for b in budgets},
    }


def page(run: str, experiments: Mapping[str, Mapping[str, Any]], plotly_js: str | None = None) -> str:
    """The page of a run: ``experiments`` (name -> :func:`experiment_data`) embedded as JSON, the plotting
    library (``plotly_js``, default the installed ``plotly`` package's) and the page's script inlined."""
    if plotly_js is None:
        from plotly.offline import get_plotlyjs

        plotly_js = get_plotlyjs()
    data = json.dumps({"run": run, "experiments": experiments}, ensure_ascii=False, allow_nan=False)
    data = data.replace("</", "<\\/")  # no "</script>" inside the script element
    title = f"banditbench {run}: interactive results"
    return _TEMPLATE.format(
        title=html.escape(title),
        style=_STYLE,
        data_id=DATA_ID,
        data=data,
        plotly=plotly_js.replace("</script", "<\\/script"),
        script=_SCRIPT,
    )


def embedded_data(page_html: str) -> dict[str, Any]:
    """The data a page embeds (:func:`page`), read back."""
    start = page_html.index(f'<script type="application/json" id="{DATA_ID}">') + len(
        f'<script type="application/json" id="{DATA_ID}">'
    )
    return json.loads(page_html[start : page_html.index("</script>", start)].replace("<\\/", "</"))


def write_interactive(
    run: str,
    curves: Mapping[str, str | Path],
    paired: Mapping[str, str | Path],
    output: str | Path,
    plots: Mapping[str, Mapping[str, Any]] | None = None,
    main_metrics: Mapping[str, str] | None = None,
    ci_levels: Mapping[str, float] | None = None,
    descriptions: Mapping[str, str] | None = None,
) -> None:
    """Write the run's page to ``output``: per experiment its curves table (``curves``: name -> file), its paired
    table where it has one (``paired``), its ``plot`` block, plot metric, interval level and description."""
    plots, main_metrics, ci_levels, descriptions = (x or {} for x in (plots, main_metrics, ci_levels, descriptions))
    experiments = {
        name: experiment_data(
            path,
            paired.get(name),
            plots.get(name),
            main_metrics.get(name),
            ci_levels.get(name),
            descriptions.get(name, ""),
            name,
        )
        for name, path in curves.items()
    }
    atomic_write_bytes(output, page(run, experiments).encode())


_STYLE = """
body { font-family: system-ui, sans-serif; font-size: 14px; margin: 1em; color: #222; }
h1 { font-size: 1.3em; margin: 0 0 0.4em; } h2 { font-size: 1.1em; margin: 0.8em 0 0.3em; }
#controls { display: flex; flex-wrap: wrap; gap: 0.6em 1.4em; align-items: flex-start; }
#controls label { display: inline-block; margin-right: 0.6em; white-space: nowrap; }
#controls fieldset { border: 1px solid #ddd; padding: 0.2em 0.6em; margin: 0; }
#plot { width: 100%; height: 480px; }
table { border-collapse: collapse; margin: 0.4em 0 1em; }
th, td { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; text-align: left; } td:first-child { text-align: left; }
.note { color: #555; max-width: 60em; }
"""

_TEMPLATE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title><style>{style}</style>
<script>{plotly}</script>
</head>
<body>
<h1>{title}</h1>
<div id="controls">
<label>experiment <select id="experiment"></select></label>
<label>metric <select id="metric"></select></label>
<label>delay <select id="delay"></select></label>
<label>budget <select id="budget"></select></label>
<fieldset id="algorithms"><legend>algorithms</legend></fieldset>
</div>
<p id="description" class="note"></p>
<h2 id="heading"></h2>
<div id="plot"></div>
<p id="band-note" class="note"></p>
<h2>Paired comparisons</h2>
<p id="paired-note" class="note"></p>
<table id="paired"></table>
<script type="application/json" id="{data_id}">{data}</script>
<script>{script}</script>
</body></html>
"""

_SCRIPT = r"""
"use strict";
const DATA = JSON.parse(document.getElementById("banditbench-data").textContent);
const MINUS = "\u2212";
const $ = (id) => document.getElementById(id);
const state = {};

function num(x, d = 2) { return x === null ? "NaN" : x.toFixed(d).replace("-", MINUS); }
function setting(exp, delay, budget) {
  return exp.delay_names[delay] + (budget !== "none" ? ", " + exp.budget_names[budget] : "");
}
function rgba(hex, alpha) {
  const v = parseInt(hex.slice(1), 16);
  return "rgba(" + [(v >> 16) & 255, (v >> 8) & 255, v & 255, alpha].join(",") + ")";
}
function options(select, values, labels) {
  select.replaceChildren(...values.map((v) => {
    const o = document.createElement("option");
    o.value = v; o.textContent = labels ? labels[v] : v;
    return o;
  }));
}

function experimentChanged() {
  const exp = DATA.experiments[$("experiment").value];
  options($("metric"), exp.metrics, exp.metric_names);
  $("metric").value = exp.main_metric;
  options($("delay"), exp.delays, exp.delay_names);
  options($("budget"), exp.budgets, exp.budget_names);
  $("budget").disabled = exp.budgets.length < 2;
  const box = $("algorithms");
  box.querySelectorAll("label").forEach((l) => l.remove());
  for (const a of exp.algorithms) {
    const label = document.createElement("label");
    const check = document.createElement("input");
    check.type = "checkbox"; check.value = a; check.checked = true;
    check.addEventListener("change", render);
    label.append(check, " " + exp.names[a]);
    box.append(label);
  }
  $("description").textContent = exp.description || "";
  render();
}

function readState() {
  state.experiment = $("experiment").value;
  state.metric = $("metric").value;
  state.delay = $("delay").value;
  state.budget = $("budget").value;
  state.algorithms = [...$("algorithms").querySelectorAll("input:checked")].map((c) => c.value);
}

function writeHash() {
  const p = new URLSearchParams({experiment: state.experiment, metric: state.metric, delay: state.delay,
    budget: state.budget, algorithms: state.algorithms.join(",")});
  history.replaceState(null, "", "#" + p.toString());
}

function rows(columns, keep) {
  const keys = Object.keys(columns), n = columns[keys[0]].length, out = [];
  for (let i = 0; i < n; i++) {
    const r = {};
    for (const k of keys) r[k] = columns[k][i];
    if (keep(r)) out.push(r);
  }
  return out;
}

function render() {
  readState();
  const exp = DATA.experiments[state.experiment];
  const traces = [];
  for (const a of state.algorithms) {
    const r = rows(exp.curves, (x) => x.algorithm === a && x.metric === state.metric &&
      x.delay === state.delay && x.budget === state.budget).sort((p, q) => p.t - q.t);
    if (!r.length) continue;
    const t = r.map((x) => x.t), colour = exp.colors[a];
    traces.push({x: t.concat([...t].reverse()), y: r.map((x) => x.ci_high).concat(r.map((x) => x.ci_low).reverse()),
      fill: "toself", fillcolor: rgba(colour, 0.2), line: {width: 0}, hoverinfo: "skip", showlegend: false,
      legendgroup: a, type: "scatter", mode: "lines"});
    traces.push({x: t, y: r.map((x) => x.mean), name: exp.names[a], legendgroup: a, type: "scatter",
      mode: "lines", line: {color: colour, width: 2},
      customdata: r.map((x) => [x.ci_low, x.ci_high, x.n]),
      hovertemplate: exp.names[a] + ": %{y:.2f} [%{customdata[0]:.2f}, %{customdata[1]:.2f}], n = %{customdata[2]}<extra>t = %{x}</extra>"});
  }
  const metric = exp.metric_names[state.metric];
  const heading = (exp.display_name || state.experiment) + ": " + metric + ", " + setting(exp, state.delay, state.budget);
  $("heading").textContent = heading;
  document.title = "banditbench " + DATA.run + ": " + heading;
  Plotly.react("plot", traces, {
    margin: {t: 20, r: 10}, xaxis: {title: {text: "round t"}}, yaxis: {title: {text: metric}},
    legend: {orientation: "h", y: -0.18}, hovermode: "closest"}, {responsive: true, displaylogo: false});
  $("plot").dataset.state = JSON.stringify(state);
  $("band-note").textContent = exp.ci_level ? "Bands: " + (100 * exp.ci_level) + " % Student-t CI across seeds." : "";
  pairedTable(exp);
  writeHash();
}

function pairedTable(exp) {
  const table = $("paired");
  table.replaceChildren();
  if (!exp.paired) {
    $("paired-note").textContent = "This experiment has no paired comparisons (one algorithm, or paired: false).";
    return;
  }
  const chosen = new Set(state.algorithms);
  const r = rows(exp.paired, (x) => x.delay === state.delay && x.budget === state.budget && chosen.has(x.a) && chosen.has(x.b));
  const first = exp.paired;
  const metric = exp.metric_names[first.metric[0]] || first.metric[0].replace(/_/g, " "), better = first.better[0];
  const level = first.level[0], interval = first.interval[0] === "t" ? "Student-t" : "BCa bootstrap";
  $("paired-note").textContent = "A " + MINUS + " B: the per-seed difference of " + metric + " on the same seeds (" +
    better + " is better); mean \u00b1 half-width (or [low, high]) of the " + (100 * level) + " % " + interval +
    " interval; in parentheses the seeds on which A is better. Pairs whose two algorithms are both chosen.";
  if (!r.length) return;
  const horizons = [...new Set(r.map((x) => x.t))].sort((p, q) => p - q);
  const pairs = [...new Map(r.map((x) => [x.a + "\u0000" + x.b, x])).values()];
  const head = table.insertRow();
  for (const h of ["A " + MINUS + " B", ...horizons.map((t) => "t = " + t)]) {
    const th = document.createElement("th"); th.textContent = h; head.append(th);
  }
  for (const p of pairs) {
    const tr = table.insertRow();
    tr.insertCell().textContent = exp.names[p.a] + " " + MINUS + " " + exp.names[p.b];
    for (const t of horizons) {
      const x = r.find((y) => y.a === p.a && y.b === p.b && y.t === t);
      let cell = "";
      if (x) {
        cell = x.ci_high === null ? num(x.mean) : x.interval === "t" ? num(x.mean) + " \u00b1 " + num(x.ci_high - x.mean)
          : num(x.mean) + " [" + num(x.ci_low) + ", " + num(x.ci_high) + "]";
        cell += " (" + Math.round(x.a_better * x.n) + "/" + x.n + ")";
        if (x.diverged) cell += " (" + x.diverged + " diverged)";
      }
      tr.insertCell().textContent = cell;
    }
  }
}

function applyHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const pick = (id, value) => {
    const select = $(id);
    if (value !== null && [...select.options].some((o) => o.value === value) && select.value !== value) {
      select.value = value;
      select.dispatchEvent(new Event("change"));
    }
  };
  pick("experiment", p.get("experiment"));
  pick("metric", p.get("metric"));
  pick("delay", p.get("delay"));
  pick("budget", p.get("budget"));
  if (p.get("algorithms") !== null) {
    const wanted = new Set(p.get("algorithms").split(","));
    for (const c of $("algorithms").querySelectorAll("input")) {
      if (c.checked !== wanted.has(c.value)) { c.checked = wanted.has(c.value); c.dispatchEvent(new Event("change")); }
    }
  }
}

options($("experiment"), Object.keys(DATA.experiments),
  Object.fromEntries(Object.entries(DATA.experiments).map(([e, x]) => [e, x.display_name || e])));
$("experiment").addEventListener("change", experimentChanged);
for (const id of ["metric", "delay", "budget"]) $(id).addEventListener("change", render);
window.addEventListener("hashchange", applyHash);
const preset = location.hash;
experimentChanged();
if (preset) { history.replaceState(null, "", preset); applyHash(); }
"""
