"""World files and the world's seeded luck (docs/DECISIONS.md): a bad field
is named by its path, a base file is merged under the world's own keys, and
the draws depend on (job, pool, layout, attempt) and the replay's choice of
luck, nothing else; failure rates by layout size and hour of the day; run
records as an agent or a Slurm requeue reports them; agents whose clocks are
wrong; the report's verdict."""

import json
import math
import os
import random
import shutil
import tempfile
import types
import unittest

from placement.v1 import placement_pb2
from placement.v1 import recipe_pb2
from placement.v1 import telemetry_pb2

import execution
import forecast_spread
import queues
import report
import start_calibration
import time_ranking
import world as world_lib

HERE = os.path.dirname(os.path.abspath(__file__))
FLEET = os.path.join(HERE, "fleet.json")
WORLDS = os.path.join(HERE, "worlds")
HOUR = 3600.0
SUCCEEDED = telemetry_pb2.RUN_OUTCOME_SUCCEEDED
OOM = telemetry_pb2.RUN_OUTCOME_OUT_OF_MEMORY
HW = telemetry_pb2.RUN_OUTCOME_HARDWARE_ERROR
CT = telemetry_pb2.RUN_OUTCOME_COLLECTIVE_TIMEOUT
PREEMPTED = telemetry_pb2.RUN_OUTCOME_PREEMPTED


def _shipped(name):
    return world_lib.load(os.path.join(WORLDS, name + ".json"))


