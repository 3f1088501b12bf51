"""The console handler: a start line, a progress line, warnings and errors in full, failed jobs as blocks.

Snakemake hands every log record to this handler (in its queue listener's thread, one at a time);
its own file handler writes the same records, all of them, to ``.snakemake/log/<date>.snakemake.log``.

Faults outside the code end in one line each, not in Snakemake's words: its refusal to lock a folder
where a run is in progress (a ``LockException`` advising ``--unlock``) becomes the run's process id
(banditbench.storage.runlock.lock_note); a write that failed because a disk is full or read-only, its own
(a job's benchmark file, a traceback from removing a failed job's outputs) or a job's, becomes one line
naming the file (banditbench.storage.logs.storage_problem), once per folder and cause; jobs cut short by
SIGTERM or Ctrl-C are counted on the last line, which says where the run's outputs go; Snakemake's own
closing error ("At least one job did not complete successfully") after that line is not repeated.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import threading
import time
from typing import Any, Optional, TextIO

from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.common import LogEvent

# Snakemake's set-up chatter before the jobs are planned (its INFO records without an event): left to the
# full log.  Any other INFO record before the run (`--lint`, `--report`, "Nothing to be done", ...) is shown.
SETUP_CHATTER = (
    "Assuming unrestricted shared filesystem usage",
    "Building DAG of jobs",
    "Using shell:",
    "Conda environments: ignored",
    "Singularity containers: ignored",
    "Group jobs: inactive",
    "Select jobs to execute",
    "SLURM run ID:",
    "Cleaning up SLURM log files",
)
# events that never reach the console (JOB_INFO is remembered for the failure blocks)
SILENT_EVENTS = {
    LogEvent.SHELLCMD,
    LogEvent.JOB_STARTED,
    LogEvent.GROUP_INFO,
    LogEvent.RESOURCES_INFO,
    LogEvent.WORKFLOW_STARTED,
    LogEvent.DEBUG_DAG,
    LogEvent.RULEGRAPH,
}
COMPLETE_LOG = "Complete log(s): "
ELAPSED = "Elapsed time: "
# Snakemake's words after a failed or stopped run, which the console's last line says: not repeated
RUN_FAILED = "At least one job did not complete successfully."
EXITING = "Exiting because a job execution failed. Look above for error messages"
# Snakemake's lines when asked to stop: SIGTERM (its handler lets the running jobs finish), Ctrl-C
STOPPING = {
    "Will exit after finishing currently running jobs (scheduler).": "SIGTERM",
    "Terminating processes on user request, this might take some time.": "Ctrl-C",
}
# a job's process ended by a signal asking it to stop (not a failure of its code): counted as cut short
STOP_SIGNALS = {"SIGTERM": "SIGTERM", "SIGINT": "Ctrl-C", "SIGHUP": "SIGHUP"}
# ... or by its shell's exit status after one (128 + the signal's number)
STOP_STATUS = {143: "SIGTERM", 130: "Ctrl-C", 129: "SIGHUP"}
# the environment variable naming the run, results/<run>/ (workflow/rules/common.smk)
RUN_VAR = "BANDITBENCH_RUN"
# a line of a warning or error longer than this is cut (a failed shell job's command holds its whole cell)
MAX_LINE = 1000
# in a failure block, the exception and the log's last line
MAX_DETAIL = 300
TICK_SECONDS = 1.0
# the progress line's width where the terminal reports fewer columns than MIN_COLUMNS (0: it does not know)
DEFAULT_COLUMNS, MIN_COLUMNS = 120, 20

# the per-block simulate rules (simulate_seed_3, simulate_seeds_0_to_19) and the lockstep ones
# (simulate_variants_0, ...) count as one kind of job
_SEED_BLOCK = re.compile(r"_(?:seeds?_\d+(?:_to_\d+)?|variants_\d+)$")
# a failed shell job's exception quotes its whole command
_FAILED_COMMAND = re.compile(r"Command '.*' returned non-zero exit status (-?\d+)\.?", re.S)
_KILLED_COMMAND = re.compile(r"Command '.*' died with <Signals\.(SIG\w+): \d+>\.?", re.S)
# the last line of an error that an OSError ended: "OSError: [Errno 28] No space left on device", with
# ": 'path'" where Python knew the file
_OS_ERROR = re.compile(r"^\w*Error: \[Errno (\d+)\] (.*?)(?:: '(.*)')?$")
# a job's own line for a full or read-only disk (banditbench.storage.logs.storage_problem), as its log ends
_STORAGE_LINE = re.compile(r"cannot write (.*?): (no space left on device|disk quota exceeded|read-only file system)")


# Snakemake reads the --configfile files before the workflow (and its own checks) starts: a file it cannot open
# is a traceback through its config-file loader, a file it cannot parse one of two messages naming no file
_CONFIG_LOADER = re.compile(r"snakemake[/\\]common[/\\]configfile\.py")
_CONFIG_OS_ERROR = re.compile(r"^(?P<kind>\w+): \[Errno \d+\] (?P<why>[^:]+): '(?P<path>.*)'$")
_CONFIG_FILE_ERRORS = ("Config file is not valid JSON or YAML", "Config file must be given as JSON or YAML")
_VALIDATE = "`banditbench validate <file>` says which file, and where"


def config_file_problem(record: logging.LogRecord) -> Optional[str]:
    """One line for Snakemake's error about a ``--configfile`` it cannot read (missing, a folder, not readable,
    not text, not YAML): the file and what is wrong, where the error names the file; None for any other record."""
    if record.levelno < logging.ERROR or getattr(record, "event", None) != LogEvent.ERROR:
        return None
    message = record.getMessage()
    if "Traceback (most recent call last)" in message and _CONFIG_LOADER.search(message):
        last = next(line.strip() for line in reversed(message.splitlines()) if line.strip())
        found = _CONFIG_OS_ERROR.match(last)
        if found is None:
            return f"--configfile: a config file cannot be read ({last}); {_VALIDATE}"
        what = {
            "FileNotFoundError": "config file does not exist",
            "IsADirectoryError": "a folder, not a config file",
        }.get(found["kind"], f"cannot read the config file ({found['why']})")
        return f"--configfile {found['path']}: {what}"
    if getattr(record, "exception", None) == "WorkflowError" and any(e in message for e in _CONFIG_FILE_ERRORS):
        text = " ".join(message.split()).removeprefix("WorkflowError: ")
        return f"--configfile: {text} ({_VALIDATE})"
    return None


def duration(seconds: float) -> str:
    """h:mm:ss"""
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def rate_text(per_minute: float) -> str:
    return f"{per_minute:.0f}" if per_minute >= 100 else f"{per_minute:.1f}"


def cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters: see the full log]"


def planned_summary(stats: dict[str, int], limit: int = 120) -> str:
    """``4 simulate, 1 aggregate, 1 all`` from Snakemake's job stats (rule -> count, and "total")."""
    counts: dict[str, int] = {}
    for rule, count in stats.items():
        if rule != "total":
            kind = _SEED_BLOCK.sub("", rule)
            counts[kind] = counts.get(kind, 0) + count
    text = ", ".join(f"{count} {kind}" for kind, count in counts.items())
    return text if len(text) <= limit else text[:limit].rsplit(", ", 1)[0] + ", ..."


