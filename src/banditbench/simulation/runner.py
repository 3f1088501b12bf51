"""The one simulation loop (:func:`simulate`), its seed-batched form (:func:`simulate_block`), and the paths that run
configuration cells on them (:func:`run_single_seed`, :func:`run_seed_batched`); which engine plays a cell is chosen
in :mod:`banditbench.simulation.job`.

Each round: feedback whose round plus delay has come is handed to the policy, the
policy acts on the environment's public context, the environment answers with
feedback and the round's truth values (logged; an environment that ``keeps_truth``
keeps them itself and hands them over at the end), and the feedback is queued for its
arrival round unless the delay's window censors it.  Policies never see the
environment's hidden truth, and environments never see the policy.

Randomness: the job seed feeds a :class:`numpy.random.SeedSequence` that is
split into three independent streams — environment, delays, policy — so a job
is reproducible bit for bit and changing the policy does not change what the
environment draws (contexts, noise) or the delays.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Mapping, Sequence

import numpy as np

from .. import __version__
from .. import params as param_checks
from .. import registry
from ..api import Environment, Policy, Problem
from .delays import DelayModel, make_delay
from ..errors import ENVIRONMENT_PARAMS, POLICY_PARAMS, ConfigError, Diverged, component_path, key_path, rerooting


#: the loop keeps each round's truth values and writes them into the metric arrays this
#: many rounds at a time (a numpy item assignment per metric and round costs more)
LOG_BLOCK = 4096


def simulate(
    env: Environment,
    policy: Policy,
    delay: DelayModel,
    horizon: int,
    delay_rng: np.random.Generator,
    progress: bool = False,
    compiled: bool = True,
) -> dict[str, np.ndarray]:
    """Run ``horizon`` rounds; return one array per metric of ``env.metrics``.

    Feedback of round ``s`` with delay ``D_s`` is delivered at the start of round
    ``s + max(D_s, 1)`` unless the window censors it (``D_s > M``).  The delays are
    drawn up front, so the loop knows each round's arrival round when the feedback is
    made and files it in that round's bucket (one list per arrival round; items of a
    bucket in the order of their rounds): O(1) per round, no heap.  When every
    feedback arrives at the start of the next round (no delay), a loop without
    buckets hands each round's feedback to the next: the same calls in the same order.
    A replay environment answers ``(None, None)`` when it skips a logged event (the
    action was not the logged one); the round is then not consumed and the policy acts
    again, in the same round, on the environment's next context.  A policy that asks for a
    context form (``Policy.context_form``) gets its contexts in that form.  A policy that can play
    the whole run against this environment in compiled code (:meth:`Policy.run_compiled`, the
    same decisions) does so unless ``compiled`` is false (for a cell, :func:`banditbench.simulation.job.engine`
    decides).

    Divergence: a policy whose scores, estimates or confidence widths stop being finite raises
    :class:`~banditbench.errors.Diverged` (:func:`banditbench.api.choose`, :func:`banditbench.api.check_finite`)
    instead of playing the first NaN arm.  The loop then ends the run at that round: the error, re-raised, has
    ``round`` (the round whose decision failed; rounds before it were played) and ``series`` (the metrics of
    those rounds, NaN from ``round`` on).  The check costs the loop nothing per round (a ``try`` around it).
    """
    if policy.context_form is not None:
        env.use_context_form(policy.context_form)
    arrival = delay.arrival_rounds(delay.sample(delay_rng, horizon), horizon)
    log = _TruthLog(env, horizon)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=horizon, desc="rounds", unit="rd", file=sys.stderr)
    if compiled and "compiled" in policy.engines and policy.run_compiled(env, arrival, horizon):
        if bar is not None:
            bar.update(horizon)
            bar.close()
        return log.series()
    if arrival[-1] == 0 and np.array_equal(arrival[:-1], np.arange(2, horizon + 1)):
        rounds = _next_round_loop(env, policy, log.play)
    else:
        rounds = _queued_loop(env, policy, log.play, arrival.tolist())
    try:
        for first in range(0, horizon, LOG_BLOCK):  # a block of rounds at a time
            last = min(first + LOG_BLOCK, horizon)
            rounds(first + 1, last + 1)
            log.flush(last)
            if bar is not None:
                bar.update(last - first)
    except Diverged as err:  # round err.round was not played: the rounds before it were
        log.flush(err.round - 1)
        err.series = log.series(played=err.round - 1)
        raise
    finally:
        if bar is not None:
            bar.close()
    return log.series()


#: what :attr:`_TruthLog.play` answers when a replay environment skipped an event
SKIP = object()


def _next_round_loop(env: Environment, policy: Policy, play):
    """The rounds ``start .. stop - 1`` when each round's feedback arrives at the start of the next round."""
    observe, act, context = policy.observe, policy.act, env.context if env.has_context else None
    feedback = None

    def rounds(start: int, stop: int) -> None:
        nonlocal feedback
        last, t = feedback, start
        try:
            for t in range(start, stop):
                if last is not None:
                    observe(t, [last])
                last = play(t, act(t, context(t) if context else None))
                while last is SKIP:  # a replay environment skipped the event: next one, same round
                    last = play(t, act(t, context(t) if context else None))
        except Diverged as err:
            err.round = t
            raise
        feedback = last

    return rounds


