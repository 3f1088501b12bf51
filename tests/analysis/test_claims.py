"""The papers' claims: checked against the grid before any job, judged on the per-seed tables, printed by
``banditbench claims``, and seeds added until each is decided (``--until-decided``)."""

import copy
import json
import re

import numpy as np
import pandas as pd
import pytest

from banditbench.analysis.claims import cell_values, differences, evaluate, markdown, read_tables
from banditbench.cli import main
from banditbench.configuration.claims import as_params, from_params
from banditbench.configuration.grid import load_grid
from banditbench.errors import ConfigError
from conftest import ROOT

EXPERIMENT = {
    "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
    "horizon": 40,
    "seeds": 3,
    "table_horizons": [20, 40],
    "algorithms": {"ldb": {"policy": "ldb_df"}, "random": {"policy": "random_pair"},
                   "twin": {"policy": "random_pair"}},
    "delays": {"none": {"kind": "none"}, "geo": {"kind": "geometric", "mean": 5}},
}  # fmt: skip
CLAIMS = {
    "ldb_beats_random": {"paper": "000", "where": "Sec. 5", "quote": "LDB-DF outperforms random duels",
                         "experiment": "duel", "metric": "cumulative_regret", "delay": "none",
                         "a": "ldb", "b": "random", "relation": "less"},
    "random_grows": {"paper": "000", "where": "Sec. 5", "quote": "regret grows linearly",
                     "experiment": "duel", "metric": "cumulative_regret", "delay": "geo", "a": "random",
                     "b_horizon": 20, "relation": "greater"},
    "no_data": {"paper": "000", "where": "Sec. 6", "quote": "on the full dataset ...", "untestable": "not public"},
}  # fmt: skip


def _config(claims=None, **top):
    return {"experiments": {"duel": copy.deepcopy(EXPERIMENT)}, "claims": copy.deepcopy(claims or CLAIMS), **top}


def test_claims_resolve_with_their_defaults():
    grid = load_grid(_config())
    claims = grid.claims
    assert set(claims) == set(CLAIMS) and grid.claims_alpha == 0.05
    beats = claims["ldb_beats_random"]
    assert (beats.a.algorithm, beats.a.delay, beats.a.budget, beats.a.horizon) == ("ldb", "none", "none", 40)
    assert beats.b.algorithm == "random" and beats.statement() == "ldb < random (cumulative_regret, T = 40, delay none)"
    grows = claims["random_grows"]
    assert (grows.b.algorithm, grows.b.horizon) == ("random", 20)
    assert claims["no_data"].untestable == "not public" and claims["no_data"].a is None
    assert grid.claim_experiments() == ["duel"]
    assert from_params(as_params(claims, 0.05)) == (claims, 0.05)
    # the default interval: the betting CS on the range of A - B that synthetic_dueling's regret in [0, 4] gives
    assert beats.method == "betting" and beats.reason == ""
    assert beats.bounds == pytest.approx((-160.0, 160.0), rel=1e-8)  # cumulative regret at T = 40 on both sides
    assert grows.bounds == pytest.approx((-80.0, 160.0), rel=1e-8)  # at T = 40 against at T = 20


@pytest.mark.parametrize("change, message", [
    ({"experiment": "dual"}, r"^claims\.ldb_beats_random\.experiment: 'dual' is not an experiment of this config"),
    ({"a": "ldbb"}, r"^claims\.ldb_beats_random\.a: 'ldbb' is not an algorithm of experiment 'duel'"),
    ({"b": "rand"}, r"^claims\.ldb_beats_random\.b: 'rand' is not an algorithm"),
    ({"metric": "cumulative_reward"}, r"^claims\.ldb_beats_random\.metric: experiment 'duel' has no 'cumulative_reward'"),
    ({"metric": "regret"}, r"^claims\.ldb_beats_random\.metric: 'regret' is neither cumulative_<metric>"),
    ({"metric": "per_round_regret"}, r"has no 'per_round_regret' \(its per_round_metrics"),
    ({"horizon": 30}, r"^claims\.ldb_beats_random\.horizon: 30 is not a table horizon of experiment 'duel' \(\[20, 40\]\)"),
    ({"horizon": 400}, r"^claims\.ldb_beats_random\.horizon: 400 is not a table horizon"),
    ({"delay": "geometric"}, r"^claims\.ldb_beats_random\.delay: 'geometric' is not a delay setting"),
    ({"delay": None}, r"^claims\.ldb_beats_random: experiment 'duel' has the delay settings \['none', 'geo'\]; name one"),
    ({"b": None}, r"^claims\.ldb_beats_random: nothing to compare A with"),
    ({"value": 1.0}, r"^claims\.ldb_beats_random\.value: a constant B takes no b"),
    ({"b": "ldb"}, r"^claims\.ldb_beats_random: A and B are the same results"),
    ({"bounds": [1, -1]}, r"^claims\.ldb_beats_random\.bounds: must be two finite numbers lo < hi"),
    ({"method": "gaussian-t"}, r"^claims\.ldb_beats_random\.reason: method gaussian-t assumes Gaussian differences"),
    ({"reason": "why"}, r"^claims\.ldb_beats_random\.reason: only method gaussian-t takes a reason"),
    ({"method": "bootstrap"}, r"claims\.ldb_beats_random\.method: 'bootstrap' is not one of"),
    ({"relation": "fewer"}, r"claims\.ldb_beats_random\.relation: 'fewer' is not one of"),
    ({"untestable": "why", "a": "ldbb"}, r"^claims\.ldb_beats_random\.a: 'ldbb' is not an algorithm"),
    ({"quote": None}, r"claims\.ldb_beats_random: 'quote' is a required property"),
])  # fmt: skip
def test_a_bad_claim_is_refused_before_any_job_naming_its_key(change, message):
    claims = copy.deepcopy(CLAIMS)
    for key, value in change.items():
        if value is None:
            claims["ldb_beats_random"].pop(key)
        else:
            claims["ldb_beats_random"][key] = value
    with pytest.raises(ConfigError, match=message):
        load_grid(_config(claims))


