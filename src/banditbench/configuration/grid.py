"""Configuration: JSON-schema validation, semantic checks and expansion into jobs.

A config names experiments; each experiment is one environment and a grid of
algorithms x delays x budgets x seeds.  :func:`load_grid` validates a config
mapping and returns an :class:`ExperimentGrid`, which Snakemake and the CLI use to
list runs (one per seed), group them into jobs (a block of ``seeds_per_job`` seeds
run by one process), resolve one run's cell and find the source files it depends on.

Validation is one pass before any job, once per cell kind (not per seed): the
schema, then registered names and parameter names, every parameter value against
its declared annotation and the class's own relations (:mod:`banditbench.params`),
environment <-> policy compatibility (feedback and action kinds), dataset names and
data files (:meth:`~banditbench.api.Environment.required_files`; data paths must stay
inside the project or the config's ``data_root``), budgets (finite, distinct labels),
a lower bound on a simulate job's memory against its ``resources.mem_mb``, the checksums
pinned in ``dataset_checksums`` (:meth:`ExperimentGrid.unpinned` lists the datasets without a
published checksum that experiments read but no pin covers: their download stops), and the
``summary_tables`` across experiments (:class:`SummaryTable`: configured experiments,
delays, budgets and algorithms, a known metric, one ``ci_level``), the ``plot`` blocks
(:func:`check_plot`: algorithm labels, colours, mathtext in display names) and the ``display`` blocks
(:mod:`banditbench.configuration.display`: every key one of the experiments, algorithms, delays, budgets
or metrics).
Every error names the offending config key.  :func:`load_config_file` reads YAML
strictly: a syntax error names file and line, a duplicate key is refused.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from . import claims
from . import comparisons as paired_checks
from .. import params as param_checks
from .. import registry
from . import devices, runs, slicing, strict_yaml
from . import display as display_names
from ..api import feedback_kinds
from ..simulation.delays import delay_schema, make_delay
from ..data.catalog import PIN_KEY, check_checksums
from ..errors import ConfigError, component_path, did_you_mean, key_path, rerooting
from ..storage import cells
from ..storage.resultio import budget_label

#: the JSON schema of a config, shipped inside the package (package data)
SCHEMA_PATH = Path(__file__).resolve().parent / "schema.yaml"
#: Snakemake resources of a simulate job when the experiment's ``resources`` do not say
SIMULATE_RESOURCES = {"mem_mb": 500, "runtime": 10}
#: confidence level of the tables' intervals and the plots' bands when the config sets no ``ci_level``
DEFAULT_CI_LEVEL = 0.95
#: parameters of an environment that the grid sets, not the config's ``params``
RESERVED_ENVIRONMENT_PARAMS = frozenset({"horizon", "budget", "feedback_kind"})


def load_schema(schema_path: Path = SCHEMA_PATH) -> dict[str, Any]:
    """The config schema, its delay entry generated from :mod:`banditbench.simulation.delays`."""
    schema = yaml.safe_load(schema_path.read_text())
    schema["$defs"]["delay"] = delay_schema()
    return schema


def _strict_validator():
    """JSON-schema validation with the config's number types: an ``integer`` is an int (``2.0`` and
    ``true`` are not: JSON Schema would accept the first), a ``number`` is finite (NaN passes every
    range check, being unordered; ``inf`` is meaningful nowhere in the config)."""
    import jsonschema

    def is_integer(_, value):
        return isinstance(value, int) and not isinstance(value, bool)

    def is_number(_, value):
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine_many({"integer": is_integer, "number": is_number})
    return jsonschema.validators.extend(base, type_checker=checker)


def _schema_range(schema: Mapping[str, Any]) -> str:
    """A number's bounds in a schema, in words (`` >= 1``, `` in (0, 1)``), or ''."""
    low = ("[", schema["minimum"]) if "minimum" in schema else ("(", schema.get("exclusiveMinimum"))
    high = ("]", schema["maximum"]) if "maximum" in schema else (")", schema.get("exclusiveMaximum"))
    if low[1] is not None and high[1] is not None:
        return f" in {low[0]}{low[1]}, {high[1]}{high[0]}"
    if low[1] is not None:
        return f" {'>=' if low[0] == '[' else '>'} {low[1]}"
    if high[1] is not None:
        return f" {'<=' if high[0] == ']' else '<'} {high[1]}"
    return ""


def _schema_message(error) -> str:
    """A schema error in words; a number of the wrong kind says what was wrong with it."""
    import jsonschema

    if error.validator in ("oneOf", "anyOf") and isinstance(error.instance, (float, bool)) and error.context:
        return _schema_message(jsonschema.exceptions.best_match(error.context))
    value = error.instance
    if error.validator == "type" and isinstance(value, bool) and "integer" in str(error.validator_value):
        return f"must be an integer, got {value!r}"
    if error.validator == "type" and isinstance(value, float):
        if "integer" in str(error.validator_value):
            return f"must be an integer, got {value!r}" + (f" (write {int(value)})" if value.is_integer() else "")
        if not math.isfinite(value):
            return f"must be a finite number{_schema_range(error.schema)}, got {value!r}"
    wanted = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
    if (
        error.validator == "type"
        and {"number", "integer"} & set(wanted)
        and param_checks.number_in_string(value) is not None
    ):
        kind = "a number" if "number" in wanted else "an integer"
        return f"must be {kind}{_schema_range(error.schema)}, got {value!r}: {param_checks.READ_AS_STRING}"
    if error.validator == "type" and error.validator_value == "boolean" and isinstance(value, str):
        # snakemake --config reads True / False as booleans, any other spelling as a string
        return f"must be true or false, got the string {value!r} (on the command line: True or False)"
    if error.validator == "enum" and isinstance(value, str):
        return f"{error.message}{did_you_mean(value, error.validator_value)}"
    if error.validator == "maxLength" and isinstance(value, str):
        return f"{value[:30]!r}... is {len(value)} characters long; at most {error.validator_value}"
    if error.validator == "pattern" and isinstance(value, str) and value != value.strip():
        return f"{value!r} has leading or trailing white space (labels: letters, digits, _ . -)"
    return error.message


