"""Simulations: one job per experiment x algorithm x delay x budget x block of seeds.

Its result files lie in the cell's folder, ``results/runs/<experiment>/<algorithm>/<delay>/<budget>/<cell>/``
(``<cell>``: the digest of everything that determines their bytes, banditbench.configuration.runs), so a job
of another config, slice or horizon never writes over them, and one of a config with the same cell finds them
done.  A job runs its block of seeds (the experiment's ``seeds_per_job``) in one process and
writes one result file per seed, so aggregation and resuming are per seed while
process start-up is paid once per block.  Snakemake needs a job's output files to
be patterns over the same wildcards, so each distinct block of seeds gets its own
rule (``simulate_seeds_0_to_19``, ...), restricted to the experiments cutting that
block; a job whose block is partly done re-runs the whole block (same bytes).

With ``lockstep_variants`` (profiles/gpu), one job per experiment x lockstep group x delay x budget x block
of seeds instead: the algorithms one seed-batched engine can hold together (``GRID.variant_groups``: seed 001's
NVLDB / NLDB variants) play their blocks of seeds as one block, one rule per job (``simulate_variants_<n>``:
its members' cell folders differ in their digests, which no wildcard pattern can share), writing the same result files as the per-algorithm jobs; its benchmark file lies
next to its first algorithm's results.  Re-run because one member changed, it puts the other members' kept
results back and simulates that member alone (a member's result does not depend on its block).

A finished job that Snakemake re-runs because its data were rebuilt (a prepared dataset deleted
mid-grid, a damaged one moved aside, a raw file downloaded again: Snakemake re-runs every job after
one it runs, whatever the bytes) puts its results back instead of simulating when they were computed
from the same cell, sources and data bytes: they are kept when the run starts (onstart, Snakefile),
before Snakemake deletes them (banditbench.storage.reuse).
"""

for _block, _experiments in GRID.seed_blocks().items():
    _label = block_label(_block)

    rule:
        name:
            simulate_rule_name(_block)
        input:
            # the job's algorithm, environment and core modules: editing one algorithm's
            # module re-runs only the jobs that import it (without a shared file system: params.code)
            sources=lambda wc: code_inputs(GRID.sources(wc.experiment, wc.algorithm)),
            data=lambda wc: GRID.data_files(wc.experiment),
        output:
            [f"{CELL_DIR}/{s}.npz" for s in _block],
        log:
            f"logs/simulate/{CELL_DIR.removeprefix('results/runs/')}/{_label}.log",
        benchmark:
            f"{CELL_DIR}/{_label}.benchmark.tsv"
        wildcard_constraints:
            experiment="|".join(re.escape(e) for e in _experiments),
            cell=r"[0-9a-f]{12}",
        # the longest jobs first, so that the cores finish together (Experiment.job_priority)
        priority: lambda wc, seeds=len(_block): GRID.experiments[wc.experiment].job_priority(wc.budget, seeds)
        group:
            "simulations"
        conda:
            "../../envs/banditbench.yaml"
        threads: 1
        resources:
            mem_mb=lambda wc: experiment_resources(wc, "mem_mb"),
            runtime=lambda wc: experiment_resources(wc, "runtime"),
            # 1 for a policy on cuda (the grid-wide `device` or its params.device): profiles/gpu caps the
            # jobs holding a GPU at once (resources: gpu=1), while CPU-side jobs run beside them
            gpu=lambda wc: GRID.gpus(wc.experiment, wc.algorithm),
        params:
            # the cell and the seeds are derived from the output paths (so Snakemake's params trigger does not
            # compare them): the path's cell digest already says everything the results depend on, so a
            # config that writes a default value out (or another blocking) shares the results of one that
            # leaves it to the default, and changing seeds_per_job re-runs nothing that exists
            cell=lambda wc, output: GRID.cell_json(wc.experiment, wc.algorithm, wc.delay, wc.budget, None),
            seeds=lambda wc, output: " ".join(Path(f).stem for f in output),
            code=lambda wc: code_digest(GRID.sources(wc.experiment, wc.algorithm)),
        shell:
            # one BLAS thread per job: jobs run in parallel, and results are bit-identical
            # only for a fixed thread count; this checkout's src/ is on PYTHONPATH (Snakefile)
            "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 "
            '"$BANDITBENCH_PYTHON" -m banditbench run-block --cell {params.cell:q} --seeds {params.seeds} '
            "--outputs {output} --inputs {input.data} 2> {log}"


for _index, (_experiment, _algorithms, _delay, _budget, _block) in enumerate(GRID.variant_jobs()):
    _label = block_label(_block)
    _cells = [GRID.cell_dir(_experiment, a, _delay, _budget) for a in _algorithms]
    _resources = GRID.experiments[_experiment].resources
    _group = f"{_algorithms[0]}+{len(_algorithms) - 1}" if len(_algorithms) > 1 else _algorithms[0]

    rule:
        name:
            f"simulate_variants_{_index}"
        input:
            sources=code_inputs(GRID.sources(_experiment, *_algorithms)),
            data=GRID.data_files(_experiment),
        output:
            [f"{cell}/{s}.npz" for cell in _cells for s in _block],
        log:
            f"logs/simulate/{_experiment}/{_group}/{_delay}/{_budget}/{Path(_cells[0]).name}/{_label}.log",
        benchmark:
            f"{_cells[0]}/{_label}.benchmark.tsv"
        priority: GRID.experiments[_experiment].job_priority(_budget, len(_block), len(_algorithms))
        group:
            "simulations"
        conda:
            "../../envs/banditbench.yaml"
        threads: 1
        resources:
            # the experiment's per-job resources for each algorithm the job plays
            mem_mb=_resources["mem_mb"] * len(_algorithms),
            runtime=_resources["runtime"] * len(_algorithms),
            gpu=GRID.gpus(_experiment, *_algorithms),
        params:
            cells=variant_cells(_experiment, _algorithms, _delay, _budget),
            seeds=" ".join(str(s) for s in _block),
            code=code_digest(GRID.sources(_experiment, *_algorithms)),
        shell:
            "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 "
            '"$BANDITBENCH_PYTHON" -m banditbench run-block --cell {params.cells:q} --seeds {params.seeds} '
            "--outputs {output} --inputs {input.data} 2> {log}"
