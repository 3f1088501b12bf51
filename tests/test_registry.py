"""Registry parameters (families declare shared parameters once), the validator that uses them,
and the one key-path format of error messages (errors.py)."""

import copy
from typing import Annotated, Literal

import numpy as np
import pytest

from banditbench import params
from banditbench import registry
from banditbench.api import Compiled, Policy, SeedBatched
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.simulation.delays import DELAY_KINDS, delay_schema
from banditbench.envs.classification import ClassificationBandit, ClassificationDueling
from banditbench.envs.knapsack import CarModeration, SyntheticPbBwK
from banditbench.errors import ConfigError
from banditbench.params import Doc, Positive
from banditbench.policies.knapsack import IdealDuel, OptimisticDuel, RandomizedDuel
from banditbench.policies.lipschitz import DLPP, DelayedZooming
from banditbench.simulation.runner import build
from conftest import ROOT

KNAPSACK_SHARED = {"lam": 1.0, "beta_r": 1.0, "beta_w": 1.0, "p_fail": None, "V": None, "allow_null": False}


# --- families declare shared parameters once; every variant lists them ------------------------


class _Base(Policy):
    feedback_kind = "reward"

    def __init__(self, problem, rng, *, shared=1.0, overridden="base"):
        self.shared, self.overridden = shared, overridden

    def observe(self, t, arrived):
        pass

    def act(self, t, context):
        return 0


class _Variant(_Base):
    def __init__(self, problem, rng, *, own=2, overridden="variant", **shared):
        super().__init__(problem, rng, overridden=overridden, **shared)


class _Leaf(_Variant):
    """No constructor of its own: inherits the variant's, hence the family's."""


class _Closed(_Base):
    def __init__(self, problem, rng, *, own=3):  # takes no **params: the base's are not its
        super().__init__(problem, rng)


def test_parameters_follow_forwarded_params_up_to_the_family_base():
    assert registry.parameters(_Variant) == {"own": 2, "overridden": "variant", "shared": 1.0}
    assert registry.parameters(_Leaf) == registry.parameters(_Variant)
    assert registry.parameters(_Closed) == {"own": 3}
    assert registry.required_parameters(_Variant) == set()
    made = _Leaf(None, None, shared=5.0)
    assert (made.shared, made.overridden) == (5.0, "variant")


@pytest.mark.parametrize(
    "cls, own",
    [
        (OptimisticDuel, {"kappa", "theta_norm_bound", "max_newton_steps", "tol"}),
        (RandomizedDuel, {"kappa", "theta_norm_bound", "max_newton_steps", "tol"}),
        (IdealDuel, set()),
    ],
)
def test_knapsack_variants_list_the_family_parameters(cls, own):
    params = registry.parameters(cls)
    assert set(params) == set(KNAPSACK_SHARED) | own
    assert {k: params[k] for k in KNAPSACK_SHARED} == KNAPSACK_SHARED


def test_environment_and_lipschitz_families_list_shared_parameters():
    knapsack_env = {"horizon", "budget", "noise", "noise_std", "feedback_kind"}
    assert set(registry.parameters(SyntheticPbBwK)) == knapsack_env | {"rewards", "costs"}
    assert set(registry.parameters(CarModeration)) == knapsack_env | {
        "oracle",
        "reward_scale",
        "score_scale",
        "cost_factors",
        "allow_negative_costs",
    }
    # the car variant's own default for a family parameter wins (Sec. 6's Bernoulli cost factors)
    assert registry.parameters(CarModeration)["noise"] == "bernoulli_factor"
    assert registry.parameters(SyntheticPbBwK)["noise"] == "bernoulli"
    assert registry.required_parameters(CarModeration) == {"horizon", "budget"}
    classification = {"horizon", "dataset", "preprocessing", "sampling", "oracle"}
    assert set(registry.parameters(ClassificationBandit)) == classification | {"reward"}
    assert set(registry.parameters(ClassificationDueling)) == classification | {
        "utility",
        "utility_scale",
        "preference",
    }
    assert registry.required_parameters(ClassificationDueling) == {"horizon", "dataset"}
    assert set(registry.parameters(DelayedZooming)) == {"delta", "sigma", "lazy_rule", "activation", "initial_capacity"}
    assert set(registry.parameters(DLPP)) == {"delta", "sigma", "late_feedback"}