def validate_schema(config: Mapping[str, Any], schema_path: Path = SCHEMA_PATH) -> None:
    validator = _strict_validator()(load_schema(schema_path))
    errors = sorted(validator.iter_errors(dict(config)), key=lambda e: [str(k) for k in e.absolute_path])
    if errors:
        lines = [f"{key_path(list(e.absolute_path))}: {_schema_message(e)}" for e in errors[:10]]
        if len(lines) == 1:
            raise ConfigError(lines[0])
        raise ConfigError("invalid configuration:\n" + "\n".join("  " + line for line in lines))


@dataclass(frozen=True)
class Experiment:
    name: str
    spec: Mapping[str, Any]
    horizon: int
    seeds: tuple[int, ...]
    budgets: tuple[float | None, ...]
    table_horizons: tuple[int, ...]
    #: prepared data files (relative to the working directory) the environment reads
    data_files: tuple[str, ...] = ()
    seeds_per_job: int = 1
    #: confidence level of the tables' and plots' Student-t intervals
    ci_level: float = DEFAULT_CI_LEVEL
    #: paired comparisons (:func:`banditbench.configuration.comparisons.resolve`), None without
    paired: Mapping[str, Any] | None = None
    #: what the human tables show after the mean: ``ci`` (interval half-width), ``sd``, ``both`` or
    #: ``quantiles`` (:data:`banditbench.analysis.aggregate.SPREADS`)
    spread: str = "ci"
    #: how its figures look: the top-level ``plot`` block overridden by the experiment's, keeping the
    #: ``names``, ``colors`` and ``styles`` of its algorithms (:class:`banditbench.analysis.plots.PlotStyle`);
    #: ``names`` are its algorithms' display names (``plot.names`` and ``display.algorithms``), ``display`` its
    #: other display names (:func:`banditbench.configuration.display.resolve`, when any) and ``variant_of`` each
    #: variant's algorithm (when it has variants: their colours are shades of that algorithm's)
    plot: Mapping[str, Any] = field(default_factory=dict)

    @property
    def algorithms(self) -> list[str]:
        return list(self.spec["algorithms"])

    @property
    def delays(self) -> list[str]:
        return list(self.spec["delays"])

    @property
    def budget_labels(self) -> list[str]:
        return [budget_label(b) for b in self.budgets]

    @property
    def seed_blocks(self) -> list[tuple[int, ...]]:
        """The seeds in order, cut into blocks of ``seeds_per_job``: one simulate job per block."""
        n = self.seeds_per_job
        return [self.seeds[i : i + n] for i in range(0, len(self.seeds), n)]

    def job_priority(self, budget: str, seeds: int, algorithms: int = 1) -> float:
        """A simulate job's Snakemake ``priority``: its estimated length, so that the longest jobs start first and
        the last jobs on a machine's cores are short ones, which finish together (longest processing time first;
        with jobs in arbitrary order eight uneven knapsack jobs on two cores ended 1.13x the wall time of a pool's
        fine-grained order, docs/speed-and-scale.md).  Estimated from what the config states: the experiment's per-job
        time limit (``resources.runtime``, for a whole block of ``seeds_per_job`` seeds of one algorithm) times the
        job's ``seeds`` share of that block and its number of ``algorithms`` (a lockstep job), and, where the
        experiment has budgets, the share of the largest budget that the job's ``budget`` label is (a run ends
        when its budget is spent, so a smaller budget never runs longer)."""
        length = self.resources["runtime"] * seeds / self.seeds_per_job * algorithms
        spent = [b for b in self.budgets if b is not None and b > 0]
        value = next((b for b in self.budgets if b is not None and budget_label(b) == budget), None)
        return length * (value / max(spent) if value is not None and spent else 1.0)

    def env_class(self):
        return registry.get("environment", self.spec["environment"]["name"]).load()

    @property
    def plot_metric(self) -> str:
        return self.spec.get("plot_metric") or self.env_class().primary_metric

    @property
    def plot_seeds(self) -> bool:
        """Whether the main plot draws every seed's curve faintly behind the mean (``plot_seeds``)."""
        return bool(self.spec.get("plot_seeds", False))

    @property
    def extra_plots(self) -> list[str]:
        return list(self.spec.get("extra_plots", []))

    @property
    def panel_plots(self) -> dict[str, dict[str, Any]]:
        """``name -> {caption, metric, panels}`` with ``metric`` defaulting to :attr:`plot_metric`."""
        return {
            name: {
                "caption": spec["caption"],
                "metric": spec.get("metric") or self.plot_metric,
                "panels": {title: list(labels) for title, labels in spec["panels"].items()},
            }
            for name, spec in self.spec.get("panel_plots", {}).items()
        }

    @property
    def display(self) -> dict[str, dict[str, str]]:
        """Its display names, every kind (:func:`banditbench.configuration.display.resolve`): what the tables,
        figures and report captions show."""
        out = dict(self.plot.get("display") or {})
        if self.plot.get("names"):
            out["algorithms"] = dict(self.plot["names"])
        return out

    def display_name(self) -> str:
        """The experiment's display name (its label when it has none)."""
        return (self.plot.get("display") or {}).get("experiments", {}).get(self.name, self.name)

    def metric_name(self, metric: str) -> str:
        """A metric's display name as the figures and report captions give it (readable without one:
        :meth:`banditbench.configuration.display.Names.metric`)."""
        return display_names.Names.of(self.display, figure=True).metric(metric)

    def sweeps(self) -> dict[str, dict[str, Any]]:
        """Its sweeps (``override`` with several values: :mod:`banditbench.configuration.slicing`): per algorithm
        with variants, ``parameters`` (those its variants change, in order) and ``members``: the algorithm and
        each variant, label -> the swept parameters' values (the algorithm's own: configured or default).
        Empty without variants."""
        algorithms = self.spec["algorithms"]
        parents: dict[str, list[str]] = {}
        for label, alg in algorithms.items():
            if alg.get("variant_of") in algorithms:
                parents.setdefault(alg["variant_of"], []).append(label)
        out = {}
        for parent, variants in parents.items():
            pol_cls = registry.get("policy", algorithms[parent]["policy"]).load()
            values = {a: registry.values(pol_cls, algorithms[a].get("params", {})) for a in [parent, *variants]}
            changed = [
                p for v in variants for p in algorithms[v].get("params", {}) if values[v][p] != values[parent].get(p)
            ]
            parameters = list(dict.fromkeys(sorted(changed)))
            if parameters:
                out[parent] = {
                    "parameters": parameters,
                    "members": {a: {p: values[a].get(p) for p in parameters} for a in [parent, *variants]},
                }
        return out

    @property
    def per_round_metrics(self) -> list[str]:
        """The configured ``per_round_metrics``, then the environment's ``rate_metrics`` not among them."""
        configured = list(self.spec.get("per_round_metrics", []))
        return configured + [m for m in self.env_class().rate_metrics if m not in configured]

    def setting(self, kind: str, value: Any, where: str, key: str | None = None) -> str:
        """The label of one of the experiment's ``delay`` or ``budget`` settings (``kind``): ``value``'s, or the only
        one when ``value`` is None; a :class:`ConfigError` names ``where`` (and ``key``, default ``kind``)."""
        known = self.delays if kind == "delay" else self.budget_labels
        key = key or kind
        if value is None:
            if len(known) > 1:
                raise ConfigError(
                    f"{where}: experiment {self.name!r} has the {kind} settings {known}; name one with '{key}'"
                )
            return known[0]
        label = budget_label(value) if kind == "budget" and not isinstance(value, str) else str(value)
        if label not in known:
            raise ConfigError(
                f"{key_path(where, key)}: {value!r} is not a {kind} setting of experiment {self.name!r}"
                f"{did_you_mean(label, known)}; configured: {known}"
            )
        return label

    def check_metric(self, metric: str, where: str) -> None:
        """A ``cumulative_<m>`` metric names one the environment logs, a ``per_round_<m>`` one of the
        experiment's ``per_round_metrics`` (others, e.g. run summaries, are not checked here)."""
        for prefix, kind in (("cumulative_", "metrics"), ("per_round_", "per_round_metrics")):
            if metric.startswith(prefix):
                names = self.env_class().metrics if kind == "metrics" else self.per_round_metrics
                if metric.removeprefix(prefix) not in names:
                    hint = did_you_mean(metric, names, prefix)
                    raise ConfigError(
                        f"{where}: experiment {self.name!r} has no {metric!r}{hint} (its {kind}: {list(names)})"
                    )

    def metric_ranges(self) -> dict[str, tuple[float, float]]:
        """The environment's declared range of each per-round metric under this experiment's parameters
        (:meth:`banditbench.api.Environment.metric_ranges`)."""
        env_cls = self.env_class()
        return dict(env_cls.metric_ranges(registry.values(env_cls, self.spec["environment"].get("params", {}))))

    @property
    def resources(self) -> dict[str, int]:
        """Snakemake resources of the experiment's simulate jobs (``mem_mb``, ``runtime`` in minutes)."""
        return {**SIMULATE_RESOURCES, **self.spec.get("resources", {})}

    def aggregate_params(self) -> dict[str, Any]:
        """What gathering the experiment's results takes: the aggregate rule's params (workflow/rules/aggregate.smk),
        which the Python API (:mod:`banditbench.workbench`) gathers with too.  ``paired`` is the resolved paired
        comparisons (empty without pairs) with what each pair-playing algorithm states about self-duels
        (``self_duels``, which the lock-in line names)."""
        paired = dict(self.paired or {})
        if paired:
            statements = paired_checks.self_duel_statements(self.spec["algorithms"])
            if statements:
                paired["self_duels"] = statements
        return {
            "horizons": list(self.table_horizons),
            "main_metric": f"cumulative_{self.plot_metric}",
            "per_round": self.per_round_metrics,
            "description": self.spec.get("description", ""),
            "ci_level": self.ci_level,
            "spread": self.spread,
            "plot_seeds": self.plot_seeds,
            "paired": paired,
            "plot": dict(self.plot),
        }


