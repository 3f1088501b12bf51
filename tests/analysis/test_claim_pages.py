"""The claims as pages show them: restatements folded on old runs, family-wise per paper across committed runs,
the narrow table with each claim's details, the report's Claims page and the summary across papers."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from banditbench.analysis.claim_pages import (
    FAMILY,
    changes_since,
    claims_table_html,
    family_wise_per_paper,
    summary_markdown,
)
from banditbench.analysis.claims import comparison_of, counts_line, fold_restatements
from banditbench.numerics.sequential import holm


def _row(claim, paper, comparison, verdict="supported", p=np.nan, experiment="exp", **more):
    judged = not np.isnan(p)
    return {
        "claim": claim, "paper": paper, "where": f"Sec. {claim}", "quote": f"the sentence of {claim}",
        "experiment": experiment, "comparison": comparison, "verdict": verdict, "n": 20 if judged else np.nan,
        "mean": -1.0 if judged else np.nan, "low": -1.5 if judged else np.nan, "high": -0.5 if judged else np.nan,
        "detectable": 0.5 if judged else np.nan, "alpha": 0.05, "method": "Gaussian t-CS" if judged else np.nan,
        "p_anytime": p, "family_wise": verdict if judged else "", "reason": "", **more,
    }  # fmt: skip


def _run(*rows) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def test_a_mirrored_or_repeated_comparison_is_one_comparison():
    plain = comparison_of("lip", "zoom < dlpp (cumulative_regret, T = 100, delay none)")
    assert comparison_of("lip", "dlpp > zoom (cumulative_regret, T = 100, delay none)") == plain
    assert comparison_of("lip", "zoom > dlpp (cumulative_regret, T = 100, delay none)") != plain  # the opposite
    assert comparison_of("other", "zoom < dlpp (cumulative_regret, T = 100, delay none)") != plain
    # A at two delays (b_delay) and two horizons: the settings' "x vs y" swap with the sides
    assert comparison_of("lip", "zoom > zoom (cumulative_regret, T = 100, delay geo vs none)") == comparison_of(
        "lip", "zoom < zoom (cumulative_regret, T = 100, delay none vs geo)"
    )
    assert comparison_of("lip", "zoom < zoom (per_round_regret, T = 100 vs 50, delay none)") == comparison_of(
        "lip", "zoom > zoom (per_round_regret, T = 50 vs 100, delay none)"
    )
    assert comparison_of("lip", "zoom < 0.5 (per_round_regret, T = 100, delay none)") is not None  # a constant B
    assert comparison_of("lip", "untestable") is None


def test_a_run_recorded_before_the_folding_is_shown_and_counted_by_distinct_comparison():
    run = _run(
        _row("dim", "003", "zoom > dlpp (cumulative_regret, T = 100, delay none)", "contradicted", 0.001),
        _row("eff", "003", "dlpp < zoom (cumulative_regret, T = 100, delay none)", "contradicted", 0.001),
        _row("late", "003", "zoom > dlpp (cumulative_regret, T = 100, delay geo)", "supported", 0.002),
        _row("shape", "003", "untestable", "untestable"),
    )
    folded = fold_restatements(run)
    assert list(folded["claim"]) == ["dim", "late", "shape"] and folded.attrs["folded"] == 1
    assert json.loads(folded.loc[0, "also"]) == [
        {"paper": "003", "where": "Sec. eff", "quote": "the sentence of eff", "claim": "eff"}
    ]
    assert counts_line(run) == "Claims: 1 supported, 1 contradicted, 1 untestable"
    assert changes_since(run, ["dim", "late", "shape", "new"]) == {"folded": ["eff"], "dropped": [], "added": ["new"]}
    assert changes_since(run, ["dim", "late"])["dropped"] == ["shape"]


def test_family_wise_per_paper_is_holm_over_all_of_its_committed_runs():
    """Paper 000's p-values 0.01 and 0.04 (run one) pass Holm in their own table, but with run two's 0.045 the
    family of three rejects only 0.01; a restatement folded in run one is one p-value, not two; paper 001 and the
    run that holds two papers' claims are families of their own."""
    one = _run(
        _row("a", "000", "x < y (cumulative_regret, T = 10, delay none)", "supported", 0.01),
        _row("a_mirror", "000", "y > x (cumulative_regret, T = 10, delay none)", "supported", 0.01),
        _row("b", "000", "x < z (cumulative_regret, T = 10, delay none)", "supported", 0.04),
        _row("u", "000", "untestable", "untestable"),
    )
    two = _run(
        _row("c", "000", "x < y (cumulative_regret, T = 10, delay none)", "contradicted", 0.045, experiment="e2"),
        _row("u", "000", "untestable", "untestable"),
    )
    other = _run(_row("d", "001", "x < y (cumulative_regret, T = 10, delay none)", "supported", 0.03))
    mixed = _run(
        _row("e", "000", "x < y (cumulative_regret, T = 10, delay none)", "supported", 0.03, experiment="small"),
        _row("f", "001", "x < z (cumulative_regret, T = 10, delay none)", "supported", 0.03, experiment="small"),
    )
    out = family_wise_per_paper({"one": one, "two": two, "other": other, "mixed": mixed})
    assert list(out["one"]["claim"]) == ["a", "b", "u"]  # the mirror folded into a
    expected = holm([0.01, 0.04, 0.045], 0.05)
    assert list(expected) == [True, False, False]
    assert list(out["one"][FAMILY]) == ["supported", "not separated", ""]
    assert list(out["two"][FAMILY]) == ["not separated", ""]
    assert set(out["one"].loc[out["one"][FAMILY] != "", "family_size"]) == {3}
    assert out["one"].loc[0, "family_runs"] == "one, two"
    assert list(out["other"][FAMILY]) == ["supported"] and out["other"].loc[0, "family_size"] == 1
    assert list(out["mixed"][FAMILY]) == ["supported", "supported"]  # one family per paper within the run
    assert list(out["mixed"]["family_size"]) == [1, 1]
    # the per-table column of run one, as recorded, said both were supported
    assert list(one["family_wise"][:3]) == ["supported", "supported", "supported"]


