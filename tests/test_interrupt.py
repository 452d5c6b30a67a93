"""Ctrl-C or SIGTERM during an export: it stops soon, says what it did, keeps what was
accepted, and the next export sends exactly the rest.

A real ``openlineage-export export`` process sends to a server on loopback that holds every
request once it has accepted every event of one run, and gets SIGINT (Ctrl-C) or SIGTERM
(docker stop, Kubernetes, systemd, CI runners) while those are in flight; they are answered
once the export said it is stopping.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import threading
from collections import defaultdict
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers import cli_command
from hubwriter.synth import write_workspace
from support.holds import DEADLINE, wait_until

from openlineage_export.export import ExportRequest, run_export


class HoldingServer(ThreadingHTTPServer):
    """Accepts every event (alone, or in the spec's batches), keeping the events in the order
    they were accepted. Once it has
    accepted every event of one pipeline run (``whole``: its events, by pipeline run id), the
    requests that come after wait until ``release`` is set."""

    daemon_threads = True
    request_queue_size = 128  # a real server's listen backlog (fakeserver.BACKLOG)

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.whole: dict[str, int] | None = None
        self.release = threading.Event()
        self.bodies: list[bytes] = []
        self.in_flight = 0
        self.held = 0
        self.lock = threading.Lock()
        self._accepted: dict[str, int] = defaultdict(int)
        self._a_run_is_whole = False
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
    server: HoldingServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        server = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with server.lock:
            server.in_flight += 1
            held = server.whole is not None and server._a_run_is_whole
            if held:
                server.held += 1
        try:
            if held:
                server.release.wait(300)
            batch = self.path.rstrip("/").endswith("/batch")  # the spec's: taken whole, 204
            events = [orjson.dumps(e) for e in orjson.loads(body)] if batch else [body]
            with server.lock:
                for event in events:
                    server.bodies.append(event)  # accepted: answered right after
                    if server.whole is not None:
                        run = pipeline_run(json.loads(event))
                        server._accepted[run] += 1
                        server._a_run_is_whole |= server._accepted[run] == server.whole[run]
            self.send_response(204 if batch else 201)
            self.send_header("Content-Length", "0")
            self.end_headers()
        finally:
            with server.lock:
                server.in_flight -= 1


@pytest.fixture
def slow_server() -> Iterator[HoldingServer]:
    server = HoldingServer()
    yield server
    server.release.set()
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


@pytest.mark.parametrize(
    ("stop", "code", "name"), [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")]
)
def test_a_stop_signal_stops_soon_keeps_what_was_accepted_and_the_next_export_sends_the_rest(
    slow_server: HoldingServer, tmp_path: Path, stop: signal.Signals, code: int, name: str
) -> None:
    root = tmp_path / "ws"
    write_workspace(root, 60, seed=4711)
    # Many runs in flight at once, fewer than the 60 of the trail.
    settings = root / ".workspace" / "settings.json"
    settings.write_text(
        json.dumps({**json.loads(settings.read_text()), "openlineage.concurrency": 16})
    )
    dry = io.BytesIO()
    assert run_export(ExportRequest(root, dry_run=True, output=dry)).exit_code == 0
    expected = by_run(dry.getvalue().splitlines())
    total = sum(len(events) for events in expected.values())
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    env.update(
        {
            "OPENLINEAGE_URL": slow_server.url,
            "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
        }
    )
    command = cli_command("export", "-w", str(root))

    slow_server.whole = {run: len(events) for run, events in expected.items()}
    export = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    said: list[str] = []
    try:
        # Held: a run accepted whole, the export waits for answers and cannot finish.
        wait_until(
            lambda: slow_server.held > 0 or export.poll() is not None,
            "the export to send past the first run accepted whole",
        )
        assert export.poll() is None, export.communicate()
        export.send_signal(stop)
        assert export.stderr is not None
        while not any(line.startswith(f"interrupting ({name}): ") for line in said):
            said.append(export.stderr.readline())
            assert said[-1], f"the export ended without saying what {name} does: {said}"
        slow_server.release.set()
        _, rest_of_err = export.communicate(timeout=DEADLINE)
    finally:
        slow_server.release.set()
        if export.poll() is None:
            export.kill()
            export.communicate()
    err = "".join(said) + rest_of_err
    assert export.returncode == code, err
    assert "Traceback" not in err
    assert f"interrupting ({name}): finishing the requests in flight" in err
    assert f"interrupted ({name}): what was accepted is kept; run the export again to finish" in err
    summary = [line for line in err.splitlines() if line.startswith("exported to ")]
    assert len(summary) == 1, err
    # Every request the export made was answered (or given up on) before it is counted.
    wait_until(lambda: slow_server.in_flight == 0, "the server to answer every request")
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
    slow_server.whole = None
    again = subprocess.run(
        [*command, "--json"], env=env, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["runs"] == {
        "total": len(expected),
        "sent": len(expected) - len(kept),
        "unchanged": len(kept),
        "held": 0,
        "failed": 0,
    }
    rest = by_run(slow_server.taken())
    assert set(rest) == set(expected) - set(kept)
    assert all(rest[run_id] == expected[run_id] for run_id in rest)
    assert set(delivered(tmp_path / "state")) == set(expected)


def _let_go(process: subprocess.Popen[bytes]) -> bool:
    """Whether ``process`` ended, or points its standard error at /dev/null (it found its
    terminal gone)."""
    try:
        return os.readlink(f"/proc/{process.pid}/fd/2") == os.devnull
    except OSError:
        return process.poll() is not None


def _on_a_terminal_of_its_own(
    command: list[str], env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], int]:
    """``command`` as the session leader of a new pseudo-terminal (its controlling terminal,
    as a shell's command in a terminal window or over ssh); returns it and the master side."""
    import fcntl
    import termios

    master, slave = os.openpty()

    def controlling_terminal() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        command,
        env={**env, "TERM": "xterm-256color"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=controlling_terminal,
    )
    os.close(slave)
    return proc, master


@pytest.mark.parametrize("how", ["terminal closed", "kill -HUP"])
def test_sighup_answers_the_requests_in_flight_keeps_the_ledger_and_exits_129(
    tmp_path: Path, how: str
) -> None:
    """The terminal closes (its window, or the ssh connection) while requests are in flight:
    the kernel sends SIGHUP, and every write to the terminal fails from then on. The requests
    in flight are answered and recorded all the same, the exit code is 129, and the next
    export sends exactly the rest. Once it has every event of one run, the server holds each
    request until the signal was taken."""
    from fakeserver import Answer, FakeServer, Recorded

    root = tmp_path / "ws"
    write_workspace(root, 40, seed=99)
    dry = io.BytesIO()
    assert run_export(ExportRequest(root, dry_run=True, output=dry)).exit_code == 0
    expected = by_run(dry.getvalue().splitlines())
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    env["OPENLINEAGE_EXPORT_STATE_DIR"] = str(tmp_path / "state")
    command = cli_command("export", "-w", str(root))
    release = threading.Event()
    holding = threading.Event()  # set once a request is held
    with FakeServer() as server:

        def answer(request: Recorded) -> Answer:
            """At once until one run has all its events in; from then on each is held."""
            before = by_run([r.body for r in server.requests if r is not request])
            if not any(len(events) == len(expected[run]) for run, events in before.items()):
                return Answer(201)
            holding.set()
            return Answer(201) if release.wait(120) else Answer(503)

        server.script(answer)
        env["OPENLINEAGE_URL"] = server.url
        err = ""
        if how == "terminal closed":
            export, master = _on_a_terminal_of_its_own(command, env)
        else:
            export = subprocess.Popen(
                command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        try:
            assert holding.wait(120), "the export never sent past its first run accepted whole"
            if how == "terminal closed":
                os.close(master)  # the kernel hangs up: SIGHUP, and EIO for every write
                # Observed: its first message failed, so it let go of the terminal.
                wait_until(lambda: _let_go(export), "the export to give up its terminal")
            else:
                export.send_signal(signal.SIGHUP)
                assert export.stderr is not None
                line = export.stderr.readline()
                assert line.startswith("interrupting (SIGHUP): finishing the requests in flight"), (
                    line
                )
            release.set()
            if how == "terminal closed":
                export.wait(timeout=120)
            else:
                _, err = export.communicate(timeout=120)
        finally:
            release.set()
            if export.poll() is None:
                export.kill()
        assert export.returncode == 129, err
        assert "Traceback" not in err
        if how == "kill -HUP":
            assert "interrupted (SIGHUP): what was accepted is kept; run the export again" in err
        received = by_run([r.body for r in server.requests])

        kept = delivered(tmp_path / "state")
        assert kept and len(kept) < len(expected), "the export was not cut short, or kept nothing"
        for run_id, events in kept.items():
            assert received[run_id] == expected[run_id] and events == len(expected[run_id])
        standing = subprocess.run(
            [*command[:-3], "status", "-w", str(root), "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert json.loads(standing.stdout)["destinations"][0]["lastExportOutcome"] == "interrupted"
        server.script([])  # the next export sends exactly the rest
        again = subprocess.run(
            [*command, "--json"], env=env, capture_output=True, text=True, timeout=300
        )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["runs"]["unchanged"] == len(kept)
