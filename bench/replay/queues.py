"""Pools of limited capacity with other tenants' jobs arriving: the queue
worlds of the fleet replay (docs/DECISIONS.md, "Time to start"). A world
with a `queues` section gives each pool a stream of other tenants' jobs
(Poisson arrivals, a GPU count, a lognormal or Weibull run time), serves
every pool first come, first served (a job starts once every job ahead of
it has started and its GPUs are free), and gives some of the trace's jobs a
deadline or a value of time. Everything is seeded: every policy meets the
same tenants, and the same job has the same deadline whatever it chose."""

import bisect
import math
import random
import statistics


class QueueConfig:
    """The checked `queues` section of a world."""


def parse(c, queues, pool_names):
    """`c` is world._Checker; returns a QueueConfig."""
    f = "queues"
    c.obj(queues, f, ("seed", "tenants"),
          ("warmup_h", "report_every_s", "deadlines", "value_of_time", "note"))
    q = QueueConfig()
    q.seed = c.number(queues["seed"], f + ".seed", integer=True)
    q.warmup_s = 3600 * c.number(queues.get("warmup_h", 48),
                                 f + ".warmup_h", 0, 10_000)
    q.report_every_s = c.number(queues.get("report_every_s", 1800),
                                f + ".report_every_s", 60, 86_400)
    q.tenants = {}
    tenants = c.obj(queues["tenants"], f + ".tenants")
    for name, t in tenants.items():
        tf = f"{f}.tenants.{name}"
        if name not in pool_names:
            c.fail(tf, f"names no pool (pools: {', '.join(sorted(pool_names))})")
        c.obj(t, tf, ("jobs_per_hour", "gpus", "run_h_median"),
              ("run_sigma", "run_weibull_shape", "note"))
        if "run_sigma" in t and "run_weibull_shape" in t:
            c.fail(tf + ".run_weibull_shape",
                   "a Weibull's run times have no run_sigma")
        gpus = c.obj(t["gpus"], tf + ".gpus")
        if not gpus:
            c.fail(tf + ".gpus", "must give at least one GPU count")
        weights = []
        for k, w in gpus.items():
            try:
                n = int(k)
            except ValueError:
                c.fail(f"{tf}.gpus.{k}", "keys are GPU counts")
            c.number(w, f"{tf}.gpus.{k}", 0, 1_000)
            weights.append((n, w))
        q.tenants[name] = {
            "rate_per_s": c.number(t["jobs_per_hour"], tf + ".jobs_per_hour",
                                   0, 1_000) / 3600,
            "gpus": weights,
            "median_s": 3600 * c.number(t["run_h_median"], tf + ".run_h_median",
                                        0.01, 10_000),
            "sigma": c.number(t.get("run_sigma", 0.8), tf + ".run_sigma", 0, 3),
            # A Weibull of this shape instead of the lognormal (None).
            "weibull_shape": (
                c.number(t["run_weibull_shape"], tf + ".run_weibull_shape",
                         0.2, 5) if "run_weibull_shape" in t else None),
        }
    d = c.obj(queues.get("deadlines", {}), f + ".deadlines", (),
              ("share", "hours"))
    q.deadline_share = c.number(d.get("share", 0), f + ".deadlines.share", 0, 1)
    hours = c.array(d.get("hours", [1, 24]), f + ".deadlines.hours", 2)
    q.deadline_hours = (c.number(hours[0], f + ".deadlines.hours[0]", 0.01),
                        c.number(hours[1], f + ".deadlines.hours[1]", hours[0]))
    v = c.obj(queues.get("value_of_time", {}), f + ".value_of_time", (),
              ("share", "per_hour"))
    q.value_share = c.number(v.get("share", 0), f + ".value_of_time.share", 0,
                             1 - q.deadline_share)
    per_hour = c.array(v.get("per_hour", [1, 20]), f + ".value_of_time.per_hour",
                       2)
    q.value_per_hour = (
        c.number(per_hour[0], f + ".value_of_time.per_hour[0]", 0.01),
        c.number(per_hour[1], f + ".value_of_time.per_hour[1]", per_hour[0]))
    return q


def _log_uniform(rng, low, high):
    return low * (high / low) ** rng.random()


def assign_kinds(config, jobs):
    """Each job's deadline (seconds after it arrives) or value of time
    (money per hour to finish), seeded: `kind` is plain, deadline or value."""
    rng = random.Random(config.seed * 7919 + 1)
    for job in jobs:
        u = rng.random()
        job.deadline_s = None
        job.value_per_hour = None
        if u < config.deadline_share:
            job.kind = "deadline"
            job.deadline_s = 3600 * _log_uniform(rng, *config.deadline_hours)
        elif u < config.deadline_share + config.value_share:
            job.kind = "value"
            job.value_per_hour = _log_uniform(rng, *config.value_per_hour)
        else:
            job.kind = "plain"


class QJob:
    """A job in a pool's queue; `run_s` is its true run time."""

    def __init__(self, job_id, gpus, submit, run_s, plan_id=""):
        self.id = job_id
        self.gpus = gpus
        self.submit = submit
        self.run_s = run_s
        self.plan_id = plan_id
        self.start = None
        self.on_start = None  # called with the start time
        self.on_end = None    # called with the end time

    @property
    def end(self):
        return None if self.start is None else self.start + self.run_s


