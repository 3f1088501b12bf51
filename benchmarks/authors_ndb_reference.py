"""Reference numbers from the authors' code of NDB-UCB (``xqlin98/APOHF``, ``NeuralDBDiag``), for the differential
test (``tests/policies/neural/test_authors_ndb.py``) and ``benchmarks/authors_ndb.py``.

The authors' code has no synthetic task: its experiments choose prompts, responses or images
(``Induction/experiments/run_dbandits_*.py``).  This driver runs its class, unmodified, on issue 50's task,
``fixed_arm_dueling`` (d = 5, K = 10, ``(theta^T x)^2``; :mod:`banditbench.envs.fixed_dueling`), built from this
project for the seed, so that both sides play the same instance and the same outcome stream.  It plays a run as
the authors' scripts do (``run_dbandits_po.py`` lines 329-395): ``n_init`` uniformly random pairs of two different
arms, the class built on them and trained, then per round ``select`` (the UCB pair), the duel, and ``train``
(the network re-initialised and trained again on every pair so far).  The pairs of the first rounds are drawn
from ``numpy.random.default_rng(seed)`` (the scripts draw them from the global numpy stream they seed).  Per run
it writes one CSV row: the cumulative total regret ``2 f* - f_1 - f_2`` at T and the self-duels.

The class's module names ``cuda:0`` as the device of its tensors (``LlamaForMLPRegression.py`` line 12); the
driver sets that module-level dictionary's device to the CPU before building (float32, the module's dtype, kept).
Its settings are the authors' scripts' (``run_dbandits_po.sh``, ``run_dbandits_response.sh``,
``run_dbandits_image_gen.sh``: ``--nu 1 --lamdba 0.1 --n_init 5``) but for the training steps, ``steps`` (the
class's default ``local_training_iter=30``, line 413; the scripts pass 1000).

Run it outside this repository, on a checkout of the authors' code (never copied into this project), with torch,
backpack-for-pytorch and transformers (its module imports them) and this project's ``src`` importable::

    git clone https://github.com/xqlin98/APOHF /tmp/authors-apohf/src
    git -C /tmp/authors-apohf/src checkout 26eea14b1f89efc1b6d61bed8d154f44fa236b79
    cd /tmp/authors-apohf && PYTHONPATH=/path/to/banditbench/src \\
        python /path/to/banditbench/benchmarks/authors_ndb_reference.py src 300 20 30 out.csv

Arguments: the checkout, the horizon T, the number of seeds (0 .. n - 1), the training steps per round, the CSV
to append to (its header is written when the file is new).
"""

from __future__ import annotations

import csv
import sys
import warnings
from pathlib import Path

#: the columns of the reference CSV
COLUMNS = ("algorithm", "horizon", "steps", "seed", "cumulative_regret", "self_duels")
#: the authors' scripts' settings (``run_dbandits_*.sh``)
NU, LAMBDA, N_INIT = 1.0, 0.1, 5
#: issue 50's task
ENVIRONMENT = {"dimension": 5, "n_arms": 10, "utility": "quadratic"}


def run_one(module, horizon: int, seed: int, steps: int) -> list:
    """One run of the authors' ``NeuralDBDiag`` on ``fixed_arm_dueling`` for ``seed``: a CSV row."""
    import numpy as np
    import torch

    from banditbench.envs.fixed_dueling import FixedArmDueling

    env = FixedArmDueling(np.random.SeedSequence(seed), horizon=horizon, **ENVIRONMENT)
    arms = torch.tensor(env.arms, dtype=torch.float32)
    rng = np.random.default_rng(seed)
    history, firsts, seconds, outcomes = [], [], [], []

    def duel(t, i, j):
        y = env.play(t, (i, j)).y
        history.append([i, j])
        firsts.append(arms[i]), seconds.append(arms[j]), outcomes.append(y)
        return y

    for t in range(1, N_INIT + 1):  # run_dbandits_po.py lines 334-343
        i, j = rng.choice(env.n_arms, 2, replace=False)
        duel(t, int(i), int(j))
    pairs = torch.stack([torch.stack(firsts), torch.stack(seconds)])  # [2, n, d], as X_train
    policy = module.NeuralDBDiag(
        input_dim=arms.shape[1], lamdba=LAMBDA, nu=NU, init_x=pairs, init_y=torch.tensor(outcomes, dtype=torch.int32)
    )
    policy.train(local_training_iter=steps)
    for t in range(N_INIT + 1, horizon + 1):  # lines 367-395
        first, second = policy.select(arms, history)
        i, j = int(first), int(second)
        y = duel(t, i, j)
        policy.train(torch.stack([arms[i], arms[j]]).reshape(2, 1, -1), y, steps)
    log = env.truth_log(horizon)
    return ["NDB-UCB", horizon, steps, seed, repr(float(np.sum(log["regret"]))), int(sum(log["self_duel"]))]


def main(argv: list[str]) -> int:
    checkout, horizon, seeds = Path(argv[0]).resolve(), int(argv[1]), int(argv[2])
    steps, out = int(argv[3]), Path(argv[4])
    sys.path.insert(0, str(checkout / "Induction/experiments"))
    import contextlib
    import io

    import torch

    torch.set_num_threads(1)
    import LlamaForMLPRegression as module

    module.tkwargs["device"] = torch.device("cpu")
    new = not out.exists()
    with out.open("a", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        if new:
            writer.writerow(COLUMNS)
        for seed in range(seeds):
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore", UserWarning)  # backpack's hooks on a module without inputs' grads
                row = run_one(module, horizon, seed, steps)
            writer.writerow(row)
            fh.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
