"""The YAML reading of configs: a key given twice is an error, and ``1e-3`` is a number.

PyYAML reads YAML 1.1, where a number in exponent form needs a dot and a signed exponent (``1.0e-3``):
``1e-3``, ``1.5e3`` and ``2E+5`` are strings there, and a config's parameter would be refused as one.
:class:`StrictLoader` reads them as YAML 1.2 does, as floats.  Labels and names that only look like
such a number (``1e3:`` as a mapping key) are read as numbers too, as in YAML 1.2.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

#: a YAML 1.2 float with an exponent (``1e-3``, ``.5E3``, ``-2.e+4``); the forms with a dot and a signed
#: exponent are YAML 1.1 floats already
YAML12_EXPONENT_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")


class StrictLoader(yaml.SafeLoader):
    """A safe YAML loader that refuses a key given twice in one mapping (PyYAML keeps the last silently)
    and reads YAML 1.2's exponent floats (``1e-3``) as numbers."""


def _construct_mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            first = seen[key].start_mark
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first given on line {first.line + 1})", key_node.start_mark
            )
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", YAML12_EXPONENT_FLOAT, list("-+0123456789."))


def load(text: str) -> Any:
    """A YAML document read by :class:`StrictLoader` (raises :class:`yaml.YAMLError`)."""
    return yaml.load(text, Loader=StrictLoader)
