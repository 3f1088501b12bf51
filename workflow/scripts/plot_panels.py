"""Snakemake script: one of an experiment's panel plots (logic in banditbench.analysis.plots)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.plots import plot_panels

    plot_panels(
        curves=snakemake.input.curves,
        metric=snakemake.params.metric,
        panels=snakemake.params.panels,
        title=snakemake.params.title,
        outputs=[snakemake.output.pdf, snakemake.output.png],
        ci_level=snakemake.params.ci_level,
        style=snakemake.params.plot,
    )
