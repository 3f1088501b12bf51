"""What a parameter may be: the checks its annotation declares, run before any job and before each build.

An environment's or policy's configurable parameters are its keyword-only constructor
arguments (:func:`keyword_parameters`).  Their annotations say what a value may be,
and :func:`check` turns that into a check with a clear message, so a bad value stops
the pipeline while it is planned (:mod:`banditbench.configuration.grid` checks every cell kind)
and again when a job builds the object (:func:`banditbench.simulation.runner.build`)::

    def __init__(self, problem, rng, *, lam: Positive = 1.0, beta: NonNegative | Literal["theory"] = 1.0,
                 mode: Literal["shared", "disjoint"] = "shared", width: PositiveInt = 32,
                 oracle: DataFile = "data/oracles/x.npz", rewards: Sequence[Probability] = (0.5, 0.7)):

Plain annotations are checked too: ``float`` is a finite number (``.nan`` and ``.inf``
are refused), ``int`` an integer (not a bool), ``str`` a string, ``X | None`` also
null, ``Sequence[X]`` a list of ``X``, ``Mapping[...]`` a mapping.  ``Annotated``
adds :class:`Range` (numbers), :class:`OneOf` (a closed set of values) and
:class:`DataFile` (a path that must stay inside the project or the configured data
root).  Relations between parameters (two lists of equal length, a parameter needed
only with another's value) are a class's ``check_params`` classmethod
(:class:`banditbench.api.Environment`, :class:`banditbench.api.Policy`).

Messages name the key relative to the job cell (``policy.params.lam``); callers
re-root them onto the full config path (:mod:`banditbench.errors`).
"""

from __future__ import annotations

import inspect
import math
import os
import re
import types
import typing
from collections.abc import Mapping as MappingABC
from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, Mapping

from .errors import ConfigError, did_you_mean, key_path


@dataclass(frozen=True)
class Range:
    """Bounds of a number: ``gt`` / ``ge`` below, ``lt`` / ``le`` above (``None``: unbounded)."""

    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None

    def holds(self, value: float) -> bool:
        return (
            (self.gt is None or value > self.gt)
            and (self.ge is None or value >= self.ge)
            and (self.lt is None or value < self.lt)
            and (self.le is None or value <= self.le)
        )

    def __str__(self) -> str:
        low = f"> {self.gt:g}" if self.gt is not None else f">= {self.ge:g}" if self.ge is not None else ""
        high = f"< {self.lt:g}" if self.lt is not None else f"<= {self.le:g}" if self.le is not None else ""
        return " and ".join(filter(None, [low, high]))


@dataclass(frozen=True)
class OneOf:
    """One of a closed set of values (for sets that a module already names as a constant)."""

    values: tuple


@dataclass(frozen=True)
class Doc:
    """What a parameter means, in one or two sentences (and the equation or section it comes from):
    ``lam: Annotated[Positive, Doc("ridge regularisation of eq. (3)")] = 1.0``.  It constrains nothing;
    the reference pages and ``banditbench list`` show it (:func:`description`)."""

    text: str


@dataclass(frozen=True)
class DataFile:
    """A path to a data file: relative to the project (the working directory) or absolute, it must
    resolve inside the project or inside the config's ``data_root`` (no ``..`` or absolute path
    out of them); it must exist unless a rule of the pipeline builds it (``buildable``), and be a
    regular file of its kind: its name ends with ``suffix`` and, unless a rule builds it (the pre-job
    check moves a damaged one aside and has it rebuilt), it starts with the bytes ``magic``."""

    suffix: str = ".npz"
    #: the first bytes of every such file (a ``.npz`` is a zip archive: a local file header first)
    magic: bytes = b"PK\x03\x04"
    #: the kind in words, for messages
    kind: str = "a .npz array file"


Positive = Annotated[float, Range(gt=0)]
NonNegative = Annotated[float, Range(ge=0)]
#: a probability strictly between 0 and 1
Probability = Annotated[float, Range(gt=0, lt=1)]
UnitInterval = Annotated[float, Range(ge=0, le=1)]
PositiveInt = Annotated[int, Range(ge=1)]
NonNegativeInt = Annotated[int, Range(ge=0)]
DataPath = Annotated[str, DataFile()]


# --- reading the annotations -------------------------------------------------------
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


@cache
def hints(cls: type) -> dict[str, Any]:
    """The evaluated annotation of every configurable parameter of ``cls`` (``Any`` where none).

    Follows the family's ``**shared`` forwarding (:func:`keyword_parameters`);
    annotations are strings (``from __future__ import annotations``) evaluated in the module
    of the constructor that declares them.  An annotation of the package's own source that does
    not evaluate (a name its module does not import) is an error, not ``Any``: it would drop
    the parameter's checks and its description without a word.
    """
    out: dict[str, Any] = {}
    for name, (param, init) in keyword_parameters(cls, with_owner=True).items():
        ann = param.annotation
        if ann is param.empty:
            out[name] = Any
        elif isinstance(ann, str):
            try:
                out[name] = eval(ann, init.__globals__)  # noqa: S307 - the package's own source
            except Exception as exc:
                if init.__module__.split(".")[0] == __name__.split(".")[0]:
                    raise TypeError(
                        f"{init.__qualname__} ({init.__module__}): the annotation {ann!r} of "
                        f"{name!r} does not evaluate: {exc}"
                    ) from exc
                out[name] = Any  # a name only known to type checkers
        else:
            out[name] = ann
    return out