def _queued_loop(env: Environment, policy: Policy, play, arrival: list[int]):
    """The rounds ``start .. stop - 1``, each round's feedback filed in the bucket of its arrival round."""
    observe, act, context = policy.observe, policy.act, env.context if env.has_context else None
    pending: list[list | None] = [None] * (len(arrival) + 1)

    def rounds(start: int, stop: int) -> None:
        t = start
        try:
            for t, due in zip(range(start, stop), arrival[start - 1 : stop - 1]):
                arrived = pending[t]
                if arrived is not None:
                    pending[t] = None
                    observe(t, arrived)
                feedback = play(t, act(t, context(t) if context else None))
                while feedback is SKIP:  # a replay environment skipped the event: next one, same round
                    feedback = play(t, act(t, context(t) if context else None))
                if due and feedback is not None:
                    bucket = pending[due]
                    if bucket is None:
                        pending[due] = [feedback]
                    else:
                        bucket.append(feedback)
        except Diverged as err:
            err.round = t
            raise

    return rounds


class _TruthLog:
    """Each round's truth values, one array per metric.

    An environment that keeps them itself (``keeps_truth``) is played through
    :meth:`Environment.play` and hands them over at the end (:meth:`Environment.truth_log`);
    otherwise :attr:`play` keeps the mapping :meth:`Environment.step` returns and
    :meth:`flush` writes a block of rounds into the arrays at a time (a numpy item
    assignment per metric and round costs more).
    """

    def __init__(self, env: Environment, horizon: int):
        self.env, self.horizon, self.block = env, horizon, []
        if env.keeps_truth:
            self.play = env.play
            self.logs: dict[str, np.ndarray] | None = None
            return
        self.logs = {name: np.zeros(horizon) for name in env.metrics}
        step, keep = env.step, self.block.append

        def play(t: int, action):
            feedback, truth = step(t, action)
            if truth is None:
                return SKIP
            keep(truth)
            return feedback

        self.play = play

    def flush(self, t: int) -> None:
        """Write the kept truth values of rounds ``t - len(block) + 1 .. t`` into the metric arrays."""
        if self.logs is None:
            return
        block, logs = self.block, self.logs
        first = t - len(block)
        try:
            if set(map(len, block)) != {len(logs)}:
                raise KeyError
            for name, series in logs.items():
                series[first:t] = [truth[name] for truth in block]
        except KeyError:
            wrong = next(k for k, truth in enumerate(block) if sorted(truth) != sorted(logs))
            raise ValueError(
                f"{type(self.env).__name__}.step returned the values {sorted(block[wrong])} in round "
                f"{first + wrong + 1}; its metrics are {sorted(logs)}"
            ) from None
        block.clear()

    def series(self, played: int | None = None) -> dict[str, np.ndarray]:
        """One array of ``horizon`` values per metric; a run that stopped after ``played`` rounds (it
        diverged) has NaN in the rounds it did not play."""
        n = self.horizon if played is None else played
        if self.logs is not None:
            for values in self.logs.values():
                values[n:] = np.nan
            return self.logs
        logs = {name: np.asarray(values, dtype=np.float64) for name, values in self.env.truth_log(n).items()}
        if sorted(logs) != sorted(self.env.metrics) or any(v.shape != (n,) for v in logs.values()):
            raise ValueError(
                f"{type(self.env).__name__}.truth_log returned {sorted(logs)} of shapes "
                f"{[v.shape for v in logs.values()]}; its metrics are {sorted(self.env.metrics)}, "
                f"{n} rounds each"
            )
        if n < self.horizon:
            logs = {name: np.concatenate([v, np.full(self.horizon - n, np.nan)]) for name, v in logs.items()}
        return {name: logs[name] for name in self.env.metrics}


