"""The papers' claims as data (config key ``claims``), resolved and checked against the grid.

A claim quotes a sentence of a paper and names the paired comparison that tests it: on one experiment,
the metric at a table horizon, algorithm A against algorithm B (or against a constant, or against A's own
value at another delay, budget or horizon), and the relation claimed for ``A - B``::

    claims:
      s000_df_beats_ignore_linear:
        paper: "000"
        where: "Sec. 5.3, Fig. 2"
        quote: "LDB-DF significantly outperforms both LDB-Ignore and LDB-Heuristic"
        experiment: delayed_dueling_linear
        metric: cumulative_regret            # cumulative_<m>, per_round_<m>, a run summary, cpu_time_s
        horizon: 5000                        # a table horizon (default: the final one)
        delay: geometric_mean50_M20          # when the experiment has several
        a: ldb_df
        b: ldb_ignore                        # or value: 0.0, or b_delay / b_budget / b_horizon
        relation: less                       # A - B < 0; greater: A - B > 0
        also:                                # the sentences that restate this comparison, folded into it
          - {paper: "000", where: "Sec. 7 (Conclusion)", quote: "...consistently outperforming baselines..."}
      s003_dimension_free:
        paper: "003"
        where: "Sec. 7"
        quote: "..."
        untestable: "the grids log no running time"   # it may still name the comparison it would be

One comparison, one claim.  Two claims make *the same comparison* when they name the same experiment and metric,
the same A side and B side (algorithm or constant, delay, budget, horizon, as resolved: a delay or horizon left to
its default counts as the one it defaults to) and the same relation, or when one is the other mirrored: A and B
swapped and the opposite relation (``A < B`` is ``B > A``).  :func:`resolve` refuses two such claims, naming both
(:func:`comparison_key`, :func:`check_distinct`): a sentence that restates a comparison already claimed (an
introduction or conclusion repeating an experiment's result) is listed in that claim's ``also`` (paper, where,
quote, and an optional note on how it reads onto the comparison), so that every verdict and every count is of one
comparison.

Each seed's difference ``d_s = A_s - B_s`` pairs the same seed of both sides (same environment draws,
same delays: :mod:`banditbench.configuration.comparisons`), and :mod:`banditbench.analysis.claims`
judges the mean with an anytime-valid interval, so that adding seeds until a verdict is reached keeps
its error rate (``claims_alpha``, default 0.05 per claim).  The interval is distribution-free on the range of
``A - B`` that the environment's declared metric range gives (:func:`metric_range`; a claim's ``bounds`` replace
it), with the claim's ``method`` (default ``betting``); ``method: gaussian-t`` needs a ``reason``, and a metric
whose environment declares no range is refused unless the claim states ``bounds`` or opts into it.  Every name is checked before any job; an
error names ``claims.<id>.<key>``.  A claim whose experiment or algorithm a slicing key cut is dropped
with it (:mod:`banditbench.configuration.slicing`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from ..errors import ConfigError, did_you_mean, key_path
from ..storage.resultio import TIMED_SECONDS

#: the error rate of each claim's interval when the config sets no ``claims_alpha``
DEFAULT_ALPHA = 0.05
#: what a claim says of ``A - B``
RELATIONS = {"less": "A - B < 0", "greater": "A - B > 0"}


@dataclass(frozen=True)
class Side:
    """One side of a claim's difference: an algorithm's metric at a delay, budget and horizon, or a constant."""

    algorithm: str | None
    delay: str
    budget: str
    horizon: int
    value: float | None = None

    def label(self) -> str:
        return f"{self.value:g}" if self.value is not None else self.algorithm


@dataclass(frozen=True)
class Restatement:
    """A sentence that restates a claim's comparison (an entry of its ``also``): where it is and what it says, and
    how it reads onto the comparison where that is not plain (a mirrored sentence: "B is more efficient than A")."""

    paper: str
    where: str
    quote: str
    note: str = ""


@dataclass(frozen=True)
class Claim:
    """A resolved claim (:mod:`banditbench.configuration.claims`); an ``untestable`` claim has sides only where it
    names the comparison it would be."""

    id: str
    paper: str
    where: str
    quote: str
    note: str = ""
    untestable: str = ""
    #: why it is not evaluated in this run (a ``horizon`` override shorter than the claim's horizon)
    skipped: str = ""
    experiment: str = ""
    metric: str = ""
    relation: str = ""
    a: Side | None = None
    b: Side | None = None
    #: the range of ``A - B``: the claim's ``bounds``, else the one the environment's metric range gives
    bounds: tuple[float, float] | None = None
    #: the interval (:data:`banditbench.numerics.sequential.METHODS`) and, for the Gaussian t-CS, why
    method: str = ""
    reason: str = ""
    #: the sentences that restate this comparison (``also``), folded into this claim
    also: tuple[Restatement, ...] = ()

    def statement(self) -> str:
        """The comparison in words: ``ldb_df < ldb_ignore (cumulative_regret, T = 5000, delay ...)``."""
        if self.untestable or self.skipped:
            return "untestable" if self.untestable else "not run"
        a, b = self.a, self.b
        where = [f"T = {a.horizon}" + (f" vs {b.horizon}" if b.horizon != a.horizon else "")]
        where.append(f"delay {a.delay}" + (f" vs {b.delay}" if b.delay != a.delay else ""))
        if a.budget != "none" or b.budget != a.budget:
            where.append(f"budget {a.budget}" + (f" vs {b.budget}" if b.budget != a.budget else ""))
        sign = "<" if self.relation == "less" else ">"
        return f"{a.label()} {sign} {b.label()} ({self.metric}, {', '.join(where)})"


def with_claims_files(config: Mapping[str, Any], read_yaml) -> Mapping[str, Any]:
    """The config with the ``claims:`` of each file of ``claims_files`` (read by ``read_yaml``, the strict
    loader :func:`banditbench.configuration.grid.load_config_file`) joined to its own; a claim id given
    twice, in the config or across files, is an error naming both places."""
    files = config.get("claims_files")
    if not files:
        return config
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ConfigError(f"claims_files: a list of paths to YAML files, got {files!r}")
    merged = dict(config.get("claims") or {})
    origin = {cid: "claims" for cid in merged}
    for i, path in enumerate(files):
        if not Path(path).is_file():
            raise ConfigError(f"claims_files[{i}]: no such file {path!r} (paths start at the working directory)")
        data = read_yaml(path)
        if set(data) != {"claims"} or not isinstance(data["claims"], Mapping):
            raise ConfigError(
                f"{path}: a claims file holds one key, claims: a mapping of claim ids; got {sorted(data)}"
            )
        for cid, claim in data["claims"].items():
            if cid in merged:
                raise ConfigError(f"{path}: claims.{cid} is also given in {origin[cid]}")
            merged[cid], origin[cid] = claim, path
    return {**config, "claims": merged}


def resolve(
    spec: Mapping[str, Any] | None, experiments: Mapping[str, Any], shortened: bool = False
) -> dict[str, Claim]:
    """Every claim of the config's ``claims`` checked against the grid's ``experiments``
    (:class:`banditbench.configuration.grid.Experiment`); a :class:`ConfigError` names the key.
    ``shortened``: the config's top-level ``horizon`` cut every experiment short, so a claim at a horizon
    beyond the run is kept but marked ``skipped`` (it is not refused: the full run has it)."""
    claims = {cid: _claim(cid, dict(c), experiments, shortened) for cid, c in (spec or {}).items()}
    check_distinct(claims)
    return claims


def _side_key(side: Side) -> tuple:
    return (side.algorithm or "", side.delay, side.budget, side.horizon, "" if side.value is None else side.value)


def comparison_key(claim: Claim) -> tuple | None:
    """What a claim compares, the same for two claims that make the same comparison (see the module docstring):
    ``(experiment, metric, A side, B side, relation)`` with a mirrored claim (A and B swapped, the opposite
    relation) turned round so that its A side is the one that sorts first; None for a claim that names no
    comparison (untestable without one, or not run at this horizon)."""
    if claim.a is None or claim.b is None:
        return None
    a, b, relation = _side_key(claim.a), _side_key(claim.b), claim.relation
    if claim.b.value is None and b < a:
        a, b, relation = b, a, ("greater" if relation == "less" else "less")
    return (claim.experiment, claim.metric, a, b, relation)


def check_distinct(claims: Mapping[str, Claim]) -> None:
    """Refuse two claims that make the same comparison (:func:`comparison_key`), naming both: the second is a
    restatement, to be folded into the first's ``also``."""
    first: dict[tuple, str] = {}
    for cid, claim in claims.items():
        key = comparison_key(claim)
        if key is None:
            continue
        if key in first:
            mirrored = " mirrored (A and B swapped, the opposite relation)" if claims[first[key]].a != claim.a else ""
            raise ConfigError(
                f"{key_path('claims', cid)}: the same comparison as claims.{first[key]}{mirrored}: "
                f"{claims[first[key]].statement()}; one comparison is one claim: list this sentence in "
                f"claims.{first[key]}.also (paper, where, quote) and drop claims.{cid}"
            )
        first[key] = cid


