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
        title=lambda wc: f"{GRID.experiments[wc.experiment].display_name()}: cumulative {wc.metric}",
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


rule run_info:
    input:
        # after every table, so that it describes a finished run
        tables=expand(f"{RESULTS}/tables/{{experiment}}.csv", experiment=GRID.experiments),
        # what produced them is read from every result file's provenance member
        runs=lambda wc: [RESULT_PATH.format(**job) for e in GRID.experiments for job in GRID.jobs(e)],
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