def memory_bytes(env_cls: type[Environment], horizon: int) -> int:
    """Bytes of the loop's own per-round arrays: the delays and their arrival rounds (an array, and a
    list of Python integers of about 36 bytes each), the pending-feedback slots, and each metric's log,
    which saving the result copies twice (float64 array and its serialised bytes)."""
    return horizon * (8 + 8 + 36 + 8 + 3 * 8 * len(env_cls.metrics))


def build(cell: Mapping[str, Any]) -> tuple[Environment, Policy, DelayModel, np.random.Generator]:
    """Instantiate environment, policy and delay model of a resolved config cell.

    The parameter values are checked against their declarations first (:mod:`banditbench.params`,
    as the config validator did before the job) and the relations of each class's ``check_params``; the
    constructors do not check them again.  A :class:`~banditbench.errors.ConfigError` names its key relative to the cell
    (``policy.params.lam``); it is re-raised with the key's full config path
    (``experiments.<experiment>.algorithms.<label>.params.lam``).
    """
    experiment = cell.get("experiment")
    env_where = component_path(experiment, "environment")
    pol_where = component_path(experiment, "policy", cell.get("algorithm"))
    horizon, seed = cell.get("horizon"), cell.get("seed")
    for key, value, low in (("horizon", horizon, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(f"{key}: the cell's {key} must be an integer >= {low}, got {value!r}")
    env_seq, delay_seq, policy_seq = np.random.SeedSequence(seed).spawn(3)
    delay = make_delay(cell["delay"], where=key_path("experiments", experiment, "delays", cell.get("delay_label")))
    registry.use_plugins(cell.get("plugins", ()), add=True)
    env_cls = registry.get("environment", cell["environment"]["name"], key_path(env_where, "name")).load()
    pol_cls = registry.get("policy", cell["policy"]["name"], key_path(pol_where, "policy")).load()
    env_params = dict(cell["environment"].get("params", {}))
    if cell.get("budget") is not None:
        env_params["budget"] = cell["budget"]
    if env_cls.feedback_kinds:
        env_params["feedback_kind"] = pol_cls.feedback_kind
    pol_params = dict(cell["policy"].get("params", {}))
    from ..data.paths import buildable

    with rerooting("environment", env_where):
        param_checks.check(
            env_cls, env_params, ENVIRONMENT_PARAMS, data_root=cell.get("data_root"), buildable=buildable
        )
        env_cls.check_params(registry.values(env_cls, env_params), horizon)
        env = env_cls(env_seq, horizon=horizon, **env_params)
    problem = Problem(horizon=horizon, rho=delay.rho, window=delay.window, info=env.public_info())
    with rerooting("policy", pol_where):
        param_checks.check(pol_cls, pol_params, POLICY_PARAMS)
        pol_cls.check_params(registry.values(pol_cls, pol_params), horizon)
        policy = pol_cls(problem, np.random.default_rng(policy_seq), **pol_params)
    return env, policy, delay, np.random.default_rng(delay_seq)


def _full_key_path(err: ConfigError, cell: Mapping[str, Any]) -> ConfigError:
    """``err`` with its cell-relative key path (``horizon``, ``environment...``, ``policy...``) made the full one."""
    experiment = cell.get("experiment")
    roots = {
        "horizon": key_path("experiments", experiment, "horizon"),
        "environment": component_path(experiment, "environment"),
        "policy": component_path(experiment, "policy", cell.get("algorithm")),
    }
    root = str(err).split(":", 1)[0].split(".", 1)[0]
    return err.rerooted(root, roots[root]) if root in roots else err


class SkippedInBlock(RuntimeError):
    """A replay environment skipped an event inside a seed-batched block (:func:`simulate_block`): the
    block cannot play the round in lockstep (:class:`Declined`), and its seeds run one at a time."""


def _stop_diverged(batched, stopped: dict[int, int], logs: Sequence[_TruthLog], t: int) -> None:
    """Stop the members of a block whose scores stopped being finite at round ``t``
    (``batched.diverged``): their error's ``round`` set, ``stopped`` gains them, their logs flushed to ``t - 1``."""
    for s, err in batched.diverged.items():
        if s not in stopped:
            err.round, stopped[s] = t, t - 1
            logs[s].flush(t - 1)


def simulate_block(
    envs: Sequence[Environment],
    batched,
    delays: Sequence[DelayModel],
    horizon: int,
    delay_rngs: Sequence[np.random.Generator],
) -> list[dict[str, np.ndarray]]:
    """:func:`simulate` for a block of seeds in lockstep: one environment, delay model and feedback
    queue per seed, one seed-batched policy (:class:`banditbench.api.BatchedPolicy`)
    that observes and acts for all seeds at once.  Each seed's environment sees the same calls in the
    same order as in :func:`simulate` (its delays drawn up front from its own stream, its feedback
    filed in the bucket of its arrival round), so a seed's environment and delay draws do not depend
    on the block.  Replay environments, which may skip a round, are not batched (:class:`SkippedInBlock`).

    A member whose scores stop being finite (``batched.diverged``, :meth:`banditbench.api.BatchedPolicy.member_diverged`)
    is not played from that round on, as :func:`simulate` stops a single run: its error's ``round`` is set, its
    series hold NaN from that round, and the other members play on (all diverged: the block stops)."""
    S = len(envs)
    arrivals = [
        delay.arrival_rounds(delay.sample(rng, horizon), horizon).tolist() for delay, rng in zip(delays, delay_rngs)
    ]
    logs = [_TruthLog(env, horizon) for env in envs]
    plays = [log.play for log in logs]
    contexts = [env.context if env.has_context else None for env in envs]
    pending: list[list[list | None]] = [[None] * (horizon + 1) for _ in range(S)]
    stopped: dict[int, int] = {}  # diverged members: the rounds they played
    for first in range(0, horizon, LOG_BLOCK):
        if len(stopped) == S:
            break
        last = min(first + LOG_BLOCK, horizon)
        for t in range(first + 1, last + 1):
            arrived = []
            for s in range(S):
                items = pending[s][t]
                pending[s][t] = None
                arrived.append(items or [])
            batched.observe_all(t, arrived)
            actions = batched.act_all(t, [context(t) if context else None for context in contexts])
            if len(batched.diverged) > len(stopped):  # a member's scores stopped being finite: stop playing it
                _stop_diverged(batched, stopped, logs, t)
                if len(stopped) == S:
                    break
            for s in range(S):
                if stopped and s in stopped:
                    continue
                feedback = plays[s](t, actions[s])
                if feedback is SKIP:
                    raise SkippedInBlock(
                        f"{type(envs[s]).__name__} skipped round {t}: replay environments are not run seed-batched"
                    )
                due = arrivals[s][t - 1]
                if due and feedback is not None:
                    bucket = pending[s][due]
                    if bucket is None:
                        pending[s][due] = [feedback]
                    else:
                        bucket.append(feedback)
        for s, log in enumerate(logs):
            if s not in stopped:
                log.flush(last)
    return [log.series(stopped.get(s)) for s, log in enumerate(logs)]


def _meta(
    cell: Mapping[str, Any], env: Environment, delay: DelayModel, engine: str, diverged: Diverged | None = None
) -> dict:
    meta = {
        "cell": dict(cell),
        "banditbench_version": __version__,
        "numpy_version": np.__version__,
        "seed": int(cell["seed"]),
        "rho": delay.rho,
        "metrics": [env.primary_metric, *(m for m in env.metrics if m != env.primary_metric)],
        "summary": env.summary() if diverged is None else _unplayed_summary(env),
        # which implementation played the run: the single-seed loop, or the seed-batched one (the
        # same equations, other rounding; a seed's batched result does not depend on its block)
        "engine": engine,
    }
    if diverged is not None:  # only then: the files of runs that did not diverge keep their bytes
        meta["diverged"] = {"round": int(diverged.round), "reason": diverged.reason}
        print(diverged_line(meta), file=sys.stderr)
    return meta


def _unplayed_summary(env: Environment) -> dict[str, float]:
    """The summary of a run that stopped early (it diverged): the environment's names, NaN values (a stopping
    time or a late-rounds rate of a cut run means nothing; the tables leave diverged runs out)."""
    try:
        names = env.summary()
    except (ArithmeticError, ValueError, IndexError):  # e.g. a rate over no rounds
        return {}
    return {name: float("nan") for name in names}


def diverged_line(meta: Mapping[str, Any]) -> str:
    """The one line that names a diverged run (``meta["diverged"]``): experiment, algorithm label and policy,
    delay, budget, seed, the round and what was not finite; the runner prints it to stderr (a simulate job's
    log) when it records the run."""
    cell, diverged = meta["cell"], meta["diverged"]
    budget = "" if cell.get("budget") is None else f" / budget {cell['budget']}"
    return (
        f"banditbench: diverged: {cell['experiment']} / {cell['algorithm']} (policy {cell['policy']['name']}) / "
        f"delay {cell.get('delay_label')}{budget} / seed {cell['seed']}: diverged at round {diverged['round']} "
        f"of {cell['horizon']} ({diverged['reason']}); recorded as diverged: rounds {diverged['round']}-"
        f"{cell['horizon']} not played, the run left out of the tables' statistics"
    )


def policy_class(cell: Mapping[str, Any]) -> type[Policy]:
    """The cell's policy class (its plugin module imported first, where the cell names one)."""
    registry.use_plugins(cell.get("plugins", ()), add=True)
    return registry.get("policy", cell["policy"]["name"]).load()


def lockstep_key(cell: Mapping[str, Any]) -> tuple:
    """What the members of one seed-batched block must share (:func:`banditbench.simulation.job.run_members`): the
    cell but its seed and algorithm label, and the policy's parameter values (defaults filled in) but those its
    batched engine takes per member (its :class:`~banditbench.api.SeedBatched` declaration's ``per_member``);
    policies of one ``family`` (e.g. seed 001's NVLDB / NLDB variants) may differ in their class too.  Cells with
    equal keys can run in one block; a policy without a seed-batched engine shares a block only with other seeds
    of its own cell (they run one after the other)."""
    cls = policy_class(cell)
    if "seed-batched" not in cls.engines:
        return ("alone", json.dumps({k: v for k, v in cell.items() if k != "seed"}, sort_keys=True, default=str))
    # every parameter's value, defaults filled in: classes of one family may differ in a default
    values = registry.values(cls, cell["policy"].get("params", {}))
    declared = cls.engines["seed-batched"]
    params = {k: v for k, v in values.items() if k not in declared.per_member}
    rest = {k: v for k, v in cell.items() if k not in ("seed", "policy", "algorithm")}
    policy = declared.family or cell["policy"]["name"]
    return json.dumps(rest, sort_keys=True, default=str), policy, json.dumps(params, sort_keys=True, default=str)


class Declined(RuntimeError):
    """The seed-batched engine cannot play this block (:func:`run_seed_batched`); its message says why, and the
    members run one after the other (:func:`banditbench.simulation.job.run_members`)."""


def run_seed_batched(cells: Sequence[Mapping[str, Any]]) -> list[tuple[dict[str, np.ndarray], dict, dict]]:
    """Play a block's members (full cells, each with its ``seed``, of one :func:`lockstep_key`) in lockstep on their
    policy's seed-batched engine; one ``(series, meta, timing)`` per member, as :func:`run_single_seed`.

    Each member's policy, environment and delays are built as for :func:`run_single_seed` (each from its own seed's
    streams), then the policies are stacked (``Policy.batch``) and :func:`simulate_block` plays them.  Members whose
    environments show arm sets of another shape (a prompt task per seed, each with its own number of instructions)
    are stacked in separate groups, played one group after the other.  A member's result does not depend on the
    other members; it is not the single-seed path's result bit for bit (``meta["engine"]`` says which ran).
    Raises :class:`Declined` when ``batch`` returns None (it refuses the parameter set) or a replay environment
    skips an event (:class:`SkippedInBlock`).  Timing: the block's wall and CPU time shared equally among its
    members, with ``batched_block`` the block size."""
    first = cells[0]
    start, start_cpu = time.perf_counter(), time.process_time()
    built = [build(c) for c in cells]
    envs, policies, delays, delay_rngs = (list(x) for x in zip(*built))
    for env, policy in zip(envs, policies):
        if policy.context_form is not None:
            env.use_context_form(policy.context_form)
    groups: dict[tuple, list[int]] = {}
    for s, env in enumerate(envs):
        info = env.public_info()
        groups.setdefault((info.get("n_arms"), info.get("dimension")), []).append(s)
    stacked = [(members, type(policies[0]).batch([policies[s] for s in members])) for members in groups.values()]
    if any(batched is None for _, batched in stacked):  # a parameter set the batched implementation refuses
        raise Declined("its seed-batched path declines these parameters (batch() returned None)")
    series: list[dict[str, np.ndarray]] = [{}] * len(cells)
    diverged: dict[int, Diverged] = {}
    for members, batched in stacked:
        try:
            played = simulate_block(
                [envs[s] for s in members],
                batched,
                [delays[s] for s in members],
                int(first["horizon"]),
                [delay_rngs[s] for s in members],
            )
        except ConfigError as err:
            raise _full_key_path(err, first) from None
        except SkippedInBlock:
            raise Declined("its replay environment skips events, which a block cannot") from None
        for s, one in zip(members, played):
            series[s] = one
        diverged.update({members[k]: err for k, err in batched.diverged.items()})
    S = len(cells)
    timing = {
        "wall_time_s": (time.perf_counter() - start) / S,
        "cpu_time_s": (time.process_time() - start_cpu) / S,
        "batched_block": S,
    }
    return [
        (series[s], _meta(cells[s], envs[s], delays[s], "seed-batched", diverged.get(s)), dict(timing))
        for s in range(S)
    ]


def run_single_seed(
    cell: Mapping[str, Any], progress: bool, compiled: bool
) -> tuple[dict[str, np.ndarray], dict, dict]:
    """Run one configuration cell on the single-seed path, the compiled engine allowed where ``compiled``
    (:func:`simulate`); return ``(series, meta, timing)`` ready for :func:`resultio.save_result`.

    A run whose policy diverges (:class:`~banditbench.errors.Diverged`: its scores, estimates or confidence
    widths stopped being finite) is recorded, not raised, here as on the seed-batched path: ``meta["diverged"]``
    holds ``{"round", "reason"}``, the series hold NaN from that round on, the summary NaN, and one line naming
    the run (:func:`diverged_line`) goes to stderr.  The job succeeds, so a grid goes on; the tuning
    (:mod:`banditbench.analysis.tuning`) never chooses a diverged pair and the tables count diverged seeds
    instead of averaging them (:mod:`banditbench.analysis.aggregate`)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    env, policy, delay, delay_rng = build(cell)
    diverged = None
    try:
        series = simulate(env, policy, delay, int(cell["horizon"]), delay_rng, progress=progress, compiled=compiled)
    except ConfigError as err:  # found mid-run (a replay log shorter than the horizon): the full key path
        raise _full_key_path(err, cell) from None
    except Diverged as err:
        series, diverged = err.series, err
    meta = _meta(cell, env, delay, "single-seed", diverged)
    # CPU time does not grow when other processes share the cores: grid timings are projected from it
    timing = {"wall_time_s": time.perf_counter() - start, "cpu_time_s": time.process_time() - start_cpu}
    return series, meta, timing
