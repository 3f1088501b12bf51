"""Downloads: one rule per registered dataset (banditbench.data.catalog), run once however many jobs use it.

Files land under data/raw/ in the mirror's layout, verified against their published
checksums (for a dataset whose checksum is not published, obd_full, the one pinned in the
config's dataset_checksums, which the script reads from the validated config: without it the
rule fails and says how to pin one).  Sources in order: data/raw/ itself,
$BANDITBENCH_DATA_MIRROR (a directory or base URL), the canonical URLs.  Local rules:
cluster nodes often have no network.
"""

from banditbench.data.catalog import DATASETS as RAW_DATASETS

for _dataset in RAW_DATASETS.values():

    rule:
        name:
            f"download_{_dataset.name}"
        output:
            [f"data/raw/{f.path}" for f in _dataset.files],
        log:
            f"logs/download/{_dataset.name}.log",
        localrule: True
        conda:
            "../../envs/banditbench.yaml"
        resources:
            mem_mb=500,
            runtime=30,
        params:
            dataset=_dataset.name,
        script:
            "../scripts/data_fetch.py"