def last_line(path: str) -> Optional[str]:
    """The last non-empty line of a (log) file, or None."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8192))
            tail = f.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    return lines[-1] if lines else None


def shown_path(path: str) -> str:
    """A path relative to the working directory when that is also the shell's (``$PWD``), else absolute."""
    path = os.path.abspath(path)
    cwd = os.getcwd()
    shell = os.environ.get("PWD")
    if shell and os.path.realpath(shell) == os.path.realpath(cwd) and path.startswith(cwd + os.sep):
        return os.path.relpath(path, cwd)
    return path


def os_error(text: str) -> Optional[OSError]:
    """The OSError that Snakemake's error message (a ``WorkflowError`` wrapping it, a traceback) ends with."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    match = _OS_ERROR.match(lines[-1]) if lines else None
    if not match:
        return None
    number, why, path = match.groups()
    return OSError(int(number), why, path) if path else OSError(int(number), why)


def storage_line(text: str, filename: Optional[str] = None) -> Optional[str]:
    """One line for an error of Snakemake's that a full or read-only disk caused, naming the file (``filename``
    where the error does not: a write that failed after its file was opened); None for any other error."""
    err = os_error(text)
    if err is None:
        return None
    try:
        from banditbench.storage.logs import storage_problem
    except ImportError:  # the plugin without its library: Snakemake's words
        return None
    if err.filename is None and filename:
        err.filename = filename
    return storage_problem(err, ours=False)


def job_storage_line(logs: list[str]) -> Optional[str]:
    """A job's own line for a full or read-only disk, where its log ends in one (from ``cannot write``)."""
    for path in logs:
        last = last_line(path) or ""
        match = _STORAGE_LINE.search(last)
        if match:
            return last[match.start() :]
    return None


