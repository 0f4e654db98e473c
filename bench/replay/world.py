"""World files: the fleet, the job trace and the truth the service does not
know. Loading checks every field and names the bad one (docs/DECISIONS.md
has the format)."""

import json
import os
import random

from google.protobuf import json_format

from placement.v1 import recipe_pb2
from placement.v1 import telemetry_pb2

import queues

FAILURE_OUTCOMES = ("PREEMPTED", "HARDWARE_ERROR", "COLLECTIVE_TIMEOUT")
# How an attempt's failure reaches the service (docs/DECISIONS.md "How runs
# are reported"): every attempt its own run record, as before; the agent's
# run, whose failed attempts are retries of one record; a Slurm job requeued
# in place, whose requeues are.
REPORTING_STYLES = ("attempts", "agent", "requeue")
# What each style retries inside the record. The agent retries a failed
# command, but a SIGTERM (Slurm's preemption, a scancel) ends its run with no
# retry, and so does running out of memory before the attempt's first step
# (docs/AGENT.md), which is where the replay's layouts run out of memory
# (execution.run_attempt); Slurm requeues a batch job after a node failure or
# a preemption (--requeue), and any other non-zero exit ends the job.
RETRIED_INSIDE_RECORD = {
    "attempts": (),
    "agent": ("HARDWARE_ERROR", "COLLECTIVE_TIMEOUT"),
    "requeue": ("PREEMPTED", "HARDWARE_ERROR"),
}
# Defaults of max_retries: the agent's --max_retries, Slurm's MaxBatchRequeue.
DEFAULT_MAX_RETRIES = {"attempts": 0, "agent": 2, "requeue": 5}
FABRICS = ("nvlink", "pcie")
INTER_NODE_FABRICS = ("none", "ethernet", "roce", "infiniband")
OBJECTIVES = ("cost", "time")
GPU_SCOPES = ("single", "multi")


class WorldError(ValueError):
    """A world file that does not follow the format; the message names the
    file and the field."""


class _Checker:
    def __init__(self, path):
        self.path = path

    def fail(self, field, message):
        raise WorldError(f"{self.path}: {field}: {message}")

    def obj(self, value, field, required=(), optional=None):
        """An object; with `optional` given, no other key than these."""
        if not isinstance(value, dict):
            self.fail(field, "must be an object")
        for key in required:
            if key not in value:
                self.fail(f"{field}.{key}" if field else key, "is required")
        for key in value if optional is not None else ():
            if key not in required and key not in optional:
                self.fail(f"{field}.{key}" if field else key,
                          "is not a known field (known: "
                          f"{', '.join(sorted(set(required) | set(optional)))})")
        return value

    def number(self, value, field, low=None, high=None, integer=False):
        kind = int if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kind):
            self.fail(field, "must be an integer" if integer else
                      "must be a number")
        if low is not None and value < low:
            self.fail(field, f"must be at least {low}")
        if high is not None and value > high:
            self.fail(field, f"must be at most {high}")
        return value

    def string(self, value, field, choices=None):
        if not isinstance(value, str) or not value:
            self.fail(field, "must be a non-empty string")
        if choices is not None and value not in choices:
            self.fail(field, f"must be one of {', '.join(choices)}")
        return value

    def array(self, value, field, min_len=0):
        if not isinstance(value, list) or len(value) < min_len:
            self.fail(field, f"must be an array of at least {min_len}")
        return value


def _method_name(value):
    return recipe_pb2.FineTuneMethod.Name(value)[len("FINE_TUNE_METHOD_"):].lower()


def _load_json(path, seen):
    real = os.path.realpath(path)
    if real in seen:
        raise WorldError(f"{path}: base: includes itself")
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise WorldError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise WorldError(f"{path}: line {e.lineno}: not JSON: {e.msg}") from None
    if not isinstance(data, dict):
        raise WorldError(f"{path}: must hold a JSON object")
    base = data.pop("base", None)
    if base is None:
        return data
    if not isinstance(base, str):
        raise WorldError(f"{path}: base: must be a file name")
    merged = _load_json(os.path.join(os.path.dirname(path), base),
                        seen | {real})
    merged.update(data)  # top-level keys of the world replace the base's
    return merged


