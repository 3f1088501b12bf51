"""The claims as people read them: a narrow table per run, each claim's sentence, reading and method one click away,
family-wise per paper across the committed runs, and a summary across the papers.

A claims table (:func:`banditbench.analysis.claims.evaluate`, or a committed run's ``docs/runs/NAME.csv``) is shown
with one row per comparison (:func:`banditbench.analysis.claims.fold_restatements`) and five columns: the claim, its
verdict, n, the mean of ``A - B`` with its interval, and the family-wise verdict.  The claim's cell opens (an HTML
``<details>``) on the quoted sentence and where it is, the comparison, how the sentence is read (the claim's
``note``), the sentences that restate it (``also``), the interval's method and range, the error rate, the anytime
p-value, the smallest difference the seeds could have separated, the reason for a verdict that has one, and the
family the family-wise verdict is read in.  :func:`claims_table_html` writes it for the docs' paper pages
(``docs/hooks.py``) and for the report's Claims page (:func:`claims_page`).

**Family-wise per paper.**  :func:`family_wise_per_paper` judges each paper's claims over all its committed runs
together: Holm's step-down (:func:`banditbench.numerics.sequential.holm`) on the anytime p-values of every claim of
the paper with one, in every committed run whose claims are all that paper's (``docs/runs/*.csv``), at the claims'
alpha; a claim keeps its verdict family-wise where Holm rejects a zero mean, so the chance that any of a paper's
separated claims on its pages is wrong is at most alpha.  A run that holds claims of several papers (the default
grid's small-scale run) is a family per paper of its own.  A comparison recorded in two runs of one paper stays in the
family twice (Holm is valid for any dependence; the family is then larger, never smaller, than the distinct
comparisons) and is counted once by :func:`summary_markdown`.
"""

from __future__ import annotations

import html
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from .claims import VERDICTS, comparison_of, fold_restatements, markdown
from .pages import html_page
from ..numerics.sequential import holm

#: the column :func:`family_wise_per_paper` adds
FAMILY = "family_wise_paper"
#: the betting CS's name on a row (:func:`banditbench.numerics.sequential.method_name`)
DEFAULT_METHOD_PREFIX = "betting"


