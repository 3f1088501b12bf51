"""Snakemake script: one experiment's final regret against its CPU seconds per seed (logic in
banditbench.analysis.compute)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.compute import write_compute

    out, params = snakemake.output, snakemake.params
    write_compute(
        timing=snakemake.input.timing,
        tidy=snakemake.input.table,
        experiment=snakemake.wildcards.experiment,
        metric=params.main_metric,
        csv=out.csv,
        markdown=out.md,
        latex_file=out.tex,
        html_file=out.html,
        plots=[out.pdf, out.png],
        ci_level=params.ci_level,
        plot=params.plot,
        run=params.run,
    )
