"""flush_spool against an in-process TelemetryService that answers as told:
only a refusal of the run itself (INVALID_ARGUMENT, ALREADY_EXISTS) moves it
to rejected/; a refused token, a server fault or an old server keeps the run
spooled and the flush goes on; a run missing a sample line is skipped and
the runs after it still go; samples resume by step number. No placementd."""

import concurrent.futures
import io
import os
import shutil
import tempfile
import unittest

import grpc

from placement.v1 import telemetry_pb2
from placement.v1 import telemetry_pb2_grpc
from placement_client import spool as spool_lib
from placement_client.__main__ import main as flush_main
from placement_client.connection import Connection


def run_id(n):
    return f"00000000-0000-4000-8000-{n:012d}"


class FakeTelemetry(telemetry_pb2_grpc.TelemetryServiceServicer):
    def __init__(self):
        self.steps = {}
        self.upload_answers = {}
        self.progress_answers = {}
        self.uploaded = set()

    def committed(self, rid):
        steps = self.steps.get(rid, set())
        c = -1
        while c + 1 in steps:
            c += 1
        return c

    def GetSampleProgress(self, request, context):
        code = self.progress_answers.get(request.run_id)
        if code is not None:
            context.abort(code, "told to refuse")
        return telemetry_pb2.GetSampleProgressResponse(
            run_id=request.run_id,
            committed_through_step=self.committed(request.run_id))

    def StreamStepSamples(self, request_iterator, context):
        rid = ""
        for batch in request_iterator:
            rid = batch.run_id
            self.steps.setdefault(rid, set()).update(
                s.step for s in batch.samples)
        return telemetry_pb2.StreamStepSamplesResponse(
            committed_through_step=self.committed(rid))

    def UploadBenchmarkRun(self, request, context):
        code = self.upload_answers.get(request.run.run_id)
        if code is not None:
            context.abort(code, "told to refuse")
        self.uploaded.add(request.run.run_id)
        return telemetry_pb2.UploadBenchmarkRunResponse(
            run_id=request.run.run_id)


