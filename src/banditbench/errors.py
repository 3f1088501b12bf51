"""The package's error types and the one key-path format every message uses.

Every :class:`ConfigError` message reads ``<key path>: <what is wrong>``, with the
key path dotted as :func:`key_path` writes it, so a user can find the line to fix:

* Code that knows where a value sits in the config writes its full path:
  ``experiments.<experiment>.algorithms.<label>.params.<key>``,
  ``experiments.<experiment>.environment.params.<key>``,
  ``experiments.<experiment>.delays.<label>.<key>`` (:mod:`banditbench.configuration.grid`).
* Environments and policies are built from a resolved job cell and do not know
  their experiment, so their constructors name keys relative to the cell:
  ``environment.params.<key>`` and ``policy.params.<key>`` (always built from
  :data:`ENVIRONMENT_PARAMS` / :data:`POLICY_PARAMS`).  The code that builds them
  from a config (:func:`banditbench.simulation.runner.build`, :mod:`banditbench.configuration.grid`) knows the
  experiment and the labels and re-roots such an error onto the full path
  (:meth:`ConfigError.rerooted`): ``policy.params.lam`` becomes
  ``experiments.<experiment>.algorithms.<label>.params.lam``.
* A function that checks a mapping of options (preprocessing, oracle options, a
  delay) takes the mapping's key path from its caller as ``where``; its default is
  the option group's own name (``preprocessing``, ``oracle``, ``delay``).
* A problem with a file rather than with a config value starts with the file's path
  (:class:`CorruptFileError` when the file itself is damaged or is the wrong file).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator

#: key path of an environment's parameters inside a job cell (re-rooted by the runner)
ENVIRONMENT_PARAMS = "environment.params"
#: key path of a policy's parameters inside a job cell (re-rooted by the runner)
POLICY_PARAMS = "policy.params"


class ConfigError(ValueError):
    """A configuration value is missing or invalid; the message starts with its key path."""

    def rerooted(self, root: str, new_root: str) -> ConfigError:
        """This error with the leading key path ``root`` replaced by ``new_root``.

        ``ConfigError("policy.params.lam: must be positive").rerooted("policy",
        "experiments.e.algorithms.a")`` reads ``experiments.e.algorithms.a.params.lam:
        must be positive``.  A message whose key path does not start with ``root``
        is placed under ``new_root`` as a whole (``new_root: <message>``).
        """
        message = str(self)
        if message.startswith((f"{root}.", f"{root}:")):
            return ConfigError(new_root + message[len(root) :])
        return ConfigError(f"{new_root}: {message}")


class CorruptFileError(ValueError):
    """A file the pipeline reads is damaged (truncated, garbled, failed checksum) or is not the file
    it should be (another run's result, another dataset's preparation); the message starts with
    the file's path and says what is wrong and how to rebuild it."""


class Diverged(ArithmeticError):
    """A policy's scores, estimates or confidence widths became non-finite (NaN or infinite), e.g. gradient
    descent that diverged: the decision of that round means nothing, so the run stops there.

    Raised by :func:`banditbench.api.choose` and :func:`banditbench.api.check_finite` (``round`` None: the
    simulation loop, which knows the round, sets it); ``reason`` says what was not finite.  The runner records
    such a run as diverged (:func:`banditbench.simulation.job.run_cell`): ``series``, set by
    :func:`~banditbench.simulation.runner.simulate`, holds the rounds played before ``round`` and NaN after.
    """

    def __init__(self, reason: str, round: int | None = None):
        super().__init__(reason)
        self.reason, self.round = reason, round
        self.series = None

    def __str__(self) -> str:
        return self.reason if self.round is None else f"diverged at round {self.round}: {self.reason}"


def did_you_mean(name: object, choices: Iterable[object], prefix: str = "") -> str:
    """`` (did you mean 'ldb_df'?)`` when one of ``choices`` is close to the misspelt ``name`` (letter case
    aside), else ``''``: the text to put right after the unknown name in a message.  ``prefix``: the names are
    ``prefix + choice`` (``cumulative_regret``), compared without it."""
    import difflib

    if not isinstance(name, str) or not name.startswith(prefix) or name == prefix:
        return ""
    folded: dict[str, str] = {}
    for choice in choices:
        if isinstance(choice, str) and prefix + choice != name:
            folded.setdefault(choice.casefold(), choice)
    close = difflib.get_close_matches(name.removeprefix(prefix).casefold(), list(folded), n=1, cutoff=0.6)
    return f" (did you mean {prefix + folded[close[0]]!r}?)" if close else ""


def key_path(*parts: str | int | Iterable[str | int] | None) -> str:
    """Join config path parts into ``a.b.c`` (``None`` and empty parts are skipped).

    Parts may themselves be dotted strings or sequences of parts.
    """
    out: list[str] = []
    for part in parts:
        if part is None or part == "":
            continue
        if isinstance(part, (list, tuple)):
            out.extend(str(p) for p in part)
        else:
            out.append(str(part))
    return ".".join(out) or "<top level>"


def component_path(experiment: str, component: str, label: str | None = None) -> str:
    """Full key path of a job's ``environment`` entry (``experiments.<experiment>.environment``)
    or of its ``policy`` entry (``experiments.<experiment>.algorithms.<label>``)."""
    if component == "policy":
        return key_path("experiments", experiment, "algorithms", label)
    return key_path("experiments", experiment, component)


@contextmanager
def rerooting(root: str, new_root: str) -> Iterator[None]:
    """Re-raise a :class:`ConfigError` of the block with ``root`` replaced by ``new_root``
    (:meth:`ConfigError.rerooted`)."""
    try:
        yield
    except ConfigError as err:
        raise err.rerooted(root, new_root) from None