def test_every_registered_name_lists_only_real_keyword_parameters():
    for table in (registry.environments(), registry.policies()):
        for name, entry in table.items():
            params = registry.parameters(entry.load())
            assert params is not None and all(p.isidentifier() for p in params), name
            assert "shared" not in params and "params" not in params, name


# --- the validator checks inherited parameters -------------------------------------------------


def _knapsack(params, policy="lincbwk_ideal"):
    cfg = load_config_file(ROOT / "config.yaml")
    del cfg["claims"]  # they name the algorithms replaced below
    exp = next(e for e in cfg["experiments"].values() if e["environment"]["name"] == "pbbwk_synthetic")
    exp["algorithms"] = {"x": {"policy": policy, "params": params}}
    return cfg


def test_validator_accepts_inherited_and_rejects_foreign_parameters():
    load_grid(_knapsack({"lam": 2.0, "allow_null": True, "beta_w": "theory"}))
    load_grid(_knapsack({"kappa": 3.0, "lam": 0.5}, policy="pblincbwk_alg1"))
    with pytest.raises(
        ConfigError,
        match=r"algorithms\.x\.params: unknown parameter\(s\) \['kappa'\] for "
        r"'lincbwk_ideal'",
    ):
        load_grid(_knapsack({"kappa": 3.0}))


# --- one key-path format: constructor errors re-rooted to the full config path -----------------

CELL = {
    "experiment": "e",
    "algorithm": "ideal",
    "delay_label": "none",
    "seed": 0,
    "horizon": 50,
    "budget": 20,
    "environment": {"name": "pbbwk_synthetic", "params": {}},
    "policy": {"name": "lincbwk_ideal", "params": {}},
    "delay": {"kind": "none"},
}


def _cell(**changes):
    cell = copy.deepcopy(CELL)
    for path, value in changes.items():
        part, key = path.split("__")
        cell[part]["params"][key] = value
    return cell


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"policy__lam": -1.0}, "experiments.e.algorithms.ideal.params.lam: must be a finite number > 0, got -1.0"),
        (
            {"environment__noise": "cauchy"},
            "experiments.e.environment.params.noise: must be one of ['bernoulli', 'gaussian'], got 'cauchy'",
        ),
        (
            {"environment__costs": [0.1, -0.2, 0.3, 0.4]},
            "experiments.e.environment.params.costs: must be a list of finite numbers >= 0",
        ),
        ({"environment__rewards": [0.1, 1.5]}, "experiments.e.environment.params.rewards: rewards and costs need"),
    ],
)
def test_errors_of_a_built_cell_name_the_full_config_path(changes, message):
    """The declared checks (and the constructors behind them) run again when a job builds its cell."""
    with pytest.raises(ConfigError) as err:
        build(_cell(**changes))
    assert str(err.value).startswith(message)


def test_bad_delay_and_unknown_names_in_a_cell_name_the_full_path():
    with pytest.raises(ConfigError, match=r"^experiments\.e\.delays\.none\.value: required"):
        build(dict(CELL, delay={"kind": "constant"}))
    with pytest.raises(ConfigError, match=r"^experiments\.e\.algorithms\.ideal\.policy: unknown policy 'nope'"):
        build(dict(CELL, policy={"name": "nope", "params": {}}))


def test_rerooted_replaces_the_leading_path_or_places_the_message_under_it():
    err = ConfigError("policy.params.lam: must be positive")
    assert (
        str(err.rerooted("policy", "experiments.e.algorithms.a"))
        == "experiments.e.algorithms.a.params.lam: must be positive"
    )
    assert (
        str(ConfigError("lam must be positive").rerooted("policy", "experiments.e.algorithms.a"))
        == "experiments.e.algorithms.a: lam must be positive"
    )
    # a key that merely starts with the same letters is not re-rooted
    assert str(ConfigError("policyx: bad").rerooted("policy", "p")) == "p: policyx: bad"


# --- delay kinds: one description, from which schema, factory and listing derive ---------------


