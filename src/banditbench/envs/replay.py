"""Replay of logged bandit data (seed 002 App. J.1: the Open Bandit Dataset, random / all campaign).

Each logged event shows the ``K`` candidates of its reduced action set
(:mod:`banditbench.data.open_bandit`: the logged item and the four items of highest affinity)
in an order drawn per event from the environment's stream, so the logged item's slot is
uniform and tells the policy nothing.  Replay acceptance (Li et al. 2011; App. J.1):

* if the policy picks the logged item, the event is *accepted*: the policy gets the
  logged click as its reward and the round is logged;
* otherwise the event is skipped: no feedback (the click of the logged item is never
  revealed for another choice) and the round is not consumed — ``step`` returns
  ``(None, None)`` and the runner shows the next event in the same round.

So round ``t`` is the t-th accepted event, as on the horizontal axis of Figs. 7–9; the
horizon is the number of accepted events (the paper: T = 2,000).  Events are visited in
a random order per seed (``order: shuffle``, our choice; ``log`` keeps the logged order).
A run that uses up the log before the horizon stops with an error that says how many
events were accepted: with the 10,000-event sample and K = 5 about 2,000 are (the logged
item is uniform among the candidates, so any policy accepts about one event in five).

Per round the environment logs ``reward`` (the click of the accepted event); the run's
summary gives ``ctr`` (clicks per accepted event, Table 2's final CTR), ``events_used``
and ``acceptance_rate``.
"""

from __future__ import annotations

from typing import Annotated, Any, Mapping

import numpy as np

from ..api import Environment, register
from ..data.files import load_npz
from ..data.paths import replay_dataset, replay_options, replay_path
from ..errors import ENVIRONMENT_PARAMS, ConfigError, key_path
from ..feedback import RewardFeedback
from ..params import Doc, OneOf

ORDERS = ("shuffle", "log")


@register("obd_replay")
class OBDReplay(Environment):
    """Replay of the Open Bandit Dataset with replay acceptance; a round is an accepted event (seed 002 App. J.1)."""

    feedback_kind = "reward"
    action_kind = "arm"
    metrics = ("reward",)
    primary_metric = "reward"

    @classmethod
    def metric_ranges(cls, values: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
        """A logged click: ``reward`` in ``[0, 1]``."""
        return {"reward": (0.0, 1.0)}

    def __init__(
        self,
        seed_seq: np.random.SeedSequence,
        *,
        horizon: Annotated[int, Doc("the run's rounds T, set from the experiment's ``horizon``.")],
        preprocessing: Annotated[
            Mapping[str, Any] | None,
            Doc(
                "options of :mod:`banditbench.data.open_bandit` (``n_actions``, ``user_dim``, ``item_dim``, "
                "``seed``; defaults filled in) and ``source``: ``sample`` (the 10,000-event sample) or ``full`` "
                "(the full archive, dataset ``obd_full``)."
            ),
        ] = None,
        order: Annotated[
            str,
            OneOf(ORDERS),
            Doc("``shuffle`` (the events in a random order per seed) or ``log`` (the logged order)."),
        ] = "shuffle",
    ):
        self.path = path = replay_path(preprocessing, where=key_path(ENVIRONMENT_PARAMS, "preprocessing"))
        self.dataset = replay_dataset(preprocessing)
        identity = {"dataset": self.dataset, "options": replay_options(preprocessing)}
        arrays, _ = load_npz(path, "prepared replay data", required=("features", "click"), expect=identity)
        self.features, self.click = arrays["features"], arrays["click"]
        self.n_events, self.n_arms, self.d = self.features.shape
        self.horizon = horizon
        rng = np.random.default_rng(seed_seq)
        self.events = rng.permutation(self.n_events) if order == "shuffle" else np.arange(self.n_events)
        self.slots = np.argsort(rng.random((self.n_events, self.n_arms)), axis=1)  # slot j shows candidate slots[j]
        self.used = 0
        self.accepted = 0
        self.clicks = 0
        self._event = -1

    @classmethod
    def required_files(cls, params: Mapping[str, Any]) -> list[str]:
        return [replay_path(params.get("preprocessing"), where=key_path(ENVIRONMENT_PARAMS, "preprocessing"))]

    def public_info(self) -> dict[str, Any]:
        return {"dimension": self.d, "n_arms": self.n_arms}

    def context(self, t: int) -> np.ndarray:
        if self.used == self.n_events:
            raise ConfigError(
                f"horizon: the replay log of dataset {self.dataset!r} ({self.path}) has "
                f"{self.n_events} events and only {self.accepted} were accepted before round {t} of "
                f"horizon {self.horizon}; lower the horizon below the accepted count or replay a "
                f"longer log"
            )
        self._event = int(self.events[self.used])
        self.used += 1
        return self.features[self._event][self.slots[self._event]].astype(np.float64)

    def step(self, t: int, action) -> tuple[RewardFeedback | None, dict[str, float] | None]:
        if self.slots[self._event][int(action)] != 0:  # candidate 0 is the logged item
            return None, None
        click = float(self.click[self._event])
        self.accepted += 1
        self.clicks += int(click)
        return RewardFeedback(t, click), {"reward": click}

    def summary(self) -> dict[str, float]:
        return {
            "ctr": self.clicks / max(self.accepted, 1),
            "events_used": float(self.used),
            "acceptance_rate": self.accepted / max(self.used, 1),
        }
