"""The console (src/snakemake_logger_plugin_banditbench, enabled by profiles/default): a start line, progress
with done / total, rate and ETA, warnings and errors in full, a failed job as one block naming its log; the
full log in .snakemake/log/; dry runs print Snakemake's own output."""

import io
import logging
import re
from types import SimpleNamespace

import pytest
import yaml

from conftest import ROOT
from smk import copy_project, planned, smk
from snakemake.settings.enums import Quietness
from snakemake_interface_logger_plugins.common import LogEvent
from snakemake_interface_logger_plugins.registry import LoggerPluginRegistry

import snakemake_logger_plugin_banditbench as plugin
from snakemake_logger_plugin_banditbench import handler as console

PROGRESS = re.compile(
    r"^(\d+)/(\d+) jobs \((\d+)%\)(, \d+ failed)?, [\d.]+ jobs/min, ETA \d+:\d\d:\d\d, elapsed \d+:\d\d:\d\d$"
)


def _common(**overrides):
    """Snakemake's OutputSettings as a logger plugin sees them (a plain run)."""
    settings = dict(
        dryrun=False,
        printshellcmds=False,
        nocolor=False,
        quiet=set(),
        debug_dag=False,
        verbose=False,
        show_failed_logs=False,
        stdout=False,
    )
    return SimpleNamespace(**{**settings, **overrides})


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _handler(tty=False, interval=60, **common):
    handler = plugin.LogHandler(_common(**common), plugin.LogHandlerSettings(interval=interval))
    if not handler.passthrough:
        handler.stream, handler.tty, handler.color = io.StringIO(), tty, False
        handler.clock = Clock()
    return handler


def _record(msg=None, level=logging.INFO, **extra):
    record = logging.LogRecord("snakemake.logging", level, __file__, 0, msg, None, None)
    record.__dict__.update(extra)
    return record


STATS = {"simulate_seeds_0_to_1": 10, "simulate_seed_2": 5, "aggregate": 3, "all": 1, "total": 19}


def _run(handler, done_at, total=19):
    """Planned jobs, then one PROGRESS per (seconds, done), then Snakemake's closing lines."""
    handler.handle(_record("Job stats:\n...", event=LogEvent.RUN_INFO, stats=STATS))
    for seconds, done in done_at:
        handler.clock.now = 1000.0 + seconds
        handler.handle(_record(event=LogEvent.PROGRESS, done=done, total=total))
    handler.handle(_record("Complete log(s): /p/.snakemake/log/x.snakemake.log"))
    handler.handle(_record("Elapsed time: 0:01:00.5"))
    handler.close()
    return handler.stream.getvalue().splitlines()


def test_snakemake_finds_the_plugin_with_its_settings():
    entry = LoggerPluginRegistry().get_plugin("banditbench")
    assert entry.log_handler is plugin.LogHandler and entry.settings_cls is plugin.LogHandlerSettings
    assert entry.get_cli_arg("interval") == "--logger-banditbench-interval"
    profile = yaml.safe_load((ROOT / "profiles/default/config.yaml").read_text())
    assert profile["logger"] == ["banditbench"]


def test_off_a_terminal_progress_is_printed_at_every_tenth_or_after_the_interval():
    handler = _handler(interval=60)
    # 19 jobs: 1 (5 %), 2 (10 %), 3 (15 %) after 100 s, 4 (21 %), 19
    lines = _run(handler, [(10, 1), (20, 2), (120, 3), (125, 4), (240, 19)])
    assert lines[0] == "19 jobs to run (15 simulate, 3 aggregate, 1 all)"
    shown = [PROGRESS.match(line) for line in lines[1:-1]]
    assert all(shown), lines
    assert [int(m.group(1)) for m in shown] == [2, 3, 4, 19]  # 1: not yet 10 % nor 60 s; 3: 100 s after 2
    assert "2/19 jobs (10%), 6.0 jobs/min, ETA 0:02:50, elapsed 0:00:20" == lines[1]
    assert lines[-1] == "Done: 19/19 jobs in 0:04:00 (4.8 jobs/min); full log: /p/.snakemake/log/x.snakemake.log"