def test_slicing_drops_the_claims_of_what_it_cuts_and_a_short_horizon_skips_longer_claims():
    grid = load_grid(_config(only_algorithms="ldb,twin"))
    assert set(grid.claims) == {"no_data"}  # both testable claims name 'random'
    claims = copy.deepcopy(CLAIMS)
    claims["ldb_beats_random"]["horizon"] = 40
    short = load_grid({**_config(claims), "horizon": 20})
    assert short.claims["ldb_beats_random"].skipped.startswith("horizon 40 is beyond this run's 20")
    assert short.claims["random_grows"].skipped.startswith("A and B are both at this run's final horizon 20")
    assert short.claim_experiments() == []


def _table(values: dict[tuple[str, str, int], list[float]]) -> pd.DataFrame:
    """A per-seed table: ``(algorithm, delay, t) -> one value per seed`` of cumulative_regret."""
    rows = [
        {"experiment": "duel", "algorithm": alg, "delay": delay, "budget": "none", "seed": seed, "t": t,
         "metric": "cumulative_regret", "value": v, "table_horizon": True}
        for (alg, delay, t), vs in values.items()
        for seed, v in enumerate(vs)
    ]  # fmt: skip
    return pd.DataFrame(rows).astype({"algorithm": "category", "metric": "category"})


def test_verdicts_follow_the_paired_differences():
    """On the betting CS over the declared range of A - B ([-160, 160] for cumulative regret at T = 40): 200 seeds
    separate a difference of 5 (its half-width is about 2.4 W / n)."""
    rng = np.random.default_rng(0)
    n = 200
    ldb = rng.normal(10, 1, n)
    table = _table({
        ("ldb", "none", 40): ldb, ("random", "none", 40): ldb + 5 + rng.normal(0, 0.5, n),
        ("random", "geo", 40): np.full(n, 20.0) + rng.normal(0, 1, n), ("random", "geo", 20): np.full(n, 10.0),
    })  # fmt: skip
    grid = load_grid(_config())
    claim = grid.claims["ldb_beats_random"]
    assert np.allclose(differences(claim, table), ldb - table[table.algorithm == "random"].value[:n].to_numpy())
    results = evaluate(grid.claims, {"duel": table}, 0.05).set_index("claim")
    assert results.loc["ldb_beats_random", "verdict"] == "supported" and results.loc["ldb_beats_random", "n"] == n
    assert results.loc["ldb_beats_random", "high"] < 0
    row = results.loc["ldb_beats_random"]
    assert row["method"] == "betting CS (hedged capital) on [-160, 160]"
    assert (row["range_low"], row["range_high"]) == pytest.approx((-160.0, 160.0), rel=1e-8)
    assert results.loc["random_grows", "verdict"] == "supported"
    assert results.loc["no_data", "verdict"] == "untestable" and results.loc["no_data", "reason"] == "not public"
    # the other side: contradicted; no difference: not separated, with the detectable effect
    claims = copy.deepcopy(CLAIMS)
    claims["ldb_beats_random"]["relation"] = "greater"
    claims["random_grows"] = {**claims["random_grows"], "b_horizon": None}
    del claims["random_grows"]["b_horizon"]
    claims["random_grows"].update(b="twin", delay="none")
    twin = _table({("ldb", "none", 40): ldb, ("random", "none", 40): ldb + 5,
                   ("twin", "none", 40): ldb + 5 + rng.normal(0, 1, n)})  # fmt: skip
    results = evaluate(load_grid(_config(claims)).claims, {"duel": twin}, 0.05).set_index("claim")
    assert results.loc["ldb_beats_random", "verdict"] == "contradicted"
    row = results.loc["random_grows"]
    assert row["verdict"] == "not separated" and row["low"] < 0 < row["high"]
    assert row["detectable"] == pytest.approx((row["high"] - row["low"]) / 2)


def test_missing_results_and_too_few_seeds_are_not_run_with_the_reason():
    grid = load_grid(_config())
    results = evaluate(grid.claims, {"duel": None}, 0.05).set_index("claim")
    assert results.loc["ldb_beats_random", "verdict"] == "not run"
    assert results.loc["ldb_beats_random", "reason"] == "no results yet"
    one_seed = _table({("ldb", "none", 40): [1.0], ("random", "none", 40): [2.0]})
    results = evaluate(grid.claims, {"duel": one_seed}, 0.05).set_index("claim")
    assert results.loc["ldb_beats_random", "reason"] == "1 paired seed(s) in the results; 2 are needed"


