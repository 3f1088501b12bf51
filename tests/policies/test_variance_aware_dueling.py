"""VACDB (Di et al. 2023, Algorithm 1): layer assignment, weights, the layered MLE, and behaviour."""

import numpy as np
import pytest

from banditbench import params
from banditbench import registry
from banditbench.api import Problem, self_duel_rule
from banditbench.errors import ConfigError
from banditbench.feedback import PreferenceFeedback
from banditbench.numerics.sigmoid import sigmoid
from banditbench.policies.variance_aware_dueling import VACDB, layer_count
from banditbench.simulation.job import run_cell

ARMS = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])


def _policy(T=100, d=2, seed=0, **params):
    return VACDB(Problem(T, info={"dimension": d}), np.random.default_rng(seed), **params)


def test_layers_follow_alpha_and_a_too_shallow_stack_is_refused():
    assert layer_count(1 / 8) == 3 and layer_count(0.1) == 4
    assert _policy(T=100).L == layer_count(100**-1.5) == 10
    assert _policy(layers=5, alpha=2**-5).L == 5
    with pytest.raises(ConfigError, match="policy.params.layers"):
        _policy(layers=3, alpha=0.1)
    with pytest.raises(ConfigError, match="policy.params.layers"):
        VACDB.check_params({"alpha": "auto", "layers": 3}, 100)
    for bad, key in (({"exploration": "random"}, "exploration"), ({"exploit_update": "all"}, "exploit_update")):
        with pytest.raises(ConfigError, match=f"policy.params.{key}: must be one of"):
            params.check(VACDB, bad, "policy.params")  # what runner.build checks first


def test_first_round_explores_layer_one_with_the_weight_of_line_14():
    """Sigma_1 = I / 4, so every pair is 2 ||x - y|| wide (> 2^-1): round 1 explores layer 1 and
    w_1 = 2^-1 / (2 ||x_1 - y_1||); Sigma_1 takes w^2 (x - y)(x - y)^T (line 18) before round 2."""
    pol = _policy(exploration="widest")
    i, j = pol.act(1, ARMS)
    assert {i, j} == {0, 2}  # the widest pair: ||x - y|| = 2
    assert pol.layer[0] == 0
    assert pol.weight2[0] == pytest.approx((0.5 / (2 * 2.0)) ** 2)
    pol.observe(2, [PreferenceFeedback(1, 1)])
    pol.act(2, ARMS)
    z = ARMS[i] - ARMS[j]
    Sigma = np.eye(2) / 4 + pol.weight2[0] * np.outer(z, z)
    np.testing.assert_allclose(pol.inverse[0], np.linalg.inv(Sigma), rtol=1e-12)
    np.testing.assert_allclose(pol.inverse[1], 16 * np.eye(2))  # layer 2 untouched


def test_elimination_then_exploration_in_the_next_layer():
    """Layer 1 certain (all widths <= 1/2): arms more than 2^-1 beta below the best leave (line 10);
    layer 2 is still wide, so the pair is drawn among the surviving arms and joins layer 2."""
    pol = _policy(beta=1.0)
    pol.inverse[0] = np.eye(2) * 0.01  # widths 0.1 ||x - y|| <= 0.5
    pol.theta[0] = np.array([1.0, 0.7])  # u = (1, 0.7, -1): arm 2 is 2 below, arm 1 0.3
    pol.theta[1] = np.zeros(2)
    seen = set()
    for t in range(1, 40):
        pol.pending = None  # keep the hand-set matrices
        i, j = pol.act(t, ARMS)
        seen |= {i, j}
        assert pol.layer[t - 1] == 1 and i != j
        width = np.sqrt((ARMS[i] - ARMS[j]) @ pol.inverse[1] @ (ARMS[i] - ARMS[j]))
        assert pol.weight2[t - 1] == pytest.approx((0.25 / width) ** 2)
    assert seen == {0, 1}  # arm 2 eliminated at layer 1


def test_alpha_branch_plays_the_optimistic_pair_and_joins_no_layer():
    pol = _policy(beta=0.5, alpha=0.01, layers=7)
    pol.inverse[:] = np.eye(2) * 1e-6  # every width 1e-3 ||x - y|| <= alpha
    pol.theta[0] = np.array([0.2, 1.0])  # arm 1 is best: (x + y)^T theta is largest at (1, 1)
    assert pol.act(1, ARMS) == (1, 1)
    assert pol.layer[0] == -1
    before = pol.inverse.copy()
    pol.act(2, ARMS)
    np.testing.assert_array_equal(pol.inverse, before)  # line 8: no layer changes
    code = _policy(beta=0.5, alpha=0.01, layers=7, exploit_update="next_layer")
    code.inverse[:] = np.eye(2) * 1e-6
    code.theta[0] = np.array([0.2, 1.0])
    code.act(1, ARMS)
    assert code.layer[0] == -1  # (1, 1) has zero width: nothing to add
    code.beta[0] = 1e4  # now the bonus picks a distinct pair, which
    i, j = code.act(2, ARMS)  # the official code adds to layer 2 with
    assert i != j  # layer 2's weight
    width = np.sqrt((ARMS[i] - ARMS[j]) @ code.inverse[1] @ (ARMS[i] - ARMS[j]))
    assert code.layer[1] == 1 and code.weight2[1] == pytest.approx((0.25 / width) ** 2)


