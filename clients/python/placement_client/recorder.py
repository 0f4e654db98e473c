"""RunRecorder: records one benchmark run of a training loop."""

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import uuid
import warnings

import grpc
from google.protobuf import json_format
from google.protobuf import timestamp_pb2
from google.protobuf.internal import enum_type_wrapper

from placement.v1 import catalog_pb2
from placement.v1 import catalog_pb2_grpc
from placement.v1 import recipe_pb2
from placement.v1 import telemetry_pb2
from placement_client import spool as spool_lib
from placement_client.connection import RETRYABLE, Connection

# The rules of placement-agent's ClassifyAttempt (clients/agent/run_record.cc),
# needle for needle and in the same order; tests/agent/testdata/
# failure_outcomes.json holds the cases both must agree on.
_OOM = (b"cuda out of memory", b"outofmemoryerror", b"out of memory",
        b"cublas_status_alloc_failed", b"nccl_error_out_of_memory")
_COLLECTIVE = (b"watchdog caught collective operation timeout",
               b"nccl timeout", b"nccl communicator was aborted",
               b"collective operation timeout", b"processgroupnccl")
_HARDWARE = (b"xid", b"uncorrectable ecc", b"fallen off the bus",
             b"ecc error")
_ERROR = (b"error", b"exception", b"traceback")


def _printable(raw):
    """Printable ASCII, one '?' per other byte: a reason must be valid UTF-8
    and is cut at a byte count."""
    return "".join(chr(b) if 0x20 <= b <= 0x7e else "?" for b in raw)


def _find_line(lines, needles):
    """The last line containing any of `needles` (ASCII case-insensitive),
    stripped, cut at 300 bytes and made printable; None when none does."""
    for line in reversed(lines):
        lower = line.lower()
        if any(n in lower for n in needles):
            return _printable(line.strip(b" \t\n\v\f\r")[:300])
    return None


def classify_attempt(output_tail, exit_code=0, term_signal=0,
                     timed_out=False):
    """(RunOutcome, reason) for a process that ended so, from the tail of its
    output (str or bytes): exit 0 succeeded; CUDA/NCCL out-of-memory text is
    OUT_OF_MEMORY; NCCL or collective timeouts and aborted communicators are
    COLLECTIVE_TIMEOUT; Xid / ECC / fallen-off-the-bus text is
    HARDWARE_ERROR; SIGTERM from outside is PREEMPTED; anything else
    FAILED."""
    if not timed_out and term_signal == 0 and exit_code == 0:
        return telemetry_pb2.RUN_OUTCOME_SUCCEEDED, ""
    if timed_out:
        how = "timed out"
    elif term_signal:
        how = f"killed by signal {term_signal}"
    else:
        how = f"exit code {exit_code}"
    if isinstance(output_tail, str):
        output_tail = output_tail.encode("utf-8", "replace")
    lines = [l for l in output_tail.replace(b"\r", b"\n").split(b"\n")
             if l.strip(b" \t\n\v\f\r")]
    # Out of memory first: an OOM on one rank usually shows up as an NCCL
    # timeout on the others, and the OOM is the cause.
    line = _find_line(lines, _OOM)
    if line is not None:
        return telemetry_pb2.RUN_OUTCOME_OUT_OF_MEMORY, f"{how}: {line}"
    line = _find_line(lines, _COLLECTIVE)
    if line is None:
        nccl = _find_line(lines, (b"nccl",))
        if nccl is not None and ("timeout" in nccl.lower() or
                                 "timed out" in nccl.lower()):
            line = nccl
    if line is not None:
        return telemetry_pb2.RUN_OUTCOME_COLLECTIVE_TIMEOUT, f"{how}: {line}"
    line = _find_line(lines, _HARDWARE)
    if line is not None:
        return telemetry_pb2.RUN_OUTCOME_HARDWARE_ERROR, f"{how}: {line}"
    if not timed_out and term_signal == signal.SIGTERM:
        return telemetry_pb2.RUN_OUTCOME_PREEMPTED, how
    line = _find_line(lines, _ERROR)
    return (telemetry_pb2.RUN_OUTCOME_FAILED,
            how if line is None else f"{how}: {line}")


