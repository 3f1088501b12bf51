"""Snakemake script: the papers' claims judged on the results (logic in banditbench.analysis.claims)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    import pandas as pd

    from banditbench.analysis.claim_pages import write_claims
    from banditbench.analysis.claims import evaluate
    from banditbench.configuration.claims import from_params

    claims, alpha = from_params(snakemake.params.claims)
    experiments = list(dict.fromkeys(c.experiment for c in claims.values() if c.experiment and not c.skipped))
    tables = {name: pd.read_parquet(path) for name, path in zip(experiments, snakemake.input.tables)}
    results = evaluate(claims, tables, alpha)
    write_claims(results, snakemake.output.csv, snakemake.output.md, snakemake.output.html)
