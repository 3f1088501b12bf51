"""Publication plots from the aggregated curves."""


rule plot:
    input:
        curves="results/curves/{experiment}.csv",
    output:
        pdf="results/plots/{experiment}.pdf",
        png=report("results/plots/{experiment}.png", caption="../report/plot.rst", category="Plots"),
    log:
        "logs/plot/{experiment}.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        metric=lambda wc: f"cumulative_{GRID.experiments[wc.experiment].plot_metric}",
        title=lambda wc: wc.experiment,
    script:
        "../scripts/plot.py"


rule plot_extra:
    input:
        curves="results/curves/{experiment}.csv",
    output:
        pdf="results/plots/{experiment}/{metric}.pdf",
        png=report("results/plots/{experiment}/{metric}.png", caption="../report/plot.rst", category="Plots"),
    log:
        "logs/plot/{experiment}/{metric}.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        metric=lambda wc: f"cumulative_{wc.metric}",
        title=lambda wc: f"{wc.experiment}: cumulative {wc.metric}",
    script:
        "../scripts/plot.py"
