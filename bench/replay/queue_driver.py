"""Replays a queue world's trace (bench/replay/queues.py) under one policy
against its own placementd: other tenants' jobs arrive and wait in every
pool, the trace's jobs join the queue of the pool each policy chooses and
start once the jobs ahead of them have, and the policies that know of pool
state report every pool's queue as an orchestrator would (before each plan,
and every report_every_s)."""

import heapq
import math
import random
import time

from placement.v1 import placement_pb2
from placement.v1 import pool_state_pb2

import queues as qlib
import start_calibration
from start_checks import LEVELS
import time_ranking
from driver import (REPLAY_EPOCH_S, _options, _oracle_gpu_counts,
                    union_options)
from execution import DAY_S, OUT_OF_MEMORY, run_job
from service import MICROS, Service


class QJobResult:
    def __init__(self, job, arrival):
        self.job = job
        self.kind = job.kind
        self.arrival = arrival
        self.pool = ""
        self.cost = 0.0
        self.start = None
        self.end = None
        self.completed = False
        self.placed = False
        # The chosen candidate's forecast: {p: seconds after arrival}.
        self.predicted = None
        # The same forecast before the pool's calibration, and a forecast
        # that knows the true run-time distributions (_ideal_forecast).
        self.predicted_raw = None
        self.predicted_ideal = None
        self.feasible = None  # deadline jobs: some option meets it in truth
        self.oom = False  # an attempt ran out of memory (then placed again)

    @property
    def wait_s(self):
        return None if self.start is None else self.start - self.arrival

    @property
    def finish_s(self):
        return None if self.end is None else self.end - self.arrival

    def met_deadline(self):
        return (self.kind == "deadline" and self.end is not None and
                self.completed and self.finish_s <= self.job.deadline_s)

    def delay_value(self):
        """What the finish cost a job with a value of time."""
        if self.kind != "value" or self.finish_s is None:
            return 0.0
        return self.job.value_per_hour * self.finish_s / 3600


class QueuePolicy:
    name = ""
    reports = False  # reports pool state to its placementd

    def plan(self, svc, job):
        raise NotImplementedError

    # Whether choose() is given each option's start as the ideal forecaster
    # sees it (PoolQueue.forecast_starts).
    ideal_starts = False

    def choose(self, job, options, truths, arrival, starts=None):
        """options: [(candidate, layout)] in rank order; truths: each
        option's (cost, run_s, start) as the world knows them; starts: each
        option's sorted draws of its wait by the ideal forecaster, where
        the policy asks for them."""
        return 0


class TimeAware(QueuePolicy):
    """The service with pool state: each job asks with its own objective
    and takes rank 1."""
    name = "service, time-aware"
    reports = True

    def plan(self, svc, job):
        if job.kind == "deadline":
            return svc.plan_with(job, "deadline", deadline_s=job.deadline_s)
        if job.kind == "value":
            return svc.plan_with(job, "delay",
                                 delay_per_hour=job.value_per_hour)
        return svc.plan_with(job, "cost")


class TimeBlind(QueuePolicy):
    """Today's service, which knows no queue: lowest cost, a deadline bounding
    the run alone (no candidate: the lowest-cost plan without it)."""
    name = "service, time-blind (today)"

    def plan(self, svc, job):
        if job.kind == "deadline":
            plan = svc.plan_with(job, "cost", deadline_s=job.deadline_s)
            if plan.candidates:
                return plan
        return svc.plan_with(job, "cost")


class IdealForecasts(TimeAware):
    """The service's plans, their candidates ranked again by the service's
    own rule for the job's objective with each start forecast replaced by
    the ideal forecaster's (_ideal_forecast: the tenants' true run-time
    distribution, every trace job's true run time): what the time-aware
    service's choices reach with a right forecast, short of knowing the
    draws as the oracle does."""
    name = "service, ideal start forecasts"
    ideal_starts = True

    def choose(self, job, options, truths, arrival, starts=None):
        if job.kind == "plain" or starts is None:
            return 0
        candidates = [c for c, _ in options]
        if job.kind == "deadline":
            return time_ranking.best(candidates, starts,
                                     deadline_s=job.deadline_s)
        return time_ranking.best(
            candidates, starts,
            delay_micros_per_hour=job.value_per_hour * MICROS)


