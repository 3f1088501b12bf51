"""The NDB family's parameters whose value the NDB authors' code sets differently from ours, and its presets.

The public code of NDB's authors' group is ``xqlin98/APOHF`` (:data:`AUTHORS_COMMIT`):
``Induction/experiments/LlamaForMLPRegression.py`` (:data:`AUTHORS_FILE`), class ``NeuralDBDiag``, run by the
scripts ``Induction/experiments/run_dbandits_{po,response,image_gen}.{py,sh}``.  Every behaviour of that code
that differs from ours is a parameter of the family (:mod:`.delayed_dueling`, :mod:`.neural_dueling`) that takes
``auto`` by default: the value of the policy's ``preset``, ``ours`` (the project's defaults, the behaviour before
the presets existed) or ``authors`` (:data:`PRESETS`: the code's value; a config's value wins, as for the linear
baselines, :mod:`banditbench.policies.presets`).  Each parameter's description names the file and line of the
authors' value; "line N" alone is a line of :data:`AUTHORS_FILE`.  The code's settings the scripts pass are those of
all three shell scripts (``--nu 1 --lamdba 0.1 --n_init 5``); the training steps are the class's own default (30,
``train``'s ``local_training_iter``, line 413), not the scripts' 1000, which makes a run of seed 001's grid cost
hours per seed (docs/baselines.md).

Departures that remain under ``preset: authors`` (docs/baselines.md): the CPU (the code: ``cuda:0``, lines 11-14;
the network float32 in both, ``precision``'s default, with our confidence side in float64); each seed draws its own initial network (the code seeds torch with 0 in the
constructor, line 289, so every run starts from one network); the arms' order among exact ties (``argsort``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Mapping

from ...params import Doc, NonNegativeInt, OneOf, Positive
from ..presets import AUTO, PRESETS, resolve
from . import parameters
from .nets import INITS, OUTPUT_SCALES

#: the commit of ``xqlin98/APOHF`` whose files and lines the ``authors`` values cite (the file
#: :data:`AUTHORS_FILE` is unchanged since the repository's first commit of code, 1083ef3, 2024-06-17)
AUTHORS_COMMIT = "26eea14b1f89efc1b6d61bed8d154f44fa236b79"
AUTHORS_FILE = "Induction/experiments/LlamaForMLPRegression.py"
#: the weight decay ``lam / (n + DECAY_OFFSET)`` of the authors' training (line 421)
DECAY_OFFSET = 50

CONFIDENCES = ("full", "diagonal")
REGULARISER_SCALES = ("width", "one", "decaying")
RETRAINS = ("warm", "reinit")
GRADIENT_POINTS = ("init", "current")
BONUS_FACTORS = ("nu_sqrt_reg", "sqrt_nu")

Preset = Annotated[
    str,
    OneOf(PRESETS),
    Doc(
        "which value each ``auto`` parameter takes: ``ours`` (the project's defaults) or ``authors`` (the NDB "
        "authors' public code, xqlin98/APOHF at 26eea14, ``LlamaForMLPRegression.py``'s ``NeuralDBDiag`` as its "
        "scripts run it; each parameter names its file and line).  A parameter the config sets keeps its value."
    ),
]
Depth = Annotated[
    parameters.Depth | Literal["auto"],
    Doc(
        "number of layers ``L`` of the network; ``auto``: 2 (``ours``), 3 (``authors``: two hidden layers of 32, "
        "``Network(input_dim)`` with ``depth=2``, lines 257-265)."
    ),
]
Init = Annotated[
    str,
    OneOf((*INITS, AUTO)),
    Doc(
        "initialisation of ``theta_0`` (:mod:`banditbench.policies.neural.nets`); ``auto``: ``symmetric`` "
        "(``ours``: ``h(x; theta_0) = 0``, NTK), ``normal`` (``authors``: every weight and bias N(0, 1), lines "
        "268-271)."
    ),
]
Lam = Annotated[
    Positive | Literal["auto"],
    Doc(
        "regularisation of the loss of eq. 7 and ``V_0 = (lam / kappa_mu) I`` (eq. 8); ``auto``: 1 (``ours``), 0.1 "
        "(``authors``: ``--lamdba 0.1`` in ``run_dbandits_po.sh`` line 8 and the two other scripts)."
    ),
]
KappaMu = Annotated[
    Positive | Literal["auto"],
    Doc(
        "lower bound on the link derivative (Assumption A2), as in the linear family; ``auto``: 0.1 (``ours``), 1 "
        "(``authors``: the code has none, ``U_0 = lam I``, line 358)."
    ),
]
LearningRate = Annotated[
    parameters.LearningRate | Literal["auto"],
    Doc(
        "Adam's learning rate (:mod:`banditbench.policies.neural.training`); ``auto``: 0.01 (``ours``), 0.001 "
        "(``authors``: line 421)."
    ),
]
TrainSteps = Annotated[
    parameters.TrainSteps | Literal["auto"],
    Doc(
        "full-batch Adam steps of each training on the loss of eq. 7; ``auto``: 10 (``ours``), 30 (``authors``: "
        "``train``'s ``local_training_iter=30``, line 413; the scripts pass 1000, ``run_dbandits_po.sh`` line 12)."
    ),
]
Confidence = Annotated[
    str,
    OneOf((*CONFIDENCES, AUTO)),
    Doc(
        "``full`` keeps ``V^-1`` exactly (Sherman-Morrison, p x p memory); ``diagonal`` keeps V's diagonal; "
        "``auto``: ``full`` (``ours``), ``diagonal`` (``authors``: ``U.diagonal()``, line 359, whatever the "
        "``diagonalize`` the scripts pass, which ``select`` does not read)."
    ),
]
RegulariserScale = Annotated[
    str,
    OneOf((*REGULARISER_SCALES, AUTO)),
    Doc(
        "the ridge of eq. 7, ``(r / 2) ||theta - c||^2``: ``width`` ``r = m lam`` (the NTK analogue of LDB-DF's "
        "ridge), ``one`` ``r = lam`` (eq. 7 literally), ``decaying`` ``r = lam / (n + 50)`` with n the pairs "
        "trained on; ``auto``: ``width`` (``ours``), ``decaying`` (``authors``: Adam's ``weight_decay = "
        "lamdba / (len + 50)``, line 421, the gradient of ``(r / 2) ||theta||^2``)."
    ),
]
RegulariserCentre = Annotated[
    str,
    OneOf(("init", "zero", AUTO)),
    Doc(
        "the ridge's centre ``c``: ``init`` (``theta_0``, eq. 7) or ``zero``; ``auto``: ``init`` (``ours``), "
        "``zero`` (``authors``: Adam's weight decay pulls towards 0, line 421)."
    ),
]
LossReduction = Annotated[
    str,
    OneOf(("sum", "mean", AUTO)),
    Doc(
        "eq. 7's cross-entropy summed over the pairs trained on, or their ``mean``; ``auto``: ``sum`` (``ours``), "
        "``mean`` (``authors``: ``F.binary_cross_entropy_with_logits``, line 433)."
    ),
]
Retrain = Annotated[
    str,
    OneOf((*RETRAINS, AUTO)),
    Doc(
        "``warm``: each training starts from the last parameters and keeps Adam's moments; ``reinit``: from "
        "``theta_0`` with a fresh Adam every time; ``auto``: ``warm`` (``ours``), ``reinit`` (``authors``: "
        "``load_state_dict`` of the initial network, lines 414-415, and a new optimiser, line 421, every round)."
    ),
]
WarmupPairs = Annotated[
    NonNegativeInt | Literal["auto"],
    Doc(
        "rounds of uniformly random pairs of two different arms before the network chooses (and is first "
        "trained); ``auto``: 0 (``ours``), 5 (``authors``: ``--n_init 5``, ``run_dbandits_po.sh`` line 9; the "
        "pairs drawn without replacement, ``run_dbandits_po.py`` lines 334-343)."
    ),
]
Biases = Annotated[
    bool | Literal["auto"],
    Doc(
        "a bias in every layer (:mod:`banditbench.policies.neural.nets`); ``auto``: false (``ours``: seed 000's "
        "network has none), true (``authors``: ``nn.Linear`` layers, lines 262-265)."
    ),
]
OutputScale = Annotated[
    str,
    OneOf((*OUTPUT_SCALES, AUTO)),
    Doc(
        "``sqrt_width`` multiplies the output by ``sqrt(m)`` (NTK; the features of eq. 12 are then ``g / "
        "sqrt(m)``), ``one`` does not (features ``g``); ``auto``: ``sqrt_width`` (``ours``), ``one`` (``authors``: "
        "line 282)."
    ),
]
GradientAt = Annotated[
    str,
    OneOf((*GRADIENT_POINTS, AUTO)),
    Doc(
        "where the gradient features of eq. 12 are taken: ``init`` (``theta_0``, V updated once per pair) or "
        "``current`` (the trained ``theta_t``, V rebuilt every round from all pairs played); ``auto``: ``init`` "
        "(``ours``), ``current`` (``authors``: the trained network's per-arm gradients, lines 319-333, and U from "
        "the history's pairs at them, lines 353-358)."
    ),
]
BonusFactor = Annotated[
    str,
    OneOf((*BONUS_FACTORS, AUTO)),
    Doc(
        "the factor of the width ``||phi - phi_1||_{V^-1}`` in the second arm's score: ``nu_sqrt_reg`` ``nu "
        "sqrt(lam / kappa_mu)`` (eq. 12) or ``sqrt_nu``; ``auto``: ``nu_sqrt_reg`` (``ours``), ``sqrt_nu`` "
        "(``authors``: ``sqrt(sum(nu * f * f / U))``, line 363)."
    ),
]
DistinctArms = Annotated[
    bool | Literal["auto"],
    Doc(
        "true: the second arm is the best of the arms other than the first (no self-duel); ``auto``: false "
        "(``ours``: eq. 10's arg-max over all arms), true (``authors``: the best UCB arm unless it is the first, "
        "then the next, lines 365-383)."
    ),
]

#: each ``auto`` parameter's (ours, authors) values (:func:`banditbench.policies.presets.resolve`)
NDB_PRESETS: Mapping[str, tuple[Any, Any]] = {
    "depth": (2, 3),
    "init": ("symmetric", "normal"),
    "lam": (1.0, 0.1),
    "kappa_mu": (0.1, 1.0),
    "lr": (0.01, 0.001),
    "train_steps": (10, 30),
    "confidence": ("full", "diagonal"),
    "regulariser_scale": ("width", "decaying"),
    "regulariser_centre": ("init", "zero"),
    "loss_reduction": ("sum", "mean"),
    "retrain": ("warm", "reinit"),
    "warmup_pairs": (0, 5),
    "biases": (False, True),
    "output_scale": ("sqrt_width", "one"),
    "gradient_at": ("init", "current"),
    "bonus_factor": ("nu_sqrt_reg", "sqrt_nu"),
    "distinct_arms": (False, True),
}


def resolved(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` (a policy's parameters) with every ``auto`` of :data:`NDB_PRESETS` set by the ``preset``."""
    return resolve(values, NDB_PRESETS, {})