def test_the_claims_command_prints_the_table(tmp_path, capsys):
    import yaml

    rng = np.random.default_rng(1)
    ldb = rng.normal(10, 1, 200)
    (tmp_path / "results/c/tables").mkdir(parents=True)  # the tables of config c.yaml's run
    _table({("ldb", "none", 40): ldb, ("random", "none", 40): ldb + 6 + rng.normal(0, 0.3, 200)}).to_parquet(
        tmp_path / "results/c/tables/duel.parquet"
    )
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(_config(), sort_keys=False))
    assert main(["claims", str(config), "--results", str(tmp_path / "results"), "--csv", str(tmp_path / "c.csv")]) == 0
    out, err = capsys.readouterr()
    assert re.search(r"\| ldb_beats_random \| 000 \| Sec\. 5 \| \*\*supported\*\* \| ldb < random .*n = 200", out)
    assert (
        "| random_grows | 000 | Sec. 5 | **not run** |" in out and "no results yet" not in out.split("random_grows")[0]
    )
    assert err.strip() == "Claims: 1 supported, 1 not run, 1 untestable"
    assert list(pd.read_csv(tmp_path / "c.csv")["verdict"]) == ["supported", "not run", "untestable"]
    differences = tmp_path / "c.differences.csv"
    assert main(["claims", str(config), "--results", str(tmp_path / "results"), "--differences", str(differences)]) == 0
    capsys.readouterr()
    written = pd.read_csv(differences)
    assert list(written.columns) == ["claim", "seed", "difference"] and len(written) == 200
    assert list(written["seed"]) == list(range(200)) and written["difference"].mean() == pytest.approx(-6, abs=0.1)
    tables = read_tables(["duel", "other"], tmp_path / "results/c")
    assert tables["other"] is None and sorted(tables["duel"]) == [  # the cells of both algorithms, 200 seeds each
        ("cumulative_regret", "ldb", "none", "none", 40), ("cumulative_regret", "random", "none", "none", 40)
    ] and len(tables["duel"][("cumulative_regret", "ldb", "none", "none", 40)]) == 200  # fmt: skip
    assert markdown(evaluate(load_grid(_config()).claims, tables, 0.05)).startswith("Claims: 1 supported")
    assert main(["claims", str(config), "--results", str(tmp_path / "results"), "--only-experiments", "dual"]) == 2
    assert "only_experiments: 'dual' is not an experiment of this config" in capsys.readouterr().err
    assert main(["claims", str(config), "--results", str(tmp_path / "results"), "--only-algorithms", "twin"]) == 0
    assert "ldb_beats_random" not in capsys.readouterr().out  # the claims comparing ldb are sliced away
    assert main(["claims", str(config), "--results", str(tmp_path / "results"), "--only-algorithms", "ldbb"]) == 2
    assert "only_algorithms: 'ldbb' is not an algorithm" in capsys.readouterr().err
    no_claims = tmp_path / "none.yaml"
    no_claims.write_text(yaml.safe_dump({"experiments": {"duel": EXPERIMENT}}))
    assert main(["claims", str(no_claims)]) == 2
    assert "the config states no claims" in capsys.readouterr().err


@pytest.mark.slow
def test_until_decided_adds_seeds_only_to_undecided_claims_and_reuses_finished_ones(tmp_path, monkeypatch, capsys):
    """Two claims on a tiny grid: LDB-DF against random duels separates; two identical random policies never
    do, so their claim runs to the cap. Each look runs Snakemake on the undecided cells only."""
    from smk import copy_project

    config = _config()
    experiment = config["experiments"]["duel"]
    experiment.update(horizon=60, table_horizons=[60], seeds=3, seeds_per_job=3, paired=False)
    experiment["delays"] = {"none": {"kind": "none"}}
    # the separating claim opts into the Gaussian t-CS (it decides within 8 seeds; the betting CS on the range of
    # 60 rounds' regret would need more): this test is about the looks, test_sequential about the intervals
    reason = "the looks' mechanics under test"
    config["claims"] = {
        "ldb_beats_random": {**CLAIMS["ldb_beats_random"], "delay": "none", "method": "gaussian-t", "reason": reason},
        "twins_differ": {"paper": "-", "where": "-", "quote": "two copies of one policy differ",
                         "experiment": "duel", "metric": "cumulative_regret", "a": "random", "b": "twin",
                         "relation": "less"},
    }  # fmt: skip
    (tmp_path / "project").mkdir()
    project = copy_project(tmp_path / "project", {"seeds": None, "horizon": None, **config})
    monkeypatch.chdir(project)
    monkeypatch.setenv("PYTHONPATH", str(project / "src"))
    assert main(["claims", "config.yaml", "--until-decided", "--max-seeds", "8", "--step", "3"]) == 0
    out, err = capsys.readouterr()
    looks = re.findall(r"^look (\d+): (\d+) of 2 claims decided; seeds: duel (\d+); CPU \d+ s$", out, re.M)
    # look 1 finds no results and runs the configured 3 seeds; then 3 more per look, up to 8
    assert [(int(k), int(n)) for k, _, n in looks] == [(1, 3), (2, 3), (3, 6), (4, 8)], out
    assert "| ldb_beats_random | 000 | Sec. 5 | **supported** |" in out, out
    assert re.search(r"\| twins_differ \| - \| - \| \*\*not separated\*\* \| .*n = 8 \|", out)
    # the looks' tables are one run's, results/<config's run>.claims, apart from the config's own
    assert (project / "results/default.claims/tables/duel.parquet").is_file() and not (
        project / "results/default"
    ).exists()
    owner = json.loads((project / "results/default.claims/run.json").read_text())
    assert owner["configs"] == ["config.yaml"]  # the config's, not a look's sliced copy
    runs = project / "results/runs/duel"
    assert sorted(int(p.stem) for p in (runs / "twin/none/none").glob("*/*.npz")) == list(range(8))
    # the decided claim's algorithms got no seeds past the look that decided it
    decided_at = int(next(n for k, d, n in looks if int(d) == 1))
    assert sorted(int(p.stem) for p in (runs / "ldb/none/none").glob("*/*.npz")) == list(range(decided_at))


