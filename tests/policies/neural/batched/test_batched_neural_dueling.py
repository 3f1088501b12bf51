"""Seed-batched neural dueling (issue #22): NDB-DF and its baselines (seed 000) and NDB-UCB / NDB-TS
(:class:`~banditbench.policies.neural.batched.delayed_dueling.BatchedNeuralDueling`) against the single-seed
reference, and a seed's result independent of its block.

Tolerances.  The equivalence tests run the network in float64 (``precision: float64``; the confidence side
is float64 in both precisions); the batched path computes the same equations with other kernels
and summation orders, so it rounds differently:

* building blocks (per-arm gradients, Sherman–Morrison without temporaries): relative 1e-12;
* decisions: every round's pair is the reference's (the same regret value, relative 1e-9), up to the
  first round in which the reference's top two values of a rule it maximised (the scores of eq. 9,
  the index of eq. 10 or NDB-TS's draws) lie within a relative 1e-6 of each other (a near tie), or
  in which it trains from its initial parameters on rows that are all self-duels (``h(x) - h(x)``)
  or, for a heuristic policy, imputed labels (``mu(z) - mu(z)``): its data gradient is then zero up
  to rounding, and Adam turns that rounding into a step of size lr (a tie in the reference itself;
  the trajectories are not compared after it).  Most rounds must
  be compared, pooled over the seeds and cells of a test (a per-seed bound would fail on a CPU whose
  kernels break an early tie the other way; the ``rounding`` fixture runs the reference on contexts
  perturbed at 1e-15 to check just that);
* regret: the mean cumulative regret over the seeds of a cell agrees to 5 %.

The symmetric initialisation (the default) makes ``h(x; theta_0) = 0`` for every arm, so round 1's
first arm is an exact tie decided by rounding in both paths; the equivalence tests use
``init: independent`` and one test checks the default initialisation's regret only.

Block independence is bit for bit (same machine): a seed's result file is the same alone and inside a
block of six.
"""

import copy

import numpy as np
import pytest
import torch

from banditbench.api import Problem
from banditbench.feedback import PreferenceFeedback
from banditbench.policies.linalg import sherman_morrison
from banditbench.policies.neural.batched import ops as B
from banditbench.policies.neural import delayed_dueling as dd
from banditbench.policies.neural.neural_dueling import NDBTS
from banditbench.simulation.job import SEED_BATCHED, engine, run_block, run_cell
from banditbench.simulation.runner import build
from conftest import ROOT, synthetic_dueling_cell
from test_batched_neural import _assert_not_vacuous, _file_bytes, _same_decisions_as

NO_DELAY = {"kind": "none"}
GEOMETRIC = {"kind": "geometric", "mean": 3, "window": 10}
NEAR_TIE = 1e-6


def _cell(policy, T=50, seed=0, delay=NO_DELAY, d=4, K=6, **params):
    params = {"width": 8, "train_steps": 4, "init": "independent", "precision": "float64", **params}
    return synthetic_dueling_cell(
        policy, params, T=T, d=d, K=K, utility="quadratic", arms="sphere", theta="sphere", seed=seed, delay=delay
    )


def _top_gap(values) -> float:
    top = np.sort(np.asarray(values, dtype=float))[-2:]
    return (top[1] - top[0]) / max(abs(top[1]), abs(top[0]), 1e-300)


# --- building blocks -------------------------------------------------------------------------------
@pytest.mark.parametrize("depth, init", [(2, "symmetric"), (3, "independent")])
def test_per_arm_gradients_are_the_networks_gradients(depth, init):
    cell = _cell("ndb_df", depth=depth, init=init)
    policies = [build({**cell, "seed": s})[1] for s in (0, 1, 2)]
    batch = type(policies[0]).batch(policies)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 7, 4))
    got = B.mlp_arm_gradients(
        B.weights_of(batch.centre, batch.net.offsets, batch.net.shapes),
        batch.net.embed(torch.tensor(x)),
        batch.net.scale,
    )
    for s, pol in enumerate(policies):
        ref = pol.net.gradients(pol.net.theta0, torch.tensor(x[s]))
        np.testing.assert_allclose(got[s].numpy(), ref.numpy(), rtol=1e-12, atol=1e-12 * float(ref.abs().max()))


