"""Replays a world's trace under one policy against its own placementd."""

import time

from execution import Layout, OUT_OF_MEMORY, run_job, run_records
from service import Service

# Where every replay's clock starts, the fleet's and the queues' alike: a
# fixed midnight (UTC), so that the replay's clock (execution.py) tells the
# hour; long enough ago that every trace ends before now (the API refuses
# runs that end in the future); fixed, so that a replay sends the same
# requests whatever the day it runs (placementd seeds a pool's start-forecast
# draws with its report's observe_time: a start read from the wall clock gave
# every run of a queue world other draws, and the same code other figures).
REPLAY_EPOCH_S = 1_704_067_200  # 2024-01-01T00:00:00Z


class JobResult:
    def __init__(self, job):
        self.job = job
        self.cost = 0.0
        self.exploration = 0.0
        self.oom_attempts = 0
        self.attempts = 0
        self.completed = False
        self.placed = False
        self.choice = ""  # the pool that ran the job (the last one tried)
        self.spend_by_pool = {}  # every attempt's cost, bake-offs included
        # (recipe key, SKU) of each run record that ended out of memory:
        # an agent's retries of one are not the planner's to prevent.
        self.oom_keys = []
        self.records = 0  # run records uploaded or refused
        self.retried = 0  # of them, records with retries
        self.refused = 0  # of them, refused by the service as invalid
        self.faulty_records = 0  # records with a clock fault
        self.faulty_refused = 0

    def charge(self, world, attempts):
        for a in attempts:
            self.spend_by_pool[a.layout.pool] = (
                self.spend_by_pool.get(a.layout.pool, 0.0) + a.cost)
        for record in world.reporting.records(attempts):
            last = record[-1]
            if last.outcome == OUT_OF_MEMORY:
                self.oom_keys.append((last.layout.recipe_key, last.layout.sku))
        self.oom_attempts += sum(a.outcome == OUT_OF_MEMORY for a in attempts)


class PolicyRun:
    """Everything one policy did over the trace."""

    def __init__(self, world, policy):
        self.world = world
        self.policy = policy
        self.jobs = []
        self.seconds = 0.0


def _options(world, svc, job, plan, excluded, card_memory):
    out = []
    pools = {p["name"]: p for p in world.pools}
    for c in sorted(plan.candidates, key=lambda c: c.rank):
        if c.pool in excluded:
            continue
        if c.sku not in card_memory:
            card_memory[c.sku] = world.card_memory_gb(
                c.sku, svc.sku_memory_gb(c.sku))
        out.append((c, Layout(world, job, c, pools[c.pool],
                              card_memory[c.sku])))
    return out


def union_options(world, svc, job, plans, excluded, card_memory):
    """The options of several plans for the job, each layout once, in the
    order the plans give them."""
    seen, out = set(), []
    for plan in plans:
        for c, layout in _options(world, svc, job, plan, excluded,
                                  card_memory):
            if layout.identity() not in seen:
                seen.add(layout.identity())
                out.append((c, layout))
    return out


def _oracle_gpu_counts(world):
    """1, 2, 4, ... up to the largest pool's GPUs, and that size itself."""
    largest = max(p["nodes"] * p["gpus_per_node"] for p in world.pools)
    counts = [1]
    while counts[-1] * 2 <= largest:
        counts.append(counts[-1] * 2)
    if counts[-1] != largest:
        counts.append(largest)
    return counts


def _oracle_options(world, svc, job, plan, excluded, card_memory):
    """The job's plan's options and those of its plans with the GPU count
    pinned to each of _oracle_gpu_counts: the oracle chooses among every
    layout the planner would offer, not only one per pool. A job that fixed
    its GPU count keeps its one plan."""
    plans = [plan]
    if not job.recipe.gpu_count:
        plans += [svc.plan(job, gpus) for gpus in _oracle_gpu_counts(world)]
    return union_options(world, svc, job, plans, excluded, card_memory)


def _upload_all(world, svc, attempts, epoch_s, plan_id, job, tag, result):
    """Uploads `attempts` (one layout's, in order) as the world's agents
    report them; returns when the last ended on the replay's clock. A run
    record's name (its id) is its first attempt's, as it always was."""
    for record in run_records(world, job.id, tag, attempts):
        first = record.attempts[0]
        stored = svc.upload(record, epoch_s, plan_id, job.team,
                            f"{job.id}|{tag}|{first.layout.identity()}|"
                            f"{first.index}")
        result.records += 1
        result.retried += record.retries > 0
        result.refused += not stored
        if record.fault:
            result.faulty_records += 1
            result.faulty_refused += not stored
    return attempts[-1].start_s + attempts[-1].seconds


def _bakeoff(world, svc, job, plan, options, clock, epoch_s, result):
    """Runs each proposed measurement run once, for the steps the plan asks
    (world.bakeoff_steps when it does not say); returns when the last ends."""
    by_pool = {c.pool: layout for c, layout in options}
    end = clock
    for run in plan.bake_off.runs:
        layout = by_pool.get(run.pool)
        if layout is None:
            continue
        steps = run.steps or world.bakeoff_steps
        # One run record: the agent's `run` with its retries, if any.
        attempts, _ = run_job(world, job.id, layout, steps, clock,
                              purpose="bakeoff", max_records=1)
        end = max(end, _upload_all(world, svc, attempts, epoch_s,
                                   plan.plan_id, job, "bakeoff", result))
        spent = sum(a.cost for a in attempts)
        result.charge(world, attempts)
        result.exploration += spent
        result.cost += spent
        result.attempts += len(attempts)
    return end


def _replay_job(world, svc, policy, job, clock, epoch_s, card_memory):
    result = JobResult(job)
    plan = svc.plan(job)
    excluded = set()
    options_of = _oracle_options if policy.knows_truth else _options
    options = options_of(world, svc, job, plan, excluded, card_memory)
    if policy.bakeoff and options and plan.bake_off.runs:
        clock = _bakeoff(world, svc, job, plan, options, clock, epoch_s,
                         result)
        plan = svc.plan(job)  # again, now with the measurements
        options = _options(world, svc, job, plan, excluded, card_memory)
    while options:
        layout = policy.choose(world, job, options, clock)
        if layout is None:
            break
        result.placed = True
        result.choice = layout.pool
        attempts, completed = run_job(world, job.id, layout, job.steps, clock)
        clock = _upload_all(world, svc, attempts, epoch_s, plan.plan_id, job,
                            "job", result)
        result.cost += sum(a.cost for a in attempts)
        result.charge(world, attempts)
        result.attempts += len(attempts)
        if completed or attempts[-1].outcome != OUT_OF_MEMORY:
            result.completed = completed
            break
        # Out of memory at start: the team asks again and tries elsewhere.
        excluded.add(layout.pool)
        plan = svc.plan(job)
        options = options_of(world, svc, job, plan, excluded, card_memory)
    return result


def replay(world, policy_class, index):
    """Runs the whole trace under one policy on a fresh placementd."""
    policy = policy_class()
    run = PolicyRun(world, policy)
    started = time.monotonic()
    epoch_s = REPLAY_EPOCH_S
    with Service(f"replay{index}") as svc:
        svc.create_pools(world.pools)
        card_memory = {}
        for job in world.jobs:
            clock = job.index * world.arrival_gap_s
            run.jobs.append(_replay_job(world, svc, policy, job, clock,
                                        epoch_s, card_memory))
    run.seconds = time.monotonic() - started
    return run
