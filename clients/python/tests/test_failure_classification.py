"""The Python client classifies failures as placement-agent does: the cases
of tests/agent/testdata/failure_outcomes.json, which the agent's own test
(tests/agent/run_record_test.cc) reads too."""

import json
import os
import pathlib
import unittest

import placement_client
from placement.v1 import telemetry_pb2

CASES = (pathlib.Path(__file__).resolve().parents[3] / "tests" / "agent" /
         "testdata" / "failure_outcomes.json")


class SharedCasesTest(unittest.TestCase):

    def test_every_case_as_the_agent_classifies_it(self):
        with open(CASES, encoding="utf-8") as f:
            cases = json.load(f)["cases"]
        self.assertGreaterEqual(len(cases), 10)
        for case in cases:
            with self.subTest(case["name"]):
                outcome, reason = placement_client.classify_attempt(
                    case["output"], exit_code=case.get("exit_code", 0),
                    term_signal=case.get("term_signal", 0),
                    timed_out=case.get("timed_out", False))
                self.assertEqual(
                    telemetry_pb2.RunOutcome.Name(outcome),
                    "RUN_OUTCOME_" + case["outcome"])
                self.assertEqual(reason, case["reason"])

    def test_an_exception_takes_the_same_rules(self):
        classify = placement_client.classify_exception
        self.assertEqual(
            classify(RuntimeError("NCCL error: NCCL_ERROR_OUT_OF_MEMORY"))[0],
            telemetry_pb2.RUN_OUTCOME_OUT_OF_MEMORY)
        self.assertEqual(
            classify(RuntimeError("NCCL communicator was aborted"))[0],
            telemetry_pb2.RUN_OUTCOME_COLLECTIVE_TIMEOUT)
        self.assertEqual(classify(placement_client.Preempted())[0],
                         telemetry_pb2.RUN_OUTCOME_PREEMPTED)
        self.assertEqual(classify(KeyboardInterrupt())[0],
                         telemetry_pb2.RUN_OUTCOME_PREEMPTED)


if __name__ == "__main__":
    unittest.main()
