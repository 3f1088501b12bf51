"""LaTeX tables a researcher can put in a paper (issue 35): the experiment tables, the paired tables and the
summary tables with ``# $ % & ~ ^ _ { }`` and backslashes in their labels, captions and cells come out as
LaTeX that prints exactly those characters — checked by reading the file back token by token (balanced
braces, math and environments; no special character left bare; every row with its columns) and, where a
LaTeX engine is installed, by compiling it."""

from __future__ import annotations

import re
import shutil
import subprocess

import pandas as pd
import pytest

from banditbench.analysis import aggregate, latex, paired, summary

EVIL = "a#b$c%d&e~f^g_h{i}j\\k<l>m|n"
EVIL_ALG = "alg_1 & {x}"
EVIL_DELAY = "geo^2~50%"
#: the commands and control symbols the tables may hold
COMMANDS = {
    "begin", "end", "centering", "caption", "label", "toprule", "midrule", "bottomrule", "textbf", "textbackslash",
    "textasciitilde", "textasciicircum", "textless", "textgreater", "textbar", "ldots", "pm", "dagger", "ddagger",
    "times", "leq", "geq", "approx", "cdot", "circ", "infty", "theta", "alpha", "rho",
}  # fmt: skip
SYMBOLS = set("\\#$%&_{} ")
#: what each escape prints, to read a file back
PRINTS = {
    r"\textbackslash{}": "\\", r"\textasciitilde{}": "~", r"\textasciicircum{}": "^", r"\textless{}": "<",
    r"\textgreater{}": ">", r"\textbar{}": "|", r"$^\dagger$": "†", r"$\dagger$": "†", r"$\pm$": "±", r"$-$": "−",
    r"$\theta$": "θ", "---": "—", r"\#": "#", r"\$": "$", r"\%": "%", r"\&": "&", r"\_": "_", r"\{": "{", r"\}": "}",
}  # fmt: skip
_PRINTS = re.compile("|".join(re.escape(k) for k in sorted(PRINTS, key=len, reverse=True)))


def printed(tex: str) -> str:
    """The text a piece of the tables' LaTeX prints (their escapes read back, left to right)."""
    return _PRINTS.sub(lambda m: PRINTS[m.group(0)], tex)


def check_shape(tex: str) -> list[tuple[str, list[str]]]:
    """Read ``tex`` token by token: known commands only, braces and ``$`` balanced, environments nested,
    no ``# % ^ _ ~`` outside an escape (``^`` only in math), ``&`` only between a tabular row's cells and
    as many as its column spec says.  Return each table's caption and rows (LaTeX, split at ``&``)."""
    depth, math, envs, i = 0, False, [], 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":
            name = re.match(r"[A-Za-z]+", tex[i + 1 :])
            if name:
                assert name.group(0) in COMMANDS, f"unknown command \\{name.group(0)} at {tex[i - 20 : i + 20]!r}"
                if name.group(0) in ("begin", "end"):
                    env = re.match(r"\{(\w+)\}", tex[i + 1 + len(name.group(0)) :]).group(1)
                    if name.group(0) == "begin":
                        envs.append(env)
                    else:
                        assert envs and envs.pop() == env, f"\\end{{{env}}} closes nothing"
                i += 1 + len(name.group(0))
                continue
            assert tex[i + 1] in SYMBOLS, f"control symbol \\{tex[i + 1]} at {tex[i - 20 : i + 20]!r}"
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            assert depth >= 0, f"unbalanced }} at {tex[i - 30 : i + 5]!r}"
        elif ch == "$":
            math = not math
        elif ch in "#%~_" or (ch == "^" and not math):
            raise AssertionError(f"bare {ch!r} at {tex[i - 30 : i + 5]!r}")
        i += 1
    assert depth == 0 and not math and not envs
    tables = []
    for float_ in re.findall(r"\\begin\{table\}.*?\\end\{table\}", tex, flags=re.S):
        caption = re.search(
            r"\\caption\{(.*)\}\n\\label\{tab:[a-z0-9:-]+\}\n\\begin\{tabular\}", float_, flags=re.S
        ).group(1)
        assert not re.search(r"(?<!\\)&", caption), "a bare & in the caption"
        spec = re.search(r"\\begin\{tabular\}\{([lrc]+)\}", float_).group(1)
        body = float_.split("\\toprule\n")[1].split("\\bottomrule")[0]
        rows = [re.sub(r"\s*\\\\( \\midrule)?$", "", line) for line in body.strip().split("\n")]
        for row in rows:
            assert len(re.split(r"(?<!\\)&", row)) == len(spec), f"{row!r} has not {len(spec)} cells"
        tables.append((caption, [[c.strip() for c in re.split(r"(?<!\\)&", row)] for row in rows]))
    assert tables
    return tables


