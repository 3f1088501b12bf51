"""Snakemake script: the run's interactive results page (logic in banditbench.analysis.interactive)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.interactive import write_interactive

    params = snakemake.params
    write_interactive(
        run=params.run,
        curves=dict(zip(params.experiments, snakemake.input.curves)),
        paired=dict(zip(params.paired, snakemake.input.paired)),
        output=snakemake.output.html,
        plots=params.plots,
        main_metrics=params.main_metrics,
        ci_levels=params.ci_levels,
        descriptions=params.descriptions,
    )
