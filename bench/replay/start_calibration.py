"""The service's calibration of a pool's start forecasts
(core/queue/start_calibration.cc, and the PIT of a check,
core/queue/queue_history.cc), mirrored for forecast_spread.py, which reads a
right forecast through it. A change to either is mirrored here."""

import bisect
import math

import time_ranking

# core/queue/queue_history.h, kMaxHistoryPits: the started checks kept.
MAX_PITS = 40
# core/queue/start_calibration.h, kMinCalibrationPits: fewer started checks
# and the forecast is read as it is; as many pseudo-observations of it
# otherwise.
MIN_PITS = 20
# core/queue/queue_history.h, kPredictionLevels: a forecast is kept as its
# draws at 0, 0.05, ..., 1.
PREDICTION_LEVELS = 21


def pit(levels, actual_s, within_run):
    """PredictionPit: where `actual_s` falls in a forecast of evenly spaced
    levels (0, 1/(n-1), ..., 1), a run of equal levels spread by
    `within_run` in [0, 1]."""
    n = len(levels)
    if n < 2:
        return 0.5

    def level(i):
        return i / (n - 1)
    if actual_s < levels[0]:
        return 0.0
    if actual_s > levels[-1]:
        return 1.0
    low = bisect.bisect_left(levels, actual_s)
    high = bisect.bisect_right(levels, actual_s)
    if high - low == 1:
        return level(low)
    if low != high:
        first, last = low, high - 1
        start = 0.0 if first == 0 else (level(first - 1) + level(first)) / 2
        end = 1.0 if last == n - 1 else (level(last) + level(last + 1)) / 2
        return start + (end - start) * min(max(within_run, 0.0), 1.0)
    x0, x1 = levels[low - 1], levels[low]
    return level(low - 1) + (level(low) - level(low - 1)) * (
        (actual_s - x0) / (x1 - x0))


def _autocorrelation_time(series):
    """1 + 2 x the autocorrelations summed as Geyer's initial positive
    sequence; never below 1."""
    n = len(series)
    if n < 4:
        return 1.0
    mean = sum(series) / n
    variance = sum((x - mean) ** 2 for x in series)
    if not variance > 0:
        return 1.0

    def autocorrelation(lag):
        return sum((series[i] - mean) * (series[i + lag] - mean)
                   for i in range(n - lag)) / variance
    time, previous, lag = -1.0, math.inf, 0
    while lag + 1 < n:
        pair = autocorrelation(lag) + autocorrelation(lag + 1)
        if not pair > 0:
            break
        previous = min(pair, previous)
        time += 2 * previous
        lag += 2
    return max(1.0, time)


class StartCalibration:
    """`pits`: the started jobs' checks in the order they started; `floors`:
    each waiting job's floor. level(q) is the level the raw forecast is read
    at for a calibrated q."""

    def __init__(self, pits, floors):
        self.started = len(pits)
        self.effective = (len(pits) + len(floors)) / _autocorrelation_time(
            pits)
        checks = sorted([(min(max(p, 0.0), 1.0), False) for p in pits] +
                        [(min(max(f, 0.0), 1.0), True) for f in floors])
        share = 1.0 / len(checks) if checks else 0.0
        below = 0.0
        self.values, self.middles = [], []
        for i, (value, waiting) in enumerate(checks):
            above = len(checks) - i - 1
            if waiting:
                if above > 0:
                    share += share / above
                continue
            self.values.append(value)
            self.middles.append(below + share / 2)
            below += share
        self.beyond = (0.0 if not self.values or 1 - below < 1e-9
                       else 1 - below)

    def level(self, q):
        if self.started < MIN_PITS:
            return q
        values, middles = self.values, self.middles
        if q <= middles[0]:
            observed = values[0]
        elif q > 1 - self.beyond:
            observed = values[-1] + (1 - values[-1]) * (
                (q - (1 - self.beyond)) / self.beyond)
        elif q >= middles[-1]:
            observed = values[-1]
        else:
            i = bisect.bisect_right(middles, q)
            observed = values[i - 1] + (values[i] - values[i - 1]) * (
                (q - middles[i - 1]) / (middles[i] - middles[i - 1]))
        n = self.effective
        return min(1.0, max(0.0, (n * observed + MIN_PITS * q) /
                            (n + MIN_PITS)))


def prediction_levels(sorted_draws):
    """PredictionLevels: a forecast's draws read at its kept levels."""
    return [time_ranking.quantile_of_sorted(sorted_draws,
                                            i / (PREDICTION_LEVELS - 1))
            for i in range(PREDICTION_LEVELS)]