def _true_best(job, truths, arrival):
    """The option the world says is best for the job's kind."""
    def key(i):
        cost, run_s, start = truths[i]
        finish = start + run_s - arrival
        if job.kind == "deadline":
            meets = finish <= job.deadline_s
            return (not meets, cost if meets else finish, finish)
        if job.kind == "value":
            return (cost + job.value_per_hour * finish / 3600, finish)
        return (cost, finish)
    usable = [i for i, t in enumerate(truths) if t is not None]
    return min(usable, key=key) if usable else None


class QueueOracle(QueuePolicy):
    """Knows every queue and every run time: among the cheaper and the
    faster configuration the service offers on each pool at every GPU
    count, the truly best for the job's kind."""
    name = "oracle (knows the queues)"

    def plan(self, svc, job):
        return None  # uses the union of cost and time plans (options_for)

    def choose(self, job, options, truths, arrival, starts=None):
        return _true_best(job, truths, arrival)


def _options_union(world, svc, job, card_memory, excluded=frozenset()):
    """Each pool's cheaper and faster configuration, once each, at the GPU
    count the planner chooses and at each of _oracle_gpu_counts: every
    layout the service would offer the job."""
    counts = [None]
    if not job.recipe.gpu_count:
        counts += _oracle_gpu_counts(world)
    plans = [svc.plan_with(job, objective, gpu_count=gpus)
             for gpus in counts for objective in ("cost", "time")]
    return union_options(world, svc, job, plans, excluded, card_memory)


def _truth(world, job, layout, pools, now):
    if layout.out_of_memory:
        return None
    attempts, completed = run_job(world, job.id, layout, job.steps)
    if not completed:
        return None
    return (sum(a.cost for a in attempts), sum(a.seconds for a in attempts),
            pools[layout.pool].true_start(layout.gpu_count, now))


def _ideal_forecast(pool, gpus, now, tenants, job_id):
    """{p: seconds} of a forecast that knows what a report cannot: the
    other tenants' true run-time distribution and each trace job's true run
    time. How often jobs start by its quantiles is what calibration can
    reach in this world's one draw of its queues."""
    draws = pool.forecast_starts(gpus, now, tenants,
                                 random.Random(f"{job_id}|ideal"))
    return {p: time_ranking.quantile_of_sorted(draws, p) for p in LEVELS}


def _state(pool, base, now):
    s = pool_state_pb2.PoolState(pool=pool.name,
                                 gpus_total=pool.capacity,
                                 gpus_allocated=pool.capacity - pool.free())
    s.observe_time.FromNanoseconds(int((base + now) * 1e9))

    def fill(msg, j, started, ended):
        msg.job_id = j.id
        msg.gpus = j.gpus
        msg.submit_time.FromNanoseconds(int((base + j.submit) * 1e9))
        if started:
            msg.start_time.FromNanoseconds(int((base + j.start) * 1e9))
        if ended:
            msg.end_time.FromNanoseconds(int((base + j.end) * 1e9))
        if j.plan_id:
            msg.plan_id = j.plan_id
    for j in pool.running:
        fill(s.running.add(), j, True, False)
    for j in pool.pending:
        fill(s.pending.add(), j, False, False)
    for j in pool.finished:
        fill(s.finished.add(), j, True, True)
    pool.finished = []
    return s


class QueueRun:
    def __init__(self, world, policy):
        self.world = world
        self.policy = policy
        self.jobs = []
        self.seconds = 0.0
        self.reports = 0
        self.raw_calibration = {}  # pool: (checked forecasts, {p: share})


