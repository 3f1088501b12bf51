import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from banditbench.analysis.aggregate import aggregate_experiment, aggregate_runs, mean_ci
from banditbench.analysis.plots import plot_curves
from banditbench.storage.resultio import save_result
from conftest import CELL


def _write_runs(tmp_path, values, experiment="exp"):
    """values[(alg, delay)] = list over seeds of per-round regret arrays, written as results/runs/ does."""
    paths = []
    for (alg, delay), seeds in values.items():
        for seed, arr in enumerate(seeds):
            cell = {
                "experiment": experiment,
                "algorithm": alg,
                "delay_label": delay,
                "budget": None,
                "horizon": len(arr),
                "seed": seed,
            }
            path = tmp_path / "runs" / experiment / alg / delay / "none" / CELL / f"{seed}.npz"
            save_result(
                path,
                {"regret": arr},
                {"cell": cell, "metrics": ["regret"], "summary": {"tau": 10.0 + seed}},
                {"wall_time_s": 0.1},
            )
            paths.append(str(path))
    return paths


def test_mean_ci_is_the_student_t_interval():
    x = np.array([[1.0], [2.0], [4.0], [7.0]])
    m, lo, hi = mean_ci(x)
    half = stats.t.ppf(0.975, 3) * x.std(ddof=1) / 2
    assert m[0] == 3.5 and hi[0] - m[0] == pytest.approx(half) and m[0] - lo[0] == pytest.approx(half)
    m1, lo1, _ = mean_ci(np.array([[5.0]]))
    assert m1[0] == 5 and np.isnan(lo1[0])


def test_aggregate_reports_cumulative_means_at_horizons(tmp_path):
    runs = _write_runs(
        tmp_path,
        {
            ("a", "none"): [np.ones(10), np.full(10, 3.0)],
            ("b", "none"): [np.zeros(10), np.zeros(10)],
        },
    )
    tidy, curves = aggregate_runs(runs, "exp", [5, 10])
    row = tidy[(tidy.algorithm == "a") & (tidy.t == 10) & (tidy.metric == "cumulative_regret")].iloc[0]
    assert row["mean"] == 20 and row["n"] == 2 and row["ci_low"] < 20 < row["ci_high"]
    assert tidy[(tidy.algorithm == "a") & (tidy.t == 5)]["mean"].iloc[0] == 10
    tau = tidy[(tidy.algorithm == "b") & (tidy.metric == "tau")].iloc[0]
    assert tau["mean"] == 10.5 and tau["t"] == 10
    assert list(tidy.columns[:10]) == [
        "experiment",
        "algorithm",
        "delay",
        "budget",
        "t",
        "metric",
        "mean",
        "ci_low",
        "ci_high",
        "n",
    ]
    assert curves["t"].max() == 10 and set(curves["algorithm"]) == {"a", "b"}


def test_unequal_seed_counts_are_an_error(tmp_path):
    runs = _write_runs(tmp_path, {("a", "none"): [np.ones(5)] * 2, ("b", "none"): [np.ones(5)]})
    with pytest.raises(ValueError, match="unequal number of seeds"):
        aggregate_runs(runs, "exp", [5])


def test_written_tables_and_plots(tmp_path):
    runs = _write_runs(
        tmp_path,
        {
            ("alg_a", "d1"): [np.ones(50)] * 3,
            ("alg_b", "d1"): [np.full(50, 0.5)] * 3,
            ("alg_a", "d2"): [np.ones(50)] * 3,
            ("alg_b", "d2"): [np.full(50, 0.2)] * 3,
        },
    )
    out = {k: tmp_path / f"out.{k}" for k in ("csv", "md", "tex")}
    curves = tmp_path / "curves.csv"
    aggregate_experiment(runs, "exp", [25, 50], out["csv"], out["md"], out["tex"], curves, "cumulative_regret")
    assert len(pd.read_csv(out["csv"])) == 4 * (2 * 1 + 1)  # 2 horizons of 1 metric + tau, per cell
    md = out["md"].read_text()
    # headline table: algorithms x delays at the final horizon, as in the papers' result tables
    assert (
        "## cumulative_regret at T = 50\n\n| algorithm | d1 | d2 |\n|---|---|---|\n| alg_a | 50.00 ± 0.00 | 50.00 ± 0.00 |\n| alg_b | 25.00 ± 0.00 | 10.00 ± 0.00 |"
        in md
    )
    assert "| d2 | none | alg_b | 5.00 ± 0.00 | 10.00 ± 0.00 |" in md and "## tau" in md
    tex = out["tex"].read_text()
    assert r"\begin{tabular}" in tex and r"cumulative\_regret" in tex and r"alg\_b & 25.00 $\pm$ 0.00" in tex
    pdf, png = tmp_path / "p.pdf", tmp_path / "p.png"
    plot_curves(curves, "cumulative_regret", "exp", [pdf, png])
    assert pdf.read_bytes()[:4] == b"%PDF" and png.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="no curve for metric 'cumulative_reward'"):
        plot_curves(curves, "cumulative_reward", "exp", [png])