class _TempWorlds(unittest.TestCase):
    """A folder holding fleet.json, for worlds written by the test."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="world-test-")
        shutil.copy(FLEET, os.path.join(self.dir, "fleet.json"))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def world(self, **keys):
        path = os.path.join(self.dir, "w.json")
        with open(path, "w") as f:
            json.dump(dict({"base": "fleet.json"}, **keys), f)
        return world_lib.load(path)


class WorldFiles(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="world-test-")
        shutil.copy(FLEET, os.path.join(self.dir, "fleet.json"))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            json.dump(data, f)
        return path

    def assert_rejected(self, data, field, words):
        path = self.write("bad.json", dict({"base": "fleet.json"}, **data))
        with self.assertRaises(world_lib.WorldError) as e:
            world_lib.load(path)
        self.assertIn(f"{path}: {field}: ", str(e.exception))
        self.assertIn(words, str(e.exception))

    def test_bad_failure_outcome_is_named_by_its_path(self):
        self.assert_rejected(
            {"truth": {"failures": [
                {"pool": "l40s-pcie", "per_hour": 0.1, "outcome": "PREEMPTED"},
                {"pool": "l40s-pcie", "per_hour": 0.1, "outcome": "MELTED"}]}},
            "truth.failures[1].outcome",
            "must be one of PREEMPTED, HARDWARE_ERROR, COLLECTIVE_TIMEOUT")

    def test_unknown_key_is_named_with_the_known_ones(self):
        self.assert_rejected(
            {"truth": {"step_time": [{"sku": "L40S-PCIE-48GB", "x": 1.2,
                                      "methd": "lora"}]}},
            "truth.step_time[0].methd", "is not a known field")

    def test_value_out_of_range_is_named(self):
        self.assert_rejected({"truth": {"peak_memory": [{"x": 0}]}},
                             "truth.peak_memory[0].x", "must be at least")
        self.assert_rejected(
            {"truth": {"failures": [{"pool": "nowhere", "per_hour": 1,
                                     "outcome": "PREEMPTED"}]}},
            "truth.failures[0].pool", "must be one of")

    def test_missing_required_field_is_named(self):
        with open(FLEET) as f:
            fleet = json.load(f)
        del fleet["pools"][2]["rate_per_gpu_hour"]
        path = self.write("nobase.json", fleet)
        with self.assertRaisesRegex(world_lib.WorldError,
                                    r"pools\[2\]\.rate_per_gpu_hour: is required"):
            world_lib.load(path)

    def test_base_is_merged_and_the_world_replaces_its_top_level_keys(self):
        path = self.write("w.json", {
            "base": "fleet.json", "bakeoff_steps": 50,
            "trace": {"jobs": [{"class": "llama8b-lora", "steps": 700}]},
            "truth": {"step_time": [{"sku": "L40S-PCIE-48GB",
                                     "method": "full", "x": 1.5}]}})
        w = world_lib.load(path)
        # From the base: the pools and the recipe classes.
        self.assertEqual([p["name"] for p in w.pools],
                         ["l40s-pcie", "a100-80-ib", "a100-40-pcie"])
        self.assertIn("llama70b-qlora", w.classes)
        # The world's own keys replace the base's whole.
        self.assertEqual(w.bakeoff_steps, 50)
        self.assertEqual([(j.recipe_class, j.steps) for j in w.jobs],
                         [("llama8b-lora", 700)])
        self.assertEqual(w.step_time_multiplier("L40S-PCIE-48GB", "full", 1),
                         1.5)
        self.assertEqual(w.step_time_multiplier("L40S-PCIE-48GB", "lora", 1),
                         1.0)

    def test_base_that_includes_itself_is_refused(self):
        path = self.write("loop.json", {"base": "loop.json"})
        with self.assertRaisesRegex(world_lib.WorldError, "includes itself"):
            world_lib.load(path)

    def test_every_shipped_world_loads(self):
        for name in sorted(os.listdir(WORLDS)):
            with self.subTest(world=name):
                w = world_lib.load(os.path.join(WORLDS, name))
                # The queue worlds run a longer trace of their own.
                self.assertEqual(len(w.jobs),
                                 80 if w.queues is None else 400)
                self.assertTrue(w.description)

    def test_bad_hours_gpus_reporting_and_clock_faults_are_named(self):
        hazard = {"sku": "L40S-PCIE-48GB", "per_hour": 1,
                  "outcome": "COLLECTIVE_TIMEOUT"}
        self.assert_rejected(
            {"truth": {"failures": [dict(hazard, hours=[6, 6])]}},
            "truth.failures[0].hours", "must not be empty")
        self.assert_rejected(
            {"truth": {"failures": [dict(hazard, hours=[22])]}},
            "truth.failures[0].hours", "must be an array of at least 2")
        self.assert_rejected(
            {"truth": {"failures": [dict(hazard, hours=[22, 25])]}},
            "truth.failures[0].hours[1]", "must be at most 24")
        self.assert_rejected(
            {"truth": {"failures": [dict(hazard, gpus="dual")]}},
            "truth.failures[0].gpus", "must be one of single, multi")
        self.assert_rejected({"reporting": {"style": "slurm"}},
                             "reporting.style", "must be one of")
        self.assert_rejected(
            {"reporting": {"style": "attempts", "max_retries": 2}},
            "reporting.max_retries", "must be 0")
        self.assert_rejected(
            {"truth": {"clock_faults": [{"share": 1.5, "step_s": 60}]}},
            "truth.clock_faults[0].share", "must be at most 1")
        self.assert_rejected(
            {"truth": {"clock_faults": [{"share": 0.1}]}},
            "truth.clock_faults[0].step_s", "is required")

    def test_reporting_defaults_are_the_agents_and_slurms(self):
        self.assertEqual(
            (_shipped("prior-right").reporting.style,
             _shipped("prior-right").reporting.max_retries), ("attempts", 0))
        path = self.write("agent.json", {"base": "fleet.json",
                                         "reporting": {"style": "agent"}})
        self.assertEqual(world_lib.load(path).reporting.max_retries, 2)
        path = self.write("requeue.json", {"base": "fleet.json",
                                           "reporting": {"style": "requeue"}})
        self.assertEqual(world_lib.load(path).reporting.max_retries, 5)

    def test_prior_is_right_only_where_the_truth_adds_nothing(self):
        # Wrong clocks change what is reported, not what the cards do.
        right = {"prior-right", "bad-clock"}
        for name in sorted(os.listdir(WORLDS)):
            with self.subTest(world=name):
                w = world_lib.load(os.path.join(WORLDS, name))
                if w.queues is not None:
                    continue  # the queue worlds' own verdict
                self.assertEqual(w.prior_is_right(), name[:-5] in right)

    def test_a_bad_queue_field_is_named(self):
        self.assert_rejected(
            {"queues": {"seed": 1, "tenants": {"nowhere": {
                "jobs_per_hour": 1, "gpus": {"1": 1}, "run_h_median": 1}}}},
            "queues.tenants.nowhere", "names no pool")
        self.assert_rejected(
            {"queues": {"seed": 1, "tenants": {}, "deadlines": {"share": 2}}},
            "queues.deadlines.share", "must be at most 1")
        self.assert_rejected(
            {"queues": {"seed": 1, "tenants": {"l40s-pcie": {
                "jobs_per_hour": 1, "gpus": {"1": 1}, "run_h_median": 1,
                "run_sigma": 1, "run_weibull_shape": 0.7}}}},
            "queues.tenants.l40s-pcie.run_weibull_shape", "no run_sigma")


class Queues(unittest.TestCase):
    """The queue worlds' tenants and first come, first served."""

    def test_tenants_are_seeded_and_fit_their_pool(self):
        w = world_lib.load(os.path.join(HERE, "worlds", "queues.json"))
        caps = {p["name"]: p["nodes"] * p["gpus_per_node"] for p in w.pools}
        first = queues.tenant_arrivals(w.queues, caps, 100 * 3600)
        self.assertEqual(first, queues.tenant_arrivals(w.queues, caps,
                                                       100 * 3600))
        for pool, jobs in first.items():
            self.assertTrue(jobs)
            self.assertTrue(all(g <= caps[pool] for _, g, _ in jobs))
        kinds = {j.kind for j in w.jobs}
        self.assertEqual(kinds, {"plain", "deadline", "value"})

    def test_another_tenant_luck_is_another_history_at_the_same_rates(self):
        w = world_lib.load(os.path.join(HERE, "worlds", "queues-busy.json"))
        caps = {p["name"]: p["nodes"] * p["gpus_per_node"] for p in w.pools}
        horizon = 400 * 3600
        own = queues.tenant_arrivals(w.queues, caps, horizon)
        self.assertEqual(own, queues.tenant_arrivals(w.queues, caps, horizon,
                                                     0))
        other = queues.tenant_arrivals(w.queues, caps, horizon, 2)
        self.assertEqual(other, queues.tenant_arrivals(w.queues, caps,
                                                       horizon, 2))
        for pool in own:
            with self.subTest(pool=pool):
                self.assertNotEqual(other[pool][:5], own[pool][:5])
                # The same arrival rate: over 400 hours the counts of two
                # draws of a Poisson stream stay within a few of its
                # standard deviations.
                n, m = len(own[pool]), len(other[pool])
                self.assertLess(abs(n - m), 4 * math.sqrt(max(n, m)) + 1)

    def test_weibull_tenants_keep_their_median_and_their_conditional(self):
        w = world_lib.load(os.path.join(HERE, "worlds",
                                        "queues-busy-weibull.json"))
        t = w.queues.tenants["l40s-pcie"]
        self.assertEqual(t["weibull_shape"], 0.7)
        rng = random.Random(3)
        runs = sorted(queues.weibull_above(t, 0, rng) for _ in range(4000))
        self.assertAlmostEqual(runs[2000] / t["median_s"], 1, delta=0.06)
        # Of the jobs that ran their median, the share that runs twice it:
        # exp(-ln 2 (2^k - 1)) for a Weibull of shape k and that median.
        median = t["median_s"]
        longer = [queues.weibull_above(t, median, rng) for _ in range(4000)]
        self.assertGreater(min(longer), median)
        self.assertAlmostEqual(
            sum(r > 2 * median for r in longer) / 4000,
            math.exp(-math.log(2) * (2 ** 0.7 - 1)), delta=0.03)

    def test_a_job_behind_never_starts_before_one_ahead(self):
        pool = queues.PoolQueue("p", 8)
        pool.submit(queues.QJob("a", 6, 0, 100), 0)   # runs 0-100
        pool.submit(queues.QJob("b", 4, 0, 50), 0)    # waits for a
        # One GPU would fit now, but b is ahead: after b starts at 100.
        self.assertEqual(pool.true_start(1, 10), 100)
        self.assertEqual(pool.true_start(6, 10), 150)
        pool.finish_until(100)
        self.assertEqual([j.id for j in pool.running], ["b"])

    def test_the_right_forecast_knows_what_a_report_cannot(self):
        pool = queues.PoolQueue("p", 8)
        pool.submit(queues.QJob("a", 6, 0, 100, plan_id="x"), 0)  # 0-100
        pool.submit(queues.QJob("t", 4, 0, 500), 0)  # a tenant's: 100-600
        # The trace's job's run time is known and the tenants' is not
        # spread: every draw is the true wait of a 6-GPU job queued at 10.
        exact = {"median_s": 500, "sigma": 0}
        self.assertEqual(pool.forecast_starts(6, 10, exact, random.Random(1),
                                              draws=5), [590] * 5)
        self.assertEqual(pool.true_start(6, 10), 600)
        # A tenant's job that has run past most of its distribution is
        # drawn above what it has run: never as already ended.
        late = queues.PoolQueue("q", 4)
        late.submit(queues.QJob("t", 4, 0, 9000), 0)
        spread = {"median_s": 500, "sigma": 0.5}
        waits = late.forecast_starts(1, 3000, spread, random.Random(2),
                                     draws=50)
        self.assertGreater(min(waits), 0)
        self.assertEqual(waits, sorted(waits))

    def test_a_right_forecast_is_calibrated_over_histories(self):
        # forecast_spread.py's checks: each tenant's job forecast on
        # arrival by the ideal forecaster, checked against its start. Over
        # three histories of the light world's pools it starts about half
        # of them by its median and nine in ten by its p90.
        w = world_lib.load(os.path.join(HERE, "worlds", "queues.json"))
        caps = {p["name"]: p["nodes"] * p["gpus_per_node"] for p in w.pools}
        horizon = w.queues.warmup_s + 200 * 3600
        checks = []
        for luck in range(3):
            for pool in sorted(w.queues.tenants):
                checks += forecast_spread.history_checks(w.queues, caps, pool,
                                                         horizon, luck)
        self.assertGreater(len(checks), 300)
        shares = forecast_spread.shares(checks)
        self.assertAlmostEqual(shares[0.5], 0.5, delta=0.08)
        self.assertAlmostEqual(shares[0.9], 0.9, delta=0.05)
        # Read through the pool's calibration, the same forecasts of the
        # same jobs: still so.
        calibrated = []
        for luck in range(3):
            for pool in sorted(w.queues.tenants):
                calibrated += forecast_spread.history_checks(
                    w.queues, caps, pool, horizon, luck, calibrated=True)
        self.assertEqual([wait for wait, _ in calibrated],
                         [wait for wait, _ in checks])
        self.assertNotEqual(calibrated, checks)
        shares = forecast_spread.shares(calibrated)
        self.assertAlmostEqual(shares[0.5], 0.5, delta=0.08)
        self.assertAlmostEqual(shares[0.9], 0.9, delta=0.05)


