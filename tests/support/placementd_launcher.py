"""A real placementd for Python tests, on its own fresh database.

The database is created on the throwaway PostgreSQL server named by
PLACEMENT_TEST_DATABASE_URL (scripts/test sets it) and dropped by stop(), so
a test using this runs in parallel with the others. PLACEMENTD names the
placementd binary.
"""

import ctypes
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.parse

import grpc

from health.v1 import health_pb2
from health.v1 import health_pb2_grpc

STARTUP_TIMEOUT_S = 30
SHUTDOWN_TIMEOUT_S = 15


def psql(url, sql):
    """Runs `sql` on `url`; returns what it printed, unaligned."""
    out = subprocess.run(
        ["psql", url, "-v", "ON_ERROR_STOP=1", "-qAtX", "-c", sql],
        check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        timeout=60, text=True)
    return out.stdout.strip()


def _database_url(admin_url, database):
    parts = urllib.parse.urlsplit(admin_url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + database))


def _die_with_parent():
    # If the test is killed (e.g. a ctest timeout), placementd gets SIGTERM
    # rather than outliving it.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    except OSError:
        pass


class Placementd:
    """placementd on loopback, SERVING once start() returns.

    With `auth`, an admin token is made the way an operator makes it
    (`placementd tokens create`) and left in `token`; without, placementd
    runs with --auth=false. With `console`, the web console listens on a
    free port too (`console_port`). `extra_flags` are passed to the server
    as they are.
    """

    def __init__(self, name, auth, console=False, extra_flags=()):
        self.name = name
        self.auth = auth
        self.console = console
        self.extra_flags = list(extra_flags)
        self.console_port = 0
        self.proc = None
        self.database = None
        self.channel = None
        self.token = None
        self.tmpdir = tempfile.mkdtemp(prefix=f"placement-{name}-")
        self.log_path = os.path.join(self.tmpdir, "placementd.log")

    def start(self):
        """Starts it, or cleans up and raises AssertionError saying why."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self):
        self.admin_url = os.environ.get("PLACEMENT_TEST_DATABASE_URL", "")
        if not self.admin_url:
            raise AssertionError(
                "PLACEMENT_TEST_DATABASE_URL is not set: it must hold the "
                "admin URL of a throwaway PostgreSQL server (scripts/test sets "
                "it; by hand: scripts/pg create DIR && scripts/pg start DIR)")
        binary = os.environ.get("PLACEMENTD", "")
        if not binary or not os.access(binary, os.X_OK):
            raise AssertionError(
                f"PLACEMENTD must name the placementd binary (got {binary!r})")

        self.database = f"{self.name}_{secrets.token_hex(8)}"
        psql(self.admin_url, f"CREATE DATABASE {self.database}")
        self.db_url = _database_url(self.admin_url, self.database)
        migrate = subprocess.run(
            [binary, "migrate", "up", "--database_url", self.db_url],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=60)
        if migrate.returncode != 0:
            raise AssertionError(
                f"placementd migrate up exited {migrate.returncode}:\n"
                f"{migrate.stdout}")

        flags = []
        if self.auth:
            token = subprocess.run(
                [binary, "tokens", "create", "--role", "admin",
                 "--name", f"{self.name}-test", "--database_url", self.db_url],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                timeout=60)
            if token.returncode != 0:
                raise AssertionError(f"tokens create failed: {token.stderr}")
            self.token = token.stdout.strip()
        else:
            flags.append("--auth=false")

        if self.console:
            flags += ["--console_listen", "127.0.0.1:0"]
        flags += self.extra_flags
        port_file = os.path.join(self.tmpdir, "ports")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [binary, "--database_url", self.db_url,
                 "--listen", "127.0.0.1:0", "--metrics_listen", "127.0.0.1:0",
                 "--port_file", port_file] + flags,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                preexec_fn=_die_with_parent)

        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        ports = []
        # The file is written whole once both ports listen.
        while len(ports) < 2:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"placementd exited {self.proc.returncode} before "
                    f"listening:\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no port file after {STARTUP_TIMEOUT_S}s:\n{self.log()}")
            time.sleep(0.05)
            try:
                with open(port_file) as f:
                    ports = [int(p) for p in f.read().split()]
            except (OSError, ValueError):
                ports = []
        self.port, self.metrics_port = ports[:2]
        if len(ports) > 2:
            self.console_port = ports[2]
        self.server = f"127.0.0.1:{self.port}"
        self.channel = grpc.insecure_channel(self.server)

        health = health_pb2_grpc.HealthStub(self.channel)
        status = None
        while True:
            try:
                status = health.Check(health_pb2.HealthCheckRequest(),
                                      timeout=2).status
                if status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError as e:
                status = f"{e.code()}: {e.details()}"
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"health not SERVING after {STARTUP_TIMEOUT_S}s (last: "
                    f"{status}):\n{self.log()}")
            time.sleep(0.1)

    def log(self):
        """The end of placementd's output."""
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return "(no log)"

    def close_channel(self):
        if self.channel is not None:
            self.channel.close()
            self.channel = None

    def terminate(self):
        """SIGTERM; its exit code, or None if it outlived SHUTDOWN_TIMEOUT_S
        (then it is killed)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=SHUTDOWN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None

    def stop(self):
        """Stops placementd, drops its database, removes its files."""
        self.close_channel()
        if self.proc is not None and self.proc.poll() is None:
            self.terminate()
        if self.database is not None:
            try:
                psql(self.admin_url,
                     f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)")
            except (subprocess.SubprocessError, OSError) as e:
                print(f"could not drop database {self.database}: {e}")
            self.database = None
        shutil.rmtree(self.tmpdir, ignore_errors=True)
