"""The local spool, shared with placement-agent (docs/AGENT.md):

    <spool>/<run_id>/lock           flock()ed by the process recording it
    <spool>/<run_id>/samples.jsonl  one StepSample (proto JSON) a line
    <spool>/<run_id>/run.pb         the finished BenchmarkRun, written once

A run folder is removed once the service committed its samples and
acknowledged its summary."""

import errno
import fcntl
import os
import shutil
import stat
import sys
import time

import grpc
from google.protobuf import json_format

from placement.v1 import telemetry_pb2
from placement.v1 import telemetry_pb2_grpc
from placement_client.connection import RETRYABLE

# The service refused the run itself: no retry of the same bytes can
# succeed. Every other refusal (a revoked token, a server fault, an old
# server) says nothing about the run, which stays spooled.
REFUSES_THE_RUN = (grpc.StatusCode.INVALID_ARGUMENT,
                   grpc.StatusCode.ALREADY_EXISTS)

SAMPLES = "samples.jsonl"
RUN = "run.pb"
LOCK = "lock"
BATCH = 1000  # samples a stream message carries (the service takes 10,000)


def default_spool_dir():
    """$PLACEMENT_SPOOL_DIR, else $XDG_STATE_HOME/placement/spool, else
    ~/.local/state/placement/spool (as placement-agent)."""
    if os.environ.get("PLACEMENT_SPOOL_DIR"):
        return os.environ["PLACEMENT_SPOOL_DIR"]
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser(
        "~/.local/state")
    return os.path.join(state, "placement", "spool")


def spool_dir_or_default(spool_dir):
    return spool_dir or default_spool_dir()


class SpoolRefused(PermissionError):
    """The spool folder is not this user's alone (see check_spool_dir)."""


def check_spool_dir(spool_dir):
    """Refuses a spool folder that another user owns or that group or other
    users may write into, as placement-agent does: whatever is spooled is
    uploaded with this user's token, so such a folder could hold forged
    runs. A folder that does not exist yet is fine (it is created 0700).
    Raises SpoolRefused naming the owner or the mode."""
    try:
        st = os.stat(spool_dir)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        raise SpoolRefused(f"spool {spool_dir} is not a directory")
    if st.st_uid != os.geteuid():
        raise SpoolRefused(
            f"refusing spool {spool_dir}: owned by uid {st.st_uid}, not by "
            f"this user (uid {os.geteuid()}); its runs would be uploaded "
            f"with this user's token")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise SpoolRefused(
            f"refusing spool {spool_dir}: mode {st.st_mode & 0o7777:04o} lets "
            f"other users write into it; its runs would be uploaded with this "
            f"user's token (chmod 700 {spool_dir})")


def list_spooled_runs(spool_dir=None):
    spool_dir = spool_dir_or_default(spool_dir)
    try:
        names = os.listdir(spool_dir)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if len(n) == 36 and n[8] == "-")


class SpoolRun:
    """One run's folder, locked while this object holds it."""

    def __init__(self, spool_dir, run_id, create):
        self.spool_dir = spool_dir
        self.run_id = run_id
        self.dir = os.path.join(spool_dir, run_id)
        check_spool_dir(spool_dir)
        if create:
            os.makedirs(spool_dir, mode=0o700, exist_ok=True)
            os.mkdir(self.dir, 0o700)  # FileExistsError if taken
        elif not os.path.isdir(self.dir):
            raise FileNotFoundError(self.dir)
        self._lock = open(os.path.join(self.dir, LOCK), "a")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            self._lock.close()
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise BlockingIOError(f"{self.dir} is locked by a run in progress")
            raise

    def append_samples(self, samples):
        lines = "".join(
            json_format.MessageToJson(s, preserving_proto_field_name=True,
                                      indent=None) + "\n"
            for s in samples)
        fd = os.open(os.path.join(self.dir, SAMPLES),
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, lines.encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def read_samples(self):
        try:
            with open(os.path.join(self.dir, SAMPLES), "rb") as f:
                data = f.read().decode()
        except FileNotFoundError:
            return []
        lines = data.split("\n")
        # The last element is "" after a final newline, or a torn line.
        samples = []
        for line in lines[:-1]:
            if line:
                samples.append(json_format.Parse(
                    line, telemetry_pb2.StepSample(), ignore_unknown_fields=True))
        return samples

    def write_run(self, run):
        path = os.path.join(self.dir, RUN)
        if os.path.exists(path):
            raise FileExistsError(path)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(run.SerializeToString())
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, path)

    def read_run(self):
        try:
            with open(os.path.join(self.dir, RUN), "rb") as f:
                return telemetry_pb2.BenchmarkRun.FromString(f.read())
        except FileNotFoundError:
            return None

    def remove(self):
        shutil.rmtree(self.dir)
        self.close()

    def reject(self, why):
        rejected = os.path.join(self.spool_dir, "rejected")
        os.makedirs(rejected, exist_ok=True)
        with open(os.path.join(self.dir, "rejected.txt"), "w") as f:
            f.write(why + "\n")
        target = os.path.join(rejected, self.run_id)
        os.rename(self.dir, target)
        self.dir = target
        self.close()

    def close(self):
        if not self._lock.closed:
            self._lock.close()