# --- family-wise per paper --------------------------------------------------------------------------------------
def family_wise_per_paper(runs: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Each run's rows folded to one per comparison, with :data:`FAMILY` (the family-wise verdict, empty without a
    p-value), ``family_size`` (the number of p-values Holm was run on) and ``family_runs`` (the runs of the family):
    per paper across every run whose claims are all that paper's, per paper within a run that holds several papers'
    claims (module docstring)."""
    folded = {name: fold_restatements(results) for name, results in runs.items()}
    families: dict[tuple[str, ...], list[tuple[str, int]]] = defaultdict(list)
    for name, results in folded.items():
        own = results["paper"].astype(str).nunique() == 1
        for i, row in results.iterrows():
            if pd.notna(row.get("p_anytime")):
                families[(str(row["paper"]),) if own else (str(row["paper"]), name)].append((name, i))
    for results in folded.values():
        results[FAMILY], results["family_size"], results["family_runs"] = "", 0, ""
    for members in families.values():
        rows = [folded[name].loc[i] for name, i in members]
        alpha = min(float(row["alpha"]) for row in rows)
        rejected = holm([float(row["p_anytime"]) for row in rows], alpha)
        names = ", ".join(dict.fromkeys(name for name, _ in members))
        for (name, i), row, keep in zip(members, rows, rejected):
            folded[name].at[i, FAMILY] = row["verdict"] if keep else "not separated"
            folded[name].at[i, "family_size"] = len(members)
            folded[name].at[i, "family_runs"] = names
    return folded


# --- the table --------------------------------------------------------------------------------------------------
def _number(x: Any) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.4g}"


def _text(x: Any) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else str(x)


def _interval(row) -> str:
    if pd.isna(row.get("mean")):
        return "—"
    cell = f"{_number(row['mean'])} [{_number(row['low'])}, {_number(row['high'])}]"
    method = _text(row.get("method"))
    if method and not method.startswith(DEFAULT_METHOD_PREFIX):
        short = "t-CS" if method.startswith("Gaussian") else "EB"
        cell += f' <span class="claim-method" title="{html.escape(method)}">{short}</span>'
    return cell


def _method_text(row) -> str:
    method = _text(row.get("method"))
    if not method:
        return ""
    parts = [html.escape(method)]
    if pd.notna(row.get("range_low")) and f"on [{_number(row['range_low'])}" not in method:
        parts.append(f"range of A − B [{_number(row['range_low'])}, {_number(row['range_high'])}]")
    parts.append(f"error rate {_number(row['alpha'])} per claim")
    if pd.notna(row.get("p_anytime")):
        parts.append(f"anytime p-value {_number(row['p_anytime'])}")
    if pd.notna(row.get("detectable")):
        parts.append(f"half-width {_number(row['detectable'])} (the smallest difference these seeds could separate)")
    return "; ".join(parts)


def _family_text(row, family: str) -> str:
    verdict = _text(row.get(family))
    if not verdict:
        return ""
    if family != FAMILY:
        return f"{html.escape(verdict)}: Holm over this paper's claims with a p-value in this table"
    return (
        f"{html.escape(verdict)}: Holm over the {int(row['family_size'])} claims of paper {html.escape(str(row['paper']))}"
        f" with a p-value in the committed runs {html.escape(str(row['family_runs']))}"
    )


def _restatements(row) -> str:
    text = _text(row.get("also"))
    entries = json.loads(text) if text.strip() else []
    if not entries:
        return ""
    items = []
    for e in entries:
        item = f"{html.escape(e['where'])}: “{html.escape(e['quote'])}”"
        if e.get("note"):
            item += f" ({html.escape(e['note'])})"
        if e.get("claim"):
            item += f" (recorded as <code>{html.escape(e['claim'])}</code>)"
        items.append(f"<li>{item}</li>")
    return "<p><b>Restated</b> (folded into this claim):</p><ul>" + "".join(items) + "</ul>"


def claim_details(row, family: str = FAMILY) -> str:
    """What a claim's cell opens on (module docstring)."""
    parts = [f"<p><b>{html.escape(_text(row['where']))}</b>: “{html.escape(_text(row['quote']))}”</p>"]
    comparison = _text(row.get("comparison"))
    if comparison and comparison not in ("untestable", "not run"):
        parts.append(
            f"<p><b>Compares</b> <code>{html.escape(comparison)}</code> on {html.escape(_text(row['experiment']))}</p>"
        )
    note, reason = _text(row.get("note")), _text(row.get("reason"))
    if note:
        parts.append(f"<p><b>Reading</b>: {html.escape(note)}</p>")
    parts.append(_restatements(row))
    if reason and reason != note:
        label = "Why" if row["verdict"] in ("untestable", "not run") else "Noted with the verdict"
        parts.append(f"<p><b>{label}</b>: {html.escape(reason)}</p>")
    method = _method_text(row)
    if method:
        parts.append(f"<p><b>Interval</b>: {method}</p>")
    fw = _family_text(row, family)
    if fw:
        parts.append(f"<p><b>Family-wise</b>: {fw}</p>")
    return "".join(p for p in parts if p)


def _claim_id(claim: str) -> str:
    return html.escape(claim).replace("_", "_<wbr>")


def claims_table_html(results: pd.DataFrame, family: str = FAMILY) -> str:
    """The narrow claims table (module docstring), one row per comparison, as one HTML block without blank lines
    (Markdown passes it through); ``family``: the column of the family-wise verdicts (:data:`FAMILY`, or the
    per-table ``family_wise`` of :func:`banditbench.analysis.claims.evaluate`)."""
    rows = fold_restatements(results)
    head = "".join(f"<th>{h}</th>" for h in ("claim", "verdict", "n", "mean A − B [interval]", "family-wise"))
    body = []
    for _, row in rows.iterrows():
        verdict = _text(row["verdict"])
        fw = _text(row.get(family)) or "—"
        n = "" if pd.isna(row.get("n")) else str(int(row["n"]))
        cid = _text(row["claim"])
        body.append(
            f'<tr id="claim-{html.escape(cid)}"><td><details><summary><code>{_claim_id(cid)}</code></summary>'
            f'<div class="claim-details">{claim_details(row, family)}</div></details></td>'
            f'<td class="verdict verdict-{verdict.replace(" ", "-")}">{verdict}</td><td>{n}</td>'
            f"<td>{_interval(row)}</td><td>{html.escape(fw)}</td></tr>"
        )
    return (
        f'<div class="claims-table"><table><thead><tr>{head}</tr></thead><tbody>'
        + "".join(body)
        + "</tbody></table></div>"
    )


