"""Runs a layout in the world: the truth is the service's own prior for the
layout times the world's multipliers; every random draw comes from a PRNG
seeded by (job, pool, layout, attempt) and the world's luck (world.py
World.luck), so every policy faces the same luck on the same choice. Times
are seconds on the replay's clock, which starts at a midnight (UTC), so a
failure rate that depends on the hour of the day meets the same hours in
every run of the replay."""

import hashlib
import math
import random

from placement.v1 import telemetry_pb2

from world import method_name

# The cause of each retry, where the API has the field; without it the
# causes reach the service in failure_reason only.
HAS_RETRY_OUTCOMES = (
    "retry_outcomes" in telemetry_pb2.BenchmarkRun.DESCRIPTOR.fields_by_name)
SUCCEEDED = telemetry_pb2.RUN_OUTCOME_SUCCEEDED
OUT_OF_MEMORY = telemetry_pb2.RUN_OUTCOME_OUT_OF_MEMORY
EXPECTATION_DRAWS = 256
HOUR_S = 3600.0
DAY_S = 86400  # whole seconds: the queue replay's clock starts on one


class Layout:
    """One viable option: a plan candidate on its pool, with the truth the
    world holds for it."""

    def __init__(self, world, job, candidate, pool, card_memory_gb):
        self.pool = candidate.pool
        self.sku = candidate.sku
        self.gpu_count = candidate.gpu_count
        self.recipe = candidate.recipe
        self.recipe_key = candidate.recipe_key
        self.rate = pool["rate_per_gpu_hour"]
        self.fabric = pool["fabric"]
        method = method_name(candidate.recipe)
        self.true_step_s = candidate.prior_step_time_s * (
            world.step_time_multiplier(self.sku, method, self.gpu_count))
        self.true_peak_gb = candidate.prior_peak_memory_gb * (
            world.peak_memory_multiplier(self.sku, method, self.gpu_count))
        self.card_memory_gb = card_memory_gb
        self.out_of_memory = self.true_peak_gb > card_memory_gb
        self.hazards = world.hazards(self.pool, self.sku, self.gpu_count)
        # The largest rate: the sum of every hazard, whatever its hours.
        self.hazard_per_hour = sum(h.per_hour for h in self.hazards)
        self.startup_s = world.startup_s(candidate.recipe.model)

    def identity(self):
        return f"{self.pool}|{self.sku}|{self.gpu_count}|{self.recipe_key}"

    def cost(self, seconds):
        return seconds / 3600.0 * self.gpu_count * self.rate


class Attempt:
    """One launch of a layout: what an agent would upload about it."""

    def __init__(self, layout, seconds, outcome, steps_attempted, steps_kept,
                 step_s, sigma, peak_gb, failure_reason="", start_s=0.0):
        self.layout = layout
        self.start_s = start_s  # on the replay's clock
        self.seconds = seconds
        self.index = 0  # the job's attempt number on the layout (run_job)
        self.outcome = outcome
        self.steps_attempted = steps_attempted
        self.steps_kept = steps_kept
        # Step-to-step spread inside the attempt: the world's sigma again,
        # around the attempt's own mean.
        self.step_mean_s = step_s
        self.sigma = sigma
        self.step_p50_s = step_s * math.exp(-sigma * sigma / 2)
        self.step_p95_s = step_s * math.exp(1.645 * sigma - sigma * sigma / 2)
        self.peak_gb = peak_gb
        self.failure_reason = failure_reason

    @property
    def cost(self):
        return self.layout.cost(self.seconds)


def _rng(*parts):
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _rate_per_s(hazards, t):
    """The rate of the hazards active at `t` (replay clock), per second."""
    hour = (t % DAY_S) / HOUR_S
    return sum(h.per_hour for h in hazards if h.active(hour)) / HOUR_S


def time_to_failure(hazards, start_s, draw, horizon_s):
    """Seconds after `start_s` until the hazards' cumulative rate reaches
    `draw` (an exponential draw of mean 1), or infinity when that is not
    within `horizon_s`. Rates are constant within a clock hour."""
    if all(h.hours is None for h in hazards):
        rate = sum(h.per_hour for h in hazards) / HOUR_S
        return draw / rate if rate > 0 else math.inf
    t = 0.0
    while t < horizon_s:
        now = start_s + t
        segment = (math.floor(now / HOUR_S) + 1) * HOUR_S - now
        rate = _rate_per_s(hazards, now)
        if rate > 0 and draw <= rate * segment:
            return t + draw / rate
        draw -= rate * segment
        t += segment
    return math.inf


def _failure_outcome(hazards, at_s, pick):
    """The hazard that failed at `at_s`, drawn in proportion to the rates
    active then; `pick` is uniform in [0, 1)."""
    active = [h for h in hazards if h.active((at_s % DAY_S) / HOUR_S)]
    if not active:  # rounded onto the first second after its window
        active = [h for h in hazards
                  if h.active(((at_s - 1.0) % DAY_S) / HOUR_S)]
    pick *= sum(h.per_hour for h in active)
    for h in active:
        if pick < h.per_hour:
            return h.outcome
        pick -= h.per_hour
    return active[-1].outcome


