"""The device check (issue 37): the first thing to run on a GPU machine, within a time budget.

    python benchmarks/device_check.py --out DIR [--budget-s 480]      # on the GPU machine
    python benchmarks/device_check.py --out DIR --smoke               # the same steps on the CPU, tiny sizes

Steps, in order, each printing as it goes, timed, and skipped (with the reason) when the budget left is
less than it needs; a step that runs past its share is stopped and recorded as timed out:

a. ``cuda_tests``: the CUDA tests (``pytest -k cuda`` over the seed-batched tests and the device switch's):
   on a GPU the batched cells on cuda against their CPU decisions; on a CPU the refusals of ``cuda``.
b. ``speed``: ``benchmarks/batched_speed.py --devices cpu cuda`` for the four neural cells (NVLDB at
   d = 20, NDB-DF at d = 20, NDB-UCB at d = 5, NeuralLog-UCB-1 on h1) at T = 2,000, a block of 20 on
   the GPU against one seed of the single-seed path on one CPU core, the cells in parallel; the rows
   (wall and CPU seconds per seed, peak GPU memory) in DIR/speed/.  Smoke: one cell, T = 20, on the CPU.
c. ``table_e3``: seed 001's Table E.3 (``vdb_square_d20_T10000`` of config/variance_dueling.yaml: the six
   NVLDB variants and random pairs x 20 seeds, T = 10,000) end to end through Snakemake with
   ``--workflow-profile profiles/gpu`` (``device=cuda``, all 20 seeds of a cell in one job, the six variants
   in that same job: ``lockstep_variants``, one block of 120 members; random pairs a job of its own) in a scratch
   copy of the project, never the checkout's results/; its tables, the simulate jobs' logs (a CPU fallback
   says so there) and benchmark files, and the wall time in DIR/table_e3/.  Smoke: ``device=cpu``, 2 seeds,
   T = 50.
d. ``seed000_neural``: if time is left, seed 000's ``delayed_dueling_quadratic`` (NDB-DF, -Ignore,
   -Heuristic, zero-filling x 3 delay settings x 10 seeds, T = 2,000) the same way, into DIR/seed000/.
   Smoke: NDB-DF only, 2 seeds, T = 30.

DIR/summary.json and DIR/summary.md (rewritten after every step, so a run cut short still leaves what
it finished) hold each step's status (done, failed, timed out, skipped), wall time, reason and outputs,
and the machine: device name (``torch.cuda.get_device_name`` or ``cpu``), versions, and on a GPU the peak
GPU memory (``torch.cuda.max_memory_allocated`` of each speed block; ``nvidia-smi``'s peak memory in use
during the Snakemake steps).  Each step's full output is DIR/<step>.log.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
E3 = "vdb_square_d20_T10000"
SEED000 = "delayed_dueling_quadratic"
#: batched_speed.py's cells for the four neural families (d20_v: Table E.3's NVLDB, Algorithm 1's V)
SPEED_CELLS = ["d20_v", "ndb_df_d20", "ndb_ucb_d5", "neurallog_h1"]
#: what a scratch copy of the project holds (tests/smk.py's copy_project, and the default grid)
PROJECT = ("Snakefile", "src", "workflow", "config", "envs", "profiles", "config.yaml")


def _versions() -> dict[str, str]:
    import torch

    out = {"python": platform.python_version(), "torch": torch.__version__, "machine": platform.node()}
    out["cuda"] = str(torch.version.cuda)
    out["cpus"] = str(os.cpu_count())
    try:
        import snakemake

        out["snakemake"] = snakemake.__version__
    except Exception:  # noqa: BLE001 - a version is a nicety
        pass
    try:
        out["commit"] = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except Exception:  # noqa: BLE001 - no git (a copied tree)
        pass
    return out


class _GpuMemory:
    """The peak memory in use on the GPU (``nvidia-smi``, every process's) while a step runs."""

    def __init__(self, on: bool):
        self.on = on and shutil.which("nvidia-smi") is not None
        self.peak_mib: float | None = None
        self._stop = threading.Event()

    def _poll(self) -> None:
        while not self._stop.wait(1.0):
            try:
                out = subprocess.run(
                    ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                ).stdout
                used = max(float(v) for v in out.split())
            except Exception:  # noqa: BLE001 - a missed sample
                continue
            self.peak_mib = max(self.peak_mib or 0.0, used)

    def __enter__(self):
        if self.on:
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()


def _run_all(
    commands: list[tuple[str, list[str], Path]], timeout: float, env: dict, cwd: Path
) -> dict[str, int | None]:
    """Run ``(name, argv, log)`` commands at once, each one's output streamed to its log and printed
    prefixed with its name; the exit status of each (None: stopped at ``timeout`` seconds)."""
    procs = {}
    threads = []
    for name, argv, log in commands:
        log.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        procs[name] = proc

        def pump(proc=proc, log=log, name=name):
            with open(log, "w") as f:
                f.write("$ " + " ".join(argv) + "\n")
                for line in proc.stdout:
                    f.write(line)
                    f.flush()
                    print(f"  [{name}] {line.rstrip()}", flush=True)

        thread = threading.Thread(target=pump, daemon=True)
        thread.start()
        threads.append(thread)
    deadline = time.perf_counter() + timeout
    codes: dict[str, int | None] = {}
    for name, proc in procs.items():
        try:
            codes[name] = proc.wait(timeout=max(deadline - time.perf_counter(), 0.1))
        except subprocess.TimeoutExpired:
            codes[name] = None
    for name, proc in procs.items():
        if codes[name] is None:
            _stop(proc)
    for thread in threads:
        thread.join(timeout=10)
    return codes


def _stop(proc: subprocess.Popen) -> None:
    """Stop a command and its children (its own process group): SIGTERM, then SIGKILL after 20 s."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


class DeviceCheck:
    def __init__(self, out: Path, budget_s: float, smoke: bool, scratch: Path | None):
        import torch

        self.out, self.budget_s, self.smoke = out, budget_s, smoke
        self.gpu = torch.cuda.is_available() and not smoke
        self.start = time.perf_counter()
        self.steps: list[dict] = []
        self.scratch = scratch
        self.env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.summary = {
            "mode": "smoke (cpu, tiny sizes)" if smoke else "gpu",
            "device": torch.cuda.get_device_name() if self.gpu else "cpu",
            "versions": _versions(),
            "budget_s": budget_s,
            "steps": self.steps,
        }

    def left(self) -> float:
        return self.budget_s - (time.perf_counter() - self.start)

    def write(self) -> None:
        self.summary["wall_s"] = round(time.perf_counter() - self.start, 1)
        (self.out / "summary.json").write_text(json.dumps(self.summary, indent=1) + "\n")
        lines = [
            f"# Device check ({self.summary['mode']})",
            "",
            f"Device: {self.summary['device']}; "
            + ", ".join(f"{k} {v}" for k, v in self.summary["versions"].items())
            + f".  Budget {self.budget_s:.0f} s, used {self.summary['wall_s']:.0f} s.",
            "",
            "| step | status | wall | detail |",
            "|---|---|---|---|",
        ]
        for step in self.steps:
            wall = f"{step['wall_s']:.0f} s" if step.get("wall_s") is not None else "-"
            lines.append(f"| {step['name']} | {step['status']} | {wall} | {step.get('detail', '')} |")
        (self.out / "summary.md").write_text("\n".join(lines) + "\n")

    def step(self, name: str, title: str, run, need_s: float, share: float | None) -> None:
        """Run one step: skipped when less than ``need_s`` seconds of the budget are left; stopped after
        ``share`` of the budget (None: whatever is left)."""
        left = self.left()
        record = {"name": name, "title": title}
        self.steps.append(record)
        if left < need_s:
            record.update(
                status="skipped", reason=f"needs about {need_s:.0f} s, {max(left, 0):.0f} s of the budget left"
            )
            record["detail"] = record["reason"]
            print(f"== {name}: skipped ({record['reason']})", flush=True)
            self.write()
            return
        timeout = left if share is None else min(left, share * self.budget_s)
        print(f"== {name}: {title} (at most {timeout:.0f} s)", flush=True)
        t0 = time.perf_counter()
        try:
            record.update(run(timeout))
        except Exception as err:  # noqa: BLE001 - one step's failure must not lose the others'
            record.update(status="failed", detail=f"{type(err).__name__}: {err}")
        record["wall_s"] = round(time.perf_counter() - t0, 1)
        print(f"== {name}: {record['status']} in {record['wall_s']:.0f} s; {record.get('detail', '')}", flush=True)
        self.write()

    # --- steps -------------------------------------------------------------------------------------
    def cuda_tests(self, timeout: float) -> dict:
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "cuda"]
        argv += ["tests/policies/neural/batched", "tests/configuration/test_devices.py"]
        code = _run_all([("pytest", argv, self.out / "cuda_tests.log")], timeout, self.env, ROOT)["pytest"]
        tail = (self.out / "cuda_tests.log").read_text().strip().splitlines()[-1:]
        detail = tail[0] if tail else ""
        status = "timed out" if code is None else "done" if code == 0 else f"failed (exit {code})"
        return {"status": status, "detail": detail, "outputs": ["cuda_tests.log"]}

    def speed(self, timeout: float) -> dict:
        folder = self.out / "speed"
        folder.mkdir(exist_ok=True)
        script = str(ROOT / "benchmarks" / "batched_speed.py")
        if self.smoke:
            runs = {"d5": ["--horizon", "20", "--block", "2", "--single", "1", "--devices", "cpu"]}
        else:
            common = ["--horizon", "2000", "--block", "20", "--single", "1", "--cpu-block", "0"]
            runs = {cell: common + ["--devices", "cpu", "cuda"] for cell in SPEED_CELLS}
        commands = [
            (
                cell,
                [sys.executable, script, *args, "--cells", cell, "--json", str(folder / f"{cell}.json")],
                folder / f"{cell}.log",
            )
            for cell, args in runs.items()
        ]
        codes = _run_all(commands, timeout, self.env, ROOT)
        rows = []
        for cell in runs:
            path = folder / f"{cell}.json"
            if path.is_file():
                rows += json.loads(path.read_text())
        (folder / "rows.json").write_text(json.dumps(rows, indent=1) + "\n")
        done = [c for c, code in codes.items() if code == 0]
        peak = [r["peak_gpu_mb"] for r in rows if "peak_gpu_mb" in r]
        detail = f"{len(done)} of {len(runs)} cells measured, {len(rows)} rows"
        if peak:
            detail += f"; peak GPU memory of a block {max(peak):.0f} MiB"
        status = "done" if len(done) == len(runs) else "timed out" if None in codes.values() else "failed"
        return {"status": status, "detail": detail, "outputs": ["speed/"], "rows": rows}

    def _project(self) -> Path:
        """The scratch copy of the project the Snakemake steps run in (made once)."""
        if self.scratch is None:
            self.scratch = Path(tempfile.mkdtemp(prefix="banditbench-device-check-"))
        project = self.scratch / "project"
        if not project.is_dir():
            project.mkdir(parents=True)
            for item in PROJECT:
                src = ROOT / item
                if src.is_dir():
                    shutil.copytree(src, project / item, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    shutil.copy2(src, project / item)
        return project

    def _snakemake(self, name: str, experiment: str, configfile: str, config: list[str], timeout: float) -> dict:
        project = self._project()
        device = "cuda" if self.gpu else "cpu"
        argv = [sys.executable, "-m", "snakemake", "--workflow-profile", "profiles/gpu"]
        argv += ["--cores", str(os.cpu_count() if self.gpu else 2), "--directory", str(project)]
        argv += ["--snakefile", str(project / "Snakefile"), "--configfile", configfile, "--config"]
        # a --config replaces the profile's config list: repeat its device, seeds_per_job and lockstep_variants
        argv += [f"device={device}", "seeds_per_job=100", "lockstep_variants=True"]
        argv += [f"only_experiments={experiment}", f"run={name}", *config]
        env = {**self.env, "PYTHONPATH": str(project / "src")}
        folder = self.out / name
        folder.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        with _GpuMemory(self.gpu) as memory:
            code = _run_all([("snakemake", argv, self.out / f"{name}.log")], timeout, env, project)["snakemake"]
        wall = time.perf_counter() - t0
        tables = sorted((project / "results" / name / "tables").glob(f"{experiment}.*"))
        for path in tables:
            shutil.copy2(path, folder / path.name)
        jobs = folder / "jobs"
        fallbacks = []
        for path in sorted((project / "logs" / "simulate" / experiment).rglob("*.log")):
            dest = jobs / "logs" / path.relative_to(project / "logs" / "simulate" / experiment)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
            fallbacks += [line for line in path.read_text().splitlines() if "one at a time on the CPU" in line]
        job_walls = []
        for path in sorted((project / "results" / "runs" / experiment).rglob("*.benchmark.tsv")):
            dest = jobs / "benchmarks" / path.relative_to(project / "results" / "runs" / experiment)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
            lines = path.read_text().splitlines()
            if len(lines) > 1:
                job_walls.append({"job": str(dest.relative_to(folder)), "wall_s": float(lines[1].split("\t")[0])})
        md = folder / f"{experiment}.md"
        result = {
            "wall_s_snakemake": round(wall, 1),
            "jobs": job_walls,
            "cpu_fallbacks": fallbacks,
            "outputs": [f"{name}.log", f"{name}/"],
            "command": " ".join(argv),
        }
        if memory.peak_mib is not None:
            result["peak_gpu_used_mib"] = memory.peak_mib
        status = "timed out" if code is None else "done" if code == 0 and md.is_file() else f"failed (exit {code})"
        detail = f"Snakemake {wall:.0f} s, {len(job_walls)} simulate jobs"
        if job_walls:
            detail += f" (longest {max(j['wall_s'] for j in job_walls):.0f} s)"
        if md.is_file():
            detail += f"; table {name}/{md.name}"
        if fallbacks:
            detail += f"; {len(fallbacks)} CPU fallback(s)"
        if memory.peak_mib is not None:
            detail += f"; peak GPU memory in use {memory.peak_mib:.0f} MiB"
        return {"status": status, "detail": detail, **result}

    def table_e3(self, timeout: float) -> dict:
        tiny = ["seeds=2", "horizon=50"] if self.smoke else []
        return self._snakemake("table_e3", E3, "config/variance_dueling.yaml", tiny, timeout)

    def seed000_neural(self, timeout: float) -> dict:
        tiny = ["seeds=2", "horizon=30", "only_algorithms=ndb_df"] if self.smoke else []
        return self._snakemake("seed000", SEED000, "config/delayed_dueling.yaml", tiny, timeout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="folder for the summary, logs, tables and speed rows")
    ap.add_argument("--budget-s", type=float, default=480, help="seconds for all steps (default 480)")
    ap.add_argument("--smoke", action="store_true", help="the same steps on the CPU with tiny sizes")
    ap.add_argument(
        "--scratch", type=Path, help="where the scratch copy of the project goes (default: a temporary folder)"
    )
    args = ap.parse_args()
    import torch

    if not args.smoke and not torch.cuda.is_available():
        raise SystemExit(
            "device_check: torch sees no GPU on this machine (torch.cuda.is_available() is False); --smoke runs the steps on the CPU"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    check = DeviceCheck(args.out.resolve(), args.budget_s, args.smoke, args.scratch)
    print(f"device check: {check.summary['device']}, budget {args.budget_s:.0f} s, output {args.out}", flush=True)
    check.write()
    # (need, share of the budget): the tests and the speed rows are capped so that Table E.3 keeps the most
    check.step("cuda_tests", "the CUDA tests (pytest -k cuda)", check.cuda_tests, 20, 0.15)
    check.step("speed", "batched_speed.py, cpu against cuda", check.speed, 30 if not args.smoke else 5, 0.3)
    check.step("table_e3", f"seed 001's Table E.3 ({E3}) through Snakemake, profiles/gpu", check.table_e3, 30, None)
    check.step(
        "seed000_neural",
        f"seed 000's neural cells ({SEED000})",
        check.seed000_neural,
        60 if not args.smoke else 10,
        None,
    )
    if check.scratch is not None and args.scratch is None:
        shutil.rmtree(check.scratch, ignore_errors=True)
    print(f"device check: done in {time.perf_counter() - check.start:.0f} s; {args.out / 'summary.md'}", flush=True)


if __name__ == "__main__":
    main()
