"""MkDocs hook: the reference pages, generated from the code at every build so they cannot drift.

* ``reference/algorithms/<name>.md`` and ``reference/environments/<name>.md``: every class
  registered with ``@register`` (:mod:`banditbench.registry`): its summary, the paper it
  implements, the equation / algorithm / section references of its docstring, its parameters
  (type and range from the annotation, :func:`banditbench.params.describe`; the default from
  :func:`banditbench.registry.parameters`; the description from the parameter's declaration,
  :func:`banditbench.params.description`) and the full docstrings.
* ``reference/delays.md``: the delay kinds and their parameters (:mod:`banditbench.simulation.delays`).
* ``reference/config.md``: every key of ``src/banditbench/configuration/schema.yaml`` (as
  :func:`banditbench.configuration.grid.load_schema` completes it), with type, constraints and description.
* ``reference/cli.md``: every subcommand of the argument parser (:func:`banditbench.cli.build_parser`).

The navigation's "Reference" section is filled with the generated pages (``on_config``).
``tests/workflow/test_docs.py`` imports this file to check that every registered name and config key
has an entry in the built site.
"""

from __future__ import annotations

import argparse
import inspect
import re
import textwrap
from functools import cache
from pathlib import Path
from typing import Any

#: the seed papers: number -> (short title, docs page)
SEED_PAPERS = {
    "000": (
        "Linear and Neural Dueling Bandits with Delayed Feedback (Wang et al., 2026)",
        "papers/seed-000-delayed-dueling.md",
    ),
    "001": (
        "Neural Variance-aware Dueling Bandits with Deep Representation and Shallow Exploration (Oh et al.)",
        "papers/seed-001-variance-dueling.md",
    ),
    "002": ("Neural Logistic Bandits (Bae and Lee)", "papers/seed-002-neural-logistic.md"),
    "003": ("Lipschitz Bandits with Stochastic Delayed Feedback", "papers/seed-003-lipschitz.md"),
    "004": (
        "Preference-based Stochastic Linear Contextual Bandits with Knapsacks (Liu, AISTATS 2025)",
        "papers/seed-004-knapsack.md",
    ),
}

#: references to a paper's numbered parts, as docstrings write them
REFERENCE = re.compile(
    r"\b(?:eqs?\.|Eqs?\.|Algorithms?|Alg\.|Sec\.|Secs\.|App\.|Appendix|Tables?|Remark|Assumptions?|Lemma|"
    r"Theorem|Listing|Fig\.|Figure)\s+[A-Z]?\d+(?:\.\d+)*(?:\s*(?:[–-]|and|,)\s*[A-Z]?\d+(?:\.\d+)*)*"
)


def _math_bars(tex: str) -> str:
    """TeX without a bar: ``\\|`` as ``\\Vert``, ``|`` as ``\\vert`` (a table cell's bar, even escaped, would
    end the cell or reach the TeX as ``\\|``)."""
    return tex.replace("\\|", "\\Vert ").replace("|", "\\vert ")


def _esc(text: str) -> str:
    """Text for a Markdown table cell (a code span holding ``|`` becomes HTML: a table cell's ``\\|``
    would show its backslash inside a code span)."""
    import html

    def code(m):
        return "<code>" + html.escape(m.group(1)).replace("|", "&#124;") + "</code>"

    text = re.sub(r"`([^`]*\|[^`]*)`", code, str(text))
    text = re.sub(r"\$([^$]+)\$", lambda m: f"${_math_bars(m.group(1)).strip()}$", text)
    return text.replace("|", "\\|").replace("\n", " ").replace("&#124;", "&#124;")


def _doc(obj: Any) -> str:
    return inspect.getdoc(obj) or ""


