"""Prompt optimisation as a dueling bandit over a fixed pool of K = 500 instructions (seed 000 Sec. 5.1).

Following the protocol of Lin et al. (2024) that seed 000 adopts, the arms are
the 500 candidate instructions of an instruction-induction task, each
represented by its embedding (the unit-norm TF-IDF + SVD features of the task's
prompt oracle, :mod:`banditbench.data.oracles`), and the same arm set is shown
every round.  An instruction's utility is ``f = s * a`` where ``a`` is its
predicted gpt-3.5-turbo execution accuracy (the oracle's regression fitted on
LLM-scored instructions) and ``s`` is ``utility_scale``; the learner duels two
instructions and observes ``y ~ Bernoulli(sigmoid(f_i - f_j))`` (BTL).  The
default ``s = 10`` is the ``magnitude`` recorded in the Federated-APOHF runs
that produced the scores; seed 000 does not state one.  Metrics as
:mod:`banditbench.envs.preference` (in utility units): ``regret = 2 f* - f_i - f_j``,
``average_regret``, ``weak_regret``.

Several tasks: seed 000 averages over tasks.  With ``tasks`` listing ``n``
tasks, the job with seed ``s`` plays task ``tasks[s mod n]`` (the job seed is
the entropy of the environment's seed sequence), so an experiment with a
multiple of ``n`` seeds gives every task the same number of runs and its
aggregate curves average over tasks.  The task index is stored in the run's
summary.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..api import register
from ..data.paths import PROMPT_ORACLE_OPTIONS, prompt_oracle_path, resolve
from ..data.registry import SCORED_TASKS
from ..errors import ENVIRONMENT_PARAMS, ConfigError, key_path
from ..feedback import PreferenceFeedback, new_feedback
from ..links import sigmoid_of
from ..params import Positive
from .draws import uniforms
from .preference import DuelingEnvironment, KeptDuelMetrics


def _tasks(params: Mapping[str, Any]) -> list[str]:
    tasks = list(params.get("tasks", SCORED_TASKS))
    if not tasks or len(set(tasks)) != len(tasks):
        raise ConfigError(f"{key_path(ENVIRONMENT_PARAMS, 'tasks')}: need a non-empty list of distinct tasks, "
                          f"got {tasks!r}")
    return tasks


@register("prompt_dueling")
class PromptDueling(KeptDuelMetrics, DuelingEnvironment):
    """Prompt optimisation over 500 fixed instructions with BTL preference feedback (seed 000 Sec. 5.1).

    Parameters
    ----------
    tasks : instruction-induction tasks with scored instructions (default: all six); seed s plays
        ``tasks[s mod len(tasks)]``.
    oracle : prompt oracle options (pool, embedding, embedding_dim, regressor, tolerance, seed).
    utility_scale : ``s`` in ``f = s * accuracy``.
    """

    def __init__(self, seed_seq: np.random.SeedSequence, *, horizon: int, tasks: Sequence[str] = SCORED_TASKS,
                 oracle: Mapping[str, Any] | None = None, utility_scale: Positive = 10.0):
        from ..data.files import load_npz

        task_list = _tasks({"tasks": tasks})
        if not utility_scale > 0:
            raise ConfigError(f"{key_path(ENVIRONMENT_PARAMS, 'utility_scale')}: must be positive, got {utility_scale}")
        entropy = seed_seq.entropy
        if not isinstance(entropy, (int, np.integer)):
            raise ConfigError("seed: prompt_dueling needs an integer job seed to pick its task")
        self.task_index = int(entropy) % len(task_list)
        self.task = task_list[self.task_index]
        identity = {"task": self.task, "options": resolve(PROMPT_ORACLE_OPTIONS, oracle,
                                                          key_path(ENVIRONMENT_PARAMS, "oracle"))}
        arrays, _ = load_npz(prompt_oracle_path(self.task, oracle, ENVIRONMENT_PARAMS), "prompt oracle",
                             required=("features", "utility"), expect=identity)
        self.arms = np.ascontiguousarray(arrays["features"], dtype=np.float64)
        self.arms.flags.writeable = False            # the same arm set is shown every round
        self.f = float(utility_scale) * arrays["utility"].astype(np.float64)
        self.best = float(self.f.max())
        self._utilities = self.f.tolist()            # Python floats for the per-round path
        self._keep_truth(horizon)
        self._uniform = uniforms(np.random.default_rng(seed_seq.spawn(1)[0])).__next__    # the outcomes' uniforms

    @classmethod
    def required_files(cls, params: Mapping[str, Any]) -> list[str]:
        return [prompt_oracle_path(task, params.get("oracle"), ENVIRONMENT_PARAMS) for task in _tasks(params)]

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        _tasks(values)

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        return 2 * 8 * horizon                                  # every round's regret and weak regret

    def public_info(self) -> dict[str, Any]:
        return {"dimension": self.arms.shape[1], "n_arms": self.arms.shape[0], "fixed_arms": True}

    def context(self, t: int) -> np.ndarray:
        return self.arms

    def play(self, t: int, action) -> PreferenceFeedback:
        i, j = int(action[0]), int(action[1])
        f = self._utilities
        y = int(self._uniform() < sigmoid_of(f[i] - f[j]))
        self._keep_duel(t, f, i, j, self.best)
        return new_feedback(PreferenceFeedback, (t, y))

    def summary(self) -> dict[str, float]:
        return {"task_index": float(self.task_index)}
