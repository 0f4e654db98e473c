"""The policies under test. Each picks one of the plan's viable layouts
(its candidates, less the pools that already ran out of memory for the
job); only the oracle sees the truth."""

import math

from execution import expected_cost_and_error


def _hours(layout, step_s, steps):
    return layout.gpu_count * step_s * steps / 3600.0


class Policy:
    name = ""
    bakeoff = False  # runs the plan's proposed bake-off first
    knows_truth = False

    def choose(self, world, job, options, start_s):
        """options: [(candidate, layout)] in the plan's rank order; the job
        would start at `start_s` on the replay's clock."""
        raise NotImplementedError


class Advised(Policy):
    name = "service, bake-offs run"
    bakeoff = True

    def choose(self, world, job, options, start_s):
        return options[0][1]


class RankOne(Policy):
    name = "service, rank 1 only"

    def choose(self, world, job, options, start_s):
        return options[0][1]


class ListPrice(Policy):
    """The SkyPilot optimizer's rule: the lowest list price x the plan's
    estimated time (its step time: measured p50, else the model's)."""
    name = "list price x est. time"

    def choose(self, world, job, options, start_s):
        def cost(option):
            c, layout = option
            price = next(p.get("list_price_per_gpu_hour",
                               p["rate_per_gpu_hour"])
                         for p in world.pools if p["name"] == c.pool)
            return price * _hours(layout, c.step_time_s, job.steps)
        return min(options, key=cost)[1]


class InternalPrior(Policy):
    """The internal rate x the analytic prior's step time."""
    name = "internal rate x prior"

    def choose(self, world, job, options, start_s):
        return min(options, key=lambda o: o[1].rate * _hours(
            o[1], o[0].prior_step_time_s, job.steps))[1]


class Oracle(Policy):
    """Hindsight: the lowest expected TRUE cost from the job's start,
    failures' rework included (at the hours the job would run);
    never a layout that runs out of memory. Where failures make the
    expectation an estimate, it records the largest relative standard error
    of any figure it compared and how many choices were closer than two
    standard errors (a coin toss between near-equal layouts)."""
    name = "hindsight oracle"
    knows_truth = True

    def __init__(self):
        self.max_relative_se = 0.0
        self.close_calls = 0

    def choose(self, world, job, options, start_s):
        scored = []
        for _, layout in options:
            cost, se = expected_cost_and_error(world, job.id, layout,
                                               job.steps, start_s)
            if cost is not None:
                scored.append((cost, se, layout))
                self.max_relative_se = max(self.max_relative_se, se / cost)
        if not scored:
            return None
        scored.sort(key=lambda s: s[0])
        cost, se, best = scored[0]
        if len(scored) > 1:
            gap = scored[1][0] - cost
            if gap < 2 * math.hypot(se, scored[1][1]):
                self.close_calls += 1
        return best


ALL = (Advised, RankOne, ListPrice, InternalPrior, Oracle)
KEYS = {"advised": Advised, "rank1": RankOne, "list-price": ListPrice,
        "internal-prior": InternalPrior, "oracle": Oracle}
