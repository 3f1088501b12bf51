"""Snakemake script: the papers' claims judged on the results (logic in banditbench.analysis.claims)."""

from banditbench.storage.logs import rule_log

with rule_log(snakemake.log[0], snakemake.rule):
    from banditbench.analysis.claim_pages import write_claims
    from banditbench.analysis.claims import evaluate, read_cells
    from banditbench.configuration.claims import from_params

    claims, alpha = from_params(snakemake.params.claims)
    experiments = list(dict.fromkeys(c.experiment for c in claims.values() if c.experiment and not c.skipped))
    inputs = zip(experiments, snakemake.input.tables, snakemake.input.timing)
    tables = {name: read_cells(seeds, timing) for name, seeds, timing in inputs}
    results = evaluate(claims, tables, alpha)
    write_claims(results, snakemake.output.csv, snakemake.output.md, snakemake.output.html)