def test_runs_spread_over_tasks_get_a_per_task_table(tmp_path):
    """Seed 000's prompt benchmark: seed s plays tasks[s mod n]; the tables break the final regret down by task."""
    paths = []
    for alg, per_task in (("ldb", {0: 1.0, 1: 3.0}), ("ndb", {0: 2.0, 1: 5.0})):
        for seed in range(4):
            task = seed % 2
            cell = {
                "experiment": "prompts",
                "algorithm": alg,
                "delay_label": "none",
                "budget": None,
                "horizon": 10,
                "seed": seed,
                "environment": {"name": "prompt_dueling", "params": {"tasks": ["sum", "antonyms"]}},
            }
            path = tmp_path / "runs" / "prompts" / alg / "none" / "none" / CELL / f"{seed}.npz"
            save_result(
                path,
                {"regret": np.full(10, per_task[task] + 0.01 * seed)},
                {"cell": cell, "metrics": ["regret"], "summary": {"task_index": float(task)}},
                {"wall_time_s": 0.1},
            )
            paths.append(str(path))
    out = {k: tmp_path / f"out.{k}" for k in ("csv", "md", "tex", "curves")}
    aggregate_experiment(paths, "prompts", [10], out["csv"], out["md"], out["tex"], out["curves"], "cumulative_regret")
    md = out["md"].read_text()
    assert "cumulative_regret at T = 10, by task" in md
    assert "| none, sum | none, antonyms |" in md
    assert "| ldb | 10.10 ± 1.27 | 30.20 ± 1.27 |" in md  # seeds 0, 2 play sum; 1, 3 antonyms
    # an experiment without tasks gets no such table
    plain = _write_runs(tmp_path, {("a", "none"): [np.ones(4), np.ones(4)]}, experiment="plain")
    aggregate_experiment(plain, "plain", [4], out["csv"], out["md"], out["tex"], out["curves"], "cumulative_regret")
    assert "by task" not in out["md"].read_text()


def test_per_round_metrics_are_running_averages_in_the_papers_layout(tmp_path):
    """``per_round_regret`` is cumulative regret / t (seed 001's R(T)/T), tabulated per algorithm and horizon."""
    runs = _write_runs(
        tmp_path, {("a", "none"): [np.array([4.0, 2.0, 0.0, 2.0])] * 2, ("b", "none"): [np.ones(4), np.full(4, 3.0)]}
    )
    tidy, curves = aggregate_runs(runs, "exp", [2, 4], per_round=["regret"])
    rate = tidy[tidy.metric == "per_round_regret"].set_index(["algorithm", "t"])["mean"]
    assert rate[("a", 2)] == 3.0 and rate[("a", 4)] == 2.0 and rate[("b", 4)] == 2.0
    assert set(curves.metric) == {"cumulative_regret", "per_round_regret"}
    with pytest.raises(ValueError, match="per-round metric 'reward' is not in the run"):
        aggregate_runs(runs, "exp", [4], per_round=["reward"])


