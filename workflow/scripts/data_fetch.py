"""Snakemake script: fetch one registered dataset into data/raw/ (logic in banditbench.data.fetch)."""

from banditbench.data.fetch import DataFetchError
from banditbench.storage.logs import rule_log

# no source gave the file: its message (one line per source tried) is the whole story, without a traceback
with rule_log(snakemake.log[0], snakemake.rule, quiet=(DataFetchError,)):
    from banditbench.data.fetch import fetch

    paths = fetch(snakemake.params.dataset, cache_dir="data/raw", checksums=snakemake.config.get("dataset_checksums"))
    missing = sorted(set(map(str, snakemake.output)) - set(map(str, paths)))
    if missing:
        raise RuntimeError(f"fetch did not produce {missing}")