def _claim(cid: str, c: dict[str, Any], experiments: Mapping[str, Any], shortened: bool) -> Claim:
    """The claim ``claims.<cid>`` resolved against the experiments (see :func:`resolve`)."""
    where = key_path("claims", cid)
    text: dict[str, Any] = {k: str(c.get(k, "")) for k in ("paper", "where", "quote", "note")}
    text["also"] = tuple(Restatement(**{k: str(v) for k, v in r.items()}) for r in c.get("also") or ())
    comparison = [k for k in ("experiment", "metric", "a", "relation") if k in c]
    if "untestable" in c:
        if not comparison:
            return Claim(cid, untestable=str(c["untestable"]), **text)
        # the comparison it would be, checked like any other, so that it can be switched on when it can run
        return replace(
            _claim(cid, {k: v for k, v in c.items() if k != "untestable"}, experiments, shortened),
            untestable=str(c["untestable"]),
            skipped="",
        )
    missing = [k for k in ("experiment", "metric", "a", "relation") if k not in c]
    if missing:
        raise ConfigError(f"{where}: a claim needs {missing} (or 'untestable' with the reason)")
    if c["experiment"] not in experiments:
        raise ConfigError(
            f"{key_path(where, 'experiment')}: {c['experiment']!r} is not an experiment of this config"
            f"{did_you_mean(c['experiment'], experiments)}; configured: {sorted(experiments)}"
        )
    exp = experiments[c["experiment"]]
    beyond = [c[k] for k in ("horizon", "b_horizon") if shortened and k in c and c[k] > exp.horizon]
    if beyond:
        return Claim(
            cid,
            skipped=f"horizon {max(beyond)} is beyond this run's {exp.horizon} (config horizon)",
            experiment=exp.name,
            metric=c["metric"],
            relation=c["relation"],
            **text,
        )
    metric = c["metric"]
    _check_metric(metric, exp, key_path(where, "metric"))
    if not metric.startswith(("cumulative_", "per_round_")):
        _check_summary_horizons(c, exp, where)
    _check_sides(c, exp, where)
    a = Side(
        c["a"],
        _setting(c, "delay", exp, where),
        _setting(c, "budget", exp, where),
        _horizon(c, "horizon", exp, where),
    )
    if "value" in c:
        b = Side(None, a.delay, a.budget, a.horizon, float(c["value"]))
    else:
        b = Side(
            c.get("b", c["a"]),
            _setting(c, "b_delay", exp, where) if "b_delay" in c else a.delay,
            _setting(c, "b_budget", exp, where) if "b_budget" in c else a.budget,
            _horizon(c, "b_horizon", exp, where) if "b_horizon" in c else a.horizon,
        )
        if b == a and shortened:
            return Claim(
                cid,
                skipped=f"A and B are both at this run's final horizon {exp.horizon} (config horizon)",
                experiment=exp.name,
                metric=metric,
                relation=c["relation"],
                **text,
            )
        if b == a:
            raise ConfigError(
                f"{where}: A and B are the same results ({a.algorithm}, delay {a.delay}, T = {a.horizon})"
            )
    method, reason, bounds = _interval(c, exp, metric, a, b, where)
    return Claim(
        cid, experiment=exp.name, metric=metric, relation=c["relation"], a=a, b=b, bounds=bounds, method=method,
        reason=reason, **text,
    )  # fmt: skip


