"""Snakemake script: time and memory of one experiment's simulate jobs (logic in banditbench.analysis.timing)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.timing import write_timing

    write_timing(
        runs=list(snakemake.input.runs),
        experiment=snakemake.wildcards.experiment,
        csv=snakemake.output.csv,
        html_file=snakemake.output.html,
    )
