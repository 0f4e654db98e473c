"""The queue worlds' tables: cost over the oracle that knows the queues,
deadlines met, the cost of delay, and how the start forecasts fared
(docs/DECISIONS.md, "Time to start")."""

import math

from start_checks import LEVELS, started_by


def _ratio(a, b):
    return a / b if b > 0 else math.nan


def _quantile(values, q):
    if not values:
        return math.nan
    values = sorted(values)
    pos = q * (len(values) - 1)
    low = int(pos)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (pos - low)


def calibration(jobs, forecast="predicted"):
    """For each level p, the share of jobs with a known forecast that
    started by its p-quantile (started_by): {p: share}, how many jobs,
    and how many of them started at once. `forecast`: the job's attribute
    read (the plan's calibrated forecast, `predicted_raw` the same before
    calibration, `predicted_ideal` the forecast that knows the true run-time
    distributions)."""
    known = [j for j in jobs if j.predicted and getattr(j, forecast) and
             j.wait_s is not None]
    shares = {}
    for p in LEVELS:
        shares[p] = (sum(started_by(j, p, getattr(j, forecast))
                         for j in known) / len(known)
                     if known else math.nan)
    return shares, len(known), sum(j.wait_s <= 1e-6 for j in known)


def summarize(run, oracle, today):
    """One row: `run` against the oracle's and today's runs of its world."""
    def total(r, kind=None, delay=False):
        return sum(j.cost + (j.delay_value() if delay else 0.0)
                   for j in r.jobs if kind is None or j.kind == kind)
    deadline = [j for j in run.jobs if j.kind == "deadline"]
    feasible = [j for j in deadline if j.feasible]
    waits = [j.wait_s / 3600 for j in run.jobs if j.wait_s is not None]
    shares, known, at_once = calibration(run.jobs)
    # Conditioned on the forecast, not on what happened.
    waited = [j for j in run.jobs
              if j.predicted and j.wait_s is not None and j.predicted[0.5] > 0]
    waited_shares, _, _ = calibration(waited)
    return {
        "world": run.world.name,
        "policy": run.policy.name,
        "jobs": len(run.jobs),
        "cost": total(run),
        "cost_over_oracle": _ratio(total(run), total(oracle)),
        "plain_cost_over_today": _ratio(total(run, "plain"),
                                        total(today, "plain")),
        "deadline_jobs": len(deadline),
        "deadline_feasible": len(feasible),
        "deadline_met_feasible": (sum(j.met_deadline() for j in feasible) /
                                  len(feasible) if feasible else math.nan),
        "deadline_met_all": (sum(j.met_deadline() for j in deadline) /
                             len(deadline) if deadline else math.nan),
        "deadline_cost_over_oracle": _ratio(total(run, "deadline"),
                                            total(oracle, "deadline")),
        "value_jobs": sum(j.kind == "value" for j in run.jobs),
        "value_over_oracle": _ratio(total(run, "value", delay=True),
                                    total(oracle, "value", delay=True)),
        "wait_p50_h": _quantile(waits, 0.5),
        "wait_p90_h": _quantile(waits, 0.9),
        "not_completed": sum(not j.completed for j in run.jobs),
        "oom": sum(j.oom for j in run.jobs),
        "calibration": {str(p): s for p, s in shares.items()},
        "calibration_jobs": known,
        "calibration_at_once": at_once,
        "calibration_waited": {str(p): s for p, s in waited_shares.items()},
        # The same jobs: the forecast before the pool's calibration, and one
        # that knows the true run-time distributions (what a right forecast
        # reaches in this one draw of the queues).
        "calibration_raw": calibration(run.jobs, "predicted_raw")[:2],
        "calibration_ideal": calibration(run.jobs, "predicted_ideal")[:2],
        "calibration_waited_jobs": len(waited),
        # By the job's kind: the deadline and value objectives choose a pool
        # by its forecast (a pool forecast early is chosen more often), the
        # lowest-cost one does not.
        "calibration_by_kind": {
            kind: calibration([j for j in run.jobs if j.kind == kind])[:2]
            for kind in ("plain", "deadline", "value")},
        "reports": run.reports,
        "raw_calibration": {pool: {"checked": n, "shares": {
            str(p): v for p, v in shares.items()}}
            for pool, (n, shares) in run.raw_calibration.items()},
        "seconds": round(run.seconds, 1),
    }


def _num(shares, p):
    """A share by level, keyed by the level or its text (after JSON)."""
    value = shares.get(p, shares.get(str(p)))
    return math.nan if value is None else value


def _f(x, fmt):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) \
        else fmt.format(x)


def markdown(rows):
    head = ("| world | policy | cost / oracle | plain jobs: cost / today's | "
            "deadlines met (of feasible) | deadline jobs: cost / oracle | "
            "value of time: cost + delay / oracle | wait p50 / p90 (h) | s |")
    lines = [head, "|" + " --- |" * 9]
    for r in rows:
        lines.append(
            f"| {r['world']} | {r['policy']} | "
            f"{_f(r['cost_over_oracle'], '{:.3f}')} | "
            f"{_f(r['plain_cost_over_today'], '{:.3f}')} | "
            f"{_f(100 * r['deadline_met_feasible'], '{:.1f}%')} of "
            f"{r['deadline_feasible']} ({r['deadline_jobs']} with one) | "
            f"{_f(r['deadline_cost_over_oracle'], '{:.3f}')} | "
            f"{_f(r['value_over_oracle'], '{:.3f}')} | "
            f"{_f(r['wait_p50_h'], '{:.2f}')} / {_f(r['wait_p90_h'], '{:.2f}')} | "
            f"{r['seconds']} |")
    return "\n".join(lines)


def calibration_markdown(rows):
    lines = ["| world | policy | jobs | " +
             " | ".join(f"started by p{int(100 * p)}" for p in LEVELS) + " |",
             "|" + " --- |" * (3 + len(LEVELS))]
    for r in rows:
        if not r["calibration_jobs"]:
            continue
        slices = [
            (f"all with a forecast ({r['calibration_at_once']} started at "
             "once)", r["calibration"], r["calibration_jobs"]),
            ("those forecast to wait (median above 0)",
             r["calibration_waited"], r["calibration_waited_jobs"])]
        for kind, (shares, n) in r["calibration_by_kind"].items():
            slices.append((f"{kind} jobs", shares, n))
        for key, label in (("calibration_raw", "before calibration"),
                           ("calibration_ideal", "a forecast that knows the "
                            "true run-time distributions")):
            if key in r:
                shares, n = r[key]
                slices.append((f"all with a forecast, {label}", shares, n))
        for label, shares, n in slices:
            cells = [_f(100 * _num(shares, p), "{:.1f}%") for p in LEVELS]
            lines.append(f"| {r['world']} | {r['policy']}: {label} | {n} | " +
                         " | ".join(cells) + " |")
    return "\n".join(lines)