class _Replay:
    """One policy's pass over the trace: the event loop's state."""

    def __init__(self, world, policy, svc, run):
        self.world, self.policy, self.svc, self.run = world, policy, svc, run
        self.q = world.queues
        # The replay's epoch (driver.py); another luck (--luck K) starts K
        # days later: other forecast draws too.
        self.base = REPLAY_EPOCH_S + world.luck * DAY_S
        caps = {p["name"]: p["nodes"] * p["gpus_per_node"] for p in world.pools}
        self.pools = {n: qlib.PoolQueue(n, c) for n, c in caps.items()}
        horizon = self.q.warmup_s + len(world.jobs) * world.arrival_gap_s
        streams = qlib.tenant_arrivals(self.q, caps, horizon,
                                       world.tenant_luck)
        self.tenants = sorted((t, pool, g, r) for pool, jobs in streams.items()
                              for t, g, r in jobs)
        self.arrivals = [(self.q.warmup_s + i * world.arrival_gap_s, job)
                         for i, job in enumerate(world.jobs)]
        self.card_memory = {}
        self.last_report = {}
        self.open = 0
        # Jobs that ran out of memory at start, to be placed again when
        # that attempt ended: (time, sequence, job, result, pools excluded).
        self.replacements = []
        self.replacement_seq = 0

    def report_all(self, now):
        if not self.policy.reports:
            return
        for pool in self.pools.values():
            if self.last_report.get(pool.name, -1) >= now:
                continue
            self.svc.report(_state(pool, self.base, now))
            self.last_report[pool.name] = now
            self.run.reports += 1

    def place(self, job, now, result=None, excluded=frozenset()):
        """Places a job of the trace on arrival, or again (`result` given)
        after an attempt ran out of memory on the pools `excluded`, as the
        team would: it asks again and tries elsewhere."""
        first = result is None
        if first:
            result = QJobResult(job, now)
            self.run.jobs.append(result)
        self.report_all(now)
        union = None
        if isinstance(self.policy, QueueOracle) or (
                first and job.kind == "deadline"):
            union = _options_union(self.world, self.svc, job,
                                   self.card_memory, excluded)
        if isinstance(self.policy, QueueOracle):
            plan, options = None, union
        else:
            plan = self.policy.plan(self.svc, job)
            options = _options(self.world, self.svc, job, plan, excluded,
                               self.card_memory)
        if first and job.kind == "deadline":
            truths = [_truth(self.world, job, l, self.pools, now)
                      for _, l in union]
            result.feasible = any(
                t is not None and t[2] + t[1] - now <= job.deadline_s
                for t in truths)
        if not options:
            return
        truths = [_truth(self.world, job, l, self.pools, now)
                  for _, l in options]
        starts = None
        if self.policy.ideal_starts:
            starts = [self.pools[l.pool].forecast_starts(
                l.gpu_count, now, self.q.tenants.get(l.pool),
                random.Random(f"{job.id}|ideal|{l.identity()}"))
                for _, l in options]
        pick = self.policy.choose(job, options, truths, now, starts)
        if pick is None:
            return
        candidate, layout = options[pick]
        self.submit(result, job, candidate, layout, plan, now, excluded)

    def submit(self, result, job, candidate, layout, plan, now, excluded):
        first = not result.placed
        result.placed = True
        result.pool = layout.pool
        timing = candidate.timing
        # The start forecast judged is the first placement's, against the
        # first start.
        if first and timing.status == placement_pb2.START_STATUS_KNOWN:
            result.predicted = {q.probability: q.within.ToNanoseconds() / 1e9
                                for q in timing.start_quantiles}
            raw = [d.ToNanoseconds() / 1e9
                   for d in timing.uncalibrated_start_levels]
            kept = start_calibration.PREDICTION_LEVELS  # at 0, 0.05, ..., 1
            if len(raw) == kept:
                result.predicted_raw = {p: raw[round((kept - 1) * p)]
                                        for p in LEVELS}
            result.predicted_ideal = _ideal_forecast(
                self.pools[layout.pool], layout.gpu_count, now,
                self.q.tenants.get(layout.pool), job.id)
        attempts, completed = run_job(self.world, job.id, layout, job.steps)
        result.cost += sum(a.cost for a in attempts)
        result.completed = completed
        out_of_memory = attempts[-1].outcome == OUT_OF_MEMORY
        result.oom |= out_of_memory
        plan_id = plan.plan_id if plan is not None else ""
        qjob = qlib.QJob(job.id, layout.gpu_count, now,
                         sum(a.seconds for a in attempts), plan_id)

        def started(at):
            if result.start is None:
                result.start = at

        def ended(at):
            result.end = at
            start = self.base + qjob.start
            for n, a in enumerate(attempts):
                self.svc.upload_attempt(a, start, plan_id, job.team,
                                f"{job.id}|queue|{layout.identity()}|{n}",
                                submit_s=self.base + now if n == 0 else None)
                start += a.seconds
            if out_of_memory:
                self.replacement_seq += 1
                heapq.heappush(self.replacements,
                               (at, self.replacement_seq, job, result,
                                excluded | {layout.pool}))
            self.open -= 1
        qjob.on_start, qjob.on_end = started, ended
        self.open += 1
        self.pools[layout.pool].submit(qjob, now)

    def loop(self):
        tick, ti, ai, n = 0.0, 0, 0, 0
        every = self.q.report_every_s
        while (ai < len(self.arrivals) or self.open > 0 or
               self.replacements):
            nexts = [self.tenants[ti][0] if ti < len(self.tenants) else math.inf,
                     self.arrivals[ai][0] if ai < len(self.arrivals) else math.inf,
                     tick if self.policy.reports else math.inf,
                     min(p.next_end() for p in self.pools.values()),
                     self.replacements[0][0] if self.replacements else math.inf]
            now = min(nexts)
            for pool in self.pools.values():
                pool.finish_until(now)
            while ti < len(self.tenants) and self.tenants[ti][0] <= now:
                at, name, gpus, run_s = self.tenants[ti]
                n += 1
                self.pools[name].submit(qlib.QJob(f"t{n}", gpus, at, run_s), at)
                ti += 1
            if tick <= now:
                self.report_all(now)
                tick = (math.floor(now / every) + 1) * every
            while self.replacements and self.replacements[0][0] <= now:
                _, _, job, result, excluded = heapq.heappop(
                    self.replacements)
                self.place(job, now, result, excluded)
            while ai < len(self.arrivals) and self.arrivals[ai][0] <= now:
                self.place(self.arrivals[ai][1], now)
                ai += 1


def replay(world, policy_class, index):
    policy = policy_class()
    run = QueueRun(world, policy)
    started = time.monotonic()
    with Service(f"queue{index}") as svc:
        svc.create_pools(world.pools)
        _Replay(world, policy, svc, run).loop()
        if policy.reports:
            # How the service's own forecasts of waiting jobs fared, raw
            # (before the calibration plans read them through), per pool.
            for p in world.pools:
                state = svc.pool_states.GetPoolState(
                    pool_state_pb2.GetPoolStateRequest(pool=p["name"]),
                    timeout=30, metadata=svc.metadata)
                run.raw_calibration[p["name"]] = (
                    state.history.checked_forecasts,
                    {c.probability: c.share_started
                     for c in state.history.calibration})
    run.seconds = time.monotonic() - started
    return run


# Every queue world runs these; the oracle and today's service are what the
# others are judged against.
POLICIES = (TimeAware, TimeBlind, QueueOracle)
# Run where asked (replay.py --queue-policies).
EXTRA_POLICIES = {"ideal-forecasts": IdealForecasts}
