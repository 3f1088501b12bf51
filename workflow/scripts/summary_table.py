"""Snakemake script: one summary table across experiments (logic in banditbench.analysis.summary)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.summary import write_summary_table

    table = snakemake.params.table
    experiments = list(dict.fromkeys(row["experiment"] for row in table["rows"]))
    write_summary_table(
        table,
        tidy_files=dict(zip(experiments, snakemake.input.tables)),
        csv=snakemake.output.csv,
        markdown=snakemake.output.md,
        latex=snakemake.output.tex,
        html_file=snakemake.output.html,
        run=snakemake.params.run,
    )
