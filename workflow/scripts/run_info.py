"""Snakemake script: the grid that was run, what produced its results (read from the result files)
and the software versions (logic in banditbench.analysis.run_info)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.run_info import run_info_html
    from banditbench.configuration.grid import load_grid
    from banditbench.storage.resultio import atomic_write_bytes

    from banditbench.analysis.run_info import manifest_csv

    page = run_info_html(
        load_grid(snakemake.config), snakemake.params.config_files, snakemake.input.runs, snakemake.params.run
    )
    atomic_write_bytes(snakemake.output.html, page.encode())
    atomic_write_bytes(snakemake.output.manifest, manifest_csv(snakemake.input.runs).encode())
