"""Gather every run of an experiment into tidy and human-facing tables."""


rule aggregate:
    input:
        runs=experiment_runs,
    output:
        csv=report("results/tables/{experiment}.csv", caption="../report/table.rst", category="Tables"),
        md="results/tables/{experiment}.md",
        tex="results/tables/{experiment}.tex",
        curves="results/curves/{experiment}.csv",
    params:
        horizons=lambda wc: list(GRID.experiments[wc.experiment].table_horizons),
        main_metric=lambda wc: f"cumulative_{GRID.experiments[wc.experiment].plot_metric}",
    log:
        "logs/aggregate/{experiment}.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/banditbench.yaml"
    script:
        "../scripts/aggregate.py"