#: the report's Claims page: the table's and the details' look (the docs have theirs in docs/stylesheets/extra.css)
REPORT_STYLE = """
.claims-table td { white-space: normal; text-align: left; vertical-align: top; }
.claims-table td:nth-child(3), .claims-table td:nth-child(4) { text-align: right; white-space: nowrap; }
.claims-table summary { cursor: pointer; } .claims-table code { font-size: 0.95em; }
.claim-details { max-width: 60em; white-space: normal; font-size: 0.95em; color: #333; }
.verdict-supported { color: #1b7a2e; font-weight: 600; } .verdict-contradicted { color: #b3261e; font-weight: 600; }
.verdict-not-separated, .verdict-untestable, .verdict-not-run { color: #666; }
.claim-method { font-size: 0.8em; color: #b3261e; border: 1px solid #b3261e; border-radius: 3px; padding: 0 2px; }
"""


def claims_page(results: pd.DataFrame) -> str:
    """The report's Claims page: the counts, the narrow table with each claim's details, and how to read it."""
    from .claims import counts_line, family_wise_line

    alpha = float(results["alpha"].iloc[0]) if len(results) else 0.05
    body = [
        "<h1>Claims</h1>",
        f"<p>{html.escape(counts_line(results))} (distinct comparisons).</p>",
        f"<p>{html.escape(family_wise_line(results))}.</p>",
        f"<style>{REPORT_STYLE}</style>",
        claims_table_html(results, family="family_wise"),
        "<p>"
        + html.escape(
            f"Open a claim for its sentence, how it is read, the sentences that restate it, the interval's method and "
            f"range and its anytime p-value. Each interval is the running intersection over the seeds of an "
            f"anytime-valid {100 * (1 - alpha):g} % confidence sequence for the mean paired difference A - B: "
            f"supported when it lies on the claimed side of 0, contradicted on the other, not separated when it "
            f"contains 0. Family-wise: Holm over each paper's claims within this table. Every field is in "
            f"claims.csv."
        )
        + "</p>",
    ]
    return html_page("Claims", "\n".join(body))


# --- the committed runs --------------------------------------------------------------------------------------------
def read_runs(folder: str | Path) -> dict[str, tuple[dict, pd.DataFrame]]:
    """Every committed claims run of ``folder`` (``docs/runs``): name -> (its JSON, its CSV)."""
    out = {}
    for meta_path in sorted(Path(folder).glob("*.json")):
        csv = meta_path.with_suffix(".csv")
        if csv.is_file():
            out[meta_path.stem] = (json.loads(meta_path.read_text()), pd.read_csv(csv, dtype={"paper": str}))
    return out


def config_of(command: str) -> tuple[str, dict[str, list[str]]]:
    """The config path and the slicing keys (``only_experiments``, ``only_algorithms``) of a run's command
    (``banditbench claims CONFIG --until-decided ... --only-experiments A B``)."""
    words = command.split()
    keys = {}
    for flag in ("--only-experiments", "--only-algorithms"):
        if flag in words:
            named = words[words.index(flag) + 1 :]
            keys[flag[2:].replace("-", "_")] = named[
                : next((k for k, w in enumerate(named) if w.startswith("--")), len(named))
            ]
    return words[2], keys


def config_claims(command: str) -> dict[str, dict]:
    """The claims the config of a run's command states now (id -> the claim as written), sliced as the command
    slices it (run in the checkout: a config's ``claims_files`` are relative to it)."""
    from ..configuration import claims, slicing
    from ..configuration.grid import load_config_file

    path, keys = config_of(command)
    config = {**claims.with_claims_files(load_config_file(path), load_config_file), **keys}
    return dict(slicing.apply(config).get("claims") or {})


def with_config_text(results: pd.DataFrame, now: Mapping[str, Mapping]) -> pd.DataFrame:
    """A run's rows with the reading (``note``), the restatements (``also``) and, for an untestable claim that still
    is, the reason, of its claims as the config (:func:`config_claims`) states them now: a claim's words, not the
    run's measurement (a row whose claim the config no longer has keeps what the run recorded)."""
    out = results.copy()
    for column in ("note", "also"):
        out[column] = out[column].fillna("") if column in out else ""
    for i, cid in out["claim"].items():
        if cid in now:
            out.at[i, "note"] = str(now[cid].get("note", ""))
            also = [{"note": "", **r} for r in now[cid].get("also") or []]
            out.at[i, "also"] = json.dumps(also) if also else ""
            if out.at[i, "verdict"] == "untestable" and "untestable" in now[cid]:
                out.at[i, "reason"] = str(now[cid]["untestable"])
    return out