def run_attempt(world, layout, rng, steps_needed, restart, start_s=0.0):
    """One attempt of `steps_needed` steps starting at `start_s`; `restart`
    adds the world's restart delay (a relaunch after a failure) before
    start-up."""
    sigma = world.step_time_sigma
    noise = math.exp(rng.gauss(0.0, 1.0) * sigma - sigma * sigma / 2)
    step = layout.true_step_s * noise
    lead = layout.startup_s + (world.restart_s if restart else 0.0)
    if layout.out_of_memory:
        # Model loaded, the first step allocates past the card.
        return Attempt(layout, lead + step, OUT_OF_MEMORY, 1, 0, step, sigma,
                       layout.card_memory_gb,
                       f"CUDA out of memory: needs {layout.true_peak_gb:.1f} GB",
                       start_s)
    work = lead + steps_needed * step
    # The draws in the order they always had: the exponential only where
    # some hazard has a rate, the pick always.
    draw = (rng.expovariate(1.0) if layout.hazard_per_hour > 0 else None)
    pick = rng.random()
    fail_at = (time_to_failure(layout.hazards, start_s, draw, work)
               if draw is not None else math.inf)
    if fail_at >= work:
        return Attempt(layout, work, SUCCEEDED, steps_needed, steps_needed,
                       step, sigma, layout.true_peak_gb, start_s=start_s)
    done = min(steps_needed, int(max(0.0, fail_at - lead) / step))
    per_checkpoint = max(1, int(world.checkpoint_interval_s / step))
    kept = done // per_checkpoint * per_checkpoint
    outcome = _failure_outcome(layout.hazards, start_s + fail_at, pick)
    # The GPUs stay held until the failure is noticed.
    return Attempt(layout, fail_at + world.detection_s, outcome,
                   max(1, done), kept, step, sigma, layout.true_peak_gb,
                   f"{telemetry_pb2.RunOutcome.Name(outcome)} after "
                   f"{fail_at / 3600:.2f} h", start_s)


def run_job(world, job_id, layout, steps, start_s=0.0, purpose="job",
            max_records=None):
    """Attempts from `start_s` until `steps` are done from checkpoints (or
    out of memory, or the attempt cap, or `max_records` run records ended
    without success). Returns (attempts, completed).

    A failure that the world's reporting style retries inside the run
    record is relaunched there; one that ends the record is relaunched as
    the next record, except out of memory (at the first step, which no
    style retries), after which the team plans again."""
    attempts, done, in_record, records = [], 0, 0, 0
    clock = start_s
    for n in range(world.max_attempts):
        rng = _rng(job_id, purpose, layout.identity(), n,
                   *world.luck_salt())
        a = run_attempt(world, layout, rng, steps - done, restart=n > 0,
                        start_s=clock)
        a.index = n
        attempts.append(a)
        clock += a.seconds
        done += a.steps_kept
        in_record += 1
        if a.outcome == SUCCEEDED:
            return attempts, True
        if world.reporting.continues(in_record, a.outcome):
            continue
        records, in_record = records + 1, 0
        if a.outcome == OUT_OF_MEMORY:
            return attempts, False
        if max_records is not None and records >= max_records:
            return attempts, False
    return attempts, False


def expected_cost_and_error(world, job_id, layout, steps, start_s=0.0):
    """The expected true cost of running `steps` on `layout`, failures'
    rework included, by the same execution model the policies meet, and
    the standard error of that figure: exact (error 0) without failures,
    else the mean of EXPECTATION_DRAWS draws that are independent of the
    ones the policies face. (None, None) when the layout runs out of memory
    or some draw does not finish within the attempt cap."""
    if layout.out_of_memory:
        return None, None
    if layout.hazard_per_hour == 0:
        # Noise has mean 1 and start-up is fixed: the mean is exact.
        return layout.cost(layout.startup_s + steps * layout.true_step_s), 0.0
    costs = []
    for d in range(EXPECTATION_DRAWS):
        attempts, completed = run_job(world, job_id, layout, steps, start_s,
                                      purpose=f"expectation-{d}")
        if not completed:
            return None, None
        costs.append(sum(a.cost for a in attempts))
    mean = sum(costs) / len(costs)
    var = sum((c - mean) ** 2 for c in costs) / (len(costs) - 1)
    return mean, math.sqrt(var / len(costs))


def expected_cost(world, job_id, layout, steps, start_s=0.0):
    """expected_cost_and_error's mean."""
    return expected_cost_and_error(world, job_id, layout, steps, start_s)[0]


