"""Display names: the ``display`` block, given once for every table, figure and report caption.

A config's top-level ``display`` block, and each experiment's, map labels to the text shown::

    display:
      experiments: {linear_delayed_dueling: "Linear utility"}
      algorithms: {ldb_df: "LDB-DF"}                 # plot.names is an alias of this key
      delays: {geometric_mean50_M20: "Geometric, M = 20"}
      budgets: {75: "B = 75"}
      metrics: {cumulative_regret: "Regret R(t)"}

An experiment's block overrides the top-level one name by name.  Every key must name something: at the
top level an experiment, or an algorithm, delay, budget or metric of some experiment; in an experiment's
block its own name, algorithms, delays, budgets and metrics; :func:`check` refuses any other in one line
naming the key.  :func:`resolve` gives an experiment's names (budgets keyed by their labels, ``75`` and
``none``); :class:`Names` turns a label into the text a table or a figure shows, with readable defaults
for labels not named (figures: ``_`` as spaces; a budget ``B = 75``; ``cumulative_regret`` as
"cumulative" and the metric's name).

Why a block of its own rather than more keys of ``plot``: ``plot`` says how figures look, while these
names are used as much by the tables (.md, .tex, .html) and the report's captions; ``plot.names`` stays
working as an alias of ``display.algorithms`` (a label named differently by both at one level is refused).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..errors import ConfigError, did_you_mean, key_path
from ..storage.resultio import budget_label

#: the keys of a ``display`` block
KINDS = ("experiments", "algorithms", "delays", "budgets", "metrics")
#: what each key names, in an error
_WHAT = {
    "experiments": "an experiment",
    "algorithms": "an algorithm",
    "delays": "a delay setting",
    "budgets": "a budget",
    "metrics": "a metric",
}


def key_label(kind: str, key: Any) -> str:
    """A ``display`` key as the label it names: a budget's number as its label (``75``, ``0.5``, ``none``)."""
    if kind == "budgets" and (key is None or (isinstance(key, (int, float)) and not isinstance(key, bool))):
        return budget_label(key)
    return str(key)


def metric_names(per_round: Iterable[str], averaged: Iterable[str] = ()) -> list[str]:
    """The metrics a ``display.metrics`` key may name: each per-round metric ``m``, ``cumulative_m``, and
    ``per_round_m`` of those ``averaged`` (an experiment's ``per_round_metrics``)."""
    per_round = list(per_round)
    return per_round + [f"cumulative_{m}" for m in per_round] + [f"per_round_{m}" for m in averaged]


def check(
    display: Mapping[str, Any] | None,
    where: str,
    known: Mapping[str, Iterable[str]],
    scope: str,
    names: Mapping[str, str] | None = None,
) -> None:
    """A ``display`` block past the schema: every key of each kind one of ``known[kind]`` (of ``scope``:
    "this experiment", "any experiment"), every name valid mathtext between ``$`` signs, and no algorithm
    named differently by ``names`` (the block's sibling ``plot.names``); a :class:`ConfigError` names the key."""
    if not display:
        return
    for kind in KINDS:
        labels = [str(x) for x in known.get(kind, ())]
        for key, name in (display.get(kind) or {}).items():
            label = key_label(kind, key)
            if label not in labels:
                raise ConfigError(
                    f"{key_path(where, kind, key)}: {key!r} is not {_WHAT[kind]} of {scope}"
                    f"{did_you_mean(label, labels)}; its {kind}: {labels}"
                )
            check_mathtext(name, key_path(where, kind, key))
            if kind == "algorithms" and names and key in names and names[key] != name:
                raise ConfigError(
                    f"{key_path(where, kind, key)}: {name!r}, but the plot block's names (an alias) give "
                    f"{names[key]!r}; name it once"
                )


def check_mathtext(name: str, where: str) -> None:
    """A display name's text between ``$`` signs is mathtext matplotlib can draw (a lone ``$`` is text)."""
    if "$" not in name:
        return
    from matplotlib import cbook
    from matplotlib.mathtext import MathTextParser

    if cbook.is_math_text(name):
        try:
            MathTextParser("path").parse(name)
        except ValueError as err:
            first = str(err).strip().splitlines()
            raise ConfigError(
                f"{where}: {name!r} is not valid mathtext (the text between $ signs): "
                f"{first[-1] if first else err}; write \\$ for a dollar sign"
            ) from None


def resolve(
    top: Mapping[str, Any] | None,
    own: Mapping[str, Any] | None,
    known: Mapping[str, Iterable[str]],
) -> dict[str, dict[str, str]]:
    """An experiment's display names: the top-level block overridden by its own name by name, keeping the
    names of what the experiment has (``known``: kind -> its labels); budgets keyed by their labels; kinds
    without names left out."""
    out: dict[str, dict[str, str]] = {}
    for kind in KINDS:
        have = {str(x) for x in known.get(kind, ())}
        merged = {key_label(kind, k): v for block in (top, own) for k, v in ((block or {}).get(kind) or {}).items()}
        merged = {label: name for label, name in merged.items() if label in have}
        if merged:
            out[kind] = merged
    return out


def readable(label: str) -> str:
    """A label as a figure shows it when no display name is given: ``_`` as spaces, ``none`` as no delay."""
    return "no delay" if label == "none" else " ".join(str(label).replace("_", " ").split())


@dataclass(frozen=True)
class Names:
    """Display names of one experiment (:func:`resolve`'s mapping, or an empty one) and the defaults for
    the labels not named. ``figure``: readable defaults (:func:`readable`); else labels as they are."""

    names: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    figure: bool = False

    @classmethod
    def of(cls, display: Mapping[str, Any] | None, figure: bool = False) -> "Names":
        display = dict(display or {})
        return cls(
            {kind: {key_label(kind, k): v for k, v in (display.get(kind) or {}).items()} for kind in KINDS}, figure
        )

    def _get(self, kind: str, label: Any) -> str | None:
        return (self.names.get(kind) or {}).get(key_label(kind, label))

    def experiment(self, label: str) -> str:
        return self._get("experiments", label) or (readable(label) if self.figure else label)

    def algorithm(self, label: str) -> str:
        return self._get("algorithms", label) or label

    def delay(self, label: str) -> str:
        return self._get("delays", label) or (readable(label) if self.figure else label)

    def budget(self, label: Any) -> str:
        sep = "\u00a0=\u00a0" if self.figure else " = "  # a figure wraps between words: B = 75 is one
        return self._get("budgets", label) or f"B{sep}{key_label('budgets', label)}"

    def metric(self, label: str) -> str:
        """``label``'s name; a ``cumulative_m`` not named: "cumulative" and ``m``'s name, when ``m`` has one."""
        named = self._get("metrics", label)
        if named:
            return named
        for prefix, word in (("cumulative_", "cumulative"), ("per_round_", "average")):
            inner = self._get("metrics", label.removeprefix(prefix)) if label.startswith(prefix) else None
            if inner:
                return f"{word} {inner}"
        return label.replace("_", " ") if self.figure else label

    def setting(self, delay: str, budget: Any, delays: int = 2, budgets: int = 2) -> str:
        """A panel's or a column's setting: the delay's name, then the budget's (when there is a budget);
        only the one that varies when the other has one value (``delays``, ``budgets``: how many there are)."""
        parts = []
        if delays > 1 or budgets <= 1 or str(budget) == "none":
            parts.append(self.delay(delay))
        if str(budget) != "none":
            parts.append(self.budget(budget))
        return ", ".join(parts)