class StartCalibrationMirror(unittest.TestCase):
    """start_calibration.py reads checks as core/queue/start_calibration.cc
    does: the figures of its unit tests (tests/core/queue/)."""

    def test_with_nobody_waiting_it_is_the_checks_quantile(self):
        pits = [(i * 37 % 50) / 50 for i in range(50)]
        calibration = start_calibration.StartCalibration(pits, [])
        self.assertEqual(calibration.effective, 50)
        for q in (0.005, 0.1, 0.5, 0.77, 0.9, 0.999):
            expected = (50 * time_ranking.quantile_of_sorted(sorted(pits), q)
                        + 20 * q) / 70
            self.assertAlmostEqual(calibration.level(q), expected, places=12)
        self.assertEqual(
            start_calibration.StartCalibration([0.1, 0.2], []).level(0.9), 0.9)

    def test_jobs_still_waiting_past_their_forecast_read_it_later(self):
        started = [(i * 17 % 40 + 0.5) / 40 for i in range(40)]
        self.assertAlmostEqual(
            start_calibration.StartCalibration(started, []).level(0.5), 0.5,
            places=12)
        waiting = start_calibration.StartCalibration(started, [0.95] * 40)
        self.assertEqual(waiting.effective, 80)
        median = 0.9375 + 0.025 * (0.5 - 0.46875) / (0.60625 - 0.46875)
        self.assertAlmostEqual(waiting.level(0.5), (80 * median + 10) / 100,
                               places=9)
        self.assertGreater(waiting.level(0.9), 0.9)

    def test_checks_that_move_together_count_for_less(self):
        shuffled = [0.6 * (i * 43 % 120 + 0.5) / 120 for i in range(120)]
        self.assertGreater(
            start_calibration.StartCalibration(shuffled, []).effective, 100)
        together = start_calibration.StartCalibration(
            sorted(shuffled, reverse=True), [])
        self.assertLess(together.effective, 5)
        self.assertGreater(together.level(0.5), 0.45)
        alternating = [0.2 if i % 2 else 0.4 for i in range(40)]
        self.assertEqual(
            start_calibration.StartCalibration(alternating, []).effective, 40)

    def test_a_start_is_placed_between_the_levels(self):
        levels = [100.0 * k for k in range(21)]
        self.assertAlmostEqual(start_calibration.pit(levels, 150, 0.5), 0.075)
        self.assertEqual(start_calibration.pit(levels, 2500, 0.5), 1.0)
        # A start at once where the forecast put a fifth of its mass: the
        # tie spread by `within_run` over [0, the middle of the next level].
        at_once = [0.0] * 5 + [100.0 * k for k in range(1, 17)]
        self.assertAlmostEqual(start_calibration.pit(at_once, 0, 0.0), 0.0)
        self.assertAlmostEqual(start_calibration.pit(at_once, 0, 1.0), 0.225)