def metric_range(exp: Any, metric: str, a: Side, b: Side) -> tuple[float, float] | None:
    """The range of ``A - B`` that the environment's declared range ``[lo, hi]`` of the per-round metric gives
    (:meth:`banditbench.api.Environment.metric_ranges`), None where it declares none: a ``cumulative_<m>`` at
    horizon T lies in ``[T lo, T hi]``, a ``per_round_<m>`` (the running average) in ``[lo, hi]``, a constant B is
    itself; so ``A - B`` lies in ``[A_lo - B_hi, A_hi - B_lo]``, widened by
    :data:`~banditbench.api.RANGE_TOLERANCE` of its width for the rounding of the sums."""
    from ..api import RANGE_TOLERANCE

    cumulative = metric.startswith("cumulative_")
    base = metric.removeprefix("cumulative_") if cumulative else metric.removeprefix("per_round_")
    declared = exp.metric_ranges().get(base)
    if declared is None or not all(math.isfinite(float(v)) for v in declared):
        return None
    lo, hi = float(declared[0]), float(declared[1])

    def side(s: Side) -> tuple[float, float]:
        if s.value is not None:
            return s.value, s.value
        scale = s.horizon if cumulative else 1
        return scale * lo, scale * hi

    (a_lo, a_hi), (b_lo, b_hi) = side(a), side(b)
    low, high = a_lo - b_hi, a_hi - b_lo
    pad = RANGE_TOLERANCE * max(high - low, 1.0)
    return low - pad, high + pad


