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
        seeds_file=snakemake.output.seeds,
        spread=snakemake.params.spread,
        workers=snakemake.threads,
        # the pre-job check (workflow/rules/common.smk) has moved corrupt results aside and had them
        # rebuilt; one damaged since is deleted, named in the error, and rebuilt by the next run
        remove_corrupt=True,
    )