class FlushSpoolTest(unittest.TestCase):
    def setUp(self):
        self.spool = tempfile.mkdtemp(prefix="placement-pyflush-")
        self.service = FakeTelemetry()
        self.server = grpc.server(
            concurrent.futures.ThreadPoolExecutor(max_workers=4))
        telemetry_pb2_grpc.add_TelemetryServiceServicer_to_server(
            self.service, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.address = f"127.0.0.1:{port}"
        self.connection = Connection(self.address, attempts=2,
                                     backoff_initial=0.01)

    def tearDown(self):
        self.connection.close()
        self.server.stop(None)
        shutil.rmtree(self.spool, ignore_errors=True)

    def spool_run(self, rid, steps):
        run = spool_lib.SpoolRun(self.spool, rid, create=True)
        run.append_samples([telemetry_pb2.StepSample(
            step=s, step_time_seconds=0.5) for s in steps])
        run.write_run(telemetry_pb2.BenchmarkRun(run_id=rid))
        run.close()

    def flush(self):
        log = io.StringIO()
        report = spool_lib.flush_spool(self.connection, self.spool, log=log)
        return report, log.getvalue()

    def test_only_a_refusal_of_the_run_rejects_it(self):
        codes = [(grpc.StatusCode.UNAUTHENTICATED, "kept"),
                 (grpc.StatusCode.PERMISSION_DENIED, "kept"),
                 (grpc.StatusCode.INTERNAL, "kept"),
                 (grpc.StatusCode.UNIMPLEMENTED, "kept"),
                 (grpc.StatusCode.INVALID_ARGUMENT, "rejected"),
                 (grpc.StatusCode.ALREADY_EXISTS, "rejected")]
        for i, (code, _) in enumerate(codes):
            self.spool_run(run_id(i), [0, 1, 2])
            self.service.upload_answers[run_id(i)] = code
        self.spool_run(run_id(10), [0, 1])
        self.service.progress_answers[run_id(10)] = \
            grpc.StatusCode.UNAUTHENTICATED
        self.spool_run(run_id(11), [0, 1])
        report, log = self.flush()
        for i, (_, fate) in enumerate(codes):
            self.assertEqual(report["runs"][run_id(i)], fate, log)
            self.assertEqual(
                os.path.isdir(os.path.join(self.spool, "rejected", run_id(i))),
                fate == "rejected")
        self.assertEqual(report["runs"][run_id(10)], "kept")
        self.assertEqual(report["runs"][run_id(11)], "uploaded")
        self.assertEqual((report["kept"], report["rejected"],
                          report["uploaded"], report["left"]), (5, 2, 1, 0))
        self.assertIn("UNAUTHENTICATED", log)
        self.assertIn("UNIMPLEMENTED", log)
        self.assertEqual(
            spool_lib.list_spooled_runs(self.spool),
            [run_id(0), run_id(1), run_id(2), run_id(3), run_id(10)])

        # Once the service takes them, the kept runs upload.
        self.service.upload_answers.clear()
        self.service.progress_answers.clear()
        report, log = self.flush()
        self.assertEqual(report["uploaded"], 5, log)
        self.assertEqual(spool_lib.list_spooled_runs(self.spool), [])

    def test_a_run_missing_a_sample_is_skipped_and_the_others_go(self):
        self.spool_run(run_id(1), [0, 1, 3, 4])  # the line of step 2 is lost
        self.spool_run(run_id(2), [0, 1, 2])
        report, log = self.flush()
        self.assertEqual(report["runs"][run_id(1)], "kept", log)
        self.assertEqual(report["runs"][run_id(2)], "uploaded", log)
        self.assertIn("step 2 is missing", log)
        self.assertEqual(spool_lib.list_spooled_runs(self.spool), [run_id(1)])

    def test_samples_resume_after_the_committed_step_number(self):
        # The service has steps 0-2; the spool lost the line of step 1.
        self.service.steps[run_id(1)] = {0, 1, 2}
        self.spool_run(run_id(1), [0, 2, 3, 4])
        report, log = self.flush()
        self.assertEqual(report["runs"][run_id(1)], "uploaded", log)
        self.assertEqual(self.service.committed(run_id(1)), 4)

    def test_flush_command_exits_4_for_a_kept_run(self):
        self.spool_run(run_id(1), [0])
        self.service.upload_answers[run_id(1)] = \
            grpc.StatusCode.PERMISSION_DENIED
        code = flush_main(["flush", "--server", self.address,
                           "--spool_dir", self.spool])
        self.assertEqual(code, 4)
        self.assertEqual(spool_lib.list_spooled_runs(self.spool), [run_id(1)])

    def test_a_spool_others_may_write_into_is_refused(self):
        # As placement-agent: a folder others may write into could hold
        # runs they forged, uploaded with this user's token.
        self.spool_run(run_id(1), [0])
        os.chmod(self.spool, 0o777)
        with self.assertRaises(spool_lib.SpoolRefused) as refused:
            self.flush()
        self.assertIn("mode 0777", str(refused.exception))
        with self.assertRaises(spool_lib.SpoolRefused):
            spool_lib.SpoolRun(self.spool, run_id(2), create=True)
        self.assertEqual(flush_main(["flush", "--server", self.address,
                                     "--spool_dir", self.spool]), 2)
        self.assertEqual(self.service.uploaded, set())
        os.chmod(self.spool, 0o700)
        report, log = self.flush()
        self.assertEqual(report["runs"][run_id(1)], "uploaded", log)

    def test_a_spool_another_user_owns_is_refused(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to give the folder to another uid")
        self.spool_run(run_id(1), [0])
        os.chown(self.spool, 65534, -1)
        with self.assertRaises(spool_lib.SpoolRefused) as refused:
            self.flush()
        self.assertIn("owned by uid 65534", str(refused.exception))
        self.assertEqual(self.service.uploaded, set())


if __name__ == "__main__":
    unittest.main()
