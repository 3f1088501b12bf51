"""Snakemake script: prepare the Open Bandit Dataset for replay (logic in banditbench.data.replay)."""

from banditbench.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule) as log:
    from banditbench.data.files import save_npz
    from banditbench.data.paths import parse_replay_key
    from banditbench.data.replay import prepare_obd

    arrays, meta = prepare_obd(parse_replay_key(snakemake.wildcards.options), raw_dir="data/raw")
    save_npz(snakemake.output[0], arrays, meta)
    log.info("obd_random_all %s", meta)