def test_an_untestable_claim_may_name_the_comparison_it_would_be():
    claims = copy.deepcopy(CLAIMS)
    claims["ldb_beats_random"]["untestable"] = "the paper's data are not public"
    grid = load_grid(_config(claims))
    claim = grid.claims["ldb_beats_random"]
    assert claim.untestable and claim.a.algorithm == "ldb" and claim.statement() == "untestable"
    results = evaluate(grid.claims, {"duel": None}, 0.05).set_index("claim")
    assert results.loc["ldb_beats_random", "verdict"] == "untestable"


@pytest.mark.parametrize("twin, mirrored", [
    ({}, False),  # word for word
    ({"horizon": 40}, False),  # the default horizon named
    ({"a": "random", "b": "ldb", "relation": "greater"}, True),  # random > ldb is ldb < random
])  # fmt: skip
def test_two_claims_with_the_same_comparison_are_refused_naming_both(twin, mirrored):
    """One comparison, one claim: the same experiment, metric, A side, B side and relation (as resolved, defaults
    filled in), or the mirror (A and B swapped, the opposite relation), is refused in one line naming both claims
    and the key of the second; a restating sentence goes into the first's ``also``."""
    claims = copy.deepcopy(CLAIMS)
    claims["restated"] = {**claims["ldb_beats_random"], "where": "Sec. 7", "quote": "LDB-DF wins", **twin}
    with pytest.raises(ConfigError) as err:
        load_grid(_config(claims))
    message = str(err.value)
    assert "\n" not in message and message.startswith("claims.restated: the same comparison as claims.ldb_beats_random")
    assert ("mirrored (A and B swapped, the opposite relation)" in message) == mirrored
    assert "claims.ldb_beats_random.also" in message
    # an untestable claim that names the comparison it would be counts too
    claims["restated"] = {**claims["restated"], "untestable": "why"}
    with pytest.raises(ConfigError, match=r"^claims\.restated: the same comparison as claims\.ldb_beats_random"):
        load_grid(_config(claims))


@pytest.mark.parametrize("change", [
    {"relation": "greater"},  # the opposite claim: a different comparison (one of the two is contradicted)
    {"delay": "geo"},
    {"horizon": 20},
    {"b": "twin"},
    {"metric": "cumulative_weak_regret"},
])  # fmt: skip
def test_claims_that_differ_in_any_part_of_the_comparison_are_distinct(change):
    claims = copy.deepcopy(CLAIMS)
    claims["other"] = {**claims["ldb_beats_random"], **change}
    assert set(load_grid(_config(claims)).claims) == {*CLAIMS, "other"}


def test_a_restatement_is_kept_in_also_and_checked_by_the_schema():
    from banditbench.configuration.claims import Restatement

    claims = copy.deepcopy(CLAIMS)
    claims["ldb_beats_random"]["also"] = [
        {"paper": "000", "where": "Sec. 7", "quote": "LDB-DF wins", "note": "the conclusion's summary"},
        {"paper": "000", "where": "Sec. 1", "quote": "LDB-DF is better"},
    ]
    grid = load_grid(_config(claims))
    also = grid.claims["ldb_beats_random"].also
    assert also == (Restatement("000", "Sec. 7", "LDB-DF wins", "the conclusion's summary"),
                    Restatement("000", "Sec. 1", "LDB-DF is better"))  # fmt: skip
    assert from_params(as_params(grid.claims, 0.05)) == (grid.claims, 0.05)
    row = evaluate(grid.claims, {"duel": None}, 0.05).set_index("claim").loc["ldb_beats_random"]
    assert json.loads(row["also"])[1] == {"paper": "000", "where": "Sec. 1", "quote": "LDB-DF is better", "note": ""}
    for bad, message in (
        ("Sec. 7", r"claims\.ldb_beats_random\.also\.0: 'Sec\. 7' is not of type 'object'"),
        ({"paper": "000", "where": "Sec. 7"}, r"claims\.ldb_beats_random\.also\.0: 'quote' is a required property"),
        ({"paper": "000", "where": "Sec. 7", "quote": "x", "page": 3}, r"Additional properties are not allowed"),
        ({"paper": "000", "where": "", "quote": "x"}, r"claims\.ldb_beats_random\.also\.0\.where"),
    ):
        claims["ldb_beats_random"]["also"] = [bad]
        with pytest.raises(ConfigError, match=message):
            load_grid(_config(claims))