class IdealForecastRanking(unittest.TestCase):
    """The ideal-forecasts policy ranks the service's candidates by the
    service's rule for the job's objective (time_ranking), its waits the
    ideal forecaster's."""

    @staticmethod
    def _candidate(cost, run_h, fit=placement_pb2.FIT_FITS):
        c = placement_pb2.PlacementCandidate(
            expected_cost_micros=round(cost * 1e6), fit=fit,
            basis=placement_pb2.EVIDENCE_BASIS_MEASURED)
        c.expected_wall_time.FromSeconds(round(run_h * HOUR))
        c.timing.run_band.low.FromSeconds(round(0.9 * run_h * HOUR))
        c.timing.run_band.high.FromSeconds(round(1.2 * run_h * HOUR))
        return c

    @staticmethod
    def _pick(job, candidates, waits_h):
        starts = [sorted(HOUR * w for w in ws) for ws in waits_h]
        return time_ranking.best(candidates, starts, **job)

    def test_a_deadline_takes_the_cheapest_that_finishes_in_time_at_p90(self):
        job = {"deadline_s": 10 * HOUR}
        cheap, dear = self._candidate(10, 4), self._candidate(12, 4)
        # The cheap pool's wait is 8 hours one time in five: its finish's
        # p90 is past the deadline, the dearer idle pool's is not.
        self.assertEqual(self._pick(job, [cheap, dear],
                                    [[0, 0, 0, 0, 8], [0] * 5]), 1)
        self.assertEqual(self._pick(job, [cheap, dear],
                                    [[0, 0, 0, 0, 1], [0] * 5]), 0)
        # None in time: the likelier to finish within it, not the cheaper.
        self.assertEqual(self._pick(job, [cheap, dear],
                                    [[20] * 5, [0, 0, 9, 9, 9]]), 1)
        # A BORDERLINE candidate in time ranks after a FITS one too late.
        risky = self._candidate(8, 4, placement_pb2.FIT_BORDERLINE)
        self.assertEqual(self._pick(job, [risky, dear],
                                    [[0] * 5, [20] * 5]), 1)

    def test_a_value_of_time_weighs_the_mean_finish(self):
        job = {"delay_micros_per_hour": 1_000_000}  # 1 an hour
        cheap, dear = self._candidate(10, 4), self._candidate(12, 4)
        # Three hours' mean wait cost 3 at 1 an hour, more than the 2 saved.
        self.assertEqual(self._pick(job, [cheap, dear],
                                    [[0, 0, 3, 6, 6], [0] * 5]), 1)
        self.assertEqual(self._pick(job, [cheap, dear],
                                    [[0, 0, 1, 1, 3], [0] * 5]), 0)


def _layout(w, pool="l40s-pcie", sku="L40S-PCIE-48GB", gpus=1, key="k1",
            step_s=2.0, peak_gb=20.0):
    recipe = recipe_pb2.Recipe(model="Llama-3.1-8B",
                               method=recipe_pb2.FINE_TUNE_METHOD_LORA)
    candidate = types.SimpleNamespace(
        pool=pool, sku=sku, gpu_count=gpus, recipe=recipe, recipe_key=key,
        prior_step_time_s=step_s, prior_peak_memory_gb=peak_gb)
    spec = next(p for p in w.pools if p["name"] == pool)
    return execution.Layout(w, None, candidate, spec, 48.0)


