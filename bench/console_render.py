"""The web console's render time, page by page (bench/console_bench.sh).

  console_render.py seed --server H:P
      seeds pools, runs, plans, a bake-off and standards through the API
      (tests/external/console_seed.py); prints the ids the pages need.
  console_render.py measure --console H:P --server H:P --plan ID
                            --from_day D --iterations N
      GETs every page N times (after one unmeasured GET) and prints, per
      page, the median server time (the Server-Timing header placementd
      sets: reading and rendering on the database worker) and the median
      time to the whole answer on the client; the median time of the gRPC
      calls that answer the same data (the page's API baseline: what a
      client of the API pays for the figures the page shows); then loads
      each page in Debian's headless Chromium 3 times (after one unmeasured
      load) and prints the median time from navigation to the load event
      (the charts are SVG inside the page: loaded is drawn).

Runs with /usr/bin/python3 (python3-grpcio); PYTHONPATH holds the stubs,
tests/support and tests/external.
"""

import argparse
import datetime
import json
import statistics
import sys
import time
import urllib.request

import grpc

from google.protobuf import timestamp_pb2
from placement.v1 import catalog_pb2
from placement.v1 import cost_pb2
from placement.v1 import placement_pb2

import console_seed
import webdriver

PAGES = [
    ("pools", "/pools"),
    ("pool", "/pool?name=a100-adapters&days=90"),
    ("plans", "/plans"),
    ("plan", "/plan?id={plan}"),
    ("accuracy", "/accuracy"),
    ("cost by team", "/cost?by=team&from={from_day}"),
    ("cost by sku", "/cost?by=sku&from={from_day}"),
    ("cost by pool", "/cost?by=pool&from={from_day}"),
    ("cost.csv", "/cost.csv?by=pool&from={from_day}"),
    ("standards", "/standards"),
]


def seed(args):
    channel = grpc.insecure_channel(args.server)
    seeded = console_seed.seed(channel, "unused-auth-off", days=6)
    print(json.dumps({"plan": seeded["bake_off_plan"]}))


def _midnight(day):
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(datetime.datetime.combine(
        day, datetime.time(), tzinfo=datetime.timezone.utc))
    return stamp


def _cost(api, first, end, *group_by, pool=""):
    request = cost_pb2.GetCostReportRequest(
        start_time=_midnight(first), end_time=_midnight(end),
        group_by=list(group_by), page_size=1000)
    if pool:
        request.filter.pools.append(pool)
    while True:
        response = api.cost.GetCostReport(request, timeout=60)
        if not response.next_page_token:
            return
        request.page_token = response.next_page_token


def api_calls(api, plan_id, from_day):
    """Per page, the gRPC calls that answer what it shows (None: the API
    has no list of recent plans)."""
    today = datetime.datetime.now(datetime.timezone.utc).date()
    end = today + datetime.timedelta(days=1)
    last30 = today - datetime.timedelta(days=29)
    last90 = today - datetime.timedelta(days=89)
    first = datetime.date.fromisoformat(from_day)
    D = cost_pb2  # the dimensions
    pool = "a100-adapters"

    def pools():
        api.catalog.ListPools(catalog_pb2.ListPoolsRequest(page_size=1000),
                              timeout=60)
        _cost(api, last30, end, D.COST_DIMENSION_POOL)
        _cost(api, last30, end, D.COST_DIMENSION_POOL, D.COST_DIMENSION_DAY)
        api.placement.ListStandards(
            placement_pb2.ListStandardsRequest(page_size=1000), timeout=60)

    def one_pool():
        api.catalog.GetPool(catalog_pb2.GetPoolRequest(name=pool), timeout=60)
        _cost(api, last90, end, D.COST_DIMENSION_POOL, pool=pool)
        _cost(api, last90, end, D.COST_DIMENSION_DAY, pool=pool)
        _cost(api, last90, end, D.COST_DIMENSION_OUTCOME, pool=pool)
        _cost(api, last90, end, D.COST_DIMENSION_OUTCOME, D.COST_DIMENSION_DAY,
              pool=pool)
        api.placement.ListStandards(
            placement_pb2.ListStandardsRequest(page_size=1000), timeout=60)

    def plan():
        api.placement.GetPlan(placement_pb2.GetPlanRequest(plan_id=plan_id),
                              timeout=60)
        api.placement.GetBakeOffStatus(
            placement_pb2.GetBakeOffStatusRequest(plan_id=plan_id), timeout=60)

    def cost(dimension):
        def calls():
            _cost(api, first, end)
            _cost(api, first, end, dimension)
            _cost(api, first, end, dimension, D.COST_DIMENSION_DAY)
        return calls

    def csv():
        _cost(api, first, end, D.COST_DIMENSION_POOL, D.COST_DIMENSION_DAY)

    def standards():
        listed = api.placement.ListStandards(
            placement_pb2.ListStandardsRequest(page_size=50,
                                               include_retired=True),
            timeout=60)
        for s in listed.standards:
            if s.active:
                api.placement.GetPlan(
                    placement_pb2.GetPlanRequest(plan_id=s.plan_id),
                    timeout=60)

    return {
        "pools": pools, "pool": one_pool, "plans": None, "plan": plan,
        "accuracy": lambda: api.placement.GetPlanAccuracy(
            placement_pb2.GetPlanAccuracyRequest(), timeout=60),
        "cost by team": cost(D.COST_DIMENSION_TEAM),
        "cost by sku": cost(D.COST_DIMENSION_SKU),
        "cost by pool": cost(D.COST_DIMENSION_POOL),
        "cost.csv": csv, "standards": standards,
    }


