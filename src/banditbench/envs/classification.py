"""Classification datasets as K-armed contextual bandits (seed 002 Sec. 7, seed 001 App. E.1.2).

Each round shows one row ``x`` in R^d of a prepared dataset (see
:mod:`banditbench.data.preprocess`) as ``K`` arms, one per class, with block
features ``x^(k) = [0, ..., x, ..., 0]`` in R^{dK} (seed 002 Sec. 7).  Only the
round's K x dK arm matrix is built, when the round starts; the public facts
``arm_layout = "block"`` and ``context_dimension = d`` let a policy work with
``x`` itself (arm ``k``'s block ``k`` is ``x``), and a policy that does asks for the
``row`` context form (``Policy.context_form``): its context is then ``x`` alone and
the matrix is not built.

Rows are drawn from the environment's context stream: ``sampling: shuffle``
(default) walks through a random permutation of the dataset and draws a new
one after each pass; ``uniform`` draws rows independently with replacement.

* :class:`ClassificationBandit` — reward feedback.  ``reward: label`` (seed
  002): reward 1 for the correct class, else 0; per-round ``regret = 1 - reward``.
  ``reward: classifier``: Bernoulli rewards with mean ``p(k | x)`` from a fitted
  classifier oracle; ``regret = max_k p(k | x) - p(a | x)`` (expected).
* :class:`ClassificationDueling` — preference feedback between two arms with
  utilities ``u_k`` (seed 001 App. E.1.2), one of four ``preference`` models:

  - ``btl`` (Magic, Covertype): ``P(i > j) = sigmoid(u_i - u_j)`` on class utilities,
    ``utility: label`` giving ``u_k = s 1{k = y}`` (with the default scale ``s = logit(0.7)`` the
    correct class beats any other with probability 0.7, the appendix's "baseline of
    P(i > j) = 0.7") and ``utility: classifier`` giving ``u_k = s p(k | x)``;
  - ``index_order`` (Statlog, the paper's model read literally): "P(i > j) = 1 for i > j. This
    setup ensures the advantage of a higher-indexed arm is realized with certainty" — the arm
    index orders the arms whatever the row; utilities ``u_k = s k / (K - 1)`` (the paper names
    none: ours, so that they lie in [0, s] as the label utilities do); the higher index always
    wins, and a self-duel (i = j) answers 0;
  - ``label``: the correct class always beats a wrong one, and between two wrong classes (or an
    arm and itself) the higher index wins — the project's earlier reading of the same sentence,
    kept to compare (``u_k = s 1{k = y}``);
  - ``label_coin``: as ``label``, but between two arms of equal utility (two wrong classes, or a
    self-duel) a fair coin decides (one coin drawn every round, used or not, so that round t's coin
    is the same whatever the policy plays: the pairing of :mod:`banditbench.configuration.comparisons`).

  Metrics as :mod:`banditbench.envs.preference`: ``regret = 2 u* - u_i - u_j``,
  ``average_regret`` (half of it), ``weak_regret = u* - max(u_i, u_j)`` and ``self_duel``, all
  from the same utilities the preference model uses.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Mapping

import numpy as np

from ..api import Environment, register
from ..data.paths import (
    CLASSIFICATION_DATASETS,
    CLASSIFIER_OPTIONS,
    classifier_oracle_path,
    preprocess_options,
    processed_path,
    resolve,
)
from ..errors import ENVIRONMENT_PARAMS, ConfigError, CorruptFileError, key_path
from ..feedback import PreferenceFeedback, RewardFeedback, new_feedback
from ..numerics.sigmoid import sigmoid_of
from ..params import Doc, OneOf, Positive
from .draws import uniforms
from .reward_metrics import KeptRegretReward
from .preference import DuelingEnvironment, KeptDuelMetrics

SAMPLING = ("shuffle", "uniform")
MODES = ("label", "classifier")
#: the dueling environment's preference models (module docstring); all but ``btl`` are deterministic
#: readings of App. E.1.2's Statlog model, each with the utilities it is defined on
PREFERENCES = ("btl", "index_order", "label", "label_coin")
#: utility gap giving P(correct class beats another) = 0.7 under BTL
LOGIT_07 = math.log(0.7 / 0.3)


def block_arms(x: np.ndarray, n_arms: int) -> np.ndarray:
    """The K x dK matrix whose row k is ``[0, ..., x, ..., 0]`` (x in block k).

    Built in one slice assignment: in a zero buffer of K rows of length ``(K + 1) d``, the
    first d entries of row k lie at flat position ``k (K d + d)``, which is block k of row k
    of the K x dK matrix read from the same buffer.
    """
    d = x.shape[0]
    buffer = np.zeros(n_arms * (n_arms + 1) * d)
    buffer.reshape(n_arms, (n_arms + 1) * d)[:, :d] = x
    return buffer[: n_arms * n_arms * d].reshape(n_arms, n_arms * d)


class _Classification(Environment):
    """Rows, labels, optional oracle probabilities and the row schedule; declares the family's
    shared parameters.  ``mode_key`` names the variant's parameter that picks label-based
    (``label``) or oracle-based (``classifier``) outcomes; the variant passes its value first."""

    mode_key: str
    context_forms = ("row",)

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        mode: str,
        /,
        *,
        horizon: Annotated[int, Doc("the run's rounds T, set from the experiment's ``horizon``.")],
        dataset: Annotated[
            str,
            OneOf(CLASSIFICATION_DATASETS),
            Doc(
                "the prepared classification dataset (mnist, digits, mushroom, car, shuttle, magic, banknote, "
                "covertype): its rows are the contexts, its classes the arms."
            ),
        ],
        preprocessing: Annotated[
            Mapping[str, Any] | None, Doc("options of :mod:`banditbench.data.preprocess` (defaults filled in).")
        ] = None,
        sampling: Annotated[
            str,
            OneOf(SAMPLING),
            Doc("row order: ``shuffle`` (a fresh permutation per pass) or ``uniform`` (rows drawn with replacement)."),
        ] = "shuffle",
        oracle: Annotated[
            Mapping[str, Any] | None,
            Doc("options of the classifier oracle that gives ``p(k | x)`` (only with ``classifier`` outcomes)."),
        ] = None,
    ):
        from ..data.files import load_npz, rebuild_advice
        from ..data.preprocess import load_prepared

        options = preprocess_options(dataset, preprocessing, ENVIRONMENT_PARAMS)
        prepared = load_prepared(processed_path(dataset, options), dataset, options)
        self.X, self.y = prepared.X, prepared.y  # float32 rows; a round's arms are float64
        self.n_arms, self.d = prepared.n_classes, prepared.X.shape[1]
        self.probs = None
        if mode == "classifier":
            path = classifier_oracle_path(dataset, preprocessing, oracle, ENVIRONMENT_PARAMS)
            identity = {
                "dataset": dataset,
                "preprocessing": options,
                "options": resolve(CLASSIFIER_OPTIONS, oracle, key_path(ENVIRONMENT_PARAMS, "oracle")),
            }
            arrays, _ = load_npz(path, "classifier oracle", required=("probabilities",), expect=identity)
            self.probs = arrays["probabilities"].astype(np.float64)
            if self.probs.shape != (len(self.y), self.n_arms):
                raise CorruptFileError(
                    f"{path}: oracle probabilities have shape {self.probs.shape}, expected "
                    f"{(len(self.y), self.n_arms)}; {rebuild_advice(path, 'classifier oracle')}"
                )
        context_seq, outcome_seq = seed_seq.spawn(2)
        ctx = np.random.default_rng(context_seq)
        n = len(self.y)
        if sampling == "uniform":
            self.rows = ctx.integers(0, n, size=horizon)
        else:
            passes = -(-horizon // n)
            self.rows = np.concatenate([ctx.permutation(n) for _ in range(passes)])[:horizon]
        self._uniform = uniforms(np.random.default_rng(outcome_seq)).__next__  # the outcomes' uniforms
        self._row = 0
        self._round_rows, self._labels = self.rows.tolist(), self.y.tolist()  # Python ints for the per-round path

    @classmethod
    def required_files(cls, params: Mapping[str, Any]) -> list[str]:
        if "dataset" not in params:
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'dataset')}: required (a prepared classification dataset)"
            )
        dataset, prep = params["dataset"], params.get("preprocessing")
        files = [processed_path(dataset, prep, ENVIRONMENT_PARAMS)]
        if params.get(cls.mode_key, "label") == "classifier":
            files.append(classifier_oracle_path(dataset, prep, params.get("oracle"), ENVIRONMENT_PARAMS))
        return files

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        return 2 * 8 * horizon  # the row of every round (an array and a list)

    def public_info(self) -> dict[str, Any]:
        return {
            "dimension": self.n_arms * self.d,
            "n_arms": self.n_arms,
            "context_dimension": self.d,
            "arm_layout": "block",
        }

    def context(self, t: int) -> np.ndarray:
        self._row = row = self._round_rows[t - 1]
        return block_arms(self.X[row], self.n_arms)

    def context_row(self, t: int) -> np.ndarray:
        """The ``row`` context form: the round's row ``x`` (float64, length d) that every arm's block holds."""
        self._row = row = self._round_rows[t - 1]
        return self.X[row].astype(np.float64)

    def use_context_form(self, form: str) -> None:
        if form != "row":
            super().use_context_form(form)
        self.context = self.context_row


@register("classification_bandit")
class ClassificationBandit(KeptRegretReward, _Classification):
    """K-armed contextual bandit from a classification dataset; reward 1 for the correct class (seed 002 Sec. 7)."""

    feedback_kind = "reward"
    action_kind = "arm"
    mode_key = "reward"

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        reward: Annotated[
            str,
            OneOf(MODES),
            Doc(
                "``label``: reward 1 for the correct class, else 0; ``classifier``: a Bernoulli reward with the "
                "oracle's ``p(k | x)``."
            ),
        ] = "label",
        **shared,
    ):
        super().__init__(seed_seq, reward, **shared)
        self._keep_truth(len(self.rows))

    @classmethod
    def metric_ranges(cls, values: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
        """A reward of 0 or 1 and a regret in probability units: both in ``[0, 1]``."""
        return {"regret": (0.0, 1.0), "reward": (0.0, 1.0)}

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        return super().memory_bytes(values, horizon) + 2 * 8 * horizon  # and its regret and reward

    def play(self, t: int, action) -> RewardFeedback:
        a = int(action)
        if self.probs is None:
            r = float(a == self._labels[self._row])
            regret = 1.0 - r
        else:
            p = self.probs[self._row]
            r = float(self._uniform() < p[a])
            regret = float(p.max() - p[a])
        self._regret[t - 1], self._reward[t - 1] = regret, r
        return new_feedback(RewardFeedback, (t, r))


@register("classification_dueling")
class ClassificationDueling(KeptDuelMetrics, DuelingEnvironment, _Classification):
    """Contextual dueling bandit from a classification dataset (seed 001 App. E.1.2).

    Block arm features; BTL preferences on class utilities, or one of three deterministic readings of
    the Statlog model "P(i > j) = 1 for i > j" (module docstring).
    """

    mode_key = "utility"

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        utility: Annotated[
            str,
            OneOf(MODES),
            Doc(
                "the class utilities of ``preference: btl``: ``label`` (``u_k = s 1{k = y}``) or ``classifier`` "
                "(``u_k = s p(k | x)``); the deterministic readings define their own."
            ),
        ] = "label",
        utility_scale: Annotated[
            Positive, Doc("``s``; the default logit(0.7) makes the correct class win 70% of its BTL duels.")
        ] = LOGIT_07,
        preference: Annotated[
            str,
            OneOf(PREFERENCES),
            Doc(
                "``btl`` (sigmoid of the utility difference); ``index_order`` (the higher arm index always wins: "
                "App. E.1.2 read literally); ``label`` (the correct class always wins, ties to the higher index); "
                "``label_coin`` (likewise, ties by a fair coin)."
            ),
        ] = "btl",
        **shared,
    ):
        self.check_preference(preference, utility)
        super().__init__(seed_seq, utility, **shared)
        self.scale, self.preference = float(utility_scale), preference
        self._index_utilities = (self.scale * np.arange(self.n_arms) / max(self.n_arms - 1, 1)).tolist()
        self._keep_truth(len(self.rows))

    @classmethod
    def utility_range(cls, values: Mapping[str, Any]) -> tuple[float, float]:
        """Every preference model's utilities lie in ``[0, s]`` (``s = utility_scale``)."""
        return 0.0, float(values["utility_scale"])

    @staticmethod
    def check_preference(preference: str, utility: str) -> None:
        """Class utilities only where the preference model uses them (``btl``)."""
        if preference != "btl" and utility == "classifier":
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'utility')}: 'classifier' utilities are for "
                f"preference: btl; preference: {preference} defines its own utilities "
                f"({'by arm index' if preference == 'index_order' else 'from the label'})"
            )

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        cls.check_preference(values["preference"], values["utility"])

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        return super().memory_bytes(values, horizon) + 3 * 8 * horizon  # and its regret, weak regret, self-duels

    def utilities(self) -> np.ndarray:
        """Utilities of the current round's K arms."""
        if self.preference == "index_order":
            return np.array(self._index_utilities)
        if self.probs is None:
            u = np.zeros(self.n_arms)
            u[self.y[self._row]] = self.scale
            return u
        return self.scale * self.probs[self._row]

    def play(self, t: int, action) -> PreferenceFeedback:
        i, j = int(action[0]), int(action[1])
        preference = self.preference
        if preference == "index_order":
            f = self._index_utilities
            y = int(i > j)
        else:
            f = self.utilities().tolist()  # Python floats: the round's arithmetic without numpy scalars
            if preference == "btl":
                y = int(self._uniform() < sigmoid_of(f[i] - f[j]))
            elif preference == "label":
                y = int(f[i] > f[j] or (f[i] == f[j] and i > j))
            else:  # label_coin: a coin every round (the same for every policy), used on equal utilities
                coin = self._uniform()
                y = int(f[i] > f[j]) if f[i] != f[j] else int(coin < 0.5)
        self._keep_duel(t, f, i, j, max(f))
        return new_feedback(PreferenceFeedback, (t, y))