def weibull_above(tenants, elapsed, rng):
    """A run time of the tenants' Weibull (`weibull_shape` k, median
    `median_s`), drawn above `elapsed`: its survival exp(-(t/scale)^k)
    given that, exactly."""
    k = tenants["weibull_shape"]
    scale = tenants["median_s"] / math.log(2) ** (1 / k)
    return scale * ((elapsed / scale) ** k + rng.expovariate(1.0)) ** (1 / k)


def tenant_arrivals(config, pool_caps, horizon_s, luck=0):
    """Per pool, the other tenants' jobs over [0, horizon): (time, gpus,
    run seconds), in time order, each within the pool's capacity. `luck` 0
    draws the world's own tenants; another number, another history of them
    from the same rates and distributions."""
    out = {}
    for name, t in config.tenants.items():
        salt = f"|luck{luck}" if luck else ""
        rng = random.Random(f"{config.seed}|{name}{salt}")
        counts = [n for n, _ in t["gpus"] if n <= pool_caps[name]]
        weights = [w for n, w in t["gpus"] if n <= pool_caps[name]]
        jobs, at = [], 0.0
        while t["rate_per_s"] > 0:
            at += rng.expovariate(t["rate_per_s"])
            if at >= horizon_s:
                break
            gpus = rng.choices(counts, weights)[0]
            if t["weibull_shape"] is None:
                run = t["median_s"] * math.exp(t["sigma"] * rng.gauss(0, 1))
            else:
                run = weibull_above(t, 0.0, rng)
            jobs.append((at, gpus, max(60.0, run)))
        out[name] = jobs
    return out


class PoolQueue:
    """One pool served first come, first served."""

    def __init__(self, name, capacity):
        self.name = name
        self.capacity = capacity
        self.running = []
        self.pending = []
        self.finished = []  # since the last report

    def free(self):
        return self.capacity - sum(j.gpus for j in self.running)

    def start_ready(self, now):
        while self.pending and self.pending[0].gpus <= self.free():
            job = self.pending.pop(0)
            job.start = now
            self.running.append(job)
            if job.on_start:
                job.on_start(now)

    def next_end(self):
        return min((j.end for j in self.running), default=math.inf)

    def finish_until(self, now):
        """Ends every job due by `now`, in end order, starting what fits."""
        while self.running and self.next_end() <= now:
            at = self.next_end()
            done = [j for j in self.running if j.end == at]
            for job in done:
                self.running.remove(job)
                self.finished.append(job)
                if job.on_end:
                    job.on_end(at)
            self.start_ready(at)

    def submit(self, job, now):
        self.pending.append(job)
        self.start_ready(now)

    def true_start(self, gpus, now):
        """When a job of `gpus` GPUs queued now would start: the queue
        played with every job's true run time (what the oracle knows)."""
        return now + self._play([(j.gpus, j.end - now) for j in self.running],
                                [(j.gpus, j.run_s) for j in self.pending],
                                gpus)

    def forecast_starts(self, gpus, now, tenants, rng, draws=200):
        """Sorted draws of the wait of a job of `gpus` GPUs queued now, by a
        forecaster that knows the other tenants' run-time distribution
        (`tenants`: the pool's median_s and sigma, or weibull_shape) and
        the true run time of every job of the trace (the ones with a plan
        id): the best forecast a report of this queue allows
        (docs/DECISIONS.md, "What a right forecast does here")."""
        normal = statistics.NormalDist()

        def tenant_run(elapsed):
            # The world's distribution, above what the job has run already.
            if tenants.get("weibull_shape") is not None:
                return max(60.0, elapsed, weibull_above(tenants, elapsed, rng))
            median, sigma = tenants["median_s"], tenants["sigma"]
            floor = (normal.cdf(math.log(elapsed / median) / sigma)
                     if elapsed > 0 and sigma > 0 else 0.0)
            u = min(floor + (1 - floor) * rng.random(), 1 - 1e-12)
            return max(60.0, elapsed,
                       median * math.exp(sigma * normal.inv_cdf(max(u, 1e-12))))
        waits = []
        for _ in range(draws):
            running = [(j.gpus, (j.run_s if j.plan_id else
                                 tenant_run(now - j.start)) - (now - j.start))
                       for j in self.running]
            pending = [(j.gpus, j.run_s if j.plan_id else tenant_run(0))
                       for j in self.pending]
            waits.append(self._play(running, pending, gpus))
        return sorted(waits)

    def _play(self, running, pending, gpus):
        """The queue played forward: `running` (GPUs, seconds left),
        `pending` (GPUs, run seconds) in order; when (seconds from now) a
        job of `gpus` GPUs queued behind them starts."""
        held = {}
        for need, left in running:
            held[left] = held.get(left, 0) + need
        ends = sorted(held)
        free = self.capacity - sum(need for need, _ in running)
        t = 0.0
        for need, run in pending + [(gpus, None)]:
            while free < need:
                at = ends.pop(0)
                t = max(t, at)
                free += held.pop(at)
            if run is None:
                return t
            end = t + run
            if end in held:
                held[end] += need
            else:
                held[end] = need
                bisect.insort(ends, end)
            free -= need
        return t
