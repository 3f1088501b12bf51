"""Paired comparisons: the per-seed difference ``A - B`` of an experiment's headline metric.

For one seed every algorithm meets the same environment draws and delays (:mod:`banditbench.configuration.comparisons`),
so the seed-by-seed difference cancels what the seeds share, and its interval — far narrower than the
two algorithms' separate intervals — is the one that says whether A beats B.  From the experiment's
per-seed table (:mod:`banditbench.analysis.seedtable`), for each configured pair (A, B), each delay
setting and budget, and each round t of the table horizons and the curve grid: the differences
``d_s = x_A,s(t) - x_B,s(t)`` over the seeds s both ran (the same seeds, matched by seed number; any
seed one of them lacks is an error), and

* ``mean``, ``ci_low``/``ci_high`` — the interval of the mean difference at ``ci_level``: Student-t
  (``interval: t``, the default) or a BCa bootstrap (``interval: bootstrap``, ``scipy.stats.bootstrap``
  with ``resamples`` resamples and a fixed seed);
* ``sd`` — the differences' standard deviation; ``n`` — the number of seeds;
* ``a_better`` / ``tied`` — the share of seeds on which A's value is better (``better``: lower for
  regret, higher for reward) / equal.

Written as the tidy ``results/<run>/paired/<experiment>.csv`` (table horizons) and
``results/<run>/paired/curves/<experiment>.csv`` (curve grid), the human tables (Markdown, LaTeX, HTML:
the final horizon first, then every table horizon; ``mean ± half-width`` for a t interval,
``mean [low, high]`` for a bootstrap one, ``mean ± sd`` with ``spread: sd``; every caption names the
interval, its level and the number of seeds; the algorithms by their display names, ``plot.names``, the
experiment and the metric by theirs, ``display``; negative numbers with a true minus) and the difference curves with their bands
(``results/<run>/paired/<experiment>.{pdf,png}``).

A seed on which A or B diverged (:func:`banditbench.simulation.job.run_cell`: its policy's scores became
NaN or infinite and the run stopped) is left out of the pair's differences and counted in the column
``diverged``; a table cell adds ``(k of n seeds diverged)``, or reads ``diverged (n of n seeds)``.
"""

from __future__ import annotations

import html
import re
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..configuration.display import Names
from ..configuration.grid import DEFAULT_CI_LEVEL
from ..envs.preference import LATE_SHARE, LATE_SUMMARY
from ..storage.resultio import atomic_write_bytes
from . import latex
from .aggregate import ci_percent, csv_bytes, number, settings, t_quantile, with_display
from .pages import html_page
from .seedtable import curve_grid, diverged_runs, read_seeds

COLUMNS = [
    "experiment",
    "a",
    "b",
    "delay",
    "budget",
    "t",
    "metric",
    "better",
    "mean",
    "ci_low",
    "ci_high",
    "sd",
    "n",
    "a_better",
    "tied",
    "interval",
    "level",
    "diverged",
]
INTERVAL_NAMES = {"t": "Student-t", "bootstrap": "BCa bootstrap"}
#: bootstrap values held at once (resamples x seeds x rounds), bounding its memory
_BOOTSTRAP_BATCH_VALUES = 20_000_000


