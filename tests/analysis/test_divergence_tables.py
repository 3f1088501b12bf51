"""Diverged runs in the tables (issue 38): marked and counted, never averaged; the tuning never chooses a
pair whose run diverged."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from banditbench.analysis.aggregate import DIVERGED_NOTE, aggregate_experiment, read_tidy
from banditbench.analysis.claims import cell_values
from banditbench.analysis.paired import paired_statistics, write_paired
from banditbench.analysis.seedtable import collect_seeds
from banditbench.analysis.tuning import apply_choice, as_yaml, choose, read_tables
from banditbench.storage.resultio import save_result
from conftest import CELL

T = 10


def _write(tmp_path, runs, experiment="exp"):
    """runs[(alg, seed)] = (per-round regret, round it diverged at or None), written as a simulate job does."""
    paths = []
    for (alg, seed), (regret, diverged) in runs.items():
        cell = {"experiment": experiment, "algorithm": alg, "delay_label": "none", "budget": None, "horizon": T}
        meta = {"cell": {**cell, "seed": seed}, "metrics": ["regret"], "summary": {"tau": 5.0}}
        regret = np.array(regret, dtype=float)
        if diverged is not None:
            regret[diverged - 1 :] = np.nan
            meta["summary"] = {"tau": float("nan")}
            meta["diverged"] = {"round": diverged, "reason": "its UCB scores contain NaN"}
        path = tmp_path / "runs" / experiment / alg / "none" / "none" / CELL / f"{seed}.npz"
        save_result(path, {"regret": regret}, meta, {"wall_time_s": 0.1})
        paths.append(str(path))
    return paths


@pytest.fixture
def runs(tmp_path):
    """a: seeds 0, 1 steady, seed 2 diverged at round 8 (far above the others before); b: every seed diverged;
    c: steady."""
    return _write(
        tmp_path,
        {
            ("a", 0): (np.full(T, 1.0), None),
            ("a", 1): (np.full(T, 3.0), None),
            ("a", 2): (np.full(T, 100.0), 8),
            ("b", 0): (np.full(T, 1.0), 3),
            ("b", 1): (np.full(T, 1.0), 4),
            ("b", 2): (np.full(T, 1.0), 2),
            ("c", 0): (np.full(T, 0.5), None),
            ("c", 1): (np.full(T, 0.5), None),
            ("c", 2): (np.full(T, 0.5), None),
        },
    )


def test_the_tables_count_diverged_seeds_instead_of_averaging_them(tmp_path, runs):
    out = {k: tmp_path / f"exp.{k}" for k in ("csv", "md", "tex", "curves", "html", "parquet")}
    aggregate_experiment(
        runs, "exp", [5, T], out["csv"], out["md"], out["tex"], out["curves"], "cumulative_regret",
        html_file=out["html"], seeds_file=out["parquet"], workers=1,
    )  # fmt: skip
    tidy = read_tidy(out["csv"])  # a cell with no seed left has no mean: still a valid table
    row = lambda alg, t, metric="cumulative_regret": tidy[  # noqa: E731
        (tidy.algorithm == alg) & (tidy.t == t) & (tidy.metric == metric)
    ].iloc[0]
    # a's diverged seed is left out at every horizon, also before it diverged (t = 5: 100 per round)
    for t in (5, T):
        assert row("a", t)["mean"] == 2.0 * t and row("a", t)["n"] == 2 and row("a", t)["diverged"] == 1
    assert row("a", T, "tau")["mean"] == 5.0 and row("a", T, "tau")["diverged"] == 1
    assert np.isnan(row("b", T)["mean"]) and row("b", T)["n"] == 0 and row("b", T)["diverged"] == 3
    assert row("c", T)["diverged"] == 0 and row("c", T)["n"] == 3
    md = out["md"].read_text()
    assert DIVERGED_NOTE in md
    assert "20.00 ± " in md and "(1 of 3 seeds diverged)" in md and "diverged (3 of 3 seeds)" in md
    assert "(1 of 3 seeds diverged)" in out["html"].read_text() and "diverged (3 of 3 seeds)" in out["tex"].read_text()
    seeds = pd.read_parquet(out["parquet"])
    assert dict(seeds.groupby(["algorithm", "seed"], observed=True)["diverged"].first()) == {
        ("a", 0): 0, ("a", 1): 0, ("a", 2): 8, ("b", 0): 3, ("b", 1): 4, ("b", 2): 2,
        ("c", 0): 0, ("c", 1): 0, ("c", 2): 0,
    }  # fmt: skip


def test_paired_comparisons_and_claims_leave_a_diverged_seed_out(tmp_path, runs):
    seeds = collect_seeds(runs, "exp", [5, T])
    table, _ = paired_statistics(seeds, "exp", [("a", "c"), ("b", "c")], "cumulative_regret", "lower")
    a_c = table[(table.a == "a") & (table.t == T)].iloc[0]
    assert a_c["n"] == 2 and a_c["diverged"] == 1 and a_c["mean"] == pytest.approx(2.0 * T - 0.5 * T)
    b_c = table[(table.a == "b") & (table.t == T)].iloc[0]
    assert b_c["n"] == 0 and b_c["diverged"] == 3 and np.isnan(b_c["mean"])
    seeds.to_parquet(tmp_path / "seeds.parquet")
    md = tmp_path / "paired.md"
    write_paired(
        tmp_path / "seeds.parquet", "exp",
        {"pairs": [("a", "c"), ("b", "c")], "metric": "cumulative_regret", "better": "lower", "interval": "t"},
        tmp_path / "p.csv", tmp_path / "pc.csv", md, tmp_path / "p.tex", tmp_path / "p.html",
    )  # fmt: skip
    text = md.read_text()
    assert "(1 of 3 seeds diverged)" in text and "diverged (3 of 3 seeds)" in text and "left out" in text
    # the claims pair the seeds that did not diverge, at every table horizon
    assert list(cell_values(seeds)[("cumulative_regret", "a", "none", "none", 5)].index) == [0, 1]


def test_the_tuning_never_chooses_a_diverged_pair():
    rows = [
        ("tune_synthetic_a", "random", 100.0),
        ("tune_synthetic_b", "random", 10.0),
        # the first pair in grid order and the lowest on a: diverged on b
        ("tune_synthetic_a", "neurallog_ucb1_nu0.01_lam0.01", 1.0),
        ("tune_synthetic_b", "neurallog_ucb1_nu0.01_lam0.01", float("nan")),
        ("tune_synthetic_a", "neurallog_ucb1_nu100_lam100", 50.0),
        ("tune_synthetic_b", "neurallog_ucb1_nu100_lam100", 5.0),
        ("tune_synthetic_a", "neurallog_ucb1_nu1_lam100", 20.0),
        ("tune_synthetic_b", "neurallog_ucb1_nu1_lam100", float("nan")),
        # every pair diverged
        ("tune_synthetic_a", "ncbf_ucb_nu0.1_lam0.01", float("nan")),
        ("tune_synthetic_b", "ncbf_ucb_nu0.1_lam0.01", 1.0),
    ]
    chosen = choose(rows)["synthetic"]
    assert chosen["neurallog_ucb1"] == {
        "nu": 100.0,
        "lam": 100.0,
        "score": 0.5,
        "diverged": [[0.01, 0.01], [1.0, 100.0]],
    }
    assert chosen["ncbf_ucb"] == {"nu": None, "lam": None, "score": None, "diverged": [[0.1, 0.01]]}
    text = as_yaml({"synthetic": chosen})
    assert (
        "neurallog_ucb1: {nu: 100, lam: 100}   # regret / random 0.5000; diverged, never chosen: nu 0.01 lam 0.01, nu 1 lam 100"
        in text
    )
    assert "ncbf_ucb: null   # every (nu, lam) pair diverged: none chosen" in text
    line = "    neurallog_ucb1: {policy: neurallog_ucb1, params: {nu: 7, lam: 7}}\n"
    config = "experiments:\n  synthetic_h1:\n    algorithms:\n" + line + line.replace("neurallog_ucb1", "ncbf_ucb")
    assert apply_choice(config, {"synthetic": chosen}) == config.replace(
        "nu: 7, lam: 7}}\n    ncbf", "nu: 100, lam: 100}}\n    ncbf", 1
    )


def test_the_tuning_reads_a_diverged_cell_of_the_tidy_tables_as_diverged(tmp_path):
    path = tmp_path / "tune_synthetic_a.csv"
    path.write_text(
        "experiment,algorithm,delay,budget,t,metric,mean,ci_low,ci_high,n,sd,min,max,median,q1,q3,diverged\n"
        "tune_synthetic_a,random,none,none,2000,cumulative_regret,90,0,0,3,1,1,1,1,1,1,0\n"
        "tune_synthetic_a,neurallog_ucb1_nu0.01_lam100,none,none,2000,cumulative_regret,5,0,0,2,1,1,1,1,1,1,1\n"
        "tune_synthetic_a,neurallog_ucb1_nu0.01_lam0.01,none,none,2000,cumulative_regret,,,,0,,,,,,,3\n"
        "tune_synthetic_a,neurallog_ucb1_nu1_lam1,none,none,2000,cumulative_regret,45,0,0,3,1,1,1,1,1,1,0\n"
    )
    rows = dict(((e, a), v) for e, a, v in read_tables([path]))
    assert np.isnan(rows[("tune_synthetic_a", "neurallog_ucb1_nu0.01_lam100")])
    assert np.isnan(rows[("tune_synthetic_a", "neurallog_ucb1_nu0.01_lam0.01")])
    chosen = choose(read_tables([path]))["synthetic"]["neurallog_ucb1"]
    assert (chosen["nu"], chosen["lam"], chosen["diverged"]) == (1.0, 1.0, [[0.01, 0.01], [0.01, 100.0]])


def test_the_in_process_tuning_grid_records_a_diverging_corner_and_never_chooses_it(tmp_path, capsys):
    """run_grid on a grid whose lam = 100 corner makes gradient descent diverge (lr 2 lam > 2): that pair's
    runs are NaN (in the cache too, so a resumed run keeps them), named on stderr, and never chosen."""
    from banditbench.analysis.tuning import run_grid

    nn = {"optimizer": "gd", "lr": 0.5, "train_every": 5, "train_steps": 20, "nu": 1}
    config = {
        "experiments": {
            "tune_synthetic_x": {
                "environment": {"name": "synthetic_logistic", "params": {"dimension": 3, "n_arms": 4}},
                "horizon": 40,
                "seeds": [1000],
                "table_horizons": [40],
                "delays": {"none": {"kind": "none"}},
                "algorithms": {
                    "neurallog_ucb1_nu1_lam0.01": {"policy": "neurallog_ucb1", "params": {**nn, "lam": 0.01}},
                    "neurallog_ucb1_nu1_lam100": {"policy": "neurallog_ucb1", "params": {**nn, "lam": 100}},
                    "random": {"policy": "random_arm"},
                },
            }
        }
    }
    cache = tmp_path / "runs.csv"
    rows = run_grid(config, ["tune_synthetic_x"], [1000], None, cache=cache)
    values = {a: v for _, a, v in rows}
    assert np.isnan(values["neurallog_ucb1_nu1_lam100"]) and np.isfinite(values["neurallog_ucb1_nu1_lam0.01"])
    assert "tune_synthetic_x / neurallog_ucb1_nu1_lam100 (policy neurallog_ucb1) / delay none / seed 1000: " in (
        capsys.readouterr().err
    )
    assert "neurallog_ucb1_nu1_lam100,1000,40,nan" in cache.read_text()
    again = run_grid(config, ["tune_synthetic_x"], [1000], None, cache=cache)  # from the cache: no run
    assert np.isnan(dict((a, v) for _, a, v in again)["neurallog_ucb1_nu1_lam100"])
    chosen = choose(rows)["synthetic"]["neurallog_ucb1"]
    assert (chosen["nu"], chosen["lam"], chosen["diverged"]) == (1.0, 0.01, [[1.0, 100.0]])
