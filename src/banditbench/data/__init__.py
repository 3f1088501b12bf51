"""Real data: the dataset catalog, checksummed fetching, preprocessing and fitted oracles.

* :mod:`.catalog` — every dataset's files, checksums, URLs and licence.
* :mod:`.fetch` — cache ``data/raw/`` -> mirror (``BANDITBENCH_DATA_MIRROR``) -> canonical URLs.
* :mod:`.paths` — preprocessing / oracle options and the file names that carry them.
* :mod:`.preprocess` — classification datasets to scaled feature matrices.
* :mod:`.oracles` — classifier and prompt oracles, fitted once and loaded by simulations.
"""
