"""Configuration: JSON-schema validation, semantic checks and expansion into jobs.

A config names experiments; each experiment is one environment and a grid of
algorithms x delays x budgets x seeds.  :func:`load_grid` validates a config
mapping (schema first, then names and parameters against the registry) and
returns an :class:`ExperimentGrid`, which Snakemake and the CLI use to list
jobs, resolve one job's cell and find the source files it depends on.
Every error names the offending config key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from . import registry
from .api import feedback_kinds
from .delays import delay_schema, make_delay
from .errors import ConfigError, component_path, key_path, rerooting

#: the JSON schema of a config, shipped inside the package (package data)
SCHEMA_PATH = Path(__file__).resolve().parent / "schema.yaml"
NO_BUDGET = "none"


def budget_label(budget: float | None) -> str:
    """The ``{budget}`` wildcard and table label of a budget (``none`` without one)."""
    return NO_BUDGET if budget is None else format(budget, "g")


def load_schema(schema_path: Path = SCHEMA_PATH) -> dict[str, Any]:
    """The config schema, its delay entry generated from :mod:`banditbench.delays`."""
    schema = yaml.safe_load(schema_path.read_text())
    schema["$defs"]["delay"] = delay_schema()
    return schema


def validate_schema(config: Mapping[str, Any], schema_path: Path = SCHEMA_PATH) -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema(schema_path))
    errors = sorted(validator.iter_errors(dict(config)), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"  {key_path(list(e.absolute_path))}: {e.message}" for e in errors[:10]]
        raise ConfigError("invalid configuration:\n" + "\n".join(lines))


@dataclass(frozen=True)
class Experiment:
    name: str
    spec: Mapping[str, Any]
    horizon: int
    seeds: tuple[int, ...]
    budgets: tuple[float | None, ...]
    table_horizons: tuple[int, ...]

    @property
    def algorithms(self) -> list[str]:
        return list(self.spec["algorithms"])

    @property
    def delays(self) -> list[str]:
        return list(self.spec["delays"])

    @property
    def budget_labels(self) -> list[str]:
        return [budget_label(b) for b in self.budgets]

    def env_class(self):
        return registry.get("environment", self.spec["environment"]["name"]).load()

    @property
    def plot_metric(self) -> str:
        return self.spec.get("plot_metric") or self.env_class().primary_metric

    @property
    def extra_plots(self) -> list[str]:
        return list(self.spec.get("extra_plots", []))

    @property
    def per_round_metrics(self) -> list[str]:
        return list(self.spec.get("per_round_metrics", []))


class ExperimentGrid:
    """The validated set of experiments with their jobs."""

    def __init__(self, config: Mapping[str, Any]):
        self.config = config
        self.experiments: dict[str, Experiment] = {}
        for name, spec in config["experiments"].items():
            self.experiments[name] = self._check(name, spec)

    # --- validation -------------------------------------------------------
    def _check(self, name: str, spec: Mapping[str, Any]) -> Experiment:
        where = key_path("experiments", name)
        env_where = component_path(name, "environment")
        env_entry = registry.get("environment", spec["environment"]["name"], key_path(env_where, "name"))
        env_cls = env_entry.load()
        env_params = registry.parameters(env_cls)
        self._check_params(env_cls, spec["environment"].get("params", {}), key_path(env_where, "params"),
                           reserved={"horizon", "budget", "feedback_kind"})
        for label, alg in spec["algorithms"].items():
            awhere = component_path(name, "policy", label)
            pol_cls = registry.get("policy", alg["policy"], key_path(awhere, "policy")).load()
            self._check_params(pol_cls, alg.get("params", {}), key_path(awhere, "params"))
            if pol_cls.feedback_kind not in feedback_kinds(env_cls):
                raise ConfigError(f"{key_path(awhere, 'policy')}: {alg['policy']!r} learns from "
                                  f"{pol_cls.feedback_kind!r} feedback "
                                  f"but environment {spec['environment']['name']!r} gives "
                                  f"{' or '.join(map(repr, feedback_kinds(env_cls)))}")
        for label, delay in spec["delays"].items():
            make_delay(delay, where=key_path(where, "delays", label))
        budgets = tuple(spec.get("budgets", [None]))
        if any(b is not None for b in budgets) and "budget" not in env_params:
            raise ConfigError(f"{key_path(where, 'budgets')}: environment {spec['environment']['name']!r} has no budget; "
                              "remove 'budgets' or use [null]")
        if "budget" in env_params and env_params["budget"] is None and None in budgets:
            raise ConfigError(f"{key_path(where, 'budgets')}: environment {spec['environment']['name']!r} needs a budget; "
                              "list numbers only")
        horizon = int(self.config.get("horizon") or spec["horizon"])
        seeds_spec = self.config.get("seeds") or spec["seeds"]
        seeds = tuple(range(seeds_spec)) if isinstance(seeds_spec, int) else tuple(seeds_spec)
        if self.config.get("horizon"):
            table = tuple(sorted({h for h in spec.get("table_horizons", []) if h < horizon} | {horizon}))
        else:
            table = tuple(sorted(set(spec.get("table_horizons", [horizon]))))
            too_big = [h for h in table if h > horizon]
            if too_big:
                raise ConfigError(f"{key_path(where, 'table_horizons')}: {too_big} exceed the horizon {horizon}")
        for key, metrics in (("plot_metric", [spec.get("plot_metric")]), ("extra_plots", spec.get("extra_plots", [])),
                             ("per_round_metrics", spec.get("per_round_metrics", []))):
            unknown = [m for m in metrics if m is not None and m not in env_cls.metrics]
            if unknown:
                raise ConfigError(f"{key_path(where, key)}: {unknown[0]!r} is not logged by the environment; "
                                  f"choose from {list(env_cls.metrics)}")
        return Experiment(name, spec, horizon, seeds, budgets, table)

    @staticmethod
    def _check_params(cls, params: Mapping[str, Any], where: str, reserved: set[str] = frozenset()) -> None:
        known = set(registry.parameters(cls)) - set(reserved)
        unknown = set(params) - known
        if unknown:
            raise ConfigError(f"{where}: unknown parameter(s) {sorted(unknown)} for {cls.registry_name!r}; "
                              f"known: {sorted(known)}")
        missing = registry.required_parameters(cls) - set(params) - set(reserved)
        if missing:
            raise ConfigError(f"{where}: missing required parameter(s) {sorted(missing)} for {cls.registry_name!r}")

    # --- jobs -------------------------------------------------------------
    def jobs(self, experiment: str) -> Iterator[dict[str, str]]:
        exp = self.experiments[experiment]
        for alg in exp.algorithms:
            for delay in exp.delays:
                for budget in exp.budget_labels:
                    for seed in exp.seeds:
                        yield {"experiment": experiment, "algorithm": alg, "delay": delay,
                               "budget": budget, "seed": str(seed)}

    def cell(self, experiment: str, algorithm: str, delay: str, budget: str, seed: str | int) -> dict[str, Any]:
        """The fully resolved configuration of one job (what the simulation needs, nothing more)."""
        if experiment not in self.experiments:
            raise ConfigError(f"experiments: no experiment {experiment!r}; configured: {sorted(self.experiments)}")
        exp = self.experiments[experiment]
        spec = exp.spec
        for key, value, known in (("algorithms", algorithm, exp.algorithms), ("delays", delay, exp.delays),
                                  ("budgets", budget, exp.budget_labels)):
            if value not in known:
                raise ConfigError(f"{key_path('experiments', experiment, key)}: no entry {value!r}; configured: {known}")
        if int(seed) not in exp.seeds:
            raise ConfigError(f"{key_path('experiments', experiment, 'seeds')}: seed {seed} is not configured "
                              f"({list(exp.seeds)})")
        alg = spec["algorithms"][algorithm]
        return {
            "experiment": experiment,
            "algorithm": algorithm,
            "delay_label": delay,
            "seed": int(seed),
            "horizon": exp.horizon,
            "budget": exp.budgets[exp.budget_labels.index(budget)],
            "environment": {"name": spec["environment"]["name"], "params": dict(spec["environment"].get("params", {}))},
            "policy": {"name": alg["policy"], "params": dict(alg.get("params", {}))},
            "delay": dict(spec["delays"][delay]),
        }

    def cell_json(self, *args) -> str:
        return json.dumps(self.cell(*args), sort_keys=True)

    def sources(self, experiment: str, algorithm: str) -> list[Path]:
        spec = self.experiments[experiment].spec
        return registry.job_sources(spec["environment"]["name"], spec["algorithms"][algorithm]["policy"])

    def data_files(self, experiment: str) -> list[str]:
        """Prepared data files (relative to the working directory) the experiment's environment reads."""
        exp = self.experiments[experiment]
        with rerooting("environment", component_path(experiment, "environment")):
            return list(exp.env_class().required_files(exp.spec["environment"].get("params", {})))


def load_config_file(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file does not exist")
    return yaml.safe_load(path.read_text()) or {}


def load_grid(config: Mapping[str, Any]) -> ExperimentGrid:
    """Validate a config mapping (schema, then semantics) and return its grid."""
    validate_schema(config)
    return ExperimentGrid(config)
