"""Snakemake script: prepare the Open Bandit Dataset for replay (logic in banditbench.data.replay)."""

import logging

from banditbench.data.files import save_npz
from banditbench.data.paths import parse_replay_key
from banditbench.data.replay import prepare_obd

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
arrays, meta = prepare_obd(parse_replay_key(snakemake.wildcards.options), raw_dir="data/raw")
save_npz(snakemake.output[0], arrays, meta)
logging.info("obd_random_all %s", meta)
