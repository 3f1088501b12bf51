"""Truth values an environment keeps itself (``keeps_truth``), for the reward bandits that log
``regret`` and ``reward``: ``play`` writes round t's into ``_regret[t - 1]`` and ``_reward[t - 1]``."""

from __future__ import annotations

from typing import Any


class KeptRegretReward:
    """Mixin of a ``keeps_truth`` environment with the metrics ``regret`` and ``reward``: :meth:`step`
    and :meth:`truth_log` from the two lists that its ``play`` fills (made by :meth:`_keep_truth`)."""

    keeps_truth = True
    metrics = ("regret", "reward")
    primary_metric = "regret"

    def _keep_truth(self, horizon: int) -> None:
        self._regret, self._reward = [0.0] * horizon, [0.0] * horizon

    def step(self, t: int, action) -> tuple[Any, dict[str, float]]:
        feedback = self.play(t, action)
        return feedback, {"regret": self._regret[t - 1], "reward": self._reward[t - 1]}

    def truth_log(self, horizon: int) -> dict[str, list[float]]:
        return {"regret": self._regret[:horizon], "reward": self._reward[:horizon]}