class Rule:
    """A multiplier that applies where every field it names matches."""

    def __init__(self, sku, method, gpus, x):
        self.sku, self.method, self.gpus, self.x = sku, method, gpus, x

    def matches(self, sku, method, gpu_count):
        return ((self.sku is None or self.sku == sku) and
                (self.method is None or self.method == method) and
                (self.gpus is None or
                 self.gpus == ("single" if gpu_count == 1 else "multi")))


class Hazard:
    """A failure rate on a pool and/or SKU, for single- or multi-GPU layouts
    or both, at every hour of the day or only inside `hours` [from, to)
    (UTC on the replay's clock; from > to wraps past midnight)."""

    def __init__(self, pool, sku, per_hour, outcome, gpus=None, hours=None):
        self.pool, self.sku, self.per_hour = pool, sku, per_hour
        self.gpus, self.hours = gpus, hours
        self.outcome = getattr(telemetry_pb2, "RUN_OUTCOME_" + outcome)

    def applies(self, pool, sku, gpu_count):
        return ((self.pool is None or self.pool == pool) and
                (self.sku is None or self.sku == sku) and
                (self.gpus is None or
                 self.gpus == ("single" if gpu_count == 1 else "multi")))

    def active(self, hour_of_day):
        """Whether the hazard runs at `hour_of_day` (0 <= h < 24)."""
        if self.hours is None:
            return True
        start, end = self.hours
        if start <= end:
            return start <= hour_of_day < end
        return hour_of_day >= start or hour_of_day < end


class ClockFault:
    """An agent clock that is behind when a run starts and is stepped
    forward (by `step_s`) before it ends: the run's start_time is early by
    that much, its end_time and its step times (a monotonic clock) are
    right. Drawn per run record with probability `share`."""

    def __init__(self, pool, sku, share, step_s):
        self.pool, self.sku, self.share, self.step_s = pool, sku, share, step_s

    def applies(self, pool, sku):
        return ((self.pool is None or self.pool == pool) and
                (self.sku is None or self.sku == sku))


class Reporting:
    """How attempts become run records: an attempt after a failed one
    belongs to the same record when the style retries that outcome inside
    the record and the record has retries left."""

    def __init__(self, style, max_retries):
        self.style, self.max_retries = style, max_retries
        self.retried = {getattr(telemetry_pb2, "RUN_OUTCOME_" + o)
                        for o in RETRIED_INSIDE_RECORD[style]}

    def continues(self, record_attempts, outcome):
        """Whether the record whose latest of `record_attempts` attempts
        ended with `outcome` (a failure) takes the next attempt too."""
        return outcome in self.retried and record_attempts <= self.max_retries

    def records(self, attempts):
        """`attempts` (one job's, in order) split into run records."""
        out = []
        for a in attempts:
            if out and self.continues(len(out[-1]), out[-1][-1].outcome):
                out[-1].append(a)
            else:
                out.append([a])
        return out


class Job:
    def __init__(self, index, recipe_class, recipe, steps, team, objective):
        self.index = index
        self.id = f"job{index:03d}"
        self.recipe_class = recipe_class
        self.recipe = recipe
        self.steps = steps
        self.team = team
        self.objective = objective


class World:
    """What load() returns: pools, jobs and the truth, checked."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        # Which draw of the world's luck the replay meets: 0 is the world's
        # own; another number draws every attempt's fortune anew, and in a
        # queue world starts the clock that many days later (replay.py
        # --luck), to tell a policy's choices from one trace's luck.
        self.luck = 0
        # Which draw of a queue world's other tenants (arrivals, sizes, run
        # times) the replay meets: 0 is the world's own (replay.py
        # --tenant-luck), another number another queue history.
        self.tenant_luck = 0

    def luck_salt(self):
        """What the execution's seeds carry besides (job, layout, attempt):
        nothing for the world's own luck, so its draws never change."""
        return () if self.luck == 0 else ("luck", self.luck)

    # The truth, relative to the service's own prior for a layout.
    def step_time_multiplier(self, sku, method, gpu_count):
        return _product(r.x for r in self.step_time_rules
                        if r.matches(sku, method, gpu_count))

    def peak_memory_multiplier(self, sku, method, gpu_count):
        return _product(r.x for r in self.peak_memory_rules
                        if r.matches(sku, method, gpu_count))

    def hazards(self, pool, sku, gpu_count):
        return [h for h in self.failure_hazards
                if h.applies(pool, sku, gpu_count)]

    def clock_faults_for(self, pool, sku):
        return [f for f in self.clock_faults if f.applies(pool, sku)]

    def prior_is_right(self):
        """Reality is the service's prior: no multiplier, failure or card
        memory of its own (noise, start-up and what agents report aside).
        The replay's verdict holds such a world to list price + 1%."""
        return not (self.step_time_rules or self.peak_memory_rules or
                    self.failure_hazards or self.card_memory_override)

    def startup_s(self, model):
        return self.startup_by_model.get(model, self.startup_default_s)

    def card_memory_gb(self, sku, catalog_gb):
        return self.card_memory_override.get(sku, catalog_gb)