def _math_blocks(text: str) -> str:
    """Each reST ``.. math::`` directive (its TeX on the directive's line or indented below it) as a Markdown
    display, ``$$`` lines around the TeX at the directive's indentation (blank lines inside dropped)."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = re.match(r"^(\s*)\.\. math::\s*(.*)$", lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent, body = m.group(1), [m.group(2)]
        i += 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > len(indent)):
            body.append(lines[i])
            i += 1
        tex = [line.strip() for line in body if line.strip()]
        out += ["", f"{indent}$$", *(indent + line for line in tex), f"{indent}$$", ""]
    return "\n".join(out)


#: a rule line of a reST simple table: runs of ``=`` separated by spaces
_TABLE_RULE = re.compile(r"^\s*=+(?: +=+)+\s*$")


def _simple_tables(text: str) -> str:
    """Each reST simple table (columns under runs of ``=``; a header above the second rule, if any; a row whose
    first cell is empty continues the row above) as a Markdown table. A bar inside a ``:math:`` role becomes
    TeX's ``\\vert``, any other bar an escaped one."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if not _TABLE_RULE.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        starts = [m.start() for m in re.finditer(r"=+", lines[i])]
        rows: list[list[str]] = []
        header = 0
        i += 1
        while i < len(lines):
            if _TABLE_RULE.match(lines[i]):
                i += 1
                if i < len(lines) and lines[i].strip() and not header:
                    header = len(rows)  # the rule below the header
                    continue
                break
            if lines[i].strip():
                cells = [lines[i][a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
                if rows and not cells[0]:
                    rows[-1] = [f"{old} {new}".strip() for old, new in zip(rows[-1], cells)]
                else:
                    rows.append(cells)
            i += 1

        def row(cells: list[str]) -> str:
            cells = [re.sub(r":math:`[^`]*`", lambda m: _math_bars(m.group(0)), c).replace("|", "\\|") for c in cells]
            return f"{indent}| " + " | ".join(cells) + " |"

        header = header or 1
        out += ["", *(row(r) for r in rows[:header]), f"{indent}|" + "---|" * len(starts)]
        out += [*(row(r) for r in rows[header:]), ""]
    return "\n".join(out)


def _rst_to_md(text: str, lang: str = "text") -> str:
    """Docstring markup (reST roles, double back-quotes) as Markdown; ``::`` blocks fenced as ``lang``;
    maths (the ``:math:`` role, the ``.. math::`` directive) as ``$...$`` and ``$$`` displays (rendered by
    :func:`mathml`)."""
    text = _simple_tables(_math_blocks(text))
    text = re.sub(r":math:`([^`]+)`", lambda m: f"${m.group(1).strip()}$", text)
    text = re.sub(r":(?:class|func|mod|meth|data|attr):`~?([^`]+)`", r"`\1`", text)
    text = text.replace("``", "`")
    # a numpy-style section ("Parameters" over a line of dashes) becomes a bold line, its
    # "name : text" entries a list
    lines, kept, section = text.splitlines(), [], False
    for k, line in enumerate(lines):
        if re.fullmatch(r"-{3,}", line.strip()) and kept and kept[-1].strip():
            kept[-1] = f"**{kept[-1].strip()}**"
            kept.append("")
            section = True
            continue
        entry = re.match(r"^(\w+(?:\s*,\s*\w+)*)\s+:\s+(.*)$", line) if section else None
        if entry:
            names = ", ".join(f"`{n.strip()}`" for n in entry.group(1).split(","))
            kept.append(f"- {names}: {entry.group(2)}")
            continue
        if section and line.strip() and not line.startswith((" ", "\t")):
            section = False
        kept.append(line)
    text = "\n".join(kept)
    # a "::" literal block becomes a fenced block
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::"):
            out.append(line.rstrip()[:-1] if not line.rstrip().endswith(" ::") else line.rstrip()[:-3])
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["", f"```{lang}", textwrap.dedent("\n".join(block)).strip("\n"), "```", ""]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _family(cls: type) -> list[type]:
    """``cls`` and its base classes inside the package (most derived first)."""
    return [
        k for k in cls.__mro__ if k.__module__.startswith("banditbench") and k.__name__ not in ("Policy", "Environment")
    ]


def paper_of(cls: type) -> tuple[str | None, str]:
    """(seed number or None, the citation text of the class's summary or its module's first line)."""
    import sys

    summary = _doc(cls).split("\n\n")[0]
    mod = sys.modules.get(cls.__module__)
    first = (mod.__doc__ or "").strip().splitlines()[0] if mod and mod.__doc__ else ""
    seed = None
    for text in (summary, first):
        m = re.search(r"seed (00[0-4])", text)
        if m:
            seed = m.group(1)
            break
    cite = ""
    for text in (summary, first):
        m = re.search(r"\(([^()]*(?:seed 00\d|et al\.|\d{4})[^()]*)\)", text)
        if m:
            cite = m.group(1)
            break
    return seed, cite


def references(cls: type) -> list[str]:
    """The equation, algorithm, section, appendix and table references of the class's docstring
    (its family's when its own names none), in order, without repeats."""
    for klass in _family(cls):
        found = list(dict.fromkeys(m.group(0) for m in REFERENCE.finditer(_doc(klass))))
        if found:
            return found
    return []


# --- registered classes ----------------------------------------------------------------------
def registered() -> dict[str, dict[str, Any]]:
    """kind ("algorithms", "environments") -> {name: registry entry}."""
    from banditbench import registry

    return {
        "algorithms": dict(sorted(registry.policies().items())),
        "environments": dict(sorted(registry.environments().items())),
    }


def _link(from_page: str, to_page: str) -> str:
    """Relative link between two docs pages (paths relative to docs/)."""
    import posixpath

    return posixpath.relpath(to_page, posixpath.dirname(from_page))


def class_page(kind: str, name: str, entry) -> str:
    from banditbench import params
    from banditbench import registry
    from banditbench.api import feedback_kinds

    cls = entry.load()
    page = f"reference/{kind}/{name}.md"
    doc = _doc(cls)
    summary = doc.split("\n\n")[0].replace("\n", " ")
    seed, cite = paper_of(cls)
    feedback = " | ".join(feedback_kinds(cls)) if kind == "environments" else cls.feedback_kind
    lines = [
        f"# `{name}`",
        "",
        _rst_to_md(summary),
        "",
        f"- **config name:** `{name}` ({'policy' if kind == 'algorithms' else 'environment'})",
        f"- **class:** `{entry.module}.{entry.cls_name}`",
        f"- **source:** `src/{entry.path.relative_to(registry.PACKAGE_DIR.parent).as_posix()}`",
        f"- **feedback:** {feedback}",
    ]
    if kind == "algorithms":
        lines.append(f"- **action:** {getattr(cls, 'action_kind', '')}")
    if seed:
        title, target = SEED_PAPERS[seed]
        lines.append(f"- **paper:** seed {seed}, [{title}]({_link(page, target)})")
    if cite:
        lines.append(f"- **cited as:** {_rst_to_md(cite)}")
    refs = references(cls)
    lines.append(f"- **equations and sections:** {', '.join(refs) if refs else '—'}")
    lines += ["", "## Parameters", ""]
    hints = params.hints(cls)
    required = registry.required_parameters(cls)
    rows = [(p, d) for p, d in registry.parameters(cls).items() if p != "horizon"]
    if rows:
        lines += [
            "Set under `params:` of the "
            + ("algorithm" if kind == "algorithms" else "environment")
            + " in a config; checked before any job runs.",
            "",
            "| parameter | type and range | default | description |",
            "|---|---|---|---|",
        ]
        for pname, default in rows:
            # the value breaks at its spaces only (docs/stylesheets/extra.css: Material breaks code anywhere)
            shown = "required" if pname in required else f'<span class="default">`{default!r}`</span>'
            desc = _rst_to_md(params.description(cls, pname) or "")
            lines.append(f"| `{pname}` | {_esc(params.describe(hints[pname]))} | {_esc(shown)} | {_esc(desc) or '—'} |")
    else:
        lines.append("No configurable parameters.")
    lines += ["", "## Description", "", _rst_to_md(doc), ""]
    bases = [k for k in _family(cls)[1:] if _doc(k)]
    for base in bases:
        lines += [f"### Family: `{base.__name__}`", "", _rst_to_md(_doc(base)), ""]
    import sys

    mod = sys.modules[cls.__module__]
    if mod.__doc__:
        lines += [f"## Module `{cls.__module__}`", "", _rst_to_md(inspect.cleandoc(mod.__doc__)), ""]
    return "\n".join(lines)


def index_page(kind: str, entries: dict) -> str:
    from banditbench import registry
    from banditbench.api import feedback_kinds

    title = "Algorithms" if kind == "algorithms" else "Environments"
    lines = [
        f"# {title}",
        "",
        f"Every {'policy' if kind == 'algorithms' else 'environment'} registered with `@register`, "
        f"generated from the code (`banditbench list {'policies' if kind == 'algorithms' else 'environments'}` "
        "prints the same names).",
        "",
        "| name | feedback | paper | summary |",
        "|---|---|---|---|",
    ]
    for name, entry in entries.items():
        cls = entry.load()
        seed, _ = paper_of(cls)
        feedback = " \\| ".join(feedback_kinds(cls)) if kind == "environments" else cls.feedback_kind
        paper = f"[seed {seed}](../../{SEED_PAPERS[seed][1]})" if seed else "—"
        lines.append(
            f"| [`{name}`]({name}.md) | {feedback} | {paper} | {_esc(_rst_to_md(registry.summary_line(cls)))} |"
        )
    return "\n".join(lines) + "\n"


# --- delays ---------------------------------------------------------------------------------
def delays_page() -> str:
    from banditbench.simulation.delays import DELAY_KINDS, DelayModel

    common = DelayModel.parameters()
    lines = [
        "# Delay models",
        "",
        "A delay is set under an experiment's `delays: {label: {kind: ..., window: M or null, ...}}`; "
        "generated from `banditbench.simulation.delays` (`banditbench list delays` prints the same).",
        "",
        "| kind | parameter | required | description |",
        "|---|---|---|---|",
    ]
    for kind, cls in DELAY_KINDS.items():
        own = {k: p for k, p in cls.parameters().items() if k not in common}
        if not own:
            lines.append(f"| `{kind}` | — | | {_esc(_rst_to_md(_doc(cls).splitlines()[0] if _doc(cls) else ''))} |")
        for pname, param in own.items():
            lines.append(f"| `{kind}` | `{pname}` | {'yes' if param.required else 'no'} | {_esc(str(param))} |")
    for pname, param in common.items():
        lines.append(f"| any kind | `{pname}` | {'yes' if param.required else 'no'} | {_esc(str(param))} |")
    return "\n".join(lines) + "\n"


# --- the config schema ----------------------------------------------------------------------
def _resolve(node: dict, root: dict) -> dict:
    while "$ref" in node:
        ref = node["$ref"].split("/")[-1]
        merged = {**root["$defs"][ref], **{k: v for k, v in node.items() if k != "$ref"}}
        node = merged
    return node


def _type_text(node: dict) -> str:
    parts = []
    if "type" in node:
        types = node["type"] if isinstance(node["type"], list) else [node["type"]]
        parts.append(" or ".join(types))
    if "enum" in node:
        parts.append("one of " + ", ".join(f"`{v}`" for v in node["enum"]))
    if "oneOf" in node:
        parts.append(" or ".join(_type_text(o) or "?" for o in node["oneOf"]))
    for key, sym in (
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
        ("minItems", "items >="),
        ("minProperties", "entries >="),
        ("minLength", "length >="),
        ("pattern", "matches"),
    ):
        if key in node:
            value = f"`{node[key]}`" if key == "pattern" else node[key]
            parts.append(f"{sym} {value}")
    if node.get("uniqueItems"):
        parts.append("no repeats")
    return ", ".join(parts)


def config_keys(schema: dict | None = None) -> list[tuple[str, dict, bool]]:
    """Every key of the config schema: (dotted path, its resolved node, required), depth first.
    ``<label>`` stands for a name the user chooses (an experiment, an algorithm label...)."""
    from banditbench.configuration.grid import load_schema

    root = schema or load_schema()
    out: list[tuple[str, dict, bool]] = []

    def walk(node: dict, prefix: str, seen: tuple) -> None:
        node = _resolve(node, root)
        for key, child in node.get("properties", {}).items():
            path = f"{prefix}.{key}" if prefix else key
            out.append((path, _resolve(child, root), key in node.get("required", [])))
            walk(child, path, seen)
        for alt in node.get("oneOf", []) + node.get("anyOf", []):
            if isinstance(alt, dict) and "properties" in _resolve(alt, root):
                walk(alt, prefix, seen)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and prefix and prefix not in seen:
            walk(
                extra,
                f"{prefix}.<label>"
                if "propertyNames" in node or "properties" not in _resolve(extra, root)
                else f"{prefix}.<name>",
                seen + (prefix,),
            )
        items = node.get("items")
        if isinstance(items, dict) and prefix:
            walk(items, f"{prefix}[]", seen)

    walk(root, "", ())
    # the same key reached twice (a oneOf of objects) is listed once
    return list({path: (path, node, req) for path, node, req in out}.values())


def config_page() -> str:
    from banditbench.configuration.grid import load_schema

    schema = load_schema()
    lines = [
        "# Config reference",
        "",
        "Every key a config file may hold, generated from `src/banditbench/configuration/schema.yaml` (the schema every "
        "config is validated against before anything runs; the delay entry is generated from "
        "`banditbench.simulation.delays`, see [Delay models](delays.md)). `<label>` stands for a name you choose "
        "(an experiment, an algorithm or delay label); `[]` for the items of a list.",
        "",
        _rst_to_md(schema.get("description", "").strip()),
        "",
        "| key | type and constraints | description |",
        "|---|---|---|",
    ]
    for path, node, required in config_keys(schema):
        desc = " ".join(str(node.get("description", "")).split())
        shown = path.replace("<", "&lt;").replace(">", "&gt;").replace(".", ".<wbr>")  # breaks after dots only
        kind = ("**required**; " if required else "") + _type_text(node)
        lines.append(f'| <code class="key">{shown}</code> | {_esc(kind)} | {_esc(desc)} |')
    return "\n".join(lines) + "\n"


# --- the command line -----------------------------------------------------------------------
def subcommands() -> dict[str, argparse.ArgumentParser]:
    from banditbench.cli import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def cli_page() -> str:
    import banditbench.cli as cli

    parser = cli.build_parser()
    lines = [
        "# Command line",
        "",
        "`banditbench` (installed with the package; `.venv/bin/banditbench` after `make install`). "
        "Generated from the argument parser (`banditbench.cli.build_parser`): each subcommand's "
        "`--help`.",
        "",
        "Exit status: 0 on success, 2 for a configuration error, 3 for a corrupt or damaged file.",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
        "",
    ]
    for name, sub in subcommands().items():
        lines += [f"## `banditbench {name}`", "", "```text", sub.format_help().rstrip(), "```", ""]
    lines += [
        "## Examples",
        "",
        "From the module's docstring (`banditbench.cli`); the test suite runs each of "
        "them (`tests/workflow/test_docs.py`).",
        "",
        _rst_to_md(inspect.cleandoc(cli.__doc__.split("Examples", 1)[1].split("\n", 2)[2]), "bash"),
        "",
    ]
    return "\n".join(lines)


# --- everything -----------------------------------------------------------------------------
@cache
def generated_pages() -> dict[str, str]:
    """docs path -> Markdown of every generated page."""
    pages: dict[str, str] = {}
    for kind, entries in registered().items():
        pages[f"reference/{kind}/index.md"] = index_page(kind, entries)
        for name, entry in entries.items():
            pages[f"reference/{kind}/{name}.md"] = class_page(kind, name, entry)
    pages["reference/delays.md"] = delays_page()
    pages["reference/config.md"] = config_page()
    pages["reference/cli.md"] = cli_page()
    return pages


def _reference_nav() -> list:
    pages = generated_pages()
    nav: list = [
        {"Config": "reference/config.md"},
        {"Command line": "reference/cli.md"},
        {"Delay models": "reference/delays.md"},
    ]
    for kind, title in (("algorithms", "Algorithms"), ("environments", "Environments")):
        names = sorted(p for p in pages if p.startswith(f"reference/{kind}/") and not p.endswith("index.md"))
        nav.append({title: [f"reference/{kind}/index.md"] + [{p.rsplit("/", 1)[1][:-3]: p} for p in names]})
    nav.append({"Python API": "reference/api.md"})
    return nav


# --- MkDocs events --------------------------------------------------------------------------
def on_config(config, **kwargs):
    """Fill the nav's "Reference" entry with the generated pages."""
    for item in config["nav"] or []:
        if isinstance(item, dict) and "Reference" in item:
            item["Reference"] = _reference_nav()
    return config


MARKER = re.compile(r"<!-- registered: seed (00\d) -->")


def seed_table(seed: str, page: str) -> str:
    """The registered algorithms and environments whose docstring names seed ``seed``, linked."""
    rows = ["| name | kind | summary |", "|---|---|---|"]
    for kind, entries in registered().items():
        for name, entry in entries.items():
            cls = entry.load()
            if paper_of(cls)[0] == seed:
                from banditbench import registry

                target = _link(page, f"reference/{kind}/{name}.md")
                rows.append(f"| [`{name}`]({target}) | {kind[:-1]} | {_esc(_rst_to_md(registry.summary_line(cls)))} |")
    return "\n".join(rows)


def interfaces_table() -> str:
    """The runner's side of the policy contract (``banditbench.api.INTERFACES``), one row per kind."""
    from banditbench.api import INTERFACES

    rows = [
        "| feedback kind, action kind | `observe` receives | `act` is handed | `act` returns |",
        "|---|---|---|---|",
    ]
    for (feedback, action), face in INTERFACES.items():
        fields = ", ".join(face.feedback._fields)
        rows.append(
            f"| `{feedback}`, `{action}` | `{face.feedback.__name__}({fields})` | "
            f"{_esc(_rst_to_md(face.context))} | {_esc(_rst_to_md(face.action))} |"
        )
    return "\n".join(rows)


INTERFACES_MARKER = "<!-- interfaces -->"


#: where a page shows the table of parameter types (:func:`parameter_types_table`)
PARAMETER_TYPES = "<!-- parameter types -->"
#: annotations built from ``banditbench.params``' pieces, as a constructor writes them (evaluated in its namespace)
TYPE_FORMS = (
    "float",
    "int",
    "bool",
    "str",
    'Literal["shared", "disjoint"]',
    "Annotated[float, Range(gt=0, le=0.5)]",
    'Annotated[str, OneOf(("adam", "gd"))]',
    "PositiveInt | None",
    'NonNegative | Literal["theory"]',
    "Sequence[Probability]",
    "Mapping[str, Any]",
)


def type_aliases() -> dict[str, Any]:
    """The public type aliases of :mod:`banditbench.params` (``Positive``, ``Probability``...), by name."""
    import typing

    from banditbench import params

    return {
        name: value
        for name, value in vars(params).items()
        if not name.startswith("_") and typing.get_origin(value) is typing.Annotated
    }


def parameter_types_table() -> str:
    """Every type alias of :mod:`banditbench.params` and the forms built from its pieces, with what the
    config validator accepts for each (:func:`banditbench.params.describe`, the words of its messages)."""
    import typing

    from banditbench import params

    rows = ["| annotation | accepts |", "|---|---|"]
    for name, hint in type_aliases().items():
        rows.append(f"| `{name}` | {_esc(params.describe(hint))} |")
    namespace = {**vars(typing), **vars(params)}
    for form in TYPE_FORMS:
        hint = eval(form, namespace)  # noqa: S307 - the forms above
        rows.append(f"| {_esc(f'`{form}`')} | {_esc(params.describe(hint))} |")
    return "\n".join(rows)


#: where a page shows a committed claims run (:func:`claims_run`): ``<!-- claims run: default -->``
CLAIMS_RUN = re.compile(r"<!-- claims run: ([\w.-]+) -->")
#: where a page shows the committed runs' summary across the papers (:func:`claims_summary`)
CLAIMS_SUMMARY = "<!-- claims summary -->"
#: the committed claims runs: ``<name>.csv`` (``banditbench claims --csv``), ``<name>.json`` (how it was made) and
#: ``<name>.differences.csv`` (the per-seed differences, :mod:`banditbench.analysis.calibrate`)
CLAIMS_RUNS = Path(__file__).resolve().parent / "runs"
#: the checkout the configs of the runs' commands are read from (their claims_files are relative to it)
ROOT = Path(__file__).resolve().parent.parent


@cache
def committed_runs() -> dict:
    """Every committed claims run: name -> (its JSON, its CSV) (:func:`banditbench.analysis.claim_pages.read_runs`),
    each claim's reading and restatements as its config states them now
    (:func:`banditbench.analysis.claim_pages.with_config_text`)."""
    from banditbench.analysis.claim_pages import read_runs, with_config_text

    return {
        name: (meta, with_config_text(results, _config_claims(meta["command"])))
        for name, (meta, results) in read_runs(CLAIMS_RUNS).items()
    }


@cache
def paper_families() -> dict:
    """Every committed run's rows, one per comparison, with the family-wise verdict per paper across the runs
    (:func:`banditbench.analysis.claim_pages.family_wise_per_paper`)."""
    from banditbench.analysis.claim_pages import family_wise_per_paper

    return family_wise_per_paper({name: results for name, (_, results) in committed_runs().items()})


def recorded_before_default(name: str) -> bool:
    """A run recorded before the distribution-free default: it keeps no per-seed differences."""
    return not (CLAIMS_RUNS / f"{name}.differences.csv").is_file()


@cache
def _config_claims(command: str) -> dict:
    """The claims a run's config states now (:func:`banditbench.analysis.claim_pages.config_claims`), read from the
    checkout this file is in."""
    import contextlib

    from banditbench.analysis.claim_pages import config_claims

    with contextlib.chdir(ROOT):
        return config_claims(command)


def _ids(ids: list[str]) -> str:
    import html

    return ", ".join(f"<code>{html.escape(c)}</code>" for c in ids)


def run_changes(name: str) -> str:
    """What changed in a run's config since it was recorded (empty when nothing did), as a block that opens on the
    claim ids: the rows folded into another row's comparison, the claims dropped, the claims added or made testable
    (:func:`banditbench.analysis.claim_pages.changes_since`)."""
    from banditbench.analysis.claim_pages import changes_since

    meta, results = committed_runs()[name]
    changes = changes_since(results, _config_claims(meta["command"]))
    words = {
        "folded": "rows restate another row's comparison: folded into that claim, counted once",
        "dropped": "claims are no longer in the config (folded into another claim's restatements, or replaced)",
        "added": "claims of the config are not in this run (added, or made testable, since)",
    }
    present = [key for key in words if changes[key]]
    if not present:
        return ""
    summary = "; ".join(f"{len(changes[key])} {words[key]}" for key in present)
    items = "".join(f"<li>{words[key].split(':')[0].split(' (')[0]}: {_ids(changes[key])}</li>" for key in present)
    return (
        f'<details class="run-changes"><summary>Since it was recorded: {summary}.</summary><ul>{items}</ul></details>'
    )


def claims_run(name: str, page: str = "claims.md") -> str:
    """A committed claims run as a page shows it: how it was made (command, commit, date, machine, seeds, CPU), what
    changed since, the counts of its distinct comparisons and of their family-wise verdicts per paper across the
    committed runs, then the narrow table (:func:`banditbench.analysis.claim_pages.claims_table_html`): each claim's
    sentence, reading, restatements, method and family one click away."""
    from banditbench.analysis.claim_pages import FAMILY, claims_table_html
    from banditbench.analysis.claims import counts_line

    meta, results = committed_runs()[name]
    rows = paper_families()[name]
    seeds = ", ".join(f"{exp} {n}" for exp, n in meta["seeds"].items())
    simulated = meta.get("simulated")
    if simulated:  # judged again on the results of an earlier recording (benchmarks/claims_run.py --rejudge)
        head = (
            f"Simulated at commit `{simulated['commit'][:10]}` on {simulated['date']} ({simulated['machine']}; "
            f"{simulated['cpu_s']:.0f} s of CPU in the Snakemake runs) and judged again by `{meta['command']}` at "
            f"commit `{meta['commit'][:10]}` on {meta['date']} (seeds per experiment: {seeds}; the simulations "
            f"reused). From the committed `docs/runs/{name}.csv`."
        )
    else:
        head = (
            f"Measured by `{meta['command']}` at commit `{meta['commit'][:10]}` on {meta['date']} ({meta['machine']}; "
            f"seeds per experiment: {seeds}; {meta['cpu_s']:.0f} s of CPU in the Snakemake runs). From the committed "
            f"`docs/runs/{name}.csv`."
        )
    if recorded_before_default(name):
        head += (
            f" Recorded before the distribution-free default ([the verdict]({_link(page, 'claims.md')}#the-verdict)): "
            "its rows use "
            "the Gaussian t-CS (marked t-CS), each verdict is the one of the look that decided it, and it keeps no "
            "per-seed differences; it is to be re-recorded."
        )
    changes = run_changes(name)
    judged = rows[rows[FAMILY] != ""]
    several = rows["paper"].nunique() > 1
    family = (
        "Family-wise per paper within this run (it holds several papers' small-scale claims)"
        if several
        else f"Family-wise per paper across its committed runs ({judged['family_runs'].iloc[0]})"
        if len(judged)
        else "Family-wise per paper"
    )
    lines = [head, "", changes, "", counts_line(results) + " (distinct comparisons).", ""]
    if len(judged):
        lines += [counts_line(judged, FAMILY, family) + " (Holm on the anytime p-values).", ""]
    lines += [
        "Open a claim for its sentence, how it is read, the sentences that restate it, the interval's method and "
        f"range, its anytime p-value and its family ([how to cite a verdict]({_link(page, 'claims.md')}"
        "#how-to-cite-a-verdict)).",
        "",
        claims_table_html(rows, FAMILY),
    ]
    return "\n".join(line for line in lines if line is not None) + "\n"


def claims_summary() -> str:
    """The committed runs across the papers (:func:`banditbench.analysis.claim_pages.summary_markdown`), the pages
    linked from ``claims-summary.md``."""
    from banditbench.analysis.claim_pages import summary_markdown

    papers = {n: (title, target) for n, (title, target) in SEED_PAPERS.items()}
    before = {name for name in committed_runs() if recorded_before_default(name)}
    return summary_markdown(committed_runs(), papers, before)


def on_page_markdown(markdown, page, config, files, **kwargs):
    """``<!-- registered: seed 000 -->`` in a page: the table of that seed's registered classes;
    ``<!-- interfaces -->``: the table of what the runner hands a policy of each kind;
    ``<!-- parameter types -->``: the table of parameter annotations (:func:`parameter_types_table`);
    ``<!-- claims run: NAME -->``: a committed claims run (:func:`claims_run`); ``<!-- claims summary -->``: the
    committed runs across the papers (:func:`claims_summary`, for a page at the top of docs/)."""
    markdown = MARKER.sub(lambda m: seed_table(m.group(1), page.file.src_uri), markdown)
    markdown = CLAIMS_RUN.sub(lambda m: claims_run(m.group(1), page.file.src_uri), markdown)
    if CLAIMS_SUMMARY in markdown:
        markdown = markdown.replace(CLAIMS_SUMMARY, claims_summary())
    markdown = markdown.replace(INTERFACES_MARKER, interfaces_table())
    return markdown.replace(PARAMETER_TYPES, parameter_types_table()) if PARAMETER_TYPES in markdown else markdown


#: the maths pymdownx.arithmatex (``generic: true``) leaves in a page: its TeX, HTML-escaped, in
#: ``<span class="arithmatex">\(...\)</span>`` (inline) or ``<div class="arithmatex">\[...\]</div>`` (display)
ARITHMATEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">(?:\\\((?P<inline>.*?)\\\)|\\\[(?P<display>.*?)\\\])</(?P=tag)>', re.S
)


#: TeX's spaces in an operator's name, as the Unicode spaces latex2mathml keeps inside one operator (it spells
#: ``\operatorname*{arg\,max}`` out as ``* a r g m a x``)
NAME_SPACES = {",": "\u2009", ":": "\u205f", ";": "\u2004", " ": "\u00a0"}


def operator_names(tex: str) -> str:
    """``\\operatorname{...}`` and ``\\operatorname*{...}`` with the spaces of their names as Unicode."""
    return re.sub(
        r"\\operatorname\*?\{[^{}]*\}",
        lambda m: re.sub(r"\\([,:; ])", lambda space: NAME_SPACES[space.group(1)], m.group(0)),
        tex,
    )


def mathml(tex: str, display: bool = False) -> str:
    """TeX as MathML (latex2mathml), the TeX kept as its annotation (not shown; kept out of the search index,
    which indexes the formula's symbols). Raises ``ValueError`` for TeX latex2mathml cannot read, a command it
    does not know (which it would otherwise show as text) or an operator it leaves empty (a name it spells out)."""
    import html

    from latex2mathml.converter import convert

    try:
        out = convert(operator_names(tex), display="block" if display else "inline")
    except Exception as err:  # latex2mathml raises its own exceptions (and IndexError, KeyError) on bad TeX
        raise ValueError(f"{tex!r}: {type(err).__name__}: {err}") from err
    unknown = re.findall(r">(\\[^<]*)<", out)
    if unknown:
        raise ValueError(f"{tex!r}: unknown to latex2mathml: {', '.join(dict.fromkeys(unknown))}")
    if "<mo />" in out:
        raise ValueError(f"{tex!r}: latex2mathml leaves an operator empty")
    head, body = re.match(r"(<math\b[^>]*>)(.*)</math>$", out, re.S).groups()
    head = head.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "")  # implied in HTML
    annotation = (
        f'<annotation encoding="application/x-tex" data-search-exclude>{html.escape(tex, quote=False)}</annotation>'
    )
    return f"{head}<semantics><mrow>{body}</mrow>{annotation}</semantics></math>"


