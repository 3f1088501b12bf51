"""The logistic link ``mu(z) = 1 / (1 + exp(-z))`` of the Bradley–Terry–Luce preference model.

Shared by the environments that draw preferences and the policies that fit them.
"""

import numpy as np


def sigmoid(z):
    """``1 / (1 + exp(-z))``, computed as ``(1 + tanh(z / 2)) / 2`` (no overflow for large ``|z|``)."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z)))
