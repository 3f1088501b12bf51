"""Preprocessing: data/raw/ files -> data/processed/<dataset>/<options>.npz (banditbench.data.preprocess).

The file name carries every preprocessing option (``name=value`` pairs, defaults filled in),
so each variant an experiment asks for is built once and the rule reads its options back
from the path.
"""

from banditbench.data.paths import (
    CLASSIFICATION_DATASETS,
    REPLAY_SOURCES,
    parse_arms_key,
    parse_preprocess_key,
    prompt_arms_inputs,
    prompt_embedding_raw_paths,
    raw_paths,
    replay_raw_paths,
)
from banditbench.data.catalog import ENCODERS, SCORED_TASKS


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
        code=code_inputs([f"{SRC}/banditbench/data/open_bandit.py"]),
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
        code=code_digest([f"{SRC}/banditbench/data/open_bandit.py"]),
    script:
        "../scripts/data_replay.py"


# Prompt instructions embedded once per task by a pretrained sentence encoder (banditbench.data.prompt_arms,
# banditbench.data.encoder; needs the optional dependencies "prompts"), and the measured-reward arms built
# from the scored instructions and those embeddings (or TF-IDF + SVD, options in the file name).
rule prompt_embeddings:
    input:
        unpack(lambda wc: prompt_embedding_raw_paths(wc.task)),
        code=code_inputs([f"{SRC}/banditbench/data/prompt_arms.py", f"{SRC}/banditbench/data/encoder.py"]),
    output:
        "data/processed/prompt_embeddings/{task}/{encoder}.npz",
    log:
        "logs/preprocess/prompt_embeddings/{task}/{encoder}.log",
    wildcard_constraints:
        task="|".join(SCORED_TASKS),
        encoder="|".join(ENCODERS),
    conda:
        "../../envs/prompts.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        code=code_digest([f"{SRC}/banditbench/data/prompt_arms.py", f"{SRC}/banditbench/data/encoder.py"]),
    script:
        "../scripts/data_prompt_embeddings.py"


rule prompt_arms:
    input:
        unpack(lambda wc: prompt_arms_inputs(wc.task, parse_arms_key(wc.options))),
        code=code_inputs([f"{SRC}/banditbench/data/prompt_arms.py"]),
    output:
        "data/processed/prompt_arms/{task}/{options}.npz",
    log:
        "logs/preprocess/prompt_arms/{task}/{options}.log",
    wildcard_constraints:
        task="|".join(SCORED_TASKS),
        options=r"[A-Za-z0-9_.=+-]+",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        code=code_digest([f"{SRC}/banditbench/data/prompt_arms.py"]),
    script:
        "../scripts/data_prompt_arms.py"