def _product(values):
    out = 1.0
    for v in values:
        out *= v
    return out


def _parse_pools(c, pools):
    c.array(pools, "pools", 1)
    names = set()
    for i, p in enumerate(pools):
        f = f"pools[{i}]"
        c.obj(p, f, ("name", "sku", "nodes", "gpus_per_node", "fabric",
                     "rate_per_gpu_hour"),
              ("inter_node_fabric", "inter_node_gb_s", "list_price_per_gpu_hour"))
        c.string(p["name"], f + ".name")
        if p["name"] in names:
            c.fail(f + ".name", f"'{p['name']}' is named twice")
        names.add(p["name"])
        c.string(p["sku"], f + ".sku")
        c.number(p["nodes"], f + ".nodes", 1, 64, integer=True)
        c.number(p["gpus_per_node"], f + ".gpus_per_node", 1, 16, integer=True)
        c.string(p["fabric"], f + ".fabric", FABRICS)
        c.number(p["rate_per_gpu_hour"], f + ".rate_per_gpu_hour", 0.01, 1000)
        if "list_price_per_gpu_hour" in p:
            c.number(p["list_price_per_gpu_hour"],
                     f + ".list_price_per_gpu_hour", 0.01, 1000)
        if "inter_node_fabric" in p:
            c.string(p["inter_node_fabric"], f + ".inter_node_fabric",
                     INTER_NODE_FABRICS)
        if "inter_node_gb_s" in p:
            c.number(p["inter_node_gb_s"], f + ".inter_node_gb_s", 0, 200)
    return pools


def _parse_recipe_classes(c, classes):
    c.obj(classes, "recipe_classes")
    if not classes:
        c.fail("recipe_classes", "must name at least one recipe")
    out = {}
    for name, recipe in classes.items():
        field = f"recipe_classes.{name}"
        c.obj(recipe, field, ("model", "method"),
              tuple(recipe_pb2.Recipe.DESCRIPTOR.fields_by_name))
        try:
            out[name] = json_format.ParseDict(recipe, recipe_pb2.Recipe())
        except json_format.ParseError as e:
            c.fail(field, str(e))
    return out


def _parse_job(c, job, field, classes, index):
    c.obj(job, field, ("class", "steps"), ("team", "objective"))
    c.string(job["class"], field + ".class", sorted(classes))
    c.number(job["steps"], field + ".steps", 1, 10_000_000, integer=True)
    team = c.string(job.get("team", "ml-platform"), field + ".team")
    objective = c.string(job.get("objective", "cost"), field + ".objective",
                         OBJECTIVES)
    return Job(index, job["class"], classes[job["class"]], job["steps"],
               team, objective)