def _linear_duels(pol, rounds, theta_star, seed=0, K=6):
    rng = np.random.default_rng(seed)
    d = len(theta_star)
    pending = []
    for t in range(1, rounds + 1):
        if pending:
            pol.observe(t, pending)
        arms = rng.uniform(-1, 1, (K, d))
        arms /= np.linalg.norm(arms, axis=1, keepdims=True)
        i, j = pol.act(t, arms)
        pending = [PreferenceFeedback(t, int(rng.random() < sigmoid((arms[i] - arms[j]) @ theta_star)))]


def test_layer_mle_solves_line_19_and_converges_on_a_linear_instance():
    theta_star = np.array([2.0, -1.0, 0.5, 1.5])
    cosines = []
    for T in (300, 1500):
        # Algorithm 1's radius (beta: theory) eliminates nothing this early: every layer sees all pairs
        pol = _policy(T=T, d=4, beta="theory")
        _linear_duels(pol, T, theta_star)
        for l in np.flatnonzero(pol.stale):
            pol._fit(int(l), T)  # what act(T + 1) would do first
        counts = np.bincount(pol.layer[pol.layer >= 0], minlength=pol.L)
        assert (pol.layer >= 0).all() and (counts[:2] > 0).all()  # layers fill from the bottom
        for l in np.flatnonzero(counts):
            rows = np.flatnonzero((pol.layer == l) & pol.arrived)
            X, y, w2 = pol.diffs[rows], pol.labels[rows], pol.weight2[rows]
            grad = 2.0 ** (-2 * (l + 1)) * 0.02 * pol.theta[l] + X.T @ (w2 * (sigmoid(X @ pol.theta[l]) - y))
            assert np.abs(grad).max() < 1e-6
        est = pol.theta[int(np.argmax(counts))]
        cosines.append(est @ theta_star / np.linalg.norm(est) / np.linalg.norm(theta_star))
    assert cosines[0] < cosines[1] and cosines[1] > 0.99


def _cell(name, seed=0, T=900, util="linear", **params):
    return {
        "experiment": "e",
        "algorithm": name,
        "delay_label": "none",
        "horizon": T,
        "budget": None,
        "seed": seed,
        "environment": {
            "name": "synthetic_dueling",
            "params": {
                "dimension": 5,
                "n_arms": 5,
                "utility": util,
                "arm_distribution": "normalized_cube",
                "theta_distribution": "cube",
            },
        },
        "delay": {"kind": "none"},
        "policy": {"name": name, "params": params},
    }


def test_vacdb_beats_random_pairs_on_a_linear_utility():
    T, q = 900, 300
    for seed in (0, 1):
        ours = run_cell(_cell("vacdb", seed=seed, T=T))[0]["average_regret"]
        rnd = run_cell(_cell("random_pair", seed=seed, T=T))[0]["average_regret"]
        assert ours[-q:].mean() < 0.5 * rnd[-q:].mean()


def test_vacdb_is_deterministic_depends_on_its_seed_and_needs_no_torch():
    runs = [run_cell(_cell("vacdb", seed=s, T=200))[0] for s in (3, 3, 4)]
    for key in runs[0]:
        np.testing.assert_array_equal(runs[0][key], runs[1][key])
    assert not np.array_equal(runs[0]["regret"], runs[2]["regret"])
    paths = registry.job_sources("synthetic_dueling", "vacdb")
    assert "variance_aware_dueling.py" in {p.name for p in paths}
    assert not any("neural" in p.parts for p in paths)


def test_memory_bound_counts_the_history_and_one_inverse_per_layer():
    values = {"alpha": "auto", "layers": "auto"}
    T, d = 2000, 378  # Covertype's block arms: 54 x 7
    pol = VACDB(Problem(T, info={"dimension": d}), np.random.default_rng(0))
    arrays = sum(a.nbytes for a in (pol.inverse, pol.diffs, pol.weight2, pol.layer, pol.labels, pol.arrived))
    assert arrays <= VACDB.memory_bytes(values, T, {"dimension": d}) <= 1.01 * arrays


# --- issue 50: the authors' code as a preset, self-duels ----------------------------------------------------


