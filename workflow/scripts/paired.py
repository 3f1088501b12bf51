"""Snakemake script: one experiment's paired comparisons (logic in banditbench.analysis.paired)."""

from banditbench.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.paired import write_paired

    write_paired(
        seeds_file=snakemake.input.seeds,
        experiment=snakemake.wildcards.experiment,
        paired=snakemake.params.paired,
        csv=snakemake.output.csv,
        curves_csv=snakemake.output.curves,
        markdown=snakemake.output.md,
        latex=snakemake.output.tex,
        html_file=snakemake.output.html,
        plots=[snakemake.output.pdf, snakemake.output.png],
        ci_level=snakemake.params.ci_level,
        spread=snakemake.params.spread,
    )
