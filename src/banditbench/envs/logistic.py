r"""Synthetic logistic bandits with nonlinear latent rewards (seed 002 Sec. 7, App. A and J).

Each round shows ``K`` context–arm vectors ``x`` in R^d; playing ``x`` gives the reward
:math:`r \sim \mathrm{Bernoulli}\bigl(\mu(h(x))\bigr)` with :math:`\mu` the logistic function.  Per round the
environment logs

* ``regret``  :math:`\mu(h(x^*)) - \mu(h(x_t))` in probability units (seed 002 Sec. 2), and
* ``reward``  the Bernoulli draw :math:`r_t`.

Latent functions (parameters :math:`\theta \in \mathbb{R}^d` and :math:`\Theta \in \mathbb{R}^{d \times d}` with
entries drawn once per seed from U(-1, 1), Sec. 7):

=========  ==========================================  ===========
``h1``     :math:`0.2\, (x^\top \theta)^4`             Sec. 7
``h2``     :math:`20 \cos(x^\top \theta)`              Sec. 7
``h3``     :math:`5\, x^\top \Theta x`                 Sec. 7
``h4``     :math:`10\, (x^\top \theta)^2`              App. J
``h5``     :math:`x^\top \Theta^\top \Theta x`         App. J
``h6``     :math:`\cos(3\, x^\top \theta)`             App. J
``linear`` :math:`x^\top \theta`                       the linear baselines' own model (tests, benchmarks)
=========  ==========================================  ===========

Context vectors: ``contexts: cube`` (default) draws every component from U(-1, 1), as the
parameters; the paper does not state the distribution, but App. A rescales the real
datasets' features to [-1, 1] "for consistency with the synthetic environment".  (On the
unit sphere, ``contexts: sphere``, seed 002's h1 hardly varies: ``x^T theta`` has standard
deviation about 0.6, so every arm's mean is within a few percent of 1/2.)

Pool of contexts (App. A, "varying effective dimension"): ``n_contexts = N`` draws a
fixed pool of N distinct unit vectors once per seed and fills the rounds' arm sets from
it — consecutive blocks of K indices of a random permutation of the pool, a fresh
permutation after each pass, so every vector appears equally often and the K arms of a
round are distinct (when K does not divide N, the last ``N mod K`` vectors of a pass
are left out of that pass).  The paper uses N = 2,500 for its main figures and 10 / 50 /
10,000 for low / middle / high effective dimension; ``n_contexts: null`` draws fresh
vectors every round.
"""

from __future__ import annotations

from typing import Annotated, Any, Mapping

import numpy as np

from ..api import Environment, register
from ..errors import ENVIRONMENT_PARAMS, ConfigError, key_path
from ..feedback import RewardFeedback, new_feedback
from ..numerics.sigmoid import sigmoid
from ..params import Doc, OneOf, PositiveInt, Range
from .draws import UNIFORM_BLOCK, uniforms
from .reward_metrics import KeptRegretReward

LATENTS = ("h1", "h2", "h3", "h4", "h5", "h6", "linear")
CONTEXTS = ("cube", "sphere")


def latent_reward(name: str, x: np.ndarray, theta: np.ndarray, Theta: np.ndarray) -> np.ndarray:
    """``h(x)`` of every row of ``x`` for the latent function ``name`` (module table)."""
    if name in ("h3", "h5"):
        M = 5.0 * Theta if name == "h3" else Theta.T @ Theta
        return np.einsum("...i,ij,...j->...", x, M, x)
    z = x @ theta
    if name == "linear":
        return z
    if name == "h1":
        return 0.2 * z**4
    if name == "h2":
        return 20.0 * np.cos(z)
    if name == "h4":
        return 10.0 * z**2
    if name == "h6":
        return np.cos(3.0 * z)
    raise ConfigError(f"{key_path(ENVIRONMENT_PARAMS, 'latent')}: {name!r} is not one of {list(LATENTS)}")


