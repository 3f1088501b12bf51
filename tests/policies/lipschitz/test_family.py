"""What both Lipschitz algorithms share: feedback timing, sublinear regret, the paper grid, parameter checks."""

from __future__ import annotations

import numpy as np
import pytest

from banditbench import registry
from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.envs.lipschitz import FUNCTIONS
from banditbench.errors import ConfigError
from banditbench.simulation.delays import make_delay
from banditbench.simulation.job import run_cell
from banditbench.simulation.runner import build, simulate
from helpers import lipschitz_cell as cell


@pytest.mark.parametrize("policy", ["delayed_zooming", "dlpp"])
@pytest.mark.parametrize(
    "delay", [{"kind": "geometric", "mean": 20}, {"kind": "uniform", "low": 0, "high": 40}, {"kind": "none"}]
)
def test_feedback_never_arrives_early(policy, delay):
    T = 1500
    c = cell("sine", policy=policy, delay=delay, horizon=T, seed=4)
    env, pol, dmodel, drng = build(c)
    delays = dmodel.sample(build(c)[3], T)  # the runner's delays: same seed, same stream
    seen = []
    original = pol.observe

    def observe(t, arrived):
        seen.extend((t, fb.round) for fb in arrived)
        original(t, arrived)

    pol.observe = observe
    simulate(env, pol, dmodel, T, drng)
    assert len(seen) > T // 2
    for t, s in seen:
        assert s < t and t >= s + max(int(delays[s - 1]), 1)
        assert t == s + max(int(delays[s - 1]), 1)


def test_regret_is_sublinear_on_triangle():
    # noise sigma = 0.2 (known to both policies, App. D) so that DLPP gets past its first eliminations
    ratios = {}
    for policy in ("delayed_zooming", "dlpp"):
        for T in (6000, 12000):
            regrets = [
                run_cell(
                    cell(
                        "triangle",
                        policy=policy,
                        horizon=T,
                        seed=s,
                        noise_sigma=0.2,
                        sigma=0.2,
                        delay={"kind": "geometric", "mean": 20},
                    )
                )[0]["regret"].sum()
                for s in range(3)
            ]
            ratios[policy, T] = np.mean(regrets) / T
    uniform_play = 0.9 * (0.4**2 + 0.6**2) / 2  # per-round regret of x ~ U[0, 1]
    for policy in ("delayed_zooming", "dlpp"):
        assert ratios[policy, 12000] < 0.92 * ratios[policy, 6000], ratios
        assert ratios[policy, 12000] < 0.85 * uniform_play, ratios


def test_paper_config_validates_and_a_cell_runs():
    config = load_config_file("config/lipschitz.yaml")
    grid = load_grid(config)
    functions = ["sine", "triangle", "two_dim"]
    assert sorted(grid.experiments) == sorted(
        [f"lipschitz_{f}" for f in functions] + [f"lipschitz_{f}_theory_constants" for f in functions]
    )
    for name, exp in grid.experiments.items():
        assert exp.horizon == 60000 and len(exp.seeds) == 30 and len(list(grid.jobs(name))) == 2 * 5 * 30
        noise = exp.spec["environment"]["params"]["noise_sigma"]
        assert noise == (1.0 if name.endswith("_theory_constants") else 0.01)
        # the policies are told the environment's noise level (App. D)
        assert [a["params"]["sigma"] for a in exp.spec["algorithms"].values()] == [noise, noise]
    assert make_delay(exp.spec["delays"]["uniform_mean50"]).mean == 50
    assert make_delay(exp.spec["delays"]["geometric_mean20"]).mean == 20
    small = load_grid({**config, "horizon": 800})
    series, meta, _ = run_cell(small.cell("lipschitz_two_dim", "delayed_zooming", "geometric_mean20", "none", 0))
    assert series["regret"].shape == (800,) and np.all(series["regret"] >= -1e-12)
    assert meta["summary"]["mu_star"] == pytest.approx(FUNCTIONS["two_dim"][1])


@pytest.mark.parametrize(
    "params,match",
    [
        ({"lazy_rule": "eager"}, "lazy_rule"),
        ({"delta": 1.5}, "delta"),
        ({"activation": "grid"}, "activation"),
        ({"sigma": 0}, "sigma"),
    ],
)
def test_bad_policy_parameters_raise(params, match):
    with pytest.raises(ConfigError, match=match):
        build(cell(**params))


def test_a_lipschitz_jobs_policy_sources_are_the_family_package():
    """Editing a file of policies/lipschitz/ re-runs the family's jobs (each algorithm's module runs the package's
    __init__, which names both) and no other family's; the family's jobs depend on no other policy module."""
    package = registry.PACKAGE_DIR / "policies"
    family = sorted(p.relative_to(package).as_posix() for p in (package / "lipschitz").glob("*.py"))
    for name in ("delayed_zooming", "dlpp"):
        policies = [
            p.relative_to(package).as_posix() for p in registry.job_sources("lipschitz", name) if package in p.parents
        ]
        assert policies == ["__init__.py", *family], name
    for name, entry in registry.policies().items():
        if name not in ("delayed_zooming", "dlpp") and entry.origin == "built-in":
            assert not any("lipschitz" in p.parts for p in registry.source_closure([entry.module])), name
