"""Parameter presets of the linear dueling baselines: ``ours`` (the project's defaults) and ``authors`` (the
behaviour of the authors' public code, the VACDB repository ``uclaml/VACDB``; docs/baselines.md).

A baseline's parameter that the authors' code sets differently from ours takes ``auto`` (its default): the
value of the policy's ``preset``.  A value the config gives wins over the preset, so ``params: {preset:
authors, lam: 1.0}`` runs the authors' code but for V_0.  Each parameter's description names the authors'
value and the file and line of the authors' code it comes from, at the repository's commit
:data:`AUTHORS_COMMIT`.
"""

from __future__ import annotations

from typing import Annotated, Any, Callable, Mapping

from ..params import Doc, OneOf

PRESETS = ("ours", "authors")
AUTO = "auto"
#: the commit of ``uclaml/VACDB`` whose files and lines the ``authors`` values cite
AUTHORS_COMMIT = "7b1c0df9986dc701d8a6473b0f51418f51a3c95c"

Preset = Annotated[
    str,
    OneOf(PRESETS),
    Doc(
        "which value each ``auto`` parameter takes: ``ours`` (the project's defaults) or ``authors`` (the authors' "
        "public code, uclaml/VACDB at 7b1c0df; each parameter names its file and line).  A parameter the config "
        "sets keeps its value."
    ),
]

#: a preset value: a constant, or a function of the parameters resolved so far (and the problem's facts)
Value = Any | Callable[[Mapping[str, Any]], Any]


def resolve(values: Mapping[str, Any], table: Mapping[str, tuple[Value, Value]], facts: Mapping[str, Any]) -> dict:
    """``values`` with every ``auto`` of a name in ``table`` replaced by its preset's entry, ``table[name] =
    (ours, authors)``; an entry that is callable is called with the values resolved so far and ``facts`` merged
    (in the table's order, so an entry may use an earlier one)."""
    which = PRESETS.index(values.get("preset", "ours"))
    out = dict(values)
    for name, entries in table.items():
        if out.get(name, AUTO) == AUTO:
            entry = entries[which]
            out[name] = entry({**facts, **out}) if callable(entry) else entry
    return out
