"""What produced a result: code commit, package versions, Python, CPU, BLAS kernel, threads, host.

Every result file holds a ``provenance`` member (:func:`collect`, written by
:func:`banditbench.storage.resultio.save_result`), outside the members that are byte-identical
for the same config and seed: the host name or a dirty tree differ between two runs
that give the same numbers, and the BLAS kernel or a package version can explain two
runs that do not (docs/reliability.md, "Reproducibility").

The code commit comes from the Snakemake process that planned the jobs
(``BANDITBENCH_COMMIT`` and ``BANDITBENCH_DIRTY``, :func:`git_environment`, passed to
cluster jobs too, which may run where there is no checkout); a job started by hand
asks git about the checkout its ``banditbench`` was imported from, if it is one.
Everything a process finds once (commit, versions, CPU) is found once; the BLAS
libraries in use are looked up again only when another numeric library was imported.

:func:`summarize` counts many results' provenance per commit, host, CPU, BLAS kernel,
Python and package version (:func:`banditbench.storage.resultio.summarize_files` reads it from result files), and :meth:`Summary.warnings` flags a grid whose results
are mixed: more than one commit, host, CPU model, BLAS kernel or package version, or a
dirty tree.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from .. import __version__
from .fingerprint import fingerprint

COMMIT_VAR, DIRTY_VAR = "BANDITBENCH_COMMIT", "BANDITBENCH_DIRTY"
#: the run a pipeline job works for (banditbench.configuration.runs), recorded as ``run``
RUN_VAR = "BANDITBENCH_RUN"
UNKNOWN = "unknown"
#: distributions whose versions every result records (banditbench's own comes from the package)
PACKAGES = ("numpy", "scipy", "torch", "numba", "snakemake")
#: the environment variables that set the numeric libraries' thread counts
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: imported modules that can load another BLAS or OpenMP library (the BLAS look-up is redone when one is)
_NUMERIC_MODULES = ("numpy", "scipy", "torch", "numba", "sklearn")

_static: dict[str, Any] | None = None
_dynamic: dict[tuple, dict[str, Any]] = {}


#: the folders of a checkout holding code that runs: an untracked file there makes the tree dirty
CODE_FOLDERS = ("src", "workflow")


def git_state(root: str | os.PathLike, outputs: tuple[str, ...] = ()) -> dict[str, Any]:
    """``{"commit": ..., "dirty": ...}`` of the git checkout whose top folder is ``root``.

    ``dirty`` is whether a tracked file differs from the commit, or an untracked file (not ignored) lies
    among the code (:data:`CODE_FOLDERS`: a new algorithm file not yet added is code the commit does not
    name); files under ``outputs`` (folders relative to ``root``, e.g. ``docs/runs/`` for the claims runs that
    write there) are what the caller writes, not what made it, and do not count.  A folder that is not the top of a checkout (a copy, an installed
    package inside some other repository), or no ``git``, gives ``"unknown"`` and ``None``.
    """
    root = Path(root).resolve()
    try:
        found = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel", "HEAD"], capture_output=True, text=True, timeout=30
        )
        top, commit = found.stdout.split()
        if found.returncode != 0 or Path(top).resolve() != root:
            raise ValueError(top)
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if status.returncode != 0:
            raise ValueError(status.stderr)
    except (OSError, ValueError, subprocess.SubprocessError):
        return {"commit": UNKNOWN, "dirty": None}
    changed = [
        line
        for line in status.stdout.splitlines()
        if (not line.startswith("??") or line[3:].startswith(tuple(f"{folder}/" for folder in CODE_FOLDERS)))
        and not line[3:].startswith(outputs)
    ]
    return {"commit": commit, "dirty": bool(changed)}


def git_environment(root: str | os.PathLike) -> dict[str, str]:
    """The environment variables that hand ``root``'s git state to jobs (what the Snakefile sets)."""
    state = git_state(root)
    dirty = UNKNOWN if state["dirty"] is None else str(int(state["dirty"]))
    return {COMMIT_VAR: state["commit"], DIRTY_VAR: dirty}


def source_checkout() -> Path | None:
    """The checkout this ``banditbench`` was imported from (``<root>/src/banditbench``), if it is one."""
    package = Path(__file__).resolve().parents[1]
    root = package.parents[1]
    if package.parent.name == "src" and (root / ".git").exists() and (root / "pyproject.toml").is_file():
        return root
    return None