def test_panel_plots_draw_each_group_in_its_own_panel(tmp_path):
    """seed 001 Figs. E.5-E.7 layout: each NVLDB variant against its NLDB counterpart, one panel per
    strategy; the i-th algorithm of every panel has the same colour, with its own confidence band."""
    from matplotlib.colors import to_rgba

    from banditbench.analysis.plots import panel_figure, plot_panels

    strategies = ["UCB-ASYM", "UCB-OSYM", "UCB-CSYM", "TS-ASYM"]
    values = {}
    for k, s in enumerate(strategies):
        values[(f"NVLDB-{s}", "none")] = [np.full(40, 0.1 * (k + 1)), np.full(40, 0.1 * (k + 1) + 0.02)]
        values[(f"NLDB-{s}", "none")] = [np.full(40, 0.5), np.full(40, 0.6)]
    values[("VACDB", "none")] = [np.ones(40)] * 2
    curves = tmp_path / "curves.csv"
    aggregate_experiment(
        _write_runs(tmp_path, values),
        "exp",
        [40],
        tmp_path / "t.csv",
        tmp_path / "t.md",
        tmp_path / "t.tex",
        curves,
        "cumulative_regret",
    )
    panels = {s: [f"NVLDB-{s}", f"NLDB-{s}"] for s in strategies}
    fig = panel_figure(curves, "cumulative_regret", panels, "exp: nvldb_vs_nldb", style={"width": "auto"})
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == strategies
    assert len(fig.axes) == 6 and sum(not ax.get_visible() for ax in fig.axes) == 2  # 3 to a row
    for ax, s in zip(visible, strategies):
        lines = ax.get_lines()
        assert [line.get_label() for line in lines] == [f"NVLDB-{s}", f"NLDB-{s}"]
        assert to_rgba(lines[0].get_color()) != to_rgba(lines[1].get_color())
        assert len(ax.collections) == 2  # two bands
        k = strategies.index(s)
        assert lines[0].get_ydata()[-1] == pytest.approx(40 * (0.1 * (k + 1) + 0.01))  # mean cumulative regret
        assert lines[1].get_ydata()[-1] == pytest.approx(40 * 0.55)
    colours = {to_rgba(ax.get_lines()[0].get_color()) for ax in visible}
    assert len(colours) == 1  # NVLDB alike everywhere
    pdf, png = tmp_path / "p.pdf", tmp_path / "p.png"
    plot_panels(curves, "cumulative_regret", panels, "exp", [pdf, png])
    assert pdf.read_bytes()[:4] == b"%PDF" and png.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match=r"algorithm\(s\) \['NLDB-TS-CSYM'\]"):
        panel_figure(curves, "cumulative_regret", {"TS-CSYM": ["VACDB", "NLDB-TS-CSYM"]}, "exp")


def test_an_interval_below_zero_that_no_seed_reached_is_marked_and_explained(tmp_path):
    """Cumulative regret cannot be negative: a t interval over few seeds that reaches below 0 gets a
    dagger in the tables, a line saying why in their header, and a line in the figure."""
    from banditbench.analysis.plots import below_zero_note

    runs = _write_runs(
        tmp_path, {("a", "none"): [np.zeros(10), np.zeros(10), np.full(10, 3.0)], ("b", "none"): [np.ones(10)] * 3}
    )
    out = {k: tmp_path / f"out.{k}" for k in ("csv", "md", "tex", "curves")}
    aggregate_experiment(runs, "exp", [10], out["csv"], out["md"], out["tex"], out["curves"], "cumulative_regret")
    tidy = pd.read_csv(out["csv"])
    a = tidy[(tidy.algorithm == "a") & (tidy.metric == "cumulative_regret")].iloc[0]
    assert a["ci_low"] < 0 <= a["min"] and (a["mean"], a["sd"], a["max"]) == pytest.approx((10, np.sqrt(300), 30))
    md = out["md"].read_text()
    assert "| a | 10.00 ± 43.03 † |" in md and "| b | 10.00 ± 0.00 |" in md
    assert "† the interval reaches below 0, a value no seed reached" in md and "n = 3 seeds" in md
    assert r"$^\dagger$" in out["tex"].read_text()
    assert "n = 3 seeds does not know" in below_zero_note(pd.read_csv(out["curves"]))
    # with spread: sd the tables show the standard deviation, and say so
    aggregate_experiment(
        runs, "exp", [10], out["csv"], out["md"], out["tex"], out["curves"], "cumulative_regret", spread="sd"
    )
    md = out["md"].read_text()
    assert "Mean ± standard deviation over n = 3 seeds." in md and "| a | 10.00 ± 17.32 |" in md and "†" not in md
    # no note where no band crosses
    fine = _write_runs(tmp_path / "fine", {("a", "none"): [np.ones(10), np.full(10, 1.1)]})
    aggregate_experiment(fine, "exp", [10], out["csv"], out["md"], out["tex"], out["curves"], "cumulative_regret")
    assert "†" not in out["md"].read_text() and below_zero_note(pd.read_csv(out["curves"])) is None