@pytest.mark.parametrize("depth, init", [(2, "symmetric"), (3, "independent")])
def test_scores_and_training_gradient_are_the_reference_networks(depth, init):
    """The batched forward pass (the symmetric input folded into the first layer) and the hand-written
    gradient of eq. 7's data term against the network and autograd of the single-seed path, at
    parameters away from theta_0, with weights 0 on some rows (relative 1e-10)."""
    cell = _cell("ndb_df", depth=depth, init=init)
    policies = [build({**cell, "seed": s})[1] for s in (0, 1)]
    batch = type(policies[0]).batch(policies)
    rng = np.random.default_rng(2)
    n = 9
    shift = torch.tensor(rng.standard_normal(batch.params.shape) * 0.1)
    batch.params += shift
    raw = _unit_rows(rng, 2 * 2 * n, 4).reshape(2, 2 * n, 4)
    labels, w = rng.random((2, n)), (rng.random((2, n)) < 0.7).astype(float)
    x = batch._input(torch.tensor(raw))
    got = batch._gradient(batch.params, x, n, torch.tensor(labels), torch.tensor(w))
    scores = B.mlp_forward(batch._mats(batch.params), x, batch.net.scale, False)[1][:, :, 0]
    for s, pol in enumerate(policies):
        theta = (pol.trainer.current + shift[s]).requires_grad_(True)
        h = pol.net.forward(theta, torch.tensor(raw[s]))
        z = h[:n] - h[n:]
        ((torch.nn.functional.softplus(z) - torch.tensor(labels[s]) * z) * torch.tensor(w[s])).sum().backward()
        ref = theta.grad.numpy()
        np.testing.assert_allclose(got[s].numpy(), ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
        np.testing.assert_allclose(scores[s].numpy(), h.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_sherman_morrison_without_temporaries_matches_the_single_seed_update():
    rng = np.random.default_rng(1)
    S, D = 3, 40
    A = rng.standard_normal((S, D, D))
    inv = np.linalg.inv(A @ A.transpose(0, 2, 1) + np.eye(D))
    x = rng.standard_normal((S, D))
    got = torch.tensor(inv)
    B.sherman_morrison_all(got, torch.tensor(x))
    for s in range(S):
        ref = inv[s].copy()
        sherman_morrison(ref, x[s])
        np.testing.assert_allclose(got[s].numpy(), ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("depth", [2, 3])
def test_widths_in_the_halved_coordinates_of_the_symmetric_input_are_the_full_ones(depth):
    """Under the symmetric initialisation the batched path keeps V on the subspace of the features (the
    input's equal halves and the paired hidden units: m d / 2 + m^2 / 4 (L - 2) + m / 2 coordinates): its
    widths of eq. 12 are those of the full p x p V^{-1} (InverseGram on the network's gradient features),
    relative 1e-10, round after round, across several applications of the held-back updates."""
    from banditbench.policies.linalg import InverseGram
    from banditbench.policies.neural.batched.delayed_dueling import DEFERRED

    cell = _cell("ndb_df", init="symmetric", delay=GEOMETRIC, depth=depth)
    policies = [build({**cell, "seed": s})[1] for s in (0, 1)]
    batch = type(policies[0]).batch(policies)
    m, d = 8, 4
    assert batch.halved and batch.gram.shape[1] == m * d // 2 + m * m // 4 * (depth - 2) + m // 2
    full = [InverseGram(pol.net.n_params, batch.reg, keep_matrix=False) for pol in policies]
    seen, norms = {}, batch._norms

    def keeping(phi, first):
        seen["norms"] = norms(phi, first)
        return seen["norms"]

    batch._norms = keeping
    rng = np.random.default_rng(3)
    for t in range(1, 2 * DEFERRED + 8):
        arms = [_unit_rows(rng, 6, 4) for _ in policies]
        pairs = batch.act_all(t, arms)
        for s, pol in enumerate(policies):
            phi = (pol.net.gradients(pol.net.theta0, torch.tensor(arms[s])) / np.sqrt(8)).numpy()
            i, j = pairs[s]
            ref = full[s].norms(phi - phi[i])
            np.testing.assert_allclose(seen["norms"][0][s].numpy(), ref, rtol=1e-10, atol=1e-12)
            full[s].update(phi[i] - phi[j])
        batch.observe_all(t + 1, [[PreferenceFeedback(t, int(rng.random() < 0.5))] for _ in policies])


# --- equivalence with the single-seed path ------------------------------------------------------------
def _reference(cell, monkeypatch):
    """The single-seed run, and per round the smallest relative top-two gap of the rules it maximised
    (0 in a round whose training has a data gradient of rounding only, :func:`_zero_data_gradient`)."""
    gaps, ties = [], set()
    real_train = dd._NeuralDuelingBase._train

    def recording(real_arm):
        def second_arm(self, scores, first, norms):
            if isinstance(self, NDBTS):
                draw = copy.deepcopy(self.rng).standard_normal(len(scores))
                index = scores - scores[first] + self._bonus_scale() * norms * draw
            else:
                index = scores + self._bonus_scale() * norms
            gaps.append(min(_top_gap(scores), _top_gap(index)))
            return real_arm(self, scores, first, norms)

        return second_arm

    def train(self, t):
        if torch.equal(self.trainer.current, self.trainer.centre) and _zero_data_gradient(self, t):
            ties.add(t)
        return real_train(self, t)

    with monkeypatch.context() as m:
        for cls in (dd._NeuralDuelingBase, NDBTS):
            m.setattr(cls, "_second_arm", recording(cls._second_arm))
        m.setattr(dd._NeuralDuelingBase, "_train", train)
        series = run_cell(cell)[0]
    gaps = np.array(gaps)
    assert len(gaps) == cell["horizon"]
    gaps[[t - 1 for t in ties]] = 0.0
    return series, gaps


def _zero_data_gradient(policy, t) -> bool:
    """Whether eq. 7's data gradient at round ``t`` is zero in exact arithmetic, every row of the training
    set being a self-duel (``Delta h_s = h(x) - h(x)``: its gradient ``g(x) - g(x)``) or an imputed label
    (``mu(z) - mu(z)``).  Computed, it is rounding, which Adam's normalised step makes a step of size lr
    whose sign and size depend on the CPU's kernels (an FMA computes ``a h - a h`` as the rounding error
    of ``a h``): a tie in the reference itself."""
    history = policy.history
    rows, _ = history.training_set(policy.delay_strategy, t, lambda r: np.zeros(len(r)))
    if policy.fixed_arms:
        self_duel = policy.played[rows, 0] == policy.played[rows, 1]
    else:
        self_duel = (policy.x_first[rows] == policy.x_second[rows]).all(1).numpy()
    imputed = ~history.arrived[rows] if policy.delay_strategy.startswith("heuristic") else False
    return bool(np.all(self_duel | imputed))


def _same_decisions(cell, seeds, monkeypatch):
    """Rounds compared and rounds played; the pairs agree up to the first near tie (:func:`_same_decisions_as`)."""
    return _same_decisions_as(lambda one: _reference(one, monkeypatch), cell, seeds, NEAR_TIE)


@pytest.mark.parametrize("policy", ["ndb_df", "ndb_ignore", "ndb_heuristic", "ndb_heuristic_all", "ndb_zero"])
def test_delayed_dueling_batched_makes_the_reference_decisions(policy, rounding, monkeypatch):
    """Each NDB-DF family member under delays, with the full V^{-1} and its diagonal."""
    _assert_not_vacuous(
        _same_decisions(_cell(policy, delay=GEOMETRIC), [0, 1], monkeypatch),
        _same_decisions(_cell(policy, delay=GEOMETRIC, confidence="diagonal", T=40), [2], monkeypatch),
    )


@pytest.mark.parametrize("policy", ["ndb_ucb", "ndb_ts"])
def test_neural_dueling_batched_makes_the_reference_decisions(policy, rounding, monkeypatch):
    """NDB-UCB / NDB-TS at variance_dueling.yaml's shape (depth 3, kappa_mu 1), without and with delays."""
    _assert_not_vacuous(
        _same_decisions(_cell(policy, depth=3, kappa_mu=1.0), [0, 1], monkeypatch),
        _same_decisions(_cell(policy, depth=3, kappa_mu=1.0, delay=GEOMETRIC, T=40), [2], monkeypatch),
    )


def test_default_symmetric_initialisation_gives_the_reference_regret():
    """Round 1 is an exact tie under the symmetric initialisation (both paths break it by rounding), so
    only the regret is compared: the mean over 6 seeds to 15 %."""
    cell = {**_cell("ndb_df", T=60, delay=GEOMETRIC)}
    cell["policy"] = {"name": "ndb_df", "params": {"width": 8, "train_steps": 4}}
    seeds = list(range(6))
    batched = np.mean([r[0]["regret"].sum() for r in run_block(cell, seeds)])
    ref = np.mean([run_cell({**cell, "seed": s})[0]["regret"].sum() for s in seeds])
    assert abs(batched - ref) <= 0.15 * ref, (batched, ref)


def _unit_rows(rng, n, d):
    x = rng.standard_normal((n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("confidence", ["full", "diagonal"])
def test_fixed_arm_sets_are_batched_like_the_reference(confidence, rounding):
    """A fixed arm set (the prompt environments): the arm kernel (or V's diagonal) carried for all seeds,
    played in lockstep against each seed's reference policy with the same outcomes; the same pairs up to
    the first near tie (pooled bound), both paths on the same (``rounding``) arms."""
    T, S, K, d = 40, 3, 12, 5
    arms = rounding(_unit_rows(np.random.default_rng(4), K, d))
    arms.flags.writeable = False
    f = np.sin(3 * arms[:, 0])
    problem = Problem(T, rho=0.8, window=10, info={"dimension": d, "n_arms": K, "fixed_arms": True})

    def make(s):
        return dd.NDBHeuristic(
            problem, np.random.default_rng(s), width=8, train_steps=3, init="independent", confidence=confidence
        )

    refs = [make(s) for s in range(S)]
    batch = dd.NDBHeuristic.batch([make(s) for s in range(S)])
    seen = [_keeping_gap(pol) for pol in refs]
    out_rng = np.random.default_rng(5)
    compared, parted = 0, [False] * S
    for t in range(1, T + 1):
        pairs = batch.act_all(t, [arms] * S)
        arrived = []
        for s, pol in enumerate(refs):
            items = []
            if not parted[s]:
                ref_pair = pol.act(t, arms)
                if ref_pair != pairs[s]:
                    assert seen[s]["gap"] < NEAR_TIE, f"seed {s}, round {t}: {ref_pair} != {pairs[s]}"
                    parted[s] = True
                else:
                    compared += 1
            i, j = pairs[s]
            y = int(out_rng.random() < 1 / (1 + np.exp(-(f[i] - f[j]))))
            items.append(PreferenceFeedback(t, y))
            if not parted[s]:
                pol.observe(t + 1, items)
            arrived.append(items)
        batch.observe_all(t + 1, arrived)
    assert compared >= 0.6 * S * T, compared


def _keeping_gap(policy):
    seen, second_arm = {}, policy._second_arm

    def keeping(scores, first, norms):
        seen["gap"] = min(_top_gap(scores), _top_gap(scores + policy._bonus_scale() * norms))
        return second_arm(scores, first, norms)

    policy._second_arm = keeping
    return seen


# --- block independence -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "policy, params, delay",
    [
        ("ndb_df", {"confidence": "full"}, GEOMETRIC),
        ("ndb_heuristic", {"confidence": "diagonal", "init": "symmetric"}, GEOMETRIC),
        ("ndb_ts", {"depth": 3, "init": "symmetric"}, NO_DELAY),
        # the default precision (the network in float32, V^{-1} in float64) and the paired coordinates of V
        ("ndb_df", {"precision": "float32", "init": "symmetric"}, GEOMETRIC),
        ("ndb_heuristic", {"precision": "float32"}, GEOMETRIC),
    ],
)
def test_a_seeds_batched_result_file_does_not_depend_on_its_block(policy, params, delay, tmp_path):
    cell = _cell(policy, T=40, delay=delay, **params)
    alone = run_block(cell, [3])[0]
    inside = run_block(cell, [0, 1, 2, 3, 4, 5])
    assert _file_bytes(tmp_path, "a.npz", alone) == _file_bytes(tmp_path, "b.npz", inside[3])
    assert alone[1]["seed"] == 3 and alone[1]["engine"] == "seed-batched"
    assert not np.array_equal(inside[2][0]["regret"], inside[3][0]["regret"])


# --- devices ----------------------------------------------------------------------------------------------
@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is there")
def test_cuda_without_a_gpu_is_refused_before_any_job_naming_the_key():
    from banditbench import registry
    from banditbench.errors import ConfigError

    for name in ("ndb_df", "ndb_ts"):
        cls = registry.get("policy", name).load()
        with pytest.raises(ConfigError, match=r"params\.device: 'cuda'.*no GPU"):
            cls.check_params(registry.values(cls, {"device": "cuda"}), 100)
        cls.check_params(registry.values(cls, {"device": "cpu"}), 100)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@pytest.mark.parametrize("policy", ["ndb_heuristic", "ndb_ts"])
def test_batched_on_cuda_makes_the_cpu_decisions(policy, monkeypatch):
    _assert_not_vacuous(_same_decisions(_cell(policy, delay=GEOMETRIC, device="cuda"), [0, 1], monkeypatch))


def test_neural_dueling_cells_are_batched():
    for policy in ("ndb_df", "ndb_ignore", "ndb_heuristic", "ndb_heuristic_all", "ndb_zero", "ndb_ucb", "ndb_ts"):
        assert engine([_cell(policy)]) == SEED_BATCHED


PROMPT_ARMS = ROOT / "data/processed/prompt_arms"


@pytest.mark.skipif(
    not all((PROMPT_ARMS / task).is_dir() for task in ("sum", "antonyms")),
    reason="the prompt arm sets of tasks sum and antonyms are not built",
)
def test_prompt_tasks_of_other_sizes_run_in_groups_with_the_reference_regret(tmp_path):
    """Seed s plays prompt task s mod 2, whose arm sets differ in size: the block stacks each size apart
    (fixed arm sets: the arm-kernel path); each seed's result is its result alone, and the cumulative
    regret, pooled over the seeds, the reference's to 5 % (on this machine it is the same, round by round;
    the pooled bound leaves room for another CPU's rounding to break a near tie otherwise)."""
    cell = {
        "experiment": "x",
        "algorithm": "ndb_df",
        "delay_label": "g",
        "budget": None,
        "environment": {"name": "prompt_dueling", "params": {"tasks": ["sum", "antonyms"]}},
        "policy": {"name": "ndb_df", "params": {"width": 8, "train_steps": 3, "init": "independent"}},
        "delay": dict(GEOMETRIC),
        "horizon": 30,
        "data_root": str(ROOT / "data"),
    }
    block = run_block(cell, [0, 1, 2])
    assert _file_bytes(tmp_path, "a.npz", run_block(cell, [2])[0]) == _file_bytes(tmp_path, "b.npz", block[2])
    batched = sum(block[seed][0]["regret"].sum() for seed in (0, 1, 2))
    ref = sum(run_cell({**cell, "seed": seed})[0]["regret"].sum() for seed in (0, 1, 2))
    assert abs(batched - ref) <= 0.05 * ref and ref > 0, (batched, ref)