def _commit() -> dict[str, Any]:
    if COMMIT_VAR in os.environ:  # from the Snakemake process that planned the job
        dirty = os.environ.get(DIRTY_VAR, UNKNOWN)
        return {
            "commit": os.environ[COMMIT_VAR] or UNKNOWN,
            "dirty": {"1": True, "0": False}.get(dirty),
            "commit_from": "snakemake",
        }
    root = source_checkout()
    if root is None:
        return {"commit": UNKNOWN, "dirty": None, "commit_from": "none"}
    return {**git_state(root), "commit_from": "checkout"}


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what :mod:`platform` says)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Processor") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or UNKNOWN


def _installed_versions() -> dict[str, str]:
    """name -> version of the ``<name>-<version>.dist-info`` folders on the import path, the first
    found of each name (as the import system finds them): one folder listing per path entry, where
    ``importlib.metadata`` costs a job tens of milliseconds."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for item in names:
            if item.endswith(".dist-info") and "-" in item:
                dist, _, version = item[: -len(".dist-info")].partition("-")
                found.setdefault(dist.lower().replace("-", "_").replace(".", "_"), version)
    return found


def _version(name: str, installed: Mapping[str, str]) -> str | None:
    """The version of distribution ``name``: the imported module's ``__version__``, else its dist-info."""
    version = getattr(sys.modules.get(name), "__version__", None)
    if isinstance(version, str):
        return version
    if name.lower().replace("-", "_") in installed:
        return installed[name.lower().replace("-", "_")]
    from importlib import metadata  # (an egg-info, a zip)

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _static_part() -> dict[str, Any]:
    global _static
    if _static is None:
        uname = os.uname() if hasattr(os, "uname") else None
        installed = _installed_versions()
        _static = {
            **_commit(),
            # the code itself, where the commit is unknown or the tree dirty (banditbench.storage.fingerprint)
            "code": fingerprint(),
            "host": socket.gethostname(),
            "cpu": cpu_model(),
            "machine": platform.machine(),
            "os": f"{uname.sysname} {uname.release}" if uname else platform.system(),
            "python": platform.python_version(),
            "packages": {"banditbench": __version__, **{name: _version(name, installed) for name in PACKAGES}},
        }
    return _static


