"""A real ``export --watch`` process, and a busy hour's trail written as the hub writes it
(``hubwriter``): what the watch tests (tests/test_watch.py, tests/e2e/test_watch_e2e.py) share."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers import WorkspaceMaker, cli_command, run_record
from hubwriter import append, gzip_segment

from .holds import DEADLINE


class Watch:
    """A real ``export --watch`` process; what it writes is read as it comes."""

    def __init__(
        self, root: Path, env: dict[str, str], *extra: str, stdin: int | None = None
    ) -> None:
        command = cli_command("export", "-w", str(root), "--watch", *extra)
        self.proc = subprocess.Popen(
            command, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.err: list[str] = []
        self.times: list[float] = []
        """When each line of ``err`` was read (``time.monotonic()``)."""
        self.out = bytearray()
        self._changed = threading.Condition()
        self._readers = [
            threading.Thread(target=self._read_err, daemon=True),
            threading.Thread(target=self._read_out, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._changed:
                self.err.append(line.decode())
                self.times.append(time.monotonic())
                self._changed.notify_all()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        while chunk := self.proc.stdout.read1(65536):
            with self._changed:
                self.out += chunk
                self._changed.notify_all()

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The JSON objects it wrote on stderr (``--progress json``), of one kind or all."""
        with self._changed:
            lines = list(self.err)
        found = [json.loads(line) for line in lines if line.startswith("{")]
        return [e for e in found if kind is None or e["event"] == kind]

    def sent(self) -> list[dict[str, Any]]:
        """Its ``run`` events of runs sent, in order."""
        return [e for e in self.events("run") if e["state"] == "sent"]

    def sent_at(self) -> dict[str, float]:
        """Trace id -> when the watch said it sent it (the last time it did)."""
        with self._changed:
            lines = list(zip(self.err, self.times, strict=True))
        said = {}
        for line, at in lines:
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("event") == "run" and event["state"] == "sent":
                said[event["traceId"]] = at
        return said

    def wait(self, condition: Callable[[], bool], what: str) -> None:
        """Until ``condition()`` holds (it is looked at whenever the process writes, and at
        least every 0.1 s); fails naming ``what`` and what the watch said."""
        deadline = time.monotonic() + DEADLINE
        with self._changed:
            while not condition():
                if self.proc.poll() is not None and not any(r.is_alive() for r in self._readers):
                    if condition():
                        return
                    raise AssertionError(f"the watch ended before {what}: {''.join(self.err)}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"waited {DEADLINE:.0f} s for {what}; the watch said: {''.join(self.err)}"
                    )
                self._changed.wait(min(left, 0.1))

    def stop(self, sig: signal.Signals = signal.SIGINT) -> int:
        """Send ``sig``; its exit code once it ended."""
        self.proc.send_signal(sig)
        code = self.proc.wait(DEADLINE)
        for reader in self._readers:
            reader.join(DEADLINE)
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(DEADLINE)


def pipeline_run(event: dict[str, Any]) -> str:
    parent = event["run"]["facets"].get("parent")
    return str(parent["run"]["runId"] if parent else event["run"]["runId"])


def write_runs_through_a_rotation_and_an_outage(
    ws: WorkspaceMaker,
    trace_ids: list[str],
    *,
    pace: float,
    rotate_at: int,
    outage: range,
    go_away: Callable[[], object],
    outage_said: Callable[[], object],
    come_back: Callable[[], object],
) -> dict[str, float]:
    """The trail an editor's busy hour writes, one run each ``pace`` seconds into the audit
    folder's ``000001.jsonl``: each run's ``running`` record, then its end (one in seven
    failed). At ``rotate_at`` a new segment ``000002.jsonl`` starts and the old one is
    gzipped; before the first run of ``outage`` is ended the server goes (``go_away()``), and
    it comes back (``come_back()``) after the last, once ``outage_said()`` has returned (the
    watch was seen to say so). Returns when each run's end was written
    (``time.monotonic()``)."""
    segment = ws.audit / "000001.jsonl"
    written: dict[str, float] = {}
    for n, trace_id in enumerate(trace_ids):
        if n == rotate_at:
            old, segment = segment, ws.audit / "000002.jsonl"
            append(segment, run_record(trace_id, status="running"))
            gzip_segment(old)
        else:
            append(segment, run_record(trace_id, status="running"))
        if n == outage.start:
            go_away()
        append(segment, run_record(trace_id, status="failed" if n % 7 == 3 else "succeeded"))
        written[trace_id] = time.monotonic()
        if n == outage.stop - 1:
            outage_said()
            come_back()
        time.sleep(pace)  # the pace of the trail, not a premise: each run is awaited
    return written