class SeededDraws(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="world-test-")
        shutil.copy(FLEET, os.path.join(self.dir, "fleet.json"))
        path = os.path.join(self.dir, "flaky.json")
        with open(path, "w") as f:
            json.dump({"base": "fleet.json", "truth": {"failures": [
                {"pool": "l40s-pcie", "per_hour": 0.5,
                 "outcome": "HARDWARE_ERROR"}]}}, f)
        self.world = world_lib.load(path)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def draw(self, job, layout, attempt):
        rng = execution._rng(job, "job", layout.identity(), attempt)
        a = execution.run_attempt(self.world, layout, rng, 5000,
                                  restart=attempt > 0)
        return (a.seconds, a.outcome, a.steps_kept, a.step_mean_s)

    def test_same_job_pool_layout_attempt_draws_the_same(self):
        a = _layout(self.world)
        b = _layout(self.world)  # another policy's copy of the same choice
        self.assertEqual(self.draw("job001", a, 0), self.draw("job001", b, 0))
        self.assertEqual(
            execution.run_job(self.world, "job007", a, 3000)[0][-1].seconds,
            execution.run_job(self.world, "job007", b, 3000)[0][-1].seconds)

    def test_any_other_job_pool_layout_or_attempt_draws_differently(self):
        base = _layout(self.world)
        first = self.draw("job001", base, 0)
        others = {
            "job": self.draw("job002", base, 0),
            "attempt": self.draw("job001", base, 1),
            "pool": self.draw("job001", _layout(self.world, pool="a100-40-pcie",
                                                sku="L40S-PCIE-48GB"), 0),
            "gpus": self.draw("job001", _layout(self.world, gpus=2), 0),
            "recipe": self.draw("job001", _layout(self.world, key="k2"), 0),
        }
        for what, draw in others.items():
            with self.subTest(differs_by=what):
                self.assertNotEqual(draw[3], first[3])

    def test_another_luck_draws_every_run_anew_and_luck_0_is_the_worlds(self):
        layout = _layout(self.world)

        def runs():
            return [execution.run_job(self.world, f"job{i:03d}", layout,
                                      3000)[0] for i in range(8)]
        own = runs()
        self.world.luck = 3
        other = runs()
        again = runs()
        self.world.luck = 0
        self.assertEqual(
            [[a.seconds for a in r] for r in runs()],
            [[a.seconds for a in r] for r in own])
        # Every policy still meets the same luck within one draw of it.
        self.assertEqual([[a.seconds for a in r] for r in other],
                         [[a.seconds for a in r] for r in again])
        # And every job's fortune is drawn anew: step times and failures.
        for mine, theirs in zip(own, other):
            self.assertNotEqual(mine[0].step_mean_s, theirs[0].step_mean_s)
        self.assertNotEqual([len(r) for r in own], [len(r) for r in other])

    def test_oracle_expectation_uses_draws_the_policies_never_see(self):
        layout = _layout(self.world)
        expected, se = execution.expected_cost_and_error(
            self.world, "job001", layout, 5000)
        realized = sum(a.cost for a in execution.run_job(
            self.world, "job001", layout, 5000)[0])
        self.assertGreater(se, 0)
        self.assertNotEqual(expected, realized)
        # Failures' rework makes it dearer than the failure-free cost.
        self.assertGreater(expected, layout.cost(
            layout.startup_s + 5000 * layout.true_step_s))


