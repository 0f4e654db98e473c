"""The web console in a real browser: Debian's headless Chromium, driven by
its chromedriver, against a real placementd seeded through the API
(console_seed.py). One browser visits every page: each loads with a token,
shows the figures the API answers for the same data (read back here through
the API), draws its charts with a point per row, runs its script under the
Content-Security-Policy and logs no console error; without a token every
page refuses. It saves a screenshot of a plan's page ($CONSOLE_SCREENSHOT).

Environment (tests/external/CMakeLists.txt): PLACEMENTD, PYTHONPATH (the
stubs and tests/support), PLACEMENT_TEST_DATABASE_URL, CONSOLE_SCREENSHOT.
"""

import csv
import datetime
import io
import math
import os
import time
import unittest
import urllib.error
import urllib.request

from google.protobuf import timestamp_pb2
from placement.v1 import catalog_pb2
from placement.v1 import cost_pb2
from placement.v1 import placement_pb2
from placement.v1 import telemetry_pb2

import console_seed
import webdriver
from placementd_launcher import Placementd

RPC_TIMEOUT_S = 30
DAYS = 30  # the pages' default range: the last 30 UTC days, today included


def _nearest_rank_band(values):
    """The console's band: the p10-p90 of daily figures, nearest rank."""
    values = sorted(values)
    def rank(q):
        return values[min(len(values), max(1, math.ceil(q * len(values)))) - 1]
    return rank(0.1), rank(0.9)


def _midnight(day):
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(datetime.datetime.combine(
        day, datetime.time(), tzinfo=datetime.timezone.utc))
    return stamp


@unittest.skipUnless(webdriver.available(),
                     "Debian's chromium and chromium-driver are not installed "
                     "(scripts/install-test-deps installs them)")
