"""Algorithms and environments from outside the package: plugin modules and entry points.

Two ways in (docs/extending.md, "Your algorithm in your own folder"):

* the config key ``plugins:``, a list of importable module names (``mylab.bandits``) or paths to
  ``.py`` files (relative to the working directory, or absolute; ``~`` expanded);
* an installed distribution's entry points in the groups ``banditbench.policies`` and
  ``banditbench.environments``: ``name = "module"`` (every ``@register`` class of the group's kind in
  the module) or ``name = "module:Class"`` (that class, under its ``@register`` name, else ``name``).

A plugin is imported when it is named (a ``.py`` file under a module name of its own, so that two
files with one stem do not collide); its ``@register`` classes then join the registry
(:mod:`banditbench.registry`), which refuses a name that a built-in class or another plugin
already has.  Every failure is a :class:`~banditbench.errors.ConfigError` of one line naming the
config key or the entry point.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from .errors import ConfigError

#: the entry-point group of each kind of registered class
GROUPS = {"policy": "banditbench.policies", "environment": "banditbench.environments"}
#: module names of plugin files start with this (``banditbench_plugin_<stem>_<digest of the path>``)
FILE_MODULE_PREFIX = "banditbench_plugin_"


def is_path(spec: str) -> bool:
    """Whether a ``plugins:`` entry names a file (it ends in ``.py``, holds a path separator, or is one)."""
    return spec.endswith(".py") or "/" in spec or os.sep in spec or Path(spec).expanduser().is_file()


def normalise(spec: str, where: str) -> str:
    """The spec as cells carry it: a file as its path relative to the working directory when inside
    it (so moving the project re-runs nothing), else absolute; a module name as it is."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"{where}: a plugin is a module name or a path to a .py file, got {spec!r}")
    if not is_path(spec):
        if not all(part.isidentifier() for part in spec.split(".")):
            raise ConfigError(f"{where}: {spec!r} is neither a module name nor a path to a .py file")
        return spec
    path = Path(spec).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"{where}: no such file {spec!r} (relative paths start at the working directory {Path.cwd()})"
        )
    if path.suffix != ".py":
        raise ConfigError(f"{where}: {spec!r} is not a Python file (.py)")
    path = path.resolve()
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def file_module_name(path: Path) -> str:
    """The module name a plugin file is imported under."""
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:10]
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"{FILE_MODULE_PREFIX}{stem}_{digest}"


def loaded_from(path: Path) -> ModuleType | None:
    """The module already imported from the file at ``path`` (resolved), under whatever name, or None."""
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and os.path.basename(file) == path.name and Path(file).resolve() == path:
            return module
    return None


def _import_module(spec: str) -> ModuleType:
    """``importlib.import_module(spec)``, except that a module whose file is already imported (as a plugin
    file, or under another name) is that module: one file is one module, its classes one set of classes."""
    if spec not in sys.modules:
        try:
            found = importlib.util.find_spec(spec)
        except (ImportError, ValueError):
            found = None
        same = loaded_from(Path(found.origin).resolve()) if found and found.has_location and found.origin else None
        if same is not None:
            sys.modules[spec] = same
            return same
    return importlib.import_module(spec)


def import_spec(spec: str, where: str = "plugins") -> ModuleType:
    """Import a normalised plugin spec (:func:`normalise`), once per process (a file under
    :func:`file_module_name`); a file already imported under a module name (an installed package's entry
    point) is not imported again."""
    if not is_path(spec):
        try:
            return _import_module(spec)
        except ModuleNotFoundError as err:
            if err.name and spec.startswith(err.name):
                raise ConfigError(
                    f"{where}: no module named {spec!r} is importable (install its package, or "
                    f"give the path to its .py file)"
                ) from None
            raise ConfigError(f"{where}: importing {spec!r} failed: {type(err).__name__}: {err}") from None
        except Exception as err:  # the user's module raised: one line, not a traceback
            raise ConfigError(f"{where}: importing {spec!r} failed: {type(err).__name__}: {err}") from None
    path = Path(spec).expanduser()
    if not path.is_file():
        raise ConfigError(f"{where}: no such file {spec!r}")
    name = file_module_name(path)
    if name in sys.modules:
        return sys.modules[name]
    same = loaded_from(path.resolve())
    if same is not None:
        sys.modules[name] = same
        return same
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module  # before running it, as an import does (dataclasses need it)
    try:
        module_spec.loader.exec_module(module)
    except Exception as err:
        del sys.modules[name]
        raise ConfigError(f"{where}: importing {spec} failed: {type(err).__name__}: {err}") from None
    return module


def registered_classes(module: ModuleType) -> list[type]:
    """The classes that ``module`` itself defines and decorates with ``@register`` (not inherited marks)."""
    return [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and obj.__module__ == module.__name__ and "registry_name" in vars(obj)
    ]


def entry_points(kind: str) -> list[importlib.metadata.EntryPoint]:
    """The installed entry points of ``kind``'s group, sorted by name."""
    return sorted(importlib.metadata.entry_points(group=GROUPS[kind]), key=lambda ep: ep.name)


def entry_point_label(ep: importlib.metadata.EntryPoint) -> str:
    dist = f" of {ep.dist.name} {ep.dist.version}" if getattr(ep, "dist", None) else ""
    return f"entry point {ep.group} {ep.name!r}{dist}"


def entry_point_classes(ep: importlib.metadata.EntryPoint) -> list[tuple[str, type]]:
    """``(name, class)`` of each class an entry point declares."""
    label = entry_point_label(ep)
    module = import_spec(ep.module, label)
    if not ep.attr:
        return [(cls.registry_name, cls) for cls in registered_classes(module)]
    cls = getattr(module, ep.attr, None)
    if not isinstance(cls, type):
        raise ConfigError(f"{label}: {ep.value!r} names no class")
    return [(vars(cls).get("registry_name", ep.name), cls)]