class FailureRatesByLayoutAndHour(_TempWorlds):
    def test_nightly_fabric_hits_multi_gpu_layouts_of_its_card_only(self):
        w = _shipped("nightly-fabric")
        self.assertEqual(len(_layout(w, gpus=2).hazards), 2)
        self.assertEqual(len(_layout(w, gpus=4).hazards), 2)
        self.assertEqual(_layout(w, gpus=1).hazards, [])
        self.assertEqual(_layout(w, pool="a100-80-ib", sku="A100-SXM4-80GB",
                                 gpus=2).hazards, [])

    def test_a_window_past_midnight_wraps(self):
        night = world_lib.Hazard(None, None, 1.0, "COLLECTIVE_TIMEOUT",
                                 hours=(22, 6))
        self.assertEqual([h for h in range(24) if night.active(h + 0.5)],
                         [0, 1, 2, 3, 4, 5, 22, 23])
        day = world_lib.Hazard(None, None, 1.0, "PREEMPTED", hours=(8, 18))
        self.assertFalse(day.active(18.0))
        self.assertTrue(day.active(8.0))

    def test_time_to_failure_counts_only_the_hours_of_the_window(self):
        early = [world_lib.Hazard(None, None, 2.0, "COLLECTIVE_TIMEOUT",
                                  hours=(0, 6))]
        noon = 12 * HOUR
        # Rate 2/h from midnight: an exponential draw of 0.5 is used up a
        # quarter of an hour into the night, 12.25 h after noon.
        self.assertAlmostEqual(
            execution.time_to_failure(early, noon, 0.5, 48 * HOUR),
            12.25 * HOUR)
        # A draw of 13 outlasts one night (12 per night): the next one.
        self.assertAlmostEqual(
            execution.time_to_failure(early, noon, 13.0, 48 * HOUR),
            (12 + 24 + 0.5) * HOUR)
        self.assertEqual(
            execution.time_to_failure(early, noon, 0.5, 12 * HOUR), math.inf)

    def test_a_rate_at_every_hour_draws_exactly_as_it_always_did(self):
        w = self.world(truth={"failures": [
            {"pool": "l40s-pcie", "per_hour": 0.3, "outcome": "PREEMPTED"},
            {"pool": "l40s-pcie", "per_hour": 0.2,
             "outcome": "HARDWARE_ERROR"}]})
        layout = _layout(w)
        for seed in range(50):
            rng, old = random.Random(seed), random.Random(seed)
            a = execution.run_attempt(w, layout, rng, 20000, False,
                                      start_s=seed * 977.0)
            old.gauss(0.0, 1.0)
            expected = old.expovariate(0.5 / HOUR)
            work = layout.startup_s + 20000 * a.step_mean_s
            if expected >= work:
                self.assertEqual(a.outcome, SUCCEEDED)
            else:
                self.assertEqual(a.seconds, expected + w.detection_s)

    def test_a_night_hazard_spares_the_day_and_strikes_at_night(self):
        w = self.world(truth={
            "failures": [{"sku": "L40S-PCIE-48GB", "gpus": "multi",
                          "hours": [22, 6], "per_hour": 5,
                          "outcome": "COLLECTIVE_TIMEOUT"}],
            "failure_cost": {"detection_s": 600}})
        layout = _layout(w, gpus=2, step_s=1.0)
        for n in range(30):
            rng = execution._rng("job", "job", layout.identity(), n)
            # 08:00 plus 3,000 steps of about 1 s: done by noon.
            day = execution.run_attempt(w, layout, rng, 3000, False,
                                        start_s=8 * HOUR)
            self.assertEqual(day.outcome, SUCCEEDED)
            rng = execution._rng("job", "job", layout.identity(), n)
            night = execution.run_attempt(w, layout, rng, 3000, False,
                                          start_s=23 * HOUR)
            self.assertEqual(night.outcome, CT)
            failed_at = (23 * HOUR + night.seconds - w.detection_s) % 86400
            self.assertTrue(failed_at >= 22 * HOUR or failed_at < 6 * HOUR)

    def test_a_failure_is_caused_by_a_hazard_active_at_its_hour(self):
        w = self.world(truth={"failures": [
            {"pool": "l40s-pcie", "hours": [22, 6], "per_hour": 3,
             "outcome": "COLLECTIVE_TIMEOUT"},
            {"pool": "l40s-pcie", "hours": [6, 22], "per_hour": 3,
             "outcome": "HARDWARE_ERROR"}]})
        layout = _layout(w, step_s=1.0)
        seen = set()
        for n in range(60):
            rng = execution._rng("job", "job", layout.identity(), n)
            a = execution.run_attempt(w, layout, rng, 20000, False,
                                      start_s=n * 1337.0)
            if a.outcome == SUCCEEDED:
                continue
            hour = ((n * 1337.0 + a.seconds - w.detection_s) % 86400) / HOUR
            night = hour >= 22 or hour < 6
            self.assertEqual(a.outcome, CT if night else HW)
            seen.add(a.outcome)
        self.assertEqual(seen, {CT, HW})

    def test_the_oracle_expects_more_at_night(self):
        w = _shipped("nightly-fabric")
        layout = _layout(w, gpus=2, step_s=1.1)
        day = execution.expected_cost(w, "job001", layout, 3000, 9 * HOUR)
        night = execution.expected_cost(w, "job001", layout, 3000, 23 * HOUR)
        self.assertGreater(night, 1.2 * day)


def _attempts(layout, outcomes, steps=100, seconds=600.0):
    """Attempts in a row with the given outcomes: a failed one keeps half
    its steps (a checkpoint), a succeeded one all."""
    out, clock = [], 0.0
    for n, o in enumerate(outcomes):
        a = execution.Attempt(layout, seconds, o, steps,
                              steps if o == SUCCEEDED else steps // 2,
                              1.0 + n / 10, 0.05, 30.0,
                              "" if o == SUCCEEDED else f"failure {n}", clock)
        a.index = n
        out.append(a)
        clock += seconds
    return out


