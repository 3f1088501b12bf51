"""benchmarks/flop_model.py against the products a short run performs: torch's FlopCounterMode for the seed-batched
engines (NDB-DF, NeuralLog), the calls of NVLDB's numpy backward pass for its single-seed path (issue 48)."""

import json

from torch.utils.flop_counter import FlopCounterMode

from banditbench.configuration.grid import load_config_file, load_grid
from banditbench.simulation.runner import build, run_seed_batched, run_single_seed
from conftest import load_script

flop_model = load_script("benchmarks/flop_model.py")
T = 60


def _cell(config, experiment, algorithm):
    grid = load_grid(load_config_file(f"config/{config}.yaml"))
    return {**json.loads(grid.cell_json(experiment, algorithm, "none", "none", None)), "horizon": T}


def _network(policy, arm_dim):
    """The network as the engine computes it: the symmetric input folded into the first layer."""
    if policy.net.symmetric:
        return flop_model.folded(policy.net.shapes, arm_dim)
    return flop_model.Network(tuple(policy.net.shapes))


def _close(counted, model):
    """The counter sees the matrix products only: a scalar output layer's products, done elementwise, are in the
    model and not in the count."""
    return 0.85 * model <= counted <= 1.02 * model


def _counted(cells) -> float:
    with FlopCounterMode(display=False) as counter:
        run_seed_batched(cells)
    return counter.get_total_flops() / len(cells)


def test_the_ndb_model_counts_the_products_of_the_seed_batched_engine():
    cell = _cell("delayed_dueling", "delayed_dueling_quadratic", "ndb_df")
    policy = build({**cell, "seed": 0})[1]
    d, K = cell["environment"]["params"]["dimension"], cell["environment"]["params"]["n_arms"]
    net = _network(policy, d)
    kept = type(policy).batch([policy]).gram.shape[-1]  # the coordinates the engine keeps V^{-1} in
    model = flop_model.per_seed(lambda t: flop_model.ndb_round(net, t, policy.trainer.steps, K, kept), T)
    counted = _counted([{**cell, "seed": s} for s in (0, 1)])
    assert _close(counted, model), (counted, model)


def test_the_neurallog_model_counts_the_products_of_the_seed_batched_engine():
    cell = _cell("neural_logistic", "synthetic_h1", "neurallog_ucb2")
    policy = build({**cell, "seed": 0})[1]
    trainer, net = policy.trainer, _network(policy, cell["environment"]["params"]["dimension"])
    rounds = [flop_model.neurallog_round(net, t, trainer.steps, trainer.due(t), trainer.batch) for t in range(1, T + 1)]
    counted = _counted([{**cell, "seed": s} for s in (0, 1)])
    assert sum(rounds) > 0 and _close(counted, sum(rounds)), (counted, sum(rounds))


def test_the_nvldb_model_counts_the_rows_its_backward_pass_is_called_on(monkeypatch):
    from banditbench.policies.neural import variance_aware_dueling as vd

    cell = {**_cell("variance_dueling", "vdb_square_d20_T10000", "NVLDB-UCB-ASYM"), "seed": 0}
    policy = build(cell)[1]
    net, D = flop_model.Network(tuple(policy.net.shapes)), len(policy.theta0)
    calls = []
    real = vd._NeuralLinearDueling._gradient

    def counting(self, params, x, labels, weights):
        calls.append(len(x))
        return real(self, params, x, labels, weights)

    monkeypatch.setattr(vd._NeuralLinearDueling, "_gradient", counting)
    run_single_seed(cell, False, compiled=False)
    trainer = policy.trainer
    steps = [flop_model.nvldb_round(net, t, trainer.steps, trainer.due(t), D) for t in range(1, T + 1)]
    # the model's training term, from the rows each backward pass saw
    counted = sum(net.train_step(rows) + 2 * rows * D for rows in calls)
    refits = sum(2 * 2 * max(t - 2, 0) * net.products for t in range(1, T + 1) if trainer.due(t) and t > 2)
    assert len(calls) == trainer.steps * sum(1 for t in range(3, T + 1) if trainer.due(t))
    assert sum(steps) == counted + refits
