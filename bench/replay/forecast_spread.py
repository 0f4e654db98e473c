"""How far one history's start-forecast calibration strays when the
forecast is right: for each pool of a queue world, histories of its other
tenants alone (`--tenant-luck` 0 to N-1, no trace), each tenant's job
forecast on arrival by the ideal forecaster of the queue replay
(PoolQueue.forecast_starts: the tenants' true run-time distribution, the
queue as it stands) and checked against its start as the replay checks the
trace's (start_checks.started_by). A forecast that is right starts 50% of
jobs by its median over many histories; what one history shows around
that is the noise a bar read on one history must allow (docs/DECISIONS.md,
"One history's calibration, when the forecast is right"). With
`--calibrated`, the same forecasts are also read through the service's
calibration of a pool's forecasts (start_calibration.py: the pool's last 40
started checks and its jobs still waiting, as the service reads its placed
jobs'), every tenant's job a check: whether that rule moves a right
forecast toward or away from its levels (docs/DECISIONS.md, "A right
forecast over other histories").

    PYTHONPATH=build/release/proto/python:tests/support:bench/replay \\
        /usr/bin/python3 bench/replay/forecast_spread.py --histories 20 \\
        [--calibrated] bench/replay/worlds/queues-busy.json
"""

import argparse
import random
import statistics
import sys

import queues as qlib
import start_calibration
import time_ranking
import world as world_lib
from start_checks import LEVELS, started_by


class _Check:
    """A tenant's job as queue_report reads a trace job: its wait."""

    def __init__(self, wait_s):
        self.wait_s = wait_s


class _PoolChecks:
    """A pool's forecasts checked as the service keeps them: each job's
    check once it has started, in the order the jobs started (the last
    MAX_PITS), and the jobs still waiting, whose floors are read anew."""

    def __init__(self):
        self.pits = []
        self.waiting = []  # (job, its forecast's kept levels)

    def add(self, job, levels):
        self.waiting.append((job, levels))

    def calibration(self, now):
        """The pool's calibration as the service would read it now."""
        started = sorted((w for w in self.waiting
                          if w[0].start is not None and w[0].start <= now),
                         key=lambda w: w[0].start)
        self.pits += [start_calibration.pit(levels, job.start - job.submit,
                                            random.Random(job.id).random())
                      for job, levels in started]
        self.pits = self.pits[-start_calibration.MAX_PITS:]
        self.waiting = [w for w in self.waiting
                        if w[0].start is None or w[0].start > now]
        floors = [start_calibration.pit(levels, now - job.submit, 1.0)
                  for job, levels in self.waiting]
        return start_calibration.StartCalibration(self.pits, floors)


def history_forecasts(config, capacities, pool, horizon_s, luck,
                      calibrated=False):
    """(wait, {level: forecast seconds}, the same read through the checks
    of the jobs before it, or None unless `calibrated`) of each tenant job
    of `pool` that arrived after the warm-up, in one history of the
    tenants."""
    tenants = config.tenants[pool]
    arrivals = qlib.tenant_arrivals(config, capacities, horizon_s, luck)[pool]
    queue = qlib.PoolQueue(pool, capacities[pool])
    rng = random.Random(f"spread|{pool}|{luck}")
    forecasts = []
    checks = _PoolChecks()
    for n, (at, gpus, run_s) in enumerate(arrivals):
        queue.finish_until(at)
        draws = queue.forecast_starts(gpus, at, tenants, rng)
        job = qlib.QJob(f"t{n}", gpus, at, run_s)
        raw = {p: time_ranking.quantile_of_sorted(draws, p) for p in LEVELS}
        read = None
        if calibrated:
            level = checks.calibration(at).level
            read = {p: time_ranking.quantile_of_sorted(draws, level(p))
                    for p in LEVELS}
            checks.add(job, start_calibration.prediction_levels(draws))
        forecasts.append((job, raw, read))
        queue.submit(job, at)
    queue.finish_until(float("inf"))
    return [(job.start - job.submit, raw, read)
            for job, raw, read in forecasts if job.submit >= config.warmup_s]


def history_checks(config, capacities, pool, horizon_s, luck,
                   calibrated=False):
    """(wait, {level: forecast seconds}) of each tenant job of `pool` that
    arrived after the warm-up, in one history of the tenants; `calibrated`:
    each forecast read through the checks of the jobs before it."""
    return [(wait, read if calibrated else raw)
            for wait, raw, read in history_forecasts(
                config, capacities, pool, horizon_s, luck, calibrated)]


def shares(checks):
    """{level: share started by it} over `checks`."""
    return {p: sum(started_by(_Check(wait), p, forecast)
                   for wait, forecast in checks) / len(checks)
            for p in LEVELS}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--histories", type=int, default=20)
    parser.add_argument("--calibrated", action="store_true",
                        help="also read each forecast through the "
                        "service's calibration of the pool's checks")
    parser.add_argument("world")
    args = parser.parse_args(argv)
    world = world_lib.load(args.world)
    config = world.queues
    capacities = {p["name"]: p["nodes"] * p["gpus_per_node"]
                  for p in world.pools}
    horizon_s = config.warmup_s + len(world.jobs) * world.arrival_gap_s
    pools = sorted(p for p in config.tenants if p in capacities)
    # One pass over each history; its forecasts as they are (reading 0)
    # and, with --calibrated, read through the pool's checks (reading 1).
    readings = (0, 1) if args.calibrated else (0,)
    per_history = [{pool: [] for pool in pools + ["all pools"]}
                   for _ in readings]
    for luck in range(args.histories):
        together = [[] for _ in readings]
        for pool in pools:
            forecasts = history_forecasts(config, capacities, pool, horizon_s,
                                          luck, args.calibrated)
            for r in readings:
                checks = [(row[0], row[1 + r]) for row in forecasts]
                together[r] += checks
                if checks:
                    per_history[r][pool].append((shares(checks), len(checks)))
        for r in readings:
            if together[r]:
                per_history[r]["all pools"].append(
                    (shares(together[r]), len(together[r])))
    for r in readings:
        _print_table(args, per_history[r], calibrated=r == 1)


def _print_table(args, per_history, calibrated):
    print(f"{args.world}: {args.histories} histories of the tenants, each "
          "job forecast on arrival by a forecast that knows their run-time "
          "distribution" +
          (", read through the pool's calibration" if calibrated else "") +
          "; started by the forecast's p50 / p90")
    print("| pool | jobs per history | mean over histories | "
          "sd between histories | lowest to highest | in both bands |")
    print("| --- | --- | --- | --- | --- | --- |")
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
        # The bands: 50 +- 5 at the median, 90 +- 5 at the p90.
        within = sum(1 for s, _ in rows if abs(s[0.5] - 0.5) <= 0.05 and
                     abs(s[0.9] - 0.9) <= 0.05)
        print(f"| {pool} | {jobs:.0f} | {cells[0]} | {cells[1]} | {spread} | "
              f"{within} of {len(rows)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
