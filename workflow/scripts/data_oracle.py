"""Snakemake script: fit one oracle and write its fit-quality tables (logic in banditbench.data.oracles)."""

import logging

from banditbench.data.files import save_npz
from banditbench.data.oracles import fit_classifier_oracle, fit_prompt_oracle, write_quality
from banditbench.data.paths import parse_classifier_key, parse_preprocess_key, parse_prompt_key
from banditbench.data.preprocess import load_prepared

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
out = snakemake.output
kind = snakemake.params.kind
if kind == "classifier":
    wc = snakemake.wildcards
    preprocessing = parse_preprocess_key(wc.dataset, wc.options)
    options = parse_classifier_key(wc.oracle)
    arrays, quality = fit_classifier_oracle(load_prepared(snakemake.input.data), options,
                                            name=f"{wc.dataset}/{wc.options}/{wc.oracle}")
    save_npz(out.oracle, arrays, {"dataset": wc.dataset, "preprocessing": preprocessing, "options": options,
                                  "quality": quality})
elif kind == "prompt":
    annotations = list(snakemake.input.get("annotations", []))
    arrays, meta, quality = fit_prompt_oracle(snakemake.wildcards.task, snakemake.input.pool[0],
                                              list(snakemake.input.scores), annotations[0] if annotations else None,
                                              parse_prompt_key(snakemake.wildcards.options))
    save_npz(out.oracle, arrays, meta)
else:
    from banditbench.data.car_oracle import fit_car_oracle

    oracle = fit_car_oracle(snakemake.input.data)
    quality = {"oracle": "car_evaluation", "model": "logistic (one-vs-rest, block features)",
               **{k: float(oracle[k]) for k in ("train_accuracy", "test_accuracy", "majority_accuracy")}}
    save_npz(out.oracle, oracle, {"dataset": "car", "quality": quality})
logging.info("quality: %s", quality)
write_quality([quality], out.csv, out.md)
