"""Gather every run of an experiment into tidy and human-facing tables."""


rule aggregate:
    input:
        runs=experiment_runs,
    output:
        csv=report("results/tables/{experiment}.csv", caption="../report/table.rst", category="Tables"),
        md="results/tables/{experiment}.md",
        tex="results/tables/{experiment}.tex",
        curves="results/curves/{experiment}.csv",
    log:
        "logs/aggregate/{experiment}.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        horizons=lambda wc: list(GRID.experiments[wc.experiment].table_horizons),
        main_metric=lambda wc: f"cumulative_{GRID.experiments[wc.experiment].plot_metric}",
        per_round=lambda wc: GRID.experiments[wc.experiment].per_round_metrics,
    script:
        "../scripts/aggregate.py"