def test_a_finished_run_names_where_its_results_are(monkeypatch):
    monkeypatch.setenv(console.RUN_VAR, "default")
    lines = _run(_handler(interval=60), [(240, 19)])
    assert lines[-1] == (
        "Done: 19/19 jobs in 0:04:00 (4.8 jobs/min); results in results/default/; full log: /p/.snakemake/log/x.snakemake.log"
    )


def test_on_a_terminal_the_progress_line_is_rewritten_in_place(monkeypatch):
    monkeypatch.setattr(console, "TICK_SECONDS", 3600)
    handler = _handler(tty=True)
    handler.handle(_record("Job stats:", event=LogEvent.RUN_INFO, stats=STATS))
    handler.clock.now += 30
    handler.handle(_record(event=LogEvent.PROGRESS, done=3, total=19))
    handler.handle(_record("a warning", level=logging.WARNING))
    handler.clock.now += 30
    handler.handle(_record(event=LogEvent.PROGRESS, done=19, total=19))
    handler.handle(_record("Elapsed time: 0:01:00"))
    handler.close()
    out = handler.stream.getvalue()
    # every redraw returns to the start of the line and clears it; whole lines end in a newline
    assert (
        out.count("\r\033[K3/19 jobs (15%), 6.0 jobs/min, ETA 0:02:40, elapsed 0:00:30") == 2
    )  # again below the warning
    assert "\r\033[Ka warning\n" in out
    assert out.endswith("\r\033[KDone: 19/19 jobs in 0:01:00 (19.0 jobs/min)\n")
    assert "\n19/19" not in out  # the 100 % line is overwritten, not printed


class _Terminal(io.StringIO):
    def fileno(self):
        return 1


@pytest.mark.parametrize(("columns", "shown"), [(0, None), (1, None), (40, 39), (200, None)])
def test_the_progress_line_is_cut_to_the_terminal_or_whole_where_it_reports_no_width(monkeypatch, columns, shown):
    """A terminal reporting 0 (or a few) columns gets the whole line (120 columns), not one cut short."""
    monkeypatch.setattr(console, "TICK_SECONDS", 3600)
    monkeypatch.setattr(console.os, "get_terminal_size", lambda fd=None: console.os.terminal_size((columns, 24)))
    handler = _handler(tty=True)
    handler.stream = _Terminal()
    handler.handle(_record("Job stats:", event=LogEvent.RUN_INFO, stats=STATS))
    handler.clock.now += 30
    handler.handle(_record(event=LogEvent.PROGRESS, done=3, total=19))
    line = "3/19 jobs (15%), 6.0 jobs/min, ETA 0:02:40, elapsed 0:00:30"
    assert handler.stream.getvalue().endswith("\r\033[K" + line[:shown])
    handler.close()


def test_warnings_and_errors_are_printed_in_full_once_and_chatter_is_left_to_the_full_log():
    handler = _handler()
    note = "results/runs/a/0.npz: not a valid result file (bad CRC); moved to results/runs/a/0.npz.corrupt"
    handler.handle(_record("Assuming unrestricted shared filesystem usage."))
    handler.handle(_record("Building DAG of jobs..."))
    handler.handle(_record(note, level=logging.WARNING))
    handler.handle(_record("SNAKEMAKE\n===", event=LogEvent.WORKFLOW_STARTED))
    handler.handle(_record("Provided cores: 2", event=LogEvent.RESOURCES_INFO))
    handler.handle(_record("Job stats:", event=LogEvent.RUN_INFO, stats=STATS))
    handler.handle(_record("Select jobs to execute..."))
    handler.handle(
        _record(" Rule: aggregate", event=LogEvent.JOB_INFO, jobid=3, rule_name="aggregate", input=["x"] * 9)
    )
    handler.handle(_record("Job 3 has been submitted with SLURM jobid 77 (log: x)."))
    handler.handle(_record("same", level=logging.WARNING))
    handler.handle(_record("same", level=logging.WARNING))
    handler.handle(_record("Exiting because a job execution failed.", level=logging.ERROR))
    handler.handle(_record("Elapsed time: 0:00:01"))
    handler.close()
    lines = handler.stream.getvalue().splitlines()
    assert lines == [
        note,
        "19 jobs to run (15 simulate, 3 aggregate, 1 all)",
        "same",
        "Exiting because a job execution failed.",
        "Stopped: 0/19 jobs done, after 0:00:00 (1 repeated warnings not shown)",
    ]


