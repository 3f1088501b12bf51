"""The logistic link ``mu(z) = 1 / (1 + exp(-z))`` of the Bradley–Terry–Luce preference model.

Shared by the environments that draw preferences and the policies that fit them.
"""

import numpy as np

#: the largest slope of the logistic link: ``mu'(z) = mu(z) (1 - mu(z)) <= 1/4``
MU_DOT_MAX = 0.25


def sigmoid(z):
    """``1 / (1 + exp(-z))``, computed as ``(1 + tanh(z / 2)) / 2`` (no overflow for large ``|z|``)."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z)))


def sigmoid_of(z: float) -> float:
    """:func:`sigmoid` of one number, as a Python float with the same bits (the same numpy ``tanh``;
    the multiplications and the addition are the same IEEE operations on Python floats), without
    the three operations on 0-d arrays: the per-round path of the preference environments."""
    return 0.5 * (1.0 + float(np.tanh(0.5 * z)))
