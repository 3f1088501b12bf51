"""One simulation job per experiment x algorithm x delay x budget x seed."""


rule simulate:
    input:
        # the job's algorithm, environment and core modules: editing one algorithm's
        # module re-runs only the jobs that import it
        sources=lambda wc: GRID.sources(wc.experiment, wc.algorithm),
        data=lambda wc: GRID.data_files(wc.experiment),
    output:
        "results/runs/{experiment}/{algorithm}/{delay}/{budget}/{seed}.npz",
    log:
        "logs/simulate/{experiment}/{algorithm}/{delay}/{budget}/{seed}.log",
    benchmark:
        "results/runs/{experiment}/{algorithm}/{delay}/{budget}/{seed}.benchmark.tsv"
    conda:
        "../../envs/banditbench.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc: experiment_resources(wc, "mem_mb"),
        runtime=lambda wc: experiment_resources(wc, "runtime"),
    params:
        cell=lambda wc: GRID.cell_json(wc.experiment, wc.algorithm, wc.delay, wc.budget, wc.seed),
        python=PYTHON,
    shell:
        # one BLAS thread per job: jobs run in parallel, and results are bit-identical
        # only for a fixed thread count; this checkout's src/ is on PYTHONPATH (Snakefile)
        "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 "
        "{params.python} -m banditbench run-one --cell {params.cell:q} --output {output} 2> {log}"