def _interval(
    c: Mapping[str, Any], exp: Any, metric: str, a: Side, b: Side, where: str
) -> tuple[str, str, tuple[float, float] | None]:
    """The claim's interval: its ``method`` (default :data:`~banditbench.numerics.sequential.DEFAULT_METHOD`), the
    ``reason`` a Gaussian t interval needs, and the range of ``A - B`` (``bounds``, or the one the environment's
    declared metric range gives, :func:`metric_range`); a bounded method without a range is refused."""
    from ..numerics.sequential import DEFAULT_METHOD, GAUSSIAN

    method = c.get("method", DEFAULT_METHOD)
    reason = str(c.get("reason", "")).strip()
    if method == GAUSSIAN and not reason:
        raise ConfigError(
            f"{key_path(where, 'reason')}: method {GAUSSIAN} assumes Gaussian differences; state why they are "
            f"(the reason is printed on the claim's row)"
        )
    if reason and method != GAUSSIAN:
        raise ConfigError(
            f"{key_path(where, 'reason')}: only method {GAUSSIAN} takes a reason (this claim's: {method})"
        )
    if "bounds" in c:
        lo, hi = (float(v) for v in c["bounds"])
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ConfigError(f"{key_path(where, 'bounds')}: must be two finite numbers lo < hi, got {c['bounds']!r}")
        return method, reason, (lo, hi)
    bounds = metric_range(exp, metric, a, b)
    if metric in TIMED_SECONDS and method != GAUSSIAN:
        raise ConfigError(
            f"{key_path(where, 'metric')}: {metric!r} (a run's recorded time) has no declared range, and the {method} "
            f"interval needs one: state the claim's bounds: [lo, hi] in seconds, or give method: {GAUSSIAN} with a "
            f"reason"
        )
    if bounds is None and method != GAUSSIAN:
        env = exp.spec["environment"]["name"]
        raise ConfigError(
            f"{key_path(where, 'metric')}: environment {env!r} declares no range for the per-round metric of "
            f"{metric!r} (Environment.metric_ranges; declared: {sorted(exp.metric_ranges())}), and the "
            f"{method} interval needs one: declare it, state the claim's bounds: [lo, hi], or give method: "
            f"{GAUSSIAN} with a reason"
        )
    return method, reason, bounds


