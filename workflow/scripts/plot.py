"""Snakemake script: plot one experiment's curves (logic in banditbench.analysis.plots)."""

import logging

from banditbench.analysis.plots import plot_curves

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
plot_curves(
    curves=snakemake.input.curves,
    metric=snakemake.params.metric,
    title=snakemake.params.title,
    outputs=[snakemake.output.pdf, snakemake.output.png],
)
