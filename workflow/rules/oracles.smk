"""Oracles fitted once on real data and loaded by the simulations (banditbench.data.oracles).

Each oracle file gets its held-out fit quality next to it (<name>.quality.csv / .md).
"""

from banditbench.data.paths import (
    CLASSIFICATION_DATASETS,
    parse_preprocess_key,
    parse_prompt_key,
    processed_path,
    prompt_raw_paths,
)
from banditbench.data.catalog import SCORED_TASKS


rule oracle_classifier:
    input:
        data=lambda wc: processed_path(wc.dataset, parse_preprocess_key(wc.dataset, wc.options)),
        code=code_inputs([f"{SRC}/banditbench/data/oracles.py"]),
    output:
        oracle="data/oracles/classifiers/{dataset}/{options}/{oracle}.npz",
        csv="data/oracles/classifiers/{dataset}/{options}/{oracle}.quality.csv",
        md="data/oracles/classifiers/{dataset}/{options}/{oracle}.quality.md",
    log:
        "logs/oracles/classifiers/{dataset}/{options}/{oracle}.log",
    wildcard_constraints:
        dataset="|".join(CLASSIFICATION_DATASETS),
        options=r"[A-Za-z0-9_.=+-]+",
        oracle=r"[A-Za-z0-9_.=+-]+",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        code=code_digest([f"{SRC}/banditbench/data/oracles.py"]),
        kind="classifier",
    script:
        "../scripts/data_oracle.py"


rule oracle_prompt:
    input:
        unpack(lambda wc: prompt_raw_paths(wc.task, parse_prompt_key(wc.options))),
        code=code_inputs([f"{SRC}/banditbench/data/oracles.py"]),
    output:
        oracle="data/oracles/prompts/{task}/{options}.npz",
        csv="data/oracles/prompts/{task}/{options}.quality.csv",
        md="data/oracles/prompts/{task}/{options}.quality.md",
    log:
        "logs/oracles/prompts/{task}/{options}.log",
    wildcard_constraints:
        task="|".join(SCORED_TASKS),
        options=r"[A-Za-z0-9_.=+-]+",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        code=code_digest([f"{SRC}/banditbench/data/oracles.py"]),
        kind="prompt",
    script:
        "../scripts/data_oracle.py"


rule oracle_car:
    input:
        data="data/raw/uci/car/car.data",
        code=code_inputs([f"{SRC}/banditbench/data/car_oracle.py"]),
    output:
        oracle="data/oracles/car_evaluation.npz",
        csv="data/oracles/car_evaluation.quality.csv",
        md="data/oracles/car_evaluation.quality.md",
    log:
        "logs/oracles/car_evaluation.log",
    conda:
        "../../envs/banditbench.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        code=code_digest([f"{SRC}/banditbench/data/car_oracle.py"]),
        kind="car",
    script:
        "../scripts/data_oracle.py"
