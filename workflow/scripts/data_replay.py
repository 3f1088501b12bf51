"""Snakemake script: prepare the Open Bandit Dataset for replay (logic in banditbench.data.open_bandit)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule) as log:
    from banditbench.data.files import save_npz
    from banditbench.data.paths import REPLAY_SOURCES, parse_replay_key
    from banditbench.data.open_bandit import prepare_obd

    source = {dataset: name for name, dataset in REPLAY_SOURCES.items()}[snakemake.wildcards.replay]
    options = {**parse_replay_key(snakemake.wildcards.options), "source": source}
    arrays, meta = prepare_obd(options, raw_dir="data/raw", checksums=snakemake.config.get("dataset_checksums"))
    save_npz(snakemake.output[0], arrays, meta)
    log.info("%s %s", snakemake.wildcards.replay, meta)
