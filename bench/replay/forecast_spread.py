"""How far one history's start-forecast calibration strays when the
forecast is right: for each pool of a queue world, histories of its other
tenants alone (`--tenant-luck` 0 to N-1, no trace), each tenant's job
forecast on arrival by the ideal forecaster of the queue replay
(PoolQueue.forecast_starts: the tenants' true run-time distribution, the
queue as it stands) and checked against its start as the replay checks the
trace's (start_checks.started_by). A forecast that is right starts 50% of
jobs by its median over many histories; what one history shows around
that is the noise a bar read on one history must allow (docs/DECISIONS.md,
"One history's calibration, when the forecast is right").

    PYTHONPATH=build/release/proto/python:tests/support:bench/replay \\
        /usr/bin/python3 bench/replay/forecast_spread.py --histories 20 \\
        bench/replay/worlds/queues-busy.json
"""

import argparse
import random
import statistics
import sys

import queues as qlib
import time_ranking
import world as world_lib
from start_checks import LEVELS, started_by


class _Check:
    """A tenant's job as queue_report reads a trace job: its wait."""

    def __init__(self, wait_s):
        self.wait_s = wait_s


def history_checks(config, capacities, pool, horizon_s, luck):
    """(wait, {level: forecast seconds}) of each tenant job of `pool` that
    arrived after the warm-up, in one history of the tenants."""
    tenants = config.tenants[pool]
    arrivals = qlib.tenant_arrivals(config, capacities, horizon_s, luck)[pool]
    queue = qlib.PoolQueue(pool, capacities[pool])
    rng = random.Random(f"spread|{pool}|{luck}")
    forecasts = []
    for n, (at, gpus, run_s) in enumerate(arrivals):
        queue.finish_until(at)
        draws = queue.forecast_starts(gpus, at, tenants, rng)
        job = qlib.QJob(f"t{n}", gpus, at, run_s)
        forecasts.append((job, {p: time_ranking.quantile_of_sorted(draws, p)
                                for p in LEVELS}))
        queue.submit(job, at)
    queue.finish_until(float("inf"))
    return [(job.start - job.submit, forecast) for job, forecast in forecasts
            if job.submit >= config.warmup_s]


def shares(checks):
    """{level: share started by it} over `checks`."""
    return {p: sum(started_by(_Check(wait), p, forecast)
                   for wait, forecast in checks) / len(checks)
            for p in LEVELS}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--histories", type=int, default=20)
    parser.add_argument("world")
    args = parser.parse_args(argv)
    world = world_lib.load(args.world)
    config = world.queues
    capacities = {p["name"]: p["nodes"] * p["gpus_per_node"]
                  for p in world.pools}
    horizon_s = config.warmup_s + len(world.jobs) * world.arrival_gap_s
    pools = sorted(p for p in config.tenants if p in capacities)
    per_history = {pool: [] for pool in pools + ["all pools"]}
    for luck in range(args.histories):
        together = []
        for pool in pools:
            checks = history_checks(config, capacities, pool, horizon_s, luck)
            together += checks
            if checks:
                per_history[pool].append((shares(checks), len(checks)))
        if together:
            per_history["all pools"].append((shares(together), len(together)))
    print(f"{args.world}: {args.histories} histories of the tenants, each "
          "job forecast on arrival by a forecast that knows their run-time "
          "distribution; started by the forecast's p50 / p90")
    print("| pool | jobs per history | mean over histories | "
          "sd between histories | lowest to highest |")
    print("| --- | --- | --- | --- | --- |")
    for pool, rows in per_history.items():
        if len(rows) < 2:
            continue
        cells = []
        for stat in (statistics.mean, statistics.stdev):
            cells.append(" / ".join(
                f"{100 * stat([s[p] for s, _ in rows]):.1f}"
                for p in (0.5, 0.9)))
        spread = " / ".join(
            f"{100 * min(s[p] for s, _ in rows):.0f}-"
            f"{100 * max(s[p] for s, _ in rows):.0f}" for p in (0.5, 0.9))
        jobs = statistics.median(n for _, n in rows)
        print(f"| {pool} | {jobs:.0f} | {cells[0]} | {cells[1]} | {spread} |")


if __name__ == "__main__":
    main(sys.argv[1:])
