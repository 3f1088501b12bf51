"""Slicing a grid from the command line: a subset of experiments and algorithms, and parameter overrides.

Three top-level config keys, flat so that ``snakemake --config`` can set them (Snakemake parses flat
values; a nested value arrives as a string)::

    only_experiments=linear_delayed_dueling,digits_dueling     # keep these experiments
    only_algorithms=ldb_df,ldb_zero                            # keep these algorithm labels
    override=ldb_df.lam=2                                      # run ldb_df with lam = 2 as well

Each takes a comma-separated string or a list.  ``override`` entries read
``[EXPERIMENT/]ALGORITHM.PARAMETER=VALUE[,VALUE...]`` (each VALUE in YAML: ``2``, ``0.5``, ``1e-3``, ``true``,
``reset``, ``[1,2]``; a comma inside brackets belongs to the value; several entries separated by spaces
or given as a list).  An override runs the algorithm with the parameter changed as a *variant* under
its own label, ``ALGORITHM.PARAMETER-VALUE`` (e.g. ``ldb_df.lam-2``), placed right after the configured
algorithm, which runs too: the variant's results go to their own folder and never overwrite the
configured ones.  Several values sweep the parameter, one variant each; several parameters of one
algorithm combine into their product (``ldb_df.beta-0.5.lam-2``, ...).  A variant records the algorithm
it varies (``variant_of``), and its paired comparison is against that algorithm.  A parameter given twice
is refused.
``only_algorithms`` may name variant labels; it keeps a variant when it names the variant or the
algorithm it varies.

Order: experiments are cut first, then variants are added, then algorithms are cut; an experiment
left without algorithms is dropped (an experiment that has none of the named algorithms), and so are
the summary-table rows, panel-plot entries, paired comparisons, claims and ``plot`` names, colours and styles
that name what was cut (only that: a name that never existed is left for the grid's checks to refuse).  A
slicing name that matches nothing is an error naming its key (``only_algorithms: 'ldb_dff' is not an algorithm of ...``),
raised by :func:`apply` before the grid is validated — and so before any job.  The override's value is
then checked like any configured parameter, under the variant's key path
(``experiments.<e>.algorithms.ldb_df.lam-2.params.lam: must be ...``).
"""

from __future__ import annotations

import copy
import itertools
import re
from typing import Any, Mapping

import yaml

from .. import registry
from . import strict_yaml
from ..errors import ConfigError, did_you_mean, key_path

KEYS = ("only_experiments", "only_algorithms", "override")
#: the longest label (the schema's ``$defs.label.maxLength``): a label is one part of a file name
LABEL_MAX = 100
#: characters a label may hold (the wildcards' and the schema's label pattern)
_LABEL_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def names(value: Any, key: str) -> list[str] | None:
    """A slicing key's value as a list of names: None when unset; a comma-separated string or a list."""
    if value is None:
        return None
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    out = [str(item).strip() for item in items if str(item).strip()]
    if not out:
        raise ConfigError(f"{key}: names no {key.removeprefix('only_')}; give one or more, comma-separated")
    return out


def _split_top(text: str, separators: str) -> list[tuple[str, str]]:
    """``text`` cut at ``separators`` outside brackets: (piece, the separator before it) pairs."""
    pieces, depth, current, before = [], 0, "", ""
    for ch in text:
        depth += ch in "[{"
        depth -= ch in "]}"
        if depth == 0 and (ch in separators or (ch.isspace() and " " in separators)):
            if current.strip():
                pieces.append((current.strip(), before))
                before = ""
            current = ""
            before = before if before == "," else ("," if ch == "," else " ")
        else:
            current += ch
    if current.strip():
        pieces.append((current.strip(), before))
    return pieces


