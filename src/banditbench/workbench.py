"""The Python API: a grid run from a notebook, without Snakemake, into the same per-seed result files.

::

    import banditbench

    grid = banditbench.Grid("config.yaml", only_experiments="linear_delayed_dueling", seeds=2)
    results = grid.run(n_jobs=2)
    results.tidy()                          # the aggregate rule's tidy table
    results.paired()                        # the paired comparisons
    results.claims                          # the claims' verdicts (None without claims)
    results.plot(outputs=["curves.png"])    # the figure of results/<run>/plots/<experiment>.png

:class:`Grid` reads a config (a file, or a mapping) and merges the keys of ``snakemake --config`` on top as
Snakemake does (``only_experiments``, ``only_algorithms``, ``override``, ``seeds``, ``horizon``, ``run``, ...:
:mod:`banditbench.configuration.slicing`), then validates it with the pipeline's checks
(:func:`~banditbench.configuration.grid.load_grid`): a bad value is a
:class:`~banditbench.errors.ConfigError` with the one-line message ``banditbench validate`` prints.

:meth:`Grid.run` plays every per-seed result of the grid that is not in place yet, through the simulate job
Snakemake runs (:func:`banditbench.simulation.job.block_job`, ``banditbench run-block``: the same cells, engines
and files, ``results/runs/<experiment>/<algorithm>/<delay>/<budget>/<cell>/<seed>.npz``, with the job's log in
``logs/simulate/``), one block of seeds per cell and ``seeds_per_job``, on ``n_jobs`` worker processes with one
BLAS thread each.  A result file in place that loads checked, holds its cell and seed and was computed from the
same sources and data bytes (:func:`banditbench.storage.reuse.why_not`) is not simulated again, so Snakemake and
the API reuse each other's results.  The API prepares no data (a missing prepared dataset is an error naming the
``snakemake`` command that makes it) and plays each algorithm's seeds on their own, also under
``lockstep_variants`` (a seed's result does not depend on its block).

:class:`Results` gathers them as the aggregate rule does, from the same functions: the per-seed table, the tidy
table, the paired comparisons, the claims' verdicts and the figures; nothing is written under
``results/<run>/`` (that is Snakemake's).  Paths are relative to the working directory, as Snakemake's: run
from the project folder.
"""

from __future__ import annotations

import copy
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import redirect_stderr
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from .configuration.grid import ExperimentGrid, load_config_file, load_grid
from .configuration.runs import run_name
from .errors import ConfigError, key_path
from .storage import reuse
from .storage.cells import block_label

#: slicing keys whose list value the command line gives joined (``only_algorithms=ldb_df,random``), with the joiner
_JOINED = {"only_experiments": ",", "only_algorithms": ",", "override": " "}


def _checked(call, *args):
    """``call(*args)``, a :class:`ConfigError` raised again with its message alone (no traceback of internals)."""
    try:
        return call(*args)
    except ConfigError as err:
        raise ConfigError(str(err)) from None


def _as_command_line(key: str, value: Any) -> Any:
    """A slicing key's list as ``snakemake --config`` hands it over (a string), so that the run is named alike."""
    if key in _JOINED and isinstance(value, (list, tuple)):
        return _JOINED[key].join(map(str, value))
    return value