def _generate_jobs(c, gen, classes):
    f = "trace.generator"
    c.obj(gen, f, ("seed", "jobs", "steps"),
          ("classes", "teams", "objective_time_share"))
    c.number(gen["seed"], f + ".seed", integer=True)
    count = c.number(gen["jobs"], f + ".jobs", 1, 100_000, integer=True)
    steps = c.array(gen["steps"], f + ".steps", 2)
    low = c.number(steps[0], f + ".steps[0]", 1, integer=True)
    high = c.number(steps[1], f + ".steps[1]", low, 10_000_000, integer=True)
    names = gen.get("classes", sorted(classes))
    c.array(names, f + ".classes", 1)
    for i, n in enumerate(names):
        c.string(n, f"{f}.classes[{i}]", sorted(classes))
    teams = gen.get("teams", ["ml-platform"])
    c.array(teams, f + ".teams", 1)
    for i, t in enumerate(teams):
        c.string(t, f"{f}.teams[{i}]")
    time_share = c.number(gen.get("objective_time_share", 0),
                          f + ".objective_time_share", 0, 1)
    rng = random.Random(gen["seed"])
    jobs = []
    for i in range(count):
        name = rng.choice(names)
        # Log-uniform steps: many short fine-tunes, a few long ones.
        n = int(round(low * (high / low) ** rng.random()))
        objective = "time" if rng.random() < time_share else "cost"
        jobs.append(Job(i, name, classes[name], n, rng.choice(teams),
                        objective))
    return jobs


def _parse_trace(c, trace, classes):
    c.obj(trace, "trace", (), ("jobs", "generator"))
    if ("jobs" in trace) == ("generator" in trace):
        c.fail("trace", "must hold exactly one of jobs, generator")
    if "generator" in trace:
        return _generate_jobs(c, trace["generator"], classes)
    c.array(trace["jobs"], "trace.jobs", 1)
    return [_parse_job(c, j, f"trace.jobs[{i}]", classes, i)
            for i, j in enumerate(trace["jobs"])]


def _parse_rules(c, rules, field, pool_names):
    c.array(rules, field)
    out = []
    for i, r in enumerate(rules):
        f = f"{field}[{i}]"
        c.obj(r, f, ("x",), ("sku", "method", "gpus", "note"))
        c.number(r["x"], f + ".x", 0.01, 100)
        method = r.get("method")
        if method is not None:
            c.string(method, f + ".method",
                     [_method_name(v) for v in
                      recipe_pb2.FineTuneMethod.values() if v])
        if "gpus" in r:
            c.string(r["gpus"], f + ".gpus", GPU_SCOPES)
        if "sku" in r:
            c.string(r["sku"], f + ".sku")
        out.append(Rule(r.get("sku"), method, r.get("gpus"), r["x"]))
    return out


def _parse_truth(c, truth, world, pool_names):
    c.obj(truth, "truth", (), (
        "step_time", "peak_memory", "failures", "clock_faults", "failure_cost",
        "step_time_sigma", "startup_s", "startup_s_by_model",
        "card_memory_gb", "note"))
    world.step_time_rules = _parse_rules(
        c, truth.get("step_time", []), "truth.step_time", pool_names)
    world.peak_memory_rules = _parse_rules(
        c, truth.get("peak_memory", []), "truth.peak_memory", pool_names)
    world.failure_hazards = []
    for i, h in enumerate(c.array(truth.get("failures", []), "truth.failures")):
        f = f"truth.failures[{i}]"
        c.obj(h, f, ("per_hour", "outcome"),
              ("pool", "sku", "gpus", "hours", "note"))
        c.number(h["per_hour"], f + ".per_hour", 0, 10)
        c.string(h["outcome"], f + ".outcome", FAILURE_OUTCOMES)
        if "pool" in h:
            c.string(h["pool"], f + ".pool", sorted(pool_names))
        if "sku" in h:
            c.string(h["sku"], f + ".sku")
        if "gpus" in h:
            c.string(h["gpus"], f + ".gpus", GPU_SCOPES)
        hours = None
        if "hours" in h:
            c.array(h["hours"], f + ".hours", 2)
            if len(h["hours"]) != 2:
                c.fail(f + ".hours", "must be [from, to], hours of the day")
            hours = tuple(c.number(x, f"{f}.hours[{k}]", 0, 24, integer=True)
                          for k, x in enumerate(h["hours"]))
            if hours[0] == hours[1]:
                c.fail(f + ".hours", "must not be empty (from equals to)")
        world.failure_hazards.append(
            Hazard(h.get("pool"), h.get("sku"), h["per_hour"], h["outcome"],
                   h.get("gpus"), hours))
    world.clock_faults = []
    for i, fault in enumerate(c.array(truth.get("clock_faults", []),
                                      "truth.clock_faults")):
        f = f"truth.clock_faults[{i}]"
        c.obj(fault, f, ("share", "step_s"), ("pool", "sku", "note"))
        c.number(fault["share"], f + ".share", 0, 1)
        # Up to a year: a clock reset to its firmware's date is further off
        # than anything that still lets a node run jobs (TLS, munge).
        c.number(fault["step_s"], f + ".step_s", -366 * 86400, 366 * 86400)
        if "pool" in fault:
            c.string(fault["pool"], f + ".pool", sorted(pool_names))
        if "sku" in fault:
            c.string(fault["sku"], f + ".sku")
        world.clock_faults.append(ClockFault(
            fault.get("pool"), fault.get("sku"), fault["share"],
            fault["step_s"]))
    cost = c.obj(truth.get("failure_cost", {}), "truth.failure_cost", (),
                 ("detection_s", "restart_s", "checkpoint_interval_s",
                  "max_attempts"))
    world.detection_s = c.number(cost.get("detection_s", 300),
                                 "truth.failure_cost.detection_s", 0)
    world.restart_s = c.number(cost.get("restart_s", 120),
                               "truth.failure_cost.restart_s", 0)
    world.checkpoint_interval_s = c.number(
        cost.get("checkpoint_interval_s", 1800),
        "truth.failure_cost.checkpoint_interval_s", 1)
    world.max_attempts = c.number(cost.get("max_attempts", 20),
                                  "truth.failure_cost.max_attempts", 1, 1000,
                                  integer=True)
    world.step_time_sigma = c.number(truth.get("step_time_sigma", 0.05),
                                     "truth.step_time_sigma", 0, 2)
    world.startup_default_s = c.number(truth.get("startup_s", 180),
                                       "truth.startup_s", 0)
    by_model = c.obj(truth.get("startup_s_by_model", {}),
                     "truth.startup_s_by_model")
    for k, v in by_model.items():
        c.number(v, f"truth.startup_s_by_model.{k}", 0)
    world.startup_by_model = by_model
    cards = c.obj(truth.get("card_memory_gb", {}), "truth.card_memory_gb")
    for k, v in cards.items():
        c.number(v, f"truth.card_memory_gb.{k}", 1, 1000)
    world.card_memory_override = cards


