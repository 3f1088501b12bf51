"""Paired comparisons (banditbench.configuration.comparisons, banditbench.analysis.paired) and the per-seed table they read."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from banditbench.analysis.aggregate import aggregate_experiment
from banditbench.analysis.paired import paired_interval, paired_statistics, write_paired
from banditbench.analysis.seedtable import collect_seeds, read_seeds
from banditbench.configuration.grid import load_grid
from banditbench.errors import ConfigError
from banditbench.storage.resultio import save_result
from conftest import CELL

PROVENANCE = {
    "commit": "abc123",
    "dirty": False,
    "host": "node7",
    "cpu": "Test CPU",
    "python": "3.11.7",
    "blas": [{"internal_api": "openblas", "version": "0.3.30", "architecture": "Haswell"}],
    "packages": {"banditbench": "0.1.0"},
}


def _write(tmp_path, per_round, experiment="exp", delay="none", order=None):
    """per_round[alg] = list over seeds of the constant per-round regret: cumulative regret at t is t * value."""
    paths = []
    for alg, values in per_round.items():
        seeds = list(range(len(values)))
        for seed in order or seeds:
            cell = {
                "experiment": experiment,
                "algorithm": alg,
                "delay_label": delay,
                "budget": None,
                "horizon": 10,
                "seed": seed,
            }
            path = tmp_path / "runs" / experiment / alg / delay / "none" / CELL / f"{seed}.npz"
            save_result(
                path,
                {"regret": np.full(10, float(values[seed]))},
                {"cell": cell, "seed": seed, "metrics": ["regret"], "summary": {}},
                {"wall_time_s": 0.1},
                PROVENANCE,
            )
            paths.append(str(path))
    return paths


A = [1.0, 1.2, 1.5, 1.1]  # per-round regret of A on seeds 0..3
B = [0.8, 1.05, 1.3, 0.95]  # of B: the differences per seed are 0.2, 0.15, 0.2, 0.15 per round


def test_paired_t_interval_is_the_direct_computation_on_known_numbers(tmp_path):
    seeds = collect_seeds(_write(tmp_path, {"A": A, "B": B}), "exp", [5, 10])
    table, curves = paired_statistics(seeds, "exp", [["A", "B"]], "cumulative_regret", "lower")
    row = table[table.t == 10].iloc[0]
    d = 10 * (np.array(A) - np.array(B))  # cumulative differences at t = 10: 2, 1.5, 2, 1.5
    half = stats.t.ppf(0.975, 3) * d.std(ddof=1) / 2
    assert row["mean"] == pytest.approx(1.75) and row["sd"] == pytest.approx(np.sqrt(1 / 12))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((1.75 - half, 1.75 + half), rel=1e-12)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        stats.t.interval(0.95, 3, loc=d.mean(), scale=stats.sem(d)), rel=1e-12
    )
    # lower regret is better: A is worse on every seed
    assert row["a_better"] == 0 and row["tied"] == 0 and row["n"] == 4 and row["interval"] == "t"
    assert sorted(table["t"]) == [5, 10] and curves["t"].max() == 10 and (curves["t"] >= 1).all()
    # the separate intervals overlap; the paired one excludes 0
    sep = {a: stats.t.interval(0.95, 3, loc=10 * np.mean(v), scale=10 * stats.sem(v)) for a, v in (("A", A), ("B", B))}
    assert sep["A"][0] < sep["B"][1] and row["ci_low"] > 0


def test_pairing_matches_seed_to_seed_whatever_the_file_order(tmp_path):
    """B's files listed in reverse seed order: the differences are still taken seed by seed (a pairing by
    position would give the differences 10 * (A[s] - B[3 - s]) and another standard deviation)."""
    forward = collect_seeds(_write(tmp_path / "f", {"A": A, "B": B}), "exp", [10])
    paths = _write(tmp_path / "r", {"A": A}) + _write(tmp_path / "r", {"B": B}, order=[3, 2, 1, 0])
    reverse = collect_seeds(paths, "exp", [10])
    one = paired_statistics(forward, "exp", [["A", "B"]], "cumulative_regret", "lower")[0]
    two = paired_statistics(reverse, "exp", [["A", "B"]], "cumulative_regret", "lower")[0]
    assert np.allclose(one[["mean", "sd", "ci_low", "ci_high"]], two[["mean", "sd", "ci_low", "ci_high"]])
    by_position = 10 * (np.array(A) - np.array(B)[::-1])
    assert two["sd"].iloc[0] == pytest.approx(np.sqrt(1 / 12)) and by_position.std(ddof=1) > 1


def test_a_seed_only_one_algorithm_ran_is_refused(tmp_path):
    paths = _write(tmp_path, {"A": A, "B": B})
    seeds = collect_seeds([p for p in paths if not p.endswith(f"B/none/none/{CELL}/2.npz")], "exp", [10])
    with pytest.raises(ValueError, match=r"needs the same seeds, but A ran seeds \[0, 1, 2, 3\] and B ran \[0, 1, 3\]"):
        paired_statistics(seeds, "exp", [["A", "B"]], "cumulative_regret", "lower")


def test_bootstrap_interval_is_scipys_and_equal_differences_give_a_point(tmp_path):
    rng = np.random.default_rng(7)
    d = rng.normal(1.0, 2.0, size=(12, 3))
    d[:, 2] = 0.5  # every seed the same difference
    mean, low, high, sd = paired_interval(d, 0.9, "bootstrap", resamples=2000, seed=3)
    ref = stats.bootstrap(
        (d[:, :2],),
        np.mean,
        axis=0,
        vectorized=True,
        n_resamples=2000,
        confidence_level=0.9,
        method="BCa",
        rng=np.random.default_rng(3),
    ).confidence_interval
    assert np.allclose(low[:2], ref.low) and np.allclose(high[:2], ref.high)
    assert low[2] == high[2] == mean[2] == 0.5 and sd[2] == 0
    assert np.all(low[:2] < mean[:2]) and np.all(mean[:2] < high[:2])
    one = paired_interval(d[:1], 0.95, "t")
    assert np.isnan(one[1]).all() and np.isnan(one[2]).all()


def test_paired_files_name_the_interval_and_the_seeds(tmp_path):
    runs = _write(tmp_path, {"A": A, "B": B, "C": [0.0, 0.0, 0.0, 0.0]})
    out = {k: tmp_path / f"p.{k}" for k in ("csv", "curves.csv", "md", "tex", "html", "pdf", "png")}
    parquet = tmp_path / "exp.parquet"
    aggregate_experiment(
        runs,
        "exp",
        [5, 10],
        tmp_path / "t.csv",
        tmp_path / "t.md",
        tmp_path / "t.tex",
        tmp_path / "c.csv",
        "cumulative_regret",
        seeds_file=parquet,
        workers=1,
    )
    spec = {"pairs": [["A", "B"], ["A", "C"]], "metric": "cumulative_regret", "better": "lower", "interval": "t"}
    write_paired(
        parquet,
        "exp",
        spec,
        out["csv"],
        out["curves.csv"],
        out["md"],
        out["tex"],
        out["html"],
        [out["pdf"], out["png"]],
    )
    md = out["md"].read_text()
    assert "95 % Student-t interval of the mean paired difference over n = 4 seeds" in md
    # the header says why a pair separated here may be "not separated" in the claims report
    assert "Why these can differ from the claims report's verdicts" in md and "fixed-n intervals" in md
    assert "anytime-valid confidence sequence" in md and "distribution-free" in md
    assert "| A − B | 1.75 ± 0.46 (0/4)" in md and "| A − C | 12.00 ± 3.44 (0/4)" in md
    assert r"Student-t" in out["tex"].read_text() and "n = 4 seeds" in out["html"].read_text()
    assert out["pdf"].read_bytes()[:4] == b"%PDF" and out["png"].read_bytes()[:4] == b"\x89PNG"
    write_paired(
        parquet,
        "exp",
        {**spec, "interval": "bootstrap", "resamples": 999},
        out["csv"],
        out["curves.csv"],
        out["md"],
        out["tex"],
        out["html"],
        spread="sd",
    )
    md = out["md"].read_text()
    assert "mean ± standard deviation of the per-seed differences over n = 4 seeds" in md
    assert "| A − B | 1.75 ± 0.29 (0/4)" in md
    write_paired(
        parquet,
        "exp",
        {**spec, "interval": "bootstrap", "resamples": 999},
        out["csv"],
        out["curves.csv"],
        out["md"],
        out["tex"],
        out["html"],
    )
    assert (
        "95 % BCa bootstrap interval of the mean paired difference over n = 4 seeds (999 resamples)"
        in out["md"].read_text()
    )
    assert pd.read_csv(out["csv"])["interval"].eq("bootstrap").all()


def test_the_per_seed_table_holds_every_seed_with_its_provenance(tmp_path):
    runs = _write(tmp_path, {"A": A, "B": B})
    parquet = tmp_path / "exp.parquet"
    aggregate_experiment(
        runs,
        "exp",
        [5, 10],
        tmp_path / "t.csv",
        tmp_path / "t.md",
        tmp_path / "t.tex",
        tmp_path / "c.csv",
        "cumulative_regret",
        seeds_file=parquet,
        workers=1,
    )
    df = pd.read_parquet(parquet)  # the README's example
    final = df[df.table_horizon & (df.metric == "cumulative_regret") & (df.t == 10)]
    assert len(final) == 8 and sorted(final[final.algorithm == "A"]["value"]) == pytest.approx(sorted(10 * np.array(A)))
    assert set(df["commit"]) == {"abc123"} and set(df["host"]) == {"node7"} and set(df["dirty"]) == {"no"}
    assert set(df["blas"]) == {"openblas 0.3.30 Haswell"}
    assert set(df.loc[df.table_horizon, "t"]) == {5, 10}
    # the tables are the statistics of that table
    tidy = pd.read_csv(tmp_path / "t.csv")
    row = tidy[(tidy.algorithm == "B") & (tidy.t == 10) & (tidy.metric == "cumulative_regret")].iloc[0]
    assert row["mean"] == pytest.approx(final[final.algorithm == "B"]["value"].mean())
    assert row["sd"] == pytest.approx(final[final.algorithm == "B"]["value"].std(ddof=1))
    assert read_seeds(parquet).shape == df.shape


def test_parallel_reading_gives_the_same_table(tmp_path):
    runs = _write(tmp_path, {f"alg{i}": list(np.linspace(0, 1, 60)) for i in range(4)})
    one = collect_seeds(runs, "exp", [10], workers=1)
    two = collect_seeds(runs, "exp", [10], workers=2)  # 240 files: spread over 2 processes
    pd.testing.assert_frame_equal(one, two)


def _config(**paired):
    algs = {"ldb_df": {"policy": "ldb_df"}, "ldb_zero": {"policy": "ldb_zero"}, "random": {"policy": "random_pair"}}
    exp = {
        "environment": {"name": "synthetic_dueling", "params": {"dimension": 4, "n_arms": 5}},
        "horizon": 50,
        "seeds": 2,
        "algorithms": algs,
        "delays": {"none": {"kind": "none"}},
    }
    if paired:
        exp["paired"] = paired.get("own", {})
    single = {**exp, "algorithms": {"ldb_df": {"policy": "ldb_df"}}}
    single.pop("paired", None)
    return {"experiments": {"e": exp, "single": single}, **({"paired": paired["top"]} if "top" in paired else {})}


def test_every_experiment_with_two_algorithms_is_paired_against_its_first():
    grid = load_grid(_config())
    assert grid.experiments["e"].paired == {
        "pairs": [["ldb_df", "ldb_zero"], ["ldb_df", "random"]],
        "metric": "cumulative_regret",
        "better": "lower",
        "interval": "t",
        "resamples": 9999,
    }
    assert grid.experiments["single"].paired is None
    assert load_grid(_config(own={"reference": "random"})).experiments["e"].paired["pairs"] == [
        ["random", "ldb_df"],
        ["random", "ldb_zero"],
    ]
    assert load_grid(_config(own={"pairs": [["ldb_zero", "ldb_df"]], "interval": "bootstrap"})).experiments["e"].paired[
        "pairs"
    ] == [["ldb_zero", "ldb_df"]]
    assert load_grid(_config(own=False)).experiments["e"].paired is None
    top = load_grid(_config(top={"reference": "random", "interval": "bootstrap", "resamples": "999"}))
    assert top.experiments["e"].paired["pairs"][0] == ["random", "ldb_df"]
    assert top.experiments["e"].paired["resamples"] == 999 and top.experiments["e"].paired["interval"] == "bootstrap"


@pytest.mark.parametrize(
    "paired, message",
    [
        ({"own": {"reference": "ldb_dff"}}, "experiments.e.paired.reference: 'ldb_dff' is not an algorithm"),
        ({"own": {"pairs": [["ldb_df", "nope"]]}}, "experiments.e.paired.pairs.0: 'nope' is not an algorithm"),
        ({"own": {"pairs": [["ldb_df", "ldb_df"]]}}, "experiments.e.paired.pairs.0: a pair of 'ldb_df' with itself"),
        ({"own": {"metric": "reward"}}, "experiments.e.paired.metric: 'reward' is not logged"),
        ({"own": {"interval": "wald"}}, "experiments.e.paired.interval: 'wald' is not one of ['t', 'bootstrap']"),
        ({"top": {"reference": "nope"}}, "paired.reference: 'nope' is not an algorithm of any experiment"),
        ({"top": {"resamples": "ten"}}, "paired.resamples: 'ten' is not an integer >= 100"),
    ],
)
def test_a_bad_paired_setting_is_refused_naming_its_key(paired, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("(", r"\(").replace("[", r"\[")):
        load_grid(_config(**paired))


def _write_late_self_duels(tmp_path, late):
    """Runs of A and B whose ``late_self_duel_rate`` summaries are ``late[alg]`` (one per seed)."""
    paths = []
    for alg, rates in late.items():
        for seed, rate in enumerate(rates):
            cell = {
                "experiment": "exp",
                "algorithm": alg,
                "delay_label": "none",
                "budget": None,
                "horizon": 10,
                "seed": seed,
            }
            path = tmp_path / "runs" / "exp" / alg / "none" / "none" / CELL / f"{seed}.npz"
            save_result(
                path,
                {"regret": np.full(10, 1.0 + seed + (alg == "A"))},
                {"cell": cell, "seed": seed, "metrics": ["regret"], "summary": {"late_self_duel_rate": rate}},
                {"wall_time_s": 0.1},
                PROVENANCE,
            )
            paths.append(str(path))
    return paths


def test_paired_tables_say_when_an_algorithm_locks_onto_self_duels(tmp_path):
    from banditbench.analysis.paired import lock_in_note

    runs = _write_late_self_duels(tmp_path, {"A": [1.0, 0.95, 0.85, 1.0], "B": [0.9, 0.2, 0.0, 0.5]})
    parquet = tmp_path / "exp.parquet"
    aggregate_experiment(
        runs,
        "exp",
        [10],
        tmp_path / "t.csv",
        tmp_path / "t.md",
        tmp_path / "t.tex",
        tmp_path / "c.csv",
        "cumulative_regret",
        seeds_file=parquet,
        workers=1,
    )
    out = {k: tmp_path / f"p.{k}" for k in ("csv", "curves.csv", "md", "tex", "html")}
    spec = {"pairs": [["A", "B"]], "metric": "cumulative_regret", "better": "lower", "interval": "t"}
    write_paired(parquet, "exp", spec, out["csv"], out["curves.csv"], out["md"], out["tex"], out["html"])
    lines = [line for line in out["md"].read_text().splitlines() if line.startswith("Self-duel lock-in")]
    assert lines == [
        "Self-duel lock-in: A (95 %; 3 of 4 seeds above 90 %) played one arm against itself in more "
        "than 90 % of the last 10 % of rounds (mean over seeds); such duels carry no information, so "
        "these runs' regret is frozen on the arm they locked onto."
    ]
    assert (
        "Self-duel lock-in: A" in out["html"].read_text()
        and "\n\n" not in out["tex"].read_text().split(r"\caption{")[1].split("}")[0]
    )
    seeds = read_seeds(parquet)
    assert lock_in_note(seeds, ["B"]) is None  # B's mean late rate is 0.4
    assert lock_in_note(seeds[seeds.metric != "late_self_duel_rate"], ["A", "B"]) is None


def test_the_lock_in_line_names_what_each_policy_states_about_self_duels(tmp_path):
    """Issue 50: self-duels as a choice, never an accident: the line says whether the locked algorithm's policy
    may duel an arm with itself (``Policy.self_duels``, the parameter that decides it)."""
    from banditbench.analysis.paired import lock_in_note
    from banditbench.configuration.comparisons import self_duel_statements

    statements = self_duel_statements(
        {
            "A": {"policy": "maxinp", "params": {"preset": "authors"}},
            "B": {"policy": "colstim", "params": {"distinct_arms": True}},
            "R": {"policy": "random_pair"},
            "L": {"policy": "ldb_df"},
            "U": {"policy": "linucb"},
        }
    )
    assert statements == {
        "A": "self-duels allowed (distinct_arms: false)",
        "B": "no self-duels (distinct_arms: true)",
        "R": "no self-duels",
        "L": "self-duels allowed",
    }
    runs = _write_late_self_duels(tmp_path, {"A": [1.0, 0.95, 0.85, 1.0], "B": [0.9, 0.2, 0.0, 0.5]})
    parquet = tmp_path / "exp.parquet"
    aggregate_experiment(
        runs,
        "exp",
        [10],
        tmp_path / "t.csv",
        tmp_path / "t.md",
        tmp_path / "t.tex",
        tmp_path / "c.csv",
        "cumulative_regret",
        seeds_file=parquet,
        workers=1,
    )
    assert lock_in_note(read_seeds(parquet), ["A", "B"], statements).startswith(
        "Self-duel lock-in: A (95 %; 3 of 4 seeds above 90 %; self-duels allowed (distinct_arms: false)) played"
    )
