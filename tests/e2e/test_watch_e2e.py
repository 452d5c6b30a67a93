"""``export --watch`` into the real Marquez: 50 runs appended over a minute, a rotation (a new
segment, the old one gzipped) and Marquez restarted in the middle (its JVM stopped by SIGTERM
while runs end, then started again by scripts/marquez.sh); every run ends up in Marquez exactly
once, each of its events passed to Marquez once. A proxy in front of it (``faultproxy``)
counts what passed, and refuses connections while Marquez is away, as its port does (a
proxy answering 502 instead, as a load balancer would, is docs/known-limits.md's).

The delay from a run's line to the watch saying Marquez accepted every event of it is
reported (``-s`` shows it), never asserted: it depends on the machine.
"""

from __future__ import annotations

import json
import signal
import statistics
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import MarquezProcess
from faultproxy import FaultProxy
from helpers import GRAPH, WorkspaceMaker, cli_env
from support.watch import Watch, pipeline_run, write_runs_through_a_rotation_and_an_outage

pytestmark = pytest.mark.e2e

RUNS = 50
PACE = 60.0 / RUNS
"""Seconds between two runs written: 50 over a minute, as an editor's busy hour would."""
ROTATE_AT = 20
OUTAGE = range(28, 36)
"""The runs ended while Marquez is stopped (it starts again after the last)."""
NAMESPACE = "watch-e2e"


def test_watch_sends_every_run_once_through_a_rotation_and_a_server_restart(
    marquez: Any, tmp_path: Path
) -> None:
    ws = WorkspaceMaker(tmp_path / "ws")
    ws.graph({**GRAPH, "workspace": {"name": NAMESPACE}})
    trace_ids = [str(uuid.uuid4()) for _ in range(RUNS)]  # a UUID trace id is the run id
    marquez_process = MarquezProcess()
    with FaultProxy(str(marquez.url), seed=3300) as proxy:
        ws.settings({"openlineage.url": proxy.url, "openlineage.retry.maxTime": 2})
        ws.segment("000001.jsonl", [])
        watch = Watch(ws.root, cli_env(tmp_path), "--progress", "json")
        try:
            watch.wait(lambda: bool(watch.events("watching")), "the watch to follow the trail")
            written = write_runs_through_a_rotation_and_an_outage(
                ws,
                trace_ids,
                pace=PACE,
                rotate_at=ROTATE_AT,
                outage=OUTAGE,
                go_away=lambda: (proxy.go_away("refuse"), marquez_process.stop()),
                outage_said=lambda: watch.wait(
                    lambda: bool(watch.events("outage")), "the outage to be said"
                ),
                come_back=lambda: (marquez_process.start(), proxy.come_back()),
            )
            watch.wait(
                lambda: {e["traceId"] for e in watch.sent()} >= set(trace_ids),
                "every run sent",
            )
            assert watch.stop(signal.SIGTERM) == 143
        finally:
            watch.close()
            if marquez_process.stopped:  # the tests after this one need it
                marquez_process.start()
        passed = Counter(pipeline_run(json.loads(p.body)) for p in proxy.passed if p.status < 300)

    # Each run sent once (its final record: the running ones were never sent), its events
    # passed to Marquez once each, and said once as it and back.
    sent = watch.sent()
    assert sorted(e["traceId"] for e in sent) == sorted(trace_ids)
    assert passed == Counter({e["runId"]: e["events"] for e in sent})
    assert [e["event"] for e in watch.events() if e["event"] in ("outage", "back")] == [
        "outage",
        "back",
    ]
    # Marquez holds every run exactly once, in its final state.
    runs = marquez.runs(NAMESPACE, "daily-sales")
    ids = Counter(run["id"] for run in runs)
    assert set(ids) == set(trace_ids) and set(ids.values()) == {1}
    assert {run["state"] for run in runs} == {"COMPLETED", "FAILED"}

    said_at = watch.sent_at()
    delays = [said_at[t] - written[t] for t in trace_ids if t in said_at]
    around = [said_at[t] - written[t] for n, t in enumerate(trace_ids) if n not in OUTAGE]
    print(
        f"\nwatch -> Marquez, from the line written to every event accepted: "
        f"median {statistics.median(around):.2f} s, max {max(around):.2f} s over "
        f"{len(around)} runs outside the outage; {max(delays):.1f} s at most for a run "
        "written during it"
    )
