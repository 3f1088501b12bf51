"""Algorithms from outside the package (banditbench.plugins): a ``plugins:`` file, an installed package's
entry points, ``banditbench new-algorithm``; validated like built-in ones, their sources their jobs' inputs."""

import importlib
import json
import re
import sys
import textwrap

import numpy as np
import pytest

from banditbench import registry
from banditbench.cli import main
from banditbench.configuration.grid import load_grid
from banditbench.errors import ConfigError
from banditbench.simulation.job import run_cell
from conftest import read_only_folder

#: a file plugin: an ε-greedy duel on arm sums (it imports from banditbench only)
EPS_DUEL = '''
from typing import Annotated, Sequence

import numpy as np

from banditbench.api import Doc, Policy, UnitInterval, register


@register("{name}")
class EpsDuel(Policy):
    """A plugin: duels the two arms of largest feature sum, a random second arm with probability eps."""

    feedback_kind = "preference"
    action_kind = "pair"

    def __init__(self, problem, rng, *, eps: Annotated[UnitInterval, Doc("exploration probability")] = 0.2):
        self.rng, self.eps = rng, eps

    def observe(self, t: int, arrived: Sequence) -> None:
        pass

    def act(self, t, arms):
        order = np.argsort(arms.sum(axis=1))
        second = int(self.rng.integers(len(arms) - 1)) if self.rng.random() < self.eps else int(order[-2])
        return int(order[-1]), second if second != int(order[-1]) else int(order[0])
'''

#: an installed package: mylab.duel registers a policy through mylab.helpers
LAB_DUEL = '''
from banditbench.api import Policy, register

from .helpers import top_two


@register("lab_duel")
class LabDuel(Policy):
    """The installed package's policy: the two arms of largest first coordinate."""

    feedback_kind = "preference"
    action_kind = "pair"

    def __init__(self, problem, rng):
        pass

    def observe(self, t, arrived):
        pass

    def act(self, t, arms):
        return top_two(arms[:, 0])
'''
LAB_HELPERS = """
import numpy as np


def top_two(scores):
    order = np.argsort(scores)
    return int(order[-1]), int(order[-2])
"""


#: top-level modules the tests import from their temporary folders (forgotten between tests)
TEST_MODULES = ("mylab", "eps_duel", "my_duel")


@pytest.fixture
def fresh_registry():
    """The registry as a process starts: no plugins in use, entry points read anew, no ``mylab`` imported."""

    def reset():
        registry._entry_point_entries.cache_clear()
        registry._plugin_entries.cache_clear()
        registry._tables.cache_clear()
        registry._active = ()
        for name in [m for m in sys.modules if m.split(".")[0] in TEST_MODULES]:
            del sys.modules[name]
        importlib.invalidate_caches()

    reset()
    yield
    reset()


def _file_plugin(folder, name="eps_duel", registered="my_eps_duel"):
    path = folder / f"{name}.py"
    path.write_text(EPS_DUEL.format(name=registered))
    return path


def _installed_package(home):
    """``mylab`` with a distribution's metadata declaring ``banditbench.policies`` entry points, in ``home``
    (a folder that, on the import path, makes it an installed distribution)."""
    (home / "mylab").mkdir(parents=True)
    (home / "mylab/__init__.py").write_text("")
    (home / "mylab/duel.py").write_text(LAB_DUEL)
    (home / "mylab/helpers.py").write_text(LAB_HELPERS)
    (home / "mylab/unused.py").write_text("X = 1\n")
    info = home / "mylab_bandits-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mylab-bandits\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[banditbench.policies]\nlab = mylab.duel\n")
    return home


def _config(plugins, algorithms, horizon=30):
    return {
        "plugins": plugins,
        "experiments": {
            "duel": {
                "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
                "horizon": horizon,
                "seeds": 2,
                "seeds_per_job": 2,
                "algorithms": algorithms,
                "delays": {"none": {"kind": "none"}},
            }
        },
    }


def test_a_plugin_file_registers_its_policy_and_runs_in_a_grid(tmp_path, fresh_registry):
    plugin = _file_plugin(tmp_path)
    assert "my_eps_duel" not in registry.policies()
    grid = load_grid(
        _config(
            [str(plugin)],
            {"mine": {"policy": "my_eps_duel", "params": {"eps": 0.5}}, "random": {"policy": "random_pair"}},
        )
    )
    entry = registry.policies()["my_eps_duel"]
    assert entry.origin == f"plugin {plugin}" and entry.plugin == str(plugin)
    mine = grid.cell("duel", "mine", "none", "none", 0)
    assert mine["plugins"] == [str(plugin)]
    assert "plugins" not in grid.cell("duel", "random", "none", "none", 0)  # a built-in's cell: unchanged
    series, meta, _ = run_cell(mine)
    assert set(series) >= {"regret", "weak_regret"} and np.all(np.isfinite(series["regret"]))