def _table_rows():
    run = _run(
        _row("dim", "003", "zoom > dlpp (cumulative_regret, T = 100, delay none)", "contradicted", 0.001,
             note="'it is higher for two dim': zoom's regret above dlpp's",
             also=json.dumps([{"paper": "003", "where": "Sec. 1", "quote": "our methods are efficient",
                               "note": "read as this comparison"}])),
        _row("eff", "003", "dlpp < zoom (cumulative_regret, T = 100, delay none)", "contradicted", 0.001),
        _row("shape", "003", "untestable", "untestable", reason="the shape of a curve is not a comparison"),
    )  # fmt: skip
    return family_wise_per_paper({"run": run})["run"]


def test_the_page_table_is_narrow_with_each_claims_details_one_click_away():
    html = claims_table_html(_table_rows())
    assert "\n\n" not in html  # one HTML block: Markdown passes it through
    head = re.search(r"<thead>(.*?)</thead>", html).group(1)
    assert re.findall(r"<th>(.*?)</th>", head) == ["claim", "verdict", "n", "mean A − B [interval]", "family-wise"]
    rows = re.findall(r'<tr id="claim-(\w+)">(.*?)</tr>', html)
    assert [cid for cid, _ in rows] == ["dim", "shape"]  # eff folded into dim
    dim = rows[0][1]
    assert dim.count("<td") == 5 and "<details><summary><code>dim</code></summary>" in dim
    details = re.search(r'<div class="claim-details">(.*?)</div>', dim).group(1)
    for shown in (
        "<b>Sec. dim</b>: “the sentence of dim”",
        "<b>Compares</b> <code>zoom &gt; dlpp (cumulative_regret, T = 100, delay none)</code> on exp",
        "<b>Reading</b>: &#x27;it is higher for two dim&#x27;",
        "Sec. 1: “our methods are efficient” (read as this comparison)",
        "Sec. eff: “the sentence of eff” (recorded as <code>eff</code>)",
        "<b>Interval</b>: Gaussian t-CS; error rate 0.05 per claim; anytime p-value 0.001",
        "<b>Family-wise</b>: contradicted: Holm over the 1 claims of paper 003 with a p-value in the committed runs run",
    ):
        assert shown in details, shown
    cells = re.findall(r"<td[^>]*>(.*?)</td>", dim.split("</details>")[1])
    assert cells[:2] == ["contradicted", "20"] and cells[2].startswith('-1 [-1.5, -0.5] <span class="claim-method"')
    assert cells[3] == "contradicted"
    shape = rows[1][1]
    assert "<b>Why</b>: the shape of a curve is not a comparison" in shape and shape.endswith("<td>—</td><td>—</td>")
    long_id = claims_table_html(_run(_row("s003_sec7_dim", "003", "untestable", "untestable")))
    assert "<code>s003_<wbr>sec7_<wbr>dim</code>" in long_id  # a long id wraps at its underscores