def _phi(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _mixture_quantile(attempts, q):
    """The q-quantile of the step times of `attempts` together: each
    attempt's steps are lognormal around its own mean (its sigma), weighted
    by the steps it attempted; with no spread, the weighted quantile of the
    attempts' step times."""
    weights = [a.steps_attempted for a in attempts]
    total = float(sum(weights))
    medians = [a.step_p50_s for a in attempts]
    sigma = attempts[0].sigma
    if sigma <= 0:
        seen = 0.0
        for w, m in sorted(zip(weights, medians), key=lambda p: p[1]):
            seen += w
            if seen >= q * total:
                return m
        return max(medians)

    def cdf(x):
        return sum(w * _phi((math.log(x) - math.log(m)) / sigma)
                   for w, m in zip(weights, medians)) / total
    low = min(medians) * math.exp(-6 * sigma)
    high = max(medians) * math.exp(6 * sigma)
    for _ in range(100):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if cdf(mid) < q else (low, mid)
    return math.sqrt(low * high)


def clock_fault(world, job_id, purpose, layout, first_index):
    """The clock fault, if any, of the agent that recorded the run record
    whose first attempt is `first_index`: drawn from its own seed, apart from
    the execution's draws, so a bad clock changes what is uploaded and never
    what happened."""
    faults = world.clock_faults_for(layout.pool, layout.sku)
    if not faults:
        return None
    rng = _rng(job_id, purpose, layout.identity(), first_index, "clock",
               *world.luck_salt())
    for f in faults:
        if rng.random() < f.share:
            return f
    return None


class RunRecord:
    """What an agent uploads for consecutive attempts of one run (one
    attempt, or an attempt and its retries), by the agent's definitions
    (docs/AGENT.md "The run summary"): the first attempt's start and the
    last's end, every attempt's steps and step times, retries = attempts -
    1, the last attempt's outcome, each failed attempt in failure_reason and
    in retry_outcomes. A clock fault moves the start back by its step; the
    step times come from a monotonic clock and stay right."""

    def __init__(self, attempts, fault=None):
        first, last = attempts[0], attempts[-1]
        self.attempts = attempts
        self.layout = first.layout
        self.fault = fault
        self.true_seconds = sum(a.seconds for a in attempts)
        step = fault.step_s if fault else 0.0
        self.start_s = first.start_s - step  # as the agent's clock read it
        self.seconds = self.true_seconds + step
        self.steps_attempted = sum(a.steps_attempted for a in attempts)
        self.steps_kept = sum(a.steps_kept for a in attempts)
        self.peak_gb = max(a.peak_gb for a in attempts)
        self.outcome = last.outcome
        self.retries = len(attempts) - 1
        self.retry_outcomes = [a.outcome for a in attempts[:-1]]
        if len(attempts) == 1:
            self.step_mean_s = first.step_mean_s
            self.step_p50_s = first.step_p50_s
            self.step_p95_s = first.step_p95_s
            self.failure_reason = first.failure_reason
            return
        self.step_mean_s = sum(a.step_mean_s * a.steps_attempted
                               for a in attempts) / self.steps_attempted
        self.step_p50_s = _mixture_quantile(attempts, 0.5)
        self.step_p95_s = _mixture_quantile(attempts, 0.95)
        self.failure_reason = "; ".join(
            f"attempt {i + 1}: "
            f"{telemetry_pb2.RunOutcome.Name(a.outcome)[len('RUN_OUTCOME_'):]}"
            f" ({a.failure_reason})"
            for i, a in enumerate(attempts) if a.outcome != SUCCEEDED)

    def message(self, epoch_s, plan_id, team, run_id):
        """The BenchmarkRun an agent uploads for this record, its times on
        the replay's clock from `epoch_s` (seconds since the Unix epoch)."""
        layout = self.layout
        recipe = layout.recipe
        tokens = (recipe.sequence_length * recipe.micro_batch_size *
                  max(1, recipe.data_parallel_degree) *
                  max(1, recipe.gradient_accumulation_steps))
        multi = layout.gpu_count > 1
        run = telemetry_pb2.BenchmarkRun(
            run_id=run_id, agent_id="fleet-replay", pool=layout.pool,
            sku=layout.sku, gpu_count=layout.gpu_count, recipe=recipe,
            steps_attempted=self.steps_attempted,
            steps_succeeded=self.steps_kept,
            step_time_mean_seconds=self.step_mean_s,
            step_time_p50_seconds=self.step_p50_s,
            step_time_p95_seconds=self.step_p95_s,
            tokens_per_second=tokens / self.step_mean_s,
            peak_memory_gb=self.peak_gb,
            offload=telemetry_pb2.OFFLOAD_NONE,
            interconnect=(
                (telemetry_pb2.INTERCONNECT_NVLINK if layout.fabric == "nvlink"
                 else telemetry_pb2.INTERCONNECT_PCIE) if multi
                else telemetry_pb2.INTERCONNECT_NONE),
            collectives_opened=multi, retries=self.retries,
            outcome=self.outcome, failure_reason=self.failure_reason,
            exclusive=True, plan_id=plan_id, team=team)
        if HAS_RETRY_OUTCOMES:
            run.retry_outcomes.extend(self.retry_outcomes)
        start_s = epoch_s + self.start_s
        run.start_time.FromNanoseconds(int(start_s * 1e9))
        run.end_time.FromNanoseconds(int((start_s + self.seconds) * 1e9))
        return run


def run_records(world, job_id, purpose, attempts):
    """One job's `attempts` on one layout as the run records its agents
    upload, in order, each with its clock fault drawn."""
    return [RunRecord(r, clock_fault(world, job_id, purpose, r[0].layout,
                                     r[0].index))
            for r in world.reporting.records(attempts)]
