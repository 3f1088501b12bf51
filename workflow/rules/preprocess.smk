"""Preprocessing: data/raw/ files -> data/processed/<dataset>/<options>.npz (banditbench.data.preprocess).

The file name carries every preprocessing option (``name=value`` pairs, defaults filled in),
so each variant an experiment asks for is built once and the rule reads its options back
from the path.
"""

from banditbench.data.paths import (
    CLASSIFICATION_DATASETS,
    REPLAY_SOURCES,
    parse_preprocess_key,
    raw_paths,
    replay_raw_paths,
)


rule preprocess:
    input:
        raw=lambda wc: raw_paths(wc.dataset, parse_preprocess_key(wc.dataset, wc.options)),
        code=code_inputs([f"{SRC}/banditbench/data/preprocess.py"]),
    output:
        "data/processed/{dataset}/{options}.npz",
    log:
        "logs/preprocess/{dataset}/{options}.log",
    wildcard_constraints:
        dataset="|".join(CLASSIFICATION_DATASETS),
        options=r"[A-Za-z0-9_.=+-]+",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        code=code_digest([f"{SRC}/banditbench/data/preprocess.py"]),
    script:
        "../scripts/data_preprocess.py"


# The Open Bandit Dataset for replay: {replay} is the dataset read (obd_random_all, the sample,
# or obd_full, the archive, checked against the checksum pinned in the config's dataset_checksums).
rule preprocess_replay:
    input:
        raw=lambda wc: replay_raw_paths(wc.replay),
        code=code_inputs([f"{SRC}/banditbench/data/replay.py"]),
    output:
        "data/processed/{replay}/{options}.npz",
    log:
        "logs/preprocess/{replay}/{options}.log",
    wildcard_constraints:
        replay="|".join(REPLAY_SOURCES.values()),
        options=r"[A-Za-z0-9_.=+-]+",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        code=code_digest([f"{SRC}/banditbench/data/replay.py"]),
    script:
        "../scripts/data_replay.py"