def test_the_reports_claims_page_is_styled_and_shows_the_details(tmp_path):
    from banditbench.analysis.claim_pages import write_claims

    results = _table_rows()
    write_claims(results, tmp_path / "c.csv", tmp_path / "c.md", tmp_path / "c.html")
    page = (tmp_path / "c.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page and ".claims-table" in page
    assert '<div class="claims-table">' in page and "<details>" in page
    assert "Claims: 1 contradicted, 1 untestable (distinct comparisons)" in page
    assert "Family-wise per paper within this table" in page


def test_the_summary_counts_distinct_comparisons_per_paper_and_names_the_runs():
    meta = {"date": "2026-01-02"}
    one = _run(
        _row("a", "000", "x < y (cumulative_regret, T = 10, delay none)", "supported", 0.001),
        _row("a_mirror", "000", "y > x (cumulative_regret, T = 10, delay none)", "supported", 0.001),
        _row("b", "000", "x < z (cumulative_regret, T = 10, delay none)", "not separated", 0.5),
        _row("u", "000", "untestable", "untestable"),
    )
    two = _run(
        _row("c", "000", "x < y (cumulative_regret, T = 10, delay none)", "contradicted", 0.002, experiment="e2"),
        _row("u", "000", "untestable", "untestable"),
    )
    mixed = _run(
        _row("e", "000", "x < y (cumulative_regret, T = 10, delay none)", "supported", 0.03, experiment="small"),
        _row("f", "001", "x < z (cumulative_regret, T = 10, delay none)", "not separated", 0.3, experiment="small"),
    )
    runs = {"one": (meta, one), "two": (meta, two), "mixed": (meta, mixed)}
    papers = {"000": ("Paper zero", "papers/zero.md"), "001": ("Paper one", "papers/one.md")}
    table = summary_markdown(runs, papers, before={"two"})
    lines = table.splitlines()
    assert lines[0].startswith("| paper | runs (date, interval) | supported | contradicted | not separated |")
    zero = next(line for line in lines if line.startswith("| [000](papers/zero.md) Paper zero"))
    cells = [c.strip() for c in zero.strip("|").split("|")]
    assert "`one` (2026-01-02, Gaussian t-CS)" in cells[1] and "`two` (2026-01-02, Gaussian t-CS, before" in cells[1]
    # distinct: a (a_mirror folded), b, c; u once across the two runs
    assert cells[2:7] == ["1", "1", "1", "0", "1"]
    assert cells[7:] == ["1", "1", "1"]  # Holm over 0.001, 0.5, 0.002: a and c kept, b not separated
    assert not any(line.startswith("| [001]") for line in lines)  # paper 001 has no run of its own
    mixed_line = next(line for line in lines if line.startswith("| `mixed`: papers 000, 001"))
    assert [c.strip() for c in mixed_line.strip("|").split("|")][2:] == ["1", "0", "1", "0", "0", "1", "0", "1"]


@pytest.mark.parametrize("command, expected", [
    ("banditbench claims config/a.yaml --until-decided --max-seeds 10", ("config/a.yaml", {})),
    ("banditbench claims config/a.yaml --until-decided --only-experiments e1 e2 --start-seeds 5",
     ("config/a.yaml", {"only_experiments": ["e1", "e2"]})),
    ("banditbench claims c.yaml --only-experiments e --only-algorithms x y",
     ("c.yaml", {"only_experiments": ["e"], "only_algorithms": ["x", "y"]})),
])  # fmt: skip
def test_a_runs_command_names_its_config_and_slice(command, expected):
    from banditbench.analysis.claim_pages import config_of

    assert config_of(command) == expected


def test_an_old_run_shows_its_claims_reading_and_restatements_as_the_config_states_them_now():
    from banditbench.analysis.claim_pages import with_config_text

    run = _run(
        _row("dim", "003", "zoom > dlpp (cumulative_regret, T = 100, delay none)", "contradicted", 0.001,
             reason="the old reading"),
        _row("eff", "003", "dlpp < zoom (cumulative_regret, T = 100, delay none)", "contradicted", 0.001),
        _row("shape", "003", "untestable", "untestable", reason="the old reason"),
        _row("gone", "003", "untestable", "untestable", reason="kept as recorded"),
    )  # fmt: skip
    now = {
        "dim": {
            "note": "the reading now",
            "also": [{"paper": "003", "where": "Sec. eff", "quote": "the sentence of eff"}],
        },
        "shape": {"untestable": "the reason now"},
    }
    rows = fold_restatements(with_config_text(run, now)).set_index("claim")
    assert rows.loc["dim", "note"] == "the reading now" and rows.loc["dim", "reason"] == "the old reading"
    # the recorded eff row is the restatement the config lists: one entry, naming the row that recorded it
    assert json.loads(rows.loc["dim", "also"]) == [
        {"note": "", "paper": "003", "where": "Sec. eff", "quote": "the sentence of eff", "claim": "eff"}
    ]
    assert rows.loc["shape", "reason"] == "the reason now" and rows.loc["gone", "reason"] == "kept as recorded"
    html = claims_table_html(with_config_text(run, now))
    assert "<b>Reading</b>: the reading now" in html and "<b>Noted with the verdict</b>: the old reading" in html