def test_a_built_in_cell_is_the_same_with_or_without_plugins(tmp_path, fresh_registry):
    """Adding a plugin to a config changes no built-in job's params: nothing built-in re-runs."""
    algorithms = {"random": {"policy": "random_pair"}}
    without = load_grid(_config([], algorithms)).cell_json("duel", "random", "none", "none", 0)
    with_plugin = load_grid(_config([str(_file_plugin(tmp_path))], algorithms)).cell_json(
        "duel", "random", "none", "none", 0
    )
    assert without == with_plugin


def test_a_plugin_job_process_imports_the_plugin_from_its_cell(tmp_path, fresh_registry):
    plugin = _file_plugin(tmp_path)
    grid = load_grid(_config([str(plugin)], {"mine": {"policy": "my_eps_duel"}}))
    cell = grid.cell("duel", "mine", "none", "none", 1)
    registry.use_plugins([])  # a fresh job process knows only the built-in names
    with pytest.raises(ConfigError, match="unknown policy 'my_eps_duel'"):
        registry.get("policy", "my_eps_duel")
    assert run_cell(cell)[0]["regret"].shape == (30,)
    assert main(["run-one", "--cell", json.dumps(cell), "--output", str(tmp_path / "r.npz")]) == 0


@pytest.mark.parametrize(
    "algorithm, message",
    [
        (
            {"policy": "my_eps_duel", "params": {"eps": 1.5}},
            r"^experiments\.duel\.algorithms\.mine\.params\.eps: must be a finite number >= 0 and <= 1, got 1\.5$",
        ),
        (
            {"policy": "my_eps_duel", "params": {"epsilon": 0.1}},
            r"experiments\.duel\.algorithms\.mine\.params.*epsilon",
        ),
        ({"policy": "my_eps_dual"}, r"^experiments\.duel\.algorithms\.mine\.policy: unknown policy 'my_eps_dual'"),
    ],
)
def test_a_plugins_parameters_are_checked_before_any_job_naming_the_key(tmp_path, fresh_registry, algorithm, message):
    with pytest.raises(ConfigError, match=message):
        load_grid(_config([str(_file_plugin(tmp_path))], {"mine": algorithm}))


@pytest.mark.parametrize(
    "write, spec, message",
    [
        (None, "missing.py", r"^plugins\[0\]: no such file 'missing\.py'"),
        (("notes.txt", "x = 1\n"), "notes.txt", r"^plugins\[0\]: .*notes\.txt' is not a Python file"),
        (None, "no_such_module_xyz", r"^plugins\[0\]: no module named 'no_such_module_xyz' is importable"),
        (None, "not a module!", r"^plugins\[0\]: 'not a module!' is neither a module name nor a path"),
        (("broken.py", "1 / 0\n"), "broken.py", r"^plugins\[0\]: importing .*broken\.py failed: ZeroDivisionError"),
        (("syntax.py", "def (:\n"), "syntax.py", r"^plugins\[0\]: importing .*syntax\.py failed: SyntaxError"),
        (("empty.py", "X = 1\n"), "empty.py", r"^plugins\[0\]: .*empty\.py registers no policy or environment"),
        (
            ("odd.py", "from banditbench.api import register\n\n@register('odd')\nclass Odd:\n    pass\n"),
            "odd.py",
            r"^plugins\[0\]: Odd \(registered as 'odd'\) is neither a banditbench\.api\.Policy nor an Environment",
        ),
    ],
)
def test_a_bad_plugin_is_one_line_naming_the_key(tmp_path, fresh_registry, monkeypatch, write, spec, message):
    monkeypatch.chdir(tmp_path)
    if write:
        (tmp_path / write[0]).write_text(write[1])
    with pytest.raises(ConfigError, match=message) as err:
        load_grid(_config([spec], {"random": {"policy": "random_pair"}}))
    assert "\n" not in str(err.value)