def paired_interval(
    d: np.ndarray, level: float = DEFAULT_CI_LEVEL, interval: str = "t", resamples: int = 9999, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean, interval bounds and standard deviation of the differences ``d`` (rows seeds, columns rounds).

    ``interval``: ``t`` (mean ± t_{n-1} sd / sqrt(n)) or ``bootstrap`` (BCa, ``resamples`` resamples of
    the seeds drawn from ``numpy.random.default_rng(seed)``).  Columns whose differences are all equal get
    the point interval; with one seed the bounds are NaN.
    """
    d = np.asarray(d, dtype=float)
    if d.ndim == 1:
        d = d[:, None]
    n = d.shape[0]
    if n == 0:  # every seed diverged
        nan = np.full(d.shape[1], np.nan)
        return nan, nan.copy(), nan.copy(), nan.copy()
    mean = d.mean(axis=0)
    sd = d.std(axis=0, ddof=1) if n > 1 else np.full_like(mean, np.nan)
    if n < 2:
        nan = np.full_like(mean, np.nan)
        return mean, nan, nan.copy(), sd
    if interval == "t":
        half = t_quantile(0.5 + level / 2, n - 1) * sd / np.sqrt(n)
        return mean, mean - half, mean + half, sd
    if interval != "bootstrap":
        raise ValueError(f"interval must be 't' or 'bootstrap', got {interval!r}")
    low, high = mean.copy(), mean.copy()
    varies = np.ptp(d, axis=0) > 0
    if varies.any():
        from scipy import stats  # here only: importing scipy.stats costs each job ~1.5 s

        sub = d[:, varies]
        batch = max(1, _BOOTSTRAP_BATCH_VALUES // (n * sub.shape[1]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BCa's warning on few distinct values: the bounds say it
            res = stats.bootstrap(
                (sub,),
                np.mean,
                axis=0,
                vectorized=True,
                n_resamples=resamples,
                confidence_level=level,
                method="BCa",
                batch=batch,
                rng=np.random.default_rng(seed),
            )
        low[varies], high[varies] = res.confidence_interval.low, res.confidence_interval.high
    return mean, low, high, sd


def diverged_seeds(seeds: pd.DataFrame, a: str, b: str) -> dict[tuple[str, str], list[int]]:
    """Per (delay, budget): the seeds on which A or B diverged (increasing; settings without one are absent)."""
    flagged = diverged_runs(seeds) & seeds["algorithm"].isin([a, b]).to_numpy()
    out: dict[tuple[str, str], set[int]] = {}
    for delay, budget, seed in seeds.loc[flagged, ["delay", "budget", "seed"]].itertuples(index=False):
        out.setdefault((str(delay), str(budget)), set()).add(int(seed))
    return {key: sorted(found) for key, found in out.items()}


def differences(
    seeds: pd.DataFrame, a: str, b: str, metric: str
) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """Per (delay, budget): the rounds and the differences ``A - B`` (rows seeds in increasing order,
    columns rounds), seed matched to seed, leaving out the seeds on which A or B diverged
    (:func:`diverged_seeds`).  A seed that only one of the two ran is a ``ValueError``."""
    left_out = diverged_seeds(seeds, a, b)
    df = seeds[(seeds["metric"] == metric) & seeds["algorithm"].isin([a, b])]
    missing = [x for x in (a, b) if not (df["algorithm"] == x).any()]
    if missing:
        raise ValueError(
            f"no {metric!r} values for algorithm(s) {missing} in the per-seed table; it has "
            f"{sorted(map(str, seeds['algorithm'].unique()))}"
        )
    out = {}
    for (delay, budget), cell in df.groupby(["delay", "budget"], observed=True, sort=False):
        wide = cell.pivot_table(
            index=["t", "seed"], columns="algorithm", values="value", aggfunc="first", observed=True
        )
        for x in (a, b):
            if x not in wide.columns:
                raise ValueError(f"delay {delay}, budget {budget}: no {metric!r} values for algorithm {x!r}")
        drop = left_out.get((str(delay), str(budget)))
        if drop:
            wide = wide[~wide.index.get_level_values("seed").isin(drop)]
        lacking = wide[[a, b]].isna()
        if lacking.to_numpy().any():
            seeds_of = {x: sorted(set(cell.loc[cell["algorithm"] == x, "seed"])) for x in (a, b)}
            raise ValueError(
                f"delay {delay}, budget {budget}: a paired comparison needs the same seeds, but "
                f"{a} ran seeds {seeds_of[a]} and {b} ran {seeds_of[b]}"
            )
        wide = wide.sort_index()
        ts = np.sort(cell["t"].unique())
        diff = (wide[a] - wide[b]).to_numpy().reshape(len(ts), -1).T  # rows seeds, columns rounds
        out[(str(delay), str(budget))] = (ts, diff)
    return out


def paired_statistics(
    seeds: pd.DataFrame,
    experiment: str,
    pairs: Sequence[Sequence[str]],
    metric: str,
    better: str,
    ci_level: float = DEFAULT_CI_LEVEL,
    interval: str = "t",
    resamples: int = 9999,
    curve_points: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paired table (the table horizons) and the difference curves (the curve grid) of ``pairs``."""
    T = int(seeds["t"].max())
    table_t = np.unique(seeds.loc[seeds["table_horizon"].to_numpy(), "t"].to_numpy())
    grid = curve_grid(T) if curve_points is None else curve_grid(T, curve_points)
    table_rows, curve_rows = [], []
    for a, b in pairs:
        left_out = diverged_seeds(seeds, a, b)
        for (delay, budget), (ts, d) in differences(seeds, a, b, metric).items():
            mean, low, high, sd = paired_interval(d, ci_level, interval, resamples)
            sign = -1.0 if better == "lower" else 1.0
            a_better = (sign * d > 0).mean(axis=0) if len(d) else np.full(len(ts), np.nan)
            tied = (d == 0).mean(axis=0) if len(d) else np.full(len(ts), np.nan)
            frame = pd.DataFrame(
                {
                    "experiment": experiment,
                    "a": a,
                    "b": b,
                    "delay": delay,
                    "budget": budget,
                    "t": ts,
                    "metric": metric,
                    "better": better,
                    "mean": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "sd": sd,
                    "n": d.shape[0],
                    "a_better": a_better,
                    "tied": tied,
                    "interval": interval,
                    "level": ci_level,
                    "diverged": len(left_out.get((str(delay), str(budget)), ())),
                }
            )
            table_rows.append(frame[np.isin(ts, table_t)])
            curve_rows.append(frame[np.isin(ts, grid)])
    empty = pd.DataFrame(columns=COLUMNS)
    return (
        pd.concat(table_rows, ignore_index=True) if table_rows else empty,
        pd.concat(curve_rows, ignore_index=True) if curve_rows else empty,
    )


def _cell(row, spread: str) -> str:
    diverged = int(row.get("diverged", 0) or 0)
    if diverged:
        n = int(row["n"])
        if n == 0:
            return f"diverged ({diverged} of {diverged} seeds)"
        return _cell({**row, "diverged": 0}, spread) + f" ({diverged} of {n + diverged} seeds diverged)"
    m = row["mean"]
    wins = f" ({round(row['a_better'] * row['n'])}/{row['n']})"
    if spread == "sd":
        return (f"{number(m)} ± {number(row['sd'])}" if np.isfinite(row["sd"]) else number(m)) + wins
    if not np.isfinite(row["ci_low"]):
        return number(m) + wins
    sd = f", sd {number(row['sd'])}" if spread == "both" and np.isfinite(row["sd"]) else ""
    if row["interval"] == "t":
        return f"{number(m)} ± {number(row['ci_high'] - m)}" + sd + wins
    return f"{number(m)} [{number(row['ci_low'])}, {number(row['ci_high'])}]" + sd + wins


#: the caption's line when a seed of a pair diverged
DIVERGED_NOTE = (
    "Diverged: a seed on which A's or B's policy diverged (its scores, estimates or confidence widths became "
    "NaN or infinite and the run stopped; its job's log names it) is left out of the pair's differences, "
    "interval and n; the cell says how many ('k of n seeds diverged'; 'diverged (n of n seeds)' when none is left)."
)
#: the late self-duel rate above which the lock-in diagnostic names an algorithm
LOCK_IN_RATE = 0.9


def lock_in_note(
    seeds: pd.DataFrame, algorithms: Sequence[str], self_duels: Mapping[str, str] | None = None
) -> str | None:
    """One line naming each of ``algorithms`` (per delay and budget setting, when there are several) that
    played an arm against itself in more than :data:`LOCK_IN_RATE` of its last ``LATE_SHARE`` of rounds
    (the summary ``LATE_SUMMARY``, :mod:`banditbench.envs.preference`), on average over its seeds, with what
    its policy states about self-duels where ``self_duels`` (label: statement,
    :func:`banditbench.configuration.comparisons.self_duel_statements`) has it;
    None when none did or the experiment records no self-duels."""
    rates = seeds[(seeds["metric"] == LATE_SUMMARY) & seeds["algorithm"].isin(list(algorithms))]
    if rates.empty:
        return None
    several = rates[["delay", "budget"]].astype(str).drop_duplicates().shape[0] > 1
    locked = []
    for (alg, delay, budget), run in rates.groupby(["algorithm", "delay", "budget"], observed=True, sort=False):
        values = run["value"].to_numpy()
        if values.mean() > LOCK_IN_RATE:
            where = f", delay {delay}" + (f", budget {budget}" if str(budget) != "none" else "") if several else ""
            stated = f"; {self_duels[alg]}" if self_duels and alg in self_duels else ""
            locked.append(
                f"{alg} ({100 * values.mean():.0f} %{where}; {int((values > LOCK_IN_RATE).sum())} of "
                f"{len(values)} seeds above {100 * LOCK_IN_RATE:.0f} %{stated})"
            )
    if not locked:
        return None
    return (
        "Self-duel lock-in: " + ", ".join(locked) + f" played one arm against itself in more than "
        f"{100 * LOCK_IN_RATE:.0f} % of the last {100 * LATE_SHARE:.0f} % of rounds (mean over seeds); "
        f"such duels carry no information, so these runs' regret is frozen on the arm they locked onto."
    )


def _pair(row, names: Mapping[str, str] | None = None) -> str:
    """The pair ``A − B``, each algorithm by its display name (``names``: ``plot.names``) if it has one."""
    names = names or {}
    return f"{names.get(row['a'], row['a'])} − {names.get(row['b'], row['b'])}"


#: why a paired table and the claims report (:mod:`banditbench.analysis.claims`) can word one comparison differently
WHY_NOT_CLAIMS = (
    "Why these can differ from the claims report's verdicts on the same comparison: these are fixed-n intervals, "
    "valid for these seeds looked at once (the Student-t one also assumes a near-Gaussian mean difference), while a "
    "claim is judged with an anytime-valid confidence sequence, valid however seeds were added, and by default "
    "distribution-free on the range the environment declares (it assumes no distribution of the differences), so "
    "its interval is wider: a difference separated here may be not separated there."
)


def caption(table: pd.DataFrame, spread: str = "ci", display: Mapping[str, Any] | None = None) -> str:
    """What the paired tables show: the difference (of the metric by its display name, ``display``; else
    readable), the spread (interval and level, or sd), the seeds."""
    row = table.iloc[0]
    metric = Names.of(display, figure=True).metric(str(row["metric"]))
    favour = "negative" if row["better"] == "lower" else "positive"
    n = int(table["n"].max())
    if spread == "sd":
        spread_text = f"mean ± standard deviation of the per-seed differences over n = {n} seeds"
    else:
        how = "± half-width" if row["interval"] == "t" else "[low, high]"
        spread_text = (
            f"mean {how} of the {ci_percent(float(row['level']))} % "
            f"{INTERVAL_NAMES[row['interval']]} interval of the mean paired difference over n = {n} seeds"
            + (f" ({int(_resamples_of(table))} resamples)" if row["interval"] == "bootstrap" else "")
            + (", then sd: the standard deviation of the per-seed differences" if spread == "both" else "")
        )
    return (
        f"A − B: the per-seed difference of {metric} between algorithms A and B on the same seeds "
        f"({row['better']} is better, so a {favour} difference favours A); {spread_text}; in parentheses the "
        f"seeds on which A is better (ties count for neither). {WHY_NOT_CLAIMS}"
    )


def _resamples_of(table: pd.DataFrame) -> int:
    return int(table.attrs.get("resamples", 0)) or 0


def human_tables(
    table: pd.DataFrame,
    spread: str = "ci",
    names: Mapping[str, str] | None = None,
    display: Mapping[str, Any] | None = None,
) -> dict[str, pd.DataFrame]:
    """The final horizon (rows pairs ``A − B`` by the display ``names``, columns the settings that vary),
    then rows (delay, budget, pair), columns the table horizons."""
    algorithms = set(table["a"]) | set(table["b"])
    if names and len({names.get(a, a) for a in algorithms}) < len(algorithms):
        raise ValueError(f"plot.names gives two algorithms of the pairs the same display name: {dict(names)}")
    df = table.assign(
        pair=table.apply(_pair, axis=1, names=names), cell=[_cell(row, spread) for _, row in table.iterrows()]
    )
    final_t = int(df["t"].max())
    final = df[df["t"] == final_t]
    setting = settings(final, display)
    metric = str(table["metric"].iloc[0])
    out = {
        f"A − B, {metric} at T = {final_t}": final.assign(setting=setting).pivot_table(
            index="pair", columns="setting", values="cell", aggfunc="first", sort=False
        )
    }
    wide = df.assign(horizon=df["t"].map(lambda t: f"t = {t}")).pivot_table(
        index=["delay", "budget", "pair"], columns="horizon", values="cell", aggfunc="first", sort=False
    )
    out[f"A − B, {metric} by horizon"] = with_display(
        wide[sorted(wide.columns, key=lambda c: int(c.split("= ")[1]))], display
    )
    return out


def shown_title(title: str, display: Mapping[str, Any] | None = None) -> str:
    """A table's title (``A − B, cumulative_regret at T = 600``) with its metric's display name
    (``display.metrics``; the table keys, and so the LaTeX labels, keep the metric's label)."""
    head, sep, rest = str(title).partition(", ")
    metric, space, tail = rest.partition(" ")
    return head + sep + Names.of(display).metric(metric) + space + tail if sep else str(title)


def _heading(experiment: str, display: Mapping[str, Any] | None = None) -> str:
    return f"{Names.of(display).experiment(experiment)}: paired comparisons"


def _rows(wide: pd.DataFrame):
    wide = wide.rename_axis(index=[n or "" for n in wide.index.names])
    head = list(wide.index.names) + list(wide.columns)
    body = [[*(idx if isinstance(idx, tuple) else (idx,)), *row.values] for idx, row in wide.iterrows()]
    return head, body


def to_markdown(
    tables: Mapping[str, pd.DataFrame], experiment: str, text: str, display: Mapping[str, Any] | None = None
) -> str:
    """The tables as Markdown, the experiment and the metric by their display names (``display``)."""
    lines = [f"# {_heading(experiment, display)}", "", text, ""]
    for title, wide in tables.items():
        head, body = _rows(wide)
        lines += [f"## {shown_title(title, display)}", ""]
        lines += ["| " + " | ".join(map(str, head)) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(map(str, row)) + " |" for row in body]
        lines.append("")
    return "\n".join(lines)


def to_latex(
    tables: Mapping[str, pd.DataFrame],
    experiment: str,
    text: str,
    run: str = "",
    display: Mapping[str, Any] | None = None,
) -> str:
    """One ``table`` float per table (:func:`banditbench.analysis.latex.table`), the caption the
    experiment and the table's title (by their display names, ``display``) and ``text``, labelled
    ``tab:<run>-<experiment>-paired`` (the final horizon) and ``...-paired-by-horizon`` (the labels, not the
    display names); everything escaped, display names' mathtext as math."""
    names = Names.of(display)
    parts = []
    for title, wide in tables.items():
        head, body = _rows(wide)
        pair = len(wide.index.names) - 1  # the last index level
        body = [[latex.name(x) if i == pair else x for i, x in enumerate(row)] for row in body]
        align = "l" * len(wide.index.names) + "r" * len(wide.columns)
        key = latex.label(run, experiment, "paired", re.sub(r"^A − B, \S+ (at T = \d+)?", "", title))
        head_, _, rest = title.partition(", ")
        metric, _, tail = rest.partition(" ")
        caption = latex.Tex(
            _tex_name(experiment, names.experiment(experiment))
            + latex.escape(f": {head_}, ")
            + _tex_name(metric, names.metric(metric))
            + latex.escape(f" {tail}. {text.replace(chr(10) * 2, ' ')}")
        )
        parts.append(latex.table(caption, head, body, align, key=key))
    return "\n".join(parts)


def _tex_name(label: str, shown: str) -> str:
    """A display name as LaTeX, its mathtext as math (:func:`banditbench.analysis.latex.name`); a label
    without one escaped as it is."""
    return latex.name(shown) if shown != label else latex.escape(label)


def to_html(
    tables: Mapping[str, pd.DataFrame], experiment: str, text: str, display: Mapping[str, Any] | None = None
) -> str:
    """A self-contained page of the tables, the experiment and the metric by their display names (``display``)."""
    body = [
        f"<h1>{html.escape(_heading(experiment, display))}</h1>",
        *(f"<p>{html.escape(part)}</p>" for part in text.split("\n\n")),
    ]
    for title, wide in tables.items():
        flat = wide.rename_axis(columns=None).reset_index()
        body += [f"<h2>{html.escape(shown_title(title, display))}</h2>"]
        body.append(flat.to_html(index=False, escape=True, border=0, na_rep=""))
    return html_page(_heading(experiment, display), "\n".join(body))


def _pair_look(pairs: Sequence[tuple[str, str]], style) -> tuple[dict, dict]:
    """Each pair's colour and line style: where every pair shares its A (or its B), the other
    algorithm's configured colour and line style, else the defaults in order."""
    keys = [f"{a} − {b}" for a, b in pairs]
    shared_a = len({a for a, _ in pairs}) == 1
    shared_b = len({b for _, b in pairs}) == 1
    other = [b if shared_a else a if shared_b else None for a, b in pairs]
    pair_style = type(style)(
        colors={k: style.colors[o] for k, o in zip(keys, other) if o in style.colors},
        styles={k: style.styles[o] for k, o in zip(keys, other) if o in style.styles},
    )
    return pair_style.colours(keys), pair_style.line_styles(keys)


def plot_differences(
    curves: pd.DataFrame, title: str, outputs: Sequence[str | Path], style: Mapping[str, Any] | None = None
) -> None:
    """Write :func:`differences_figure` to ``outputs``."""
    from .plots import _save

    _save(differences_figure(curves, title, style), outputs)


def differences_figure(curves: pd.DataFrame, title: str, style: Mapping[str, Any] | None = None):
    """One panel per (budget, delay), one line per pair with its band, and the zero line; the legend
    names each pair ``A − B`` by the algorithms' display names (``style``: the experiment's ``plot``
    block, :class:`banditbench.analysis.plots.PlotStyle`)."""
    from .plots import PlotStyle, _figure, _finish, _setting, legend_entries

    style = PlotStyle.of(style)
    df = curves.assign(budget=curves["budget"].astype(str), pair=curves.apply(_pair, axis=1))
    delays, budgets = list(dict.fromkeys(df["delay"])), list(dict.fromkeys(df["budget"]))
    pairs = list(dict.fromkeys(zip(df["a"], df["b"])))
    colours, styles = _pair_look(pairs, style)
    fig, axes = _figure(style, len(budgets), len(delays), len(budgets), sharex=True)
    metric = style.display.metric(str(df["metric"].iloc[0]))
    for r, budget in enumerate(budgets):
        for c, delay in enumerate(delays):
            ax = axes[r][c]
            ax.axhline(0.0, color="0.3", lw=0.8)
            cell = df[(df["delay"] == delay) & (df["budget"] == budget)]
            for a, b in pairs:
                key = f"{a} − {b}"
                d = cell[cell["pair"] == key].sort_values("t")
                if d.empty:
                    continue
                label = f"{style.name(a)} − {style.name(b)}"
                ax.plot(d["t"], d["mean"], color=colours[key], ls=styles[key], lw=1.5, label=label)
                ax.fill_between(d["t"], d["ci_low"], d["ci_high"], color=colours[key], alpha=0.2, lw=0)
            style.scale(ax, signed=True)
            ax.set_title(_setting(delay, budget, style, len(delays), len(budgets)), fontsize=style.size)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=style.size - 1)
            if r == len(budgets) - 1:
                ax.set_xlabel("round t", fontsize=style.size)
            if c == 0:
                ax.set_ylabel(f"A − B, {metric}", fontsize=style.size)
    handles, labels = legend_entries(fig)
    row = df.iloc[0]
    band = (
        f"{ci_percent(float(row['level']))} % {INTERVAL_NAMES[row['interval']]} band of the mean paired "
        f"difference, n = {int(df['n'].max())} seeds; {row['better']} is better"
    )
    # without a title, a small note says what a reader of the figure alone cannot know: which side is better
    if style.title is False:
        heading, note = None, f"{row['better'].capitalize()} is better; bands: {band.split(' band')[0]}."
    else:
        heading, note = (style.title if isinstance(style.title, str) else f"{title}\n{band}"), None
    _finish(fig, style, heading, handles, labels, note)
    return fig


