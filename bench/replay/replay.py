"""Fleet replay: drives a real placementd through its public API over a
world's job trace, once per policy, and compares realized cost with the
hindsight oracle's. Usage: replay.py [--json] [--jobs N] WORLD.json...
(bench/replay/replay.sh sets up PostgreSQL and placementd)."""

import argparse
import json
import sys

import driver
import policies
import report
import world as world_lib


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("worlds", nargs="+", metavar="WORLD")
    parser.add_argument("--json", action="store_true",
                        help="print the raw table as JSON")
    parser.add_argument("--jobs", type=int, default=None,
                        help="replay only the first N jobs of each trace")
    parser.add_argument("--policies", default=",".join(policies.KEYS),
                        help="comma-separated subset of "
                             f"{','.join(policies.KEYS)} (oracle always runs)")
    args = parser.parse_args(argv)
    chosen = []
    for key in args.policies.split(","):
        if key not in policies.KEYS:
            parser.error(f"--policies: unknown policy '{key}'")
        if key != "oracle":
            chosen.append(policies.KEYS[key])
    try:
        worlds = [world_lib.load(p, args.jobs) for p in args.worlds]
    except world_lib.WorldError as e:
        print(f"replay: {e}", file=sys.stderr)
        return 2
    rows = []
    for w in worlds:
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
            {"rows": rows, "verdict": verdict}), indent=1))
    else:
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
