"""Runs a layout in the world: the truth is the service's own prior for the
layout times the world's multipliers; every random draw comes from a PRNG
seeded by (job, pool, layout, attempt), so every policy faces the same luck
on the same choice."""

import hashlib
import math
import random

from placement.v1 import telemetry_pb2

from world import method_name

SUCCEEDED = telemetry_pb2.RUN_OUTCOME_SUCCEEDED
OUT_OF_MEMORY = telemetry_pb2.RUN_OUTCOME_OUT_OF_MEMORY
EXPECTATION_DRAWS = 256


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
        self.hazards = world.hazards(self.pool, self.sku)
        self.hazard_per_hour = sum(h.per_hour for h in self.hazards)
        self.startup_s = world.startup_s(candidate.recipe.model)

    def identity(self):
        return f"{self.pool}|{self.sku}|{self.gpu_count}|{self.recipe_key}"

    def cost(self, seconds):
        return seconds / 3600.0 * self.gpu_count * self.rate


class Attempt:
    """One launch of a layout: what an agent would upload about it."""

    def __init__(self, layout, seconds, outcome, steps_attempted, steps_kept,
                 step_s, sigma, peak_gb, failure_reason=""):
        self.layout = layout
        self.seconds = seconds
        self.outcome = outcome
        self.steps_attempted = steps_attempted
        self.steps_kept = steps_kept
        # Step-to-step spread inside the attempt: the world's sigma again,
        # around the attempt's own mean.
        self.step_mean_s = step_s
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


def run_attempt(world, layout, rng, steps_needed, restart):
    """One attempt of `steps_needed` steps; `restart` adds the world's
    restart delay (a relaunch after a failure) before start-up."""
    sigma = world.step_time_sigma
    noise = math.exp(rng.gauss(0.0, 1.0) * sigma - sigma * sigma / 2)
    step = layout.true_step_s * noise
    lead = layout.startup_s + (world.restart_s if restart else 0.0)
    if layout.out_of_memory:
        # Model loaded, the first step allocates past the card.
        return Attempt(layout, lead + step, OUT_OF_MEMORY, 1, 0, step, sigma,
                       layout.card_memory_gb,
                       f"CUDA out of memory: needs {layout.true_peak_gb:.1f} GB")
    work = lead + steps_needed * step
    rate = layout.hazard_per_hour / 3600.0
    fail_at = rng.expovariate(rate) if rate > 0 else math.inf
    pick = rng.random() * layout.hazard_per_hour
    if fail_at >= work:
        return Attempt(layout, work, SUCCEEDED, steps_needed, steps_needed,
                       step, sigma, layout.true_peak_gb)
    done = min(steps_needed, int(max(0.0, fail_at - lead) / step))
    per_checkpoint = max(1, int(world.checkpoint_interval_s / step))
    kept = done // per_checkpoint * per_checkpoint
    outcome = layout.hazards[-1].outcome
    for h in layout.hazards:
        if pick < h.per_hour:
            outcome = h.outcome
            break
        pick -= h.per_hour
    # The GPUs stay held until the failure is noticed.
    return Attempt(layout, fail_at + world.detection_s, outcome,
                   max(1, done), kept, step, sigma, layout.true_peak_gb,
                   f"{telemetry_pb2.RunOutcome.Name(outcome)} after "
                   f"{fail_at / 3600:.2f} h")


def run_job(world, job_id, layout, steps, purpose="job", max_attempts=None):
    """Attempts until `steps` are done from checkpoints (or out of memory,
    or the attempt cap). Returns (attempts, completed)."""
    cap = max_attempts or world.max_attempts
    attempts, done = [], 0
    for n in range(cap):
        rng = _rng(job_id, purpose, layout.identity(), n)
        a = run_attempt(world, layout, rng, steps - done, restart=n > 0)
        attempts.append(a)
        done += a.steps_kept
        if a.outcome == SUCCEEDED:
            return attempts, True
        if a.outcome == OUT_OF_MEMORY:
            return attempts, False
    return attempts, False


def expected_cost_and_error(world, job_id, layout, steps):
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
        attempts, completed = run_job(world, job_id, layout, steps,
                                      purpose=f"expectation-{d}")
        if not completed:
            return None, None
        costs.append(sum(a.cost for a in attempts))
    mean = sum(costs) / len(costs)
    var = sum((c - mean) ** 2 for c in costs) / (len(costs) - 1)
    return mean, math.sqrt(var / len(costs))


def expected_cost(world, job_id, layout, steps):
    """expected_cost_and_error's mean."""
    return expected_cost_and_error(world, job_id, layout, steps)[0]
