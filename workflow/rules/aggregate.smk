"""Gather every run of an experiment into its tables, plot and paired comparisons.

One job per experiment does all of it in one process: the per-seed table is read once, and the
Python start and imports (pandas, matplotlib, pyarrow: about 2.5 s) are paid once instead of once
per product (in the default grid, most of the separate jobs' CPU was that: docs/speed-and-scale.md).
Experiments with paired comparisons and those without (one algorithm, or ``paired: false``)
get one rule each, as their outputs differ.
"""

for _rule_name, _paired in (("aggregate", True), ("aggregate_unpaired", False)):
    _experiments = [name for name, exp in GRID.experiments.items() if bool(exp.paired) == _paired]
    if not _experiments:
        continue

    rule:
        name:
            _rule_name
        input:
            runs=experiment_runs,
        output:
            **aggregate_outputs(_paired),
        log:
            "logs/aggregate/{experiment}.log",
        wildcard_constraints:
            experiment="|".join(re.escape(e) for e in _experiments),
        conda:
            "../../envs/banditbench.yaml"
        # processes reading the result files: 4 for a paper grid's thousands, 1 below 200
        threads: lambda wc: reading_threads(len(experiment_runs(wc)))
        resources:
            mem_mb=2000,
            runtime=10,
        params:
            # banditbench.configuration.grid.Experiment.aggregate_params: what the Python API gathers with too
            horizons=aggregate_param("horizons"),
            main_metric=aggregate_param("main_metric"),
            per_round=aggregate_param("per_round"),
            description=aggregate_param("description"),
            ci_level=aggregate_param("ci_level"),
            spread=aggregate_param("spread"),
            plot_seeds=aggregate_param("plot_seeds"),
            paired=aggregate_param("paired"),
            plot=aggregate_param("plot"),
            run=RUN,  # in the LaTeX tables' labels
        script:
            "../scripts/aggregate.py"


rule summary_table:
    input:
        tables=lambda wc: [f"{RESULTS}/tables/{name}.csv" for name in GRID.summary_tables[wc.table].experiments],
    output:
        csv=f"{RESULTS}/summary/{{table}}.csv",
        md=f"{RESULTS}/summary/{{table}}.md",
        tex=f"{RESULTS}/summary/{{table}}.tex",
        html=report(
            f"{RESULTS}/summary/{{table}}.html",
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
        run=RUN,
    script:
        "../scripts/summary_table.py"


# the papers' claims (config key claims), each judged on its experiment's per-seed table (a time claim: on its
# per-seed timing table)
if GRID.claims:

    rule claims:
        input:
            tables=[f"{RESULTS}/tables/{name}.parquet" for name in GRID.claim_experiments()],
            timing=[f"{RESULTS}/tables/{name}.timing.parquet" for name in GRID.claim_experiments()],
        output:
            csv=f"{RESULTS}/claims/claims.csv",
            md=f"{RESULTS}/claims/claims.md",
            html=report(
                f"{RESULTS}/claims/claims.html",
                caption="../report/claims.rst",
                category="Claims",
                labels={"content": "the papers' claims"},
            ),
        log:
            "logs/claims/claims.log",
        conda:
            "../../envs/banditbench.yaml"
        resources:
            mem_mb=2000,
            runtime=5,
        params:
            claims=GRID.claims_params(),
        script:
            "../scripts/claims.py"


# experiments whose algorithms are swept (override with several values): the final value against the parameter's
_sweeping = [name for name, exp in GRID.experiments.items() if exp.sweeps()]
if _sweeping:

    rule sweep:
        input:
            tables=f"{RESULTS}/tables/{{experiment}}.csv",
        output:
            **sweep_outputs(),
        log:
            "logs/sweep/{experiment}.log",
        wildcard_constraints:
            experiment="|".join(re.escape(e) for e in _sweeping),
        conda:
            "../../envs/banditbench.yaml"
        resources:
            mem_mb=1000,
            runtime=5,
        params:
            sweeps=lambda wc: GRID.experiments[wc.experiment].sweeps(),
            main_metric=lambda wc: f"cumulative_{GRID.experiments[wc.experiment].plot_metric}",
            ci_level=lambda wc: GRID.experiments[wc.experiment].ci_level,
            plot=lambda wc: dict(GRID.experiments[wc.experiment].plot),
            run=RUN,
        script:
            "../scripts/sweep.py"
