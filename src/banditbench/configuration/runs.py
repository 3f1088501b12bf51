"""Run namespaces: where one run of a config (or of a slice of it) writes its gathered outputs.

Every table, paired comparison, plot, curve, timing summary, claims table, summary table and the run
information of one run go under ``results/<run>/`` (``tables/``, ``paired/``, ``plots/``, ``curves/``,
``timing/``, ``summary/``, ``claims/``, ``report/``, and ``manifest.csv``, the run's per-seed result files),
so that ``snakemake --report`` shows exactly the run it describes.  The per-seed result files stay in
``results/runs/``, shared and reused by every run whose cells are the same.

The run's name (:func:`run_name`):

* ``run: NAME`` given on the command line (``--config run=NAME``) is the name, as given;
* otherwise the config's ``run:`` key, or else the stem of its config file (``config/lipschitz.yaml`` ->
  ``lipschitz``; several files: their stems joined by ``-``), is the run's *base*; a run with any of the
  keys that change what a run holds (:data:`SLICE_KEYS`: ``only_experiments``, ``only_algorithms``,
  ``override``, ``seeds``, ``horizon``) adds ``.slice-`` and 8 hex digits of their values
  (``default.slice-3f2a9c1e``), so a slice never overwrites its config's outputs, and the same slice
  always finds its own again.

The base names the config a per-seed result file was made for (the job records the run in its provenance, as
``run``, handed to it in ``BANDITBENCH_RUN``).  Two configs whose experiments share a name but differ in
settings would replace each other's per-seed files: :func:`clashes` finds that before any job, and the
run stops naming the experiment, the other run and the first setting that differs.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import ConfigError

#: the keys that change which cells, seeds or horizons a run holds: a run with any of them is a slice
SLICE_KEYS = ("only_experiments", "only_algorithms", "override", "seeds", "horizon")
#: names a run may not take: ``results/runs`` holds the per-seed result files
RESERVED = frozenset({"runs"})
#: the folder of one cell's per-seed result files (and its jobs' benchmark files), shared by every run
CELL_DIR = "results/runs/{experiment}/{algorithm}/{delay}/{budget}"
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_SLICE = ".slice-"


def run_name(
    config: Mapping[str, Any], config_files: Iterable[str | os.PathLike], command_line: Mapping[str, Any]
) -> str:
    """The run's name (see the module docstring): ``command_line`` holds the keys set with ``--config``."""
    if command_line.get("run") is not None:
        return _checked(str(command_line["run"]), "run")
    if config.get("run") is not None:
        base = _checked(str(config["run"]), "run")
    else:
        stems = [Path(f).stem for f in config_files]
        base = _checked("-".join(stems), "run", f" (from the config file name{'s' if len(stems) > 1 else ''})")
    sliced = {key: config[key] for key in SLICE_KEYS if config.get(key) is not None}
    if not sliced:
        return base
    digest = hashlib.sha256(json.dumps(sliced, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{base}{_SLICE}{digest}"


def run_base(name: str) -> str:
    """The config a run belongs to: its name without the slice suffix."""
    return name.split(_SLICE, 1)[0]


def _checked(name: str, key: str, where: str = "") -> str:
    if not _LABEL.match(name) or len(name) > 100:
        raise ConfigError(
            f"{key}: {name!r}{where} is not a run name: letters, digits, '_', '.' and '-', starting with a letter "
            f"or digit, at most 100 characters; set run: NAME in the config or --config run=NAME"
        )
    if name in RESERVED:
        raise ConfigError(
            f"{key}: {name!r} is reserved (results/{name} holds the per-seed result files); choose another"
        )
    return name


def grid_cells(grid) -> Iterable[tuple[str, dict]]:
    """Each cell's result folder (:data:`CELL_DIR`) and the cell a run of ``grid`` simulates there."""
    for name, exp in grid.experiments.items():
        for algorithm, delay, budget in itertools.product(exp.algorithms, exp.delays, exp.budget_labels):
            folder = CELL_DIR.format(experiment=name, algorithm=algorithm, delay=delay, budget=budget)
            yield folder, json.loads(grid.cell_json(name, algorithm, delay, budget, None))


def clashes(cells: Iterable[tuple[str, Mapping[str, Any]]], run: str) -> list[str]:
    """One line per experiment whose per-seed result files were made for another config with other settings.

    ``cells`` pairs each cell's result folder (``results/runs/<experiment>/<algorithm>/<delay>/<budget>``) with
    the cell this run would simulate there.  A folder's first result file tells the cell it holds and the run
    that made it (its provenance's ``run``); files that record no run, or the same base (the same config,
    edited or sliced: Snakemake re-runs what changed), are no clash.
    """
    from ..storage.resultio import stored_cell_and_run

    found: dict[str, str] = {}
    for folder, cell in cells:
        experiment = Path(folder).parts[-4]
        if experiment in found or not os.path.isdir(folder):
            continue
        first = next((p for p in sorted(Path(folder).glob("*.npz")) if p.stem.isdigit()), None)
        if first is None:
            continue
        stored, made_by = stored_cell_and_run(first)
        if stored is None or made_by is None or run_base(made_by) == run_base(run):
            continue
        difference = _first_difference(stored, json.loads(json.dumps(cell)))
        if difference:
            found[experiment] = (
                f"experiments.{experiment}: {folder} holds the results of run {run_base(made_by)!r}'s experiment "
                f"{experiment!r}, whose settings differ ({difference}); this run would replace them: rename the "
                f"experiment here, or delete {Path(folder).parents[2]} to recompute it"
            )
    return list(found.values())


def _first_difference(stored: Any, wanted: Any, path: str = "") -> str | None:
    """The first key path where two cells differ, with both values (``horizon: 50 there, 100 here``)."""
    if isinstance(stored, dict) and isinstance(wanted, dict):
        for key in sorted(set(stored) | set(wanted), key=str):
            if key in ("seed", "algorithm"):  # the seed is per file; the label is the folder's name
                continue
            sub = f"{path}.{key}" if path else str(key)
            if key not in stored or key not in wanted:
                return f"{sub}: {'missing' if key not in stored else stored[key]!r} there, " + (
                    f"{'missing' if key not in wanted else wanted[key]!r} here"
                )
            found = _first_difference(stored[key], wanted[key], sub)
            if found:
                return found
        return None
    return None if stored == wanted else f"{path}: {stored!r} there, {wanted!r} here"
