"""Snakemake script: an experiment's sweep table and figure (logic in banditbench.analysis.sweeps)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.sweeps import write_sweeps

    out, params = snakemake.output, snakemake.params
    write_sweeps(
        tidy=snakemake.input.tables,
        sweeps=params.sweeps,
        metric=params.main_metric,
        experiment=snakemake.wildcards.experiment,
        csv=out.csv,
        markdown=out.md,
        latex_file=out.tex,
        html_file=out.html,
        plots=[out.pdf, out.png],
        ci_level=params.ci_level,
        plot=params.plot,
        run=params.run,
    )