def blas_info() -> list[dict[str, Any]]:
    """The BLAS and OpenMP libraries loaded in this process (``threadpoolctl.threadpool_info``):
    ``user_api``, ``internal_api``, ``version``, ``num_threads``, and the kernel
    (``architecture`` for OpenBLAS, ``corretype`` for BLIS) or ``threading_layer`` where known."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    keep = (
        "user_api",
        "internal_api",
        "prefix",
        "version",
        "architecture",
        "corretype",
        "threading_layer",
        "num_threads",
    )
    return [{k: lib[k] for k in keep if k in lib} for lib in threadpool_info()]


def thread_counts() -> dict[str, Any]:
    """The thread-count variables, and torch's and numba's thread counts when this process imported them."""
    threads: dict[str, Any] = {var: os.environ.get(var) for var in THREAD_VARS}
    if "torch" in sys.modules:
        threads["torch"] = sys.modules["torch"].get_num_threads()
    if "numba" in sys.modules:
        numba = sys.modules["numba"]
        try:
            from numba.np.ufunc import parallel

            launched = bool(getattr(parallel, "_is_initialized", False))
        except ImportError:
            launched = False
        # get_num_threads() would start numba's thread pool: before it is started, its size to be
        threads["numba"] = numba.get_num_threads() if launched else numba.config.NUMBA_NUM_THREADS
    return threads


def collect() -> dict[str, Any]:
    """This process's provenance: ``commit``, ``dirty``, ``commit_from``, ``code`` (the sources'
    fingerprint, :func:`banditbench.storage.fingerprint.fingerprint`), ``host``, ``cpu``, ``machine``,
    ``os``, ``python``, ``packages`` (name -> version, ``None`` if not installed), ``blas``
    (:func:`blas_info`), ``threads`` (:func:`thread_counts`) and, in a pipeline job, ``run`` (the run it
    was made for: :mod:`banditbench.configuration.runs`).

    Call it after the work (as ``save_result`` does): the BLAS and thread entries describe the
    libraries loaded then.  Cheap on repeated calls.
    """
    key = (tuple(m for m in _NUMERIC_MODULES if m in sys.modules), tuple(os.environ.get(v) for v in THREAD_VARS))
    if key not in _dynamic:
        _dynamic[key] = {"blas": blas_info(), "threads": thread_counts()}
    run = {"run": os.environ[RUN_VAR]} if os.environ.get(RUN_VAR) else {}
    return {**_static_part(), **_dynamic[key], **run}


# --- many results ---------------------------------------------------------------------------------

NO_PROVENANCE = "none recorded (written before banditbench recorded provenance)"


def commit_label(prov: Mapping[str, Any]) -> str:
    state = {True: "dirty tree", False: "clean"}.get(prov.get("dirty"), "tree state unknown")
    return f"{prov.get('commit', UNKNOWN)} ({state})"


def blas_label(prov: Mapping[str, Any]) -> str:
    """The BLAS kernels in use: ``openblas 0.3.31 Haswell``, several joined by ``+``."""
    libs = [lib for lib in prov.get("blas", []) if lib.get("user_api") == "blas"]
    if not libs:
        return UNKNOWN
    parts = sorted(
        {
            " ".join(
                str(x)
                for x in (
                    lib.get("internal_api"),
                    lib.get("version"),
                    lib.get("architecture") or lib.get("corretype") or lib.get("threading_layer"),
                )
                if x
            )
            for lib in libs
        }
    )
    return " + ".join(parts)


def thread_label(prov: Mapping[str, Any]) -> str:
    blas = sorted({str(lib.get("num_threads")) for lib in prov.get("blas", []) if lib.get("user_api") == "blas"})
    parts = [f"BLAS {'/'.join(blas)}"] if blas else []
    threads = prov.get("threads", {})
    parts += [f"{k} {threads[k]}" for k in ("torch", "numba") if k in threads]
    return ", ".join(parts) or UNKNOWN


#: the dimensions a summary counts: name -> label of one result's provenance
DIMENSIONS = {
    "commit": commit_label,
    "code": lambda p: str(p.get("code", UNKNOWN))[:12],
    "host": lambda p: str(p.get("host", UNKNOWN)),
    "cpu": lambda p: str(p.get("cpu", UNKNOWN)),
    "blas": blas_label,
    "threads": thread_label,
    "python": lambda p: str(p.get("python", UNKNOWN)),
}
#: dimensions whose mixture is flagged; a mixture of thread counts is shown, not flagged (the
#: BLAS thread count of a job is pinned to 1 by the simulate rule), and so is one of the BLAS sets:
#: a job that imports scipy loads scipy's OpenBLAS beside numpy's, one machine all the same.  What is
#: flagged for BLAS is one library (its API and version) running different kernels (``blas <library>``)
FLAGGED = ("commit", "code", "host", "cpu", "python")
_TITLES = {
    "commit": "commits",
    "code": "code versions (source fingerprints)",
    "host": "hosts",
    "cpu": "CPU models",
    "blas": "BLAS kernels",
    "python": "Python versions",
}


@dataclass
class Summary:
    """Counts of results per provenance value, overall and per experiment."""

    total: int = 0
    #: dimension (``DIMENSIONS`` and ``package <name>``) -> value -> number of results
    counts: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    #: dimension -> value -> experiments with such results
    experiments: dict[str, dict[str, set]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    #: results without a provenance member
    missing: int = 0
    #: experiments whose results include one from a dirty tree
    dirty: set = field(default_factory=set)

    def add(self, prov: Mapping[str, Any] | None, experiment: str = "") -> None:
        self.total += 1
        if prov is None:
            self.missing += 1
            self._count("commit", NO_PROVENANCE, experiment)
            return
        if prov.get("dirty"):
            self.dirty.add(experiment)
        for name, label in DIMENSIONS.items():
            self._count(name, label(prov), experiment)
        for lib in prov.get("blas", []):
            if lib.get("user_api") == "blas":
                kernel = lib.get("architecture") or lib.get("corretype") or lib.get("threading_layer") or UNKNOWN
                self._count(f"blas {lib.get('internal_api')} {lib.get('version')}", str(kernel), experiment)
        for pkg, version in sorted(prov.get("packages", {}).items()):
            self._count(f"package {pkg}", "not installed" if version is None else str(version), experiment)

    def _count(self, dimension: str, value: str, experiment: str) -> None:
        self.counts[dimension][value] += 1
        self.experiments[dimension][value].add(experiment)

    def mixed(self) -> dict[str, list[tuple[str, int]]]:
        """Flagged dimensions (and packages) with more than one value: dimension -> [(value, count)]."""
        names = [*FLAGGED, *sorted(d for d in self.counts if d.startswith(("blas ", "package ")))]
        return {d: self.counts[d].most_common() for d in names if len(self.counts.get(d, ())) > 1}

    def mixed_experiments(self, dimension: str) -> list[str]:
        """The experiments whose own results hold more than one value of ``dimension``."""
        per: dict[str, set] = defaultdict(set)
        for value, exps in self.experiments[dimension].items():
            for e in exps:
                per[e].add(value)
        return sorted(e for e, values in per.items() if len(values) > 1 and e)

    def warnings(self) -> list[str]:
        """One line per problem: a mixture of commits, hosts, CPUs, BLAS kernels, Python or package
        versions (with the experiments that mix them in themselves), a dirty tree, results without
        provenance."""
        out = []
        for dim, values in self.mixed().items():
            title = _TITLES.get(dim) or (
                f"BLAS kernels of {dim.removeprefix('blas ')}"
                if dim.startswith("blas ")
                else f"{dim.removeprefix('package ')} versions"
            )
            listed = "; ".join(f"{_short(v) if dim == 'commit' else v}: {n}" for v, n in values)
            within = self.mixed_experiments(dim)
            where = f" (mixed within {', '.join(within)})" if within else ""
            out.append(f"results from {len(values)} {title}{where}: {listed}")
        if self.dirty:
            names = sorted(e for e in self.dirty if e)
            out.append(
                f"results from a checkout with uncommitted changes (dirty tree)"
                f"{' in ' + ', '.join(names) if names else ''}: the commit does not name the code"
            )
        if self.missing and self.missing == self.total:  # (some of them: a mixture of commits, above)
            out.append(f"no result records its provenance ({self.missing} written before banditbench recorded it)")
        return out


def summarize(records: Iterable[tuple[str, Mapping[str, Any] | None]]) -> Summary:
    """A :class:`Summary` of ``(experiment, provenance or None)`` pairs."""
    summary = Summary()
    for experiment, prov in records:
        summary.add(prov, experiment)
    return summary


def _short(value: str) -> str:
    """A commit label with the hash shortened to 12 digits."""
    commit, _, rest = value.partition(" ")
    return f"{commit[:12]} {rest}" if len(commit) == 40 else value


#: how :func:`summary_lines` names the dimensions
NAMES = {
    "commit": "commit",
    "code": "code",
    "host": "host",
    "cpu": "CPU",
    "blas": "BLAS kernel",
    "threads": "threads",
    "python": "Python",
}


def summary_rows(summary: Summary) -> list[tuple[str, list[tuple[str, int]]]]:
    """``(name, [(value, count), ...])`` per dimension, then per package, most frequent value first."""
    rows = []
    for dim in [*DIMENSIONS, *sorted(d for d in summary.counts if d.startswith("package "))]:
        if dim in summary.counts:
            values = summary.counts[dim].most_common()
            if dim == "commit":
                values = [(_short(v), n) for v, n in values]
            rows.append((NAMES.get(dim, dim.removeprefix("package ")), values))
    return rows


def summary_lines(summary: Summary, where: str = "") -> list[str]:
    """The plain-text summary ``banditbench provenance`` prints: counts per value, then warnings."""
    lines = [f"{summary.total} result(s){' in ' + where if where else ''}"]
    width = max((len(name) for name, _ in summary_rows(summary)), default=0)
    for name, values in summary_rows(summary):
        for i, (value, n) in enumerate(values):
            lines.append(f"  {(name if i == 0 else ''):<{width}}  {n:>7}  {value}")
    lines += [f"warning: {w}" for w in summary.warnings()]
    return lines
