"""Ctrl-C or SIGTERM during an export: it stops soon, says what it did, keeps what was
accepted, and the next export sends exactly the rest.

A real ``openlineage-export export`` process sends to a slow server on loopback (each answer
after 50 ms) and gets SIGINT (Ctrl-C) or SIGTERM (docker stop, Kubernetes, systemd, CI runners)
while runs are in flight.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from synth_trail import write_workspace

from openlineage_export.export import ExportRequest, run_export

STOPS_WITHIN = 15.0
"""Seconds from Ctrl-C to exit that count as "did not hang" (it takes a second or less here)."""


class SlowServer(ThreadingHTTPServer):
    """Accepts every event after ``delay`` seconds; keeps the bodies in arrival order."""

    daemon_threads = True

    def __init__(self, delay: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay = delay
        self.bodies: list[bytes] = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def count(self) -> int:
        with self.lock:
            return len(self.bodies)

    def taken(self) -> list[bytes]:
        with self.lock:
            taken, self.bodies = self.bodies, []
        return taken


class _Handler(BaseHTTPRequestHandler):
    server: SlowServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(self.server.delay)
        with self.server.lock:
            self.server.bodies.append(body)  # accepted: answered 201 right after
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def slow_server() -> Iterator[SlowServer]:
    server = SlowServer(delay=0.05)
    yield server
    server.shutdown()
    server.server_close()


def pipeline_run(event: dict[str, Any]) -> str:
    parent = event["run"]["facets"].get("parent")
    return str(parent["run"]["runId"] if parent else event["run"]["runId"])


def by_run(lines: list[bytes]) -> dict[str, list[bytes]]:
    """Event lines grouped by pipeline run id, in order."""
    runs: dict[str, list[bytes]] = defaultdict(list)
    for line in lines:
        runs[pipeline_run(json.loads(line))].append(line)
    return dict(runs)


def delivered(state: Path) -> dict[str, int]:
    """Run id -> events, of the runs the ledger holds as delivered."""
    with sqlite3.connect(f"file:{state / 'ledger.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT run_id, state, events FROM runs").fetchall()
    assert {row[1] for row in rows} <= {"delivered"}, "an interrupted run was recorded as failed"
    return {run_id: events for run_id, _, events in rows}


@pytest.mark.parametrize(("stop", "code", "name"), [(signal.SIGINT, 130, "Ctrl-C"),
                                                    (signal.SIGTERM, 143, "SIGTERM")])
def test_a_stop_signal_stops_soon_keeps_what_was_accepted_and_the_next_export_sends_the_rest(
        slow_server: SlowServer, tmp_path: Path, stop: signal.Signals, code: int,
        name: str) -> None:
    root = tmp_path / "ws"
    write_workspace(root, 60, seed=4711)
    # A fifth of the events accepted must include whole runs: fewer runs in flight than the
    # 60 of the trail (at 32, all of them advance together and none is whole that early).
    settings = root / ".workspace" / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()),
                                    "openlineage.concurrency": 16}))
    dry = io.BytesIO()
    assert run_export(ExportRequest(root, dry_run=True, output=dry)).exit_code == 0
    expected = by_run(dry.getvalue().splitlines())
    total = sum(len(events) for events in expected.values())
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    env.update({"OPENLINEAGE_URL": slow_server.url,
                "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state")})
    command = [sys.executable, "-m", "openlineage_export", "export", "-w", str(root)]

    export = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        deadline = time.monotonic() + 120
        while slow_server.count() < total // 5 and time.monotonic() < deadline:
            assert export.poll() is None, export.communicate()
            time.sleep(0.01)
        interrupted_at = time.monotonic()
        export.send_signal(stop)
        _, err = export.communicate(timeout=120)
    finally:
        if export.poll() is None:
            export.kill()
    stopped_after = time.monotonic() - interrupted_at
    assert export.returncode == code, err
    assert stopped_after < STOPS_WITHIN, f"took {stopped_after:.1f} s to stop after {name}"
    assert "Traceback" not in err
    assert f"interrupting ({name}): finishing the requests in flight" in err
    assert f"interrupted ({name}): what was accepted is kept; run the export again to finish" in err
    summary = [line for line in err.splitlines() if line.startswith("exported to ")]
    assert len(summary) == 1, err
    time.sleep(0.3)
    first = slow_server.taken()
    assert first and len(first) < total, "the export was not cut short"

    # What the ledger keeps is exactly what was accepted: every event of each of those runs.
    kept = delivered(tmp_path / "state")
    assert kept, "nothing was kept"
    assert f"{len(kept)} of {len(expected)} runs sent" in summary[0]
    received = by_run(first)
    for run_id, events in kept.items():
        assert received[run_id] == expected[run_id] and events == len(expected[run_id])

    # The next export sends exactly the rest: each run not kept, whole and once; none kept.
    slow_server.delay = 0
    again = subprocess.run([*command, "--json"], env=env, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["runs"] == {"total": len(expected), "sent": len(expected) - len(kept),
                              "unchanged": len(kept), "failed": 0}
    rest = by_run(slow_server.taken())
    assert set(rest) == set(expected) - set(kept)
    assert all(rest[run_id] == expected[run_id] for run_id in rest)
    assert set(delivered(tmp_path / "state")) == set(expected)