def test_the_fast_array_reader_reads_what_numpy_reads_and_refuses_what_numpy_refuses():
    import io

    from banditbench.errors import CorruptFileError
    from banditbench.storage.resultio import _array

    for arr in (np.arange(7.0), np.frombuffer(b'{"a": 1}', np.uint8), np.zeros(0), np.arange(3), np.ones((2, 3))):
        buf = io.BytesIO()
        np.lib.format.write_array(buf, arr, allow_pickle=False)
        data = buf.getvalue()
        got = _array("f.npz", "m", data)
        assert got.dtype == arr.dtype and got.shape == arr.shape and np.array_equal(got, arr)
        with pytest.raises(CorruptFileError, match="member 'm' of the result file is not an array"):
            _array("f.npz", "m", data[:-1] if arr.size else data[:20])


def test_the_per_task_table_marks_a_flat_task():
    from banditbench.analysis.seedtable import _task_name

    cell = {"environment": {"params": {"tasks": ["antonyms", "sum"]}}}
    assert _task_name(cell, {"task_index": 0.0, "flat_task": 0.0, "score_gap": 0.34}) == "antonyms"
    assert _task_name(cell, {"task_index": 1.0, "flat_task": 1.0, "score_gap": 0.038}) == "sum (flat, gap 0.04)"
    assert _task_name(cell, {"reward": 1.0}) is None  # not a multi-task environment


def test_spread_both_shows_the_interval_and_the_standard_deviation_and_names_the_regret(tmp_path):
    """Issue 23.5: ``spread: both`` cells are ``mean ± CI half-width (sd S)``, the header says which is which,
    and a regret metric's header says which regret and that per_round_ is R(t)/t."""
    import pandas as pd

    from banditbench.analysis.aggregate import _cell, _notes, metric_note

    row = pd.Series({"mean": 2.0, "ci_low": 1.5, "ci_high": 2.5, "sd": 1.25, "min": 0.5})
    assert _cell(row, "both") == "2.00 ± 0.50 (sd 1.25)"
    assert _cell(row, "ci") == "2.00 ± 0.50" and _cell(row, "sd") == "2.00 ± 1.25"
    notes = _notes(
        {"per_round_average_regret at T = 50": pd.DataFrame(), "cumulative_weak_regret": pd.DataFrame()},
        0.95,
        "both",
        20,
    )
    assert notes[0] == (
        "Mean ± 95 % Student-t CI half-width over n = 20 seeds; (sd S): the standard deviation across the seeds."
    )
    assert "R(t)/t" in notes[1] and "average regret" in notes[1] and "(2 u* - u_1 - u_2) / 2" in notes[1]
    assert "weak regret" in notes[2] and notes[2].startswith("cumulative_weak_regret: R(t)")
    assert metric_note("per_round_reward") is None
    from banditbench.analysis.paired import _cell as paired_cell

    pair = pd.Series({"mean": 1.0, "ci_low": 0.5, "ci_high": 1.5, "sd": 0.8, "a_better": 0.6, "n": 10, "interval": "t"})
    assert paired_cell(pair, "both") == "1.00 ± 0.50, sd 0.80 (6/10)"
    assert paired_cell(pair, "ci") == "1.00 ± 0.50 (6/10)"


def _write_duels(tmp_path, self_duels, experiment="duel"):
    """Dueling runs of horizon 20 whose per-round regret is 1 and whose self-duels are ``self_duels[alg][seed]``
    (a 0/1 array per seed), with the metrics and summary the dueling environments log."""
    paths = []
    for alg, seeds in self_duels.items():
        for seed, duel in enumerate(seeds):
            duel = np.asarray(duel, dtype=float)
            cell = {
                "experiment": experiment,
                "algorithm": alg,
                "delay_label": "none",
                "budget": None,
                "horizon": len(duel),
                "seed": seed,
            }
            path = tmp_path / "runs" / experiment / alg / "none" / "none" / CELL / f"{seed}.npz"
            regret = np.full(len(duel), 1.0 + seed)
            save_result(
                path,
                {"regret": regret, "average_regret": regret / 2, "weak_regret": regret / 2, "self_duel": duel},
                {
                    "cell": cell,
                    "metrics": ["regret", "average_regret", "weak_regret", "self_duel"],
                    "summary": {"late_self_duel_rate": float(duel[-2:].mean())},
                },
                {"wall_time_s": 0.1},
            )
            paths.append(str(path))
    return paths


