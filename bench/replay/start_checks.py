"""How the queue replay checks a start against its forecast: the levels it
reads a forecast at, and whether a job started by one of them. Kept apart
from the replay's driver so that what needs no placementd
(forecast_spread.py, world_test.py) can read it."""

# The levels of a start forecast the replay checks.
LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)


def started_by(job, p, forecast):
    """Whether the job started by its forecast's p-quantile: 1 or 0, but a
    job that started at once when the forecast put a start at once at some
    levels counts in proportion (a start at once has probability between
    the highest level at zero and the next: its share is spread evenly
    over [0, the midpoint of the two], as a PIT with ties split)."""
    levels = sorted(forecast)
    if job.wait_s > 1e-6 or forecast[p] > 1e-6:
        return 1.0 if job.wait_s <= forecast[p] + 1e-6 else 0.0
    zero = [q for q in levels if forecast[q] <= 1e-6]
    above = [q for q in levels if forecast[q] > 1e-6]
    mass = (max(zero) + (min(above) if above else 1.0)) / 2
    return min(1.0, p / mass)
