"""Summary tables across experiments (config ``summary_tables``, seed 002's Table 2 layout) and the
configurable confidence level of tables and plot bands (``ci_level``)."""

import copy

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from banditbench.analysis.aggregate import aggregate_experiment, mean_ci
from banditbench.analysis.summary import write_summary_table
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.errors import ConfigError
from banditbench.storage.resultio import save_result
from conftest import CELL, ROOT

BASE = load_config_file(ROOT / "config.yaml")
ALGS = ["a", "b", "c", "d"]


def _experiment(tmp_path, name, ctr_by_alg, seeds=3, ci_level=0.95):
    """Run files of ``name`` whose summary ``ctr`` is ``ctr_by_alg[alg] + 0.01 * seed``, aggregated to its tidy CSV."""
    paths = []
    for alg, ctr in ctr_by_alg.items():
        for seed in range(seeds):
            cell = {
                "experiment": name,
                "algorithm": alg,
                "delay_label": "none",
                "budget": None,
                "horizon": 20,
                "seed": seed,
            }
            path = tmp_path / "runs" / name / alg / "none" / "none" / CELL / f"{seed}.npz"
            save_result(
                path,
                {"reward": np.zeros(20)},
                {"cell": cell, "metrics": ["reward"], "summary": {"ctr": ctr + 0.01 * seed}},
                {"wall_time_s": 0.1},
            )
            paths.append(str(path))
    csv = tmp_path / f"{name}.csv"
    aggregate_experiment(
        paths,
        name,
        [10, 20],
        csv,
        tmp_path / f"{name}.md",
        tmp_path / f"{name}.tex",
        tmp_path / f"{name}.curves.csv",
        "cumulative_reward",
        ci_level=ci_level,
    )
    return csv


def _table(rows, **kw):
    return {
        "name": "t2",
        "metric": "ctr",
        "better": "higher",
        "bold": 3,
        "decimals": 3,
        "algorithms": ALGS,
        "rows": [{"experiment": e, "group": g, "label": l, "delay": "none", "budget": "none"} for e, g, l in rows],
        "ci_level": 0.95,
        "description": "",
        **kw,
    }


def test_summary_table_has_a_row_per_experiment_a_column_per_algorithm_and_the_best_three_in_bold(tmp_path):
    files = {
        "base": _experiment(tmp_path, "base", {"a": 0.1, "b": 0.4, "c": 0.3, "d": 0.2}),
        "m50": _experiment(tmp_path, "m50", {"a": 0.5, "b": 0.1, "c": 0.2, "d": 0.2}),  # c and d tie third
        "k100": _experiment(tmp_path, "k100", {"a": 0.2, "b": 0.3, "c": 0.1, "d": 0.4}),
    }
    table = _table([("base", "m", "20"), ("m50", "m", "50"), ("base", "kappa", "50"), ("k100", "kappa", "100")])
    out = {k: tmp_path / f"t2.{k}" for k in ("csv", "md", "tex", "html")}
    cells = write_summary_table(table, files, out["csv"], out["md"], out["tex"], out["html"])
    assert list(cells["algorithm"]) == ALGS * 4 and list(cells["label"]) == [
        l for l in ("20", "50", "50", "100") for _ in ALGS
    ]
    bold = cells.pivot_table(index="row", columns="algorithm", values="bold", sort=False)[ALGS].to_numpy()
    np.testing.assert_array_equal(bold, [[0, 1, 1, 1], [1, 0, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1]])
    half = stats.t.ppf(0.975, 2) * np.std([0.4, 0.41, 0.42], ddof=1) / np.sqrt(3)
    row = cells[(cells["row"] == 0) & (cells["algorithm"] == "b")].iloc[0]
    assert row["mean"] == pytest.approx(0.41) and row["ci_high"] - row["mean"] == pytest.approx(half)
    assert row["t"] == 20 and row["n"] == 3
    md = out["md"].read_text()
    assert "| parameter | value | a | b | c | d |" in md
    assert f"| m | 20 | 0.110 ± {half:.3f} | **0.410 ± {half:.3f}** |" in md
    assert "|  | 50 | **0.510" in md and "| kappa | 50 |" in md  # a group is named on its first row
    assert md.count("**") == 2 * bold.sum()
    tex = out["tex"].read_text()
    assert r"\textbf{0.410 $\pm$" in tex and r"\begin{tabular}{llrrrr}" in tex
    page = out["html"].read_text()
    assert "<td><b>0.410 ± " in page and page.count("<b>") == bold.sum()
    # lower is better, the best one in bold
    low = write_summary_table(_table([("base", "", "base")], better="lower", bold=1), files, *out.values())
    assert list(low["bold"]) == [True, False, False, False]
    assert "| experiment | a | b | c | d |" in out["md"].read_text()
    with pytest.raises(
        ValueError,
        match=r"summary_tables\.t2\.metric: 'ctr_final' is not in the table of "
        r"experiment 'base'",
    ):
        write_summary_table(_table([("base", "m", "20")], metric="ctr_final"), files, *out.values())