def test_self_duel_rates_appear_in_the_tables_with_what_they_are(tmp_path):
    every_third = (np.arange(1, 21) % 3 == 0).astype(float)  # 6 self-duels in 20 rounds
    runs = _write_duels(tmp_path, {"a": [every_third, np.ones(20)], "b": [np.zeros(20), np.zeros(20)]})
    md = tmp_path / "t.md"
    tidy = aggregate_experiment(
        runs,
        "duel",
        [10, 20],
        tmp_path / "t.csv",
        md,
        tmp_path / "t.tex",
        tmp_path / "c.csv",
        "cumulative_average_regret",
        per_round=["self_duel"],
    )
    rate = tidy[(tidy.metric == "per_round_self_duel") & (tidy.t == 20)].set_index("algorithm")["mean"]
    assert rate["a"] == pytest.approx((6 / 20 + 1) / 2) and rate["b"] == 0
    late = tidy[tidy.metric == "late_self_duel_rate"].set_index("algorithm")["mean"]
    assert late["a"] == pytest.approx((0.0 + 1.0) / 2) and late["b"] == 0  # rounds 19, 20: no self-duel, then two
    text = md.read_text()
    assert "## per_round_self_duel" in text and "per_round_self_duel: the share of rounds up to t" in text
    assert "late_self_duel_rate: the share of self-duels in the run's last 10 % of rounds" in text


def test_quantile_spread_shows_median_and_quartiles_beside_the_mean(tmp_path):
    """Bimodal seeds: three at regret 1 per round, one at 9; the mean says 2 per round, the median 1."""
    runs = _write_runs(tmp_path, {("a", "none"): [np.ones(10)] * 3 + [np.full(10, 9.0)]})
    md = tmp_path / "t.md"
    tidy = aggregate_experiment(
        runs,
        "exp",
        [10],
        tmp_path / "t.csv",
        md,
        tmp_path / "t.tex",
        tmp_path / "c.csv",
        "cumulative_regret",
        spread="quantiles",
    )
    row = tidy[(tidy.metric == "cumulative_regret") & (tidy.t == 10)].iloc[0]
    values = np.array([10.0, 10.0, 10.0, 90.0])
    assert (row["median"], row["q1"], row["q3"]) == (np.median(values), *np.quantile(values, [0.25, 0.75]))
    half = stats.t.ppf(0.975, 3) * values.std(ddof=1) / 2
    text = md.read_text()
    assert f"| a | 30.00 ± {half:.2f} † (med 10.00 [10.00, 30.00]) |" in text  # † : the interval reaches below 0
    assert "(med M [Q1, Q3]): the median and the lower and upper quartiles" in text


def test_plot_seeds_draws_every_seeds_curve_and_the_self_duel_row(tmp_path, monkeypatch):
    from banditbench.analysis import plots
    from banditbench.analysis.seedtable import read_seeds

    runs = _write_duels(tmp_path, {"a": [np.zeros(20)] * 3, "b": [np.ones(20)] * 3})
    curves, parquet = tmp_path / "c.csv", tmp_path / "s.parquet"
    aggregate_experiment(
        runs,
        "duel",
        [20],
        tmp_path / "t.csv",
        tmp_path / "t.md",
        tmp_path / "t.tex",
        curves,
        "cumulative_regret",
        per_round=["self_duel"],
        seeds_file=parquet,
    )
    figures = []
    monkeypatch.setattr(plots, "_save", lambda fig, outputs: figures.append(fig))
    style = {"self_duels": True, "title": True}
    plots.plot_curves(curves, "cumulative_regret", "duel", [tmp_path / "p.png"], seeds=read_seeds(parquet), style=style)
    plots.plot_curves(curves, "cumulative_regret", "duel", [tmp_path / "p.png"], style=style)
    plots.plot_curves(curves, "cumulative_regret", "duel", [tmp_path / "p.png"], seeds=read_seeds(parquet))
    with_seeds, means_only, default = figures
    top, rate_row = with_seeds.axes[0], with_seeds.axes[1]
    assert len(top.lines) == 2 * (3 + 1)  # two algorithms: three seeds and the mean each
    assert len(means_only.axes[0].lines) == 2 and rate_row.get_ylabel() == "self-duel rate"
    assert [round(y, 6) for y in rate_row.lines[1].get_ydata()[-1:]] == [1.0]  # b always self-duels
    assert "single seeds" in with_seeds._suptitle.get_text()
    # by default (plot.self_duels, plot.title off): no rate row, no title; the note says what faint lines are
    assert len(default.axes) == 1 and default._suptitle is None
    assert any("single seeds" in t.get_text() for t in default.texts)


