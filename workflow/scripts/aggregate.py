"""Snakemake script: aggregate one experiment's runs (logic in banditbench.analysis.aggregate)."""

import logging

from banditbench.analysis.aggregate import aggregate_experiment

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
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
)
