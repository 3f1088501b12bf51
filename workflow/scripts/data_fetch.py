"""Snakemake script: fetch one registered dataset into data/raw/ (logic in banditbench.data.fetch)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.data.fetch import fetch

    paths = fetch(snakemake.params.dataset, cache_dir="data/raw", checksums=snakemake.config.get("dataset_checksums"))
    missing = sorted(set(map(str, snakemake.output)) - set(map(str, paths)))
    if missing:
        raise RuntimeError(f"fetch did not produce {missing}")