def lock_line() -> Optional[str]:
    """In place of Snakemake's ``LockException``: who holds the lock, in one line (never ``--unlock`` for a run
    in progress)."""
    try:
        from banditbench.storage.runlock import lock_note

        return lock_note()
    except Exception:  # noqa: BLE001 -- no library, or /proc unreadable: Snakemake's words
        return None


def stop_signal(exception: str) -> Optional[str]:
    """The signal that ended a job asking it to stop (SIGTERM, Ctrl-C, SIGHUP), from its exception; None for
    a failure (an exit status of its own, SIGKILL: out of memory?)."""
    killed = _KILLED_COMMAND.search(exception)
    if killed:
        return STOP_SIGNALS.get(killed.group(1))
    status = _FAILED_COMMAND.search(exception)
    return STOP_STATUS.get(int(status.group(1))) if status else None


def snakemake_logfile() -> Optional[str]:
    """The file Snakemake's own file handler writes the full log to (set up before the workflow runs)."""
    for handler in logging.getLogger("snakemake.logging").handlers:
        if isinstance(handler, logging.FileHandler):
            return handler.baseFilename
    return None


class ConsoleHandler(LogHandlerBase):
    RED, YELLOW, GREEN = "\033[31m", "\033[33m", "\033[32m"
    RESET = "\033[0m"

    def __post_init__(self) -> None:
        common = self.common_settings
        self.stream: TextIO = sys.stdout if getattr(common, "stdout", False) else sys.stderr
        # Snakemake's own output where a flag asks for it: dry runs (their "Job stats:" table and job list),
        # -p, --verbose, --debug-dag, --quiet
        self.passthrough = bool(
            common.dryrun or common.printshellcmds or common.verbose or common.debug_dag or common.quiet
        )
        self._inner: Optional[logging.Handler] = None
        if self.passthrough:
            from snakemake.logging import ColorizingTextHandler, DefaultFilter, DefaultFormatter

            self._inner = ColorizingTextHandler(
                nocolor=common.nocolor,
                stream=self.stream,
                formatter=DefaultFormatter(common.quiet, common.show_failed_logs),
                filter=DefaultFilter(
                    common.quiet, common.debug_dag, common.verbose, common.dryrun, common.printshellcmds
                ),
            )
            return
        interval = getattr(self.settings, "interval", None)
        self.interval = 60 if interval is None else max(0, int(interval))
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.color = self.tty and not common.nocolor and os.environ.get("TERM") != "dumb"
        self.show_failed_logs = bool(common.show_failed_logs)
        self.clock = time.monotonic
        self.running = False  # between the start line and the final line
        self.finished = False
        self.start = 0.0
        self.done = 0
        self.total = 0
        self.failed = 0
        self.logfile: Optional[str] = None
        self.jobs: dict[Any, dict[str, Any]] = {}  # jobid -> rule, wildcards, log (from JOB_INFO)
        self.pending: list[str] = []  # failed jobs' exceptions, each folded into its job's block or line
        self.cut_short = 0  # jobs ended by a signal asking them to stop (SIGTERM, Ctrl-C)
        self.signal: Optional[str] = None  # what asked the run to stop
        self.storage_seen: set[tuple[str, str]] = set()  # (folder, cause) of the full or read-only disks named
        self.warnings_seen: set[str] = set()
        self.repeated_warnings = 0
        self.last_print = 0.0
        self.last_tenth = 0
        self.line_shown = False  # a progress line is on the terminal, without its newline
        self._ticker: Optional[threading.Thread] = None
        self._stop = threading.Event()

    # --- what Snakemake asks of a log handler -------------------------------------------------------------

    @property
    def writes_to_stream(self) -> bool:
        return True

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return True

    @property
    def has_formatter(self) -> bool:
        return True

    @property
    def needs_rulegraph(self) -> bool:
        return False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            problem = config_file_problem(record)  # before the workflow starts: one line, not a traceback
            if problem is not None:
                self.stream.write(problem + "\n")
                self.flush()
            elif self._inner is not None:
                self._inner.handle(self._one_line(record))
            else:
                self._emit(record)
        except Exception:  # noqa: BLE001 -- a console problem must not stop the workflow
            self.handleError(record)

    def flush(self) -> None:
        if self._inner is not None:
            self._inner.flush()
            return
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
        else:
            self.acquire()
            try:
                self._stop.set()
                if self.running:  # the workflow ended without Snakemake's "Elapsed time" (interrupted)
                    self._finish()
                self._flush_pending()
                self._end_line()
            finally:
                self.release()
            if self._ticker is not None and self._ticker is not threading.current_thread():
                self._ticker.join(timeout=2)
        super().close()

    # --- records ------------------------------------------------------------------------------------------

    @staticmethod
    def _one_line(record: logging.LogRecord) -> logging.LogRecord:
        """Snakemake's own output, but a lock refusal or a full or read-only disk in one line (as the console)."""
        if record.levelno < logging.ERROR or getattr(record, "event", None) not in (None, LogEvent.ERROR):
            return record
        message = record.getMessage()
        line = lock_line() if getattr(record, "exception", None) == "LockException" else storage_line(message)
        if line is None:
            return record
        record = logging.makeLogRecord(record.__dict__)
        record.msg, record.args = line, None
        return record

    def _emit(self, record: logging.LogRecord) -> None:
        event = getattr(record, "event", None)
        if event == LogEvent.JOB_INFO:
            self.jobs[getattr(record, "jobid", None)] = {
                "rule": getattr(record, "rule_name", None),
                "wildcards": dict(getattr(record, "wildcards", None) or {}),
                "log": list(getattr(record, "log", None) or []),
                "output": list(getattr(record, "output", None) or []),
                "benchmark": getattr(record, "benchmark", None),
            }
            return
        if event == LogEvent.JOB_FINISHED:
            self.jobs.pop(getattr(record, "job_id", None), None)
            return
        if event == LogEvent.RUN_INFO and isinstance(getattr(record, "stats", None), dict):
            if not self.running and not self.finished:
                self._start(record.stats)
            return
        if event == LogEvent.PROGRESS:
            self._progress(int(getattr(record, "done", 0)), int(getattr(record, "total", 0) or self.total))
            return
        if event == LogEvent.JOB_ERROR:
            self._job_error(record)
            return
        if event == LogEvent.GROUP_ERROR:
            self._group_error(record)
            return
        if event in SILENT_EVENTS or record.levelno < logging.INFO:
            return
        message = record.getMessage()
        if record.levelno >= logging.ERROR:
            self._emit_error(record, event, message)
        elif record.levelno >= logging.WARNING:
            self._emit_warning(message)
        else:
            self._emit_info(message)

    def _emit_error(self, record: logging.LogRecord, event: Any, message: str) -> None:
        """An error: a lock refusal in one line; the run's own stop left to the last line; a failed job's
        exception held to be folded into its block; any other written in red (a storage problem in one line)."""
        exception = getattr(record, "exception", None)
        if exception == "LockException":
            self._flush_pending()
            self._write_once(lock_line() or self._cut_lines(message))
            return
        if (self.running or self.finished) and (
            message.strip() == EXITING or (exception == "WorkflowError" and message.strip().endswith(RUN_FAILED))
        ):
            return  # the last line says that the run stopped, and why
        if (
            event == LogEvent.ERROR
            and self.running
            and (exception == "RuleException" or (exception == "WorkflowError" and os_error(message)))
        ):
            # a failed job's exception (its shell command and exit status, or Snakemake's failed write of
            # its benchmark file): folded into its block or line next
            self.pending.append(message)
            return
        self._flush_pending()
        line = storage_line(message)
        if line is not None:
            self._write_storage(line)
        else:
            self._write(self._cut_lines(message), self.RED)

    def _emit_warning(self, message: str) -> None:
        """A warning, in yellow, once (repeats are counted)."""
        self._flush_pending()
        if message in self.warnings_seen:
            self.repeated_warnings += 1
            return
        self.warnings_seen.add(message)
        self._write(self._cut_lines(message), self.YELLOW)

    def _emit_info(self, message: str) -> None:
        """A message without an event: while running, a stop signal, the log file and the end are noted and
        the rest is left to the full log; before, Snakemake's setup chatter is dropped and the rest written."""
        if self.running and message in STOPPING:
            self.signal = self.signal or STOPPING[message]
            return
        if self.running:
            if message.startswith(COMPLETE_LOG):
                self.logfile = message[len(COMPLETE_LOG) :].split(", ")[0].strip()
            elif message.startswith(ELAPSED):
                self._finish()
            return  # per-job chatter ("Select jobs to execute...", submissions, ...): in the full log
        if message.startswith(SETUP_CHATTER) or not message.strip():
            return
        self._write(message)

    def _start(self, stats: dict[str, int]) -> None:
        self.running = True
        self.start = self.last_print = self.clock()
        self.total = int(stats.get("total", 0))
        self.logfile = snakemake_logfile()
        where = f"; full log: {shown_path(self.logfile)}" if self.logfile else ""
        jobs = "job" if self.total == 1 else "jobs"
        self._write(f"{self.total} {jobs} to run ({planned_summary(stats)}){where}")  # and the progress line
        if self.tty:
            self._ticker = threading.Thread(target=self._tick, name="banditbench-console", daemon=True)
            self._ticker.start()

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, max(total, done)
        if not self.running:
            return
        if self.tty:
            self._draw()
            return
        now = self.clock()
        tenth = self.done * 10 // self.total if self.total else 10
        if self.done >= self.total or tenth > self.last_tenth or now - self.last_print >= self.interval:
            self.last_tenth = max(self.last_tenth, tenth)
            self.last_print = now
            self._write(self.progress_line(now))

    def progress_line(self, now: Optional[float] = None) -> str:
        elapsed = (self.clock() if now is None else now) - self.start
        pct = self.done * 100 // self.total if self.total else 100
        parts = [f"{self.done}/{self.total} jobs ({pct}%)"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.done and elapsed > 0:
            per_minute = self.done / elapsed * 60
            eta = (self.total - self.done) * elapsed / self.done
            parts += [f"{rate_text(per_minute)} jobs/min", f"ETA {duration(eta)}"]
        else:
            parts.append("ETA -:--:--")
        parts.append(f"elapsed {duration(elapsed)}")
        return ", ".join(parts)

    def _finish(self) -> None:
        self._flush_pending()
        self.running, self.finished = False, True
        self._stop.set()
        elapsed = self.clock() - self.start
        where = f"; full log: {shown_path(self.logfile)}" if self.logfile else ""
        if self.failed == 0 and self.cut_short == 0 and self.done >= self.total:
            rate = f" ({rate_text(self.done / elapsed * 60)} jobs/min)" if elapsed > 0 and self.done else ""
            line, color = f"Done: {self.done}/{self.total} jobs in {duration(elapsed)}{rate}", self.GREEN
        else:
            by = f" by {self.signal}" if self.signal else ""
            failed = f", {self.failed} failed" if self.failed else ""
            failed += f", {self.cut_short} cut short" if self.cut_short else ""
            line = f"Stopped{by}: {self.done}/{self.total} jobs done{failed}, after {duration(elapsed)}"
            color = self.RED
        if self.repeated_warnings:
            line += f" ({self.repeated_warnings} repeated warnings not shown)"
        run = os.environ.get(RUN_VAR)
        if run and color == self.RED:
            again = " (run snakemake again to resume)" if self.signal and not self.failed else ""
            line += f"; outputs go to results/{run}/{again}"
        elif run:
            line += f"; results in results/{run}/"
        self._write(line + where, color)

    # --- failed jobs ----------------------------------------------------------------------------------------

    def _job_error(self, record: logging.LogRecord) -> None:
        jobid = getattr(record, "jobid", None)
        known = self.jobs.get(jobid, {})
        rule = getattr(record, "rule_name", None) or known.get("rule") or "?"
        logs = list(getattr(record, "log", None) or []) or known.get("log", [])
        wildcards = ", ".join(f"{k}={v}" for k, v in known.get("wildcards", {}).items())
        if getattr(record, "indent", False):  # one job of a failed group job: one line under the group's block
            lines = [f"    rule {rule} (jobid {jobid})" + (f", {wildcards}" if wildcards else "")]
            lines[0] += f"; log: {', '.join(logs)}" if logs else ""
            lines += [f"        last line: {cut(last, MAX_DETAIL)}" for last in map(last_line, logs) if last]
            self._write("\n".join(lines), self.RED)
            return
        paths = [*logs, *(getattr(record, "output", None) or known.get("output", [])), known.get("benchmark")]
        exception = self._take_exception([str(p) for p in paths if p])
        stopped = stop_signal(exception) if exception else None
        if stopped:  # asked to stop (SIGTERM, Ctrl-C): not a failure; the last line counts it
            self.cut_short += 1
            self.signal = self.signal or stopped
            return
        self.failed += 1
        storage = storage_line(exception, known.get("benchmark")) if exception else None
        storage = storage or job_storage_line(logs)
        if storage:  # a full or read-only disk: the line names the file
            self._write_storage(storage)
            return
        lines = [f"Job failed: rule {rule} (jobid {jobid})"]
        if wildcards:
            lines.append(f"    wildcards: {wildcards}")
        rule_msg = getattr(record, "rule_msg", None)
        if rule_msg:
            lines.append(f"    message: {cut(str(rule_msg), MAX_DETAIL)}")
        lines += self._log_lines(logs)
        for key, value in (getattr(record, "aux", None) or {}).items():
            lines.append(f"    {key}: {cut(str(value), MAX_DETAIL)}")
        lines += self._exception_lines(exception)
        self._write("\n".join(lines), self.RED)

    def _group_error(self, record: logging.LogRecord) -> None:
        infos = list(getattr(record, "job_error_info", None) or [])
        self.failed += len(infos) or 1
        lines = [f"Group job failed: {getattr(record, 'groupid', '?')} ({len(infos)} jobs, each listed below)"]
        lines += self._log_lines(list(getattr(record, "aux_logs", None) or []), required=False)
        lines += self._exception_lines(self.pending.pop(0) if self.pending else None)
        self._write("\n".join(lines), self.RED)

    def _log_lines(self, logs: list[str], required: bool = True) -> list[str]:
        if not logs:
            return ["    log: none (see the full log)"] if required else []
        lines = []
        for path in logs:
            lines.append(f"    log: {path}")
            last = last_line(path)
            if last:
                lines.append(f"    last line: {cut(last, MAX_DETAIL)}")
        if self.show_failed_logs:
            from snakemake.logging import show_logs

            lines += list(show_logs(logs))
        return lines

    def _take_exception(self, paths: list[str]) -> Optional[str]:
        """The pending exception of the job whose files are ``paths`` (its command or message names one of
        them), else the oldest (Snakemake logs a job's exception before its error, not always next to it)."""
        if not self.pending:
            return None
        for index, text in enumerate(self.pending):
            if any(path in text for path in paths):
                return self.pending.pop(index)
        return self.pending.pop(0)

    @staticmethod
    def _exception_lines(text: Optional[str]) -> list[str]:
        """A job's exception on one line, a failed command's text replaced by its exit status."""
        if not text:
            return []
        text = _FAILED_COMMAND.sub(r"its command exited with status \1", text)
        text = _KILLED_COMMAND.sub(r"its command was killed by \1", text)
        return [f"    error: {cut(' '.join(text.split()), MAX_DETAIL)}"]

    def _flush_pending(self) -> None:
        while self.pending:
            message = self.pending.pop(0)
            line = storage_line(message)
            if line is not None:
                self._write_storage(line)
            else:
                self._write(self._cut_lines(message), self.RED)

    def _write_storage(self, line: str) -> None:
        """A full or read-only disk's line, once per folder and cause (the jobs writing there fail alike)."""
        match = _STORAGE_LINE.match(line)
        key = (os.path.dirname(match.group(1)), match.group(2)) if match else ("", line)
        if key in self.storage_seen:
            return
        self.storage_seen.add(key)
        self._write(line, self.RED)

    def _write_once(self, line: str) -> None:
        """An error line, unless a warning said the same (the stale-lock note before a lock refusal)."""
        if line not in self.warnings_seen:
            self.warnings_seen.add(line)
            self._write(self._cut_lines(line), self.RED)

    # --- output ---------------------------------------------------------------------------------------------

    @staticmethod
    def _cut_lines(message: str) -> str:
        return "\n".join(cut(line, MAX_LINE) for line in message.splitlines())

    def _paint(self, text: str, color: Optional[str]) -> str:
        return f"{color}{text}{self.RESET}" if color and self.color else text

    def _write(self, text: str, color: Optional[str] = None) -> None:
        """Whole lines; on a terminal the progress line is cleared first and drawn again below them."""
        if self.tty and self.line_shown:
            self.stream.write("\r\033[K")
            self.line_shown = False
        self.stream.write(self._paint(text, color) + "\n")
        if self.tty and self.running:
            self._draw(flush=False)
        self.flush()

    def _draw(self, flush: bool = True) -> None:
        """The progress line, cut to the terminal's width (a wrapped line could not be rewritten in place)."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            columns = shutil.get_terminal_size((DEFAULT_COLUMNS, 24)).columns
        width = (columns if columns >= MIN_COLUMNS else DEFAULT_COLUMNS) - 1
        self.stream.write("\r\033[K" + self.progress_line()[:width])
        self.line_shown = True
        if flush:
            self.flush()

    def _end_line(self) -> None:
        if self.line_shown:
            self.stream.write("\n")
            self.line_shown = False
            self.flush()

    def _tick(self) -> None:
        """On a terminal: the elapsed time and ETA move between jobs too."""
        while not self._stop.wait(TICK_SECONDS):
            self.acquire()
            try:
                if self.running and not self._stop.is_set():
                    self._draw()
            finally:
                self.release()
