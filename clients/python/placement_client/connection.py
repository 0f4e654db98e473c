"""How the client reaches placementd: TLS when a CA file is given, a bearer
token on every call when one is configured, and jittered exponential backoff
on the status codes that mean "try again"."""

import os
import random
import time

import grpc

RETRYABLE = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.ABORTED,
)


def default_server():
    return os.environ.get("PLACEMENT_SERVER") or "127.0.0.1:50051"


def resolve_token(token=None):
    """The token: `token`, else $PLACEMENT_TOKEN, else the file named by
    $PLACEMENT_TOKEN_FILE, else ~/.config/placement/token if it exists
    (the order placement-agent uses); None for no token."""
    if token:
        return token.strip()
    if os.environ.get("PLACEMENT_TOKEN"):
        return os.environ["PLACEMENT_TOKEN"].strip()
    path = os.environ.get("PLACEMENT_TOKEN_FILE")
    if not path:
        home_file = os.path.expanduser("~/.config/placement/token")
        path = home_file if os.path.exists(home_file) else None
    if path:
        with open(path) as f:
            return f.read().strip()
    return None


class Connection:
    """A channel plus the call metadata and the retry policy."""

    def __init__(self, server=None, token=None, ca_file=None, attempts=6,
                 backoff_initial=0.25, backoff_max=10.0):
        self.server = server or default_server()
        self.token = resolve_token(token)
        if ca_file:
            with open(ca_file, "rb") as f:
                credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
            self.channel = grpc.secure_channel(self.server, credentials)
        else:
            self.channel = grpc.insecure_channel(self.server)
        self.attempts = max(1, attempts)
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max

    @property
    def metadata(self):
        return (("authorization", "Bearer " + self.token),) if self.token else ()

    def delay(self, retry):
        """Seconds before retry number `retry` (0-based): uniformly random in
        [d/2, d], d = min(max, initial * 2**retry)."""
        d = min(self.backoff_max, self.backoff_initial * (2 ** retry))
        return random.uniform(d / 2, d)

    def call(self, method, request, timeout=15, retry=True):
        """`method(request)` with deadline and metadata, retried on
        retryable codes when `retry`."""
        attempts = self.attempts if retry else 1
        for i in range(attempts):
            if i > 0:
                time.sleep(self.delay(i - 1))
            try:
                return method(request, timeout=timeout, metadata=self.metadata)
            except grpc.RpcError as e:
                if e.code() not in RETRYABLE or i == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def close(self):
        self.channel.close()
