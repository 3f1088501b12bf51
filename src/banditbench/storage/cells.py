"""Per-seed results addressed by what made them: a cell's folder, its digest and its readable index.

Per-seed results (:data:`CELL_DIR`): ``results/runs/<experiment>/<algorithm>/<delay>/<budget>/<cell>/<seed>.npz``,
where ``<cell>`` is :func:`cell_digest`, 12 hex digits of the sha256 of everything that determines a result's
bytes but its seed: the environment and policy with every parameter's value (defaults filled in), the delay,
budget, horizon, experiment and algorithm labels, the plugins the cell loads, and :data:`RESULT_FORMAT`.  The
labels before it keep the path readable; the cell's ``cell.json`` beside its results says in full what it is.
So two configs, slices or horizons that differ in any setting never share a file (a smoke slice with
``horizon=200`` writes beside a paper run's results, never over them), and two that agree share every file
(nothing is recomputed).  The seed-block job that writes them has the same folder in its output, log and
benchmark paths.  Results of the older layout (no ``<cell>`` folder) are moved into place, not recomputed, by
``banditbench migrate-results`` (:mod:`banditbench.configuration.migrate`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Mapping

from .. import registry
from .resultio import RESULT_FORMAT, atomic_write_bytes, budget_label

#: the folder of one cell's per-seed result files (and its jobs' benchmark files), shared by every run that
#: holds the cell; ``{cell}`` is :func:`cell_digest`
CELL_DIR = "results/runs/{experiment}/{algorithm}/{delay}/{budget}/{cell}"
#: one per-seed result file (:meth:`banditbench.configuration.grid.ExperimentGrid.jobs` gives its fields)
RESULT_PATH = CELL_DIR + "/{seed}.npz"
#: the ``{cell}`` folder name: 12 hex digits
DIGEST = re.compile(r"[0-9a-f]{12}\Z")
#: a cell folder's description of what its results hold (:func:`describe_cell`)
CELL_FILE = "cell.json"


def canonical_cell(cell: Mapping[str, Any]) -> dict[str, Any]:
    """The cell as what determines its results' bytes: without its seed, the environment's and policy's
    parameters with every default filled in (``lam: 1.0`` written out or left to the default is one cell),
    as JSON values (tuples as lists)."""

    registry.use_plugins(cell.get("plugins", ()), add=True)
    out = {key: value for key, value in cell.items() if key != "seed"}
    for part in ("environment", "policy"):
        cls = registry.get(part, cell[part]["name"]).load()
        out[part] = {"name": cell[part]["name"], "params": registry.values(cls, cell[part].get("params", {}))}
    return json.loads(json.dumps(out, sort_keys=True, default=str))


def cell_digest(cell: Mapping[str, Any]) -> str:
    """12 hex digits of the sha256 of :func:`canonical_cell` and the result format
    (:data:`banditbench.storage.resultio.RESULT_FORMAT`): the ``{cell}`` folder of its per-seed results."""
    text = json.dumps({"cell": canonical_cell(cell), "format": RESULT_FORMAT}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def cell_dir(cell: Mapping[str, Any]) -> str:
    """The folder of a cell's per-seed result files (:data:`CELL_DIR`)."""
    return CELL_DIR.format(
        experiment=cell["experiment"],
        algorithm=cell["algorithm"],
        delay=cell["delay_label"],
        budget=budget_label(cell["budget"]),
        cell=cell_digest(cell),
    )


def describe_cell(folder: str | os.PathLike, cell: Mapping[str, Any]) -> None:
    """Write ``<folder>/cell.json`` (the readable index of a cell folder: its canonical cell and the result
    format) unless it is there; a job that cannot write it still writes its results."""
    path = Path(folder) / CELL_FILE
    if path.is_file():
        return
    text = json.dumps({"cell": canonical_cell(cell), "format": RESULT_FORMAT}, sort_keys=True, indent=1)
    try:
        atomic_write_bytes(path, (text + "\n").encode())
    except OSError:  # a full or read-only folder: the results' own writes name it
        pass


def block_label(seeds: tuple[int, ...]) -> str:
    """File-name label of a block of seeds: ``seed_3``, ``seeds_0-19`` (contiguous) or ``seeds_0_3_7``."""
    if len(seeds) == 1:
        return f"seed_{seeds[0]}"
    if list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"seeds_{seeds[0]}-{seeds[-1]}"
    return "seeds_" + "_".join(map(str, seeds))
