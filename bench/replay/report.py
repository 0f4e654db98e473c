"""The table: realized cost against the hindsight oracle's."""

import math

WITHIN = 1.10
BUCKETS = 4
# The bar a change to the planner is held to (docs/DECISIONS.md "The
# verdict"): the advised service against the list-price rule, per world;
# its cost over the oracle's, per world and as a mean over the worlds; the
# share of its jobs within WITHIN of hindsight, per world.
ADVISED = "service, bake-offs run"
LIST_PRICE = "list price x est. time"
ORACLE = "hindsight oracle"
LIST_LIMIT_PRIOR_RIGHT = 1.01
LIST_LIMIT_PRIOR_WRONG = 1.00
ORACLE_LIMIT = 1.02
WITHIN_SHARE_LIMIT = 0.90


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
    placed_by_oracle = [(m, b) for m, b in pairs if b.placed]
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
        "prior_right": run.world.prior_is_right(),
        "reporting": run.world.reporting.style,
        "jobs": len(run.jobs),
        "cost": total,
        "oracle_cost": oracle_total,
        "cost_over_oracle": _ratio(total, oracle_total),
        "within_10pct_share": (sum(r <= WITHIN - 1.0 for r in regrets) /
                               len(regrets) if regrets else math.nan),
        "within_10pct_jobs": sum(r <= WITHIN - 1.0 for r in regrets),
        "compared_jobs": len(regrets),
        # The job ran (last) on the pool the oracle chose for it.
        "oracle_choice_share": (
            sum(m.placed and m.choice == b.choice
                for m, b in placed_by_oracle) / len(placed_by_oracle)
            if placed_by_oracle else math.nan),
        "regret_p50": _quantile(regrets, 0.5),
        "regret_p90": _quantile(regrets, 0.9),
        "exploration_share": _ratio(sum(j.exploration for j in run.jobs),
                                    total),
        "oom_attempts": sum(j.oom_attempts for j in run.jobs),
        # Out-of-memory runs (records) after the first of their (recipe key,
        # SKU): the ones evidence should have prevented. An agent's retries
        # inside one run are the agent's, not the planner's.
        "repeated_oom_attempts": _repeated([k for j in run.jobs
                                            for k in j.oom_keys]),
        "attempts": sum(j.attempts for j in run.jobs),
        "run_records": sum(j.records for j in run.jobs),
        "retried_records": sum(j.retried for j in run.jobs),
        "refused_records": sum(j.refused for j in run.jobs),
        "clock_fault_records": sum(j.faulty_records for j in run.jobs),
        "clock_fault_refused": sum(j.faulty_refused for j in run.jobs),
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
    head = ("| world | policy | cost / oracle | oracle's pool | within 10% | "
            "regret p50 | regret p90 | exploration | OOM attempts (repeated) | "
            "never placed | run records / with retries / refused | "
            "cost / oracle by job quarter | s |")
    lines = [head, "|" + " --- |" * 13]
    for r in rows:
        r = {k: (_num(v) if k != "learning_curve" and not isinstance(v, str)
                 or v == "inf" else v) for k, v in r.items()}
        curve = " ".join(f"{_num(c['cost_over_oracle']):.2f}"
                         for c in r["learning_curve"])
        lines.append(
            f"| {r['world']} | {r['policy']} | {r['cost_over_oracle']:.3f} | "
            f"{_share(r['oracle_choice_share'])} | "
            f"{_share(r['within_10pct_share'])} | "
            f"{_pct(r['regret_p50'])} | {_pct(r['regret_p90'])} | "
            f"{100 * r['exploration_share']:.1f}% | "
            f"{r['oom_attempts']} ({r['repeated_oom_attempts']}) | "
            f"{r['never_placed']} | "
            f"{r['run_records']} / {r['retried_records']} / "
            f"{r['refused_records']} | "
            f"{curve} | {r['seconds']} |")
    return "\n".join(lines)


def _share(x):
    x = _num(x)
    return "-" if math.isnan(x) else f"{100 * x:.0f}%"