def test_a_plugin_may_not_shadow_a_built_in_or_another_plugins_name(tmp_path, fresh_registry):
    shadow = _file_plugin(tmp_path, "shadow", registered="linucb")
    with pytest.raises(
        ConfigError,
        match=r"policy 'linucb' \(EpsDuel\) would shadow the built-in policy 'linucb' "
        r"\(banditbench\.policies\.linucb\)",
    ):
        load_grid(_config([str(shadow)], {"random": {"policy": "random_pair"}}))
    one, two = _file_plugin(tmp_path, "one", "same_name"), _file_plugin(tmp_path, "two", "same_name")
    with pytest.raises(
        ConfigError,
        match=rf"plugin {re.escape(str(two))}: policy 'same_name' .* would shadow "
        rf"policy 'same_name' of plugin {re.escape(str(one))}",
    ):
        load_grid(_config([str(one), str(two)], {"random": {"policy": "random_pair"}}))


def test_an_installed_packages_entry_points_register_its_policies(tmp_path, fresh_registry, monkeypatch):
    home = _installed_package(tmp_path / "site")
    monkeypatch.syspath_prepend(str(home))
    entry = registry.policies()["lab_duel"]
    assert entry.origin == "entry point banditbench.policies 'lab' of mylab-bandits 0.1" and entry.plugin is None
    grid = load_grid(_config([], {"lab": {"policy": "lab_duel"}}))
    cell = grid.cell("duel", "lab", "none", "none", 0)
    assert "plugins" not in cell  # a job process finds it through the entry point
    assert run_cell(cell)[0]["regret"].shape == (30,)
    # its jobs depend on the package files it imports (and banditbench's), not on the package's others
    sources = registry.job_sources("synthetic_dueling", "lab_duel")
    mylab = {p.name for p in sources if p.parent.name == "mylab"}
    assert mylab == {"__init__.py", "duel.py", "helpers.py"}
    assert any(p.name == "api.py" and p.parent.name == "banditbench" for p in sources)


def _installed_module(home, module="eps_duel", registered="my_eps_duel", entry="my_eps_duel = eps_duel:EpsDuel"):
    """A plugin file ``home/<module>.py`` that an installed distribution (its metadata in ``home``) also
    declares as an entry point, as ``pip install -e`` of a folder holding it does."""
    home.mkdir(parents=True, exist_ok=True)
    path = _file_plugin(home, module, registered)
    info = home / "my_bandits-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-bandits\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[banditbench.policies]\n{entry}\n")
    return path


def _modules_of(path):
    """The distinct module objects imported from the file at ``path``."""
    return {id(m): m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == str(path)}


def test_a_plugin_file_that_is_also_an_installed_entry_point_is_one_policy(tmp_path, fresh_registry, monkeypatch):
    """The same class through an entry point and ``plugins:`` is loaded once and registered once, whichever
    is imported first: not a clash with itself."""
    home = tmp_path / "site"
    path = _installed_module(home)
    monkeypatch.syspath_prepend(str(home))
    grid = load_grid(_config([str(path)], {"mine": {"policy": "my_eps_duel"}, "random": {"policy": "random_pair"}}))
    entry = registry.policies()["my_eps_duel"]
    assert entry.origin == "entry point banditbench.policies 'my_eps_duel' of my-bandits 0.1"
    assert len(_modules_of(path)) == 1
    assert entry.load() is registry._plugin_entries(str(path))[0].load()
    assert run_cell(grid.cell("duel", "mine", "none", "none", 0))[0]["regret"].shape == (30,)
    # as a fresh process that reads the entry point first and the plugin file second
    for module in _modules_of(path).values():
        for name in [name for name, m in sys.modules.items() if m is module]:
            del sys.modules[name]
    for cached in (registry._entry_point_entries, registry._plugin_entries, registry._tables):
        cached.cache_clear()
    registry.use_plugins([])
    assert registry.policies()["my_eps_duel"].load().__module__ == "eps_duel"
    registry.use_plugins([str(path)])
    assert len(_modules_of(path)) == 1 and registry.policies()["my_eps_duel"].load().__module__ == "eps_duel"


def test_the_same_plugin_twice_in_plugins_is_one_policy(tmp_path, fresh_registry, monkeypatch):
    """A module name and the path of its file (or two spellings of one path) name one class."""
    home = tmp_path / "site"
    home.mkdir()
    path = _file_plugin(home)
    monkeypatch.syspath_prepend(str(home))
    monkeypatch.chdir(tmp_path)
    specs = ["eps_duel", str(path), "site/eps_duel.py", "./site/../site/eps_duel.py"]
    load_grid(_config(specs, {"mine": {"policy": "my_eps_duel"}}))
    assert registry.policies()["my_eps_duel"].origin == "plugin eps_duel"
    assert len(_modules_of(path)) == 1


