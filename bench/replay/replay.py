"""Fleet replay: drives a real placementd through its public API over a
world's job trace, once per policy, and compares realized cost with the
hindsight oracle's; a world with queues (bench/replay/queues.py) is replayed
by the queue policies instead. Usage: replay.py [--json] [--jobs N]
[--luck K] [--tenant-luck K] WORLD.json...
(bench/replay/replay.sh sets up PostgreSQL and placementd)."""

import argparse
import json
import sys

import driver
import policies
import queue_driver
import queue_report
import report
import world as world_lib


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("worlds", nargs="+", metavar="WORLD")
    parser.add_argument("--json", action="store_true",
                        help="print the raw table as JSON")
    parser.add_argument("--jobs", type=int, default=None,
                        help="replay only the first N jobs of each trace")
    parser.add_argument("--luck", type=int, default=0,
                        help="replay under another draw of each world's "
                             "luck (failures, step times, clock faults; in a "
                             "queue world, the start forecasts' draws): 0, "
                             "the default, is the world's own")
    parser.add_argument("--tenant-luck", type=int, default=0,
                        help="in a queue world, replay under another draw of "
                             "the other tenants' jobs (arrivals, sizes, run "
                             "times): 0, the default, is the world's own")
    parser.add_argument("--policies", default=",".join(policies.KEYS),
                        help="comma-separated subset of "
                             f"{','.join(policies.KEYS)} (oracle always runs)")
    parser.add_argument("--queue-policies", default="",
                        help="in a queue world, comma-separated policies run "
                             "beside the time-aware service, today's and the "
                             "oracle: "
                             f"{','.join(queue_driver.EXTRA_POLICIES)}")
    args = parser.parse_args(argv)
    chosen = []
    for key in args.policies.split(","):
        if key not in policies.KEYS:
            parser.error(f"--policies: unknown policy '{key}'")
        if key != "oracle":
            chosen.append(policies.KEYS[key])
    queue_policies = list(queue_driver.POLICIES)
    for key in filter(None, args.queue_policies.split(",")):
        if key not in queue_driver.EXTRA_POLICIES:
            parser.error(f"--queue-policies: unknown policy '{key}'")
        queue_policies.append(queue_driver.EXTRA_POLICIES[key])
    try:
        worlds = [world_lib.load(p, args.jobs) for p in args.worlds]
    except world_lib.WorldError as e:
        print(f"replay: {e}", file=sys.stderr)
        return 2
    for w in worlds:
        w.luck = args.luck
        w.tenant_luck = args.tenant_luck
    rows = []
    queue_rows = []
    for w in worlds:
        if w.queues is not None:
            queue_rows += _replay_queues(w, queue_policies)
            continue
        print(f"== {w.name}: {len(w.jobs)} jobs, {len(w.pools)} pools",
              file=sys.stderr)
        oracle = driver.replay(w, policies.Oracle, 0)
        print(f"   oracle: {oracle.seconds:.1f} s; expectation standard "
              f"error at most {100 * oracle.policy.max_relative_se:.1f}%, "
              f"{oracle.policy.close_calls} choices within two errors",
              file=sys.stderr)
        for i, policy in enumerate(chosen, start=1):
            run = driver.replay(w, policy, i)
            rows.append(report.summarize(run, oracle))
            print(f"   {policy.name}: {run.seconds:.1f} s", file=sys.stderr)
        rows.append(report.summarize(oracle, oracle))
    verdict = report.verdict(rows)
    if args.json:
        print(json.dumps(report.json_safe(
            {"rows": rows, "verdict": verdict, "queues": queue_rows}),
            indent=1))
        return 0
    if rows:
        print(report.markdown(rows))
        print()
        print("Pools chosen (jobs / share of the policy's spending):")
        print()
        print(report.pools_markdown(rows))
        if verdict is not None:
            print()
            print("The verdict (as advised = service, bake-offs run; "
                  "docs/DECISIONS.md):")
            print()
            print(report.verdict_markdown(verdict))
    if queue_rows:
        if rows:
            print()
        print(queue_report.markdown(queue_rows))
        print()
        print("Start forecasts: share of jobs started by each predicted "
              "quantile (calibrated: p):")
        print()
        print(queue_report.calibration_markdown(queue_rows))
    return 0


def _replay_queues(w, queue_policies):
    """Each of `queue_policies` over a queue world; rows against its oracle
    and today's service."""
    print(f"== {w.name}: {len(w.jobs)} jobs, {len(w.pools)} pools, queues",
          file=sys.stderr)
    runs = {}
    for i, policy in enumerate(queue_policies):
        runs[policy] = queue_driver.replay(w, policy, i)
        print(f"   {policy.name}: {runs[policy].seconds:.1f} s, "
              f"{runs[policy].reports} reports", file=sys.stderr)
    oracle = runs[queue_driver.QueueOracle]
    today = runs[queue_driver.TimeBlind]
    return [queue_report.summarize(r, oracle, today) for r in runs.values()]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
