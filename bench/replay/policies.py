"""The policies under test. Each picks one of the plan's viable layouts
(its candidates, less the pools that already ran out of memory for the
job); only the oracle sees the truth."""

import math

from execution import expected_cost


def _hours(layout, step_s, steps):
    return layout.gpu_count * step_s * steps / 3600.0


class Policy:
    name = ""
    bakeoff = False  # runs the plan's proposed bake-off first
    knows_truth = False

    def choose(self, world, job, options):
        """options: [(candidate, layout)] in the plan's rank order."""
        raise NotImplementedError


class Advised(Policy):
    name = "service, bake-offs run"
    bakeoff = True

    def choose(self, world, job, options):
        return options[0][1]


class RankOne(Policy):
    name = "service, rank 1 only"

    def choose(self, world, job, options):
        return options[0][1]


class ListPrice(Policy):
    """The SkyPilot optimizer's rule: the lowest list price x the plan's
    estimated time (its step time: measured p50, else the model's)."""
    name = "list price x est. time"

    def choose(self, world, job, options):
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

    def choose(self, world, job, options):
        return min(options, key=lambda o: o[1].rate * _hours(
            o[1], o[0].prior_step_time_s, job.steps))[1]


class Oracle(Policy):
    """Hindsight: the lowest expected TRUE cost, failures' rework included;
    never a layout that runs out of memory."""
    name = "hindsight oracle"
    knows_truth = True

    def choose(self, world, job, options):
        best, best_cost = None, math.inf
        for _, layout in options:
            cost = expected_cost(world, job.id, layout, job.steps)
            if cost is not None and cost < best_cost:
                best, best_cost = layout, cost
        return best


ALL = (Advised, RankOne, ListPrice, InternalPrior, Oracle)
KEYS = {"advised": Advised, "rank1": RankOne, "list-price": ListPrice,
        "internal-prior": InternalPrior, "oracle": Oracle}