def test_claims_files_join_the_config_and_a_repeated_id_or_a_bad_file_is_refused(tmp_path, monkeypatch):
    import yaml

    monkeypatch.chdir(tmp_path)
    more = {**CLAIMS["ldb_beats_random"], "horizon": 20}  # another comparison: at T = 20
    (tmp_path / "paper.yaml").write_text(yaml.safe_dump({"claims": {"more": more}}))
    grid = load_grid({**_config(), "claims_files": ["paper.yaml"]})
    assert list(grid.claims) == [*CLAIMS, "more"]
    with pytest.raises(ConfigError, match=r"^paper\.yaml: claims\.more is also given in claims$"):
        load_grid({**_config({**CLAIMS, "more": CLAIMS["no_data"]}), "claims_files": ["paper.yaml"]})
    with pytest.raises(ConfigError, match=r"^claims_files\[0\]: no such file 'nope\.yaml'"):
        load_grid({**_config(), "claims_files": ["nope.yaml"]})
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"claim": {}}))
    with pytest.raises(ConfigError, match=r"^bad\.yaml: a claims file holds one key, claims"):
        load_grid({**_config(), "claims_files": ["bad.yaml"]})


CONFIGS_WITH_CLAIMS = sorted(p.name for p in (ROOT / "config").glob("*.yaml") if "claims_files" in p.read_text())


@pytest.mark.parametrize("config", ["config.yaml", *(f"config/{name}" for name in CONFIGS_WITH_CLAIMS)])
def test_every_configs_claims_validate_and_quote_their_paper(config, monkeypatch):
    """The five papers' claims (config/claims/): each resolves against its grid, quotes a sentence, and names
    the seed paper it comes from; every paper grid states claims."""
    from banditbench.configuration.grid import load_config_file

    monkeypatch.chdir(ROOT)
    grid = load_grid(load_config_file(config))
    assert grid.claims
    papers = {c.paper for c in grid.claims.values()}
    assert papers <= {"000", "001", "002", "003", "004"}
    seeds_text = {p.name[:3]: " ".join(p.read_text().split()) for p in (ROOT.parent / "shared" / "seeds").glob("*.txt")}
    for claim in grid.claims.values():
        assert claim.quote.strip() and claim.where.strip()
        # each quoted piece, the claim's and its restatements', is in the paper (shortened with "...")
        for paper, quote in [(claim.paper, claim.quote), *((r.paper, r.quote) for r in claim.also)]:
            if paper not in seeds_text:
                continue
            for piece in (" ".join(p.split()) for p in quote.replace("…", "...").split("...")):
                assert piece.strip(" .,;\"'") in seeds_text[paper] if len(piece.strip()) > 15 else True, (
                    claim.id,
                    piece,
                )
    if config == "config.yaml":
        assert papers == {"000", "001", "002", "003", "004"}


def test_the_paper_grids_all_state_claims():
    assert set(CONFIGS_WITH_CLAIMS) >= {
        "delayed_dueling.yaml",
        "variance_dueling.yaml",
        "neural_logistic.yaml",
        "lipschitz.yaml",
        "lipschitz_noise_sweep.yaml",
        "knapsack.yaml",
    }


def test_family_wise_verdicts_follow_holm_per_paper():
    """Two claims of one paper at p = 0.03 each are supported one by one at alpha 0.05 but not together
    (Holm needs p <= 0.025 for the first); another paper's claim is judged in its own family."""
    from banditbench.analysis.claims import family_wise, family_wise_line

    results = pd.DataFrame({
        "claim": ["a", "b", "c", "d"], "paper": ["000", "000", "001", "001"], "alpha": 0.05,
        "verdict": ["supported", "supported", "contradicted", "untestable"],
        "p_anytime": [0.03, 0.03, 0.001, np.nan],
    })  # fmt: skip
    out = family_wise(results).set_index("claim")
    assert list(out["family_wise"]) == ["not separated", "not separated", "contradicted", ""]
    assert (
        family_wise_line(out.reset_index())
        == "Family-wise per paper within this table (Holm on the anytime p-values): 1 contradicted, 2 not separated"
    )
    results.loc[0, "p_anytime"] = 0.01  # now 0.01 <= 0.025 and then 0.03 <= 0.05
    assert list(family_wise(results)["family_wise"][:2]) == ["supported", "supported"]


def test_an_evaluated_claim_carries_its_anytime_pvalue():
    from banditbench.numerics.sequential import anytime_pvalue

    rng = np.random.default_rng(0)
    ldb = rng.normal(10, 1, 200)
    table = _table({("ldb", "none", 40): ldb, ("random", "none", 40): ldb + 8 + rng.normal(0, 0.5, 200)})
    claim = load_grid(_config()).claims["ldb_beats_random"]
    row = evaluate({claim.id: claim}, {"duel": table}, 0.05).set_index("claim").loc["ldb_beats_random"]
    d = differences(claim, table)
    assert row["p_anytime"] == pytest.approx(anytime_pvalue(d, method="betting", bounds=claim.bounds, alpha=0.05))
    assert row["p_anytime"] < 0.01 and row["family_wise"] == "supported"


