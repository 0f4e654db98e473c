"""Python client of the placement service for training loops.

    from placement_client import RunRecorder

    with RunRecorder("127.0.0.1:50051", pool="l40s-adapters",
                     sku="L40S-PCIE-48GB", recipe=recipe) as rec:
        for batch in data:
            ...
            rec.step(step_time_s=dt, tokens=n)

Every sample and the run summary are first appended to a local spool (the
same layout placement-agent uses, docs/AGENT.md), then streamed and uploaded;
what the service did not acknowledge stays spooled and is uploaded by the
next recorder, by ``python3 -m placement_client flush`` or by
``placement-agent flush``. Needs the generated stubs (``placement.v1``) on
``sys.path``.
"""

from placement_client.recorder import (Preempted, RunRecorder,
                                       classify_attempt, classify_exception)
from placement_client.spool import default_spool_dir, flush_spool, list_spooled_runs
from placement_client.connection import Connection

__all__ = [
    "RunRecorder",
    "Connection",
    "Preempted",
    "classify_attempt",
    "classify_exception",
    "flush_spool",
    "list_spooled_runs",
    "default_spool_dir",
]