def _with_summary(mutate):
    cfg = copy.deepcopy(BASE)
    cfg["summary_tables"] = {
        "final": {
            "metric": "cumulative_reward",
            "better": "higher",
            "rows": [{"experiment": "knapsack_synthetic", "label": "b75", "budget": 75, "delay": "none"}],
        }
    }
    mutate(cfg)
    return cfg


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (
            lambda c: c["summary_tables"]["final"]["rows"][0].update(experiment="nope"),
            "summary_tables.final.rows.0.experiment: 'nope' is not an experiment of this config",
        ),
        (
            lambda c: c["summary_tables"]["final"].update(algorithms=["alg1", "ucb"]),
            "summary_tables.final.algorithms: ['ucb'] not among the algorithms of experiment 'knapsack_synthetic'",
        ),
        (
            lambda c: c["summary_tables"]["final"]["rows"][0].pop("budget"),
            "summary_tables.final.rows.0: experiment 'knapsack_synthetic' has the budget settings ['75', '225']",
        ),
        (
            lambda c: c["summary_tables"]["final"]["rows"][0].update(delay="uniform"),
            "summary_tables.final.rows.0.delay: 'uniform' is not a delay setting of experiment 'knapsack_synthetic'",
        ),
        (
            lambda c: c["summary_tables"]["final"].update(metric="cumulative_weak_regret"),
            "summary_tables.final.metric: experiment 'knapsack_synthetic' has no 'cumulative_weak_regret'",
        ),
        (
            lambda c: c["summary_tables"]["final"].update(better="more"),
            "summary_tables.final.better: 'more' is not one of",
        ),
        (
            lambda c: (
                c["summary_tables"]["final"]["rows"].append(
                    {"experiment": "knapsack_b", "label": "x", "budget": 75, "delay": "none"}
                )
                or c["experiments"].update(knapsack_b={**c["experiments"]["knapsack_synthetic"], "ci_level": 0.9})
            ),
            "summary_tables.final.rows: the experiments' ci_level differ ([0.9, 0.95])",
        ),
        (lambda c: c.update(ci_level=1.0), "ci_level: 1.0 is greater than or equal to the maximum of 1"),
        (
            lambda c: c["experiments"]["knapsack_synthetic"].update(ci_level=0),
            "experiments.knapsack_synthetic.ci_level: 0 is less than or equal to the minimum of 0",
        ),
    ],
)
def test_a_bad_summary_table_or_confidence_level_is_refused_naming_its_key(mutate, fragment):
    with pytest.raises(ConfigError) as err:
        load_grid(_with_summary(mutate))
    assert fragment in str(err.value)


def test_a_valid_summary_table_resolves_its_rows_and_the_confidence_level_is_inherited():
    grid = load_grid(_with_summary(lambda c: c.update(ci_level=0.96)))
    table = grid.summary_tables["final"]
    assert table.rows == (
        {"experiment": "knapsack_synthetic", "group": "", "label": "b75", "delay": "none", "budget": "75"},
    )
    assert table.algorithms == ("alg1", "alg2", "cd_exp3_reconstructed", "ideal") and table.ci_level == 0.96
    assert grid.experiments["lipschitz_triangle"].ci_level == 0.96
    grid = load_grid(_with_summary(lambda c: c["experiments"]["lipschitz_triangle"].update(ci_level=0.8)))
    assert grid.experiments["lipschitz_triangle"].ci_level == 0.8 and grid.experiments["digits_reward"].ci_level == 0.95


def test_the_t_interval_at_the_configured_level_is_scipys(tmp_path):
    x = np.array([0.3, 1.1, 2.0, 2.2, 4.9])
    m, lo, hi = mean_ci(x[:, None], 0.96)
    expected = stats.t.interval(0.96, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert (lo[0], hi[0]) == pytest.approx(expected, rel=1e-12) and m[0] == pytest.approx(x.mean())
    assert hi[0] - lo[0] > np.subtract(*mean_ci(x[:, None], 0.95)[:0:-1])[0]  # wider than the 95 % one
    csv = _experiment(tmp_path, "e", {"a": 0.1}, seeds=5, ci_level=0.96)
    tidy = pd.read_csv(csv)
    row = tidy[(tidy["metric"] == "ctr")].iloc[0]
    values = 0.1 + 0.01 * np.arange(5)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        stats.t.interval(0.96, 4, loc=values.mean(), scale=stats.sem(values)), rel=1e-9
    )
    # the caption names the level, the interval and the number of seeds
    assert "Mean ± 96 % Student-t CI half-width over n = 5 seeds." in (tmp_path / "e.md").read_text()
    assert r"96 \% Student-t CI half-width over n = 5 seeds" in (tmp_path / "e.tex").read_text()


def test_a_summary_table_names_its_algorithms_and_metric_by_their_display_names(tmp_path):
    cfg = _with_summary(
        lambda c: c.update(
            display={
                "algorithms": {"alg1": "Algorithm 1", "alg2": r"$\alpha$-2"},
                "metrics": {"cumulative_reward": "R"},
            }
        )
    )
    params = load_grid(cfg).summary_tables["final"].as_params()
    assert params["display"] == {
        "algorithms": {"alg1": "Algorithm 1", "alg2": r"$\alpha$-2"},
        "metrics": {"cumulative_reward": "R"},
    }
    files = {"base": _experiment(tmp_path, "base", {"a": 0.1, "b": 0.4, "c": 0.3, "d": 0.2})}
    table = _table(
        [("base", "", "base")], display={"algorithms": {"a": "Alg A", "b": r"$\beta$"}, "metrics": {"ctr": "CTR"}}
    )
    out = {ext: tmp_path / f"s.{ext}" for ext in ("csv", "md", "tex", "html")}
    cells = write_summary_table(table, files, *out.values())
    assert set(cells["algorithm"]) == set(ALGS) and "Alg A" not in out["csv"].read_text()  # the CSV: labels
    md = out["md"].read_text()
    assert "| experiment | Alg A | $\\beta$ | c | d |" in md and md.split("\n")[2].startswith("CTR at T = 20")
    tex = out["tex"].read_text()
    assert r"experiment & Alg A & $\beta$ & c & d \\" in tex and r"\caption{CTR at T = 20" in tex
    assert "<th>Alg A</th>" in out["html"].read_text()
