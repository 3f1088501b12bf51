"""Gather every run of an experiment into tidy and human-facing tables."""


rule aggregate:
    input:
        runs=experiment_runs,
    output:
        csv="results/tables/{experiment}.csv",
        md="results/tables/{experiment}.md",
        tex="results/tables/{experiment}.tex",
        html=report(
            "results/tables/{experiment}.html",
            caption="../report/table.rst",
            category="Tables",
            labels={"experiment": "{experiment}", "content": "mean ± 95 % CI"},
        ),
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
        description=lambda wc: GRID.experiments[wc.experiment].spec.get("description", ""),
    script:
        "../scripts/aggregate.py"