def test_escape_writes_every_special_character_once():
    assert latex.escape(EVIL) == (
        r"a\#b\$c\%d\&e\textasciitilde{}f\textasciicircum{}g\_h\{i\}j\textbackslash{}k\textless{}l\textgreater{}m"
        r"\textbar{}n"
    )
    assert latex.escape("± − † θ Ω — ‘q’") == r"$\pm$ $-$ $\dagger$ $\theta$ $\Omega$ --- `q'"
    assert latex.escape("†", dagger=r"$^\dagger$") == r"$^\dagger$"
    for text in (EVIL, EVIL_ALG, EVIL_DELAY, "\\\\{}", "$\\pm$"):
        assert printed(latex.escape(text)) == text
    assert latex.table("c", ["h"], [[float("nan")], [None], [latex.Tex(r"\textbf{x}")]], "l").count(r"\\") == 4


def test_labels_and_display_names():
    assert latex.label("Default_2", "", "lin.ucb", "cumulative_regret at T = 10") == (
        "tab:default-2-lin-ucb-cumulative-regret-at-t-10"
    )
    assert latex.label(EVIL) == "tab:a-b-c-d-e-f-g-h-i-j-k-l-m-n"
    assert latex.table("c", ["h"], [], "l", key="tab:x").split("\n")[2:4] == [r"\caption{c}", r"\label{tab:x}"]
    assert latex.name(r"LDB-0 ($\lambda = 1$) 5\$ & more") == r"LDB-0 ($\lambda = 1$) 5\$ \& more"
    assert latex.name("a $ b") == r"a \$ b" and latex.name("x_1") == r"x\_1"


def _tidy() -> pd.DataFrame:
    """A tidy table whose labels hold every special character; one cell's interval reaches below 0 (†)."""
    rows = []
    for alg, mean in ((EVIL_ALG, 10.0), (EVIL, 2.0)):
        for delay in (EVIL_DELAY, "none"):
            for t in (5, 10):
                rows.append(
                    {"experiment": EVIL, "algorithm": alg, "delay": delay, "budget": "none", "t": t}
                    | {"metric": "cumulative_regret", "mean": mean, "ci_low": mean - 3, "ci_high": mean + 3, "n": 4}
                    | {"sd": 1.0, "min": 0.0, "max": 20.0, "median": mean, "q1": mean, "q3": mean}
                )
    return pd.DataFrame(rows)


def test_the_experiment_tables_print_their_labels_and_cells():
    tidy = _tidy()
    tables = {"cumulative_regret at T = 10": aggregate.headline_table(tidy, "cumulative_regret", "both")}
    tables.update(aggregate.human_tables(tidy, "both"))
    tex = aggregate.to_latex(tables, EVIL, spread="both", n=4)
    shape = check_shape(tex)
    assert len(shape) == 2
    caption, rows = shape[0]
    assert printed(caption).startswith(f"{EVIL}: cumulative_regret at T = 10. Mean ± 95 % Student-t")
    assert "† the interval reaches below 0" in printed(caption)
    assert [printed(c) for c in rows[0]] == ["algorithm", f"{EVIL_DELAY}", "none"]
    assert printed(rows[1][0]) == EVIL_ALG and printed(rows[2][0]) == EVIL
    assert printed(rows[2][1]) == "2.00 ± 3.00 † (sd 1.00)" and r"$^\dagger$" in rows[2][1]
    caption, rows = shape[1]
    assert [printed(c) for c in rows[0]] == ["delay", "budget", "algorithm", "t = 5", "t = 10"]
    assert {printed(r[0]) for r in rows[1:]} == {EVIL_DELAY, "none"}


