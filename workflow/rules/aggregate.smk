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
            labels={"experiment": "{experiment}", "content": "mean ± CI"},
        ),
        curves="results/curves/{experiment}.csv",
        # every run's metrics per seed and horizon, one table (tables, curves and paired comparisons read it)
        seeds="results/tables/{experiment}.parquet",
    log:
        "logs/aggregate/{experiment}.log",
    conda:
        "../../envs/banditbench.yaml"
    # processes reading the result files (thousands in a paper grid)
    threads: 4
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        horizons=lambda wc: list(GRID.experiments[wc.experiment].table_horizons),
        main_metric=lambda wc: f"cumulative_{GRID.experiments[wc.experiment].plot_metric}",
        per_round=lambda wc: GRID.experiments[wc.experiment].per_round_metrics,
        description=lambda wc: GRID.experiments[wc.experiment].spec.get("description", ""),
        ci_level=lambda wc: GRID.experiments[wc.experiment].ci_level,
        spread=lambda wc: GRID.experiments[wc.experiment].spread,
    script:
        "../scripts/aggregate.py"


rule paired:
    input:
        seeds="results/tables/{experiment}.parquet",
    output:
        csv="results/paired/{experiment}.csv",
        curves="results/paired/curves/{experiment}.csv",
        md="results/paired/{experiment}.md",
        tex="results/paired/{experiment}.tex",
        html=report(
            "results/paired/{experiment}.html",
            caption="../report/paired_table.rst",
            category="Paired comparisons",
            labels={"experiment": "{experiment}", "content": "A − B table"},
        ),
        pdf="results/paired/{experiment}.pdf",
        png=report(
            "results/paired/{experiment}.png",
            caption="../report/paired_plot.rst",
            category="Paired comparisons",
            labels={"experiment": "{experiment}", "content": "A − B curves"},
        ),
    log:
        "logs/paired/{experiment}.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        paired=lambda wc: paired_spec(wc.experiment),
        ci_level=lambda wc: GRID.experiments[wc.experiment].ci_level,
        spread=lambda wc: GRID.experiments[wc.experiment].spread,
    script:
        "../scripts/paired.py"


rule summary_table:
    input:
        tables=lambda wc: [f"results/tables/{name}.csv" for name in GRID.summary_tables[wc.table].experiments],
    output:
        csv="results/summary/{table}.csv",
        md="results/summary/{table}.md",
        tex="results/summary/{table}.tex",
        html=report(
            "results/summary/{table}.html",
            caption="../report/summary_table.rst",
            category="Summary tables",
            labels={"table": "{table}"},
        ),
    log:
        "logs/summary/{table}.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        table=lambda wc: GRID.summary_tables[wc.table].as_params(),
        ci_level=lambda wc: GRID.summary_tables[wc.table].ci_level,
    script:
        "../scripts/summary_table.py"
