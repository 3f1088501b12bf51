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
"""

from __future__ import annotations

import ast
import importlib
import inspect
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Mapping

PACKAGE_DIR = Path(__file__).resolve().parent
PACKAGE = PACKAGE_DIR.name

#: modules every simulation imports (the loop, delays, feedback, the interfaces)
CORE_MODULES = ("banditbench.runner",)


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # "environment" or "policy"
    module: str
    cls_name: str
    path: Path

    def load(self) -> type:
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
def _imports(path: Path) -> frozenset[str]:
    """Modules of this package imported by the file at ``path`` (anywhere in it, lazy imports included)."""
    me = _module_name(path)
    pkg_parts = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(pkg_parts[: len(pkg_parts) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            if mod.split(".")[0] != PACKAGE:
                continue
            found.add(mod)
            # ``from banditbench.policies import linalg`` imports a submodule
            found.update(f"{mod}.{a.name}" for a in node.names if _module_path(f"{mod}.{a.name}"))
    return frozenset(found)


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


def _discover(kind: str, folder: str) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for path in sorted((PACKAGE_DIR / folder).rglob("*.py")):
        for node in _parse(path).body:
            if not isinstance(node, ast.ClassDef):
                continue
            for dec in node.decorator_list:
                if (isinstance(dec, ast.Call) and getattr(dec.func, "id", getattr(dec.func, "attr", None)) == "register"
                        and dec.args and isinstance(dec.args[0], ast.Constant)):
                    name = dec.args[0].value
                    if name in out:
                        raise RuntimeError(f"{kind} name {name!r} registered twice: {out[name].path} and {path}")
                    out[name] = Entry(name, kind, _module_name(path), node.name, path)
    return out


@cache
def environments() -> dict[str, Entry]:
    return _discover("environment", "envs")


@cache
def policies() -> dict[str, Entry]:
    return _discover("policy", "policies")


def get(kind: str, name: str, where: str | None = None) -> Entry:
    """The registered ``kind`` (``environment`` or ``policy``) called ``name``.

    ``where`` is the key path of the name in the config (default: its place in a job cell).
    """
    table = environments() if kind == "environment" else policies()
    if name not in table:
        from .errors import ConfigError

        where = where or f"{kind}.name"
        raise ConfigError(f"{where}: unknown {kind} {name!r}; registered: {sorted(table)}")
    return table[name]


def job_sources(environment: str, policy: str) -> list[Path]:
    """Source files a simulation of ``policy`` on ``environment`` depends on."""
    env, pol = get("environment", environment), get("policy", policy)
    return source_closure([*CORE_MODULES, env.module, pol.module])


def keyword_parameters(cls: type, with_owner: bool = False) -> dict[str, Any]:
    """Keyword-only constructor parameters of ``cls``, those of its family included.

    A family declares its shared parameters once, in the base class's constructor; a
    variant's constructor declares only its own and forwards the rest as ``**params``
    to ``super().__init__``.  So while a constructor takes ``**params`` the next
    constructor up the MRO contributes its keyword-only parameters too (the most
    derived declaration of a name wins).  ``with_owner``: map each name to
    ``(parameter, constructor that declares it)`` (whose module resolves its annotation).
    """
    out: dict[str, Any] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters.values()
        for p in params:
            if p.kind is inspect.Parameter.KEYWORD_ONLY:
                out.setdefault(p.name, (p, init) if with_owner else p)
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            break
    return out


def parameters(cls: type) -> dict[str, Any]:
    """Configurable parameters of a class (keyword-only constructor arguments, inherited
    through ``**params`` forwarding) and their defaults (``None`` when required)."""
    return {name: (None if p.default is inspect.Parameter.empty else p.default)
            for name, p in keyword_parameters(cls).items()}


def values(cls: type, params: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter's value: the given ``params``, the class's defaults for the others."""
    return {**parameters(cls), **params}


def required_parameters(cls: type) -> set[str]:
    return {name for name, p in keyword_parameters(cls).items() if p.default is inspect.Parameter.empty}


def summary_line(cls: type) -> str:
    doc = inspect.getdoc(cls) or ""
    return doc.splitlines()[0] if doc else ""
