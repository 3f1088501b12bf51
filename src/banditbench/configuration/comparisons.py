"""Which paired comparisons an experiment gets (config key ``paired``), resolved and checked.

For one seed every algorithm of an experiment meets the same environment draws (contexts, noise) and
the same delays: the runner splits each seed into environment, delay and policy streams, and the
environment's streams never depend on the policy (:mod:`banditbench.simulation.runner`).  The difference
``A - B`` of a metric, taken seed by seed, then cancels what the seeds share, and its interval is the
one that tells two algorithms apart.  (Replay environments skip logged events the policy did not
choose, so there the draws are shared up to that skipping; the pairing is still valid, since the
seeds' differences remain independent across seeds.)

Every experiment with two or more algorithms gets paired comparisons, unless it says
``paired: false``.  Keys (an experiment's own, else the top-level ``paired``'s, else the default)::

    paired:
      reference: ldb_df        # pairs (reference, each other algorithm); default: the first algorithm
      pairs: [[ldb_df, ldb_zero], [ndb_df, ndb_ignore]]   # instead: exactly these (A, B), A - B
      metric: regret           # the per-round metric compared, cumulatively (default: plot_metric)
      better: lower            # which difference favours A (default: lower for regret and cost,
                               # higher for reward; other metrics must say)
      interval: t              # t (Student-t, default) or bootstrap (scipy.stats.bootstrap, BCa)
      resamples: 9999          # bootstrap resamples

A top-level ``reference`` applies to the experiments that have an algorithm of that label (it must
name an algorithm of at least one); ``pairs`` and ``metric`` are per experiment.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import ConfigError, did_you_mean, key_path

INTERVALS = ("t", "bootstrap")
DEFAULT_RESAMPLES = 9999


def better_of(metric: str) -> str | None:
    """``lower`` or ``higher``: which values of a per-round metric are better, when its name says."""
    if "regret" in metric or metric == "cost":
        return "lower"
    if "reward" in metric:
        return "higher"
    return None


def _coerce(value: Any, kind: type) -> Any:
    """``--config paired={resamples: 999}`` hands nested values over as strings."""
    if isinstance(value, str) and kind is int:
        try:
            return int(value)
        except ValueError:
            return value
    return value


def check_top(top: Any, experiments: Mapping[str, Mapping[str, Any]]) -> None:
    """The top-level ``paired``: a ``reference`` must name an algorithm of some experiment."""
    if isinstance(top, Mapping) and top.get("reference") is not None:
        if not any(top["reference"] in spec["algorithms"] for spec in experiments.values()):
            every = sorted({a for s in experiments.values() for a in s["algorithms"]})
            raise ConfigError(
                f"paired.reference: {top['reference']!r} is not an algorithm of any experiment"
                f"{did_you_mean(top['reference'], every)}; algorithms: {every}"
            )


def resolve(
    name: str, spec: Mapping[str, Any], top: Any, metrics: Sequence[str], plot_metric: str
) -> dict[str, Any] | None:
    """The experiment's paired comparisons, or None (fewer than two algorithms, or ``paired: false``):
    ``{pairs: [[A, B], ...], metric: cumulative_<m>, better, interval, resamples}``."""
    own = spec.get("paired", {})
    if own is False or top is False and "paired" not in spec:
        return None
    own = dict(own) if isinstance(own, Mapping) else {}
    top = dict(top) if isinstance(top, Mapping) else {}
    where = key_path("experiments", name, "paired")
    algorithms = list(spec["algorithms"])
    pairs = [list(p) for p in own.get("pairs", [])]
    for i, pair in enumerate(pairs):  # checked whatever the experiment holds (a slice may leave one algorithm)
        for label in pair:
            if label not in algorithms:
                raise ConfigError(
                    f"{key_path(where, 'pairs', i)}: {label!r} is not an algorithm of this experiment"
                    f"{did_you_mean(label, algorithms)}; its algorithms: {algorithms}"
                )
        if pair[0] == pair[1]:
            raise ConfigError(f"{key_path(where, 'pairs', i)}: a pair of {pair[0]!r} with itself")
    reference = own.get("reference")
    if reference is not None and reference not in algorithms:
        raise ConfigError(
            f"{key_path(where, 'reference')}: {reference!r} is not an algorithm of this experiment"
            f"{did_you_mean(reference, algorithms)}; its algorithms: {algorithms}"
        )
    if len(algorithms) < 2 or ("pairs" in own and not pairs):
        return None
    if "pairs" not in own:
        variant_of = {a: s["variant_of"] for a, s in spec["algorithms"].items() if s.get("variant_of")}
        if reference is None:
            reference = top["reference"] if top.get("reference") in algorithms else algorithms[0]
        if reference in variant_of:
            reference = variant_of[reference]
        # an override's variant is compared with the algorithm it varies, every other one with the reference
        pairs = [[variant_of.get(other, reference), other] for other in algorithms if other != reference]
    metric = own.get("metric") or plot_metric
    if metric not in metrics:
        raise ConfigError(
            f"{key_path(where, 'metric')}: {metric!r} is not logged by the environment{did_you_mean(metric, metrics)}; "
            f"choose from {list(metrics)}"
        )
    better = own.get("better") or top.get("better") or better_of(metric)
    if better is None:
        raise ConfigError(
            f"{key_path(where, 'better')}: say whether lower or higher {metric!r} is better "
            f"(better: lower or better: higher)"
        )
    interval = own.get("interval") or top.get("interval") or "t"
    resamples = _coerce(own.get("resamples", top.get("resamples", DEFAULT_RESAMPLES)), int)
    for key, value, ok in (
        ("interval", interval, interval in INTERVALS),
        ("resamples", resamples, isinstance(resamples, int) and not isinstance(resamples, bool) and resamples >= 100),
    ):
        if not ok:
            source = where if key in own else "paired"
            raise ConfigError(
                f"{key_path(source, key)}: {value!r} is not "
                + ("one of " + ", ".join(INTERVALS) if key == "interval" else "an integer >= 100")
            )
    return {
        "pairs": pairs,
        "metric": f"cumulative_{metric}",
        "better": better,
        "interval": interval,
        "resamples": int(resamples),
    }


def self_duel_statements(algorithms: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Per algorithm label of an experiment (``{label: {policy, params}}``), what its policy states about
    self-duels with its parameters (:func:`banditbench.api.self_duel_rule`), for the paired tables' lock-in
    line; ``self-duels not stated`` for a pair-playing policy that states nothing, and no entry for a policy
    that does not play pairs."""
    from .. import registry
    from ..api import self_duel_rule

    out = {}
    for label, spec in algorithms.items():
        cls = registry.get("policy", spec["policy"]).load()
        if getattr(cls, "action_kind", None) == "pair":
            values = registry.values(cls, spec.get("params") or {})
            out[label] = self_duel_rule(cls, values) or "self-duels not stated"
    return out
