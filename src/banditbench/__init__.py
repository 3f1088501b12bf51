"""banditbench: a Snakemake benchmark pipeline for bandit algorithms.

The package is import-light on purpose: submodules import numpy only, and the
heavy libraries (torch, scikit-learn, pandas) are imported by the modules that
need them, so that each of a grid's many simulation jobs starts quickly.  The Python API,
:class:`Grid` and :class:`Results` (:mod:`banditbench.workbench`), is imported when first used.
"""

__version__ = "0.1.0"

#: the Python API's names (:mod:`banditbench.workbench`), imported on first use
_WORKBENCH = ("Grid", "Results")


def __getattr__(name: str):
    """``banditbench.Grid`` and ``banditbench.Results``, imported from :mod:`banditbench.workbench` when first used."""
    if name in _WORKBENCH:
        from . import workbench

        return getattr(workbench, name)
    raise AttributeError(f"module 'banditbench' has no attribute {name!r}")