class Preempted(BaseException):
    """Raised in the main thread when SIGTERM arrives inside a RunRecorder
    block: the run is recorded as PREEMPTED, as placement-agent records a
    command that SIGTERM ended."""


def _raise_preempted(signum, frame):
    raise Preempted()


def classify_exception(exc):
    """(RunOutcome, reason) for an exception that ended a training loop, by
    the rules placement-agent applies to a command's output
    (classify_attempt)."""
    if isinstance(exc, (Preempted, KeyboardInterrupt)):
        return telemetry_pb2.RUN_OUTCOME_PREEMPTED, (
            "interrupted" if isinstance(exc, KeyboardInterrupt)
            else "killed by signal 15")
    text = f"{type(exc).__name__}: {exc}"
    outcome, _ = classify_attempt(text, exit_code=1)
    # Printable ASCII, one line, bounded: the service keeps 4096 characters.
    reason = "".join(c if " " <= c <= "~" else "?" for c in text)[:300]
    return outcome, reason


def _enum_value(enum_type, value):
    """An enum value from a number, its full name, or its short name
    ("lora", "bf16", "paged-adamw-8bit")."""
    if isinstance(value, int):
        return value
    names = enum_type.keys()
    if value in names:
        return enum_type.Value(value)
    prefix = names[0][:-len("UNSPECIFIED")]
    full = prefix + value.upper().replace("-", "_")
    if full in names:
        return enum_type.Value(full)
    raise ValueError(f"{value!r} is not one of {', '.join(names[1:])}")


def make_recipe(recipe):
    """A Recipe from a Recipe, or a dict with proto field names (enum values
    may be short: method="lora")."""
    if isinstance(recipe, recipe_pb2.Recipe):
        return recipe
    fields = dict(recipe)
    # Every enum field of Recipe takes short names (loss_implementation=
    # "chunked-cross-entropy", sequence_packing="padded-per-batch", ...).
    for field in recipe_pb2.Recipe.DESCRIPTOR.fields:
        if field.enum_type is not None and field.name in fields:
            fields[field.name] = _enum_value(
                enum_type_wrapper.EnumTypeWrapper(field.enum_type),
                fields[field.name])
    return json_format.ParseDict(fields, recipe_pb2.Recipe())


def _now_proto():
    t = timestamp_pb2.Timestamp()
    micros = time.time_ns() // 1000
    t.seconds, t.nanos = micros // 1_000_000, (micros % 1_000_000) * 1000
    return t


def _percentile(values, p):
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(p / 100 * len(ordered))))
    return ordered[rank - 1]


def _choose_peak(allocated, reserved, reserved_measured, report_peak):
    """(peak GB, PeakMemoryKind) of a run: the kind asked for when it was
    measured, else the largest measured (the reserve holds what is
    allocated, so it is the larger when both were read)."""
    measured = [(allocated, recipe_pb2.PEAK_MEMORY_KIND_ALLOCATED)]
    if reserved_measured:
        measured.insert(0, (reserved, recipe_pb2.PEAK_MEMORY_KIND_RESERVED))
    for gb, kind in measured:
        if kind == report_peak and gb > 0:
            return gb, kind
    return max(measured, key=lambda m: m[0])


def _torch_memory_gb():
    """(allocated, reserved) peaks from PyTorch when it is importable and a
    GPU is there, else (None, None)."""
    try:
        import torch  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None, None
    try:
        if not torch.cuda.is_available():
            return None, None
        return (torch.cuda.max_memory_allocated() / 1e9,
                torch.cuda.max_memory_reserved() / 1e9)
    except Exception:  # a broken CUDA setup must not stop the training loop
        return None, None


