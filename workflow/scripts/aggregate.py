"""Snakemake script: aggregate one experiment's runs (logic in banditbench.analysis.aggregate)."""

from banditbench.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.aggregate import aggregate_experiment

    aggregate_experiment(
        runs=list(snakemake.input.runs),
        experiment=snakemake.wildcards.experiment,
        horizons=snakemake.params.horizons,
        csv=snakemake.output.csv,
        markdown=snakemake.output.md,
        latex=snakemake.output.tex,
        curves=snakemake.output.curves,
        main_metric=snakemake.params.main_metric,
        per_round=snakemake.params.per_round,
        html_file=snakemake.output.html,
        description=snakemake.params.description,
        ci_level=snakemake.params.ci_level,
        remove_corrupt=True,  # a corrupt run file is deleted: the next snakemake run rebuilds it
    )
