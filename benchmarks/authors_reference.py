"""Reference numbers from the authors' code of seed 001's linear baselines (uclaml/VACDB), for the differential
test (``tests/policies/test_authors_baselines.py``) and ``benchmarks/authors_baselines.py``.

Runs the repository's own classes, unmodified, on its own task (``model.py``'s ``LinearLogitModel``: K = 32 arms
in d = 5, scale 1): ``ucb.py``'s ``MaxInP`` and ``CoLSTIM`` with L = 1 and ``suplin.py``'s ``VACDB`` with L = 5, as
its ``main.py`` builds them (lines 55-62), one ``LinearLogitModel(T, 32, 5, seed)`` per algorithm and seed.
``main.py`` itself cannot run at that commit (it imports ``det.py``, which imports a class ``db.py`` no longer
has) and plots; this driver only calls the classes' ``run`` and reads ``model.R``, and wraps ``model.action`` to
count the rounds whose two arms are the same.  Per run it writes one CSV row: the cumulative total regret
``2u* - u1 - u2`` at T (``model.R[-1]``), the self-duels, and whether the VACDB run's design matrices
became NaN (the code's division by zero when a self-duel joins a layer, ``suplin.py`` line 99).

Run it outside this repository, on a checkout of the authors' code (never copied into this project)::

    git clone https://github.com/uclaml/VACDB /tmp/authors-vacdb/src
    git -C /tmp/authors-vacdb/src checkout 7b1c0df9986dc701d8a6473b0f51418f51a3c95c
    cd /tmp/authors-vacdb && python /path/to/banditbench/benchmarks/authors_reference.py src 2000 20 out.csv

Arguments: the checkout, the horizon T, the number of seeds (0 .. n - 1), the CSV to append to (its header is
written when the file is new).  It needs numpy, scipy and matplotlib (``vdb.py`` imports it).
"""

from __future__ import annotations

import csv
import sys
import warnings
from pathlib import Path

#: the columns of the reference CSV
COLUMNS = ("algorithm", "horizon", "seed", "cumulative_regret", "self_duels", "sigma_nan")
#: the authors' classes: (label, module, class, layers L as main.py passes them)
ALGORITHMS = (("MaxInP", "ucb", "MaxInP", 1), ("CoLSTIM", "ucb", "CoLSTIM", 1), ("VACDB", "suplin", "VACDB", 5))
K, D = 32, 5  # main.py lines 27-28


def run_one(modules: dict, algorithm: tuple, horizon: int, seed: int) -> list:
    """One run of the authors' class (an entry of :data:`ALGORITHMS`) on ``LinearLogitModel(horizon, K, D, seed)``:
    a CSV row."""
    import numpy as np

    label, module, cls_name, layers = algorithm
    model = modules["model"].LinearLogitModel(horizon, K, D, seed, scale=1)
    pairs = []
    play = model.action

    def action(t, act):
        pairs.append((int(act[0]), int(act[1])))
        return play(t, act)

    model.action = action
    algo = getattr(modules[module], cls_name)(horizon, model, L=layers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the VACDB bug's division by zero and NaN
        algo.run()
    nan = bool(np.isnan(algo.Sigma).any())
    return [label, horizon, seed, repr(float(model.R[-1])), sum(a == b for a, b in pairs), int(nan)]


def main(argv: list[str]) -> int:
    checkout, horizon, seeds, out = Path(argv[0]).resolve(), int(argv[1]), int(argv[2]), Path(argv[3])
    sys.path.insert(0, str(checkout))
    import importlib

    import matplotlib

    matplotlib.use("Agg")
    modules = {name: importlib.import_module(name) for name in ("model", "ucb", "suplin")}
    new = not out.exists()
    with out.open("a", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        if new:
            writer.writerow(COLUMNS)
        for seed in range(seeds):
            for algorithm in ALGORITHMS:
                writer.writerow(run_one(modules, algorithm, horizon, seed))
                fh.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
