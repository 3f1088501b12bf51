"""A misspelt name where a registered or configured one is expected (policy, environment, delay kind, parameter,
dataset, algorithm or experiment label, metric) says which name was probably meant, and still lists the valid
ones (or points to ``banditbench list`` for the registered policies and environments)."""

import copy
import re

import pytest

from banditbench.cli import main
from banditbench.configuration.grid import load_grid
from banditbench.data.catalog import get_dataset
from banditbench.errors import ConfigError, did_you_mean
from banditbench.simulation.delays import make_delay

CONFIG = {
    "experiments": {
        "duel": {
            "environment": {"name": "synthetic_dueling", "params": {"dimension": 3, "n_arms": 4}},
            "horizon": 20,
            "seeds": 2,
            "algorithms": {"ldb": {"policy": "ldb_df"}, "random": {"policy": "random_pair"}},
            "delays": {"none": {"kind": "none"}, "late": {"kind": "geometric", "mean": 5}},
        }
    },
    "claims": {
        "ldb_wins": {"paper": "000", "where": "Sec. 5", "quote": "LDB-DF beats random duels", "experiment": "duel",
                     "metric": "cumulative_regret", "delay": "none", "a": "ldb", "b": "random", "relation": "less"},
    },
}  # fmt: skip


def _duel(c):
    return c["experiments"]["duel"]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda c: _duel(c)["algorithms"]["ldb"].update(policy="ldb_dff"),
            r"^experiments\.duel\.algorithms\.ldb\.policy: unknown policy 'ldb_dff' \(did you mean 'ldb_df'\?\); "
            r"`banditbench list policies` lists all \d+$",
        ),
        (
            lambda c: _duel(c)["algorithms"]["ldb"].update(policy="LDB_DF"),
            r"unknown policy 'LDB_DF' \(did you mean 'ldb_df'\?\)",
        ),
        (
            lambda c: _duel(c)["algorithms"]["ldb"].update(policy="qqqq"),
            r"unknown policy 'qqqq'; registered: \['ada_ofu_ecolog', .*'ldb_df'",
        ),
        (
            lambda c: _duel(c)["environment"].update(name="synthetic_duelling"),
            r"^experiments\.duel\.environment\.name: unknown environment 'synthetic_duelling' \(did you mean "
            r"'synthetic_dueling'\?\); `banditbench list environments` lists all \d+$",
        ),
        (
            lambda c: _duel(c)["delays"]["late"].update(kind="geometrik"),
            r"^experiments\.duel\.delays\.late\.kind: 'geometrik' is not one of \['none', 'constant', 'uniform', "
            r"'geometric'\] \(did you mean 'geometric'\?\)$",
        ),
        (
            lambda c: _duel(c)["algorithms"]["ldb"].update(params={"lamm": 2}),
            r"^experiments\.duel\.algorithms\.ldb\.params: unknown parameter\(s\) \['lamm'\] for 'ldb_df' "
            r"\(did you mean 'lam'\?\); known: \[.*'lam'",
        ),
        (
            lambda c: c.update(only_algorithms="ldbb"),
            r"^only_algorithms: 'ldbb' is not an algorithm of any experiment \(did you mean 'ldb'\?\); algorithms: ",
        ),
        (
            lambda c: c.update(only_experiments="duell"),
            r"^only_experiments: 'duell' is not an experiment of this config \(did you mean 'duel'\?\); configured: ",
        ),
        (
            lambda c: c.update(override="ldbb.lam=2"),
            r"^override\.0: 'ldbb\.lam=2' names algorithm 'ldbb', .* \(did you mean 'ldb'\?\); algorithms: ",
        ),
        (
            lambda c: c.update(override="ldb.lamm=2"),
            r"^override\.0: 'lamm' is not a parameter of policy 'ldb_df' .*\(did you mean 'lam'\?\); its parameters",
        ),
        (
            lambda c: c["claims"]["ldb_wins"].update(a="ldbb"),
            r"^claims\.ldb_wins\.a: 'ldbb' is not an algorithm of experiment 'duel' \(did you mean 'ldb'\?\)",
        ),
        (
            lambda c: c["claims"]["ldb_wins"].update(delay="nonee"),
            r"^claims\.ldb_wins\.delay: 'nonee' is not a delay setting of experiment 'duel' \(did you mean 'none'\?\)",
        ),
        (
            lambda c: c["claims"]["ldb_wins"].update(metric="cumulative_regrett"),
            r"^claims\.ldb_wins\.metric: experiment 'duel' has no 'cumulative_regrett' \(did you mean "
            r"'cumulative_regret'\?\) \(its metrics: \[",
        ),
        (
            lambda c: _duel(c).update(plot_metric="regrett"),
            r"^experiments\.duel\.plot_metric: 'regrett' is not logged by the environment \(did you mean 'regret'\?\)",
        ),
        (
            lambda c: _duel(c).update(paired={"reference": "randon"}),
            r"^experiments\.duel\.paired\.reference: 'randon' is not an algorithm of this experiment \(did you mean "
            r"'random'\?\)",
        ),
        (
            lambda c: c["experiments"].update(
                digits={
                    "environment": {"name": "classification_bandit", "params": {"dataset": "digitz"}},
                    "horizon": 20,
                    "seeds": 1,
                    "algorithms": {"lin": {"policy": "linucb"}},
                    "delays": {"none": {"kind": "none"}},
                }
            ),
            r"^experiments\.digits\.environment\.params\.dataset: must be one of \[.*\], got 'digitz' \(did you mean "
            r"'digits'\?\)$",
        ),
    ],
    ids=[
        "policy", "policy-case", "policy-far", "environment", "delay-kind", "parameter", "only_algorithms",
        "only_experiments", "override-algorithm", "override-parameter", "claim-algorithm", "claim-delay", "claim-metric", "metric",
        "paired-reference", "dataset",
    ],
)  # fmt: skip
def test_a_misspelt_name_is_refused_with_the_name_it_probably_meant(mutate, message):
    config = copy.deepcopy(CONFIG)
    mutate(config)
    with pytest.raises(ConfigError, match=message) as err:
        load_grid(config)
    assert "\n" not in str(err.value)
    assert ("did you mean" in str(err.value)) != message.startswith("unknown policy 'qqqq'")


