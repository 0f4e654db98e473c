"""Replays a world's trace under one policy against its own placementd."""

import time

from execution import Layout, OUT_OF_MEMORY, run_job
from service import Service

# Runs are dated from here: far enough back that the whole trace ends
# before now (the API refuses runs that end in the future).
HISTORY_S = 2 * 365 * 86400


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
        self.oom_keys = []  # (recipe key, SKU) of each out-of-memory attempt

    def charge(self, attempts):
        for a in attempts:
            self.spend_by_pool[a.layout.pool] = (
                self.spend_by_pool.get(a.layout.pool, 0.0) + a.cost)
            if a.outcome == OUT_OF_MEMORY:
                self.oom_keys.append((a.layout.recipe_key, a.layout.sku))


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


def _upload_all(svc, attempts, start_s, plan_id, job, tag):
    for n, a in enumerate(attempts):
        svc.upload(a, start_s, plan_id, job.team,
                   f"{job.id}|{tag}|{a.layout.identity()}|{n}")
        start_s += a.seconds
    return start_s


def _bakeoff(world, svc, job, plan, options, clock, result):
    """Runs each proposed measurement run once, for the steps the plan asks
    (world.bakeoff_steps when it does not say); returns when the last ends."""
    by_pool = {c.pool: layout for c, layout in options}
    end = clock
    for run in plan.bake_off.runs:
        layout = by_pool.get(run.pool)
        if layout is None:
            continue
        steps = run.steps or world.bakeoff_steps
        attempts, _ = run_job(world, job.id, layout, steps,
                              purpose="bakeoff", max_attempts=1)
        end = max(end, _upload_all(svc, attempts, clock, plan.plan_id, job,
                                   "bakeoff"))
        spent = sum(a.cost for a in attempts)
        result.charge(attempts)
        result.exploration += spent
        result.cost += spent
        result.attempts += len(attempts)
        result.oom_attempts += sum(a.outcome == OUT_OF_MEMORY
                                   for a in attempts)
    return end


def _replay_job(world, svc, policy, job, clock, card_memory):
    result = JobResult(job)
    plan = svc.plan(job)
    excluded = set()
    options = _options(world, svc, job, plan, excluded, card_memory)
    if policy.bakeoff and options and plan.bake_off.runs:
        clock = _bakeoff(world, svc, job, plan, options, clock, result)
        plan = svc.plan(job)  # again, now with the measurements
        options = _options(world, svc, job, plan, excluded, card_memory)
    while options:
        layout = policy.choose(world, job, options)
        if layout is None:
            break
        result.placed = True
        result.choice = layout.pool
        attempts, completed = run_job(world, job.id, layout, job.steps)
        clock = _upload_all(svc, attempts, clock, plan.plan_id, job, "job")
        result.cost += sum(a.cost for a in attempts)
        result.charge(attempts)
        result.attempts += len(attempts)
        if completed or attempts[-1].outcome != OUT_OF_MEMORY:
            result.completed = completed
            break
        # Out of memory at start: the team asks again and tries elsewhere.
        result.oom_attempts += 1
        excluded.add(layout.pool)
        plan = svc.plan(job)
        options = _options(world, svc, job, plan, excluded, card_memory)
    return result


def replay(world, policy_class, index):
    """Runs the whole trace under one policy on a fresh placementd."""
    policy = policy_class()
    run = PolicyRun(world, policy)
    started = time.monotonic()
    base = time.time() - HISTORY_S
    with Service(f"replay{index}") as svc:
        svc.create_pools(world.pools)
        card_memory = {}
        for job in world.jobs:
            clock = base + job.index * world.arrival_gap_s
            run.jobs.append(_replay_job(world, svc, policy, job, clock,
                                        card_memory))
    run.seconds = time.monotonic() - started
    return run
