"""banditbench: a Snakemake benchmark pipeline for bandit algorithms.

The package is import-light on purpose: submodules import numpy only, and the
heavy libraries (torch, scikit-learn, pandas) are imported by the modules that
need them, so that each of a grid's many simulation jobs starts quickly.  The Python API,
:class:`Grid` and :class:`Results` (:mod:`banditbench.workbench`), is imported when first used.
"""

import importlib

__version__ = "0.1.0"

#: the Python API's names (:mod:`banditbench.workbench`), imported on first use
_WORKBENCH = ("Grid", "Results")


def __getattr__(name: str):
    """``banditbench.Grid`` and ``banditbench.Results``, imported from :mod:`banditbench.workbench` when first used."""
    if name in _WORKBENCH:
        # by name, not by an import statement: no simulate job runs the workbench, so the sources closure of a
        # job (banditbench.registry.job_sources, which follows every import statement of the package's
        # __init__) must not take it and its imports in
        workbench = importlib.import_module(f"{__name__}.workbench")
        return getattr(workbench, name)
    raise AttributeError(f"module 'banditbench' has no attribute {name!r}")