def load(path, max_jobs=None):
    """The world in `path`; raises WorldError naming the bad field."""
    data = _load_json(path, frozenset())
    c = _Checker(path)
    c.obj(data, "", ("pools", "recipe_classes", "trace"),
          ("truth", "bakeoff_steps", "arrival_gap_s", "reporting",
           "description", "queues"))
    world = World(path)
    world.description = data.get("description", "")
    world.pools = _parse_pools(c, data["pools"])
    world.classes = _parse_recipe_classes(c, data["recipe_classes"])
    world.jobs = _parse_trace(c, data["trace"], world.classes)
    if max_jobs is not None:
        world.jobs = world.jobs[:max_jobs]
    world.bakeoff_steps = c.number(data.get("bakeoff_steps", 100),
                                   "bakeoff_steps", 1, 1_000_000, integer=True)
    world.arrival_gap_s = c.number(data.get("arrival_gap_s", 3600),
                                   "arrival_gap_s", 0)
    _parse_truth(c, data.get("truth", {}), world,
                 {p["name"] for p in world.pools})
    world.reporting = _parse_reporting(c, data.get("reporting", {}))
    world.queues = None
    if "queues" in data:
        world.queues = queues.parse(c, data["queues"],
                                    {p["name"] for p in world.pools})
        queues.assign_kinds(world.queues, world.jobs)
    return world


def _parse_reporting(c, reporting):
    f = "reporting"
    c.obj(reporting, f, (), ("style", "max_retries", "note"))
    style = c.string(reporting.get("style", "attempts"), f + ".style",
                     REPORTING_STYLES)
    if style == "attempts" and reporting.get("max_retries", 0) != 0:
        c.fail(f + ".max_retries", "must be 0 when every attempt is its "
               "own run record (style attempts)")
    max_retries = c.number(reporting.get("max_retries",
                                         DEFAULT_MAX_RETRIES[style]),
                           f + ".max_retries", 0, 100, integer=True)
    return Reporting(style, max_retries)


def method_name(recipe):
    """'lora', 'full', ... as truth rules name methods."""
    return _method_name(recipe.method)
