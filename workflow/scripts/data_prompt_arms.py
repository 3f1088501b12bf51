"""Snakemake script: the measured-reward arms of one prompt task (banditbench.data.prompt_arms)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule) as log:
    from banditbench.data.files import save_npz
    from banditbench.data.paths import parse_arms_key
    from banditbench.data.prompt_arms import build_arms

    inputs = snakemake.input
    embeddings, pool, annotations = (list(inputs.get(k, [])) for k in ("embeddings", "pool", "annotations"))
    arrays, meta = build_arms(
        snakemake.wildcards.task,
        list(inputs.scores),
        parse_arms_key(snakemake.wildcards.options),
        embedding_path=embeddings[0] if embeddings else None,
        pool_path=pool[0] if pool else None,
        annotation_path=annotations[0] if annotations else None,
    )
    save_npz(snakemake.output[0], arrays, meta)
    log.info("quality: %s", meta["quality"])