@dataclass(frozen=True)
class SummaryTable:
    """A headline table across experiments (``summary_tables.<name>``), checked against the grid.

    One row per entry of ``rows`` (an experiment, with one delay setting and budget), one
    column per algorithm label, each cell ``metric`` at the experiment's final horizon; the
    ``bold`` best cells of each row (``better``: higher or lower) are set in bold.
    ``as_params`` is what the ``summary_table`` rule hands to
    :func:`banditbench.analysis.summary.write_summary_table`.
    """

    name: str
    metric: str
    better: str
    bold: int
    decimals: int
    algorithms: tuple[str, ...]
    #: per row: experiment, group (or ""), label, delay label, budget label
    rows: tuple[dict[str, str], ...]
    ci_level: float
    description: str = ""
    #: display names of its algorithms (columns) and its metric: the first row's experiment's
    display: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @property
    def experiments(self) -> list[str]:
        return list(dict.fromkeys(row["experiment"] for row in self.rows))

    def as_params(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "metric": self.metric,
            "better": self.better,
            "bold": self.bold,
            "decimals": self.decimals,
            "algorithms": list(self.algorithms),
            "rows": [dict(r) for r in self.rows],
            "ci_level": self.ci_level,
            "description": self.description,
            "display": {kind: dict(names) for kind, names in self.display.items()},
        }


