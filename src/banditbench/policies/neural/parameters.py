"""The network and training parameters every neural family takes, declared once: their types and :class:`Network`.

``width``, ``depth``, ``init``, ``lr``, ``train_steps``, ``train_every``, ``device`` (and ``precision``, where a family
takes it) are config keys of each
family with the family's own defaults and words (its paper's values and sections), so each family module
declares them as these types with its own :class:`~banditbench.params.Doc` (a nested ``Annotated`` flattens:
``Annotated[parameters.Width, Doc(...)]`` checks and describes as ``Annotated[int, Range(ge=2), Doc(...)]``),
beside its other parameters, and its constructor lists them with their defaults.  The constructor hands them
to :class:`Network`, which checks the device and builds the network (:class:`~.nets.MLP`) and its trainer
(:class:`~.training.Trainer`); ``check_params`` calls :meth:`Network.check`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Mapping

import torch

from ...errors import POLICY_PARAMS
from ...params import Doc, OneOf, Positive, PositiveInt, Range
from .batched.ops import DEVICES, check_device
from .nets import INITS, MLP, check_network, configure_torch
from .training import Trainer

#: the hidden width ``m`` (even for the paired initialisations: :meth:`Network.check`)
Width = Annotated[int, Range(ge=2)]
#: the number of weight matrices ``L``
Depth = Annotated[int, Range(ge=2)]
#: the initialisation of ``theta_0`` (:mod:`.nets`)
Init = Annotated[str, OneOf(INITS)]
#: the optimiser's step size
LearningRate = Positive
#: optimiser steps per training
TrainSteps = PositiveInt
#: the training schedule: every this many rounds, or at rounds 2, 4, 8, ... (:meth:`.training.Trainer.due`)
TrainEvery = PositiveInt | Literal["doubling"]
#: where the seed-batched path keeps its tensors
Device = Annotated[str, OneOf(DEVICES)]
#: the network's floating-point types (a family's ``precision``): its parameters, training and outputs; what a
#: policy accumulates beside it (``V^{-1}``, Gram and confidence matrices, sums) stays float64
PRECISIONS = {"float32": torch.float32, "float64": torch.float64}
#: the network's precision (:data:`PRECISIONS`)
Precision = Annotated[str, OneOf(tuple(PRECISIONS))]
#: :data:`Device` where the seed-batched path is what a simulate job runs (NDB-DF's and NVLDB's words)
SeedBatchedDevice = Annotated[
    Device,
    Doc(
        "where the seed-batched path (what a simulate job runs) keeps its tensors, ``cpu`` or ``cuda``; "
        "the single-seed reference path always runs on the CPU."
    ),
]


@dataclass(frozen=True)
class Network:
    """A family's network and training parameters; the device is checked when it is made (torch must see a GPU
    for ``cuda``).  The single-seed path builds and trains on the CPU; ``device`` is the seed-batched path's."""

    width: int
    depth: int
    init: str
    lr: float
    train_steps: int
    train_every: int | str
    device: str

    def __post_init__(self) -> None:
        check_device(self.device, POLICY_PARAMS)

    @staticmethod
    def check(values: Mapping[str, Any], output_relu: bool = False) -> None:
        """Before any job (``check_params``): the relations :class:`~.nets.MLP` requires of ``width`` and ``init``,
        and the device."""
        check_network(values, output_relu)
        check_device(values["device"], POLICY_PARAMS)

    def mlp(self, input_dim: int, generator: torch.Generator, **options: Any) -> MLP:
        """The network on ``input_dim`` inputs, ``theta_0`` drawn from ``generator``; torch set up for identical
        bytes first (:func:`~.nets.configure_torch`).  ``options``: :class:`~.nets.MLP`'s outputs and dtype."""
        configure_torch()
        return MLP(input_dim, self.width, self.depth, self.init, generator, POLICY_PARAMS, **options)

    def trainer(self, theta0: torch.Tensor, lam: float, **options: Any) -> Trainer:
        """The warm-started trainer from ``theta0`` with regularisation weight ``lam`` (``(lam / 2) ||theta - c||^2``),
        ``lr``, ``train_steps`` and ``train_every``.  ``options``: the :class:`~.training.Trainer`'s others."""
        return Trainer(
            theta0,
            lam=lam,
            lr=self.lr,
            steps=self.train_steps,
            every=self.train_every,
            where=POLICY_PARAMS,
            **options,
        )
