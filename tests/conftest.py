"""Shared test settings: one BLAS thread, the checkout's root, the offline dataset mirror, and a
check that the tests exercise this checkout's ``src/`` (installed editable by ``make install``)."""

import sys
import os
from pathlib import Path

# one BLAS / OpenMP thread, as in every pipeline job: bit-identical results and no
# oversubscription of the machine's cores (set before numpy or torch is imported)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import banditbench  # noqa: E402
from banditbench.data.car_oracle import fit_car_oracle  # noqa: E402
from banditbench.data.fetch import MIRROR_ENV  # noqa: E402
from banditbench.data.files import save_npz  # noqa: E402
from banditbench.data.paths import REPLAY_DATASET, replay_options, replay_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: a cell folder for per-seed results that tests write by hand (results/runs/<exp>/<alg>/<delay>/<budget>/<cell>/):
#: readers take the run's labels from the path around it, whatever its digest
CELL = "0123456789ab"
#: the offline dataset mirror: $BANDITBENCH_DATA_MIRROR, else ``../shared/datasets`` next to the checkout
MIRROR = Path(os.environ.get(MIRROR_ENV) or ROOT.parent / "shared" / "datasets")
needs_mirror = pytest.mark.skipif(not (MIRROR / "manifest.json").is_file(), reason=f"offline mirror {MIRROR} absent")

if Path(banditbench.__file__).resolve().parent != ROOT / "src" / "banditbench":
    pytest.exit(
        f"the tests import banditbench from {Path(banditbench.__file__).parent}, not from this checkout's "
        f"src/; install the checkout in editable mode (make install, or pip install -e .)",
        returncode=4,
    )


@pytest.fixture(params=["exact", "perturbed"])
def rounding(request, monkeypatch):
    """Run a test as it is and again with other last bits (``tests/perturb.py``): ``rounding(x)`` is ``x``
    or ``x`` jittered at 1e-15, and in the perturbed variant every simulated policy sees jittered contexts."""
    from perturb import Rounding, jitter_policy_contexts

    if request.param == "perturbed":
        jitter_policy_contexts(monkeypatch)
    return Rounding(request.param == "perturbed")


def pytest_addoption(parser):
    parser.addoption(
        "--perturb-contexts",
        action="store_true",
        help="every policy run by simulate() sees contexts jittered at 1e-15 (tests/perturb.py): "
        "a by-hand check that no test needs this machine's last bits",
    )


@pytest.fixture(autouse=True)
def _perturbed_everywhere(request, monkeypatch):
    if request.config.getoption("--perturb-contexts"):
        from perturb import jitter_policy_contexts

        jitter_policy_contexts(monkeypatch)


@pytest.fixture
def tiny_log(tmp_path, monkeypatch):
    """(The replay tests and the batched neural logistic engine's.) A prepared file of 300 events (K = 5, d = 3) whose features encode the candidate's index and event."""
    rng = np.random.default_rng(0)
    n, K = 300, 5
    features = np.zeros((n, K, 3), dtype=np.float32)
    features[:, :, 0] = np.arange(K)  # candidate index (0 = logged)
    features[:, :, 1] = np.arange(n)[:, None]  # event index
    click = (rng.random(n) < 0.3).astype(np.int64)
    monkeypatch.chdir(tmp_path)
    save_npz(
        replay_path(None),
        {"features": features, "items": np.zeros((n, K), dtype=np.int64), "click": click},
        {"dataset": REPLAY_DATASET, "options": replay_options(None)},
    )  # what the file is checked against
    return click


@pytest.fixture(scope="module")
def car_oracle(tmp_path_factory):
    """The car-moderation reward model fitted on the mirror's car data (the knapsack tests')."""
    from helpers import CAR_DATA

    if not CAR_DATA.is_file():
        pytest.skip(f"car.data absent from the offline mirror {MIRROR}")
    path = tmp_path_factory.mktemp("oracles") / "car_evaluation.npz"
    save_npz(path, fit_car_oracle(CAR_DATA), {"dataset": "car"})
    return path


def read_only_folder(tmp_path):
    """A folder this process cannot write into (a read-only one; /sys where it runs as root), or a skip."""

    def writable(folder):
        try:
            (folder / ".probe").touch()
        except OSError:
            return False
        (folder / ".probe").unlink()
        return True

    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    if writable(folder):
        folder = Path("/sys")
        if not folder.is_dir() or writable(folder):
            pytest.skip("no folder this process cannot write into")
    return folder


def load_script(path: str, name: str | None = None):
    """A script of the project that is not a package module (``benchmarks/x.py``, ``docs/hooks.py``), imported
    from its file under ``name`` (default: its stem)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name or Path(path).stem, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import does (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


def synthetic_dueling_cell(
    policy: str, params: dict, *, T: int, d: int, K: int, utility: str, arms: str, theta: str, seed=0, delay=None
) -> dict:
    """A resolved cell of the ``synthetic_dueling`` environment (``d``-dimensional arms from ``arms``, ``K`` a
    round, the ``utility`` of a parameter drawn from ``theta``) for ``policy`` with ``params``: what the neural
    dueling tests build their runs from, each with its own small defaults."""
    return {
        "experiment": "x",
        "algorithm": policy,
        "delay_label": "d",
        "budget": None,
        "environment": {
            "name": "synthetic_dueling",
            "params": {
                "dimension": d,
                "n_arms": K,
                "utility": utility,
                "arm_distribution": arms,
                "theta_distribution": theta,
            },
        },
        "policy": {"name": policy, "params": params},
        "delay": dict(delay or {"kind": "none"}),
        "horizon": T,
        "seed": seed,
    }