def _detect_sku():
    """The node's exact SKU from `placement-agent detect --json`
    ($PLACEMENT_AGENT or on PATH), else None."""
    agent = os.environ.get("PLACEMENT_AGENT") or shutil.which("placement-agent")
    if not agent:
        return None
    try:
        out = subprocess.run([agent, "--json", "detect"], capture_output=True,
                             text=True, timeout=60)
        detection = json.loads(out.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return detection.get("sku") if detection.get("named") else None


class RunRecorder:
    """Records one benchmark run of a training loop.

        with RunRecorder(server, pool="l40s-adapters", sku="L40S-PCIE-48GB",
                         recipe={"model": "Llama-3.1-8B", "method": "lora",
                                 ...}) as rec:
            for ...:
                rec.step(step_time_s=dt, tokens=n, loss=loss)

    The run id is chosen and spooled on entry. Every step is appended to the
    spool before it is streamed (every `stream_interval` seconds, in the
    background). On exit the summary is built once, spooled, and uploaded with
    the samples, retrying UNAVAILABLE with jittered backoff; what cannot be
    uploaded stays spooled for the next recorder or `flush`. An exception
    leaving the block is recorded (OUT_OF_MEMORY, COLLECTIVE_TIMEOUT, ...)
    and re-raised; upload trouble never raises. `restart(reason)` counts a
    retry of the job inside the same run. `checkpoint(step)` says a saved
    checkpoint holds the run's steps before `step`: those count as succeeded
    even when the run fails, and a restart() resumes after them.

    sku: the exact catalog SKU (else $PLACEMENT_SKU, else placement-agent
    detect); a name the catalog does not hold exactly is a ValueError.
    Memory: pass memory_allocated_gb (and memory_reserved_gb) to step(), or
    let PyTorch's max_memory_allocated() and max_memory_reserved() be read
    when torch is importable. With neither, the run cannot be evidence: a
    RuntimeWarning says so at the first step, and on exit it is not
    recorded and its spooled samples are removed. The run uploads both
    peaks (peak_memory_allocated_gb, peak_memory_reserved_gb; a reserve
    never measured is 0) and reports as peak_memory_gb the kind
    report_peak names ("allocated" or "reserved") when it was measured,
    else the largest measured; peak_memory_kind and the recipe's
    reported_peak say which.

    uploaded: True once the service acknowledged the run; False when it is
    still spooled, or was refused (moved to the spool's rejected/).
    """

    def __init__(self, server=None, *, pool, recipe, sku=None, plan_id="",
                 team="", agent_id=None, offload="none", interconnect=None,
                 exclusive=True, spool_dir=None, token=None, ca_file=None,
                 stream_interval=2.0, upload_attempts=6, backoff_initial=0.25,
                 report_peak=None):
        self.connection = Connection(server, token=token, ca_file=ca_file,
                                     attempts=upload_attempts,
                                     backoff_initial=backoff_initial)
        self.pool = pool
        self.recipe = make_recipe(recipe)
        if self.recipe.gpu_count < 1:
            self.recipe.gpu_count = 1
        self.sku = sku or os.environ.get("PLACEMENT_SKU") or _detect_sku()
        if not self.sku:
            raise ValueError(
                "the node's SKU is unknown: pass sku= with its exact catalog "
                "name (e.g. 'A100-SXM4-80GB'); it is never guessed")
        self.plan_id = plan_id
        self.team = team
        self.agent_id = agent_id or f"placement_client@{socket.gethostname()}"
        self.offload = _enum_value(telemetry_pb2.Offload, offload)
        self.collectives_opened = (
            self.recipe.gpu_count > 1 and
            self.recipe.parallelism != recipe_pb2.PARALLELISM_SINGLE)
        if self.collectives_opened and not interconnect:
            raise ValueError(
                f"a {self.recipe.gpu_count}-GPU run opens collectives: pass "
                f"interconnect='nvlink', 'pcie' or 'host-memory'")
        self.interconnect = (
            _enum_value(telemetry_pb2.Interconnect, interconnect)
            if self.collectives_opened else telemetry_pb2.INTERCONNECT_NONE)
        self.exclusive = exclusive
        self.report_peak = (
            _enum_value(recipe_pb2.PeakMemoryKind, report_peak)
            if report_peak else recipe_pb2.PEAK_MEMORY_KIND_UNSPECIFIED)
        self._reserved_measured = False
        self.spool_dir = spool_lib.spool_dir_or_default(spool_dir)
        self.stream_interval = stream_interval
        self.card_memory_gb = 0.0
        self.run_id = str(uuid.uuid4())
        self.summary = None
        self.uploaded = False
        self._samples = []
        # [start, end, steps, outcome, reason, steps kept when it began]
        self._attempts = []
        self._kept = 0  # the largest checkpoint(step)
        self._record_offload = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self._spool = None
        self._warned_no_memory = False

    # -- recording --------------------------------------------------------

    def __enter__(self):
        self._check_sku()
        self._spool = spool_lib.SpoolRun(self.spool_dir, self.run_id,
                                         create=True)
        self._attempts.append([time.time(), None, 0, None, "", 0])
        self._thread = threading.Thread(target=self._stream, daemon=True,
                                        name="placement-run-recorder")
        self._thread.start()
        # SIGTERM (a preemption, as the agent counts it) ends the block with
        # Preempted rather than killing the process unrecorded; only where
        # nobody handles SIGTERM already, and only from the main thread.
        self._previous_sigterm = None
        if (threading.current_thread() is threading.main_thread() and
                signal.getsignal(signal.SIGTERM) == signal.SIG_DFL):
            self._previous_sigterm = signal.signal(signal.SIGTERM,
                                                   _raise_preempted)
        return self

    def step(self, step_time_s, tokens=0, memory_allocated_gb=None,
             memory_reserved_gb=None, loss=None, offload=None):
        """Records one step (step_time_s > 0). Memory defaults to PyTorch's
        peaks when torch is importable."""
        if not step_time_s > 0:
            raise ValueError("step_time_s must be positive")
        if memory_allocated_gb is None:
            allocated, reserved = _torch_memory_gb()
            memory_allocated_gb = allocated
            if memory_reserved_gb is None:
                memory_reserved_gb = reserved
            if allocated is None and not self._warned_no_memory:
                # A run without a memory figure cannot be evidence: say so
                # while the loop runs, not only when it ends.
                self._warned_no_memory = True
                warnings.warn(
                    f"placement_client: run {self.run_id} measures no memory "
                    f"(PyTorch with a GPU is not available and step() got no "
                    f"memory_allocated_gb): it will not be recorded",
                    RuntimeWarning, stacklevel=2)
        allocated = float(memory_allocated_gb or 0.0)
        reserved = float(memory_reserved_gb if memory_reserved_gb is not None
                         else allocated)
        with self._lock:
            if memory_reserved_gb is not None:
                self._reserved_measured = True
            sample = telemetry_pb2.StepSample(
                step=len(self._samples), time=_now_proto(),
                step_time_seconds=float(step_time_s),
                memory_allocated_gb=allocated, memory_reserved_gb=reserved,
                tokens=int(tokens))
            if loss is not None:
                sample.loss = float(loss)
            if offload:
                self._record_offload = _enum_value(telemetry_pb2.Offload, offload)
            self._spool.append_samples([sample])
            self._samples.append(sample)
            self._attempts[-1][2] += 1

    def checkpoint(self, step):
        """A checkpoint now holds every step of the run before `step` (the
        loop's own step count, from 0 at the run's first step), so a restart
        resumes at `step`: in a failed run they count as succeeded
        (steps_succeeded), never more than the steps recorded. A smaller
        `step` than an earlier one is ignored (the largest is kept)."""
        if isinstance(step, bool) or not isinstance(step, int):
            raise TypeError("step must be an int")
        if step < 0:
            raise ValueError("step must not be negative")
        with self._lock:
            self._kept = max(self._kept, step)

    def restart(self, reason):
        """The job failed and restarts within this run (a retry): `reason`
        is an exception or text."""
        if isinstance(reason, BaseException):
            outcome, text = classify_exception(reason)
        else:
            outcome, text = classify_exception(RuntimeError(str(reason)))
        with self._lock:
            self._attempts[-1][1:5] = [time.time(), self._attempts[-1][2],
                                       outcome, text]
            # It resumes from the latest checkpoint.
            self._attempts.append([time.time(), None, 0, None, "", self._kept])

    def __exit__(self, exc_type, exc, tb):
        if self._previous_sigterm is not None:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
        if exc is None:
            outcome, reason = telemetry_pb2.RUN_OUTCOME_SUCCEEDED, ""
        else:
            outcome, reason = classify_exception(exc)
        self._stop.set()
        self._thread.join(timeout=60)
        with self._lock:
            self._attempts[-1][1:5] = [time.time(), self._attempts[-1][2],
                                       outcome, reason]
        try:
            self.summary = self._build_summary()
        except ValueError as e:
            print(f"placement_client: run {self.run_id} not recorded: {e}",
                  file=sys.stderr)
            # Without a summary the run can never be uploaded: its samples
            # must not stay for every later recorder to re-send.
            self._spool.remove()
            return False
        self._spool.write_run(self.summary)
        self._spool.close()
        try:
            report = spool_lib.flush_spool(self.connection, self.spool_dir)
            outcome = report["runs"].get(self.run_id)
            self.uploaded = outcome == "uploaded"
            if outcome == "rejected":
                print(f"placement_client: run {self.run_id} was refused by "
                      f"the service; kept in {self.spool_dir}/rejected",
                      file=sys.stderr)
            elif outcome == "kept":
                print(f"placement_client: run {self.run_id} was NOT "
                      f"uploaded: the service refused it for a reason that "
                      f"is not the run's (see above); kept in "
                      f"{self.spool_dir}: fix it, then flush",
                      file=sys.stderr)
            elif not self.uploaded:
                print(f"placement_client: run {self.run_id} is spooled in "
                      f"{self.spool_dir}; flush later", file=sys.stderr)
            self.flush_report = report
        except Exception:  # never let an upload problem end the script
            traceback.print_exc()
        if isinstance(exc, Preempted):
            # Recorded; now end as SIGTERM ends a process.
            os.kill(os.getpid(), signal.SIGTERM)
        return False  # an exception from the block propagates

    def close(self):
        self.connection.close()

    # -- internals --------------------------------------------------------

    def _check_sku(self):
        stub = catalog_pb2_grpc.CatalogServiceStub(self.connection.channel)
        try:
            sku = self.connection.call(
                stub.GetSku, catalog_pb2.GetSkuRequest(name=self.sku),
                timeout=5, retry=False).sku
        except grpc.RpcError as e:
            if e.code() in RETRYABLE:
                return  # the service decides at upload; the spool waits
            raise ValueError(f"sku {self.sku!r}: {e.details()}") from None
        if sku.name != self.sku:
            raise ValueError(f"sku {self.sku!r} is not an exact catalog name; "
                             f"did you mean {sku.name!r}?")
        self.card_memory_gb = sku.memory_gb

    def _stream(self):
        failures = 0
        committed = -1
        while not self._stop.wait(
                self.stream_interval if failures == 0
                else min(60.0, self.connection.delay(failures))):
            with self._lock:
                samples = list(self._samples)
            if len(samples) <= committed + 1:
                continue
            try:
                committed = spool_lib.sync_samples(
                    self.connection, self.run_id, samples, retry=False,
                    team=self.team)
                failures = 0
            except grpc.RpcError:
                failures += 1

    def _retry_outcomes(self):
        """Why each retried attempt failed; none when one names no failure."""
        outcomes = [a[3] for a in self._attempts[:-1]]
        bad = (None, telemetry_pb2.RUN_OUTCOME_UNSPECIFIED,
               telemetry_pb2.RUN_OUTCOME_SUCCEEDED)
        return [] if any(o in bad for o in outcomes) else outcomes

    def _steps_kept(self):
        """steps_succeeded, as placement-agent counts it: the last attempt
        succeeded: its steps plus the checkpoint it resumed from; it did not:
        the latest checkpoint's steps. Never more than the steps recorded."""
        last = self._attempts[-1]
        if last[3] == telemetry_pb2.RUN_OUTCOME_SUCCEEDED:
            kept = last[5] + last[2]
        else:
            kept = self._kept
        return min(kept, len(self._samples))

    def _build_summary(self):
        samples = self._samples
        if not samples:
            raise ValueError("no step was recorded")
        times = [s.step_time_seconds for s in samples]
        busy = sum(times)
        allocated = max(s.memory_allocated_gb for s in samples)
        # A step given no reserved figure stores its allocated one there;
        # only a measured reserve is reported as one.
        reserved = (max(s.memory_reserved_gb for s in samples)
                    if self._reserved_measured else 0.0)
        peak, kind = _choose_peak(allocated, reserved, self._reserved_measured,
                                  self.report_peak)
        last = self._attempts[-1]
        if peak <= 0 and last[3] == telemetry_pb2.RUN_OUTCOME_OUT_OF_MEMORY:
            # The job needed at least the card.
            peak, kind = self.card_memory_gb, recipe_pb2.PEAK_MEMORY_KIND_DEVICE_USED
        if peak <= 0:
            raise ValueError("no memory was measured: pass memory_allocated_gb "
                             "to step() (or run with PyTorch on a GPU)")
        recipe = recipe_pb2.Recipe()
        recipe.CopyFrom(self.recipe)
        recipe.reported_peak = kind
        run = telemetry_pb2.BenchmarkRun(
            run_id=self.run_id, agent_id=self.agent_id, pool=self.pool,
            sku=self.sku, node_names=[socket.gethostname()],
            gpu_count=self.recipe.gpu_count, recipe=recipe,
            steps_attempted=len(samples),
            steps_succeeded=self._steps_kept(),
            step_time_mean_seconds=busy / len(times),
            step_time_p50_seconds=_percentile(times, 50),
            step_time_p95_seconds=_percentile(times, 95),
            tokens_per_second=sum(s.tokens for s in samples) / busy,
            peak_memory_gb=peak, peak_memory_kind=kind,
            peak_memory_allocated_gb=allocated,
            peak_memory_reserved_gb=reserved,
            offload=self._record_offload or self.offload,
            interconnect=self.interconnect,
            collectives_opened=self.collectives_opened,
            retries=len(self._attempts) - 1,
            retry_outcomes=self._retry_outcomes(), outcome=last[3],
            failure_reason="; ".join(
                f"attempt {i + 1}: "
                f"{telemetry_pb2.RunOutcome.Name(a[3])[len('RUN_OUTCOME_'):]}"
                f" ({a[4]})"
                for i, a in enumerate(self._attempts)
                if a[3] != telemetry_pb2.RUN_OUTCOME_SUCCEEDED)[:4096],
            exclusive=self.exclusive, plan_id=self.plan_id, team=self.team)
        start, end = timestamp_pb2.Timestamp(), timestamp_pb2.Timestamp()
        start.FromNanoseconds(int(self._attempts[0][0] * 1e6) * 1000)
        end.FromNanoseconds(int(last[1] * 1e6) * 1000)
        run.start_time.CopyFrom(start)
        run.end_time.CopyFrom(end)
        return run
