"""Snakemake script: fit one oracle and write its fit-quality tables (logic in banditbench.data.oracles)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule) as log:
    from banditbench.data.files import save_npz
    from banditbench.data.oracles import fit_classifier_oracle, fit_prompt_oracle, write_quality
    from banditbench.data.paths import parse_classifier_key, parse_preprocess_key, parse_prompt_key
    from banditbench.data.preprocess import load_prepared

    out = snakemake.output
    kind = snakemake.params.kind
    if kind == "classifier":
        wc = snakemake.wildcards
        preprocessing = parse_preprocess_key(wc.dataset, wc.options)
        prepared = load_prepared(snakemake.input.data, wc.dataset, preprocessing)
        arrays, meta, quality = fit_classifier_oracle(
            prepared, parse_classifier_key(wc.oracle), name=f"{wc.dataset}/{wc.options}/{wc.oracle}"
        )
        save_npz(out.oracle, arrays, meta)
    elif kind == "prompt":
        annotations = list(snakemake.input.get("annotations", []))
        arrays, meta, quality = fit_prompt_oracle(
            snakemake.wildcards.task,
            snakemake.input.pool[0],
            list(snakemake.input.scores),
            annotations[0] if annotations else None,
            parse_prompt_key(snakemake.wildcards.options),
        )
        save_npz(out.oracle, arrays, meta)
    else:
        from banditbench.data.car_oracle import fit_car_oracle

        oracle = fit_car_oracle(snakemake.input.data)
        quality = {
            "oracle": "car_evaluation",
            "model": "logistic (one-vs-rest, block features)",
            **{k: float(oracle[k]) for k in ("train_accuracy", "test_accuracy", "majority_accuracy")},
        }
        save_npz(out.oracle, oracle, {"dataset": "car", "quality": quality})
    log.info("quality: %s", quality)
    write_quality([quality], out.csv, out.md)