def test_delay_schema_is_derived_from_the_kinds():
    schema = delay_schema()
    assert schema["properties"]["kind"]["enum"] == list(DELAY_KINDS)
    fields = {name for cls in DELAY_KINDS.values() for name in cls.parameters()}
    assert set(schema["properties"]) == fields | {"kind"}
    cfg = load_config_file(ROOT / "config.yaml")
    exp = next(iter(cfg["experiments"].values()))
    exp["delays"] = {"bad": {"kind": "geometric", "mean": 0.5}}
    with pytest.raises(ConfigError, match=r"delays\.bad\.mean: 0\.5 is less than the minimum of 1"):
        load_grid(cfg)
    exp["delays"] = {"bad": {"kind": "constant", "p": 0.5}}  # a key of another kind
    with pytest.raises(ConfigError, match=r"delays\.bad: unknown key\(s\) \['p'\] for delay kind 'constant'"):
        load_grid(cfg)


def test_delay_factory_builds_each_kind_from_its_fields():
    from banditbench.simulation.delays import make_delay

    model = make_delay({"kind": "uniform", "low": 2, "high": 6, "window": 5})
    assert (type(model).kind, model.low, model.high, model.window) == ("uniform", 2, 6, 5)
    assert make_delay({"kind": "geometric", "mean": 4}).p == 0.25
    with pytest.raises(ConfigError, match=r"^d\.value: must be an integer >= 0, got 1\.5"):
        make_delay({"kind": "constant", "value": 1.5}, where="d")
    with pytest.raises(ConfigError, match=r"^d\.window: must be an integer >= 0 or null, got -1"):
        make_delay({"kind": "none", "window": -1}, where="d")
    assert np.all(make_delay({"kind": "constant", "value": 3}).sample(np.random.default_rng(0), 5) == 3)


def test_the_package_has_no_import_cycle():
    """No two modules of the package import each other, directly or through others (lazy imports
    inside functions count: registry._imports sees them)."""
    files = sorted(registry.PACKAGE_DIR.rglob("*.py"))
    edges = {
        path: sorted(
            {
                target
                for mod in registry._imports(path)
                if (target := registry._module_path(mod)) is not None and target != path
            }
        )
        for path in files
    }
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []

    def connect(node):  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(str(p.relative_to(registry.PACKAGE_DIR)) for p in component))

    for path in files:
        if path not in index:
            connect(path)
    assert cycles == []


def test_every_policys_engines_are_declared_in_the_api_and_implemented():
    """api.py declares the optional engines; every registered policy declares exactly the engines it
    implements, each with its own declaration object, and the runner asks the declaration (no attribute
    discovery)."""
    from banditbench.api import ENGINES
    from banditbench.simulation.job import SEED_BATCHED, engine

    seen = set()
    for name, entry in registry.policies().items():
        cls = entry.load()
        assert set(cls.engines) <= set(ENGINES), name
        for kind, declaration in ENGINES.items():
            owner = next(klass for klass in cls.__mro__ if declaration.method in vars(klass))
            assert (owner is not Policy) == (kind in cls.engines), (name, kind)
            assert kind not in cls.engines or type(cls.engines[kind]) is declaration, (name, kind)
        on_gpu = {"policy": {"name": name, "params": {"device": "cuda"}}}
        assert (engine([on_gpu]) == SEED_BATCHED) == ("seed-batched" in cls.engines)
        seen |= set(cls.engines)
    assert seen == set(ENGINES)  # both engines are in use


def test_an_engine_declaration_is_a_frozen_value():
    """A declaration's fields cannot be changed after the class is defined, its check_params included."""
    from dataclasses import FrozenInstanceError

    declared = SeedBatched(per_member=["nu"], family="f", check_params={"init": "independent"})
    assert declared.per_member == ("nu",) and declared.name == "seed-batched" and declared.method == "batch"
    with pytest.raises(FrozenInstanceError):
        declared.family = "g"
    with pytest.raises(TypeError):
        declared.check_params["init"] = "symmetric"
    with pytest.raises(TypeError):
        SeedBatched(("nu",))  # keywords only: a declaration says what each value is