def _verdict_rows(rows):
    """(world, advised row, list-price row) for every world that has both."""
    by_world = {}
    for r in rows:
        by_world.setdefault(r["world"], {})[r["policy"]] = r
    return [(w, p[ADVISED], p[LIST_PRICE]) for w, p in by_world.items()
            if ADVISED in p and LIST_PRICE in p]


def verdict(rows):
    """The advised service against the bar, per world and over all worlds:
    a dict with `worlds` (one entry each) and `overall`; None when the
    advised or the list-price policy was not replayed."""
    worlds = []
    for world, advised, listed in _verdict_rows(rows):
        limit = (LIST_LIMIT_PRIOR_RIGHT if advised["prior_right"]
                 else LIST_LIMIT_PRIOR_WRONG)
        over_list = _ratio(_num(advised["cost"]), _num(listed["cost"]))
        over_oracle = _num(advised["cost_over_oracle"])
        within = _num(advised["within_10pct_share"])
        misses = []
        if not over_list <= limit:
            misses.append(f"list price x{over_list:.4f} > {limit:.2f}")
        if not over_oracle <= ORACLE_LIMIT:
            misses.append(f"oracle x{over_oracle:.4f} > {ORACLE_LIMIT:.2f}")
        if not within >= WITHIN_SHARE_LIMIT:
            misses.append(f"within 10% {100 * within:.1f}% < "
                          f"{100 * WITHIN_SHARE_LIMIT:.0f}%")
        worlds.append({
            "world": world, "prior_right": advised["prior_right"],
            "reporting": advised["reporting"],
            "advised_over_oracle": over_oracle,
            "list_price_over_oracle": _num(listed["cost_over_oracle"]),
            "advised_over_list_price": over_list, "list_price_limit": limit,
            "within_10pct_share": within,
            "oracle_choice_share": _num(advised["oracle_choice_share"]),
            "misses": misses})
    if not worlds:
        return None
    mean = sum(w["advised_over_oracle"] for w in worlds) / len(worlds)
    advised_rows = [r for _, r, _ in _verdict_rows(rows)]
    within_jobs = sum(r["within_10pct_jobs"] for r in advised_rows)
    compared = sum(r["compared_jobs"] for r in advised_rows)
    return {"worlds": worlds, "overall": {
        "worlds": len(worlds),
        "mean_advised_over_oracle": mean,
        "oracle_limit": ORACLE_LIMIT,
        "within_10pct_share": within_jobs / compared if compared else math.nan,
        "worlds_passing": sum(not w["misses"] for w in worlds),
        "pass": mean <= ORACLE_LIMIT and all(not w["misses"] for w in worlds)}}


def verdict_markdown(v):
    """The verdict as a table and an overall line."""
    lines = ["| world | prior | runs reported | as advised / oracle | "
             "list price / oracle | as advised / list price (limit) | "
             "oracle's pool | within 10% | verdict |",
             "|" + " --- |" * 9]
    for w in v["worlds"]:
        lines.append(
            f"| {w['world']} | {'right' if w['prior_right'] else 'wrong'} | "
            f"{w['reporting']} | {w['advised_over_oracle']:.3f} | "
            f"{w['list_price_over_oracle']:.3f} | "
            f"{w['advised_over_list_price']:.3f} "
            f"(<= {w['list_price_limit']:.2f}) | "
            f"{_share(w['oracle_choice_share'])} | "
            f"{_share(w['within_10pct_share'])} | "
            f"{'; '.join(w['misses']) if w['misses'] else 'pass'} |")
    o = v["overall"]
    lines.append("")
    mean = o["mean_advised_over_oracle"]
    lines.append(
        f"Overall: as advised / oracle, mean over {o['worlds']} worlds "
        f"{mean:.4f} ({'at or below' if mean <= o['oracle_limit'] else 'above'}"
        f" {o['oracle_limit']:.2f}); jobs within 10% of hindsight "
        f"{_share(o['within_10pct_share'])} of all; worlds passing "
        f"{o['worlds_passing']} of {o['worlds']}: "
        f"{'PASS' if o['pass'] else 'FAIL'}")
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
