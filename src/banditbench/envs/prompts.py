"""Prompt optimisation as a dueling bandit over a fixed pool of instructions (seed 000 Sec. 5.1).

Following the protocol of Lin et al. (2024) that seed 000 adopts, the arms are
instructions of an instruction-induction task, each represented by its
embedding, and the same arm set is shown every round; an arm's reward is its
accuracy ``a`` on a validation set.  Two reward sources (``rewards``):

``measured`` (default)
    The arms are the task's scored instructions (119–484 per task,
    :mod:`banditbench.data.prompt_arms`: unique up to whitespace, at most
    ``arms.max_arms``), each rewarded by its measured gpt-3.5-turbo execution
    accuracy from the Federated-APOHF result logs (the mean of its distinct
    measurements), and embedded by a pretrained sentence encoder
    (``arms.embedding``, default all-MiniLM-L6-v2: the optional dependencies
    ``prompts``; TF-IDF + SVD also available).
``surrogate``
    The 500 candidate instructions of the task's pool, unscored, each rewarded
    by our prompt oracle's prediction of its accuracy (kernel ridge on TF-IDF +
    SVD features, :mod:`banditbench.data.oracles`; ``oracle`` options): the
    rewards are a model's guesses, not measurements.

The learner duels two instructions and observes ``y ~ Bernoulli(sigmoid(s a_i - s a_j))``
(BTL) with ``s = utility_scale``: the default ``s = 10`` is the ``magnitude`` recorded in
the Federated-APOHF runs; seed 000 does not state one.  The metrics are in
accuracy units (the scale divided out): ``regret = 2 a* - a_i - a_j``, ``average_regret``,
``weak_regret`` (:mod:`banditbench.envs.preference`).

Several tasks: seed 000 averages over tasks (29 in the paper; the six tasks with
scored instructions here).  With ``tasks`` listing ``n`` tasks, the job with seed ``s``
plays task ``tasks[s mod n]`` (the job seed is the entropy of the environment's
seed sequence), so an experiment with a multiple of ``n`` seeds gives every task
the same number of runs and its aggregate curves average over tasks.  The run's
summary holds ``task_index``, the task's ``score_gap = a* - mean(a)`` over its arms
and ``flat_task`` (1 when ``score_gap < flat_gap``): on such a task uniformly random
pairs lose less than ``2 flat_gap`` accuracy a round, too little for any algorithm to
separate from the others; the per-task tables mark it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Mapping, Sequence

import numpy as np

from ..api import register
from ..data.paths import PROMPT_ORACLE_OPTIONS, prompt_arms_options, prompt_arms_path, prompt_oracle_path, resolve
from ..data.catalog import ENCODERS, SCORED_TASKS
from ..errors import ENVIRONMENT_PARAMS, ConfigError, key_path
from ..feedback import PreferenceFeedback, new_feedback
from ..numerics.sigmoid import sigmoid_of
from ..params import Doc, NonNegative, Positive
from .draws import uniforms
from .preference import DuelingEnvironment, KeptDuelMetrics


def _tasks(params: Mapping[str, Any]) -> list[str]:
    tasks = list(params.get("tasks", SCORED_TASKS))
    if not tasks or len(set(tasks)) != len(tasks):
        raise ConfigError(
            f"{key_path(ENVIRONMENT_PARAMS, 'tasks')}: need a non-empty list of distinct tasks, got {tasks!r}"
        )
    return tasks


def _sources(params: Mapping[str, Any]) -> str:
    """The reward source; the options of the other one are refused (they would be silently unused)."""
    rewards = params.get("rewards", "measured")
    if rewards not in ("measured", "surrogate"):
        raise ConfigError(
            f"{key_path(ENVIRONMENT_PARAMS, 'rewards')}: {rewards!r} is not one of ['measured', 'surrogate']"
        )
    unused = "oracle" if rewards == "measured" else "arms"
    if params.get(unused) is not None:
        raise ConfigError(
            f"{key_path(ENVIRONMENT_PARAMS, unused)}: only read with rewards: "
            f"{'surrogate' if unused == 'oracle' else 'measured'} (this environment has rewards: "
            f"{rewards})"
        )
    return rewards


def _data_file(task: str, params: Mapping[str, Any]) -> str:
    if _sources(params) == "measured":
        return prompt_arms_path(task, params.get("arms"), ENVIRONMENT_PARAMS)
    return prompt_oracle_path(task, params.get("oracle"), ENVIRONMENT_PARAMS)


@register("prompt_dueling")
class PromptDueling(KeptDuelMetrics, DuelingEnvironment):
    """Prompt optimisation over a fixed set of instructions with BTL preference feedback (seed 000 Sec. 5.1)."""

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        horizon: Annotated[int, Doc("the run's rounds T, set from the experiment's ``horizon``.")],
        tasks: Annotated[
            Sequence[str],
            Doc(
                "instruction-induction tasks with scored instructions (default: all six); seed s plays "
                "``tasks[s mod len(tasks)]``."
            ),
        ] = SCORED_TASKS,
        rewards: Annotated[
            Literal["measured", "surrogate"],
            Doc(
                "``measured``: the arms are the scored instructions, the reward their measured accuracy; "
                "``surrogate``: the 500-instruction pool, rewarded by the prompt oracle's prediction."
            ),
        ] = "measured",
        arms: Annotated[
            Mapping[str, Any] | None,
            Doc(
                "options of the measured arms (embedding, embedding_dim, duplicates, max_arms, arm_seed, "
                "tolerance, seed; :mod:`banditbench.data.prompt_arms`)."
            ),
        ] = None,
        oracle: Annotated[
            Mapping[str, Any] | None,
            Doc("prompt oracle options of the surrogate (pool, embedding, embedding_dim, regressor, tolerance, seed)."),
        ] = None,
        utility_scale: Annotated[
            Positive, Doc("``s`` in the BTL model ``sigmoid(s a_i - s a_j)``; the metrics stay in accuracy units.")
        ] = 10.0,
        flat_gap: Annotated[
            NonNegative, Doc("a task whose best arm beats the arms' mean accuracy by less than this is flagged flat.")
        ] = 0.1,
    ):
        from ..data.files import load_npz

        task_list = _tasks({"tasks": tasks})
        params = {"rewards": rewards, "arms": arms, "oracle": oracle}
        self.rewards = _sources(params)
        entropy = seed_seq.entropy
        if not isinstance(entropy, (int, np.integer)):
            raise ConfigError("seed: prompt_dueling needs an integer job seed to pick its task")
        self.task_index = int(entropy) % len(task_list)
        self.task = task_list[self.task_index]
        path = _data_file(self.task, params)
        if self.rewards == "measured":
            identity = {"task": self.task, "options": prompt_arms_options(arms, ENVIRONMENT_PARAMS)}
            arrays, _ = load_npz(path, "prompt arms", required=("features", "accuracy"), expect=identity)
            accuracy = arrays["accuracy"]
        else:
            identity = {
                "task": self.task,
                "options": resolve(PROMPT_ORACLE_OPTIONS, oracle, key_path(ENVIRONMENT_PARAMS, "oracle")),
            }
            arrays, _ = load_npz(path, "prompt oracle", required=("features", "utility"), expect=identity)
            accuracy = arrays["utility"]
        self.arms = np.ascontiguousarray(arrays["features"], dtype=np.float64)
        self.arms.flags.writeable = False  # the same arm set is shown every round
        self.accuracy = np.asarray(accuracy, dtype=np.float64)
        self.scale = float(utility_scale)
        self.f = self.scale * self.accuracy  # the BTL utilities
        self.best = float(self.accuracy.max())
        self.score_gap = float(self.best - self.accuracy.mean())
        self.flat = self.score_gap < flat_gap
        self._accuracy = self.accuracy.tolist()  # Python floats for the per-round path
        self._utilities = self.f.tolist()
        self._keep_truth(horizon)
        self._uniform = uniforms(np.random.default_rng(seed_seq.spawn(1)[0])).__next__  # the outcomes' uniforms

    @classmethod
    def required_files(cls, params: Mapping[str, Any]) -> list[str]:
        return [_data_file(task, params) for task in _tasks(params)]

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        tasks = _tasks(values)
        if _sources(values) == "measured":
            options = prompt_arms_options(values.get("arms"), ENVIRONMENT_PARAMS)
            for task in tasks:
                prompt_arms_path(task, values.get("arms"), ENVIRONMENT_PARAMS)
            if options["embedding"] in ENCODERS:
                from ..data.encoder import check_installed

                check_installed(options["embedding"], key_path(ENVIRONMENT_PARAMS, "arms", "embedding"))

    @classmethod
    def utility_range(cls, values: Mapping[str, Any]) -> tuple[float, float]:
        """The metrics are in accuracy units (measured accuracies, or the oracle's predictions clipped to
        ``[0, 1]``): ``[0, 1]``."""
        return 0.0, 1.0

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        return 3 * 8 * horizon  # every round's regret, weak regret and self-duel

    def public_info(self) -> dict[str, Any]:
        return {"dimension": self.arms.shape[1], "n_arms": self.arms.shape[0], "fixed_arms": True}

    def context(self, t: int) -> np.ndarray:
        return self.arms

    def play(self, t: int, action) -> PreferenceFeedback:
        i, j = int(action[0]), int(action[1])
        f = self._utilities
        y = int(self._uniform() < sigmoid_of(f[i] - f[j]))
        self._keep_duel(t, self._accuracy, i, j, self.best)  # regret in accuracy units
        return new_feedback(PreferenceFeedback, (t, y))

    def summary(self) -> dict[str, float]:
        return {
            **super().summary(),
            "task_index": float(self.task_index),
            "score_gap": self.score_gap,
            "flat_task": float(self.flat),
        }