def description(cls: type, name: str) -> str | None:
    """The :class:`Doc` text declared on parameter ``name`` of ``cls`` (``None`` where none is)."""
    return _doc_text(hints(cls).get(name, Any))


def descriptions(cls: type) -> dict[str, str | None]:
    """:func:`description` of every configurable parameter of ``cls``."""
    return {name: _doc_text(hint) for name, hint in hints(cls).items()}


def _doc_text(hint: Any) -> str | None:
    if typing.get_origin(hint) is Annotated:
        for mark in reversed(typing.get_args(hint)[1:]):
            if isinstance(mark, Doc):
                return mark.text
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def describe(hint: Any) -> str:
    """What a value of this annotation is, in words (for messages)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return "anything"
    if hint is type(None) or hint is None:
        return "null"
    if origin is Annotated:
        return _describe_annotated(args[0], args[1:])
    if origin is Literal:
        return f"one of {list(args)}" if len(args) > 1 else repr(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(describe(a) for a in args)
    if hint is float:
        return "a finite number"
    if hint is int:
        return "an integer"
    if hint is bool:
        return "true or false"
    if hint is str:
        return "a string"
    if origin in (SequenceABC, list, tuple) or hint in (list, tuple):
        return f"a list of {_plural(describe(args[0]))}" if args else "a list"
    if origin in (MappingABC, dict) or hint in (dict, Mapping):
        return "a mapping"
    return getattr(hint, "__name__", str(hint))


def _describe_annotated(base: Any, marks: tuple) -> str:
    """:func:`describe` of ``Annotated[base, *marks]``: the base in words, narrowed by its marks."""
    text = describe(base)
    for mark in marks:
        if isinstance(mark, Range):
            text += f" {mark}"
        elif isinstance(mark, OneOf):
            text = f"one of {list(mark.values)}"
        elif isinstance(mark, DataFile):
            text = f"a path to {mark.kind} inside the project or the data root"
    return text


def _plural(text: str) -> str:
    for single, plural in (("a finite number", "finite numbers"), ("an integer", "integers"), ("a string", "strings")):
        if text.startswith(single):
            return plural + text[len(single) :]
    return text


def conforms(value: Any, hint: Any) -> bool:
    """Whether ``value`` (a plain value from YAML / JSON) is what ``hint`` declares."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if hint is type(None) or hint is None:
        return value is None
    if origin is Annotated:
        return _conforms_annotated(value, args[0], args[1:])
    if origin is Literal:
        return any(value == a and type(value) is type(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, a) for a in args)
    if hint is float:
        return _is_number(value) and math.isfinite(value)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is bool:
        return isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin in (SequenceABC, list, tuple) or hint in (list, tuple):
        if not isinstance(value, (list, tuple)):
            return False
        item = args[0] if args else Any
        return all(conforms(v, item) for v in value)
    if origin in (MappingABC, dict) or hint in (dict, Mapping):
        return isinstance(value, dict)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


def _conforms_annotated(value: Any, base: Any, marks: tuple) -> bool:
    """:func:`conforms` to ``Annotated[base, *marks]``: to the base, within its ranges and choices."""
    if not conforms(value, base):
        return False
    for mark in marks:
        if isinstance(mark, Range) and not mark.holds(value):
            return False
        if isinstance(mark, OneOf) and value not in mark.values:
            return False
    return True