def test_the_authors_preset_takes_the_codes_values_unless_the_config_sets_them():
    pol = _policy(T=2000, d=5, preset="authors")
    assert (pol.L, pol.alpha, pol.exploit_update, pol.mle_solver) == (5, 2**-5, "next_layer", "bfgs")
    assert (pol.mle_tolerance, pol.mle_start, pol.distinct_arms) == (1e-4, "previous_layer", False)
    assert pol.beta[0] == pytest.approx(np.sqrt(5 * np.log(2000)) / 4) and pol.kappa == 0.02
    np.testing.assert_allclose(pol.start_beta, 0.05 * 2.0 ** (1 - np.arange(1, 6)))  # suplin.py line 29
    ours = _policy(T=2000, d=5)
    assert (ours.L, ours.alpha, ours.exploit_update, ours.mle_solver, ours.mle_start) == (
        layer_count(2000**-1.5),
        2000**-1.5,
        "none",
        "newton",
        "own",
    )
    assert ours.start_beta is None
    mixed = _policy(T=2000, preset="authors", layers=7, exploit_update="none")
    assert (mixed.L, mixed.alpha, mixed.exploit_update) == (7, 2**-7, "none")  # alpha follows the configured L
    VACDB.check_params({"preset": "authors", "alpha": "auto", "layers": "auto"}, 2000)
    with pytest.raises(ConfigError, match="policy.params.layers"):
        VACDB.check_params({"preset": "authors", "alpha": 0.01, "layers": "auto"}, 2000)  # 2^-5 > 0.01
    assert VACDB.memory_bytes({"preset": "authors", "alpha": "auto", "layers": "auto"}, 100, {"dimension": 2}) == (
        100 * (8 * 2 + 25) + 5 * 8 * 4
    )


def test_the_codes_start_radius_holds_until_a_layer_takes_its_first_round():
    pol = _policy(beta=1.0, beta_start="code", layers=3, alpha=1 / 8)
    assert [pol._radius(l) for l in range(3)] == [0.05, 0.025, 0.0125]
    pol.act(1, ARMS)  # explores layer 1
    assert pol._radius(0) == 1.0 and pol._radius(1) == 0.025


def test_a_layer_still_at_zero_starts_its_mle_from_the_layer_below():
    pol = _policy(mle_start="previous_layer", mle_solver="bfgs", mle_tolerance=0.01, layers=3, alpha=1 / 8)
    pol.theta[0] = np.array([0.3, -0.2])
    pol.diffs[0], pol.labels[0], pol.arrived[0], pol.layer[0], pol.weight2[0] = [1.0, 0.0], 1.0, True, 1, 1e-12
    pol._fit(1, 2)  # a tiny weight and a coarse tolerance: BFGS stops where it starts
    np.testing.assert_allclose(pol.theta[1], [0.3, -0.2], atol=1e-6)
    own = _policy(mle_solver="bfgs", mle_tolerance=0.01, layers=3, alpha=1 / 8)
    own.theta[0] = np.array([0.3, -0.2])
    own.diffs[0], own.labels[0], own.arrived[0], own.layer[0], own.weight2[0] = [1.0, 0.0], 1.0, True, 1, 1e-12
    own._fit(1, 2)
    np.testing.assert_allclose(own.theta[1], [0.0, 0.0], atol=1e-6)


def test_a_self_duel_joins_no_layer_where_the_code_divides_by_zero():
    """The departure the module docstring names: one surviving arm, exploited with next_layer, adds nothing
    (the code's weight 2^-l / 0 turns Sigma NaN: suplin.py lines 99 and 76)."""
    pol = _policy(beta=1.0, alpha=0.01, layers=7, exploit_update="next_layer")
    pol.inverse[0] = np.eye(2) * 0.01  # layer 1 certain: widths <= 0.2 <= 1/2
    pol.theta[0] = np.array([10.0, 0.0])  # only arm 0 survives (2^-1 beta = 0.5)
    pol.inverse[1] = np.eye(2) * 1e-6  # layer 2: the lone arm's only pair has width 0 <= alpha
    assert pol.act(1, ARMS) == (0, 0)
    assert pol.layer[0] == -1 and pol.weight2[0] == 0.0
    pol.act(2, ARMS)
    assert np.isfinite(pol.inverse).all()


def test_distinct_arms_keeps_the_alpha_branch_off_self_duels():
    pol = _policy(beta=0.5, alpha=0.01, layers=7, distinct_arms=True)
    pol.inverse[:] = np.eye(2) * 1e-6
    pol.theta[0] = np.array([0.2, 1.0])  # without distinct_arms: (1, 1), the test above
    assert pol.act(1, ARMS) in ((1, 0), (0, 1))
    lone = _policy(beta=1.0, alpha=0.01, layers=7, distinct_arms=True)
    lone.inverse[0] = np.eye(2) * 0.01
    lone.theta[0] = np.array([10.0, 0.0])
    lone.inverse[1] = np.eye(2) * 1e-6
    assert lone.act(1, ARMS) == (0, 2)  # the lone arm against the arm of largest width from it
    assert self_duel_rule(VACDB, {"distinct_arms": False}) == "self-duels allowed (distinct_arms: false)"