def context_vectors(rng: np.random.Generator, n: int, d: int, distribution: str) -> np.ndarray:
    """``cube``: components U(-1, 1); ``sphere``: uniform on the unit sphere (normalised Gaussians)."""
    if distribution == "cube":
        return rng.uniform(-1.0, 1.0, size=(n, d))
    x = rng.standard_normal((n, d))
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@register("synthetic_logistic")
class SyntheticLogistic(KeptRegretReward, Environment):
    """K context–arm vectors per round, Bernoulli rewards with mean ``mu(h(x))`` (seed 002 Sec. 7)."""

    feedback_kind = "reward"
    action_kind = "arm"

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        horizon: Annotated[int, Doc("the run's rounds T, set from the experiment's ``horizon``.")],
        latent: Annotated[
            str,
            OneOf(LATENTS),
            Doc("the latent function ``h``: ``h1`` ... ``h6`` of seed 002 Sec. 7 or ``linear`` (module table)."),
        ] = "h1",
        dimension: Annotated[PositiveInt, Doc("dimension d of the context vectors (Sec. 7: 20).")] = 20,
        n_arms: Annotated[int, Range(ge=2), Doc("context vectors (arms) per round K (Sec. 7: 5).")] = 5,
        contexts: Annotated[
            str,
            OneOf(CONTEXTS),
            Doc("how context vectors are drawn: ``cube`` (components U(-1, 1)) or ``sphere`` (unit vectors)."),
        ] = "cube",
        n_contexts: Annotated[
            PositiveInt | None,
            Doc(
                "size N of the fixed pool the rounds' vectors are drawn from (at least K), or null for fresh "
                "vectors every round."
            ),
        ] = 2500,
    ):
        where = ENVIRONMENT_PARAMS
        if n_contexts is not None and not (isinstance(n_contexts, int) and n_contexts >= n_arms):
            raise ConfigError(f"{where}.n_contexts: need null or an integer >= n_arms = {n_arms}, got {n_contexts!r}")
        self.latent, self.d, self.n_arms = latent, dimension, n_arms
        truth_seq, context_seq, outcome_seq = seed_seq.spawn(3)
        truth = np.random.default_rng(truth_seq)
        self.theta = truth.uniform(-1.0, 1.0, size=dimension)
        self.Theta = truth.uniform(-1.0, 1.0, size=(dimension, dimension))
        ctx = np.random.default_rng(context_seq)
        if n_contexts is None:
            fresh = context_vectors(ctx, horizon * n_arms, dimension, contexts)
            self.arm_sets = fresh.reshape(horizon, n_arms, dimension)
        else:
            pool = context_vectors(ctx, n_contexts, dimension, contexts)
            per_pass = n_contexts // n_arms
            passes = -(-horizon // per_pass)
            order = np.concatenate([ctx.permutation(n_contexts)[: per_pass * n_arms] for _ in range(passes)])
            self.arm_sets = pool[order[: horizon * n_arms].reshape(horizon, n_arms)]
        self.arm_sets.setflags(write=False)
        self.means = sigmoid(latent_reward(latent, self.arm_sets, self.theta, self.Theta))  # (T, K)
        # the per-round path: each round's arms (views), means and best mean as Python objects, the
        # outcomes' uniforms drawn a block of rounds at a time (the same numbers as one draw per round)
        self._round_arms, self._round_means = list(self.arm_sets), self.means.tolist()
        self._best = self.means.max(axis=1).tolist()
        self._uniform = uniforms(np.random.default_rng(outcome_seq)).__next__
        self._keep_truth(horizon)

    @classmethod
    def check_params(cls, values: Mapping[str, Any], horizon: int) -> None:
        if values["n_contexts"] is not None and values["n_contexts"] < values["n_arms"]:
            raise ConfigError(
                f"{key_path(ENVIRONMENT_PARAMS, 'n_contexts')}: need null or an integer >= n_arms = "
                f"{values['n_arms']}, got {values['n_contexts']}"
            )

    @classmethod
    def metric_ranges(cls, values: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
        """A Bernoulli reward and a regret in probability units: both in ``[0, 1]``."""
        return {"regret": (0.0, 1.0), "reward": (0.0, 1.0)}

    @classmethod
    def known_facts(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"dimension": values["dimension"], "n_arms": values["n_arms"]}

    @classmethod
    def memory_bytes(cls, values: Mapping[str, Any], horizon: int) -> int:
        # every round's arms and means (arrays, and the means as a list), its two truth values, a block of uniforms
        return 8 * horizon * (values["n_arms"] * (values["dimension"] + 2) + 2) + 8 * UNIFORM_BLOCK

    def public_info(self) -> dict[str, Any]:
        return {"dimension": self.d, "n_arms": self.n_arms}

    def context(self, t: int) -> np.ndarray:
        return self._round_arms[t - 1]

    def play(self, t: int, action) -> RewardFeedback:
        mean = self._round_means[t - 1][int(action)]
        r = float(self._uniform() < mean)
        self._regret[t - 1], self._reward[t - 1] = self._best[t - 1] - mean, r
        return new_feedback(RewardFeedback, (t, r))
