"""Snakemake script: fetch one registered dataset into data/raw/ (logic in banditbench.data.fetch)."""

import logging

from banditbench.data.fetch import fetch

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
paths = fetch(snakemake.params.dataset, cache_dir="data/raw")
missing = sorted(set(map(str, snakemake.output)) - set(map(str, paths)))
if missing:
    raise RuntimeError(f"fetch did not produce {missing}")