def _merged(config: str | os.PathLike | Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The config file (or mapping) with ``overrides`` merged on top as Snakemake merges ``--config``."""
    from snakemake.utils import update_config

    merged = copy.deepcopy(dict(config)) if isinstance(config, Mapping) else load_config_file(config)
    update_config(merged, copy.deepcopy(dict(overrides)))
    return merged


class Grid:
    """A validated grid of experiments, sliced and overridden as on the command line.

    Parameters
    ----------
    config : str, os.PathLike or Mapping
        A config file (``config.yaml``, ``config/lipschitz.yaml``) or the config itself as a mapping.
    **overrides
        Keys set as with ``snakemake --config KEY=VALUE``: ``only_experiments``, ``only_algorithms`` and
        ``override`` (a string as on the command line, or a list of names / entries), ``seeds``, ``horizon``,
        ``run`` or any other config key.

    Raises
    ------
    ConfigError
        The config or an override is invalid; the message is one line naming the key.

    Examples
    --------
    >>> grid = Grid("config.yaml", only_experiments="linear_delayed_dueling", seeds=2)
    >>> grid.with_overrides(override="ldb_df.lam=2").run()
    """

    def __init__(self, config: str | os.PathLike | Mapping[str, Any], **overrides: Any):
        self._source = config
        self._overrides = {key: _as_command_line(key, value) for key, value in overrides.items()}
        #: the merged config, before slicing (what Snakemake's ``config`` holds)
        self.config: dict[str, Any] = _checked(_merged, config, self._overrides)
        #: the validated, sliced grid (:class:`~banditbench.configuration.grid.ExperimentGrid`)
        self.grid: ExperimentGrid = _checked(load_grid, self.config)

    def with_overrides(self, **overrides: Any) -> Grid:
        """This grid's config with more ``--config`` keys (a later value of a key replaces the earlier)."""
        return Grid(self._source, **{**self._overrides, **overrides})

    @property
    def experiments(self) -> list[str]:
        """The experiments the slice holds, in config order."""
        return list(self.grid.experiments)

    @property
    def run_name(self) -> str | None:
        """The run Snakemake names this config and slice (its tables would be in ``results/<run>/``); None for a
        mapping without a ``run`` key."""
        files = [] if isinstance(self._source, Mapping) else [self._source]
        if not files and self.config.get("run") is None and self._overrides.get("run") is None:
            return None
        return _checked(run_name, self.config, files, self._overrides)

    def result_files(self) -> list[str]:
        """Every per-seed result file of the grid, experiment by experiment."""
        return [f for name in self.grid.experiments for f in self.grid.result_files(name)]

    def __repr__(self) -> str:
        source = "a mapping" if isinstance(self._source, Mapping) else os.fspath(self._source)
        return f"Grid({source}, {self._overrides}: {len(self.result_files())} runs of {', '.join(self.experiments)})"

    def run(self, n_jobs: int = 1) -> Results:
        """Simulate the per-seed results not in place yet and gather all of them.

        Parameters
        ----------
        n_jobs : int
            Worker processes that play blocks of seeds at once; 1 plays them in this process.

        Returns
        -------
        Results
            The gathered tables, paired comparisons, claims and figures, and which files were simulated.

        Raises
        ------
        ConfigError
            A prepared dataset an experiment reads is missing (the message names the command that makes it).
        """
        if not isinstance(n_jobs, int) or n_jobs < 1:
            raise ValueError(f"n_jobs: a positive number of worker processes, got {n_jobs!r}")
        _checked(_check_data, self.grid)
        blocks, reused = _plan(self.grid)
        if n_jobs == 1 or len(blocks) < 2:
            for block in blocks:
                _simulate(block)
        else:
            context = multiprocessing.get_context("spawn")  # a fresh process: no state forked from a notebook
            with ProcessPoolExecutor(min(n_jobs, len(blocks)), mp_context=context) as pool:
                list(pool.map(_simulate, blocks))
        simulated = [output for block in blocks for output in block.outputs]
        return Results(self, simulated, reused, n_jobs)


@dataclass(frozen=True)
class _Block:
    """One simulate job: ``banditbench run-block``'s arguments."""

    cell: dict
    seeds: tuple[int, ...]
    outputs: tuple[str, ...]
    inputs: tuple[str, ...]


def _check_data(grid: ExperimentGrid) -> None:
    """Every prepared data file the grid's experiments read is there (Snakemake's rules make them, not the API)."""
    for name in grid.experiments:
        for path in grid.data_files(name):
            if not Path(path).is_file():
                raise ConfigError(
                    f"{key_path('experiments', name, 'environment')}: its prepared data file {path} is not there; "
                    f"the Python API prepares no data: make it with `snakemake --cores 1 {path}`"
                )


def _plan(grid: ExperimentGrid) -> tuple[list[_Block], list[str]]:
    """The blocks to simulate (per cell and block of ``seeds_per_job``, the seeds whose result file is not
    current: :func:`banditbench.storage.reuse.why_not`), and the result files reused."""
    blocks, reused = [], []
    for name, exp in grid.experiments.items():
        inputs = tuple(grid.data_files(name))
        for algorithm in exp.algorithms:
            for delay in exp.delays:
                for budget in exp.budget_labels:
                    cell = json.loads(grid.cell_json(name, algorithm, delay, budget, None))  # as --cell hands it
                    made_from = reuse.facts(cell, inputs)
                    folder = grid.cell_dir(name, algorithm, delay, budget)
                    for block in exp.seed_blocks:
                        files = {seed: f"{folder}/{seed}.npz" for seed in block}
                        current = [
                            s
                            for s, f in files.items()
                            if Path(f).is_file() and not reuse.why_not(Path(f), cell, s, made_from)
                        ]
                        reused += [files[s] for s in current]
                        todo = tuple(s for s in block if s not in current)
                        if todo:
                            blocks.append(_Block(cell, todo, tuple(files[s] for s in todo), inputs))
    return blocks, reused


def _simulate(block: _Block) -> None:
    """Run one block as its simulate job does, with one BLAS thread, its log where Snakemake puts the job's."""
    from threadpoolctl import threadpool_limits

    from .simulation.job import block_job

    folder = Path(block.outputs[0]).parent
    log = Path("logs", "simulate", *folder.parts[2:], f"{block_label(block.seeds)}.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    with threadpool_limits(limits=1), open(log, "w") as stream, redirect_stderr(stream):
        block_job([block.cell], list(block.seeds), list(block.outputs), list(block.inputs))


@dataclass(frozen=True)
class _Gathered:
    """One experiment's results as the aggregate rule computes them."""

    params: dict
    seeds: Any
    tidy: Any
    curves: Any
    paired: Any
    paired_curves: Any


def _gather(grid: ExperimentGrid, name: str, workers: int) -> _Gathered:
    """Read an experiment's result files into its per-seed table and compute its tables, as the aggregate rule
    does (workflow/scripts/aggregate.py) from the same params."""
    from .analysis.aggregate import tables_from_seeds
    from .analysis.paired import paired_tables
    from .analysis.seedtable import collect_seeds
    from .storage.resultio import reading_threads

    params = grid.experiments[name].aggregate_params()
    runs = grid.result_files(name)
    seeds = collect_seeds(
        runs, name, params["horizons"], params["per_round"], workers=min(workers, reading_threads(len(runs)))
    )
    tidy, curves, _, _ = tables_from_seeds(
        seeds, name, params["main_metric"], params["ci_level"], params["spread"], params["plot"].get("names")
    )
    paired, paired_curves = (
        paired_tables(seeds, name, params["paired"], params["ci_level"]) if params["paired"] else (None, None)
    )
    return _Gathered(params, seeds, tidy, curves, paired, paired_curves)


class Results:
    """A grid's results, gathered as the pipeline gathers them (made by :meth:`Grid.run`).

    Attributes
    ----------
    grid : Grid
        The grid that made them.
    simulated : list of str
        The per-seed result files this run simulated.
    reused : list of str
        The per-seed result files that were in place and current, reused.
    """

    def __init__(self, grid: Grid, simulated: Sequence[str], reused: Sequence[str], workers: int = 1):
        self.grid = grid
        self.simulated = list(simulated)
        self.reused = list(reused)
        self._gathered = {name: _gather(grid.grid, name, workers) for name in grid.experiments}

    def __repr__(self) -> str:
        return (
            f"Results({', '.join(self._gathered)}: {len(self.simulated)} per-seed results simulated, "
            f"{len(self.reused)} reused)"
        )

    @property
    def experiments(self) -> list[str]:
        """The experiments gathered, in config order."""
        return list(self._gathered)

    def _one(self, experiment: str | None) -> str:
        """``experiment``, or the only one; a :class:`ConfigError` names the experiments otherwise."""
        if experiment is None and len(self._gathered) == 1:
            return next(iter(self._gathered))
        if experiment not in self._gathered:
            raise ConfigError(f"experiment: {experiment!r} is not one of these results; name one of {self.experiments}")
        return experiment

    def _tables(self, attribute: str, experiment: str | None):
        """One experiment's table ``attribute``, or every experiment's that has one, concatenated."""
        import pandas as pd

        names = [self._one(experiment)] if experiment is not None else self.experiments
        frames = [getattr(self._gathered[n], attribute) for n in names]
        frames = [f for f in frames if f is not None]
        if experiment is not None or len(frames) == 1:
            return frames[0] if frames else None
        return pd.concat(frames, ignore_index=True) if frames else None

    def tidy(self, experiment: str | None = None):
        """The tidy table: ``results/<run>/tables/<experiment>.csv`` (columns ``experiment, algorithm, delay,
        budget, t, metric, mean, ci_low, ci_high, n``, ...); every experiment's, one after the other, when
        ``experiment`` is None."""
        return self._tables("tidy", experiment)

    def seeds(self, experiment: str | None = None):
        """The per-seed table: ``results/<run>/tables/<experiment>.parquet`` (one row per run, round and metric)."""
        return self._tables("seeds", experiment)

    def paired(self, experiment: str | None = None):
        """The paired comparisons ``A − B``: ``results/<run>/paired/<experiment>.csv``; None for an experiment
        without pairs (and with ``experiment`` None, when none has them)."""
        return self._tables("paired", experiment)

    @property
    def claims(self):
        """The verdicts of the config's claims on these results (``results/<run>/claims/claims.csv``), or None
        when the grid states none."""
        from .analysis.claims import evaluate

        grid = self.grid.grid
        if not grid.claims:
            return None
        tables = {name: self._gathered[name].seeds for name in grid.claim_experiments()}
        return evaluate(grid.claims, tables, grid.claims_alpha)

    def plot(self, experiment: str | None = None, metric: str | None = None, outputs: Sequence[str | Path] = ()):
        """The curves figure (:func:`banditbench.analysis.plots.curves_figure`) of ``metric`` (default: the
        experiment's headline metric; ``cumulative_cost``, say, for another), saved to ``outputs`` as the
        pipeline saves ``results/<run>/plots/<experiment>.{pdf,png}`` when given."""
        from .analysis.plots import _save, curves_figure

        name = self._one(experiment)
        gathered, params = self._gathered[name], self._gathered[name].params
        figure = curves_figure(
            gathered.curves,
            metric or params["main_metric"],
            name,
            params["ci_level"],
            gathered.seeds if params["plot_seeds"] else None,
            params["plot"],
        )
        if outputs:
            _save(figure, outputs)
        return figure

    def plot_paired(self, experiment: str | None = None, outputs: Sequence[str | Path] = ()):
        """The paired differences figure (:func:`banditbench.analysis.paired.differences_figure`), saved to
        ``outputs`` as the pipeline saves ``results/<run>/paired/<experiment>.{pdf,png}`` when given."""
        from .analysis.paired import differences_figure
        from .analysis.plots import _save

        name = self._one(experiment)
        gathered = self._gathered[name]
        if gathered.paired_curves is None:
            raise ConfigError(f"{key_path('experiments', name, 'paired')}: the experiment has no paired comparisons")
        figure = differences_figure(
            gathered.paired_curves, f"{name}: paired differences A − B", gathered.params["plot"]
        )
        if outputs:
            _save(figure, outputs)
        return figure
