"""The Python that docs/extending.md shows, run: a stale import or a name the code no longer has fails here."""

from __future__ import annotations

import re
import textwrap
import types

import pytest

from banditbench import registry
from banditbench.api import INTERFACES
from conftest import ROOT

GUIDE = ROOT / "docs" / "extending.md"


def _blocks() -> list[str]:
    """Every ```python block of the guide, dedented (a block inside a list item is indented)."""
    found = re.finditer(r"^( *)```python\n(.*?)^\1```", GUIDE.read_text(), re.M | re.S)
    return [textwrap.dedent(m.group(2)) for m in found]


BLOCKS = _blocks()


def _run(code: str, folder) -> list[str]:
    """Run one block as the guide means it; the names its ``@register`` classes are found under.

    A block with relative imports is a module of the package (``from ..api``: of ``banditbench.policies``); any
    other is a plugin file in ``folder``, through ``plugins:`` when it registers a class."""
    if re.search(r"^\s*from \.", code, re.M):
        module = types.ModuleType("banditbench.policies._extending_example")
        module.__package__ = "banditbench.policies"
        exec(compile(code, str(GUIDE), "exec"), module.__dict__)  # noqa: S102 - the guide's own code
        classes = [obj for obj in vars(module).values() if isinstance(obj, type) and "registry_name" in vars(obj)]
        return sorted(cls.registry_name for cls in classes)
    path = folder / "example.py"
    path.write_text(code)
    if "@register(" not in code:
        exec(compile(code, str(path), "exec"), {"__name__": "example"})  # noqa: S102
        return []
    registry.use_plugins([str(path)])
    return sorted(name for name, entry in registry.policies().items() if entry.path == path.resolve())


@pytest.fixture
def no_plugins():
    """No plugins in use afterwards, and the interface table as it was (a block may add an entry)."""
    interfaces = dict(INTERFACES)
    yield
    registry.use_plugins([])
    INTERFACES.clear()
    INTERFACES.update(interfaces)


def test_the_guide_shows_python_blocks_and_each_is_read_whole():
    assert len(BLOCKS) == GUIDE.read_text().count("```python") >= 3
    assert all(block.strip() and not block.startswith(" ") for block in BLOCKS)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_every_python_block_of_the_guide_runs(code, tmp_path, no_plugins):
    assert _run(code, tmp_path) == sorted(re.findall(r'@register\("(\w+)"\)', code))


def test_the_plugin_example_imports_only_from_banditbench_api():
    plugins = [b for b in BLOCKS if "@register(" in b and not re.search(r"^from \.", b, re.M)]
    assert plugins
    for code in plugins:
        modules = set(re.findall(r"^from (banditbench\S*) import", code, re.M))
        assert modules == {"banditbench.api"}, code


def test_the_family_example_gives_the_variant_its_familys_parameters(tmp_path, no_plugins):
    (code,) = [b for b in BLOCKS if '@register("my_variant")' in b]
    _run(code, tmp_path)
    cls = registry.get("policy", "my_variant").load()
    assert registry.parameters(cls) == {"extra": 3, "lam": 1.0, "beta": 1.0}


def test_a_stale_import_in_a_block_fails(tmp_path):
    with pytest.raises(ModuleNotFoundError, match="banditbench.configuration.params"):
        _run("from banditbench.configuration.params import Doc\n", tmp_path)
    with pytest.raises(ImportError, match="banditbench.params"):
        _run("from ..params import Nothing\n", tmp_path)