def changes_since(results: pd.DataFrame, now: Mapping[str, Any] | list[str]) -> dict[str, list[str]]:
    """How a run's claims differ from its config's now: ``folded`` (the run's claims that make another row's
    comparison, shown under it), ``dropped`` (the run's claims the config no longer states, and that fold into no
    row: a restatement folded into a claim's ``also``, a claim replaced), ``added`` (the config's claims the run did
    not judge: added, or made testable, since)."""
    folded = [e["claim"] for also in fold_restatements(results)["also"] for e in (json.loads(also) if also else [])
              if "claim" in e]  # fmt: skip
    ran = list(results["claim"])
    return {
        "folded": folded,
        "dropped": [c for c in ran if c not in now and c not in folded],
        "added": [c for c in now if c not in ran],
    }


# --- the summary across papers ----------------------------------------------------------------------------------
def _distinct_rows(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The rows of a paper's runs, each comparison once (an untestable claim without one: each claim id once)."""
    seen, keep = set(), []
    for frame in frames:
        for _, row in frame.iterrows():
            key = comparison_of(row["experiment"], row["comparison"]) or ("claim", row["claim"])
            if key not in seen:
                seen.add(key)
                keep.append(row)
    return pd.DataFrame(keep)


def _counts(rows: pd.DataFrame, column: str) -> list[str]:
    counts = rows[column].value_counts() if len(rows) else pd.Series(dtype=int)
    return [str(int(counts.get(v, 0))) for v in VERDICTS]


def summary_markdown(
    runs: Mapping[str, tuple[dict, pd.DataFrame]], papers: Mapping[str, tuple[str, str]], before: set[str] = frozenset()
) -> str:
    """Per paper (``papers``: number -> (title, page)), its committed runs (name, date, method) and the counts of its
    distinct comparisons by verdict and by family-wise verdict (:func:`family_wise_per_paper`); then each run that
    holds several papers' claims (family-wise per paper within it).  ``before``: the runs recorded before the
    distribution-free default, marked so."""
    folded = family_wise_per_paper({name: results for name, (_, results) in runs.items()})
    family = ("supported", "contradicted", "not separated")
    lines = [
        f"| paper | runs (date, interval) | {' | '.join(VERDICTS)} | family-wise: {' | '.join(family)} |",
        "|---|---|" + "---|" * (len(VERDICTS) + len(family)),
    ]
    groups = [(f"[{n}]({page}) {title}", [r for r in folded if set(folded[r]["paper"]) == {n}]) for n, (title, page)
              in papers.items()]  # fmt: skip
    groups += [(f"`{r}`: papers {', '.join(sorted(set(folded[r]['paper'])))}", [r]) for r in folded
               if folded[r]["paper"].nunique() > 1]  # fmt: skip
    for label, names in groups:
        if not names:
            continue
        rows = _distinct_rows([folded[n] for n in names])
        fw = rows.loc[rows[FAMILY] != "", FAMILY].value_counts()
        described = "; ".join(
            f"`{n}` ({runs[n][0]['date']}, {_methods(folded[n])}{', before the default' if n in before else ''})"
            for n in names
        )
        lines.append(
            f"| {label} | {described} | " + " | ".join(_counts(rows, "verdict"))
            + " | " + " | ".join(str(int(fw.get(v, 0))) for v in family) + " |"
        )  # fmt: skip
    return "\n".join(lines) + "\n"


def _methods(results: pd.DataFrame) -> str:
    """The intervals a run's rows used, by name (``Gaussian t-CS``, ``betting CS (hedged capital)``)."""
    names = sorted({str(m).split(" (opt-in")[0].split(" on [")[0] for m in results["method"].dropna()})
    return ", ".join(names) or "no interval"


def write_claims(results: pd.DataFrame, csv: str | Path, md: str | Path, html_file: str | Path | None = None) -> None:
    """The claims table as CSV (every field), Markdown and, for the report, HTML (:func:`claims_page`)."""
    results.to_csv(csv, index=False)
    Path(md).write_text(markdown(results))
    if html_file is not None:
        Path(html_file).write_text(claims_page(results))
