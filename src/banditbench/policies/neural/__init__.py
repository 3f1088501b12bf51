"""Neural bandit policies and their shared machinery — the only modules of the package that import torch.

* :mod:`.nets` — the ReLU network on a flat parameter vector, its NTK-style
  initialisation, batched per-arm gradient features (``torch.func``) and
  last-layer features;
* :mod:`.training` — the warm-started trainer of the weighted logistic losses
  and its update schedule;
* :mod:`.parameters` — the network and training parameters every family takes (their types, declared
  once) and :class:`~.parameters.Network`, which builds the network and its trainer from them;
* one module per algorithm family (e.g. :mod:`.delayed_dueling`), the reference implementation;
* :mod:`.batched` — the seed-batched engines (a block of seeds in lockstep, what a simulate job
  runs): one module per family beside the reference of the same name, and :mod:`.batched.ops`,
  the pieces they share.

Confidence matrices are plain numpy: :mod:`banditbench.policies.linalg`.
"""
