"""Maps config names to environment / policy classes and to the source files a job depends on.

Discovery reads the source of every module under ``banditbench/envs/`` and
``banditbench/policies/`` (subpackages included, e.g. ``policies/neural/``)
with :mod:`ast` and collects classes decorated
with ``@register("name")``: adding an algorithm is adding one module (or one
class), and nothing is imported until a class is actually used, so a job that
runs a numpy policy never imports torch.

The same parse gives each module's imports inside the package; their transitive
closure is the set of source files a simulation job depends on.  Snakemake uses
it as the job's input, so editing one algorithm's module re-runs only the jobs
that use it.  Each module is parsed and its imports read once per process, and
each (environment, policy) closure is computed once: planning a grid costs
the number of distinct modules and algorithms, not the number of jobs.

Classes from outside the package (:mod:`banditbench.plugins`: the config's ``plugins:`` and installed
entry points) join the same tables, imported rather than read; a plugin's source files (its module,
the modules of its own top-level package it imports, and the package modules they import) are its
jobs' inputs in the same way.  A plugin may not take a name that another class already has; the same
class reached twice (an installed package's entry point and the config's ``plugins:``, or twice in
``plugins:``) is registered once.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import plugins as plugin_modules
from .api import Environment, Policy
from .errors import ConfigError, did_you_mean
from .params import keyword_parameters

PACKAGE_DIR = Path(__file__).resolve().parent
PACKAGE = PACKAGE_DIR.name

#: modules every simulation imports (the loop, delays, feedback, the interfaces)
CORE_MODULES = ("banditbench.simulation.runner",)
#: and files every simulate job runs without their imports: the job, which chooses the engine that plays its cells
#: (:func:`banditbench.simulation.job.engine`) and whose imports only put back, describe and save the results
CORE_FILES = ("simulation/job.py",)


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # "environment" or "policy"
    module: str
    cls_name: str
    path: Path
    #: where it comes from: ``built-in``, ``plugin <spec>`` or ``entry point <group> <name> of <dist>``
    origin: str = "built-in"
    #: the ``plugins:`` spec that provides it (cells carry it, so that a job process imports it too)
    plugin: str | None = None

    def same_class(self, other: Entry) -> bool:
        """Whether ``other`` is this class reached another way (the same class in the same source file)."""
        return (self.kind, self.cls_name, self.path) == (other.kind, other.cls_name, other.path)

    def load(self) -> type:
        if self.plugin is not None:
            return getattr(plugin_modules.import_spec(self.plugin), self.cls_name)
        return getattr(importlib.import_module(self.module), self.cls_name)


@cache
def _module_path(module: str) -> Path | None:
    rel = module.split(".")[1:]
    base = PACKAGE_DIR.joinpath(*rel)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


@cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _imported(path: Path, me: str) -> tuple[frozenset[str], frozenset[str]]:
    """What the file at ``path`` (module ``me``) imports, anywhere in it (lazy imports included), as
    absolute names: the modules its statements name, and ``x.y`` of each ``from x import y`` (a module
    only where such a submodule exists)."""
    pkg_parts = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    named: set[str] = set()
    candidates: set[str] = set()
    for node in _import_statements(path):
        if isinstance(node, ast.Import):
            named.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(pkg_parts[: len(pkg_parts) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            named.add(mod)
            candidates.update(f"{mod}.{a.name}" for a in node.names)
    return frozenset(named), frozenset(candidates)


#: a triple-quoted string literal
_TRIPLE_QUOTED = re.compile(r"(\"\"\"|\'\'\').*?\1", re.DOTALL)
#: a line that starts an import statement (after its indentation)
_IMPORT_LINE = re.compile(r"^[ \t]*(?:import[ \t]|from[ \t]+[\w.]+[ \t]+import\b)", re.MULTILINE)


def _import_statements(path: Path) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of the file at ``path``, anywhere in it: each line that starts one (with its
    parenthesised or backslash continuation) parsed alone, not the whole file (a job process finds its sources'
    closure so: parsing every file cost about 0.4 s of CPU per job), triple-quoted strings left out.  A line of
    another string that reads as an import would count: ``tests/test_registry.py`` checks every file of the package
    against the whole file's syntax tree (:func:`_import_statements_parsed`)."""
    text = _TRIPLE_QUOTED.sub('""', path.read_text())  # docstrings and code templates (scaffold.py) are not code
    found: list[ast.Import | ast.ImportFrom] = []
    for match in _IMPORT_LINE.finditer(text):
        end = text.find("\n", match.start())
        end = len(text) if end < 0 else end
        line = text[match.start() : end]
        if "(" in line.split("#")[0] and ")" not in line.split("#")[0]:  # a parenthesised name list
            close = text.find(")", end)
            end = len(text) if close < 0 else close + 1
        while text[match.start() : end].rstrip().endswith("\\"):  # backslash continuations
            nxt = text.find("\n", end + 1)
            end = len(text) if nxt < 0 else nxt
        try:
            tree = ast.parse(text[match.start() : end].strip())
        except SyntaxError:  # prose that starts like an import
            continue
        found += [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return found


def _import_statements_parsed(path: Path) -> list[ast.Import | ast.ImportFrom]:
    """:func:`_import_statements` from the whole file's syntax tree (what it must agree with)."""
    return [node for node in ast.walk(_parse(path)) if isinstance(node, (ast.Import, ast.ImportFrom))]


@cache
def _imports(path: Path) -> frozenset[str]:
    """Modules of this package imported by the file at ``path`` (anywhere in it, lazy imports included)."""
    named, candidates = _imported(path, _module_name(path))
    return frozenset(
        {m for m in named if m.split(".")[0] == PACKAGE}
        | {m for m in candidates if m.split(".")[0] == PACKAGE and _module_path(m)}
    )


def source_closure(modules: tuple[str, ...] | list[str]) -> list[Path]:
    """Every package source file the given modules import, transitively (sorted)."""
    return list(_closure(tuple(sorted(modules))))


@cache
def _closure(modules: tuple[str, ...]) -> tuple[Path, ...]:
    seen: set[Path] = set()
    todo = list(modules)
    while todo:
        mod = todo.pop()
        path = _module_path(mod)
        if path is None or path in seen:
            continue
        seen.add(path)
        todo.extend(_imports(path))
        # importing a.b.c runs a/__init__.py and a/b/__init__.py first
        parts = mod.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
    return tuple(sorted(seen))


#: a top-level ``@register("name")`` (or ``@module.register(...)``) and, after any other decorators, its class
_REGISTERED = re.compile(
    r"^@(?:\w+\.)*register\(\s*(?P<q>[\"'])(?P<name>.+?)(?P=q)[^\n]*\n(?:@[^\n]*\n)*class[ \t]+(?P<cls>\w+)",
    re.MULTILINE,
)


def _registered(path: Path) -> list[tuple[str, str]]:
    """``(name, class)`` of each class the file at ``path`` registers at its top level, from its text (a job
    process builds the tables; parsing every file under ``policies/`` and ``envs/`` cost about 0.15 s of CPU),
    triple-quoted strings left out; ``tests/test_registry.py`` checks every file of the package against its
    syntax tree (:func:`_registered_parsed`)."""
    text = _TRIPLE_QUOTED.sub('""', path.read_text())
    return [(m["name"], m["cls"]) for m in _REGISTERED.finditer(text)]


def _registered_parsed(path: Path) -> list[tuple[str, str]]:
    """:func:`_registered` from the file's syntax tree: each top-level class's decorators ``register(<str>, ...)``."""
    found = []
    for node in _parse(path).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for dec in node.decorator_list:
            if (
                isinstance(dec, ast.Call)
                and getattr(dec.func, "id", getattr(dec.func, "attr", None)) == "register"
                and dec.args
                and isinstance(dec.args[0], ast.Constant)
            ):
                found.append((dec.args[0].value, node.name))
    return found


def _discover(kind: str, folder: str) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for path in sorted((PACKAGE_DIR / folder).rglob("*.py")):
        for name, cls_name in _registered(path):
            if name in out:
                raise RuntimeError(f"{kind} name {name!r} registered twice: {out[name].path} and {path}")
            out[name] = Entry(name, kind, _module_name(path), cls_name, path)
    return out


@cache
def _built_in(kind: str) -> dict[str, Entry]:
    return _discover(kind, "envs" if kind == "environment" else "policies")


#: the ``plugins:`` specs in use (:func:`use_plugins`), normalised
_active: tuple[str, ...] = ()


def use_plugins(specs: Iterable[str], where: str = "plugins", add: bool = False) -> list[str]:
    """Make the plugin modules ``specs`` (the config's ``plugins:``) part of the registry, replacing those
    of an earlier call unless ``add``; each is imported now, so a bad one stops here, naming
    ``where[i]``.  Returns the specs normalised (:func:`banditbench.plugins.normalise`)."""
    global _active
    normal = [plugin_modules.normalise(spec, f"{where}[{i}]") for i, spec in enumerate(specs)]
    for i, spec in enumerate(normal):
        _plugin_entries(spec, f"{where}[{i}]")
    _active = tuple(dict.fromkeys([*_active, *normal] if add else normal))
    _tables("environment", _active), _tables("policy", _active)  # a name taken twice stops here too
    return normal


def _entry_for(cls: type, name: str, origin: str, plugin: str | None, where: str) -> Entry:
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: {cls.__name__} is registered under {name!r}, not a name")
    kind = "policy" if issubclass(cls, Policy) else "environment" if issubclass(cls, Environment) else None
    if kind is None:
        raise ConfigError(
            f"{where}: {cls.__name__} (registered as {name!r}) is neither a banditbench.api.Policy nor an Environment"
        )
    path = Path(inspect.getfile(cls)).resolve()
    return Entry(name, kind, cls.__module__, cls.__qualname__, path, origin, plugin)


@cache
def _plugin_entries(spec: str, where: str = "plugins") -> tuple[Entry, ...]:
    module = plugin_modules.import_spec(spec, where)
    entries = tuple(
        _entry_for(cls, cls.registry_name, f"plugin {spec}", spec, where)
        for cls in plugin_modules.registered_classes(module)
    )
    if not entries:
        raise ConfigError(
            f"{where}: {spec} registers no policy or environment (decorate a class with "
            f'@banditbench.api.register("name"))'
        )
    return entries


@cache
def _entry_point_entries(kind: str) -> tuple[Entry, ...]:
    out = []
    for ep in plugin_modules.entry_points(kind):
        label = plugin_modules.entry_point_label(ep)
        found = [_entry_for(cls, name, label, None, label) for name, cls in plugin_modules.entry_point_classes(ep)]
        wrong = [e for e in found if e.kind != kind]
        if not found or wrong:
            raise ConfigError(
                f"{label}: {ep.value!r} declares no {kind}"
                if not found
                else f"{label}: {wrong[0].cls_name} is a {wrong[0].kind}, in the group of {kind} plug-ins"
            )
        out += found
    return tuple(out)


@cache
def _tables(kind: str, active: tuple[str, ...]) -> dict[str, Entry]:
    table = dict(_built_in(kind))
    extra = [
        *_entry_point_entries(kind),
        *(e for i, spec in enumerate(active) for e in _plugin_entries(spec) if e.kind == kind),
    ]
    for entry in extra:
        if entry.name in table:
            other = table[entry.name]
            if entry.same_class(other):
                continue  # one class reached twice (an entry point and plugins:, or twice in plugins:)
            taken = (
                f"the built-in {kind} {entry.name!r} ({other.module})"
                if other.origin == "built-in"
                else f"{kind} {entry.name!r} of {other.origin}"
            )
            raise ConfigError(
                f"{entry.origin}: {kind} {entry.name!r} ({entry.cls_name}) would shadow {taken}; "
                f"register it under another name"
            )
        table[entry.name] = entry
    return table


def environments() -> dict[str, Entry]:
    """Every registered environment: built-in, from entry points, from the plugins in use."""
    return _tables("environment", _active)


def policies() -> dict[str, Entry]:
    """Every registered policy: built-in, from entry points, from the plugins in use."""
    return _tables("policy", _active)


def get(kind: str, name: str, where: str | None = None) -> Entry:
    """The registered ``kind`` (``environment`` or ``policy``) called ``name``.

    ``where`` is the key path of the name in the config (default: its place in a job cell).
    """
    table = environments() if kind == "environment" else policies()
    if name not in table:
        where = where or f"{kind}.name"
        hint = did_you_mean(name, table)
        every = f"`banditbench list {'policies' if kind == 'policy' else 'environments'}` lists all {len(table)}"
        raise ConfigError(
            f"{where}: unknown {kind} {name!r}{hint}; {every if hint else f'registered: {sorted(table)}'}"
        )
    return table[name]


def cell_plugins(environment: str, policy: str) -> list[str]:
    """The ``plugins:`` specs a cell of ``policy`` on ``environment`` needs (what its job imports)."""
    return sorted({e.plugin for e in (get("environment", environment), get("policy", policy)) if e.plugin})


def job_sources(environment: str, policy: str) -> list[Path]:
    """Source files a simulation of ``policy`` on ``environment`` depends on."""
    entries = (get("environment", environment), get("policy", policy))
    modules = [*CORE_MODULES, *(e.module for e in entries if e.origin == "built-in")]
    outside = [p for e in entries if e.origin != "built-in" for p in _plugin_closure(e.path, e.module)]
    return sorted({*source_closure(modules), *(PACKAGE_DIR / f for f in CORE_FILES), *outside})


@cache
def _plugin_closure(path: Path, module: str) -> tuple[Path, ...]:
    """A plugin module's file, the files of its own top-level package it imports (transitively), and the
    package modules any of them import (a plugin file's own imports: just the package's)."""
    own = None if module.startswith(plugin_modules.FILE_MODULE_PREFIX) else module.split(".")[0]
    seen: set[Path] = set()
    package: set[str] = set()
    todo = [(path, module)]
    while todo:
        file, name = todo.pop()
        if file in seen:
            continue
        seen.add(file)
        named, candidates = _imported(file, name)
        package.update(m for m in named if m.split(".")[0] == PACKAGE)
        package.update(m for m in candidates if m.split(".")[0] == PACKAGE and _module_path(m))
        parts = name.split(".")
        parents = [".".join(parts[:i]) for i in range(1, len(parts))]  # importing a.b runs a/__init__.py
        for mod in [*named, *candidates, *parents]:
            if own and mod.split(".")[0] == own and (found := _file_of(mod)) is not None:
                todo.append((found, mod))
    return tuple(sorted(seen | set(source_closure(sorted(package)))))


def _file_of(module: str) -> Path | None:
    """The source file of an importable module outside the package (None: not a module, or no source)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec else None
    return Path(origin).resolve() if origin and origin.endswith(".py") else None


def parameters(cls: type) -> dict[str, Any]:
    """Configurable parameters of a class (keyword-only constructor arguments, inherited
    through ``**params`` forwarding) and their defaults (``None`` when required)."""
    return {
        name: (None if p.default is inspect.Parameter.empty else p.default)
        for name, p in keyword_parameters(cls).items()
    }


def values(cls: type, params: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter's value: the given ``params``, the class's defaults for the others."""
    return {**parameters(cls), **params}


def required_parameters(cls: type) -> set[str]:
    return {name for name, p in keyword_parameters(cls).items() if p.default is inspect.Parameter.empty}


def summary_line(cls: type) -> str:
    doc = inspect.getdoc(cls) or ""
    return doc.splitlines()[0] if doc else ""