#: display names (``plot.names``) with LaTeX special characters, a Greek letter and mathtext
NAMES = {"lin_ucb": "LinUCB (α = 1) & co", "b": r"$\epsilon$-greedy"}
TEX_NAMES = {r"LinUCB ($\alpha$ = 1) \& co": "lin_ucb", r"$\epsilon$-greedy": "b"}
NAMES_MU = (("lin_ucb", -0.3), ("b", 0.2))


def _printed_numbers(head, rows, title, labels):
    """(metric, delay, algorithm, t) -> (mean, half-width) as a table prints them (ASCII minus):
    ``title`` ``M at T = N`` is a headline table (columns delays), else the metric's table by horizon."""
    headline = re.fullmatch(r"(\S+) at T = (\d+)", title)
    out = {}
    for row in rows:
        cells = dict(zip(head, row))
        alg = labels[cells.pop("algorithm")]
        if headline:
            keys = {(headline[1], delay, alg, int(headline[2])): cell for delay, cell in cells.items()}
        else:
            delay, _ = cells.pop("delay"), cells.pop("budget")
            keys = {(title, delay, alg, int(h.split("= ")[1])): cell for h, cell in cells.items() if cell}
        for key, cell in keys.items():
            mean, half = cell.replace("\u2212", "-").split(" ± ")
            out[key] = (mean, half.split(" ")[0])
    return out


def test_the_paper_tables_print_the_tidy_numbers_with_display_names_true_minus_signs_and_labels(tmp_path):
    rng = np.random.default_rng(0)
    values = {(alg, d): [rng.normal(mu, 1.0, 10) for _ in range(4)] for alg, mu in NAMES_MU for d in ("d1", "d2")}
    out = {k: tmp_path / f"out.{k}" for k in ("csv", "md", "tex", "curves", "html")}
    aggregate_experiment(
        _write_runs(tmp_path, values), "exp", [5, 10], out["csv"], out["md"], out["tex"], out["curves"],
        "cumulative_regret", html_file=out["html"], run="Paper_1", names=NAMES,
    )  # fmt: skip
    tidy = pd.read_csv(out["csv"])  # the machine interface: labels, ASCII numbers
    assert set(tidy["algorithm"]) == set(NAMES) and (tidy["mean"] < 0).any()
    assert "\u2212" not in out["csv"].read_text()
    expected = {
        (r.metric, r.delay, r.algorithm, r.t): (f"{r.mean:.2f}", f"{r.ci_high - r.mean:.2f}") for r in tidy.itertuples()
    }

    md = out["md"].read_text()
    printed = set()
    for section in md.split("\n## ")[1:]:
        title, _, body = section.partition("\n\n")
        lines = [line for line in body.splitlines() if line.startswith("| ")]
        assert not any(re.search(r"-\d", line) for line in lines)
        head, *rows = ([c.strip() for c in line.strip("|").split("|")] for line in lines)
        numbers = _printed_numbers(head, rows, title, {v: k for k, v in NAMES.items()})
        assert numbers and numbers.items() <= expected.items()
        printed |= numbers.keys()
    assert "\u2212" in md and printed == expected.keys()

    tex = out["tex"].read_text()
    floats = re.findall(r"\\begin\{table\}.*?\\end\{table\}", tex, flags=re.S)
    labels = [re.search(r"\\label\{(.*?)\}", f)[1] for f in floats]
    assert labels == ["tab:paper-1-exp", "tab:paper-1-exp-cumulative-regret", "tab:paper-1-exp-tau"]
    printed = set()
    for float_, title in zip(floats, ["cumulative_regret at T = 10", "cumulative_regret", "tau"]):
        assert all(float_.count(rule) == 1 for rule in (r"\toprule", r"\midrule", r"\bottomrule"))
        body = float_.split("\\toprule\n")[1].split("\n\\bottomrule")[0]
        lines = [re.sub(r" \\\\( \\midrule)?$", "", line) for line in body.split("\n")]
        head, *rows = ([c.replace("$-$", "\u2212").replace(r"$\pm$", "±") for c in line.split(" & ")] for line in lines)
        assert not any(re.search(r"-\d", cell) for row in rows for cell in row)
        numbers = _printed_numbers(head, rows, title, TEX_NAMES)
        assert numbers and numbers.items() <= expected.items()
        printed |= numbers.keys()
    assert printed == expected.keys()
    assert "lin_ucb" not in md and r"lin\_ucb" not in tex

    page = out["html"].read_text()
    assert "LinUCB (α = 1) &amp; co" in page and "\u2212" in page and ">lin_ucb<" not in page
