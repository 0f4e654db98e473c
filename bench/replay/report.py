"""The table: realized cost against the hindsight oracle's."""

import math

WITHIN = 1.10
BUCKETS = 4


def _quantile(values, q):
    if not values:
        return math.nan
    values = sorted(values)
    pos = q * (len(values) - 1)
    low = int(math.floor(pos))
    high = min(low + 1, len(values) - 1)
    if math.isinf(values[high]) or math.isinf(values[low]):
        return values[high] if pos > low else values[low]
    return values[low] + (values[high] - values[low]) * (pos - low)


def _ratio(a, b):
    return a / b if b > 0 else math.nan


def summarize(run, oracle):
    """One row: `run` against `oracle` (both PolicyRun of one world)."""
    pairs = list(zip(run.jobs, oracle.jobs))
    total = sum(j.cost for j in run.jobs)
    oracle_total = sum(j.cost for j in oracle.jobs)
    regrets = []
    for mine, best in pairs:
        if not best.completed:
            continue
        regrets.append(mine.cost / best.cost - 1.0 if mine.completed
                       else math.inf)
    size = max(1, math.ceil(len(pairs) / BUCKETS))
    curve = []
    for start in range(0, len(pairs), size):
        chunk = pairs[start:start + size]
        curve.append({
            "jobs": f"{start}-{start + len(chunk) - 1}",
            "cost_over_oracle": _ratio(sum(m.cost for m, _ in chunk),
                                       sum(b.cost for _, b in chunk))})
    pools = {p["name"]: {"jobs": 0, "spend": 0.0} for p in run.world.pools}
    for j in run.jobs:
        if j.placed:
            pools[j.choice]["jobs"] += 1
        for name, spent in j.spend_by_pool.items():
            pools[name]["spend"] += spent
    return {
        "world": run.world.name,
        "policy": run.policy.name,
        "jobs": len(run.jobs),
        "cost": total,
        "oracle_cost": oracle_total,
        "cost_over_oracle": _ratio(total, oracle_total),
        "within_10pct_share": (sum(r <= WITHIN - 1.0 for r in regrets) /
                               len(regrets) if regrets else math.nan),
        "regret_p50": _quantile(regrets, 0.5),
        "regret_p90": _quantile(regrets, 0.9),
        "exploration_share": _ratio(sum(j.exploration for j in run.jobs),
                                    total),
        "oom_attempts": sum(j.oom_attempts for j in run.jobs),
        # Out-of-memory attempts after the first of their (recipe key, SKU):
        # the ones evidence should have prevented.
        "repeated_oom_attempts": _repeated([k for j in run.jobs
                                            for k in j.oom_keys]),
        "attempts": sum(j.attempts for j in run.jobs),
        "never_placed": sum(not j.placed for j in run.jobs),
        "not_completed": sum(not j.completed for j in run.jobs),
        "learning_curve": curve,
        "pools": pools,
        # The oracle's own: how sure its expectations were (policies.Oracle).
        "oracle_max_relative_se": getattr(oracle.policy, "max_relative_se",
                                          math.nan),
        "oracle_close_calls": getattr(oracle.policy, "close_calls", 0),
        "seconds": round(run.seconds, 1),
    }


def _num(x):
    """Back from json_safe's spelling."""
    if x is None:
        return math.nan
    return math.inf if x == "inf" else x


def _pct(x):
    x = _num(x)
    return "inf" if math.isinf(x) else ("-" if math.isnan(x) else
                                         f"{100 * x:+.0f}%")


def _repeated(keys):
    return len(keys) - len(set(keys))


def markdown(rows):
    """A Markdown table, one line per (world, policy)."""
    head = ("| world | policy | cost / oracle | within 10% | regret p50 | "
            "regret p90 | exploration | OOM attempts (repeated) | never placed | "
            "cost / oracle by job quarter | s |")
    lines = [head, "|" + " --- |" * 11]
    for r in rows:
        r = {k: (_num(v) if k != "learning_curve" and not isinstance(v, str)
                 or v == "inf" else v) for k, v in r.items()}
        curve = " ".join(f"{_num(c['cost_over_oracle']):.2f}"
                         for c in r["learning_curve"])
        lines.append(
            f"| {r['world']} | {r['policy']} | {r['cost_over_oracle']:.3f} | "
            f"{100 * r['within_10pct_share']:.0f}% | "
            f"{_pct(r['regret_p50'])} | {_pct(r['regret_p90'])} | "
            f"{100 * r['exploration_share']:.1f}% | "
            f"{r['oom_attempts']} ({r['repeated_oom_attempts']}) | "
            f"{r['never_placed']} | {curve} | {r['seconds']} |")
    return "\n".join(lines)


def pools_markdown(rows):
    """Per (world, policy) and pool: jobs / share of spending. A job counts
    for the pool of its last placement; spending is every attempt's there,
    bake-offs, failed and out-of-memory attempts included."""
    names = []
    for r in rows:
        names += [n for n in r["pools"] if n not in names]
    lines = ["| world | policy | " + " | ".join(names) + " |",
             "|" + " --- |" * (2 + len(names))]
    for r in rows:
        total = sum(p["spend"] for p in r["pools"].values())
        cells = []
        for n in names:
            p = r["pools"].get(n)
            share = p["spend"] / total if p and total > 0 else 0.0
            cells.append("-" if p is None else
                         f"{p['jobs']} / {100 * share:.0f}%")
        lines.append(f"| {r['world']} | {r['policy']} | " +
                     " | ".join(cells) + " |")
    return "\n".join(lines)


def json_safe(rows):
    """NaN and infinity as null/strings: strict JSON."""
    def fix(v):
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v
    return fix(rows)