class RunRecords(_TempWorlds):
    def sizes(self, style, max_retries, outcomes):
        reporting = world_lib.Reporting(style, max_retries)
        w = self.world()
        return [len(r) for r in
                reporting.records(_attempts(_layout(w), outcomes))]

    def test_the_agent_retries_up_to_max_retries_inside_one_record(self):
        outcomes = [HW, HW, HW, CT, SUCCEEDED]
        self.assertEqual(self.sizes("agent", 2, outcomes), [3, 2])
        self.assertEqual(self.sizes("agent", 0, outcomes), [1] * 5)
        self.assertEqual(self.sizes("attempts", 0, outcomes), [1] * 5)

    def test_a_preemption_ends_the_agents_record_and_slurm_requeues_it(self):
        self.assertEqual(self.sizes("agent", 2, [PREEMPTED, SUCCEEDED]),
                         [1, 1])
        self.assertEqual(self.sizes("requeue", 5, [PREEMPTED, HW, SUCCEEDED]),
                         [3])
        # Slurm does not requeue a job that exits with an error.
        self.assertEqual(self.sizes("requeue", 5, [CT, SUCCEEDED]), [1, 1])
        self.assertEqual(self.sizes("requeue", 1, [PREEMPTED] * 3 +
                                    [SUCCEEDED]), [2, 2])

    def test_a_record_is_the_agents_run_summary(self):
        w = self.world(reporting={"style": "agent"})
        attempts = _attempts(_layout(w), [CT, HW, SUCCEEDED], steps=200,
                             seconds=900.0)
        [record] = execution.run_records(w, "job001", "job", attempts)
        self.assertEqual(record.retries, 2)
        self.assertEqual(record.retry_outcomes, [CT, HW])
        self.assertEqual(record.outcome, SUCCEEDED)
        self.assertEqual(record.steps_attempted, 600)
        self.assertEqual(record.steps_kept, 100 + 100 + 200)
        self.assertEqual((record.start_s, record.seconds), (0.0, 2700.0))
        self.assertAlmostEqual(record.step_mean_s, (1.0 + 1.1 + 1.2) / 3)
        self.assertLess(record.step_p50_s, record.step_p95_s)
        self.assertGreater(record.step_p50_s, 1.0)
        self.assertLess(record.step_p95_s, 1.2 * math.exp(2 * 0.05))
        self.assertEqual(record.failure_reason,
                         "attempt 1: COLLECTIVE_TIMEOUT (failure 0); "
                         "attempt 2: HARDWARE_ERROR (failure 1)")
        run = record.message(1_000_000.0, "plan-1", "search", "id-1")
        self.assertEqual(run.retries, 2)
        self.assertEqual((run.steps_attempted, run.steps_succeeded),
                         (600, 400))
        self.assertEqual(run.end_time.ToNanoseconds() -
                         run.start_time.ToNanoseconds(), 2700 * 10**9)
        if execution.HAS_RETRY_OUTCOMES:
            self.assertEqual(list(run.retry_outcomes), [CT, HW])

    def test_a_record_of_one_attempt_is_that_attempt(self):
        w = self.world()
        [a] = _attempts(_layout(w), [HW])
        [record] = execution.run_records(w, "job001", "job", [a])
        self.assertEqual(
            (record.retries, record.retry_outcomes, record.step_mean_s,
             record.step_p50_s, record.step_p95_s, record.failure_reason,
             record.steps_attempted, record.steps_kept, record.seconds),
            (0, [], a.step_mean_s, a.step_p50_s, a.step_p95_s,
             a.failure_reason, a.steps_attempted, a.steps_kept, a.seconds))

    def test_every_record_but_the_last_ends_in_a_failure_not_retried(self):
        w = _shipped("flaky-pool-agent")
        layout = _layout(w, pool="a100-40-pcie", sku="A100-PCIE-40GB",
                         step_s=3.0)
        retried = 0
        for j in range(40):
            attempts, completed = execution.run_job(w, f"job{j:03d}", layout,
                                                    4000)
            self.assertTrue(completed)
            records = execution.run_records(w, f"job{j:03d}", "job", attempts)
            self.assertEqual(sum(len(r.attempts) for r in records),
                             len(attempts))
            self.assertEqual(records[-1].outcome, SUCCEEDED)
            for r in records:
                self.assertLessEqual(r.retries, 2)
                self.assertTrue(all(o == HW for o in r.retry_outcomes))
            for r in records[:-1]:
                self.assertEqual((r.outcome, r.retries), (HW, 2))
            retried += sum(r.retries for r in records)
        self.assertGreater(retried, 10)  # the world does retry

    def test_out_of_memory_at_the_first_step_is_not_retried(self):
        # placement-agent does not retry a command that ran out of memory
        # before its first step (it would again); the replay's layouts run
        # out of memory there, so each does so once, in every style.
        for style in ("attempts", "agent", "requeue"):
            w = self.world(reporting={"style": style})
            attempts, completed = execution.run_job(
                w, "job001", _layout(w, peak_gb=60.0), 1000)
            self.assertFalse(completed)
            self.assertEqual([a.outcome for a in attempts], [OOM], style)
            self.assertEqual(attempts[0].steps_kept, 0)
            [record] = execution.run_records(w, "job001", "job", attempts)
            self.assertEqual((record.retries, record.outcome), (0, OOM))

    def test_a_bakeoff_run_is_one_record(self):
        w = self.world(reporting={"style": "agent"}, truth={"failures": [
            {"pool": "l40s-pcie", "per_hour": 8,
             "outcome": "HARDWARE_ERROR"}]})
        layout = _layout(w)
        for j in range(20):
            attempts, _ = execution.run_job(w, f"job{j:03d}", layout, 3000,
                                            purpose="bakeoff", max_records=1)
            self.assertEqual(
                len(execution.run_records(w, f"job{j:03d}", "bakeoff",
                                          attempts)), 1)
            self.assertLessEqual(len(attempts), 3)


