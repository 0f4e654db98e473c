"""The service's ranking of a plan's candidates under a time objective
(KeyOf, core/plan/plan_with_time.cc), mirrored for the replay's
ideal-forecasts policy: the same rule read on start draws of the replay's
choosing. A change to KeyOf or RunPoints is mirrored here."""

import bisect
import math
import statistics

from placement.v1 import placement_pb2

_Z90 = 1.2815515655446004  # the standard normal's p90
_RUN_POINTS = 16


def run_points(candidate):
    """The run's points as the service draws them (RunPoints): a lognormal
    each side of the median, its p10 and p90 at the run band's edges."""
    normal = statistics.NormalDist()
    median = candidate.expected_wall_time.ToNanoseconds() / 1e9
    band = candidate.timing.run_band
    p10, p90 = band.low.ToNanoseconds() / 1e9, band.high.ToNanoseconds() / 1e9
    low = math.log(median / p10) / _Z90 if 0 < p10 < median else 0.0
    high = math.log(p90 / median) / _Z90 if p90 > median else 0.0
    points = []
    for j in range(_RUN_POINTS):
        z = normal.inv_cdf((j + 0.5) / _RUN_POINTS)
        points.append(median * math.exp((low if z < 0 else high) * z))
    return points


def quantile_of_sorted(draws, p):
    """QuantileOfSorted (core/queue/queue_forecast.cc): draw i at level
    (i + 0.5) / n, linear in between, the ends held."""
    n = len(draws)
    pos = min(max(p * n - 0.5, 0.0), n - 1.0)
    low = int(pos)
    high = min(low + 1, n - 1)
    return draws[low] + (draws[high] - draws[low]) * (pos - low)


def _key(candidate, waits, deadline_s, delay_micros_per_hour):
    """KeyOf for one candidate (lower is better), its finish drawn from
    `waits` (sorted seconds) plus its run points."""
    fits = candidate.fit == placement_pb2.FIT_FITS
    cost = candidate.expected_cost_micros
    if (candidate.basis != placement_pb2.EVIDENCE_BASIS_MEASURED and
            candidate.step_time_s > 0):
        cost *= candidate.step_time_s_band.high / candidate.step_time_s
    run = run_points(candidate)
    if deadline_s is None:
        finish_mean = sum(waits) / len(waits) + sum(run) / len(run)
        return (not fits, False,
                cost + delay_micros_per_hour * finish_mean / 3600, cost, 0)
    finish = sorted(w + r for w in waits for r in run)
    p90 = quantile_of_sorted(finish, 0.9)
    if p90 <= deadline_s:
        return (not fits, False, cost, cost, cost)
    chance = bisect.bisect_right(finish, deadline_s) / len(finish)
    return (not fits, True, -chance, p90, cost)


def best(candidates, starts, deadline_s=None, delay_micros_per_hour=None):
    """The index of the candidate the service would rank first, each one's
    start drawn from its entry of `starts` (sorted seconds): under a
    deadline (seconds) when given, else under a cost of delay."""
    keys = [_key(c, s, deadline_s, delay_micros_per_hour)
            for c, s in zip(candidates, starts)]
    return min(range(len(candidates)), key=lambda i: (keys[i], i))
