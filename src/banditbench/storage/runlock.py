"""A Snakemake lock left by a run that no longer runs (``kill -9``, an out-of-memory kill, a power cut):
found and removed before the next run, so that a plain rerun resumes.

Snakemake locks its working directory with files in ``.snakemake/locks`` that list the files a run
reads and writes, but not the process that holds them, and refuses to start while they exist
("Directory cannot be locked ... It can be removed with the --unlock argument").  So the Snakefile
records which process runs in the directory (:func:`register`: one file per run in
``.snakemake/banditbench/runs/``, naming the machine, its boot, the process id and the process's start
time; removed when the process exits, so a file left behind is a run that was killed), and before
Snakemake looks at its locks, :func:`release_stale` removes them only when it is sure that no run holds
them:

* no ``snakemake`` process runs in this directory on this machine (``/proc``: a process whose command
  is snakemake and whose working directory is this one, other than this process and its parents;
  another user's process, whose working directory cannot be read, is seen by its run's record), and
* every run recorded in the directory ran on this machine and has ended: its process is gone, its
  process id belongs to a later process (another start time), or the machine has booted since.

Otherwise the lock stays.  A lock whose run was recorded on another machine (a shared file system)
cannot be checked from here, nor can a lock with no recorded run (taken by a Snakemake that did not
run this workflow's code): one line says so and what to run once sure.  Without ``/proc`` (not Linux)
nothing is removed.

When Snakemake then refuses to lock the directory (its ``LockException``, which advises ``--unlock``),
:func:`lock_note` says in one line why instead (the console prints it in place of Snakemake's text): a
run in progress in this folder, named by its process id, is never to be unlocked, only waited for.

A run asked to stop with SIGTERM lets its running jobs finish and stops (:func:`graceful_sigterm`, in place
of Snakemake's own handler, which could hang the run for ever).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

#: Snakemake's lock files (the file-system persistence, its default)
LOCKS = Path(".snakemake/locks")
#: one file per run of this workflow in the directory (:func:`register`)
RUNS = Path(".snakemake/banditbench/runs")


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state, ppid, ...), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def _started(pid: int) -> int | None:
    """The process's start time (clock ticks after boot: field 22 of ``/proc/<pid>/stat``), or None if it is
    gone (or a zombie: ended, not yet reaped by its parent)."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 and fields[0] not in ("Z", "X") else None


def _ancestors() -> set[int]:
    """This process's parents, up to init."""
    found, pid = set(), os.getpid()
    while pid > 1:
        fields = _stat_fields(pid)
        if not fields:
            break
        pid = int(fields[1])
        found.add(pid)
    return found


def is_snakemake(argv: list[str]) -> bool:
    """Whether a command line runs Snakemake (``snakemake ...``, ``python -m snakemake ...``,
    ``python .../bin/snakemake ...``)."""
    head = argv[:6]
    if any(os.path.basename(arg) == "snakemake" or arg.endswith("snakemake/__main__.py") for arg in head[:2]):
        return True
    return any(a == "-m" and b == "snakemake" for a, b in zip(head, head[1:])) or "-msnakemake" in head


def snakemake_here(directory: str | os.PathLike = ".") -> list[int]:
    """Process ids of the ``snakemake`` processes running in ``directory`` on this machine, other than this
    process and its parents (another user's, whose working directory cannot be read, are left out)."""
    here = os.path.realpath(directory)
    skip = {os.getpid(), *_ancestors()}
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) in skip:
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if not is_snakemake(argv):
            continue
        try:
            cwd = os.path.realpath(os.readlink(f"/proc/{entry}/cwd"))
        except FileNotFoundError:  # ended meanwhile
            continue
        except OSError:
            try:
                if os.stat(f"/proc/{entry}").st_uid != os.getuid():
                    continue  # another user's: a run of theirs in this directory would be recorded here
            except OSError:
                continue
            cwd = here  # ours, yet unreadable: it may run here
        if cwd == here:
            found.append(int(entry))
    return sorted(found)


def _record_path(host: str, pid: int) -> Path:
    return RUNS / f"{host}.{pid}.json"


def register() -> Path:
    """Record this process as a run in the working directory (removed when the process exits)."""
    pid = os.getpid()
    record = {
        "host": socket.gethostname(),
        "boot": _boot_id(),
        "pid": pid,
        "started": _started(pid),
        "since": time.time(),
    }
    path = _record_path(record["host"], pid)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record))
    except OSError:  # a read-only or full .snakemake: Snakemake itself will say so
        return path
    atexit.register(path.unlink, missing_ok=True)
    return path


def _alive(record: dict) -> bool | None:
    """Whether a recorded run's process still runs; None where that cannot be seen (another machine)."""
    if record.get("host") != socket.gethostname():
        return None
    boot = _boot_id()
    if boot and record.get("boot") and record["boot"] != boot:
        return False  # the machine has booted since
    if not Path("/proc/self/stat").exists():
        return None
    started = _started(int(record["pid"]))
    return started is not None and started == record.get("started")


