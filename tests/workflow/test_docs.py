"""The documentation site: the strict MkDocs build, one generated entry per registered name and
config key, and the `banditbench` commands the pages show, executed."""

from __future__ import annotations

import html
import html.parser
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from banditbench import registry
from banditbench.cli import build_parser, main
from banditbench.configuration.grid import load_config_file, load_grid, load_schema
from banditbench.simulation.delays import DELAY_KINDS
from conftest import load_script, ROOT

pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]') is not installed")


def _hooks():
    return load_script("docs/hooks.py", "docs_hooks")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built with ``mkdocs build --strict`` (warnings, broken links, missing pages fail it)."""
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))


@pytest.mark.slow
def test_the_strict_build_writes_every_page_of_the_nav(site):
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", "#"))["nav"]

    def pages(items):
        for item in items:
            if isinstance(item, str):
                yield item
            elif isinstance(item, dict):
                for value in item.values():
                    yield from ([value] if isinstance(value, str) else pages(value))

    listed = list(pages(nav))
    assert "index.md" in listed and len(listed) >= 10
    for page in listed:
        assert (site / page.replace(".md", ".html")).is_file(), page


@pytest.mark.slow
def test_every_registered_algorithm_and_environment_has_a_generated_page(site):
    for kind, table in (("algorithms", registry.policies()), ("environments", registry.environments())):
        assert table
        index = _text(site / "reference" / kind / "index.html")
        for name, entry in table.items():
            page = site / "reference" / kind / f"{name}.html"
            assert page.is_file(), f"no page for the registered {kind[:-1]} {name!r}"
            text = _text(page)
            cls = entry.load()
            assert name in index
            assert registry.summary_line(cls).replace("``", "")[:40] in text.replace("\n", " ")
            for pname in registry.parameters(cls):
                if pname != "horizon":
                    assert pname in text, f"{name}: parameter {pname!r} missing from its page"


@pytest.mark.slow
def test_an_algorithm_page_shows_paper_equations_and_parameter_details(site):
    text = _text(site / "reference" / "algorithms" / "ldb_df.html")
    assert "seed 000" in text and "Linear and Neural Dueling Bandits with Delayed Feedback" in text
    assert "Algorithm 1" in text and "eqs. 2–3" in text
    # type and range, default and the description declared with the parameter (its Doc)
    assert "kappa_mu" in text and "a finite number > 0" in text and "0.1" in text
    assert "lower bound on the link derivative (Assumption A2)" in text
    page = (site / "reference" / "algorithms" / "ldb_df.html").read_text()
    assert 'href="../../papers/seed-000-delayed-dueling.html"' in page


# --- offline: search from disk, nothing from the network, equations as MathML --------------------
class _Loads(html.parser.HTMLParser):
    """The URLs a page makes the browser load: scripts, stylesheets and other <link>s, images, iframes."""

    def __init__(self):
        super().__init__()
        self.urls: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "img", "iframe", "source") and attrs.get("src"):
            self.urls.append((tag, attrs["src"]))
        if tag == "link" and attrs.get("href") and "canonical" not in (attrs.get("rel") or ""):
            self.urls.append((tag, attrs["href"]))


@pytest.mark.slow
def test_the_site_searches_from_disk(site):
    """The offline plugin's index as a script (file:// pages cannot fetch search_index.json), the Web Worker
    shim served from the site, and links to page.html (no directory URLs), so search works opened from disk."""
    script = (site / "search" / "search_index.js").read_text()
    assert script.startswith("var __index = ")
    index = json.loads(script[len("var __index = ") :])
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert {"index.html", "papers/seed-000-delayed-dueling.html", "reference/algorithms/ldb_df.html"} <= locations
    assert any("zooming" in doc["text"].lower() for doc in index["docs"])
    assert "\\lVert" not in script  # the equations' TeX annotations are kept out of the index
    page = (site / "index.html").read_text()
    loads = _Loads()
    loads.feed(page)
    scripts = [url for tag, url in loads.urls if tag == "script"]
    shim = next(url for url in scripts if "iframe-worker" in url)
    assert (site / shim).is_file() and "IFrameWorker" in (site / shim).read_text()
    assert scripts.index(shim) < next(k for k, url in enumerate(scripts) if "bundle" in url)  # before the bundle
    assert 'href="getting-started.html"' in page and 'href="getting-started/"' not in page


@pytest.mark.slow
def test_no_page_loads_anything_from_the_network(site):
    """Every script, stylesheet, font and image of every page is a file of the site: no CDN, no web fonts."""
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 50
    for page in pages:
        loads = _Loads()
        loads.feed(page.read_text())
        assert loads.urls, page
        for tag, url in loads.urls:
            assert not re.match(r"(?:[a-z]+:)?//", url), f"{page.relative_to(site)}: <{tag}> loads {url}"
            path = url.split("#")[0].split("?")[0]
            # root-relative only in 404.html, which a web server shows
            target = (site / path.lstrip("/") if path.startswith("/") else page.parent / path).resolve()
            assert target.is_file(), f"{page.relative_to(site)}: <{tag}> loads {url}, which is not in the site"
    for css in site.rglob("*.css"):
        text = css.read_text()
        assert not re.search(r"@import|url\(\s*['\"]?(?:[a-z]+:)?//", text), css.relative_to(site)


#: pages whose equations are maths: reference pages generated from docstrings, and the papers' pages
MATHS_PAGES = [
    *(
        f"reference/algorithms/{name}.html"
        for name in (
            "ldb_df", "ndb_df", "nvldb_ucb_asym", "neurallog_ucb1", "logistic_ucb1", "colstim", "vacdb",
            "delayed_zooming", "pblincbwk_alg1",
        )
    ),
    *(f"reference/environments/{name}.html" for name in ("synthetic_logistic", "lipschitz", "pbbwk_synthetic")),
    "papers/index.html",
    *(f"papers/{p.stem}.html" for p in sorted((ROOT / "docs" / "papers").glob("seed-00*.md"))),
]  # fmt: skip


@pytest.mark.slow
def test_the_equations_are_rendered_as_mathml(site):
    """$...$ / $$...$$ in the pages and :math: / .. math:: in the docstrings reach the site as MathML (no
    JavaScript needed), each with its TeX as annotation; none is left as TeX or markup text."""
    for page in sorted(site.rglob("*.html")):
        text = page.read_text()
        assert 'class="arithmatex">\\(' not in text and 'class="arithmatex">\\[' not in text, page
    for page in sorted((site / "reference").rglob("*.html")):
        assert ":math:" not in _text(page) and ".. math::" not in _text(page), page
    for name in MATHS_PAGES:
        text = (site / name).read_text()
        assert text.count("<math") >= 3, name
        assert '<annotation encoding="application/x-tex"' in text, name
    ldb = (site / "reference" / "algorithms" / "ldb_df.html").read_text()
    # eq. 17's radius from the module docstring, and eq. 2's weights
    assert re.search(r"<math[^>]*>.*?<msqrt>.*?\\beta_t = \\sqrt\{2\\log\(1/\\delta\)", ldb, re.S)
    assert "\\omega_{s,t} = \\mathbb{1}\\{D_s \\le \\min(M, t-s)\\} / \\rho" in html.unescape(ldb)
    # a display (.. math::) and a reST table of formulas
    assert '<math display="block">' in (site / "reference" / "algorithms" / "nvldb_ucb_asym.html").read_text()
    neurallog = (site / "reference" / "algorithms" / "neurallog_ucb1.html").read_text()
    table = next(t for t in re.findall(r"<table>.*?</table>", neurallog, re.S) if "NeuralLog-TS-2" in t)
    assert table.count("<math") >= 15 and "====" not in table
    vacdb = (site / "reference" / "algorithms" / "vacdb.html").read_text()
    assert '<div class="arithmatex"><math display="block">' in vacdb


def test_docstring_maths_becomes_markdown_maths():
    hooks = _hooks()
    doc = (
        "Radius :math:`\\beta_t = \\sqrt{\\lambda}` (eq. 6).\n\n"
        "===  =====================  ======\n"
        "a    b                      c\n"
        "===  =====================  ======\n"
        "x    :math:`\\|x\\|_V`        ``y``\n"
        "     (continued)\n"
        "z    p | q                  r\n"
        "===  =====================  ======\n\n"
        ".. math::\n\n"
        "   V_t = \\lambda I\n\n"
        "after\n"
    )
    md = hooks._rst_to_md(doc)
    assert "Radius $\\beta_t = \\sqrt{\\lambda}$ (eq. 6)." in md
    assert "| a | b | c |\n|---|---|---|\n| x | $\\Vert x\\Vert _V$ (continued) | `y` |\n| z | p \\| q | r |" in md
    assert "\n$$\nV_t = \\lambda I\n$$\n" in md and "math::" not in md
    assert hooks._esc("norm $|x|$ | b") == "norm $\\vert x\\vert$ \\| b"


def test_an_equation_latex2mathml_cannot_render_fails_the_strict_build(caplog):
    hooks = _hooks()
    out = hooks.mathml("\\frac{\\lambda}{2} \\lVert\\theta\\rVert^2", display=True)
    assert out.startswith('<math display="block"><semantics>') and "<mfrac>" in out and "xmlns" not in out
    assert out.endswith("\\frac{\\lambda}{2} \\lVert\\theta\\rVert^2</annotation></semantics></math>")
    with pytest.raises(ValueError, match="unknown to latex2mathml: \\\\arg"):
        hooks.mathml("\\arg\\max_x f(x)")
    page = '<p><span class="arithmatex">\\(x &lt; \\nosuch\\)</span></p>'
    with caplog.at_level("WARNING"):
        assert hooks.render_maths(page, "p.md") == page  # left as it was, and a warning: --strict fails
    assert any("p.md" in r.getMessage() and "\\nosuch" in r.getMessage() for r in caplog.records)
    assert all(r.name.startswith("mkdocs.") for r in caplog.records)


def _rendered(hooks, page: str) -> str:
    """A generated page as the site shows it: Markdown with mkdocs.yml's arithmatex, then its maths as MathML."""
    import markdown

    body = markdown.markdown(
        page,
        extensions=["tables", "pymdownx.arithmatex"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )
    return hooks.render_maths(body, "page.md")


def test_an_operator_name_with_a_thin_space_is_one_operator(caplog):
    """``\\operatorname*{arg\\,max}`` (the docstrings of 14 algorithms) is the operator "arg max", not ``∗ a r g m a x``."""
    hooks = _hooks()
    page = hooks.class_page("algorithms", "logistic_ucb1", registry.get("policy", "logistic_ucb1"))
    assert "$\\operatorname*{arg\\,max}_x \\mu(x^\\top" in page
    with caplog.at_level("WARNING"):
        shown = _rendered(hooks, page)
    assert not caplog.records
    assert '<mo movablelimits="true">arg\u2009max</mo>' in shown
    assert "<mo />" not in shown and "<mo>&#x0002A;</mo>" not in shown
    assert '<annotation encoding="application/x-tex" data-search-exclude>\\operatorname*{arg\\,max}_x' in shown
    # a name latex2mathml still spells out fails the strict build
    with pytest.raises(ValueError, match="leaves an operator empty"):
        hooks.mathml("\\operatorname{a\\quad b}")


def test_the_parameter_table_takes_each_description_from_the_declaration():
    from banditbench import params

    hooks = _hooks()
    entry = registry.get("policy", "ldb_df")
    rows = [line for line in hooks.class_page("algorithms", "ldb_df", entry).splitlines() if line.startswith("| `")]
    cls = entry.load()
    assert len(rows) == len(registry.parameters(cls))
    for row in rows:
        name = row.split("`")[1]
        assert row.endswith(f" | {hooks._esc(hooks._rst_to_md(params.description(cls, name)))} |")
    assert any(
        row.startswith(
            '| `kappa_mu` | a finite number > 0 | <span class="default">`0.1`</span> | lower bound on the link derivative'
        )
        for row in rows
    )


def test_a_default_value_breaks_at_its_spaces_only():
    """A parameter's default is code that the site's stylesheet keeps from breaking inside a word (Material's code
    breaks anywhere: "symmetr ic" in a narrow column)."""
    hooks = _hooks()
    entry = registry.get("policy", "neurallog_ucb1")
    row = next(
        line for line in hooks.class_page("algorithms", "neurallog_ucb1", entry).splitlines() if "`init`" in line
    )
    cell = row.split(" | ")[2]
    assert cell == "<span class=\"default\">`'symmetric'`</span>"
    assert "<span class=\"default\"><code>'symmetric'</code></span>" in _rendered(hooks, row)
    css = (ROOT / "docs" / "stylesheets" / "extra.css").read_text()
    rule = re.search(r"^\.md-typeset \.default code \{([^}]*)\}", css, re.M)
    assert rule and "word-break: normal;" in rule.group(1) and "overflow-wrap: normal;" in rule.group(1)


def _type_aliases_of_params() -> list[str]:
    """The public ``Name = Annotated[...]`` assignments of params.py, read from its source."""
    import ast

    tree = ast.parse((ROOT / "src" / "banditbench" / "params.py").read_text())
    return [
        node.targets[0].id
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and not node.targets[0].id.startswith("_")
        and isinstance(node.value, ast.Subscript)
        and getattr(node.value.value, "id", None) == "Annotated"
    ]


def test_the_parameter_types_table_names_every_type_alias_of_params():
    hooks = _hooks()
    aliases = _type_aliases_of_params()
    assert {
        "Positive",
        "NonNegative",
        "Probability",
        "UnitInterval",
        "PositiveInt",
        "NonNegativeInt",
        "DataPath",
    } <= set(aliases)
    assert hooks.PARAMETER_TYPES in (ROOT / "docs" / "extending.md").read_text()
    table = hooks.parameter_types_table()
    for name in aliases:
        assert f"| `{name}` | " in table, name
    assert "| `Probability` | a finite number > 0 and < 1 |" in table
    assert "| `UnitInterval` | a finite number >= 0 and <= 1 |" in table
    assert "| `Sequence[Probability]` | a list of finite numbers > 0 and < 1 |" in table


@pytest.mark.slow
def test_the_extending_page_shows_the_parameter_types_table(site):
    assert "<!-- parameter types -->" not in (site / "extending.html").read_text()  # replaced by the table
    text = _text(site / "extending.html")
    for name in _type_aliases_of_params():
        assert name in text
    assert "a finite number >= 0 and <= 1" in text and "A constructor may keep its own checks" not in text


def _schema_keys(node, root, found: set[str], seen: set[str]) -> None:
    """Every property name anywhere in the schema (independent of the hook's walk)."""
    if isinstance(node, dict):
        if "$ref" in node:
            ref = node["$ref"].split("/")[-1]
            if ref not in seen:
                _schema_keys(root["$defs"][ref], root, found, seen | {ref})
        found.update(node.get("properties", {}))
        for key, value in node.items():
            if key != "$defs":
                _schema_keys(value, root, found, seen)
    elif isinstance(node, list):
        for value in node:
            _schema_keys(value, root, found, seen)


@pytest.mark.slow
def test_every_config_key_has_a_generated_entry(site):
    schema = load_schema()
    found: set[str] = set()
    _schema_keys(schema, schema, found, set())
    assert {"seeds", "experiments", "seeds_per_job", "panel_plots", "window", "mean"} <= found
    page = _text(site / "reference" / "config.html")
    documented = set()
    for path in re.findall(r"^\s*([a-z_<>\[\].]+)\s*$", page, re.M):
        documented.update(re.split(r"[.\[\]]+", path))
    assert found - documented == set(), "config keys without an entry in reference/config.html"
    for kind in DELAY_KINDS:
        assert kind in _text(site / "reference" / "delays.html")


@pytest.mark.slow
def test_every_subcommand_and_option_is_in_the_cli_reference(site):
    text = _text(site / "reference" / "cli.html")
    for name, sub in _hooks().subcommands().items():
        assert f"banditbench {name}" in text
        for action in sub._actions:
            for option in action.option_strings:
                assert option in text, f"{name} {option}"
    assert set(_hooks().subcommands()) == set(build_parser()._subparsers._group_actions[0].choices)


# --- the commands the pages show, executed ------------------------------------------------------
def _commands(markdown: str) -> list[list[str]]:
    """The `banditbench` command lines of the ```bash blocks of a page (continuations joined,
    comments dropped), as argument lists without the program name."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", markdown, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words and Path(words[0]).name == "banditbench":
                out.append(words[1:])
    return out


def _doc_commands() -> list[list[str]]:
    pages = [p.read_text() for p in sorted((ROOT / "docs").rglob("*.md"))]
    pages.append(_hooks().cli_page())
    pages.append((ROOT / "README.md").read_text())
    return [c for page in pages for c in _commands(page)]


def test_the_docs_show_commands_of_every_subcommand():
    shown = {c[0] for c in _doc_commands()}
    assert shown >= {"list", "validate", "run-one", "run-block", "checksum", "provenance"}, shown


def test_every_banditbench_command_the_docs_show_runs(tmp_path, monkeypatch, capsys):
    """Each command runs in a scratch project (the configs linked in) with the files it names:
    a downloaded archive for `checksum`, the run's folder for `claims`, result files for `provenance` (written by
    the documented `run-one` / `run-block` commands themselves, run first), a real cell for `run-block`'s `'{...}'` (and two
    NVLDB cells for its lockstep example's `'{...A...}'` and `'{...B...}'`)."""
    (tmp_path / "config").symlink_to(ROOT / "config")
    shutil.copy(ROOT / "config.yaml", tmp_path / "config.yaml")
    monkeypatch.chdir(tmp_path)
    grid = load_grid(load_config_file("config.yaml"))
    experiment = next(iter(grid.experiments))
    exp = grid.experiments[experiment]
    cell = dict(grid.cell(experiment, next(iter(exp.algorithms)), next(iter(exp.delays)), "none", 0))
    cell["horizon"] = 20
    # run-block's lockstep example: two cells one seed-batched block can hold (seed 001's NVLDB variants)
    net = {"width": 8, "train_steps": 2}
    cells = {
        f"{{...{label}...}}": {**cell, "algorithm": label, "policy": {"name": policy, "params": net}}
        for label, policy in (("A", "nvldb_ucb_asym"), ("B", "nldb_ts_osym"))
    }
    archive = tmp_path / "data" / "raw" / "obd" / "open_bandit_dataset.zip"
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"not the real archive")

    commands = sorted(_doc_commands(), key=lambda c: c[0] == "provenance")  # results first
    assert commands
    ran = []
    for argv in commands:
        argv = [json.dumps(cells.get(a, cell)) if a in ("{...}", *cells) else a for a in argv]
        if argv[0] == "run-one" and "--horizon" not in argv:
            argv += ["--horizon", "20"]  # the documented cell, shortened
        if argv[0] == "provenance":
            runs = Path(argv[1])
            runs.mkdir(parents=True, exist_ok=True)
            for i, result in enumerate(sorted(tmp_path.rglob("*.npz"))):
                if runs not in result.parents:
                    shutil.copy(result, runs / f"{i}.npz")
        if argv[0] == "run-block":
            for out in argv[argv.index("--outputs") + 1 :]:
                Path(out).parent.mkdir(parents=True, exist_ok=True)
        if argv[0] == "claims":  # the config's run folder, with no tables yet (every claim not run)
            from banditbench.configuration.runs import run_name

            Path("results", run_name(load_config_file(argv[1]), [argv[1]], {})).mkdir(parents=True, exist_ok=True)
        code = main(argv)
        captured = capsys.readouterr()
        assert code == 0, f"banditbench {' '.join(argv)}: exit {code}\n{captured.err}"
        if argv[0] == "checksum":
            assert 'dataset_checksums: {obd_full: "sha256:' in captured.out
        if argv[0] == "provenance":
            assert re.search(r"^[1-9]\d* result\(s\) in ", captured.out), captured.out
        ran.append(argv[0])
    assert {"run-one", "run-block", "provenance", "checksum", "validate", "list"} <= set(ran)


