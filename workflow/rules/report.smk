"""The experiments' further plots (extra metrics, panels; the main plot is the aggregate job's), the simulate
jobs' timing summary and the run information of `snakemake --report`."""


rule plot_extra:
    input:
        curves=f"{RESULTS}/curves/{{experiment}}.csv",
    output:
        pdf=f"{RESULTS}/plots/{{experiment}}/{{metric}}.pdf",
        png=report(
            f"{RESULTS}/plots/{{experiment}}/{{metric}}.png",
            caption="../report/plot_extra.rst",
            category="Plots",
            labels={"experiment": "{experiment}", "figure": "{metric}"},
        ),
    log:
        "logs/plot/{experiment}/{metric}.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        metric=lambda wc: f"cumulative_{wc.metric}",
        title=lambda wc: extra_plot_title(wc.experiment, wc.metric),
        ci_level=lambda wc: GRID.experiments[wc.experiment].ci_level,
        plot=lambda wc: dict(GRID.experiments[wc.experiment].plot),
    script:
        "../scripts/plot.py"


rule plot_panels:
    input:
        curves=f"{RESULTS}/curves/{{experiment}}.csv",
    output:
        pdf=f"{RESULTS}/plots/{{experiment}}/panels/{{plot}}.pdf",
        png=report(
            f"{RESULTS}/plots/{{experiment}}/panels/{{plot}}.png",
            caption="../report/plot_panels.rst",
            category="Plots",
            labels={"experiment": "{experiment}", "figure": "{plot}"},
        ),
    log:
        "logs/plot/{experiment}/panels/{plot}.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        metric=lambda wc: f"cumulative_{GRID.experiments[wc.experiment].panel_plots[wc.plot]['metric']}",
        panels=lambda wc: GRID.experiments[wc.experiment].panel_plots[wc.plot]["panels"],
        caption=lambda wc: GRID.experiments[wc.experiment].panel_plots[wc.plot]["caption"],
        title=lambda wc: f"{GRID.experiments[wc.experiment].display_name()}: {wc.plot}",
        ci_level=lambda wc: GRID.experiments[wc.experiment].ci_level,
        plot=lambda wc: dict(GRID.experiments[wc.experiment].plot),
    script:
        "../scripts/plot_panels.py"


rule timing:
    # its own job: it reads the simulate jobs' benchmark files, which are not declared inputs (their names
    # follow the blocking that wrote each result), so the tables do not wait on them where files move
    # through a storage provider instead of a shared file system
    input:
        runs=experiment_runs,
    output:
        csv=f"{RESULTS}/timing/{{experiment}}.csv",
        html=report(
            f"{RESULTS}/timing/{{experiment}}.html",
            caption="../report/timing.rst",
            category="Timing",
            labels={"experiment": "{experiment}", "content": "simulate jobs"},
        ),
    log:
        "logs/timing/{experiment}.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/timing.py"


rule compute:
    # each algorithm's final plot metric (the tidy table's row) against its CPU seconds per seed (the per-seed
    # timing table; banditbench.analysis.compute says how a seed-batched block's time is shared)
    input:
        timing=f"{RESULTS}/tables/{{experiment}}.timing.parquet",
        table=f"{RESULTS}/tables/{{experiment}}.csv",
    output:
        csv=f"{RESULTS}/compute/{{experiment}}.csv",
        md=f"{RESULTS}/compute/{{experiment}}.md",
        tex=f"{RESULTS}/compute/{{experiment}}.tex",
        html=report(
            f"{RESULTS}/compute/{{experiment}}.html",
            caption="../report/compute_table.rst",
            category="Regret against compute",
            labels={"experiment": "{experiment}", "content": "table"},
        ),
        pdf=f"{RESULTS}/compute/{{experiment}}.pdf",
        png=report(
            f"{RESULTS}/compute/{{experiment}}.png",
            caption="../report/compute_plot.rst",
            category="Regret against compute",
            labels={"experiment": "{experiment}", "content": "figure"},
        ),
    log:
        "logs/compute/{experiment}.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        main_metric=lambda wc: f"cumulative_{GRID.experiments[wc.experiment].plot_metric}",
        ci_level=lambda wc: GRID.experiments[wc.experiment].ci_level,
        plot=lambda wc: dict(GRID.experiments[wc.experiment].plot),
        run=RUN,  # in the LaTeX table's label
    script:
        "../scripts/compute.py"


# one self-contained page of the run's curves and paired comparisons, the reader choosing experiment, metric,
# delay, budget and algorithms (banditbench.analysis.interactive)
rule interactive:
    input:
        curves=[f"{RESULTS}/curves/{name}.csv" for name in GRID.experiments],
        paired=[f"{RESULTS}/paired/{name}.csv" for name, exp in GRID.experiments.items() if exp.paired],
    output:
        html=report(
            f"{RESULTS}/interactive.html",
            caption="../report/interactive.rst",
            category="Interactive results",
            labels={"content": "curves and paired comparisons"},
        ),
    log:
        "logs/interactive.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        run=RUN,
        experiments=list(GRID.experiments),
        paired=[name for name, exp in GRID.experiments.items() if exp.paired],
        plots={name: dict(exp.plot) for name, exp in GRID.experiments.items()},
        main_metrics={name: f"cumulative_{exp.plot_metric}" for name, exp in GRID.experiments.items()},
        ci_levels={name: exp.ci_level for name, exp in GRID.experiments.items()},
        descriptions={name: exp.spec.get("description", "") for name, exp in GRID.experiments.items()},
    script:
        "../scripts/interactive.py"


rule run_info:
    input:
        # after every table, so that it describes a finished run
        tables=expand(f"{RESULTS}/tables/{{experiment}}.csv", experiment=GRID.experiments),
        # what produced them is read from every result file's provenance member
        runs=lambda wc: [f for e in GRID.experiments for f in GRID.result_files(e)],
    output:
        html=f"{RESULTS}/report/run_info.html",
        # the run's per-seed result files, one row each (banditbench provenance results/<run> reads it)
        manifest=f"{RESULTS}/manifest.csv",
    log:
        "logs/run_info.log",
    localrule: True
    conda:
        "../../envs/banditbench.yaml"
    params:
        config_files=[os.path.relpath(f) for f in workflow.configfiles],
        run=RUN,
    script:
        "../scripts/run_info.py"


# `snakemake --report` of a run not made (or not finished: a slice made, say, and the config's own run not): one
# line naming what to run first, not Snakemake's error about the first missing file marked for the report
if RECORDS_OWNER and report_only(sys.argv):
    _missing = [f for f in all_outputs() if not os.path.exists(f)]
    if _missing:
        stop(unmade_report(RUN, _missing, RUN_OWNER["configs"]))