def paired_tables(
    seeds: pd.DataFrame, experiment: str, paired: Mapping[str, Any], ci_level: float = DEFAULT_CI_LEVEL
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paired table (the table horizons) and the difference curves of the experiment's resolved ``paired``
    (:func:`banditbench.configuration.comparisons.resolve`), from its per-seed table ``seeds``."""
    resamples = int(paired.get("resamples", 9999))
    table, curves = paired_statistics(
        seeds, experiment, paired["pairs"], paired["metric"], paired["better"], ci_level, paired["interval"], resamples
    )
    table.attrs["resamples"] = curves.attrs["resamples"] = resamples
    return table, curves


def write_paired(
    seeds_file: str | Path,
    experiment: str,
    paired: Mapping[str, Any],
    csv: str | Path,
    curves_csv: str | Path,
    markdown: str | Path,
    latex: str | Path,
    html_file: str | Path,
    plots: Sequence[str | Path] = (),
    ci_level: float = DEFAULT_CI_LEVEL,
    spread: str = "ci",
    plot: Mapping[str, Any] | None = None,
    run: str = "",
) -> pd.DataFrame:
    """Read the per-seed table, write the paired tables, curves and plot atomically; return the table.

    ``paired`` is the experiment's resolved ``paired`` (:func:`banditbench.configuration.comparisons.resolve`);
    ``plot`` its ``plot`` block (display names, in the tables too, colours, axes and size of the figure);
    ``run`` names the run in the LaTeX tables' labels."""
    seeds = read_seeds(seeds_file)
    table, curves = paired_tables(seeds, experiment, paired, ci_level)
    display = (plot or {}).get("display")
    text = caption(table, spread, display)
    note = lock_in_note(seeds, [a for pair in paired["pairs"] for a in pair], paired.get("self_duels"))
    if note:
        text += "\n\n" + note
    if len(table) and table["diverged"].any():
        text += "\n\n" + DIVERGED_NOTE
    tables = human_tables(table, spread, (plot or {}).get("names"), display)
    atomic_write_bytes(csv, csv_bytes(table))
    atomic_write_bytes(curves_csv, csv_bytes(curves))
    atomic_write_bytes(markdown, to_markdown(tables, experiment, text, display).encode())
    atomic_write_bytes(latex, to_latex(tables, experiment, text, run, display).encode())
    atomic_write_bytes(html_file, to_html(tables, experiment, text, display).encode())
    if plots:
        name = Names.of(display).experiment(experiment)
        plot_differences(curves, f"{name}: paired differences A − B", plots, plot)
    return table
