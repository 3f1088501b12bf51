"""Snakemake script: one experiment's runs gathered into its tables, plot and paired comparisons (logic in
banditbench.analysis: aggregate, plots, paired)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.aggregate import aggregate_experiment
    from banditbench.analysis.paired import write_paired
    from banditbench.analysis.plots import plot_curves
    from banditbench.analysis.seedtable import read_seeds
    from banditbench.configuration.display import Names

    out, params, experiment = snakemake.output, snakemake.params, snakemake.wildcards.experiment
    aggregate_experiment(
        runs=list(snakemake.input.runs),
        experiment=experiment,
        horizons=params.horizons,
        csv=out.csv,
        markdown=out.md,
        latex=out.tex,
        curves=out.curves,
        main_metric=params.main_metric,
        per_round=params.per_round,
        html_file=out.html,
        description=params.description,
        ci_level=params.ci_level,
        seeds_file=out.seeds,
        timing_file=out.timing,
        spread=params.spread,
        workers=snakemake.threads,
        run=params.run,
        names=params.plot.get("names"),
        display=params.plot.get("display"),
        # the pre-job check (workflow/rules/common.smk) has moved corrupt results aside and had them
        # rebuilt; one damaged since is deleted, named in the error, and rebuilt by the next run
        remove_corrupt=True,
    )
    plot_curves(
        curves=out.curves,
        metric=params.main_metric,
        title=Names.of(params.plot.get("display")).experiment(experiment),  # drawn with plot.title: true
        outputs=[out.plot_pdf, out.plot_png],
        ci_level=params.ci_level,
        seeds=read_seeds(out.seeds) if params.plot_seeds else None,
        style=params.plot,
    )
    if params.paired:
        write_paired(
            seeds_file=out.seeds,
            experiment=experiment,
            paired=params.paired,
            csv=out.paired_csv,
            curves_csv=out.paired_curves,
            markdown=out.paired_md,
            latex=out.paired_tex,
            html_file=out.paired_html,
            plots=[out.paired_pdf, out.paired_png],
            ci_level=params.ci_level,
            spread=params.spread,
            plot=params.plot,
            run=params.run,
        )