def test_a_delay_and_a_dataset_built_from_their_names_suggest_too():
    with pytest.raises(
        ConfigError, match=r"^delay\.kind: unknown delay kind 'geometrik' \(did you mean 'geometric'\?\)"
    ):
        make_delay({"kind": "geometrik"})
    with pytest.raises(ConfigError, match=r"^delay: unknown key\(s\) \['maen'\] \(did you mean 'mean'\?\) for delay"):
        make_delay({"kind": "geometric", "maen": 5})
    with pytest.raises(
        ConfigError, match=r"^dataset: unknown dataset 'obd_ful' \(did you mean 'obd_full'\?\); registered"
    ):
        get_dataset("obd_ful")


def test_the_check_command_suggests_the_policy_it_probably_means(capsys):
    assert main(["check", "ldb_dff"]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(r"banditbench: configuration error: policy: unknown policy 'ldb_dff' \(did you mean 'ldb_df'\?\); "
                        r"`banditbench list policies` lists all \d+\n", err), err  # fmt: skip


@pytest.mark.parametrize(
    "name, choices, expected",
    [
        ("ldb_dff", ["ldb_df", "ndb_df", "linucb"], " (did you mean 'ldb_df'?)"),
        ("Geometric", ["none", "geometric"], " (did you mean 'geometric'?)"),
        ("zzz", ["none", "geometric"], ""),
        ("", ["none"], ""),
        (3, ["none"], ""),
        ("none", ["none"], ""),
        ("cumulative_regrett", ["regret", "weak_regret"], " (did you mean 'cumulative_regret'?)"),
        ("per_round_regret", ["self_duel"], ""),
    ],
)
def test_did_you_mean(name, choices, expected):
    prefix = next((p for p in ("cumulative_", "per_round_") if isinstance(name, str) and name.startswith(p)), "")
    assert did_you_mean(name, choices, prefix) == expected