@pytest.mark.parametrize(
    "body, message",
    [
        ({"engines": {"seed-batched": SeedBatched()}}, "declares the seed-batched engine"),
        ({"run_compiled": lambda self, env, arrival, horizon: True}, "implements the compiled engine"),
        ({"engines": {"gpu": Compiled()}}, "are not engines"),
        ({"engines": {"compiled": SeedBatched()}}, r"engines\['compiled'\]: a Compiled\(...\) declaration"),
        ({"engines": {"seed-batched": "seed-batched"}}, r"engines\['seed-batched'\]: a SeedBatched\(...\) declaration"),
        ({"engines": frozenset({"compiled"})}, "a mapping of engine names to their declarations"),
    ],
)
def test_an_engine_declared_but_missing_or_present_but_undeclared_is_refused_at_class_definition(body, message):
    with pytest.raises(TypeError, match=message):
        type(
            "Broken",
            (Policy,),
            {"feedback_kind": "reward", "action_kind": "arm", "observe": lambda *a: None, "act": lambda *a: 0, **body},
        )


def test_every_parameter_of_every_registered_class_has_a_description():
    """Each parameter declares what it means (``Doc`` in its annotation): the reference pages and
    ``banditbench list`` show it."""
    missing = [
        f"{kind} {name}: {param}"
        for kind, table in (("policy", registry.policies()), ("environment", registry.environments()))
        for name, entry in table.items()
        for param in registry.parameters(entry.load())
        if not (params.description(entry.load(), param) or "").strip()
    ]
    assert missing == []
    assert params.description(registry.get("policy", "ldb_df").load(), "lam").startswith("regularisation")


#: pair-playing policies that do not state whether they may duel an arm with itself (issue 50): none since the
#: neural dueling classes state theirs; add a name here only with a reason
SELF_DUELS_NOT_YET_STATED: set[str] = set()


def test_every_dueling_policy_states_whether_it_may_duel_an_arm_with_itself():
    """``Policy.self_duels``: ``allowed``, ``never``, or a boolean parameter of the class that forbids self-duels
    when true (the paired tables' lock-in line names it)."""
    silent = set()
    for name, entry in registry.policies().items():
        cls = entry.load()
        if cls.action_kind != "pair":
            continue
        rule = cls.self_duels
        if rule is None:
            silent.add(name)
        elif rule not in ("allowed", "never"):
            hint = params.hints(cls).get(rule)
            assert hint is not None and params.conforms(True, hint) and params.conforms(False, hint), (name, rule)
    assert silent == SELF_DUELS_NOT_YET_STATED, "a pair policy that states nothing, or one listed that now does"


def test_description_reads_doc_through_nested_annotations_and_ignores_it_in_checks():
    class Family:
        def __init__(
            self,
            *,
            lam: Annotated[Positive, Doc("ridge of eq. (3)")] = 1.0,
            mode: Annotated[Literal["a", "b"] | None, Doc("which")] = None,
            plain: int = 1,
        ):
            pass

    assert params.description(Family, "lam") == "ridge of eq. (3)"
    assert params.descriptions(Family) == {"lam": "ridge of eq. (3)", "mode": "which", "plain": None}
    assert params.describe(params.hints(Family)["lam"]) == "a finite number > 0"
    params.check(Family, {"lam": 2.0, "mode": "b"}, "policy.params")
    with pytest.raises(ConfigError, match=r"policy\.params\.lam: must be a finite number > 0, got 0"):
        params.check(Family, {"lam": 0}, "policy.params")


def test_hints_fail_loudly_on_a_package_annotation_that_does_not_evaluate(monkeypatch):
    from banditbench.policies import linucb

    params.hints.cache_clear()
    monkeypatch.delattr(linucb, "Doc")
    try:
        with pytest.raises(
            TypeError, match=r"(?s)LinUCB.__init__ \(banditbench.policies.linucb\).*'alpha'.*'Doc' is not defined"
        ):
            params.hints(linucb.LinUCB)
    finally:
        params.hints.cache_clear()


def test_the_sources_scan_reads_every_package_file_as_its_syntax_tree_does():
    """A job finds its sources' closure and the registered classes from the files' text (import lines and
    ``@register`` lines, triple-quoted strings left out), not by parsing every file (issue 48): for every file of
    the package, the same import statements and the same registrations as the whole file's syntax tree."""
    import ast

    files = sorted(registry.PACKAGE_DIR.rglob("*.py"))
    assert len(files) > 50
    for path in files:
        fast = sorted(ast.dump(node) for node in registry._import_statements(path))
        parsed = sorted(ast.dump(node) for node in registry._import_statements_parsed(path))
        assert set(fast) == set(parsed), path
        assert registry._registered(path) == registry._registered_parsed(path), path