def test_the_range_of_a_minus_b_follows_from_the_metric_the_statistic_and_the_horizons():
    """synthetic_dueling (linear utility, sphere theta): regret in [0, 4], weak regret in [0, 2], self-duels in
    [0, 1] per round; a cumulative statistic scales with its horizon, a running average does not."""
    against_a_value = {k: v for k, v in CLAIMS["ldb_beats_random"].items() if k != "b"}
    claims = {
        "per_round": {**CLAIMS["ldb_beats_random"], "metric": "per_round_self_duel"},
        "against_a_value": {**against_a_value, "value": 10.0, "horizon": 20},
        "weak": {**CLAIMS["ldb_beats_random"], "metric": "cumulative_weak_regret", "horizon": 20},
        "stated": {**CLAIMS["ldb_beats_random"], "bounds": [-30, 10]},
    }
    grid = load_grid(_config(claims))
    ranges = {cid: c.bounds for cid, c in grid.claims.items()}
    assert ranges["per_round"] == pytest.approx((-1.0, 1.0), rel=1e-8)
    assert ranges["against_a_value"] == pytest.approx((-10.0, 70.0), rel=1e-8)  # 20 rounds of [0, 4], minus 10
    assert ranges["weak"] == pytest.approx((-40.0, 40.0), rel=1e-8)
    assert ranges["stated"] == (-30.0, 10.0)  # the claim's own bounds replace the derived range


def test_a_metric_without_a_declared_range_needs_bounds_or_the_gaussian_opt_in(monkeypatch):
    from banditbench.envs.dueling import SyntheticDueling

    monkeypatch.setattr(SyntheticDueling, "metric_ranges", classmethod(lambda cls, values: {"self_duel": (0.0, 1.0)}))
    with pytest.raises(ConfigError, match=(
        r"^claims\.ldb_beats_random\.metric: environment 'synthetic_dueling' declares no range for the per-round "
        r"metric of 'cumulative_regret' \(Environment\.metric_ranges; declared: \['self_duel'\]\)"
    )):  # fmt: skip
        load_grid(_config())
    reason = "each seed's cumulative regret sums 40 rounds; read as Gaussian"
    claims = {"ldb_beats_random": {**CLAIMS["ldb_beats_random"], "method": "gaussian-t", "reason": reason}}
    claim = load_grid(_config(claims)).claims["ldb_beats_random"]
    assert (claim.method, claim.reason, claim.bounds) == ("gaussian-t", reason, None)
    rng = np.random.default_rng(2)
    ldb = rng.normal(10, 1, 10)
    table = _table({("ldb", "none", 40): ldb, ("random", "none", 40): ldb + 5 + rng.normal(0, 0.5, 10)})
    row = evaluate({claim.id: claim}, {"duel": table}, 0.05).iloc[0]
    assert row["verdict"] == "supported" and row["method"] == f"Gaussian t-CS (opt-in: {reason})"
    assert np.isnan(row["range_low"]) and row["p_anytime"] < 0.05
    assert f"Gaussian t-CS (opt-in: {reason})" in markdown(evaluate({claim.id: claim}, {"duel": table}, 0.05))


def test_differences_outside_the_range_are_not_judged_and_say_why():
    claims = {"ldb_beats_random": {**CLAIMS["ldb_beats_random"], "bounds": [-1, 1]}}
    grid = load_grid(_config(claims))
    table = _table({("ldb", "none", 40): [1.0, 2.0, 3.0], ("random", "none", 40): [9.0, 9.0, 9.0]})
    row = evaluate(grid.claims, {"duel": table}, 0.05).set_index("claim").loc["ldb_beats_random"]
    assert row["verdict"] == "not run" and "outside the declared bounds (-1.0, 1.0)" in row["reason"]
    assert row["reason"].endswith("the range of A - B does not hold")


def test_the_per_seed_differences_of_every_judged_claim_in_seed_order():
    from banditbench.analysis.claims import DIFFERENCE_COLUMNS, differences_table

    grid = load_grid(_config())
    table = _table({("ldb", "none", 40): [1.0, 2.0, 3.0], ("random", "none", 40): [1.5, 1.0, 4.0]})
    out = differences_table(grid.claims, {"duel": table})
    assert list(out.columns) == list(DIFFERENCE_COLUMNS)
    # random_grows has no seeds at T = 20 here; no_data is untestable
    assert out.to_dict("list") == {"claim": ["ldb_beats_random"] * 3, "seed": [0, 1, 2], "difference": [-0.5, 1, -1]}
    assert differences_table(grid.claims, {"duel": None}).empty


