"""Snakemake script: embed every instruction of one task with a sentence encoder (banditbench.data.prompt_arms)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule) as log:
    from banditbench.data.files import save_npz
    from banditbench.data.prompt_arms import build_embeddings

    arrays, meta = build_embeddings(
        snakemake.wildcards.task,
        list(snakemake.input.pools),
        list(snakemake.input.scores),
        list(snakemake.input.get("annotations", [])),
        encoder=snakemake.wildcards.encoder,
        threads=snakemake.threads,
    )
    save_npz(snakemake.output[0], arrays, meta)
    log.info("%s: %d instructions embedded by %s", snakemake.wildcards.task, meta["n_texts"], meta["encoder"])
