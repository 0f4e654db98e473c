"""World files and the world's seeded luck (docs/DECISIONS.md): a bad field
is named by its path, a base file is merged under the world's own keys, and
the draws depend on (job, pool, layout, attempt) and nothing else."""

import json
import os
import shutil
import tempfile
import types
import unittest

from placement.v1 import recipe_pb2

import execution
import queues
import world as world_lib

HERE = os.path.dirname(os.path.abspath(__file__))
FLEET = os.path.join(HERE, "fleet.json")


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
        worlds = os.path.join(HERE, "worlds")
        for name in sorted(os.listdir(worlds)):
            with self.subTest(world=name):
                w = world_lib.load(os.path.join(worlds, name))
                # The queue world runs a longer trace of its own.
                self.assertEqual(len(w.jobs),
                                 80 if w.queues is None else 400)

    def test_a_bad_queue_field_is_named(self):
        self.assert_rejected(
            {"queues": {"seed": 1, "tenants": {"nowhere": {
                "jobs_per_hour": 1, "gpus": {"1": 1}, "run_h_median": 1}}}},
            "queues.tenants.nowhere", "names no pool")
        self.assert_rejected(
            {"queues": {"seed": 1, "tenants": {}, "deadlines": {"share": 2}}},
            "queues.deadlines.share", "must be at most 1")


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

    def test_a_job_behind_never_starts_before_one_ahead(self):
        pool = queues.PoolQueue("p", 8)
        pool.submit(queues.QJob("a", 6, 0, 100), 0)   # runs 0-100
        pool.submit(queues.QJob("b", 4, 0, 50), 0)    # waits for a
        # One GPU would fit now, but b is ahead: after b starts at 100.
        self.assertEqual(pool.true_start(1, 10), 100)
        self.assertEqual(pool.true_start(6, 10), 150)
        pool.finish_until(100)
        self.assertEqual([j.id for j in pool.running], ["b"])


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


if __name__ == "__main__":
    unittest.main()
