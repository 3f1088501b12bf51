"""The package's error types and the one key-path format every message uses.

A message about a configuration value starts with the value's full dotted path
in the config (``experiments.<name>.algorithms.<label>.params.lam: ...``), so
a user can find the line to fix; :func:`key_path` builds it.
"""

from __future__ import annotations

from typing import Iterable


class ConfigError(ValueError):
    """A configuration value is missing or invalid; the message names the key."""


def key_path(*parts: str | int | Iterable[str | int] | None) -> str:
    """Join config path parts into ``a.b.c`` (``None`` and empty parts are skipped).

    Parts may themselves be dotted strings or sequences of parts.
    """
    out: list[str] = []
    for part in parts:
        if part is None or part == "":
            continue
        if isinstance(part, (list, tuple)):
            out.extend(str(p) for p in part)
        else:
            out.append(str(part))
    return ".".join(out) or "<top level>"
