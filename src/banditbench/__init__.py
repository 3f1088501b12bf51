"""banditbench: a Snakemake benchmark pipeline for bandit algorithms.

The package is import-light on purpose: submodules import numpy only, and the
heavy libraries (torch, scikit-learn, pandas) are imported by the modules that
need them, so that each of a grid's many simulation jobs starts quickly.
"""

__version__ = "0.1.0"