class ExperimentGrid:
    """The validated set of experiments with their jobs, and the summary tables across them."""

    def __init__(self, config: Mapping[str, Any]):
        self.config = config
        self._digests: dict[tuple[str, str, str, str], str] = {}
        #: a directory outside the project that data-file parameters may also point into
        self.data_root: str | None = config.get("data_root")
        if self.data_root is not None and not Path(self.data_root).is_dir():
            raise ConfigError(f"data_root: {self.data_root!r} is not a directory")
        #: checksums pinned for datasets whose checksum is not published (``dataset_checksums``)
        self.dataset_checksums: dict[str, str] = check_checksums(config.get(PIN_KEY) or {})
        _distinct_labels(list(config["experiments"]), "experiments")
        paired_checks.check_top(config.get("paired"), config["experiments"])
        every = list(dict.fromkeys(a for spec in config["experiments"].values() for a in spec["algorithms"]))
        check_plot(config.get("plot"), "plot", every, "any experiment")
        self.experiments: dict[str, Experiment] = {}
        for name, spec in config["experiments"].items():
            self.experiments[name] = self._check(name, spec)
        display_names.check(
            config.get("display"),
            "display",
            {
                kind: list(dict.fromkeys(x for e in self.experiments.values() for x in _known(e)[kind]))
                for kind in _KINDS
            },
            "any experiment",
            (config.get("plot") or {}).get("names"),
        )
        #: the papers' claims (:mod:`banditbench.configuration.claims`) and the error rate of each
        self.claims: dict[str, claims.Claim] = claims.resolve(
            config.get("claims"), self.experiments, shortened=bool(config.get("horizon"))
        )
        self.claims_alpha: float = float(config.get("claims_alpha", claims.DEFAULT_ALPHA))
        self.summary_tables: dict[str, SummaryTable] = {
            name: self._check_summary_table(name, spec) for name, spec in config.get("summary_tables", {}).items()
        }

    # --- validation -------------------------------------------------------
    def _check(self, name: str, spec: Mapping[str, Any]) -> Experiment:
        where = key_path("experiments", name)
        horizon = int(self.config.get("horizon") or spec["horizon"])
        env_where = component_path(name, "environment")
        env_name = spec["environment"]["name"]
        env_cls = registry.get("environment", env_name, key_path(env_where, "name")).load()
        env_params = dict(spec["environment"].get("params", {}))
        self._check_values(env_cls, env_params, horizon, "environment", env_where, RESERVED_ENVIRONMENT_PARAMS)
        with rerooting("environment", env_where):
            data_files = tuple(env_cls.required_files(env_params))  # dataset names and their options
        facts = env_cls.known_facts(registry.values(env_cls, env_params))
        for label, alg in spec["algorithms"].items():
            awhere = component_path(name, "policy", label)
            pol_cls = registry.get("policy", alg["policy"], key_path(awhere, "policy")).load()
            self._check_values(pol_cls, alg.get("params", {}), horizon, "policy", awhere)
            if pol_cls.feedback_kind not in feedback_kinds(env_cls):
                raise ConfigError(
                    f"{key_path(awhere, 'policy')}: {alg['policy']!r} learns from "
                    f"{pol_cls.feedback_kind!r} feedback but environment {env_name!r} gives "
                    f"{' or '.join(map(repr, feedback_kinds(env_cls)))}"
                )
            if pol_cls.action_kind != env_cls.action_kind:
                raise ConfigError(
                    f"{key_path(awhere, 'policy')}: {alg['policy']!r} plays {pol_cls.action_kind!r} "
                    f"actions but environment {env_name!r} takes {env_cls.action_kind!r} actions"
                )
            self._check_memory(name, spec, label, env_cls, pol_cls, horizon, facts)
        for label, delay in spec["delays"].items():
            make_delay(delay, where=key_path(where, "delays", label))
        budgets = self._check_budgets(where, env_cls, env_name, spec.get("budgets", [None]))
        seeds_spec = self.config.get("seeds") or spec["seeds"]
        seeds = tuple(range(seeds_spec)) if isinstance(seeds_spec, int) else tuple(seeds_spec)
        if self.config.get("horizon"):
            table = tuple(sorted({h for h in spec.get("table_horizons", []) if h < horizon} | {horizon}))
        else:
            table = tuple(sorted(set(spec.get("table_horizons", [horizon]))))
            too_big = [h for h in table if h > horizon]
            if too_big:
                raise ConfigError(f"{key_path(where, 'table_horizons')}: {too_big} exceed the horizon {horizon}")
        for key, metrics in (
            ("plot_metric", [spec.get("plot_metric")]),
            ("extra_plots", spec.get("extra_plots", [])),
            ("per_round_metrics", spec.get("per_round_metrics", [])),
        ):
            unknown = [m for m in metrics if m is not None and m not in env_cls.metrics]
            if unknown:
                raise ConfigError(
                    f"{key_path(where, key)}: {unknown[0]!r} is not logged by the environment"
                    f"{did_you_mean(unknown[0], env_cls.metrics)}; choose from {list(env_cls.metrics)}"
                )
        for key in ("algorithms", "delays"):
            _distinct_labels(list(spec[key]), key_path(where, key))
        self._check_panel_plots(where, spec, env_cls)
        check_plot(spec.get("plot"), key_path(where, "plot"), list(spec["algorithms"]), "this experiment")
        known = self._check_display(name, spec, env_cls, budgets)
        paired = paired_checks.resolve(
            name, spec, self.config.get("paired"), env_cls.metrics, spec.get("plot_metric") or env_cls.primary_metric
        )
        return Experiment(
            name,
            spec,
            horizon,
            seeds,
            budgets,
            table,
            data_files,
            seeds_per_job=int(self.config.get("seeds_per_job") or spec.get("seeds_per_job", 1)),
            ci_level=float(spec.get("ci_level", self.config.get("ci_level", DEFAULT_CI_LEVEL))),
            paired=paired,
            spread=spec.get("spread", self.config.get("spread", "ci")),
            plot=self._resolved_plot(spec, known),
        )

    def _resolved_plot(self, spec: Mapping[str, Any], known: Mapping[str, list[str]]) -> dict:
        """The experiment's ``plot`` block with its display names and variants (:func:`resolve_plot`)."""
        return resolve_plot(
            self.config.get("plot"),
            spec.get("plot"),
            list(spec["algorithms"]),
            display_names.resolve(
                with_names(self.config.get("display"), self.config.get("plot")),
                with_names(spec.get("display"), spec.get("plot")),
                known,
            ),
            {a: alg["variant_of"] for a, alg in spec["algorithms"].items() if alg.get("variant_of")},
        )

    @staticmethod
    def _check_display(name: str, spec: Mapping[str, Any], env_cls, budgets) -> dict[str, list[str]]:
        """The experiment's ``display`` block names only what it has; return what it has, kind by kind."""
        known = {
            "experiments": [name],
            "algorithms": list(spec["algorithms"]),
            "delays": list(spec["delays"]),
            "budgets": [budget_label(b) for b in budgets],
            "metrics": display_names.metric_names(
                env_cls.metrics, [*spec.get("per_round_metrics", []), *env_cls.rate_metrics]
            ),
        }
        display_names.check(
            spec.get("display"),
            key_path("experiments", name, "display"),
            known,
            "this experiment",
            (spec.get("plot") or {}).get("names"),
        )
        return known

    def _check_summary_table(self, name: str, spec: Mapping[str, Any]) -> SummaryTable:
        """Every row names a configured experiment (and one of its delay settings and budgets when it
        has several); every column an algorithm label of each row's experiment; the metric one
        the tables hold; one confidence level across the rows."""
        where = key_path("summary_tables", name)
        rows = []
        for i, row in enumerate(spec["rows"]):
            rwhere = key_path(where, "rows", i)
            if row["experiment"] not in self.experiments:
                raise ConfigError(
                    f"{key_path(rwhere, 'experiment')}: {row['experiment']!r} is not an experiment of this config"
                    f"{did_you_mean(row['experiment'], self.experiments)}; configured: {sorted(self.experiments)}"
                )
            exp = self.experiments[row["experiment"]]
            rows.append(
                {
                    "experiment": exp.name,
                    "group": str(row.get("group", "")),
                    "label": str(row["label"]),
                    "delay": exp.setting("delay", row.get("delay"), rwhere),
                    "budget": exp.setting("budget", budget_label(row["budget"]) if "budget" in row else None, rwhere),
                }
            )
        experiments = [self.experiments[r["experiment"]] for r in rows]
        algorithms = tuple(spec.get("algorithms") or experiments[0].algorithms)
        for exp in experiments:
            missing = [a for a in algorithms if a not in exp.algorithms]
            if missing:
                raise ConfigError(
                    f"{key_path(where, 'algorithms')}: {missing} not among the algorithms of experiment "
                    f"{exp.name!r}{did_you_mean(missing[0], exp.algorithms)} ({exp.algorithms})"
                )
        metric = spec["metric"]
        for exp in experiments:
            exp.check_metric(metric, key_path(where, "metric"))
        levels = sorted({exp.ci_level for exp in experiments})
        if len(levels) > 1:
            raise ConfigError(
                f"{key_path(where, 'rows')}: the experiments' ci_level differ ({levels}); one table "
                f"needs one confidence level"
            )
        return SummaryTable(
            name,
            metric,
            spec["better"],
            int(spec.get("bold", 3)),
            int(spec.get("decimals", 2)),
            algorithms,
            tuple(rows),
            levels[0],
            spec.get("description", ""),
            {k: v for k, v in experiments[0].display.items() if k in ("algorithms", "metrics")},
        )

    @staticmethod
    def _check_panel_plots(where: str, spec: Mapping[str, Any], env_cls) -> None:
        """Every panel plot draws algorithms of this experiment and a metric the environment logs."""
        _distinct_labels(list(spec.get("panel_plots", {})), key_path(where, "panel_plots"))
        for name, plot in spec.get("panel_plots", {}).items():
            pwhere = key_path(where, "panel_plots", name)
            metric = plot.get("metric")
            if metric is not None and metric not in env_cls.metrics:
                raise ConfigError(
                    f"{key_path(pwhere, 'metric')}: {metric!r} is not logged by the environment"
                    f"{did_you_mean(metric, env_cls.metrics)}; choose from {list(env_cls.metrics)}"
                )
            for title, labels in plot["panels"].items():
                unknown = [a for a in labels if a not in spec["algorithms"]]
                if unknown:
                    raise ConfigError(
                        f"{key_path(pwhere, 'panels', title)}: {unknown[0]!r} is not an algorithm of this experiment"
                        f"{did_you_mean(unknown[0], spec['algorithms'])}; its algorithms are {list(spec['algorithms'])}"
                    )

    def unpinned(self) -> dict[str, list[str]]:
        """Datasets without a published checksum that experiments read but ``dataset_checksums`` does not
        pin, with those experiments: their download stops, saying how to pin one (not a config error, so
        that a grid can be validated and planned before its data are at hand)."""
        from ..data.paths import pinned_datasets

        out: dict[str, list[str]] = {}
        for name, exp in self.experiments.items():
            for dataset in dict.fromkeys(d for path in exp.data_files for d in pinned_datasets(path)):
                if dataset not in self.dataset_checksums:
                    out.setdefault(dataset, []).append(name)
        return out

    def _check_values(
        self,
        cls,
        values: Mapping[str, Any],
        horizon: int,
        component: str,
        where: str,
        reserved: frozenset[str] = frozenset(),
    ) -> None:
        """Names, then values (annotations, data files, relations) of a component's ``params``."""
        from ..data.paths import buildable

        pwhere = key_path(where, "params")
        known = set(registry.parameters(cls)) - reserved
        unknown = set(values) - known
        if unknown:
            first = sorted(unknown)[0]
            raise ConfigError(
                f"{pwhere}: unknown parameter(s) {sorted(unknown)} for {cls.registry_name!r}"
                f"{did_you_mean(first, known)}; known: {sorted(known)}"
            )
        missing = registry.required_parameters(cls) - set(values) - reserved
        if missing:
            raise ConfigError(f"{pwhere}: missing required parameter(s) {sorted(missing)} for {cls.registry_name!r}")
        param_checks.check(cls, values, pwhere, data_root=self.data_root, buildable=buildable)
        with rerooting(component, where):
            cls.check_params(registry.values(cls, values), horizon)

    def _check_memory(
        self, name: str, spec: Mapping[str, Any], label: str, env_cls, pol_cls, horizon: int, facts: Mapping[str, Any]
    ) -> None:
        """A simulate job's arrays must fit in its ``resources.mem_mb`` (a lower bound: see the hooks)."""
        from ..simulation.runner import memory_bytes

        env_params = spec["environment"].get("params", {})
        pol_params = spec["algorithms"][label].get("params", {})
        parts = {
            "the loop's logs": memory_bytes(env_cls, horizon),
            "the environment": env_cls.memory_bytes(registry.values(env_cls, env_params), horizon),
            "the policy": pol_cls.memory_bytes(registry.values(pol_cls, pol_params), horizon, facts),
        }
        need = sum(parts.values()) / 2**20
        mem_mb = spec.get("resources", {}).get("mem_mb", SIMULATE_RESOURCES["mem_mb"])
        if need > mem_mb:
            detail = ", ".join(f"{k} {v / 2**20:,.0f}" for k, v in parts.items())
            raise ConfigError(
                f"{key_path('experiments', name, 'resources', 'mem_mb')}: a simulate job of algorithm "
                f"{label!r} needs at least {need:,.0f} MiB for its arrays at horizon {horizon:,} "
                f"({detail}), more than mem_mb = {mem_mb}; lower the horizon or raise "
                f"experiments.{name}.resources.mem_mb"
            )

    @staticmethod
    def _check_budgets(where: str, env_cls, env_name: str, budgets: list) -> tuple[float | None, ...]:
        env_params = registry.parameters(env_cls)
        bwhere = key_path(where, "budgets")
        if any(b is not None for b in budgets) and "budget" not in env_params:
            raise ConfigError(f"{bwhere}: environment {env_name!r} has no budget; remove 'budgets' or use [null]")
        if "budget" in env_params and env_params["budget"] is None and None in budgets:
            raise ConfigError(f"{bwhere}: environment {env_name!r} needs a budget; list numbers only")
        bad = [b for b in budgets if b is not None and not math.isfinite(b)]
        if bad:
            raise ConfigError(f"{bwhere}: budgets must be finite numbers, got {bad[0]!r}")
        _distinct_labels([budget_label(b) for b in budgets], bwhere)
        return tuple(budgets)

    # --- claims -----------------------------------------------------------
    def claim_experiments(self) -> list[str]:
        """The experiments whose results the claims read (in the claims' order)."""
        return list(dict.fromkeys(c.experiment for c in self.claims.values() if c.experiment and not c.skipped))

    def claims_params(self) -> dict[str, Any]:
        """The claims as the ``claims`` rule's params (:func:`banditbench.configuration.claims.as_params`)."""
        return claims.as_params(self.claims, self.claims_alpha)

    # --- jobs -------------------------------------------------------------
    def jobs(self, experiment: str) -> Iterator[dict[str, str]]:
        """Every run (one seed, one result file) of an experiment, as wildcard values (``cell``: the digest
        folder of its per-seed results, :func:`banditbench.storage.cells.cell_digest`)."""
        exp = self.experiments[experiment]
        for alg in exp.algorithms:
            for delay in exp.delays:
                for budget in exp.budget_labels:
                    digest = self.cell_digest(experiment, alg, delay, budget)
                    for seed in exp.seeds:
                        yield {
                            "experiment": experiment,
                            "algorithm": alg,
                            "delay": delay,
                            "budget": budget,
                            "cell": digest,
                            "seed": str(seed),
                        }

    def result_files(self, experiment: str) -> list[str]:
        """Every per-seed result file of an experiment (:data:`~banditbench.storage.cells.RESULT_PATH`), in
        :meth:`jobs` order: what its aggregation reads."""
        return [cells.RESULT_PATH.format(**job) for job in self.jobs(experiment)]

    def cell_digest(self, experiment: str, algorithm: str, delay: str, budget: str) -> str:
        """The ``{cell}`` folder of a cell's per-seed results (:func:`banditbench.storage.cells.cell_digest`)."""
        key = (experiment, algorithm, delay, budget)
        if key not in self._digests:
            self._digests[key] = cells.cell_digest(self.cell(experiment, algorithm, delay, budget, None))
        return self._digests[key]

    def cell_dir(self, experiment: str, algorithm: str, delay: str, budget: str) -> str:
        """The folder of a cell's per-seed result files (:data:`banditbench.storage.cells.CELL_DIR`)."""
        digest = self.cell_digest(experiment, algorithm, delay, budget)
        return cells.CELL_DIR.format(
            experiment=experiment, algorithm=algorithm, delay=delay, budget=budget, cell=digest
        )

    def seed_blocks(self) -> dict[tuple[int, ...], list[str]]:
        """Each distinct block of seeds that one simulate job of one algorithm runs, with the experiments cutting
        it (those not run in lockstep across algorithms: :meth:`variant_jobs`)."""
        blocks: dict[tuple[int, ...], list[str]] = {}
        for name, exp in self.experiments.items():
            if not self.lockstep_variants:
                for block in exp.seed_blocks:
                    blocks.setdefault(block, []).append(name)
        return blocks

    @property
    def lockstep_variants(self) -> bool:
        """Whether one simulate job plays all the algorithms of a cell that one seed-batched engine can hold
        (``lockstep_variants``: e.g. seed 001's six NVLDB variants, one block of 6 x seeds_per_job members)."""
        return bool(self.config.get("lockstep_variants"))

    def variant_groups(self, experiment: str) -> list[tuple[str, ...]]:
        """The experiment's algorithms in groups that can share a seed-batched block
        (:func:`banditbench.simulation.runner.lockstep_key`), in configured order; an algorithm no other can
        join, or without a seed-batched engine, is a group of one."""
        from ..simulation.runner import lockstep_key

        exp = self.experiments[experiment]
        delay, budget = exp.delays[0], exp.budget_labels[0]  # a group does not depend on the delay and budget
        groups: dict[tuple, list[str]] = {}
        for algorithm in exp.algorithms:
            groups.setdefault(lockstep_key(self.cell(experiment, algorithm, delay, budget, None)), []).append(algorithm)
        return [tuple(g) for g in groups.values()]

    def variant_jobs(self) -> list[tuple[str, tuple[str, ...], str, str, tuple[int, ...]]]:
        """With ``lockstep_variants``: each ``(experiment, algorithms, delay, budget, seeds)`` one simulate job
        plays, the algorithms of one of :meth:`variant_groups` for one block of seeds."""
        if not self.lockstep_variants:
            return []
        return [
            (name, group, delay, budget, block)
            for name, exp in self.experiments.items()
            for group in self.variant_groups(name)
            for delay in exp.delays
            for budget in exp.budget_labels
            for block in exp.seed_blocks
        ]

    def cell(self, experiment: str, algorithm: str, delay: str, budget: str, seed: str | int | None) -> dict[str, Any]:
        """The fully resolved configuration of one run (what the simulation needs, nothing more).

        With ``seed=None`` the cell common to all seeds (no ``seed`` key): what a block job receives.
        """
        if experiment not in self.experiments:
            raise ConfigError(f"experiments: no experiment {experiment!r}; configured: {sorted(self.experiments)}")
        exp = self.experiments[experiment]
        spec = exp.spec
        for key, value, known in (
            ("algorithms", algorithm, exp.algorithms),
            ("delays", delay, exp.delays),
            ("budgets", budget, exp.budget_labels),
        ):
            if value not in known:
                raise ConfigError(
                    f"{key_path('experiments', experiment, key)}: no entry {value!r}; configured: {known}"
                )
        if seed is not None and int(seed) not in exp.seeds:
            raise ConfigError(
                f"{key_path('experiments', experiment, 'seeds')}: seed {seed} is not configured ({list(exp.seeds)})"
            )
        alg = spec["algorithms"][algorithm]
        plugins = registry.cell_plugins(spec["environment"]["name"], alg["policy"])
        return {
            **({"data_root": self.data_root} if self.data_root is not None else {}),
            **({"plugins": plugins} if plugins else {}),
            "experiment": experiment,
            "algorithm": algorithm,
            "delay_label": delay,
            **({} if seed is None else {"seed": int(seed)}),
            "horizon": exp.horizon,
            "budget": exp.budgets[exp.budget_labels.index(budget)],
            "environment": {"name": spec["environment"]["name"], "params": dict(spec["environment"].get("params", {}))},
            "policy": {"name": alg["policy"], "params": dict(alg.get("params", {}))},
            "delay": dict(spec["delays"][delay]),
        }

    def gpus(self, experiment: str, *algorithms: str) -> int:
        """The Snakemake resource ``gpu`` of a simulate job: 1 when a policy it plays runs on ``cuda``
        (its ``params.device``, or the grid-wide ``device``), else 0."""
        spec = self.experiments[experiment].spec["algorithms"]
        return int(any(spec[a].get("params", {}).get(devices.KEY) == "cuda" for a in algorithms))

    def cell_json(self, *args) -> str:
        return json.dumps(self.cell(*args), sort_keys=True)

    def sources(self, experiment: str, *algorithms: str) -> list[Path]:
        """The source files of a simulate job playing ``algorithms`` (one, or a lockstep group) in ``experiment``."""
        spec = self.experiments[experiment].spec
        env = spec["environment"]["name"]
        return sorted({f for a in algorithms for f in registry.job_sources(env, spec["algorithms"][a]["policy"])})

    def data_files(self, experiment: str) -> list[str]:
        """Prepared data files (relative to the working directory) the experiment's environment reads."""
        return list(self.experiments[experiment].data_files)


