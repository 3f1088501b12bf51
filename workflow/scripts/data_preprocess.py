"""Snakemake script: build one processed dataset (logic in banditbench.data.preprocess)."""

import logging

from banditbench.data.paths import parse_preprocess_key
from banditbench.data.preprocess import prepare, save_prepared

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
dataset = snakemake.wildcards.dataset
options = parse_preprocess_key(dataset, snakemake.wildcards.options)
prepared = prepare(dataset, options, raw_dir="data/raw")
save_prepared(snakemake.output[0], prepared)
logging.info("%s %s: %s", dataset, options, prepared.meta)