class WrongClocks(_TempWorlds):
    def test_a_clock_step_moves_the_start_and_nothing_else(self):
        w = _shipped("bad-clock")
        layout = _layout(w, pool="a100-80-ib", sku="A100-SXM4-80GB", gpus=2)
        faulty = honest = None
        for j in range(200):
            attempts, _ = execution.run_job(w, f"job{j:03d}", layout, 1000,
                                            start_s=j * HOUR)
            [record] = execution.run_records(w, f"job{j:03d}", "job",
                                             attempts)
            if record.fault and faulty is None:
                faulty = (attempts, record)
            if not record.fault and honest is None:
                honest = (attempts, record)
        attempts, record = faulty
        a = attempts[0]
        self.assertEqual(record.start_s, a.start_s - 7 * HOUR)
        self.assertEqual(record.start_s + record.seconds,
                         a.start_s + a.seconds)
        self.assertEqual((record.step_mean_s, record.steps_attempted),
                         (a.step_mean_s, a.steps_attempted))
        self.assertEqual(record.true_seconds, a.seconds)
        attempts, record = honest
        self.assertEqual((record.start_s, record.seconds),
                         (attempts[0].start_s, attempts[0].seconds))

    def test_a_clock_stepped_back_ends_before_it_starts(self):
        w = _shipped("bad-clock")
        layout = _layout(w)  # the L40S box, 8 hours ahead
        for j in range(100):
            attempts, _ = execution.run_job(w, f"job{j:03d}", layout, 1000)
            [record] = execution.run_records(w, f"job{j:03d}", "job",
                                             attempts)
            if record.fault:
                run = record.message(0.0, "", "t", "id")
                self.assertLess(run.end_time.ToNanoseconds(),
                                run.start_time.ToNanoseconds())
                return
        self.fail("no run of 100 met the L40S box's clock")

    def test_clock_faults_are_drawn_per_record_at_their_share(self):
        w = self.world(truth={"clock_faults": [
            {"pool": "l40s-pcie", "share": 0.1, "step_s": 3600}]})
        layout = _layout(w)
        draws = [execution.clock_fault(w, f"job{j:03d}", "job", layout, 0)
                 for j in range(1000)]
        self.assertTrue(80 <= sum(d is not None for d in draws) <= 120)
        self.assertEqual(
            draws, [execution.clock_fault(w, f"job{j:03d}", "job",
                                          _layout(w), 0) for j in range(1000)])
        other = _layout(w, pool="a100-40-pcie", sku="A100-PCIE-40GB")
        self.assertIsNone(execution.clock_fault(w, "job001", "job", other, 0))

    def test_a_wrong_clock_changes_no_execution(self):
        clean = self.world()
        wrong = self.world(truth={"clock_faults": [
            {"share": 1.0, "step_s": 86400}]})
        a, _ = execution.run_job(clean, "job001", _layout(clean), 2000)
        b, _ = execution.run_job(wrong, "job001", _layout(wrong), 2000)
        self.assertEqual([(x.seconds, x.outcome) for x in a],
                         [(x.seconds, x.outcome) for x in b])


def _row(world, policy, cost, oracle_cost, within, prior_right=False):
    return {"world": world, "policy": policy, "prior_right": prior_right,
            "reporting": "agent", "cost": cost, "oracle_cost": oracle_cost,
            "cost_over_oracle": cost / oracle_cost,
            "within_10pct_share": within / 80, "within_10pct_jobs": within,
            "compared_jobs": 80, "oracle_choice_share": 0.9}


class Verdict(unittest.TestCase):
    def test_each_world_is_held_to_its_bar_and_the_mean_to_the_oracles(self):
        rows = [
            # Prior right: up to 1% above list price passes.
            _row("right", report.ADVISED, 100.9, 100.0, 76, True),
            _row("right", report.LIST_PRICE, 100.0, 100.0, 80, True),
            # Prior wrong: anything above list price misses.
            _row("wrong", report.ADVISED, 101.5, 100.0, 72),
            _row("wrong", report.LIST_PRICE, 101.0, 100.0, 80),
            # Within 10%: 71 of 80 is under 90%; 1.03 over the oracle.
            _row("few", report.ADVISED, 103.0, 100.0, 71),
            _row("few", report.LIST_PRICE, 110.0, 100.0, 60),
            _row("few", report.ORACLE, 100.0, 100.0, 80),
        ]
        v = report.verdict(rows)
        misses = {w["world"]: w["misses"] for w in v["worlds"]}
        self.assertEqual(misses["right"], [])
        self.assertEqual(misses["wrong"], ["list price x1.0050 > 1.00"])
        self.assertEqual(misses["few"], ["oracle x1.0300 > 1.02",
                                         "within 10% 88.8% < 90%"])
        self.assertAlmostEqual(v["overall"]["mean_advised_over_oracle"],
                               (1.009 + 1.015 + 1.03) / 3)
        self.assertAlmostEqual(v["overall"]["within_10pct_share"],
                               (76 + 72 + 71) / 240)
        self.assertFalse(v["overall"]["pass"])
        text = report.verdict_markdown(v)
        self.assertIn("| right | right | agent | 1.009 | 1.000 | 1.009 "
                      "(<= 1.01) | 90% | 95% | pass |", text)
        self.assertIn("mean over 3 worlds 1.0180 (at or below 1.02); jobs "
                      "within 10% of hindsight 91% of all; worlds passing 1 "
                      "of 3: FAIL", text)

    def test_no_verdict_without_the_advised_and_list_price_policies(self):
        self.assertIsNone(report.verdict(
            [_row("w", report.ADVISED, 1.0, 1.0, 80)]))


if __name__ == "__main__":
    unittest.main()