def string_choices(hint: Any) -> list[str]:
    """The strings an annotation allows by name (its ``Literal`` values and :class:`OneOf` sets)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return [a for a in args if isinstance(a, str)]
    if origin is Annotated:
        marks = [v for m in args[1:] if isinstance(m, OneOf) for v in m.values if isinstance(v, str)]
        return marks + string_choices(args[0])
    if origin in (typing.Union, types.UnionType):
        return [c for a in args for c in string_choices(a)]
    return []


def data_file_mark(hint: Any) -> DataFile | None:
    """The :class:`DataFile` mark of an annotation that declares a data file path (``None`` where none)."""
    if typing.get_origin(hint) is Annotated:
        marks = [m for m in typing.get_args(hint)[1:] if isinstance(m, DataFile)]
        return marks[0] if marks else data_file_mark(typing.get_args(hint)[0])
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return next((m for m in map(data_file_mark, typing.get_args(hint)) if m is not None), None)
    return None


def data_file_path(value: str, data_root: str | None = None) -> str | None:
    """Where a data-file parameter points, as the pipeline names it: relative to the project (the
    working directory) when inside it, absolute when inside ``data_root``; ``None`` when outside both.

    Lexical (``..`` is collapsed, links are not followed), so a project whose ``data/`` is a
    link to other storage keeps working.
    """
    project = os.path.abspath(os.getcwd())
    path = os.path.normpath(os.path.join(project, os.path.expanduser(value)))
    if path == project or path.startswith(project + os.sep):
        return os.path.relpath(path, project)
    if data_root is not None:
        root = os.path.normpath(os.path.join(project, os.path.expanduser(data_root)))
        if path.startswith(root + os.sep):
            return path
    return None


def check_data_file(
    value: str,
    where: str,
    data_root: str | None = None,
    buildable=None,
    mark: DataFile = DataFile(),
    default: str | None = None,
) -> str:
    """:func:`data_file_path` of a data-file parameter; a :class:`ConfigError` naming ``where`` when it
    leaves the project and the data root, when it is a directory or another non-regular file, when the
    file does not exist and ``buildable(path)`` does not say that a rule of the pipeline makes it, or when
    it is not of its kind (``mark``: its name's ending; its first bytes, unless a rule builds it).  Each
    message says what to do, naming ``snakemake <path>`` only for a path a rule builds: the path itself,
    or the parameter's ``default``."""
    path = data_file_path(value, data_root)
    if path is None:
        inside = f"the project {os.getcwd()}" + (f" or the data root {data_root}" if data_root else "")
        raise ConfigError(
            f"{where}: {value!r} lies outside {inside}; data files must lie inside the project "
            f"(or set the config's data_root to a directory to read them from)"
        )
    builds = bool(buildable and buildable(path))
    if os.path.isdir(path):
        problem = f"is a directory, not {mark.kind}"
    elif not os.path.exists(path):
        if builds:
            return path
        problem = "does not exist and no rule of the pipeline builds it"
    elif not os.path.isfile(path):
        problem = f"is not a regular file (a pipe, socket or device?), not {mark.kind}"
    elif not path.endswith(mark.suffix):
        problem = f"is not {mark.kind}: its name does not end in {mark.suffix}"
    elif builds:
        return path  # its contents are the pre-job check's (a damaged one is moved aside and rebuilt)
    else:
        problem = _header_problem(path, mark)
        if problem is None:
            return path
    raise ConfigError(f"{where}: {value!r} {problem}; {data_file_advice(path, builds, mark, default, buildable)}")


def _header_problem(path: str, mark: DataFile) -> str | None:
    """What is wrong with the first bytes of the file at ``path`` for its kind (``None``: nothing)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(mark.magic))
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    if head == mark.magic:
        return None
    what = "is empty" if not head else f"starts with {head!r}, not with {mark.magic!r}"
    return f"is not {mark.kind}: it {what} (a text file, or a file of another kind?)"


def data_file_advice(path: str, builds: bool, mark: DataFile, default: str | None = None, buildable=None) -> str:
    """What to do about an unusable data file at ``path``: remove it and have its rule build it where
    one does (``builds``), else point the parameter at a file of its kind: its ``default``, with the
    command that builds it where a rule does."""
    if builds:
        return f"remove it; `snakemake --cores 1 {path}` then builds it"
    if default is None:
        return f"point it at {mark.kind}"
    target = data_file_path(default)
    if target is not None and buildable and buildable(target):
        return f"point it at {mark.kind}, e.g. the default {default!r}, which `snakemake --cores 1 {target}` builds"
    return f"point it at {mark.kind}, e.g. the default {default!r}"


_NUMBER = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def number_in_string(value: Any) -> int | float | None:
    """The number a string spells (``'1e-3'``, ``' 2 '``), or None: a number that was read as a string
    (quoted in the config, or a nested ``--config`` value) and is refused as one."""
    if not isinstance(value, str) or not _NUMBER.fullmatch(value.strip()):
        return None
    text = value.strip()
    return int(text) if text.lstrip("+-").isdigit() else float(text)


#: what a message adds after a number that was read as a string
READ_AS_STRING = (
    "it was read as a string, not a number (written in quotes, or read as YAML 1.1, where 1e-3 is a string and "
    "1.0e-3 a number)"
)


def check(cls: type, params: Mapping[str, Any], where: str, *, data_root: str | None = None, buildable=None) -> None:
    """Check the values of ``params`` (the given ones; defaults are the class's own) against their
    declared annotations, data-file paths included; ``where`` is the key path of ``params``
    (``policy.params``, ``environment.params``)."""
    declared = hints(cls)
    for name, value in params.items():
        hint = declared.get(name, Any)
        if not conforms(value, hint):
            number = number_in_string(value)
            as_string = f": {READ_AS_STRING}" if number is not None and conforms(number, hint) else ""
            hint_text = did_you_mean(value, string_choices(hint))
            raise ConfigError(f"{key_path(where, name)}: must be {describe(hint)}, got {value!r}{hint_text}{as_string}")
        mark = data_file_mark(hint)
        if mark is not None and isinstance(value, str):
            default = keyword_parameters(cls)[name].default  # inspect.Parameter.empty when required
            default = default if isinstance(default, str) else None
            check_data_file(value, key_path(where, name), data_root, buildable, mark, default)