def test_until_decided_reads_every_verdict_at_the_last_look(tmp_path, monkeypatch):
    """The looks (Snakemake replaced by a table that holds, as a sliced run's does, only the algorithms the look ran,
    at the seeds it asked for): the claim that separates is decided at look 3 of 5, the identical twins run to the
    cap; both verdicts are read at the last look, each on all the seeds its comparison has (the decided claim's
    algorithms keep the seeds of the last table that had them)."""
    import yaml

    from banditbench.analysis import claims as module

    rng = np.random.default_rng(3)
    n = 240
    ldb, random = rng.normal(10, 1, n), rng.normal(10, 1, n)
    full = _table({("ldb", "none", 40): ldb, ("random", "none", 40): ldb + 8 + rng.normal(0, 0.5, n),
                   ("twin", "none", 40): random, ("twin2", "none", 40): random + rng.normal(0, 0.5, n)})  # fmt: skip
    config = _config({
        "separates": {**CLAIMS["ldb_beats_random"], "delay": "none"},
        "twins": {**CLAIMS["ldb_beats_random"], "a": "twin", "b": "twin2", "delay": "none"},
    })  # fmt: skip
    config["experiments"]["duel"]["algorithms"]["twin2"] = {"policy": "random_pair"}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    shown = {"seeds": 3, "algorithms": {"ldb", "random", "twin", "twin2"}}

    def read_tables(names, folder):
        return {"duel": cell_values(full[(full.seed < shown["seeds"]) & full.algorithm.isin(shown["algorithms"])])}

    def run_snakemake(self, grow, open_claims, *args):
        algorithms = {s.algorithm for c in open_claims for s in (c.a, c.b)}
        shown.update(seeds=self.seeds["duel"], algorithms=algorithms)

    monkeypatch.setattr(module, "read_tables", read_tables)
    monkeypatch.setattr(module._Looks, "run_snakemake", run_snakemake)
    lines = []
    results = module.until_decided(tmp_path / "c.yaml", n, 60, results_dir=tmp_path / "results", say=lines.append)
    decided = [int(re.match(r"look \d+: (\d) of 2", line).group(1)) for line in lines]
    assert decided == [0, 0, 1, 1, 1] and results.attrs["seeds"] == {"duel": n} and results.attrs["looks"] == 5
    rows = results.set_index("claim")
    assert rows.loc["separates", "verdict"] == "supported" and rows.loc["separates", "n"] == 120  # decided at 120
    assert rows.loc["twins", "verdict"] == "not separated" and rows.loc["twins", "n"] == n
    differences = results.attrs["differences"]
    assert len(differences) == 120 + n and list(differences["seed"][:3]) == [0, 1, 2]


def test_a_claim_on_a_run_summary_is_judged_at_the_final_horizon_on_its_declared_range():
    """A dueling run's ``late_regret_rate`` (the mean regret of its closing 10 % of rounds, in the regret's [0, 4]):
    a claim compares it at the final horizon only, on the range [-4, 4] of A - B."""
    late = {**CLAIMS["ldb_beats_random"], "metric": "late_regret_rate"}
    grid = load_grid(_config({"late": late}))
    assert grid.claims["late"].bounds == pytest.approx((-4.0, 4.0), rel=1e-8)
    for change, message in [
        ({"horizon": 20}, r"^claims\.late\.horizon: 'late_regret_rate' is a run summary, recorded at the final horizon"),
        ({"metric": "late_regret"}, r"^claims\.late\.metric: 'late_regret' is neither .*, a run summary the "
         r"environment declares \(Environment\.metric_ranges: \['late_regret_rate', 'late_self_duel_rate'\]\) nor "
         r"a run's recorded time \['cpu_time_s', 'wall_time_s'\]"),
    ]:  # fmt: skip
        with pytest.raises(ConfigError, match=message):
            load_grid(_config({"late": {**late, **change}}))
    rng = np.random.default_rng(3)
    n = 200
    ldb = rng.uniform(0.0, 0.2, n)
    table = _table({("ldb", "none", 40): ldb, ("random", "none", 40): ldb + 1.5 + rng.uniform(0, 0.3, n)})
    table["metric"] = pd.Categorical(["late_regret_rate"] * len(table))
    row = evaluate(grid.claims, {"duel": table}, 0.05).iloc[0]
    assert row["verdict"] == "supported" and row["high"] < 0


def _timing(cpu: dict[str, list[float]], blocks: dict[str, int] | None = None, host="h", engines=None) -> pd.DataFrame:
    """A per-seed timing table of experiment ``duel`` at T = 40: ``algorithm -> CPU seconds per seed``; an algorithm
    in ``blocks`` ran in seed-batched blocks of that many seeds (each seed of a block records the block's share)."""
    rows = []
    for alg, values in cpu.items():
        size = (blocks or {}).get(alg, 1)
        for seed, v in enumerate(values):
            block = seed // size
            measurement = f"runs/duel/{alg}:{block}" if size > 1 else f"runs/duel/{alg}/{seed}.npz"
            engine = (engines or {}).get(alg, "seed-batched" if size > 1 else "single-seed")
            rows.append(("duel", alg, "none", "none", seed, 40, v, v * 1.1, measurement, size, engine, host, "cpu"))
    from banditbench.analysis.seedtable import TIMING_COLUMNS

    return pd.DataFrame(rows, columns=TIMING_COLUMNS)


TIME = {"paper": "001", "where": "App. E.3", "quote": "significantly outperforms NDB in computational efficiency",
        "experiment": "duel", "metric": "cpu_time_s", "delay": "none", "a": "ldb", "b": "random",
        "relation": "less", "bounds": [-10, 10]}  # fmt: skip