def _check_sides(c: Mapping[str, Any], exp: Any, where: str) -> None:
    """A and B name algorithms of the experiment, and B is one thing: an algorithm or A's own value at another
    delay, budget or horizon, or a finite constant ``value``."""
    for key in ("a", "b"):
        if key in c and c[key] not in exp.algorithms:
            raise ConfigError(
                f"{key_path(where, key)}: {c[key]!r} is not an algorithm of experiment {exp.name!r}"
                f"{did_you_mean(c[key], exp.algorithms)}; configured: {exp.algorithms}"
            )
    if "value" in c and any(k in c for k in ("b", "b_delay", "b_budget", "b_horizon")):
        raise ConfigError(f"{key_path(where, 'value')}: a constant B takes no b, b_delay, b_budget or b_horizon")
    if "value" in c and not math.isfinite(c["value"]):
        raise ConfigError(f"{key_path(where, 'value')}: must be a finite number, got {c['value']!r}")
    if not any(k in c for k in ("b", "value", "b_delay", "b_budget", "b_horizon")):
        raise ConfigError(f"{where}: nothing to compare A with: give b, value, b_delay, b_budget or b_horizon")


def _check_metric(metric: str, exp: Any, where: str) -> None:
    """A series (``cumulative_<m>``, ``per_round_<m>``: :meth:`~.grid.Experiment.check_metric`), a run summary
    the environment declares a range for (a dueling run's ``late_regret_rate``, recorded at the final horizon), or
    the run's recorded time (:data:`~banditbench.storage.resultio.TIMED_SECONDS`: ``cpu_time_s``, ``wall_time_s``
    per seed, read from the per-seed timing table)."""
    if metric.startswith(("cumulative_", "per_round_")):
        exp.check_metric(metric, where)
        return
    summaries = run_summaries(exp)
    if metric not in summaries and metric not in TIMED_SECONDS:
        raise ConfigError(
            f"{where}: {metric!r} is neither cumulative_<metric>, per_round_<metric>, a run summary the "
            f"environment declares (Environment.metric_ranges: {summaries}) nor a run's recorded time "
            f"{list(TIMED_SECONDS)}"
        )


def run_summaries(exp: Any) -> list[str]:
    """The run summaries of ``exp``'s environment that a claim can compare: those it declares a range for
    besides its per-round metrics."""
    return sorted(set(exp.metric_ranges()) - set(exp.env_class().metrics))


def _check_summary_horizons(c: Mapping[str, Any], exp: Any, where: str) -> None:
    """A run summary or a run's time exists at the run's final horizon only: a claim on one names no other."""
    what = "a run's recorded time" if c["metric"] in TIMED_SECONDS else "a run summary"
    for key in ("horizon", "b_horizon"):
        if key in c and c[key] != exp.horizon:
            raise ConfigError(
                f"{key_path(where, key)}: {c['metric']!r} is {what}, recorded at the final horizon "
                f"({exp.horizon}) only, not at {c[key]}"
            )


def _setting(c: Mapping[str, Any], key: str, exp: Any, where: str) -> str:
    """A delay or budget label of the claim (``key``: ``delay``, ``b_delay``, ...): the named one, or the
    experiment's only one."""
    return exp.setting(key.removeprefix("b_"), c.get(key), where, key)


def _horizon(c: Mapping[str, Any], key: str, exp: Any, where: str) -> int:
    if key not in c:
        return exp.horizon
    if c[key] not in exp.table_horizons:
        raise ConfigError(
            f"{key_path(where, key)}: {c[key]} is not a table horizon of experiment {exp.name!r} "
            f"({list(exp.table_horizons)}); the results keep the metrics there"
        )
    return int(c[key])


def as_params(claims: Mapping[str, Claim], alpha: float) -> dict[str, Any]:
    """The resolved claims as plain data (the ``claims`` rule's params; :func:`from_params` reads them back)."""
    return {"alpha": alpha, "claims": [asdict(c) for c in claims.values()]}


def from_params(params: Mapping[str, Any]) -> tuple[dict[str, Claim], float]:
    """The claims and the error rate of :func:`as_params`."""
    out = {}
    for c in params["claims"]:
        sides = {k: Side(**c[k]) if c[k] is not None else None for k in ("a", "b")}
        bounds = tuple(c["bounds"]) if c["bounds"] is not None else None
        also = tuple(Restatement(**r) for r in c.get("also", ()))
        out[c["id"]] = Claim(**{**c, **sides, "bounds": bounds, "also": also})
    return out, float(params["alpha"])
