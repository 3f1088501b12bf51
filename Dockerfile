FROM condaforge/miniforge3:latest
LABEL io.github.snakemake.containerized="true"
LABEL io.github.snakemake.conda_env_hash="013604ac0a418898f8787ec23d362c0beef57b8858744563d1a3c3eb6e025955"
# Conda environment:
#   source: envs/banditbench.yaml
#   prefix: /conda-envs/6061e3f86e9c1dd056d96c1075122798
#   # Conda environment of every job under `--software-deployment-method conda` (and of the
#   # container image built from the Dockerfile, which `snakemake --containerize` generates from it).
#   # It carries every pyproject.toml dependency a job imports, with the same version bounds
#   # (tests/test_environment_files.py checks both against the package's imports).
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
#     - snakemake-minimal>=9,<10
#     - pytorch-cpu>=2.2,<=2.13.0
RUN mkdir -p /conda-envs/6061e3f86e9c1dd056d96c1075122798
COPY envs/banditbench.yaml /conda-envs/6061e3f86e9c1dd056d96c1075122798/environment.yaml

RUN conda env create --prefix /conda-envs/6061e3f86e9c1dd056d96c1075122798 --file /conda-envs/6061e3f86e9c1dd056d96c1075122798/environment.yaml && \
    conda clean --all -y