def test_two_different_classes_under_one_name_still_clash(tmp_path, fresh_registry, monkeypatch):
    home = tmp_path / "site"
    _installed_module(home)
    monkeypatch.syspath_prepend(str(home))
    other = _file_plugin(tmp_path, "other_duel", "my_eps_duel")  # the same source, another file: another class
    with pytest.raises(
        ConfigError,
        match=rf"^plugin {re.escape(str(other))}: policy 'my_eps_duel' \(EpsDuel\) would shadow policy "
        r"'my_eps_duel' of entry point banditbench\.policies 'my_eps_duel' of my-bandits 0\.1; register it",
    ):
        load_grid(_config([str(other)], {"random": {"policy": "random_pair"}}))


def test_new_algorithm_installed_as_an_entry_point_passes_its_test_and_validate(tmp_path, fresh_registry, capsys):
    """``banditbench new-algorithm``, then the folder installed with an entry point for it: the written test and
    ``banditbench validate`` of the written config both pass (they name the file in ``plugins:`` too)."""
    import os
    import subprocess

    folder = tmp_path / "lab"
    assert main(["new-algorithm", "my_duel", "--family", "dueling", "--dir", str(folder)]) == 0
    info = folder / "my_bandits-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-bandits\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[banditbench.policies]\nmy_duel = my_duel:MyDuel\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(registry.PACKAGE_DIR.parent)])}
    test = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
    )
    assert test.returncode == 0 and "2 passed" in test.stdout, test.stdout[-3000:]
    validate = subprocess.run(
        [sys.executable, "-m", "banditbench", "validate", str(folder / "my_duel.yaml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert validate.returncode == 0, validate.stderr[-2000:]
    assert "my_duel.yaml: valid, 1 experiments" in validate.stdout


def test_an_entry_point_that_does_not_load_is_one_line_naming_it(tmp_path, fresh_registry, monkeypatch):
    home = _installed_package(tmp_path / "site")
    (home / "mylab/duel.py").write_text("raise RuntimeError('broken on purpose')\n")
    monkeypatch.syspath_prepend(str(home))
    with pytest.raises(
        ConfigError,
        match=r"^entry point banditbench\.policies 'lab' of mylab-bandits 0\.1: importing "
        r"'mylab\.duel' failed: RuntimeError: broken on purpose$",
    ):
        registry.policies()


def test_a_plugin_files_jobs_depend_on_it_and_on_the_package_modules_it_imports(tmp_path, fresh_registry):
    plugin = _file_plugin(tmp_path)
    registry.use_plugins([str(plugin)])
    sources = registry.job_sources("synthetic_dueling", "my_eps_duel")
    assert plugin.resolve() in sources
    names = {str(p.relative_to(registry.PACKAGE_DIR)) for p in sources if registry.PACKAGE_DIR in p.parents}
    assert {"api.py", "params.py", "simulation/runner.py", "envs/dueling.py"} <= names
    assert not any(n.startswith("policies/") for n in names)  # no built-in policy's module


def test_list_and_check_take_plugins(tmp_path, fresh_registry, capsys):
    plugin = _file_plugin(tmp_path)
    assert main(["list", "policies", "--plugins", str(plugin)]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"my_eps_duel  \[preference feedback\]  \(plugin {re.escape(str(plugin))}\)", out)
    assert main(["check", "my_eps_duel", "--plugins", str(plugin)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("my_eps_duel\n") and "FAIL" not in out and "same seed, same bytes" in out
    assert main(["check", "my_eps_duel", "--plugins", str(tmp_path / "nope.py")]) == 2
    assert "--plugins[0]: no such file" in capsys.readouterr().err


@pytest.mark.parametrize("family", ["dueling", "reward", "logistic", "lipschitz", "knapsack"])
def test_new_algorithm_writes_a_skeleton_that_passes_its_own_test(tmp_path, fresh_registry, family, capsys):
    import subprocess

    folder = tmp_path / "mine"
    assert main(["new-algorithm", f"my_{family}", "--family", family, "--dir", str(folder)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"my_{family}.py", f"test_my_{family}.py", f"my_{family}.yaml"]
    )
    test = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        capture_output=True,
        text=True,
        cwd=folder,
    )
    assert test.returncode == 0 and "2 passed" in test.stdout, test.stdout[-3000:]
    # refuses to overwrite, and refuses a name that is taken
    assert main(["new-algorithm", f"my_{family}", "--family", family, "--dir", str(folder)]) == 2
    assert "exists; not overwritten" in capsys.readouterr().err
    assert main(["new-algorithm", "linucb", "--family", family, "--dir", str(tmp_path / "other")]) == 2
    assert "'linucb' is already a registered policy" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name, message",
    [
        ("my-duel", r"'my-duel' is not a usable name: it holds '-' \(a name is lower-case .*, e\.g\. 'my_duel'\)"),
        ("1duel", r"'1duel' is not a usable name: it starts with '1', not with a letter .*e\.g\. 'duel'"),
        ("class", r"'class' is not a usable name: it is a Python keyword \(e\.g\. 'my_class'\)"),
        ("MyDuel", r"'MyDuel' is not a usable name: it has upper-case letters .*e\.g\. 'myduel'"),
        ("düel", r"'düel' is not a usable name: it holds 'ü' .*e\.g\. 'duel'"),
        ("", r"'' is not a usable name: it is empty"),
        ("a" * 101, r"'a{101}' is not a usable name: it is 101 characters long, more than 100"),
        ("linucb", r"'linucb' is already a registered policy \(built-in\)"),
        ("numpy", r"'numpy' is the name of the installed .* module 'numpy', which a file numpy\.py beside"),
        ("os", r"'os' is the name of the standard library's module 'os'"),
        ("conftest", r"'conftest' is not a usable name: pytest reads a file conftest\.py"),
        ("runs", r"'runs' cannot name the example config runs\.yaml: run: 'runs' is reserved"),
    ],
    ids=[
        "dash",
        "digit",
        "keyword",
        "upper",
        "unicode",
        "empty",
        "long",
        "built-in",
        "installed",
        "stdlib",
        "conftest",
        "run",
    ],
)
def test_new_algorithm_refuses_an_unusable_name_in_one_line(tmp_path, fresh_registry, capsys, name, message):
    assert main(["new-algorithm", name, "--family", "dueling", "--dir", str(tmp_path / "lab")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.match(rf"banditbench: configuration error: new-algorithm: {message}", err), err
    assert not (tmp_path / "lab").exists()


def test_new_algorithm_refuses_an_unusable_folder_in_one_line(tmp_path, fresh_registry, capsys):
    (tmp_path / "notes.txt").write_text("a file\n")
    read_only = read_only_folder(tmp_path)
    cases = [
        (tmp_path / "notes.txt", rf"--dir: {re.escape(str(tmp_path))}/notes\.txt is a file, not a folder"),
        (
            tmp_path / "notes.txt/lab",
            rf"--dir: cannot create the folder {re.escape(str(tmp_path))}/notes\.txt/lab: "
            rf"{re.escape(str(tmp_path))}/notes\.txt is a file, not a folder",
        ),
        (read_only, rf"--dir: cannot write {re.escape(str(read_only))}/my_duel\.py: Permission denied"),
        (read_only / "lab", rf"--dir: cannot create the folder {re.escape(str(read_only))}/lab: "),
        (tmp_path / "two\nlines", r"--dir: '.*two\\nlines' holds a control character"),
    ]
    for folder, message in cases:
        assert main(["new-algorithm", "my_duel", "--family", "dueling", "--dir", str(folder)]) == 2, folder
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and re.match(rf"banditbench: configuration error: {message}", err), err
    assert not list(read_only.glob("my_duel*")) and not list(read_only.glob("test_my_duel*"))


def test_new_algorithms_output_passes_validate_and_its_tests_for_odd_names_and_folders(
    tmp_path, fresh_registry, monkeypatch, capsys
):
    """Names that are words Python or the skeleton use, in a nested new folder whose path holds spaces and YAML's
    and the shell's special characters: the written configs validate, the written tests pass."""
    import subprocess

    folder = tmp_path / 'odd folder, #1: [x] "q"' / "nested" / "lab"
    monkeypatch.chdir(tmp_path)  # validate compares the grid with results/ in the working directory
    families = {
        "none": "dueling",
        "annotated": "reward",
        "policy": "lipschitz",
        "match": "knapsack",
        "range": "logistic",
    }
    for name, family in families.items():
        assert main(["new-algorithm", name, "--family", family, "--dir", str(folder)]) == 0, capsys.readouterr().err
    for name in families:
        assert main(["validate", str(folder / f"{name}.yaml")]) == 0, capsys.readouterr().err
        assert f"{name}.yaml: valid, 1 experiments" in capsys.readouterr().out
    test = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "."],  # no [ ] in a path
        capture_output=True,
        text=True,
        cwd=folder,
    )
    assert test.returncode == 0 and "10 passed" in test.stdout, (test.stdout + test.stderr)[-3000:]


def test_a_skeletons_conformance_test_fails_when_its_policy_breaks(tmp_path, fresh_registry):
    """The written test is a real check: a skeleton that plays outside the action space fails it."""
    import subprocess

    folder = tmp_path / "mine"
    assert main(["new-algorithm", "my_broken", "--family", "dueling", "--dir", str(folder)]) == 0
    module = folder / "my_broken.py"
    module.write_text(module.read_text().replace("return first, second", "return first, len(arms)"))
    test = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder / "test_my_broken.py")],
        capture_output=True,
        text=True,
        cwd=folder,
    )
    assert test.returncode == 1 and "FAIL actions in the action space" in test.stdout, test.stdout[-3000:]