def unpinned_note(dataset: str, experiments: list[str]) -> str:
    """What to do about a dataset whose checksum is neither published nor pinned (:meth:`ExperimentGrid.unpinned`)."""
    return (
        f"experiment(s) {', '.join(experiments)} read dataset {dataset!r}, which has no published checksum and "
        f"none pinned: its download stops until {PIN_KEY}.{dataset} is set to the sha256 of your copy (the config "
        f'line {PIN_KEY}: {{{dataset}: "sha256:<64 hex>"}}; `banditbench checksum <file>` prints it; '
        f"docs/datasets.md)"
    )


#: the keys of a ``plot`` block that map algorithm labels to something
PLOT_LABEL_KEYS = ("names", "colors", "styles")


def check_plot(plot: Mapping[str, Any] | None, where: str, algorithms: list[str], scope: str) -> None:
    """A ``plot`` block (:data:`PLOT_LABEL_KEYS` past the schema): every label one of ``algorithms`` (of
    ``scope``: "this experiment", "any experiment"), every colour one matplotlib knows, every display
    name with ``$ ... $`` valid mathtext; a :class:`ConfigError` names the key."""
    if not plot:
        return
    for key in PLOT_LABEL_KEYS:
        for label in plot.get(key) or {}:
            if label not in algorithms:
                raise ConfigError(
                    f"{key_path(where, key, label)}: {label!r} is not an algorithm of {scope}"
                    f"{did_you_mean(label, algorithms)}; its algorithms: {algorithms}"
                )
    if plot.get("colors"):
        from matplotlib.colors import is_color_like

        for label, colour in plot["colors"].items():
            if not is_color_like(colour):
                raise ConfigError(
                    f"{key_path(where, 'colors', label)}: {colour!r} is not a colour matplotlib knows "
                    f"(e.g. 'tab:blue', 'C3', '#1f77b4', 'black', '0.4')"
                )
    for label, name in (plot.get("names") or {}).items():
        display_names.check_mathtext(name, key_path(where, "names", label))