class ConsoleBrowserTest(unittest.TestCase):
    """Test methods run in name order, in one browser."""

    @classmethod
    def setUpClass(cls):
        cls.placementd = Placementd("console", auth=True, console=True)
        cls.placementd.start()
        cls.base = f"http://127.0.0.1:{cls.placementd.console_port}"
        cls.seeded = console_seed.seed(cls.placementd.channel,
                                       cls.placementd.token)
        cls.admin = console_seed.Api(cls.placementd.channel,
                                     cls.placementd.token)
        today = datetime.datetime.now(datetime.timezone.utc).date()
        cls.first_day = today - datetime.timedelta(days=DAYS - 1)
        cls.end_day = today + datetime.timedelta(days=1)
        cls.browser = webdriver.Browser()
        try:
            cls.browser.start()
        except BaseException:
            cls.placementd.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.browser.stop()
        cls.placementd.stop()

    # --- helpers ---

    def cost_rows(self, *group_by, pool=""):
        """Every row of GetCostReport over the pages' range."""
        request = cost_pb2.GetCostReportRequest(
            start_time=_midnight(self.first_day),
            end_time=_midnight(self.end_day), group_by=list(group_by),
            page_size=1000)
        if pool:
            request.filter.pools.append(pool)
        rows = []
        while True:
            response = self.admin.cost.GetCostReport(request,
                                                     timeout=RPC_TIMEOUT_S)
            rows.extend(response.rows)
            if not response.next_page_token:
                return rows
            request.page_token = response.next_page_token

    def await_page(self, condition):
        """Waits (up to 10 s) for the page a form's submission opened:
        loaded and `condition` (a script expression) true. A visit started
        before it lands can be overtaken by the form's redirect."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.browser.run(
                f"return document.readyState == 'complete' && ({condition});"
        ) is not True:
            time.sleep(0.05)

    def visit(self, path, refused=False):
        """Loads `path`; checks the page is whole, its script ran under the
        policy and the console logged no error (with `refused`, but the
        browser's note of the page's own error status). Returns main's id."""
        url = self.base + path
        self.browser.get(url)
        state = self.browser.run(
            "return [document.readyState,"
            " document.documentElement.getAttribute('data-script'),"
            " document.querySelector('main') && document.querySelector('main').id];")
        self.assertEqual(state[0], "complete", path)
        self.assertEqual(state[1], "ready", f"{path}: console.js did not run")
        errors = self.browser.console_errors()
        if refused:
            errors = [e for e in errors if not (
                e.get("source") == "network" and
                e.get("message", "").startswith(url + " - "))]
        self.assertEqual(errors, [], path)
        return state[2]

    def rows(self, selector, key):
        """{row's `key` attribute: {data-field: data-v}} of the rows (the
        cells of rows with the same key in several tables merged)."""
        merged = {}
        for r in self.browser.run(
            "return Array.from(document.querySelectorAll(arguments[0]))"
            ".map(r => ({key: r.getAttribute(arguments[1]), cells:"
            " Object.fromEntries(Array.from(r.querySelectorAll('[data-field]'))"
            ".map(c => [c.dataset.field, c.dataset.v === undefined ?"
            " c.textContent : c.dataset.v]))}));", selector, key):
            merged.setdefault(r["key"], {}).update(r["cells"])
        return merged

    def points(self, chart_id):
        """[series, x, y] of each point of a chart, and its data-points."""
        return self.browser.run(
            "const svg = document.getElementById(arguments[0]);"
            "if (!svg) return null;"
            "return {declared: +svg.dataset.points, points:"
            " Array.from(svg.querySelectorAll('circle.point'))"
            ".map(c => [c.dataset.series, +c.dataset.x, +c.dataset.y])};",
            chart_id)

    def http(self, path, token=None, cookie=None):
        """(status, headers, body) of a plain GET."""
        request = urllib.request.Request(self.base + path)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        if cookie:
            request.add_header("Cookie", cookie)
        try:
            with urllib.request.urlopen(request, timeout=RPC_TIMEOUT_S) as r:
                return r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    # --- tests ---

    def test_01_every_page_refuses_without_a_token(self):
        for path in ("/pools", "/pool?name=a100-adapters", "/plans",
                     f"/plan?id={self.seeded['bake_off_plan']}", "/accuracy",
                     "/cost", "/cost.csv", "/standards"):
            status, headers, body = self.http(path)
            self.assertEqual(status, 401, path)
            self.assertIn("default-src 'none'",
                          headers["Content-Security-Policy"])
            self.assertNotIn("a100-adapters", body.replace(path, ""))
            self.assertEqual(self.visit(path, refused=True), "error", path)
            self.assertTrue(self.browser.find("a[href='/login']"), path)

    def test_02_sign_in_through_the_form(self):
        self.browser.get(self.base + "/login")
        self.browser.type_into("#token", self.placementd.token)
        self.browser.click("form.login button")
        self.await_page("!document.querySelector('main#login')")
        self.assertEqual(self.visit("/pools"), "pools")
        # The cookie is out of every script's reach (HttpOnly).
        self.assertEqual(self.browser.run("return document.cookie;"), "")

    def test_03_pools_show_the_apis_cost_failures_and_standards(self):
        self.assertEqual(self.visit("/pools"), "pools")
        chart = self.points("chart-pools-cost")
        self.assertEqual(len(chart["points"]), 3)
        shown = self.rows("table.pools tbody tr", "data-pool")
        pools = self.admin.catalog.ListPools(catalog_pb2.ListPoolsRequest(),
                                             timeout=RPC_TIMEOUT_S).pools
        self.assertEqual(set(shown), {p.name for p in pools})
        daily = {}
        for row in self.cost_rows(cost_pb2.COST_DIMENSION_POOL,
                                  cost_pb2.COST_DIMENSION_DAY):
            if row.internal_cost_per_successful_step:
                daily.setdefault(row.pool, []).append(
                    float(row.internal_cost_per_successful_step))
        totals = self.cost_rows(cost_pb2.COST_DIMENSION_POOL)
        self.assertEqual(len(totals), 3)
        for row in totals:
            cells = shown[row.pool]
            self.assertEqual(int(cells["runs"]), row.runs)
            self.assertEqual(float(cells["gpu_hours"]), row.gpu_hours)
            self.assertEqual(int(cells["successful_steps"]),
                             row.successful_steps)
            self.assertEqual(cells["internal_cost_per_successful_step"],
                             row.internal_cost_per_successful_step)
            self.assertEqual(int(cells["failed_runs"]), row.failed_runs)
            low, high = (float(v) for v in cells["cost_band"].split())
            self.assertEqual((low, high), _nearest_rank_band(daily[row.pool]))
            self.assertLess(low, high)  # the seeded days differ
        self.assertEqual({p[0]: p[1] for p in chart["points"]},
                         {r.pool: float(r.internal_cost_per_successful_step)
                          for r in totals})
        # Failure rates are those a plan prices for the same pool and layout.
        plan = console_seed.Api(self.placementd.channel,
                                self.seeded["tokens"]["planner"]).placement.PlacePlan(
            placement_pb2.PlacePlanRequest(**console_seed.BAKE_OFF_REQUEST),
            timeout=RPC_TIMEOUT_S)
        for candidate in plan.candidates:
            self.assertEqual(
                float(shown[candidate.pool]["failure_rate_single_gpu"]),
                candidate.failure_rate.per_hour, candidate.pool)
        self.assertEqual(int(shown["a100-adapters"]["failures_PREEMPTED"]), 2)
        standards = self.admin.placement.ListStandards(
            placement_pb2.ListStandardsRequest(), timeout=RPC_TIMEOUT_S)
        in_force = {}
        for s in standards.standards:
            in_force[s.pool] = in_force.get(s.pool, 0) + 1
        for name, cells in shown.items():
            self.assertEqual(int(cells["standards"]), in_force.get(name, 0))

    def test_04_a_pool_charts_its_days_outcomes_and_failures(self):
        name = "a100-adapters"
        self.assertEqual(self.visit(f"/pool?name={name}"), "pool")
        days = [r for r in self.cost_rows(cost_pb2.COST_DIMENSION_DAY, pool=name)
                if r.internal_cost_per_successful_step]
        chart = self.points("chart-cost-per-step")
        self.assertEqual(chart["declared"], len(days))
        self.assertEqual(len(chart["points"]), len(days))
        self.assertGreaterEqual(len(days), 6)
        self.assertEqual(sorted(p[2] for p in chart["points"]),
                         sorted(float(r.internal_cost_per_successful_step)
                                for r in days))
        outcomes = self.rows("#outcomes-table tbody tr", "data-outcome")
        by_outcome = self.cost_rows(cost_pb2.COST_DIMENSION_OUTCOME, pool=name)
        self.assertEqual(len(outcomes), len(by_outcome))
        for row in by_outcome:
            cells = outcomes[telemetry_pb2.RunOutcome.Name(row.outcome)
                             .removeprefix("RUN_OUTCOME_")]
            self.assertEqual(int(cells["runs"]), row.runs)
            self.assertEqual(int(cells["internal_cost_micros"]),
                             row.internal_cost_micros)
        failed = [r for r in self.cost_rows(cost_pb2.COST_DIMENSION_OUTCOME,
                                            cost_pb2.COST_DIMENSION_DAY,
                                            pool=name)
                  if r.outcome != telemetry_pb2.RUN_OUTCOME_SUCCEEDED]
        chart = self.points("chart-failures")
        self.assertEqual(len(chart["points"]), len(failed))
        self.assertEqual(sum(p[2] for p in chart["points"]),
                         sum(r.runs for r in failed))

    def test_05_plans_list_what_getplan_answers(self):
        self.assertEqual(self.visit("/plans"), "plans")
        shown = self.rows("#plans-table tbody tr", "data-plan")
        expected = [self.seeded["bake_off_plan"]] + self.seeded["other_plans"]
        for plan_id in expected:
            self.assertIn(plan_id, shown)
            got = self.admin.placement.GetPlan(
                placement_pb2.GetPlanRequest(plan_id=plan_id),
                timeout=RPC_TIMEOUT_S)
            cells = shown[plan_id]
            self.assertEqual(cells["team"], got.request.team)
            self.assertEqual(cells["recipe_key"], got.plan.recipe_key)
            self.assertEqual(int(cells["total_steps"]), got.request.total_steps)
            first = got.plan.candidates[0].pool if got.plan.candidates else \
                "(no candidate)"
            self.assertEqual(cells["chosen_pool"], first)

    def test_06_a_plan_shows_candidates_costs_rejections_and_bake_off(self):
        plan_id = self.seeded["bake_off_plan"]
        self.assertEqual(self.visit(f"/plan?id={plan_id}"), "plan")
        got = self.admin.placement.GetPlan(
            placement_pb2.GetPlanRequest(plan_id=plan_id), timeout=RPC_TIMEOUT_S)
        shown = self.rows("#candidates-table tbody tr", "data-pool")
        self.assertEqual(len(shown), len(got.plan.candidates))
        for c in got.plan.candidates:
            cells = shown[c.pool]
            self.assertEqual(int(cells["rank"]), c.rank)
            self.assertEqual(int(cells["expected_cost_micros"]),
                             c.expected_cost_micros)
            self.assertEqual(float(cells["expected_gpu_hours"]),
                             c.expected_gpu_hours)
            self.assertEqual(float(cells["peak_memory_gb"]), c.peak_memory_gb)
        segments = self.browser.run(
            "return Array.from(document.querySelectorAll("
            "'#chart-cost-makeup rect.segment')).map(r => +r.dataset.v);")
        expected = []
        for c in got.plan.candidates:
            expected += [c.startup_gpu_hours,
                         got.request.total_steps * c.step_gpu_hours,
                         c.rework_gpu_hours]
        self.assertEqual(segments, expected)
        status = self.admin.placement.GetBakeOffStatus(
            placement_pb2.GetBakeOffStatusRequest(plan_id=plan_id),
            timeout=RPC_TIMEOUT_S)
        self.assertTrue(status.proposed)
        progress = self.browser.run(
            "const p = document.getElementById('bakeoff-progress');"
            "return [+p.dataset.complete, +p.dataset.total];")
        self.assertEqual(progress, [status.runs_complete, status.runs_total])
        self.assertEqual(status.runs_complete, status.runs_total)
        winner = self.browser.run(
            "return document.getElementById('bakeoff-verdict').dataset.winner;")
        self.assertEqual(winner, status.verdict.winner_pool)
        chart = self.points("chart-bakeoff-cost")
        self.assertEqual(
            sorted(p[1] for p in chart["points"]),
            sorted(p.cost_micros_per_successful_step
                   for p in status.verdict.pools if p.runs_succeeded > 0))
        self.assertTrue(self.browser.find("#plan-standard") or
                        not got.plan.HasField("standard"))
        path = os.environ.get("CONSOLE_SCREENSHOT")
        if path:
            self.browser.screenshot(path)
        # A plan every pool rejects lists each rejection with its rule.
        rejected = self.seeded["other_plans"][1]
        self.assertEqual(self.visit(f"/plan?id={rejected}"), "plan")
        got = self.admin.placement.GetPlan(
            placement_pb2.GetPlanRequest(plan_id=rejected), timeout=RPC_TIMEOUT_S)
        shown = self.rows("#rejections-table tbody tr", "data-pool")
        self.assertEqual({p: c["rule"] for p, c in shown.items()},
                         {r.pool: r.rule for r in got.plan.rejections})

    def test_07_accuracy_scatters_what_getplanaccuracy_counts(self):
        self.assertEqual(self.visit("/accuracy"), "accuracy")
        accuracy = self.admin.placement.GetPlanAccuracy(
            placement_pb2.GetPlanAccuracyRequest(), timeout=RPC_TIMEOUT_S)
        self.assertGreater(len(accuracy.skus), 0)
        shown = self.rows("#accuracy-table tbody tr", "data-sku")
        for sku in accuracy.skus:
            cells = shown[sku.sku]
            self.assertEqual(int(cells["runs"]), sku.runs)
            self.assertEqual(float(cells["peak_memory_median_abs_error_pct"]),
                             sku.peak_memory_median_abs_error_pct)
            self.assertEqual(float(cells["gpu_hours_per_step_p90_abs_error_pct"]),
                             sku.gpu_hours_per_step_p90_abs_error_pct)
            slug = "".join(ch if ch.isalnum() else "-" for ch in sku.sku)
            memory = self.points(f"chart-memory-{slug}")
            self.assertEqual(len(memory["points"]), min(sku.runs, 500))
            step = self.points(f"chart-step-{slug}")
            self.assertEqual(len(step["points"]),
                             min(sku.runs_with_successful_steps, 500))
            self.assertTrue(self.browser.find(
                f"#chart-memory-{slug} line.diagonal"))

    def test_08_cost_by_team_sku_and_pool_with_a_csv(self):
        for by, dimension in (("team", cost_pb2.COST_DIMENSION_TEAM),
                              ("sku", cost_pb2.COST_DIMENSION_SKU),
                              ("pool", cost_pb2.COST_DIMENSION_POOL)):
            self.assertEqual(self.visit(f"/cost?by={by}"), "cost")
            shown = self.rows("#cost-table tbody tr", "data-group")
            rows = self.cost_rows(dimension)
            self.assertEqual(len(shown), len(rows), by)
            for row in rows:
                group = {"team": row.team, "sku": row.sku,
                         "pool": row.pool}[by]
                cells = shown[group]
                self.assertEqual(cells["internal_cost_per_successful_step"],
                                 row.internal_cost_per_successful_step)
                self.assertEqual(int(cells["internal_cost_micros"]),
                                 row.internal_cost_micros)
                self.assertEqual(float(cells["wasted_gpu_hours"]),
                                 row.wasted_gpu_hours)
            daily = [r for r in self.cost_rows(dimension,
                                               cost_pb2.COST_DIMENSION_DAY)
                     if r.internal_cost_per_successful_step]
            self.assertEqual(len(self.points("chart-cost")["points"]),
                             len(daily), by)
        # The download: the daily rows, placectl cost --csv's columns.
        href = self.browser.run(
            "return document.querySelector('a[href^=\"/cost.csv\"]')"
            ".getAttribute('href');")
        status, headers, body = self.http(href, token=self.placementd.token)
        self.assertEqual(status, 200)
        self.assertIn("attachment", headers["Content-Disposition"])
        table = list(csv.DictReader(io.StringIO(body)))
        api = self.cost_rows(cost_pb2.COST_DIMENSION_POOL,
                             cost_pb2.COST_DIMENSION_DAY)
        self.assertEqual(len(table), len(api))
        for line, row in zip(table, api):
            self.assertEqual(line["pool"], row.pool)
            self.assertEqual(int(line["runs"]), row.runs)
            self.assertEqual(line["internal_cost_per_successful_step"],
                             row.internal_cost_per_successful_step)

    def test_09_standards_in_force_and_retired_with_their_proof(self):
        self.assertEqual(self.visit("/standards"), "standards")
        active = self.rows("#standards-active tbody tr", "data-standard")
        retired = self.rows("#standards-retired tbody tr", "data-standard")
        self.assertEqual(set(active), {self.seeded["standard"]})
        self.assertEqual(set(retired), {self.seeded["retired_standard"]})
        got = self.admin.placement.GetStandard(
            placement_pb2.GetStandardRequest(standard_id=self.seeded["standard"]),
            timeout=RPC_TIMEOUT_S).standard
        cells = active[got.standard_id]
        self.assertEqual(cells["pool"], got.pool)
        self.assertEqual(cells["plan_id"], got.plan_id)
        low, high = (float(v) for v in cells["cost_band"].split())
        self.assertEqual((low, high),
                         (got.cost_micros_per_successful_step_band.low,
                          got.cost_micros_per_successful_step_band.high))
        # A plan of its proving request, now, applies it.
        self.assertIn(cells["now"], ("applied", "contradicted"))

    def test_10_roles_see_what_the_role_table_opens(self):
        tokens = self.seeded["tokens"]
        self.assertEqual(self.http("/cost", token=tokens["planner"])[0], 403)
        self.assertEqual(self.http("/plans", token=tokens["finance"])[0], 403)
        self.assertEqual(self.http("/accuracy", token=tokens["agent"])[0], 403)
        status, _, body = self.http("/pools", token=tokens["agent"])
        self.assertEqual(status, 200)
        self.assertNotIn("internal_cost_per_successful_step", body)
        self.assertIn("Not shown to your role", body)
        status, _, body = self.http("/pools", token=tokens["finance"])
        self.assertEqual(status, 200)
        self.assertIn("internal_cost_per_successful_step", body)

    def test_11_sign_out_ends_the_session(self):
        self.visit("/pools")
        self.browser.click("form.logout button")
        self.await_page("!!document.querySelector('main#login')")
        self.assertEqual(self.visit("/pools", refused=True), "error")


if __name__ == "__main__":
    unittest.main()