def test_the_paired_tables_print_their_pairs_and_caption():
    rows = []
    for b in (EVIL_ALG, EVIL):
        for t in (5, 10):
            rows.append(
                {"experiment": EVIL, "a": "ref_{0}", "b": b, "delay": EVIL_DELAY, "budget": "none", "t": t}
                | {"metric": "cumulative_regret", "better": "lower", "mean": -1.5, "ci_low": -2.0, "ci_high": -1.0}
                | {"sd": 0.5, "n": 6, "a_better": 0.5, "tied": 0.0, "interval": "t", "level": 0.95}
            )
    table = pd.DataFrame(rows)
    text = paired.caption(table) + "\n\nA note with 100% & #1 {braces}."
    tex = paired.to_latex(paired.human_tables(table), EVIL, text)
    (caption, final), (_, wide) = check_shape(tex)
    assert printed(caption).startswith(f"{EVIL}: A − B, cumulative_regret at T = 10. A − B: the per-seed")
    assert printed(caption).endswith("A note with 100% & #1 {braces}.")
    assert [printed(r[0]) for r in final[1:]] == [f"ref_{{0}} − {EVIL_ALG}", f"ref_{{0}} − {EVIL}"]
    assert printed(final[1][1]) == "−1.50 ± 0.50 (3/6)" and final[1][1].startswith("$-$1.50")
    assert printed(wide[1][0]) == EVIL_DELAY
    named = paired.human_tables(table, names={"ref_{0}": r"$\rho$ ref", EVIL: "Evil"})
    (_, final), (_, wide) = check_shape(paired.to_latex(named, EVIL, text, run="r"))
    assert [r[0] for r in final[1:]] == [r"$\rho$ ref $-$ alg\_1 \& \{x\}", r"$\rho$ ref $-$ Evil"]
    assert r"\label{tab:r-a-b-c-d-e-f-g-h-i-j-k-l-m-n-paired-by-horizon}" in paired.to_latex(named, EVIL, text, "r")
    with pytest.raises(ValueError, match="the same display name"):
        paired.human_tables(table, names={"ref_{0}": "X", EVIL: "X"})
    with pytest.raises(ValueError, match="the same display name"):
        aggregate.named(aggregate.human_tables(_tidy())["cumulative_regret"], {EVIL: "X", EVIL_ALG: "X"})


def test_the_summary_tables_print_their_description_groups_and_bold_cells():
    spec = {
        "name": "t", "metric": "cumulative_regret", "better": "lower", "bold": 1, "decimals": 2,
        "algorithms": [EVIL_ALG, EVIL], "ci_level": 0.95, "description": f"Seed 002 Table 2 — {EVIL}, θ.",
        "rows": [{"experiment": "e", "group": "noise_%", "label": "0.5 & up", "delay": "none", "budget": "none"}],
    }  # fmt: skip
    cells = pd.DataFrame(
        [
            {"row": 0, "group": "noise_%", "label": "0.5 & up", "experiment": "e", "algorithm": alg, "mean": m}
            | {"ci_low": m - 1, "ci_high": m + 1, "n": 4, "t": 10, "bold": m == 1.0}
            for alg, m in ((EVIL_ALG, 1.0), (EVIL, 2.0))
        ]
    )
    caption, rows = check_shape(summary.to_latex(cells, spec))[0]
    assert printed(caption).startswith(f"Seed 002 Table 2 — {EVIL}, θ. cumulative_regret at T = 10: mean ± 95 %")
    assert [printed(c) for c in rows[0]] == ["parameter", "value", EVIL_ALG, EVIL]
    assert rows[1][2] == r"\textbf{1.00 $\pm$ 1.00}" and printed(rows[1][3]) == "2.00 ± 1.00"
    assert [printed(c) for c in rows[1][:2]] == ["noise_%", "0.5 & up"]


@pytest.mark.skipif(
    not any(shutil.which(x) for x in ("pdflatex", "tectonic", "lualatex")), reason="no LaTeX engine on this machine"
)
def test_the_tables_compile(tmp_path):
    tidy = _tidy()
    tables = {"cumulative_regret at T = 10": aggregate.headline_table(tidy, "cumulative_regret")}
    body = aggregate.to_latex(tables | aggregate.human_tables(tidy), EVIL, spread="both", n=4)
    doc = tmp_path / "t.tex"
    doc.write_text(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\begin{document}\n"
        + body
        + "\n\\end{document}\n"
    )
    engine = next(x for x in ("pdflatex", "lualatex", "tectonic") if shutil.which(x))
    cmd = (
        [engine, doc.name] if engine == "tectonic" else [engine, "-interaction=nonstopmode", "-halt-on-error", doc.name]
    )
    run = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000
