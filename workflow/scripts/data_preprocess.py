"""Snakemake script: build one processed dataset (logic in banditbench.data.preprocess)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule) as log:
    from banditbench.data.paths import parse_preprocess_key
    from banditbench.data.preprocess import prepare, save_prepared

    dataset = snakemake.wildcards.dataset
    options = parse_preprocess_key(dataset, snakemake.wildcards.options)
    prepared = prepare(dataset, options, raw_dir="data/raw")  # raw files checked against their checksums
    save_prepared(snakemake.output[0], prepared)
    log.info("%s %s: %s", dataset, options, prepared.meta)
