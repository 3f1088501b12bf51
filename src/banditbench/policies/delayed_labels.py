"""Training sets for dueling models under delayed, censored feedback (seed 000 Sec. 3), model-agnostic.

:class:`DuelHistory` records every played pair at play time and each outcome
when (if) it arrives.  A delay strategy turns that history into the rows and
labels ``a_s`` of the loss ``sum_s [softplus(z_s) - a_s z_s]`` that both the
linear MLE (eq. 3) and the neural loss (eq. 7) minimise, where ``z_s`` is the
model's predicted preference difference of round ``s``:

* ``ipw``       (LDB-DF / NDB-DF, eqs. 2, 3, 7): every played round, label
  ``omega_{s,t} y_s`` with ``omega_{s,t} = 1{D_s <= min(M, t - s)} / rho`` —
  pending and censored rounds enter with label 0, arrived ones with ``y_s / rho``.
* ``zero``      (Sec. 3.1, eq. 1): the same rows with ``rho`` replaced by 1, i.e.
  the naive label ``y'_s = y_s 1{D_s <= M}`` that treats missing feedback as a
  zero; its labels average ``rho mu(Delta f)`` instead of ``mu(Delta f)``.
* ``ignore``    (Sec. 5.2): only the rounds whose feedback has arrived, label ``y_s``.
* ``heuristic`` (Sec. 5.2, "hallucination", Verma et al. 2022): arrived rounds
  with ``y_s``; rounds still pending with the current model's predicted
  probability ``mu(z_s)`` as a soft label.  A round whose feedback can no longer
  arrive is dropped, not imputed: the window ``M`` is known to the policy and
  feedback of round ``s`` arrives by round ``s + max(M, 1)`` or never, so at
  round ``t >= s + max(M, 1)`` a missing outcome is known to be censored.
* ``heuristic_all`` (the other reading of Sec. 5.2): every played round whose
  outcome has not arrived is imputed with ``mu(z_s)``, the rounds known to be
  censored included — the model keeps training on its own predictions for
  outcomes that will never come (the "self-reinforcing" hallucination Sec. 5.3
  describes).  Without a window, or before ``s + max(M, 1)``, the two readings
  impute the same rounds.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..errors import ConfigError
from ..feedback import PreferenceFeedback

STRATEGIES = ("ipw", "zero", "ignore", "heuristic", "heuristic_all")


class DuelHistory:
    """Outcomes of the rounds played so far; row ``s - 1`` belongs to round ``s`` (one duel per round)."""

    def __init__(self, horizon: int, rho: float, window: int | None):
        if not 0.0 < rho <= 1.0:
            raise ConfigError(f"delay: the observation probability rho = P(D <= M) must lie in (0, 1], got {rho}")
        self.rho, self.window = float(rho), window
        self.y = np.zeros(horizon)
        self.arrived = np.zeros(horizon, dtype=bool)
        self.n_played = 0

    def record_play(self) -> int:
        """Count one more played round; return its row."""
        self.n_played += 1
        return self.n_played - 1

    def observe(self, arrived: Sequence[PreferenceFeedback]) -> None:
        for fb in arrived:
            self.y[fb.round - 1] = fb.y
            self.arrived[fb.round - 1] = True

    def pending(self, t: int) -> np.ndarray:
        """Rows played before round ``t`` whose feedback has not arrived but still may."""
        n = self.n_played
        waiting = ~self.arrived[:n]
        if self.window is not None:
            played_round = np.arange(1, n + 1)
            waiting &= t - played_round < max(self.window, 1)
        return waiting

    def training_set(
        self, strategy: str, t: int, predict: Callable[[np.ndarray], np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows (indices into the played rounds) and labels of the loss minimised at round ``t``.

        ``predict(rows)`` returns the current model's preference probabilities of
        those rows; only the ``heuristic`` strategies call it.
        """
        n = self.n_played
        everything = np.arange(n)
        if strategy == "ipw":
            return everything, np.where(self.arrived[:n], self.y[:n] / self.rho, 0.0)
        if strategy == "zero":
            return everything, np.where(self.arrived[:n], self.y[:n], 0.0)
        if strategy == "ignore":
            rows = np.flatnonzero(self.arrived[:n])
            return rows, self.y[rows]
        if strategy in ("heuristic", "heuristic_all"):
            missing = self.pending(t) if strategy == "heuristic" else ~self.arrived[:n]
            rows = np.flatnonzero(self.arrived[:n] | missing)
            labels = self.y[rows].copy()
            imputed = missing[rows]
            if imputed.any():
                labels[imputed] = predict(rows[imputed])
            return rows, labels
        raise ValueError(f"unknown delay strategy {strategy!r}; known: {list(STRATEGIES)}")