def resolve_plot(
    top: Mapping[str, Any] | None,
    own: Mapping[str, Any] | None,
    algorithms: list[str],
    display: Mapping[str, Mapping[str, str]] | None = None,
    variant_of: Mapping[str, str] | None = None,
) -> dict:
    """An experiment's ``plot`` block: the top-level one overridden by its own key by key, the entries of
    :data:`PLOT_LABEL_KEYS` label by label, keeping its ``algorithms``' labels only; with its resolved
    ``display`` names (:func:`with_names`, :func:`banditbench.configuration.display.resolve`): ``names`` the
    algorithms' display names, ``display`` the others; ``variant_of``: each variant's algorithm."""
    top, own = dict(top or {}), dict(own or {})
    out = {k: v for k, v in {**top, **own}.items() if k not in PLOT_LABEL_KEYS}
    for key in PLOT_LABEL_KEYS:
        merged = {a: v for a, v in {**(top.get(key) or {}), **(own.get(key) or {})}.items() if a in algorithms}
        if merged:
            out[key] = merged
    display = dict(display or {})
    names = display.pop("algorithms", {})
    if names:
        out["names"] = names
    if display:
        out["display"] = display
    if variant_of:
        out["variant_of"] = dict(variant_of)
    return out


_KINDS = display_names.KINDS