def test_the_readme_is_short_names_the_test_command_and_links_to_existing_pages():
    """README.md keeps the essentials (the rest lives in docs/); CI runs its test command."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    blocks = re.findall(r"```bash\n(.*?)```", readme, re.S)
    assert any(re.match(r"make test\b", line) for block in blocks for line in block.splitlines())
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in t]
    assert any(t.startswith("docs/papers/") for t in targets)
    for target in targets:
        if target:
            assert (ROOT / target).is_file(), f"README.md links to {target}, which does not exist"


def test_the_extension_guide_shows_what_the_runner_hands_each_kind_of_policy():
    from banditbench.api import INTERFACES

    guide = (ROOT / "docs" / "extending.md").read_text()
    assert _hooks().INTERFACES_MARKER in guide
    table = _hooks().interfaces_table()
    for (feedback, action), face in INTERFACES.items():
        assert f"| `{feedback}`, `{action}` | `{face.feedback.__name__}({', '.join(face.feedback._fields)})` |" in table


RUNS = sorted((ROOT / "docs" / "runs").glob("*.json"))


@pytest.mark.parametrize("run", RUNS, ids=[p.stem for p in RUNS])
def test_a_committed_claims_run_is_shown_from_its_files_and_matches_its_config(run, monkeypatch):
    """docs/runs/NAME.{csv,json} (benchmarks/claims_run.py): a page shows it through its marker, rendered from
    the CSV, its counts of distinct comparisons and one table row per comparison; a run recorded with the current
    machinery (it keeps its per-seed differences) judged exactly the claims its config states now, and an older one
    names every claim that changed since (folded, dropped, added)."""
    import pandas as pd

    from banditbench.analysis.claim_pages import changes_since, config_claims
    from banditbench.analysis.claims import counts_line, fold_restatements

    monkeypatch.chdir(ROOT)
    meta = json.loads(run.read_text())
    assert meta["command"].startswith("banditbench claims ") and "--until-decided" in meta["command"]
    assert re.fullmatch(r"[0-9a-f]{40}", meta["commit"]) and meta["dirty"] is False
    pages = [p.read_text() for p in (ROOT / "docs").rglob("*.md")]
    assert any(f"<!-- claims run: {run.stem} -->" in page for page in pages)
    block = _hooks().claims_run(run.stem)
    results = pd.read_csv(run.with_suffix(".csv"), dtype={"paper": str})
    assert counts_line(results) in block and meta["commit"][:10] in block and meta["command"] in block
    assert block.count("<tr id=") == len(fold_restatements(results))
    now = list(config_claims(meta["command"]))
    changes = changes_since(results, now)
    if run.with_suffix(".differences.csv").is_file():
        # recorded with the current machinery: it judged the claims its config states now, but for untestable
        # claims replaced since (they hold no data), which the page names
        untestable = set(results.loc[results["verdict"] == "untestable", "claim"])
        assert not changes["folded"] and not changes["added"] and set(changes["dropped"]) <= untestable
        assert [c for c in results["claim"] if c not in changes["dropped"]] == now
        for claim in changes["dropped"]:
            assert f"<code>{claim}</code>" in block
        return
    assert "Recorded before the distribution-free default" in block
    for claim in changes["folded"] + changes["dropped"] + changes["added"]:
        assert f"<code>{claim}</code>" in block
    kept = [c for c in results["claim"] if c not in changes["folded"] + changes["dropped"]]
    assert [c for c in now if c in kept] == kept  # the rest are the config's claims, in its order


@pytest.mark.slow
def test_the_claims_summary_counts_every_committed_run_per_paper(site):
    """docs/claims-summary.md: one row per paper with its committed runs, and the default grid's run, each
    counted once."""
    text = _text(site / "claims-summary.html")
    for run in RUNS:
        assert run.stem in text
    assert text.count("Gaussian t-CS") + text.count("betting CS (hedged capital)") >= len(RUNS)  # each run's interval


def test_seed_003s_per_setting_claims_summary_is_read_off_its_committed_run():
    """The letters of the seed 003 page's per-setting table (S / C / n per delay) are the verdicts of
    docs/runs/lipschitz_noise_sweep.csv, claim by claim: the summary is not typed independently of the run."""
    import pandas as pd

    results = pd.read_csv(ROOT / "docs/runs/lipschitz_noise_sweep.csv")
    results = results[(results["verdict"] != "untestable") & ~results["claim"].str.contains("_sublinear_")]
    letter = {"supported": "S", "contradicted": "C", "not separated": "n"}
    expected: dict[tuple[str, str, str], list[str]] = {}
    for row in results.itertuples():
        function, noise = re.fullmatch(r"lipschitz_sweep_(\w+?)_noise([\d.]+)", row.experiment).groups()
        sigma = re.search(r"sigma([\d.]+)", row.comparison).group(1)
        kind = (
            "eff" if "_eff_sweep" in row.claim else "dim" if "_dim_sweep" in row.claim
            else "zoom" if "_zoom_sigma" in row.claim else "dlpp"
        )  # fmt: skip
        cells = expected.setdefault((function.replace("_", "-"), noise, sigma), {})
        cells[kind] = cells.get(kind, "") + letter[row.verdict]
    page = (ROOT / "docs/papers/seed-003-lipschitz.md").read_text()
    rows = re.findall(r"^\| (triangle|sine|two-dim) \| ([\d.]+) \| ([\d.]+) \| (\w+) \| (\w+) \| (\w+) \|$", page, re.M)
    assert len(rows) == len(expected) == 24
    for function, noise, sigma, dim, zoom, dlpp in rows:
        cells = expected[(function, noise, sigma)]
        assert (dim, zoom, dlpp) == (cells["dim"], cells["zoom"], cells["dlpp"]), (function, noise, sigma)
        assert cells.get("eff", dim) == dim  # two-dim: "DLPP is more efficient" is the same comparison


def test_the_how_to_cite_example_quotes_a_committed_row_as_it_is():
    """docs/claims.md's example of citing a verdict quotes a committed run's row: its verdict, n, interval, range,
    per-paper family-wise verdict and the run's commit, as the files say."""
    import pandas as pd

    text = (ROOT / "docs" / "claims.md").read_text()
    m = re.search(
        r'For example: "Claim `(?P<claim>\w+)` \(seed (?P<paper>\d{3}),.*?\): (?P<verdict>supported|contradicted|not '
        r"separated), n = (?P<n>\d+), mean A − B (?P<mean>\S+) \[(?P<low>\S+), (?P<high>\S+)\] \(betting CS on "
        r"\[(?P<lo>\S+), (?P<hi>\S+)\]\), α = 0.05 per\s+claim; family-wise (?P<family>supported|contradicted|not "
        r"separated) .*?commit\s+`(?P<commit>[0-9a-f]{10})`, `docs/runs/(?P<run>\w+)\.csv`",
        text,
        re.S,
    )
    assert m, "the example's wording changed: update this test with it"

    def number(words: str) -> float:
        return float(words.replace("−", "-").replace(",", ""))

    row = pd.read_csv(ROOT / "docs" / "runs" / f"{m['run']}.csv", dtype={"paper": str}).set_index("claim")
    row = row.loc[m["claim"]]
    assert (row["paper"], row["verdict"], int(row["n"])) == (m["paper"], m["verdict"], int(m["n"]))
    for key in ("mean", "low", "high"):
        assert round(row[key]) == number(m[key]), key
    assert row["method"] == f"betting CS (hedged capital) on [{number(m['lo']):g}, {number(m['hi']):g}]"
    assert json.loads((ROOT / "docs" / "runs" / f"{m['run']}.json").read_text())["commit"].startswith(m["commit"])
    families = _hooks().paper_families()[m["run"]].set_index("claim")
    assert families.loc[m["claim"], "family_wise_paper"] == m["family"]