def test_a_time_claim_needs_a_range_and_the_final_horizon():
    grid = load_grid(_config({"time": TIME}))
    assert grid.claims["time"].bounds == (-10.0, 10.0) and grid.claims["time"].a.horizon == 40
    no_range = {k: v for k, v in TIME.items() if k != "bounds"}
    for claim, message in [
        (no_range, r"^claims\.time\.metric: 'cpu_time_s' \(a run's recorded time\) has no declared range"),
        ({**TIME, "horizon": 20}, r"^claims\.time\.horizon: 'cpu_time_s' is a run's recorded time, recorded at the "
         r"final horizon \(40\) only"),
    ]:  # fmt: skip
        with pytest.raises(ConfigError, match=message):
            load_grid(_config({"time": claim}))
    gaussian = load_grid(_config({"time": {**no_range, "method": "gaussian-t", "reason": "one engine's times"}}))
    assert gaussian.claims["time"].method == "gaussian-t"


def test_a_time_claim_pairs_independent_measurements_on_one_machine():
    """Per-seed times on both sides pair seed by seed; a seed-batched block's seeds share one measurement, so
    they form one unit whose difference is the mean of its seeds' (B in blocks of 5: 20 seeds, 4 units)."""
    grid = load_grid(_config({"time": TIME}))
    claim = grid.claims["time"]
    rng = np.random.default_rng(4)
    fast, slow = rng.uniform(1.0, 1.2, 20), np.repeat(rng.uniform(8.0, 9.0, 4), 5)
    seeds = _table({("ldb", "none", 40): np.zeros(20), ("random", "none", 40): np.zeros(20)})
    cells = cell_values(seeds, _timing({"ldb": list(fast), "random": list(slow)}, {"random": 5}))
    d = differences(claim, cells)
    assert len(d) == 4 and np.allclose(d, (fast - slow).reshape(4, 5).mean(axis=1))
    row = evaluate(grid.claims, {"duel": cells}, 0.05).iloc[0]
    assert row["n"] == 4 and row["verdict"] in ("supported", "not separated")
    per_seed = cell_values(seeds, _timing({"ldb": list(fast), "random": list(fast + 7)}))
    assert len(differences(claim, per_seed)) == 20
    assert evaluate(grid.claims, {"duel": per_seed}, 0.05).iloc[0]["verdict"] == "supported"
    # swapped times: contradicted, never silently mirrored
    swapped = cell_values(seeds, _timing({"ldb": list(fast + 7), "random": list(fast)}))
    assert evaluate(grid.claims, {"duel": swapped}, 0.05).iloc[0]["verdict"] == "contradicted"


@pytest.mark.parametrize("timing, reason", [
    (None, r"^no per-seed timing table for 'duel' \(tables/duel\.timing\.parquet"),
    ("two hosts", r"^its seeds were timed on 2 machines \(a \(cpu\); b \(cpu\)\); times compare on one$"),
    ("two engines", r"^random's seeds were played by 2 engines \(seed-batched on cuda, single-seed\)$"),
    ("unrecorded", r"^20 paired seed\(s\) record no cpu_time_s"),
])  # fmt: skip
def test_times_that_cannot_be_compared_are_not_run_saying_why(timing, reason):
    from banditbench.analysis.claims import differences_table

    grid = load_grid(_config({"time": TIME}))
    seeds = _table({("ldb", "none", 40): np.zeros(20), ("random", "none", 40): np.zeros(20)})
    ones = [1.0] * 20
    if timing == "two hosts":
        table = pd.concat([_timing({"ldb": ones}, host="a"), _timing({"random": ones}, host="b")])
    elif timing == "two engines":
        table = _timing({"ldb": ones, "random": ones})
        table.loc[(table.algorithm == "random") & (table.seed < 3), "engine"] = "seed-batched on cuda"
    elif timing == "unrecorded":
        table = _timing({"ldb": [float("nan")] * 20, "random": ones})
    else:
        table = None
    cells = cell_values(seeds, table)
    row = evaluate(grid.claims, {"duel": cells}, 0.05).iloc[0]
    assert row["verdict"] == "not run" and re.search(reason, row["reason"])
    assert differences_table(grid.claims, {"duel": cells}).empty


def test_the_tables_of_a_run_folder_give_the_claims_their_times(tmp_path):
    from banditbench.analysis.seedtable import write_parquet

    folder = tmp_path / "results/c/tables"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(5)
    fast = rng.uniform(1.0, 1.2, 20)
    write_parquet(
        _table({("ldb", "none", 40): np.zeros(20), ("random", "none", 40): np.zeros(20)}), folder / "duel.parquet"
    )
    write_parquet(_timing({"ldb": list(fast), "random": list(fast + 7)}), folder / "duel.timing.parquet")
    grid = load_grid(_config({"time": TIME, "ldb_beats_random": CLAIMS["ldb_beats_random"]}))
    results = evaluate(grid.claims, read_tables(["duel"], tmp_path / "results/c"), 0.05).set_index("claim")
    assert results.loc["time", "verdict"] == "supported" and results.loc["time", "n"] == 20
    assert results.loc["ldb_beats_random", "verdict"] == "not separated"  # equal regrets
    (folder / "duel.timing.parquet").unlink()  # results aggregated before the timing table: the time claim alone
    results = evaluate(grid.claims, read_tables(["duel"], tmp_path / "results/c"), 0.05).set_index("claim")
    assert results.loc["time", "verdict"] == "not run" and results.loc["ldb_beats_random", "verdict"] == "not separated"