def server_ms(response):
    timing = response.headers.get("Server-Timing", "")
    return float(timing.split("dur=")[1]) if "dur=" in timing else float("nan")


def measure(args):
    base = f"http://{args.console}"
    fields = {"plan": args.plan, "from_day": args.from_day}
    results = {}
    for name, path in PAGES:
        url = base + path.format(**fields)
        server, client, size = [], [], 0
        for i in range(args.iterations + 1):
            started = time.monotonic()
            with urllib.request.urlopen(url, timeout=60) as response:
                body = response.read()
                took = (time.monotonic() - started) * 1000
                if response.status != 200:
                    sys.exit(f"{name}: HTTP {response.status}")
                if i > 0:
                    server.append(server_ms(response))
                    client.append(took)
                size = len(body)
        results[name] = {"server_ms": statistics.median(server),
                         "client_ms": statistics.median(client),
                         "bytes": size}
    calls = api_calls(console_seed.Api(grpc.insecure_channel(args.server),
                                       "unused-auth-off"),
                      args.plan, args.from_day)
    for name, _ in PAGES:
        call = calls[name]
        timings = []
        for i in range(args.iterations + 1 if call else 0):
            started = time.monotonic()
            call()
            if i > 0:
                timings.append((time.monotonic() - started) * 1000)
        results[name]["api_ms"] = (statistics.median(timings) if timings
                                   else float("nan"))
    browser = webdriver.Browser()
    browser.start()
    try:
        for name, path in PAGES:
            if name == "cost.csv":
                continue  # a download, not a page
            loads = []
            for i in range(4):
                browser.get(base + path.format(**fields))
                ms = browser.run(
                    "const n = performance.getEntriesByType('navigation')[0];"
                    "return n.loadEventEnd - n.startTime;")
                points = browser.run(
                    "return document.querySelectorAll('circle.point').length;")
                if i > 0:
                    loads.append(ms)
            results[name]["drawn_ms"] = statistics.median(loads)
            results[name]["points"] = points
    finally:
        browser.stop()
    for name, _ in PAGES:
        r = results[name]
        print(f"{args.label} page={name!r} server_ms={r['server_ms']:.1f} "
              f"client_ms={r['client_ms']:.1f} api_ms={r['api_ms']:.1f} "
              f"drawn_ms={r.get('drawn_ms', float('nan')):.1f} "
              f"bytes={r['bytes']} points={r.get('points', '-')}")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("seed")
    p.add_argument("--server", required=True)
    p = sub.add_parser("measure")
    p.add_argument("--console", required=True)
    p.add_argument("--server", required=True)
    p.add_argument("--plan", required=True)
    p.add_argument("--from_day", required=True)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--label", default="")
    args = parser.parse_args()
    {"seed": seed, "measure": measure}[args.command](args)


if __name__ == "__main__":
    main()