@pytest.mark.slow
def test_plugins_run_in_the_pipeline_and_an_edit_reruns_only_their_jobs(tmp_path):
    """A plugin file and an installed package's entry point in one Snakemake grid beside a built-in
    algorithm; editing the file re-runs only its jobs, editing the package's helper only the package's."""
    import os

    import yaml

    from smk import copy_project, smk

    own = tmp_path / "own"
    own.mkdir()
    plugin = _file_plugin(own)
    home = _installed_package(tmp_path / "site")
    config = _config(
        [str(plugin)],
        {"mine": {"policy": "my_eps_duel"}, "lab": {"policy": "lab_duel"}, "random": {"policy": "random_pair"}},
    )
    config["experiments"]["duel"].update(table_horizons=[30], paired=False)
    (tmp_path / "project").mkdir()
    project = copy_project(tmp_path / "project", {"seeds": None, "horizon": None, **config})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project / "src"), str(home)])}
    run = smk(project, "--quiet", env=env, own_src=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(p.name for p in (project / "results/runs/duel").iterdir()) == ["lab", "mine", "random"]
    table = (project / "results/default/tables/duel.csv").read_text()
    assert "lab" in table and "mine" in table
    for edited, algorithm in ((plugin, "mine"), (home / "mylab/helpers.py", "lab")):
        original = edited.read_text()
        edited.write_text(original + "\n# an edit\n")
        try:
            dry = smk(project, "-n", env=env, own_src=False)
            assert dry.returncode == 0, dry.stderr[-2000:]
            assert set(re.findall(r"experiment=(\w+), algorithm=(\w+)", dry.stdout)) == {("duel", algorithm)}
        finally:
            edited.write_text(original)
    assert yaml.safe_load((project / "config.yaml").read_text())["plugins"] == [str(plugin)]


def test_a_plugin_environment_joins_the_environments_and_its_jobs_depend_on_it(tmp_path, fresh_registry):
    """An environment of one's own: a variant of a built-in family, in a file of one's own."""
    plugin = tmp_path / "my_env.py"
    plugin.write_text(
        textwrap.dedent('''
        from banditbench.api import PositiveInt, register
        from banditbench.envs.dueling import SyntheticDueling


        @register("my_dueling")
        class MyDueling(SyntheticDueling):
            """Synthetic dueling with eight arms by default."""

            def __init__(self, seed_seq, *, n_arms: PositiveInt = 8, **shared):
                super().__init__(seed_seq, n_arms=n_arms, **shared)
        ''')
    )
    config = _config([str(plugin)], {"random": {"policy": "random_pair"}})
    config["experiments"]["duel"]["environment"] = {"name": "my_dueling", "params": {"dimension": 3}}
    grid = load_grid(config)
    assert registry.environments()["my_dueling"].origin == f"plugin {plugin}"
    cell = grid.cell("duel", "random", "none", "none", 0)
    assert cell["plugins"] == [str(plugin)]
    series = run_cell(cell)[0]
    assert series["regret"].shape == (30,)
    sources = registry.job_sources("my_dueling", "random_pair")
    assert plugin.resolve() in sources and registry.PACKAGE_DIR / "envs/dueling.py" in sources
    config["experiments"]["duel"]["environment"]["params"]["n_arms"] = 0
    with pytest.raises(ConfigError, match=r"^experiments\.duel\.environment\.params\.n_arms: "):
        load_grid(config)