def _records() -> list[tuple[Path, dict]]:
    own = _record_path(socket.gethostname(), os.getpid())
    found = []
    for path in sorted(RUNS.glob("*.json")) if RUNS.is_dir() else []:
        if path == own:
            continue
        try:
            record = json.loads(path.read_text())
            int(record["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or not a record
        found.append((path, record))
    return found


def _when(record: dict) -> str:
    since = record.get("since")
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since)) if isinstance(since, (int, float)) else "?"


def release_stale(directory: str | os.PathLike = ".") -> str | None:
    """Remove Snakemake's lock when no run holds it (see the module docstring); one line saying what was
    done, or why a lock stays and what to run, or None (no lock, or one held by a run that is running)."""
    records = _records()
    locks = sorted(LOCKS.glob("*.lock")) if LOCKS.is_dir() else []
    if not locks:
        for path, record in records:  # tidy: runs that were killed after Snakemake removed its lock
            if _alive(record) is False:
                path.unlink(missing_ok=True)
        return None
    if not Path("/proc/self/stat").exists() or snakemake_here(directory):
        return None  # a snakemake runs here (or nothing can be seen): Snakemake's own check decides
    if any(_alive(record) for _, record in records):
        return None  # a recorded run is running (e.g. Snakemake started from Python)
    unchecked = _unchecked(records)
    if unchecked:
        return unchecked
    shutil.rmtree(LOCKS, ignore_errors=True)
    for path, _ in records:
        path.unlink(missing_ok=True)
    record = max((record for _, record in records), key=lambda r: r.get("since") or 0)
    return (
        f"{LOCKS}: removed the lock left by the snakemake run started at {_when(record)} (pid {record['pid']}), "
        f"which no longer runs (killed?); this run resumes it"
    )


def _unchecked(records: list[tuple[Path, dict]]) -> str | None:
    """The line for a lock that cannot be checked from here (its run was recorded on another machine, or
    no run was recorded), or None."""
    elsewhere = [record for _, record in records if _alive(record) is None]
    if elsewhere:
        record = elsewhere[-1]
        return (
            f"{LOCKS}: Snakemake's lock may be held by the run started on {record.get('host')} at {_when(record)} "
            f"(pid {record['pid']}), which cannot be checked from this machine; if it no longer runs, "
            f"`snakemake --unlock`, then run again"
        )
    if not records:
        return (
            f"{LOCKS}: Snakemake's lock was left by a run that recorded nothing and no snakemake runs in this "
            f"directory on this machine; if none runs on another machine either, `snakemake --unlock`, then "
            f"run again"
        )
    return None


def lock_note(directory: str | os.PathLike = ".") -> str:
    """One line for Snakemake's refusal to lock ``directory`` (its ``LockException``): a run in progress here
    (its process id and start, where known: wait for it, never ``--unlock`` it), else why the lock cannot be
    checked from here (the line :func:`release_stale` gave before Snakemake looked).  Changes nothing."""
    records = _records()
    running = {int(record["pid"]): record for _, record in records if _alive(record)}
    pids = sorted({*snakemake_here(directory), *running})
    if pids:
        started = [_when(running[pid]) for pid in pids if pid in running]
        which = f"pid {pids[0]}" if len(pids) == 1 else "pids " + ", ".join(map(str, pids))
        since = f", started at {started[0]}" if len(started) == 1 else ""
        return (
            f"{LOCKS}: a snakemake run is in progress in this folder ({which}{since}); this run stops without "
            f"touching its files: wait for that one to end (or stop it), then run again"
        )
    return _unchecked(records) or (
        f"{LOCKS}: Snakemake's lock is held by a run that no longer runs on this machine; run again, which removes it"
    )


def graceful_sigterm(scheduler: Any) -> bool:
    """On SIGTERM, let the running jobs finish, then stop, as Snakemake's own handler means to; whether it was
    installed (in the main thread, on a Snakemake scheduler of the kind this knows).

    Snakemake 9's handler (``JobScheduler.exit_gracefully``) takes the scheduler's lock, which the main
    thread holds while it chooses jobs: a SIGTERM then, at the end of a job, hangs the run for ever.  This
    one sets the same flag without the lock (an attribute's assignment is atomic) and wakes the scheduler
    from another thread, which waits for the lock of its queue instead of the signal handler."""
    if not (hasattr(scheduler, "_user_kill") and hasattr(scheduler, "_open_jobs")):
        return False

    def stop(signum, frame) -> None:
        scheduler._user_kill = "graceful"
        threading.Thread(target=scheduler._open_jobs.release, name="banditbench-sigterm", daemon=True).start()

    try:
        signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread
        return False
    return True