def render_maths(page_html: str, where: str = "") -> str:
    """Every arithmatex span / div of a rendered page with its maths as MathML (:func:`mathml`); TeX that
    does not convert is a warning (so ``mkdocs build --strict`` fails) and stays as text."""
    import html
    import logging

    def convert(m: re.Match) -> str:
        display = m.group("display") is not None
        tex = html.unescape(m.group("display") if display else m.group("inline"))
        try:
            return f'<{m.group("tag")} class="arithmatex">{mathml(tex, display)}</{m.group("tag")}>'
        except ValueError as err:
            logging.getLogger("mkdocs.hooks.maths").warning(f"{where}: an equation latex2mathml cannot render: {err}")
            return m.group(0)

    return ARITHMATEX.sub(convert, page_html)


def on_page_content(html, page, config, files, **kwargs):
    """The reST roles mkdocstrings leaves in the rendered docstrings (``:class:`X``` shows as
    ``:class:X``): dropped, the name kept as code. The page's maths rendered as MathML (:func:`render_maths`)."""
    html = re.sub(r":(?:class|func|mod|meth|data|attr|exc):(?=<code>)", "", html)
    return render_maths(html, page.file.src_uri)


def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    for path, content in generated_pages().items():
        files.append(File.generated(config, path, content=content))
    return files
