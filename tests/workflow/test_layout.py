"""The docs' "Extending → Layout" block matches the package tree: every source file is named there,
under its folder, and every file it names exists; and no function of the sources is longer than
:data:`MAX_FUNCTION_LINES`."""

from __future__ import annotations

import ast
import re

from conftest import ROOT

PACKAGE = ROOT / "src" / "banditbench"
#: the most lines a function under src/ may take, from its ``def`` line to its last line, docstring included
#: (tables of data are module constants, not functions; ruff's C901 and PLR0915 bound branches and statements)
MAX_FUNCTION_LINES = 80


def _package_block() -> dict[str, str]:
    """The Layout block's package part: ``""`` -> the top-level lines, ``folder`` -> that folder's paragraph."""
    text = (ROOT / "docs" / "extending.md").read_text()
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    lines = block.split("src/banditbench/", 1)[1].splitlines()[1:]
    parts: dict[str, str] = {"": ""}
    current = ""
    for line in lines:
        if not line.startswith(" "):
            break  # tests/, benchmarks/, ...: outside the package
        entry = re.match(r"^  (\S+)", line)
        if entry:
            name = entry.group(1)
            current = name.rstrip("/") if name.endswith("/") else ""
            parts.setdefault(current, "")
        parts[current] += line + "\n"
    return parts


def test_every_source_file_is_named_in_the_layout_under_its_folder():
    parts = _package_block()
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if path.name == "__init__.py" or "__pycache__" in rel.parts:
            continue
        folder = rel.parts[0] if len(rel.parts) > 1 else ""
        if not re.search(rf"(?<![\w/]){re.escape(path.name)}\b", parts.get(folder, "")):
            missing.append(rel.as_posix())
    assert missing == []


def test_every_file_the_layout_names_exists():
    parts = _package_block()
    gone = []
    for folder, text in parts.items():
        for name in set(re.findall(r"(?<![\w/.])(\w+\.(?:py|yaml))\b", text)):
            where = PACKAGE / folder if folder else PACKAGE
            if not any(where.rglob(name)) if folder else not (PACKAGE / name).is_file():
                gone.append(f"{folder}/{name}" if folder else name)
    assert gone == []


def test_the_tests_mirror_the_package():
    """Every folder of tests/ but workflow/ (the end-to-end and repository tests) is a folder of the package,
    and test file names are unique (pytest imports them by name)."""
    tests = ROOT / "tests"
    folders = {p.relative_to(tests) for p in tests.rglob("*") if p.is_dir() and p.name != "__pycache__"}
    outside = [str(f) for f in folders if f.parts[0] != "workflow" and not (PACKAGE / f).is_dir()]
    assert outside == []
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)) and len(names) > 40


def _functions(node: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function and method in ``node``, nested ones too."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + child.name
            if not isinstance(child, ast.ClassDef):
                yield name, child
            yield from _functions(child, name + ".")
        else:
            yield from _functions(child, prefix)


def test_no_function_under_src_is_longer_than_the_limit():
    too_long = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        for name, node in _functions(ast.parse(path.read_text(), str(path))):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                too_long.append(f"{path.relative_to(ROOT)}:{node.lineno} {name} ({lines} lines)")
    assert too_long == [], f"split these functions (at most {MAX_FUNCTION_LINES} lines each):\n" + "\n".join(too_long)
