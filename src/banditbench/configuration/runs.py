"""Where results go: per-seed result files addressed by their content, run namespaces owned by one config.

**Per-seed results** are addressed by their cell (:mod:`banditbench.storage.cells`); :func:`grid_cells` lists
a grid's cell folders.

**Run namespaces**: every table, paired comparison, plot, curve, timing summary, claims table, summary table and
the run information of one run go under ``results/<run>/`` (``tables/``, ``paired/``, ``plots/``, ``curves/``,
``timing/``, ``summary/``, ``claims/``, ``report/``, ``manifest.csv``: the run's per-seed result files, and
``run.json``: the config files and slice that own the run), so that ``snakemake --report`` shows exactly the run
it describes.  The run's name (:func:`run_name`):

* ``run: NAME`` given on the command line (``--config run=NAME``; digits too) is the name, as given;
* otherwise the config's ``run:`` key, or else the stem of its config file (``config/lipschitz.yaml`` ->
  ``lipschitz``; the default config, ``config.yaml``, is ``default``; several files: their stems joined by
  ``-``), is the run's *base*; a run with any of the keys that change what a run holds (:data:`SLICE_KEYS`:
  ``only_experiments``, ``only_algorithms``, ``override``, ``seeds``, ``horizon``) adds ``.slice-`` and 8 hex
  digits of their values (``default.slice-3f2a9c1e``), so a slice never overwrites its config's outputs, and the
  same slice always finds its own again.

A run name belongs to the config (and slice) that first made it (:func:`check_owner`, recorded by
:func:`record_owner` in ``results/<run>/run.json`` when a run starts): another config naming the same run is
refused before any job, in one line naming both files and the ``run:`` key.  Editing the owning config is no
change of owner.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import ConfigError

#: the keys that change which cells, seeds or horizons a run holds: a run with any of them is a slice
SLICE_KEYS = ("only_experiments", "only_algorithms", "override", "seeds", "horizon")
#: names a run may not take, in any case: ``results/runs`` holds the per-seed result files
RESERVED = frozenset({"runs"})
#: the run of the default config, ``config.yaml`` (Snakemake's ``configfile``), rather than its stem
DEFAULT_CONFIG, DEFAULT_RUN = "config.yaml", "default"
#: a run folder's record of the config files and slice that own it (:func:`record_owner`)
OWNER_FILE = "run.json"
#: the environment variable in which a process that runs Snakemake for a run it owns names that owner
OWNER_VAR = "BANDITBENCH_RUN_OWNER"
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_SLICE = ".slice-"


# --- per-seed results, addressed by content ---------------------------------------------------------------


def grid_cells(grid) -> Iterable[tuple[str, dict]]:
    """Each cell's result folder (:data:`~banditbench.storage.cells.CELL_DIR`) and the cell a run of ``grid`` simulates there."""
    for name, exp in grid.experiments.items():
        for algorithm, delay, budget in itertools.product(exp.algorithms, exp.delays, exp.budget_labels):
            yield (
                grid.cell_dir(name, algorithm, delay, budget),
                json.loads(grid.cell_json(name, algorithm, delay, budget, None)),
            )


# --- run names ------------------------------------------------------------------------------------------