def _split_overrides(value: Any) -> list[str]:
    """Override entries: a list, or a string of entries separated by spaces, ``;`` or commas outside brackets.
    A comma followed by a piece without ``=`` adds a value to the entry before (``ldb_df.beta=0.5,1,2``)."""
    if value is None:
        return []
    items = [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
    entries: list[str] = []
    for item in items:
        for piece, before in _split_top(item, " ,;"):
            if "=" not in piece and before == "," and entries:
                entries[-1] += "," + piece
            else:
                entries.append(piece)
    return entries


def parse_override(entry: str, where: str) -> tuple[str | None, str, str, list[Any]]:
    """``[EXPERIMENT/]ALGORITHM.PARAMETER=VALUE[,VALUE...]`` -> (experiment or None, algorithm, parameter,
    values): several values sweep the parameter, one variant each."""
    target, eq, text = entry.partition("=")
    algorithm, dot, parameter = target.rpartition(".")
    if not eq or not dot or not algorithm or not parameter.isidentifier() or not text:
        raise ConfigError(
            f"{where}: {entry!r} is not ALGORITHM.PARAMETER=VALUE (or "
            f"EXPERIMENT/ALGORITHM.PARAMETER=VALUE), e.g. ldb_df.lam=2"
        )
    experiment, slash, algorithm = algorithm.rpartition("/")
    values = []
    for piece, _ in _split_top(text, ","):
        try:
            values.append(strict_yaml.load(piece))  # 1e-3 a number, as in a config file
        except yaml.YAMLError as err:
            raise ConfigError(f"{where}: the value {piece!r} of {entry!r} is not YAML ({err})") from None
    repeated = [v for k, v in enumerate(values) if v in values[:k]]
    if repeated:
        raise ConfigError(f"{where}: {entry!r} gives the value {repeated[0]!r} twice")
    return (experiment if slash else None), algorithm, parameter, values


def _value_label(value: Any) -> str:
    """A parameter value as it appears in a variant's label (only label characters)."""
    if isinstance(value, bool) or value is None:
        text = str(value).lower()
    elif isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        text = repr(value)
    else:
        text = (
            yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
            if isinstance(value, (list, dict))
            else str(value)
        )
    return _LABEL_CHARS.sub("_", text.replace(" ", ""))


def variant_label(algorithm: str, params: Mapping[str, Any]) -> str:
    """The label of ``algorithm`` with ``params`` overridden: ``ldb_df.lam-2``, ``ldb_df.beta-0.5.lam-2``."""
    return algorithm + "".join(f".{name}-{_value_label(params[name])}" for name in sorted(params))


def is_sliced(config: Mapping[str, Any]) -> bool:
    return any(config.get(key) not in (None, "", []) for key in KEYS)


def apply(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The config with the slicing keys applied (module docstring); ``config`` itself when none is set."""
    if not is_sliced(config) or not isinstance(config.get("experiments"), Mapping):
        return config
    config = copy.deepcopy(dict(config))
    experiments: dict[str, Any] = dict(config["experiments"])

    keep = names(config.get("only_experiments"), "only_experiments")
    if keep is not None:
        experiments = _only_experiments(experiments, keep)

    variants_of: dict[tuple[str, str], str] = {}  # (experiment, variant label) -> configured label
    for (name, alg), swept in _overrides(config, experiments).items():
        spec = experiments[name] = copy.deepcopy(experiments[name])
        for combination in itertools.product(*swept.values()):
            _add_variant(spec, name, alg, dict(zip(swept, combination)), variants_of)

    wanted = names(config.get("only_algorithms"), "only_algorithms")
    if wanted is not None:
        _only_algorithms(experiments, wanted, variants_of, kept=keep is not None)
    if not experiments:
        raise ConfigError("only_experiments / only_algorithms: nothing is left to run")
    configured = {name: set(spec["algorithms"]) for name, spec in config["experiments"].items()}
    for name, spec in experiments.items():
        _prune_references(spec, name, cut=configured[name] - set(spec["algorithms"]), configured=configured[name])
    cut = _Cut(configured, {name: set(spec["algorithms"]) for name, spec in experiments.items()})
    _prune_display(config, experiments)
    config["experiments"] = experiments
    _prune_plot(config, cut)
    _prune_summary_tables(config, cut)
    _prune_claims(config, cut)
    return config


def _only_experiments(experiments: dict[str, Any], keep: list[str]) -> dict[str, Any]:
    """The experiments ``only_experiments`` keeps; a name that is not one of them is an error."""
    unknown = [e for e in keep if e not in experiments]
    if unknown:
        raise ConfigError(
            f"only_experiments: {unknown[0]!r} is not an experiment of this config"
            f"{did_you_mean(unknown[0], experiments)}; configured: {list(experiments)}"
        )
    return {name: spec for name, spec in experiments.items() if name in keep}


def _overrides(config: Mapping[str, Any], experiments: dict[str, Any]) -> dict[tuple[str, str], dict[str, list[Any]]]:
    """The ``override`` entries, checked against the kept experiments and their policies' parameters:
    (experiment, algorithm) -> parameter -> the values it sweeps."""
    overrides: dict[tuple[str, str], dict[str, list[Any]]] = {}
    for i, entry in enumerate(_split_overrides(config.get("override"))):
        exp, alg, param, values = parse_override(entry, key_path("override", i))
        if exp is not None and exp not in experiments:
            raise ConfigError(
                f"{key_path('override', i)}: {entry!r} names experiment {exp!r}, which is not "
                f"{'kept' if exp in config['experiments'] else 'configured'}; "
                f"experiments: {list(experiments)}"
            )
        targets = [name for name, spec in experiments.items() if (exp in (None, name)) and alg in spec["algorithms"]]
        if not targets:
            raise ConfigError(
                f"{key_path('override', i)}: {entry!r} names algorithm {alg!r}, which is not an "
                f"algorithm of {'experiment ' + repr(exp) if exp else 'any experiment kept'}"
                f"{did_you_mean(alg, (a for s in experiments.values() for a in s['algorithms']))}; "
                f"algorithms: {sorted({a for s in experiments.values() for a in s['algorithms']})}"
            )
        for name in targets:
            policy = experiments[name]["algorithms"][alg]["policy"]
            known = registry.parameters(
                registry.get("policy", policy, key_path("experiments", name, "algorithms", alg, "policy")).load()
            )
            if param not in known:
                raise ConfigError(
                    f"{key_path('override', i)}: {param!r} is not a parameter of policy {policy!r} "
                    f"(algorithm {alg!r} of experiment {name!r}){did_you_mean(param, known)}; "
                    f"its parameters: {sorted(known)}"
                )
            given = overrides.setdefault((name, alg), {})
            if param in given:
                raise ConfigError(
                    f"{key_path('override', i)}: {entry!r} sets {alg}.{param} of experiment {name!r} a second "
                    f"time (already {', '.join(map(repr, given[param]))}); give each parameter once (a sweep: "
                    f"{alg}.{param}=a,b,c)"
                )
            given[param] = values
    return overrides


def _only_algorithms(
    experiments: dict[str, Any], wanted: list[str], variants_of: Mapping[tuple[str, str], str], kept: bool
) -> None:
    """Cut ``experiments`` to the algorithms ``only_algorithms`` names (a variant stays when it or the algorithm
    it varies is named) and drop the experiments left without any; ``kept``: ``only_experiments`` was given
    (the error's wording)."""
    every = {a for spec in experiments.values() for a in spec["algorithms"]}
    unknown = [a for a in wanted if a not in every]
    if unknown:
        raise ConfigError(
            f"only_algorithms: {unknown[0]!r} is not an algorithm of "
            f"{'the experiments kept' if kept else 'any experiment'}{did_you_mean(unknown[0], every)}; "
            f"algorithms: {sorted(every)}"
        )
    for name in list(experiments):
        spec = experiments[name] = copy.deepcopy(experiments[name])
        spec["algorithms"] = {
            a: s for a, s in spec["algorithms"].items() if a in wanted or variants_of.get((name, a)) in wanted
        }
        if not spec["algorithms"]:
            del experiments[name]


def _add_variant(spec: dict, name: str, alg: str, params: dict[str, Any], variants_of: dict) -> None:
    """Add the variant of ``alg`` with ``params`` to the experiment ``spec``, after ``alg``'s other variants;
    it records the algorithm it varies (``variant_of``: its paired comparison is against that one)."""
    label = variant_label(alg, params)
    if len(label) > LABEL_MAX:
        raise ConfigError(
            f"override: the variant label {label[:30]!r}... is {len(label)} characters long; at most "
            f"{LABEL_MAX} (a label is part of file names): override fewer parameters or shorter values"
        )
    if label in spec["algorithms"]:
        raise ConfigError(
            f"override: the variant label {label!r} is already an algorithm of experiment {name!r}; rename that algorithm"
        )
    variant = copy.deepcopy(spec["algorithms"][alg])
    variant["params"] = {**variant.get("params", {}), **params}
    variant["variant_of"] = alg
    after = [a for a in spec["algorithms"] if a == alg or variants_of.get((name, a)) == alg][-1]
    algorithms = {}
    for other, other_spec in spec["algorithms"].items():
        algorithms[other] = other_spec
        if other == after:
            algorithms[label] = variant
    spec["algorithms"] = algorithms
    variants_of[(name, label)] = alg


class _Cut:
    """What a slice cut: the configured experiments and algorithms that it does not keep.  References are
    pruned only when they name what was cut; a name that never existed stays, so the grid's checks refuse
    it whatever the slice keeps."""

    def __init__(self, configured: Mapping[str, set[str]], kept: Mapping[str, set[str]]):
        self.configured, self.kept = configured, kept

    def experiment(self, name: Any) -> bool:
        return name in self.configured and name not in self.kept

    def unknown(self, experiment: Any, label: Any) -> bool:
        """Whether ``label`` names no configured algorithm of ``experiment`` (a typo, to be refused)."""
        return experiment not in self.configured or label not in self.configured[experiment]

    def algorithm(self, experiment: Any, label: Any) -> bool:
        return self.experiment(experiment) or (
            experiment in self.kept and label in self.configured[experiment] and label not in self.kept[experiment]
        )


def _prune_references(spec: dict, name: str, cut: set[str], configured: set[str]) -> None:
    """Panel plots, paired comparisons and the ``plot`` block's names, colours and styles of an experiment
    drop the algorithms the slice ``cut``; a pair naming a label never ``configured`` is refused."""
    _drop_plot_labels(spec.get("plot"), cut)
    _drop_plot_labels(spec.get("display"), cut, ("algorithms",))
    for plot_name, plot in list(spec.get("panel_plots", {}).items()):
        panels = {title: [a for a in labels if a not in cut] for title, labels in plot["panels"].items()}
        panels = {title: labels for title, labels in panels.items() if labels}
        if panels:
            plot["panels"] = panels
        else:
            del spec["panel_plots"][plot_name]
    paired = spec.get("paired")
    if isinstance(paired, dict):
        if "pairs" in paired:
            for i, pair in enumerate(paired["pairs"]):
                for label in pair:
                    if label not in configured:
                        raise ConfigError(
                            f"{key_path('experiments', name, 'paired', 'pairs', i)}: {label!r} is not an "
                            f"algorithm of this experiment; "
                            f"its algorithms: {sorted(configured)}"
                        )
            paired["pairs"] = [p for p in paired["pairs"] if not any(a in cut for a in p)]
        if paired.get("reference") in cut:
            del paired["reference"]


def _drop_plot_labels(plot: Any, labels: set[str], keys=("names", "colors", "styles")) -> None:
    """Remove ``labels`` from a ``plot`` block's names, colors and styles (in place; or a ``display``
    block's ``keys``)."""
    if not isinstance(plot, dict):
        return
    for key in keys:
        if isinstance(plot.get(key), dict):
            plot[key] = {label: v for label, v in plot[key].items() if label not in labels}


def _prune_plot(config: dict, cut: _Cut) -> None:
    """The top-level ``plot`` block drops the labels of algorithms the slice cut from every experiment that
    had them (a label no experiment has stays, to be refused)."""
    configured = {a for labels in cut.configured.values() for a in labels}
    kept = {a for labels in cut.kept.values() for a in labels}
    _drop_plot_labels(config.get("plot"), configured - kept)


def _prune_display(config: dict, kept: Mapping[str, Any]) -> None:
    """The top-level ``display`` block drops the names of what only the experiments and algorithms the slice
    cut had (experiments, algorithms, delays, budgets, metrics; a name nothing had stays, to be refused)."""
    from ..storage.resultio import budget_label
    from .display import key_label, metric_names

    display = config.get("display")
    if not isinstance(display, dict):
        return

    def labels(specs) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {"experiments": set(), "algorithms": set(), "delays": set(), "budgets": set()}
        out["metrics"] = set()
        for name, spec in specs.items():
            out["experiments"].add(name)
            out["algorithms"] |= set(spec.get("algorithms", {}))
            out["delays"] |= set(spec.get("delays", {}))
            out["budgets"] |= {budget_label(b) for b in spec.get("budgets", [None])}
            try:
                env_cls = registry.get("environment", spec["environment"]["name"]).load()
            except Exception:  # an unknown environment: the grid's checks name it
                continue
            out["metrics"] |= set(
                metric_names(env_cls.metrics, [*spec.get("per_round_metrics", []), *env_cls.rate_metrics])
            )
        return out

    before, after = labels(config["experiments"]), labels(kept)
    for kind, gone in ((k, before[k] - after[k]) for k in before):
        if isinstance(display.get(kind), dict):
            display[kind] = {k: v for k, v in display[kind].items() if key_label(kind, k) not in gone}


def _prune_claims(config: dict, cut: _Cut) -> None:
    """Claims drop those naming an experiment or algorithm the slice cut (untestable ones stay)."""
    if not config.get("claims"):
        return
    config["claims"] = {
        cid: c
        for cid, c in config["claims"].items()
        if "untestable" in c
        or not (
            cut.experiment(c.get("experiment"))
            or any(cut.algorithm(c.get("experiment"), c[k]) for k in ("a", "b") if k in c)
        )
        or any(cut.unknown(c.get("experiment"), c[k]) for k in ("a", "b") if k in c)
    }


def _prune_summary_tables(config: dict, cut: _Cut) -> None:
    """Summary tables drop the rows of experiments the slice cut, and the columns it cut from a kept row."""
    tables = config.get("summary_tables") or {}
    for name, table in list(tables.items()):
        rows = [row for row in table.get("rows", []) if not cut.experiment(row.get("experiment"))]
        if not rows:
            del tables[name]
            continue
        table["rows"] = rows
        if table.get("algorithms"):
            kept = [a for a in table["algorithms"] if not any(cut.algorithm(row.get("experiment"), a) for row in rows)]
            if not kept:
                del tables[name]
                continue
            table["algorithms"] = kept
