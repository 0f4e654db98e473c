"""RunRecorder against a real placementd on loopback (and a fake service
for the bearer token).

placementd runs on its own fresh database on the throwaway PostgreSQL server
named by PLACEMENT_TEST_DATABASE_URL (tests/support/placementd_launcher.py).

Environment (set by tests/agent/CMakeLists.txt):
  PLACEMENTD                    the placementd binary
  PLACEMENT_AGENT               the placement-agent binary (spool interop)
  PYTHONPATH                    the generated stubs, clients/python and
                                tests/support
  PLACEMENT_TEST_DATABASE_URL   admin URL of a throwaway server
"""

import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
import unittest
import warnings

import grpc

from placement.v1 import catalog_pb2
from placement.v1 import catalog_pb2_grpc
from placement.v1 import recipe_pb2
from placement.v1 import telemetry_pb2
from placement.v1 import telemetry_pb2_grpc
import placement_client
from placement_client import RunRecorder
from placement_client.connection import Connection
from placement_client.recorder import make_recipe
from placementd_launcher import Placementd
from placementd_launcher import psql

RPC_TIMEOUT_S = 10
L40S = "L40S-PCIE-48GB"
RECIPE = {
    "model": "Llama-3.1-8B", "method": "lora", "lora_rank": 16,
    "target_modules": ["q", "v"], "sequence_length": 2048,
    "micro_batch_size": 4, "gradient_accumulation_steps": 8,
    "precision": "bf16", "optimizer": "adamw",
    "activation_checkpointing": True, "flash_attention": True,
    "gpu_count": 1, "parallelism": "single",
}
HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "train_loop.py")


class RunRecorderTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        # Without auth: tokens are not what these tests are about.
        cls.placementd = Placementd("pyrec", auth=False)
        cls.placementd.start()
        cls.server = cls.placementd.server
        cls.db_url = cls.placementd.db_url
        cls.tmpdir = cls.placementd.tmpdir
        cls.catalog = catalog_pb2_grpc.CatalogServiceStub(
            cls.placementd.channel)
        cls.telemetry = telemetry_pb2_grpc.TelemetryServiceStub(
            cls.placementd.channel)
        try:
            cls.catalog.CreatePool(catalog_pb2.CreatePoolRequest(
                pool=catalog_pb2.Pool(
                    name="l40s-adapters", sku=L40S, node_count=1,
                    gpus_per_node=4, fabric=catalog_pb2.FABRIC_PCIE,
                    purpose=catalog_pb2.POOL_PURPOSE_TRAINING, exclusive=True,
                    gpu_quota=4, internal_rate_micros_per_gpu_hour=1_000_000,
                    labels={"team": "ml-platform"})), timeout=RPC_TIMEOUT_S)
        except BaseException:
            cls.placementd.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.placementd.stop()

    def setUp(self):
        self.spool = tempfile.mkdtemp(dir=self.tmpdir, prefix="spool-")

    def recorder(self, server=None, **kwargs):
        kwargs.setdefault("sku", L40S)
        kwargs.setdefault("recipe", RECIPE)
        return RunRecorder(server or self.server, pool="l40s-adapters",
                           spool_dir=self.spool,
                           stream_interval=0.05, upload_attempts=2,
                           backoff_initial=0.01, **kwargs)

    def stored(self, run_id):
        return self.telemetry.GetBenchmarkRun(
            telemetry_pb2.GetBenchmarkRunRequest(run_id=run_id),
            timeout=RPC_TIMEOUT_S)

    def progress(self, run_id):
        return self.telemetry.GetSampleProgress(
            telemetry_pb2.GetSampleProgressRequest(run_id=run_id),
            timeout=RPC_TIMEOUT_S)

    def sql(self, query):
        return psql(self.db_url, query)

    def flush(self, *extra):
        return subprocess.run(
            [sys.executable, "-m", "placement_client", "flush", "--server",
             self.server, "--spool_dir", self.spool, *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=120)

    def test_records_steps_streams_samples_and_uploads(self):
        with self.recorder() as rec:
            for i in range(6):
                rec.step(step_time_s=0.02, tokens=4096,
                         memory_allocated_gb=30.0 + i, loss=2.0 - i / 10)
                time.sleep(0.02)
            # Samples stream while the loop runs.
            deadline = time.monotonic() + 10
            while self.progress(rec.run_id).committed_through_step < 5:
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.05)
        self.assertTrue(rec.uploaded)
        run = self.stored(rec.run_id).run
        self.assertEqual(run.outcome, telemetry_pb2.RUN_OUTCOME_SUCCEEDED)
        self.assertEqual((run.steps_attempted, run.steps_succeeded), (6, 6))
        self.assertEqual(run.retries, 0)
        self.assertAlmostEqual(run.peak_memory_gb, 35.0)
        self.assertAlmostEqual(run.step_time_mean_seconds, 0.02)
        self.assertEqual(run.sku, L40S)
        self.assertEqual(run.recipe.lora_rank, 16)
        self.assertEqual(run.interconnect, telemetry_pb2.INTERCONNECT_NONE)
        self.assertEqual(run, rec.summary)
        p = self.progress(rec.run_id)
        self.assertEqual((p.committed_through_step, p.samples_stored), (5, 6))
        self.assertEqual(placement_client.list_spooled_runs(self.spool), [])

    def test_restart_counts_a_retry(self):
        with self.recorder() as rec:
            for _ in range(2):
                rec.step(step_time_s=0.01, memory_allocated_gb=47.0)
            rec.restart(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
            for _ in range(3):
                rec.step(step_time_s=0.01, memory_allocated_gb=30.0)
        run = self.stored(rec.run_id).run
        self.assertEqual(run.retries, 1)
        self.assertEqual(list(run.retry_outcomes),
                         [telemetry_pb2.RUN_OUTCOME_OUT_OF_MEMORY])
        self.assertEqual(run.outcome, telemetry_pb2.RUN_OUTCOME_SUCCEEDED)
        self.assertEqual((run.steps_attempted, run.steps_succeeded), (5, 3))
        self.assertIn("attempt 1: OUT_OF_MEMORY", run.failure_reason)
        self.assertEqual(self.progress(rec.run_id).samples_stored, 5)

    def test_exception_is_recorded_and_propagates(self):
        class OutOfMemoryError(RuntimeError):
            pass

        with self.assertRaises(OutOfMemoryError):
            with self.recorder() as rec:
                rec.step(step_time_s=0.01, memory_allocated_gb=46.0)
                raise OutOfMemoryError("CUDA out of memory")
        run = self.stored(rec.run_id).run
        self.assertEqual(run.outcome, telemetry_pb2.RUN_OUTCOME_OUT_OF_MEMORY)
        self.assertEqual(run.steps_succeeded, 0)

    def test_a_failed_run_keeps_the_steps_of_its_last_checkpoint(self):
        with self.assertRaises(RuntimeError):
            with self.recorder() as rec:
                for i in range(5):
                    rec.step(step_time_s=0.01, memory_allocated_gb=30.0)
                    if i == 2:
                        rec.checkpoint(3)  # steps 0..2 are saved
                rec.checkpoint(2)  # going backwards: ignored
                rec.step(step_time_s=0.01, memory_allocated_gb=30.0)
                raise RuntimeError("NCCL communicator was aborted")
        run = self.stored(rec.run_id).run
        self.assertEqual(run.outcome,
                         telemetry_pb2.RUN_OUTCOME_COLLECTIVE_TIMEOUT)
        self.assertEqual((run.steps_attempted, run.steps_succeeded), (6, 3))

    def test_a_restart_resumes_from_the_last_checkpoint(self):
        with self.recorder() as rec:
            for _ in range(3):
                rec.step(step_time_s=0.01, memory_allocated_gb=30.0)
            rec.checkpoint(2)
            rec.restart("Xid 79: GPU has fallen off the bus")
            for _ in range(3):  # steps 2, 3 and 4
                rec.step(step_time_s=0.01, memory_allocated_gb=30.0)
        run = self.stored(rec.run_id).run
        self.assertEqual(run.outcome, telemetry_pb2.RUN_OUTCOME_SUCCEEDED)
        self.assertEqual(run.retries, 1)
        self.assertEqual(list(run.retry_outcomes),
                         [telemetry_pb2.RUN_OUTCOME_HARDWARE_ERROR])
        self.assertEqual((run.steps_attempted, run.steps_succeeded), (6, 5))

    def test_kept_steps_never_exceed_the_steps_recorded(self):
        with self.assertRaises(RuntimeError):
            with self.recorder() as rec:
                rec.checkpoint(1000)  # more than this run recorded
                for _ in range(2):
                    rec.step(step_time_s=0.01, memory_allocated_gb=30.0)
                with self.assertRaises(ValueError):
                    rec.checkpoint(-1)
                with self.assertRaises(TypeError):
                    rec.checkpoint(2.5)
                raise RuntimeError("boom")
        run = self.stored(rec.run_id).run
        self.assertEqual((run.steps_attempted, run.steps_succeeded), (2, 2))

    def test_unreachable_service_spools_and_flush_is_idempotent(self):
        with self.recorder(server="127.0.0.1:1") as rec:
            for _ in range(4):
                rec.step(step_time_s=0.01, tokens=10, memory_allocated_gb=20.0)
        self.assertFalse(rec.uploaded)
        self.assertEqual(placement_client.list_spooled_runs(self.spool),
                         [rec.run_id])
        copy = self.spool + "-copy"
        shutil.copytree(self.spool, copy)

        out = self.flush()
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertIn("uploaded 1, left in the spool 0", out.stdout)
        first = self.stored(rec.run_id)
        self.assertEqual(first.run, rec.summary)
        self.assertEqual(self.progress(rec.run_id).samples_stored, 4)

        # The same spool again (a lost acknowledgement): the original ack,
        # nothing stored twice.
        shutil.rmtree(self.spool)
        shutil.copytree(copy, self.spool)
        out = self.flush()
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertEqual(self.stored(rec.run_id).accept_time, first.accept_time)
        self.assertEqual(self.sql(
            f"SELECT count(*) FROM benchmark_runs WHERE run_id = '{rec.run_id}'"),
            "1")
        self.assertEqual(self.sql(
            f"SELECT count(*) FROM step_samples WHERE run_id = '{rec.run_id}'"),
            "4")
        out = self.flush()
        self.assertIn("uploaded 0, left in the spool 0", out.stdout)

    def test_placement_agent_flushes_what_python_spooled(self):
        agent = os.environ.get("PLACEMENT_AGENT")
        if not agent:
            self.skipTest("PLACEMENT_AGENT not set")
        with self.recorder(server="127.0.0.1:1") as rec:
            rec.step(step_time_s=0.01, memory_allocated_gb=20.0)
            rec.step(step_time_s=0.01, memory_allocated_gb=21.0)
        out = subprocess.run(
            [agent, f"--server={self.server}", f"--spool_dir={self.spool}",
             "flush"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertEqual(self.stored(rec.run_id).run, rec.summary)
        self.assertEqual(self.progress(rec.run_id).committed_through_step, 1)

    def test_a_refused_run_is_not_uploaded(self):
        # The pool does not exist: the service refuses the summary, and the
        # run goes to rejected/, which is not "uploaded".
        rec = RunRecorder(self.server, pool="no-such-pool", sku=L40S,
                          recipe=RECIPE, spool_dir=self.spool,
                          stream_interval=0.05, upload_attempts=2,
                          backoff_initial=0.01)
        with rec:
            rec.step(step_time_s=0.01, memory_allocated_gb=20.0)
        self.assertFalse(rec.uploaded)
        self.assertEqual(rec.flush_report["runs"][rec.run_id], "rejected")
        self.assertTrue(os.path.isdir(
            os.path.join(self.spool, "rejected", rec.run_id)))
        self.assertEqual(placement_client.list_spooled_runs(self.spool), [])

    def test_a_run_not_recorded_leaves_nothing_spooled(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with self.recorder() as rec:
                for _ in range(3):
                    rec.step(step_time_s=0.01, tokens=10)  # no memory, no torch
        self.assertIsNone(rec.summary)
        self.assertFalse(rec.uploaded)
        # Said once, loudly, while the loop ran.
        said = [w for w in caught if issubclass(w.category, RuntimeWarning)
                and "measures no memory" in str(w.message)]
        self.assertEqual(len(said), 1, [str(w.message) for w in caught])
        self.assertEqual(placement_client.list_spooled_runs(self.spool), [])
        self.assertFalse(os.path.exists(os.path.join(self.spool, rec.run_id)))
        # A later recorder has nothing of it to re-send.
        with self.recorder() as later:
            later.step(step_time_s=0.01, memory_allocated_gb=20.0)
        self.assertTrue(later.uploaded)
        self.assertEqual(list(later.flush_report["runs"]), [later.run_id])

    def test_a_resent_step_with_other_values_is_counted_as_conflicting(self):
        import uuid
        run_id = str(uuid.uuid4())

        def sample(step, step_time):
            s = telemetry_pb2.StepSample(
                step=step, step_time_seconds=step_time,
                memory_allocated_gb=20.0, memory_reserved_gb=21.0, tokens=10,
                loss=1.5)
            s.time.GetCurrentTime()
            return s

        def stream(*samples):
            return self.telemetry.StreamStepSamples(iter([
                telemetry_pb2.StreamStepSamplesRequest(
                    run_id=run_id, samples=list(samples))]),
                timeout=RPC_TIMEOUT_S)

        first = stream(sample(0, 0.5), sample(1, 0.5), sample(2, 0.5))
        self.assertEqual((first.samples_stored, first.samples_duplicate,
                          first.samples_conflicting), (3, 0, 0))
        # The same step again, same values: a re-send, not a conflict.
        same = stream(sample(1, 0.5))
        self.assertEqual((same.samples_stored, same.samples_duplicate,
                          same.samples_conflicting), (0, 1, 0))
        # Other values for stored steps (and twice in one message): counted
        # back to the sender; the first stored values are kept.
        other = stream(sample(1, 0.75), sample(2, 0.5), sample(3, 0.5),
                       sample(3, 0.9))
        self.assertEqual((other.samples_stored, other.samples_duplicate,
                          other.samples_conflicting), (1, 3, 2))
        self.assertEqual(self.sql(
            f"SELECT string_agg(step_time_s::text, ',' ORDER BY step) FROM "
            f"step_samples WHERE run_id = '{run_id}'"), "0.5,0.5,0.5,0.5")

    def test_sku_must_be_exact(self):
        with self.assertRaisesRegex(ValueError, "A100-SXM4-80GB"):
            with self.recorder(sku="A100"):
                pass
        with self.assertRaisesRegex(ValueError, "did you mean 'L40S-PCIE-48GB'"):
            with self.recorder(sku="l40s-pcie-48gb"):
                pass
        env = dict(os.environ, PATH="/nonexistent")
        env.pop("PLACEMENT_AGENT", None)
        env.pop("PLACEMENT_SKU", None)
        out = subprocess.run(
            [sys.executable, "-c",
             "from placement_client import RunRecorder\n"
             "RunRecorder('127.0.0.1:1', pool='p', recipe={'model': 'x'})"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=60)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("never guessed", out.stdout)
        self.assertEqual(placement_client.list_spooled_runs(self.spool), [])

    def test_reads_pytorch_peak_memory_when_importable(self):
        fake = types.ModuleType("torch")
        fake.cuda = types.SimpleNamespace(
            is_available=lambda: True,
            max_memory_allocated=lambda: 12_500_000_000,
            max_memory_reserved=lambda: 14_000_000_000)
        sys.modules["torch"] = fake
        try:
            with self.recorder() as rec:
                rec.step(step_time_s=0.01)
        finally:
            del sys.modules["torch"]
        run = self.stored(rec.run_id).run
        self.assertAlmostEqual(run.peak_memory_gb, 14.0)
        self.assertEqual(self.sql(
            "SELECT memory_allocated_gb FROM step_samples WHERE run_id = "
            f"'{rec.run_id}'"), "12.5")
        # Both peaks go up, and which one peak_memory_gb is.
        self.assertAlmostEqual(run.peak_memory_allocated_gb, 12.5)
        self.assertAlmostEqual(run.peak_memory_reserved_gb, 14.0)
        self.assertEqual(run.peak_memory_kind,
                         recipe_pb2.PEAK_MEMORY_KIND_RESERVED)
        self.assertEqual(run.recipe.reported_peak,
                         recipe_pb2.PEAK_MEMORY_KIND_RESERVED)

    def test_report_peak_allocated_and_a_reserve_never_measured(self):
        with self.recorder(report_peak="allocated") as rec:
            rec.step(step_time_s=0.01, memory_allocated_gb=20.0,
                     memory_reserved_gb=22.0)
        run = self.stored(rec.run_id).run
        self.assertAlmostEqual(run.peak_memory_gb, 20.0)
        self.assertEqual(run.peak_memory_kind,
                         recipe_pb2.PEAK_MEMORY_KIND_ALLOCATED)
        self.assertAlmostEqual(run.peak_memory_reserved_gb, 22.0)
        # Given allocated memory only, the run says it is allocated memory.
        with self.recorder() as rec:
            rec.step(step_time_s=0.01, memory_allocated_gb=20.0)
        run = self.stored(rec.run_id).run
        self.assertEqual(run.peak_memory_kind,
                         recipe_pb2.PEAK_MEMORY_KIND_ALLOCATED)
        self.assertAlmostEqual(run.peak_memory_reserved_gb, 0.0)

    def test_recipe_memory_fields_take_short_names(self):
        recipe = make_recipe(dict(
            RECIPE, loss_implementation="chunked-cross-entropy",
            sequence_packing="padded-per-batch", mean_tokens_per_sample=300,
            training_framework="hf-transformers-peft"))
        self.assertEqual(recipe.loss_implementation,
                         recipe_pb2.LOSS_IMPLEMENTATION_CHUNKED_CROSS_ENTROPY)
        self.assertEqual(recipe.sequence_packing,
                         recipe_pb2.SEQUENCE_PACKING_PADDED_PER_BATCH)
        self.assertEqual(recipe.training_framework,
                         recipe_pb2.TRAINING_FRAMEWORK_HF_TRANSFORMERS_PEFT)
        with self.recorder(recipe=recipe) as rec:
            rec.step(step_time_s=0.01, memory_allocated_gb=20.0)
        self.assertTrue(rec.uploaded)
        run = self.stored(rec.run_id).run
        self.assertEqual(run.recipe.mean_tokens_per_sample, 300)

    def test_adapter_type_takes_a_short_name_and_is_stored(self):
        recipe = make_recipe(dict(RECIPE, adapter_type="dora"))
        self.assertEqual(recipe.adapter_type, recipe_pb2.ADAPTER_TYPE_DORA)
        with self.recorder(recipe=recipe) as rec:
            rec.step(step_time_s=0.01, memory_allocated_gb=20.0)
        self.assertTrue(rec.uploaded)
        self.assertEqual(self.stored(rec.run_id).run.recipe.adapter_type,
                         recipe_pb2.ADAPTER_TYPE_DORA)

    def test_example_training_loop(self):
        out = subprocess.run(
            [sys.executable, EXAMPLE, "--server", self.server, "--pool",
             "l40s-adapters", "--sku", L40S, "--steps", "12", "--spool_dir",
             self.spool], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertIn("uploaded", out.stdout)
        run_id = out.stdout.split("run ")[1].split(":")[0]
        self.assertEqual(self.stored(run_id).run.steps_succeeded, 12)


class _RecordingService(telemetry_pb2_grpc.TelemetryServiceServicer,
                        catalog_pb2_grpc.CatalogServiceServicer):
    """Accepts everything and remembers each call's authorization header."""

    def __init__(self):
        self.seen = []

    def _note(self, context, method):
        auth = dict(context.invocation_metadata()).get("authorization")
        self.seen.append((method, auth))

    def GetSku(self, request, context):
        self._note(context, "GetSku")
        return catalog_pb2.GetSkuResponse(
            sku=catalog_pb2.Sku(name=request.name, memory_gb=48))

    def GetSampleProgress(self, request, context):
        self._note(context, "GetSampleProgress")
        return telemetry_pb2.GetSampleProgressResponse(
            run_id=request.run_id, committed_through_step=-1)

    def StreamStepSamples(self, request_iterator, context):
        self._note(context, "StreamStepSamples")
        last = -1
        for batch in request_iterator:
            last = max([last] + [s.step for s in batch.samples])
        return telemetry_pb2.StreamStepSamplesResponse(committed_through_step=last)

    def UploadBenchmarkRun(self, request, context):
        self._note(context, "UploadBenchmarkRun")
        return telemetry_pb2.UploadBenchmarkRunResponse(run_id=request.run.run_id)


class BearerTokenTest(unittest.TestCase):

    def test_every_call_carries_the_token(self):
        service = _RecordingService()
        server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
        telemetry_pb2_grpc.add_TelemetryServiceServicer_to_server(service, server)
        catalog_pb2_grpc.add_CatalogServiceServicer_to_server(service, server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        spool = tempfile.mkdtemp(prefix="placement-py-token-")
        try:
            with RunRecorder(f"127.0.0.1:{port}", pool="p", sku=L40S,
                             recipe=RECIPE, spool_dir=spool, token="s3cret",
                             stream_interval=0.05) as rec:
                rec.step(step_time_s=0.01, memory_allocated_gb=1.0)
            self.assertTrue(rec.uploaded)
        finally:
            server.stop(grace=None)
            shutil.rmtree(spool, ignore_errors=True)
        methods = {m for m, _ in service.seen}
        self.assertEqual(methods, {"GetSku", "GetSampleProgress",
                                   "StreamStepSamples", "UploadBenchmarkRun"})
        self.assertEqual({auth for _, auth in service.seen}, {"Bearer s3cret"})

    def test_token_from_environment_and_none(self):
        old = os.environ.get("PLACEMENT_TOKEN")
        os.environ["PLACEMENT_TOKEN"] = "from-env"
        try:
            self.assertEqual(Connection("127.0.0.1:1").metadata,
                             (("authorization", "Bearer from-env"),))
            self.assertEqual(Connection("127.0.0.1:1", token="t").metadata,
                             (("authorization", "Bearer t"),))
        finally:
            if old is None:
                del os.environ["PLACEMENT_TOKEN"]
            else:
                os.environ["PLACEMENT_TOKEN"] = old
        home = tempfile.mkdtemp()
        old_home = os.environ.get("HOME")
        os.environ["HOME"] = home
        try:
            self.assertEqual(Connection("127.0.0.1:1").metadata, ())
        finally:
            os.environ["HOME"] = old_home or ""
            shutil.rmtree(home)


class ClassificationTest(unittest.TestCase):

    def test_outcomes(self):
        classify = placement_client.classify_exception
        self.assertEqual(classify(RuntimeError("CUDA out of memory"))[0],
                         telemetry_pb2.RUN_OUTCOME_OUT_OF_MEMORY)
        self.assertEqual(classify(RuntimeError(
            "[Rank 0] Watchdog caught collective operation timeout"))[0],
            telemetry_pb2.RUN_OUTCOME_COLLECTIVE_TIMEOUT)
        self.assertEqual(classify(ValueError("bad"))[0],
                         telemetry_pb2.RUN_OUTCOME_FAILED)
        self.assertEqual(classify(ValueError("caf\u00e9"))[1], "ValueError: caf?")


if __name__ == "__main__":
    unittest.main()