def test_before_and_without_a_run_snakemake_messages_are_shown():
    handler = _handler()
    for message in ("Nothing to be done (all requested files are present and up to date).", "Report created."):
        handler.handle(_record(message))
    handler.close()
    assert handler.stream.getvalue().splitlines() == [
        "Nothing to be done (all requested files are present and up to date).",
        "Report created.",
    ]


def test_a_failed_job_is_one_block_naming_rule_wildcards_and_log(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "logs/simulate/duel/ldb/seeds_0-1.log"
    log.parent.mkdir(parents=True)
    log.write_text("Traceback (most recent call last):\n  ...\nValueError: the matrix is singular\n\n")
    rel = str(log.relative_to(tmp_path))
    handler = _handler()
    handler.handle(_record("Job stats:", event=LogEvent.RUN_INFO, stats=STATS))
    wildcards = {"experiment": "duel", "algorithm": "ldb"}
    inputs = [f"src/banditbench/m{i}.py" for i in range(500)]
    info = dict(jobid=7, rule_name="simulate_seeds_0_to_1", wildcards=wildcards, log=[rel], input=inputs)
    handler.handle(_record(" Rule: simulate_seeds_0_to_1, Jobid: 7", event=LogEvent.JOB_INFO, **info))
    command = "set -euo pipefail; python -m banditbench run-block --cell '" + "x" * 5000 + "'"
    handler.handle(
        _record(
            f'RuleException:\nCalledProcessError in file "/p/workflow/rules/simulate.smk", line 55:\n'
            f"Command '{command}' returned non-zero exit status 1.",
            level=logging.ERROR,
            event=LogEvent.ERROR,
            exception="RuleException",
        )
    )
    error = dict(jobid=7, rule_name="simulate_seeds_0_to_1", rule_msg=None, input=inputs, log=[rel], aux={})
    handler.handle(
        _record("Error in rule simulate_seeds_0_to_1, jobid: 7", logging.ERROR, event=LogEvent.JOB_ERROR, **error)
    )
    handler.clock.now += 12
    handler.handle(_record(event=LogEvent.PROGRESS, done=2, total=19))
    handler.close()
    lines = handler.stream.getvalue().splitlines()
    assert lines[1:6] == [
        "Job failed: rule simulate_seeds_0_to_1 (jobid 7)",
        "    wildcards: experiment=duel, algorithm=ldb",
        f"    log: {rel}",
        "    last line: ValueError: the matrix is singular",
        '    error: RuleException: CalledProcessError in file "/p/workflow/rules/simulate.smk", line 55: '
        "its command exited with status 1",
    ]
    assert lines[6] == "2/19 jobs (10%), 1 failed, 10.0 jobs/min, ETA 0:01:42, elapsed 0:00:12"
    assert lines[-1] == "Stopped: 2/19 jobs done, 1 failed, after 0:00:12"
    assert "m499.py" not in handler.stream.getvalue() and max(map(len, lines)) < 200


def test_a_failed_group_job_names_each_of_its_jobs_and_the_cluster_log(tmp_path, monkeypatch):
    """As the Slurm executor reports a failed group job: the group, then each of its jobs (all marked failed)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs/0_to_1.log").write_text("banditbench 0.1.0 from src\nRuntimeError: injected failure\n")
    (tmp_path / "logs/2.log").write_text("")  # not started
    handler = _handler()
    handler.handle(_record("Job stats:", event=LogEvent.RUN_INFO, stats=STATS))
    for jobid, seeds in ((4, "0_to_1"), (5, "2")):
        rule = f"simulate_seeds_{seeds}"
        info = dict(jobid=jobid, rule_name=rule, wildcards={"algorithm": "ldb"}, log=[f"logs/{seeds}.log"])
        handler.handle(_record(f" Rule: {rule}", event=LogEvent.JOB_INFO, **info))
    infos = [dict(rule_name=f"simulate_seeds_{seeds}", jobid=jobid) for jobid, seeds in ((4, "0_to_1"), (5, "2"))]
    group = dict(groupid="simulations", aux_logs=["slurm_logs/group_simulations/77.log"], job_error_info=infos)
    handler.handle(_record("Error in group simulations", logging.ERROR, event=LogEvent.GROUP_ERROR, **group))
    for jobid, seeds in ((4, "0_to_1"), (5, "2")):
        error = dict(jobid=jobid, rule_name=f"simulate_seeds_{seeds}", log=[f"logs/{seeds}.log"], aux={}, indent=True)
        handler.handle(_record("Error in rule", logging.ERROR, event=LogEvent.JOB_ERROR, **error))
    handler.close()
    lines = handler.stream.getvalue().splitlines()
    assert lines[1:] == [
        "Group job failed: simulations (2 jobs, each listed below)",
        "    log: slurm_logs/group_simulations/77.log",
        "    rule simulate_seeds_0_to_1 (jobid 4), algorithm=ldb; log: logs/0_to_1.log",
        "        last line: RuntimeError: injected failure",
        "    rule simulate_seeds_2 (jobid 5), algorithm=ldb; log: logs/2.log",
        "Stopped: 0/19 jobs done, 2 failed, after 0:00:00",
    ]


@pytest.mark.parametrize(
    "flag",
    [dict(dryrun=True, stdout=True), dict(printshellcmds=True), dict(verbose=True), dict(quiet={Quietness.HOST})],
)
def test_flags_asking_for_snakemakes_output_get_it_unchanged(flag, capsys):
    handler = _handler(**flag)
    assert handler.passthrough
    info = dict(
        jobid=1,
        rule_name="aggregate",
        rule_msg=None,
        local=False,
        is_checkpoint=False,
        input=["results/runs/a/0.npz"],
        output=["results/tables/a.csv"],
        log=[],
        benchmark=None,
        reason="Missing output files",
        wildcards={},
        priority=0,
        threads=1,
        resources={},
        indent=False,
    )
    handler.handle(_record(" Rule: aggregate, Jobid: 1", event=LogEvent.JOB_INFO, **info))
    handler.handle(_record("Job stats:\njob  count\n", event=LogEvent.RUN_INFO, stats=STATS))
    handler.close()
    out = capsys.readouterr()
    text = out.out if flag.get("stdout") else out.err
    assert "    input: results/runs/a/0.npz" in text and "Job stats:" in text


# --- end to end: Snakemake with the default profile on a copy of the project -----------------------------

GRID = {
    "seeds": None,
    "horizon": None,
    "experiments": {
        "tinylog": {
            "environment": {
                "name": "synthetic_logistic",
                "params": {"latent": "h1", "dimension": 4, "n_arms": 3, "n_contexts": None},
            },
            "horizon": 40,
            "seeds": 2,
            "paired": False,
            "algorithms": {"logistic_ucb1": {"policy": "logistic_ucb1"}, "random": {"policy": "random_arm"}},
            "delays": {"none": {"kind": "none"}},
        }
    },
}
JOBS = 10  # 2 algorithms x 2 seeds, aggregate_unpaired, timing, compute, interactive, run_info, all


def _widest(console: str, work) -> int:
    """The longest line, the project's folder (a long temporary path) counted as one character."""
    return max(len(line.replace(str(work), ".")) for line in console.splitlines())


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """The tiny grid run once with the default profile (its stderr is not a terminal, as in CI)."""
    work = copy_project(tmp_path_factory.mktemp("console"), GRID)
    run = smk(work, timeout=600)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    return work, run


@pytest.mark.slow
def test_the_console_of_a_run_is_short_with_progress_eta_and_a_final_line(finished):
    work, run = finished
    lines = run.stderr.splitlines()
    # the widest line is the plan's: the rules' counts (at most 120 characters, planned_summary) and the log's path
    assert len(lines) <= 3 + JOBS and _widest(run.stderr, work) <= 180, run.stderr
    [log] = (work / ".snakemake/log").glob("*.snakemake.log")
    assert (
        lines[1]
        == f"{JOBS} jobs to run (4 simulate, 1 aggregate_unpaired, 1 timing, 1 compute, 1 interactive, 1 run_info, 1 all); "
        f"full log: {log}"
    )
    progress = [m for m in map(PROGRESS.match, lines) if m]
    assert progress and all(int(m.group(2)) == JOBS for m in progress)
    assert f"{JOBS}/{JOBS} jobs (100%)" in lines[-2]
    assert re.fullmatch(
        rf"Done: {JOBS}/{JOBS} jobs in \d+:\d\d:\d\d \([\d.]+ jobs/min\); results in results/[^/ ]+/; "
        rf"full log: {re.escape(str(log))}",
        lines[-1],
    )
    assert "input:" not in run.stderr and "localrule" not in run.stderr and not run.stdout


@pytest.mark.slow
def test_the_full_log_keeps_every_detail(finished):
    work, _ = finished
    [log] = (work / ".snakemake/log").glob("*.snakemake.log")
    text = log.read_text()
    assert text.count("localrule simulate_seed_") == 4 and "    input: src/banditbench/" in text
    assert "    wildcards: experiment=tinylog, algorithm=random, delay=none, budget=none" in text
    assert f"{JOBS} of {JOBS} steps (100%) done" in text and "Job stats:" in text


@pytest.mark.slow
def test_a_dry_run_prints_snakemakes_job_stats(finished):
    work, _ = finished
    dry = smk(work, "-n", "--forceall")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert planned(dry.stdout) == {
        "simulate_seed_0": 2,
        "simulate_seed_1": 2,
        "aggregate_unpaired": 1,
        "timing": 1,
        "compute": 1,
        "interactive": 1,
        "run_info": 1,
        "all": 1,
    }
    assert "jobs to run" not in dry.stdout + dry.stderr


@pytest.mark.slow
def test_a_failing_job_is_one_block_naming_its_log(tmp_path):
    work = copy_project(tmp_path, GRID)
    policy = work / "src/banditbench/policies/baselines.py"
    text = policy.read_text()
    draw = "        return int(self.rng.integers(self.n_arms or len(arms)))"
    assert draw in text
    policy.write_text(text.replace(draw, '        raise RuntimeError("injected failure")'))
    run = smk(work, "--cores", "1", timeout=600)
    assert run.returncode != 0
    block = run.stderr.split("Job failed: rule ", 1)[1].split("\n")
    assert re.fullmatch(r"simulate_seed_[01] \(jobid \d+\)", block[0]), run.stderr
    assert re.fullmatch(
        r"    wildcards: experiment=tinylog, algorithm=random, delay=none, budget=none, cell=[0-9a-f]{12}", block[1]
    )
    [log] = re.fullmatch(
        r"    log: (logs/simulate/tinylog/random/none/none/[0-9a-f]{12}/seed_[01]\.log)", block[2]
    ).groups()
    assert (work / log).is_file() and block[3] == "    last line: RuntimeError: injected failure"
    assert "its command exited with status 1" in block[4]
    assert "input:" not in run.stderr and _widest(run.stderr, work) <= 180
    stopped = r"^Stopped: \d/10 jobs done, 1 failed, after \d+:\d\d:\d\d; outputs go to results/[^/ ]+/; full log: "
    assert re.search(stopped, run.stderr, re.M)
    assert "WorkflowError" not in run.stderr  # Snakemake's closing error is not repeated after that line
    # without the profile: Snakemake's own console
    bare = smk(work, "--workflow-profile", "none", "--cores", "1", timeout=600)
    assert bare.returncode != 0 and "Error in rule simulate_seed_" in bare.stderr and "input:" in bare.stderr


def test_the_lockstep_simulate_rules_count_as_simulate_jobs():
    stats = {"simulate_variants_0": 2, "simulate_variants_11": 1, "simulate_seed_3": 1, "aggregate": 1, "total": 5}
    assert console.planned_summary(stats) == "4 simulate, 1 aggregate"