def with_names(display: Mapping[str, Any] | None, plot: Mapping[str, Any] | None) -> dict:
    """A ``display`` block with its sibling ``plot.names`` as algorithm names (their alias: one level's
    names, of either key, override the top level's)."""
    display = dict(display or {})
    names = (plot or {}).get("names") or {}
    if names:
        display["algorithms"] = {**names, **(display.get("algorithms") or {})}
    return display


def _known(exp: "Experiment") -> dict[str, list[str]]:
    """What an experiment's display names may name, kind by kind."""
    env_cls = exp.env_class()
    return {
        "experiments": [exp.name],
        "algorithms": exp.algorithms,
        "delays": exp.delays,
        "budgets": exp.budget_labels,
        "metrics": display_names.metric_names(env_cls.metrics, exp.per_round_metrics),
    }


def _distinct_labels(labels: list[str], where: str) -> None:
    """Labels become file and folder names: two that differ only in case would share them on a
    case-insensitive file system."""
    seen: dict[str, str] = {}
    for label in labels:
        other = seen.setdefault(label.casefold(), label)
        if other != label or labels.count(label) > 1:
            raise ConfigError(
                f"{where}: labels {other!r} and {label!r} name the same files "
                f"(labels must differ in more than letter case)"
            )


def load_config_file(path: str | Path) -> dict[str, Any]:
    """A config file's mapping; a YAML error names the file and line, a duplicate key is an error, and
    ``1e-3`` is a number (YAML 1.2: :mod:`banditbench.configuration.strict_yaml`)."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{path}: a folder, not a config file")
    if not path.is_file():
        raise ConfigError(f"{path}: config file does not exist")
    try:
        data = strict_yaml.load(path.read_text())
    except OSError as err:  # unreadable: no permission, an I/O error
        raise ConfigError(f"{path}: cannot read the config file ({err.strerror or err})") from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ConfigError(f"{where}: {err.problem or err.context}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: not a YAML file ({err})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: a config is a mapping of keys (seeds, horizon, experiments), got a {type(data).__name__}"
        )
    return data


def checked(call, *args):
    """``call(*args)`` for the Snakefile: a :class:`ConfigError` stops the workflow with its message
    (a ``WorkflowError``, which Snakemake prints without a traceback)."""
    from snakemake.exceptions import WorkflowError

    try:
        return call(*args)
    except ConfigError as err:
        raise WorkflowError(str(err)) from None


def load_grid(config: Mapping[str, Any]) -> ExperimentGrid:
    """Validate a config mapping (schema, then semantics) and return its grid, cut and varied by the
    slicing keys (:mod:`banditbench.configuration.slicing`: ``only_experiments``, ``only_algorithms``, ``override``),
    with the grid-wide ``device`` set on every policy that has one (:mod:`banditbench.configuration.devices`)."""
    config = claims.with_claims_files(config, load_config_file)
    runs.check_run_type(config)
    validate_schema(config)
    registry.use_plugins(config.get("plugins", []))
    return ExperimentGrid(devices.apply(slicing.apply(config)))


def config_cell(
    config_file: str, experiment: str, algorithm: str, delay: str, budget: str, seed: int, horizon: int | None = None
) -> dict:
    """The resolved cell of ``config_file`` that these labels and seed pick (``horizon``: its horizon overridden)."""
    config = load_config_file(config_file)
    if horizon is not None:
        config["horizon"] = horizon
    return load_grid(config).cell(experiment, algorithm, delay, budget, seed)