def run_name(
    config: Mapping[str, Any], config_files: Iterable[str | os.PathLike], command_line: Mapping[str, Any]
) -> str:
    """The run's name (see the module docstring): ``command_line`` holds the keys set with ``--config``."""
    if command_line.get("run") is not None:
        return _checked(_as_given(command_line["run"]), "run")
    if config.get("run") is not None:
        base = _checked(str(config["run"]), "run")
    else:
        stems = [DEFAULT_RUN if _is_default(f) else Path(f).stem for f in config_files]
        base = _checked("-".join(stems), "run", f" (from the config file name{'s' if len(stems) > 1 else ''})")
    sliced = slice_of(config)
    if not sliced:
        return base
    digest = hashlib.sha256(json.dumps(sliced, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{base}{_SLICE}{digest}"


def slice_of(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config's slicing keys that are set (:data:`SLICE_KEYS`)."""
    return {key: config[key] for key in SLICE_KEYS if config.get(key) is not None}


def _is_default(path: str | os.PathLike) -> bool:
    """Whether ``path`` is the project's own ``config.yaml`` (the working directory is the project's)."""
    return os.path.relpath(os.path.abspath(path)) == DEFAULT_CONFIG


def with_run_as_given(config: Mapping[str, Any], command_line: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with a ``--config run=NAME`` of digits back as the text typed (Snakemake reads ``run=007`` as
    the number 7), before the schema checks that a run name is a string; a number in a config file stays a
    number, for :func:`check_run_type` to refuse."""
    value = command_line.get("run")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {**config, "run": _as_given(value)}
    return dict(config)


def check_run_type(config: Mapping[str, Any]) -> None:
    """A config file's ``run: 2024`` is a number in YAML: refused in one line saying how to write it."""
    value = config.get("run")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ConfigError(f'run: {value!r} is a number; a run name of digits is written in quotes: run: "{value}"')


def _as_given(value: Any) -> str:
    """A run name from ``--config run=NAME`` as typed: Snakemake reads ``run=007`` as the number 7, so a number
    is looked up among this process's arguments."""
    if isinstance(value, str):
        return value
    for arg in reversed(sys.argv):
        text = arg.removeprefix("run=")
        if text != arg and text.strip() and _number(text) == value:
            return text
    return str(value)


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return None


def run_base(name: str) -> str:
    """The config a run belongs to: its name without the slice suffix."""
    return name.split(_SLICE, 1)[0]


def _checked(name: str, key: str, where: str = "") -> str:
    if not _LABEL.match(name) or len(name) > 100:
        raise ConfigError(
            f"{key}: {name!r}{where} is not a run name: letters, digits, '_', '.' and '-', starting with a letter "
            f"or digit, at most 100 characters; set run: NAME in the config or --config run=NAME"
        )
    if name.lower() in RESERVED:
        raise ConfigError(
            f"{key}: {name!r} is reserved (results/{name.lower()} holds the per-seed result files, and a file "
            "system that ignores case would mix the two); choose another"
        )
    return name


# --- run ownership --------------------------------------------------------------------------------------


def owner(config_files: Iterable[str | os.PathLike], config: Mapping[str, Any]) -> dict[str, Any]:
    """Who a run belongs to: its config files (relative to the project folder) and its slice; or, where the
    process that started this one says so in :data:`OWNER_VAR`, that owner (``banditbench claims
    --until-decided`` runs each look from a sliced copy of its config, for the config's run ``<run>.claims``)."""
    if os.environ.get(OWNER_VAR):
        return json.loads(os.environ[OWNER_VAR])
    files = [os.path.relpath(os.path.abspath(f)) for f in config_files] or [DEFAULT_CONFIG]
    return json.loads(json.dumps({"configs": files, "slice": slice_of(config)}, default=str))


def check_owner(run: str, claimant: Mapping[str, Any], results: str | os.PathLike = "results") -> None:
    """Refuse, in one line, a run name that another config (or another slice of it) made: ``results/<run>/run.json``
    names its owner (:func:`owner`).  A run folder without that file (a run started before ownership was
    recorded) belongs to whoever runs it next."""
    path = Path(results) / run / OWNER_FILE
    try:
        made = json.loads(path.read_text())
        owned = {"configs": list(made["configs"]), "slice": dict(made.get("slice") or {})}
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ConfigError(
            f"{path}: unreadable ({type(err).__name__}); it records which config owns results/{run}/: "
            "delete it to let this config take the run"
        ) from None
    if owned["configs"] != claimant["configs"]:
        mine = ", ".join(claimant["configs"])
        raise ConfigError(
            f"run: {run!r} belongs to {', '.join(owned['configs'])} (recorded in {path}); {mine} names the same "
            f"run and would replace its tables: set run: to another name in {mine} (or remove the key: the run "
            f"is then named after the file), or delete results/{run}/ to give the name to {mine}"
        )
    if owned["slice"] != claimant["slice"]:
        said = ", ".join(f"{k}={v}" for k, v in sorted(owned["slice"].items())) or "no slice"
        raise ConfigError(
            f"run: {run!r} holds {', '.join(owned['configs'])} with {said} (recorded in {path}); this slice would "
            f"replace its tables: leave out --config run=... (a slice gets a run of its own) or name another run"
        )


def record_owner(run: str, claimant: Mapping[str, Any], results: str | os.PathLike = "results") -> None:
    """Write ``results/<run>/run.json`` (the run's owner, :func:`owner`) unless it is there."""
    from ..storage.resultio import atomic_write_bytes

    path = Path(results) / run / OWNER_FILE
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, (json.dumps({"run": run, **claimant}, indent=1, sort_keys=True) + "\n").encode())


# --- reports --------------------------------------------------------------------------------------------


def report_only(argv: Iterable[str]) -> bool:
    """Whether Snakemake's command line ``argv`` asks for the report of a run made before: ``--report``, not
    ``--report-after-run``."""
    argv = list(argv)
    asked = any(arg == "--report" or arg.startswith("--report=") for arg in argv)
    return asked and "--report-after-run" not in argv


def unmade_report(run: str, missing: list[str], configs: Iterable[str], results: str | os.PathLike = "results") -> str:
    """One line refusing the report of ``run``, whose files ``missing`` are not there (one of its own folder named):
    what to run first, and the runs of the same config files that ``results`` holds, each with the ``--config``
    of its slice (its run.json)."""
    shown = next((f for f in missing if Path(f).is_relative_to(Path(results) / run)), missing[0])
    others = f" and {len(missing) - 1} other files" if len(missing) > 1 else ""
    line = (
        f"snakemake --report: run {run!r} is not complete ({shown}{others} missing): run snakemake with this "
        "--configfile and --config first"
    )
    made = []
    for path in sorted(Path(results).glob(f"*/{OWNER_FILE}")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if path.parent.name != run and record.get("configs") == list(configs):
            args = [f"{key}={_argument(value)}" for key, value in sorted((record.get("slice") or {}).items())]
            made.append(f"{path.parent.name} (--config {' '.join(args)})" if args else path.parent.name)
    return line + (f"; made here: {', '.join(made)}" if made else "")


def _argument(value: Any) -> str:
    """A slice's value as ``--config`` takes it."""
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