def sync_samples(connection, run_id, samples, retry=True, team=""):
    """Streams the samples after the service's committed step; returns the
    committed step. `team`: the run's (empty: the service takes the token's
    when it is bound to one). Raises grpc.RpcError."""
    stub = telemetry_pb2_grpc.TelemetryServiceStub(connection.channel)
    progress = connection.call(
        stub.GetSampleProgress,
        telemetry_pb2.GetSampleProgressRequest(run_id=run_id), retry=retry)
    committed = progress.committed_through_step
    attempts = connection.attempts if retry else 1
    for i in range(attempts):
        # By step number, not by position: a spool that lost a line still
        # sends every step after the committed one.
        pending = [s for s in samples if s.step > committed]
        if not pending:
            return committed

        def batches(pending=pending):
            for b in range(0, len(pending), BATCH):
                yield telemetry_pb2.StreamStepSamplesRequest(
                    run_id=run_id, samples=pending[b:b + BATCH], team=team)

        try:
            response = stub.StreamStepSamples(
                batches(), timeout=120, metadata=connection.metadata)
            if response.samples_conflicting:
                # The service kept what it stored first; a step measured
                # twice with different values is the sender's to explain.
                print(f"placement_client: run {run_id}: "
                      f"{response.samples_conflicting} re-sent samples differ "
                      f"from the ones stored for their steps; the stored ones "
                      f"are kept", file=sys.stderr)
            return response.committed_through_step
        except grpc.RpcError as e:
            if e.code() not in RETRYABLE or i == attempts - 1:
                raise
            time.sleep(connection.delay(i))
            progress = connection.call(
                stub.GetSampleProgress,
                telemetry_pb2.GetSampleProgressRequest(run_id=run_id))
            committed = progress.committed_through_step
    return committed


def upload_run(connection, run):
    stub = telemetry_pb2_grpc.TelemetryServiceStub(connection.channel)
    return connection.call(stub.UploadBenchmarkRun,
                           telemetry_pb2.UploadBenchmarkRunRequest(run=run))


def flush_spool(connection, spool_dir=None, log=sys.stderr):
    """Uploads every spooled run (samples, then summary) and removes each one
    acknowledged. Stops at the first run the service cannot be reached for;
    a run it cannot complete for any other reason is reported and skipped.
    Returns a dict of counts: uploaded, left, rejected, kept, in_progress,
    incomplete, and in "runs" what became of each run id it tried
    ("uploaded", "rejected", "left", "kept", "incomplete"). Raises
    SpoolRefused for a folder that is not this user's alone."""
    spool_dir = spool_dir_or_default(spool_dir)
    check_spool_dir(spool_dir)
    report = dict(uploaded=0, left=0, rejected=0, kept=0, in_progress=0,
                  incomplete=0, runs={})

    def count(run_id, fate):
        report[fate] += 1
        report["runs"][run_id] = fate

    runs = list_spooled_runs(spool_dir)
    for index, run_id in enumerate(runs):
        try:
            run = SpoolRun(spool_dir, run_id, create=False)
        except BlockingIOError:
            report["in_progress"] += 1
            continue
        except FileNotFoundError:
            continue
        try:
            fate = _flush_run(connection, run, log)
        finally:
            run.close()
        count(run_id, fate)
        if fate == "left":
            # The service is out of reach: the runs after this one wait too.
            for rest in runs[index + 1:]:
                count(rest, "left")
            return report
    return report


def _flush_run(connection, run, log):
    """One spooled run, opened and locked; returns its fate."""
    run_id = run.run_id
    samples = run.read_samples()
    summary = run.read_run()
    try:
        committed = sync_samples(connection, run_id, samples,
                                 team=summary.team if summary else "")
        last = max((s.step for s in samples), default=-1)
        if committed < last:
            # The service commits steps without gaps: a step missing from
            # the spool holds the rest back, and no retry brings it back.
            print(f"run {run_id}: kept in the spool: step {committed + 1} is "
                  f"missing from its samples (only steps through {committed} "
                  f"of {last} are committed)", file=log)
            return "kept"
        if summary is None:
            print(f"run {run_id}: {len(samples)} samples uploaded; no "
                  f"summary (its recorder did not finish)", file=log)
            return "incomplete"
        ack = upload_run(connection, summary)
    except grpc.RpcError as e:
        why = f"{e.code().name}: {e.details()}"
        if e.code() in RETRYABLE:
            print(f"run {run_id}: kept in the spool: {why}", file=log)
            return "left"
        if e.code() in REFUSES_THE_RUN:
            print(f"run {run_id}: refused, moved to rejected/: {why}",
                  file=log)
            run.reject(why)
            return "rejected"
        print(f"run {run_id}: kept in the spool: the service answered {why} "
              f"(not a fault of the run: check the token, the server and its "
              f"version, then flush again)", file=log)
        return "kept"
    print(f"run {run_id}: uploaded ({len(samples)} samples, "
          f"{ack.gpu_hours:.4f} GPU-hours, recipe key {ack.recipe_key})",
          file=log)
    run.remove()
    return "uploaded"
