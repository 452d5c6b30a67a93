"""The ledger: only new or changed runs are sent; an interrupted export loses nothing."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from helpers import WorkspaceMaker, reason_between, run_record, stage_record

from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.report import ExportReport
from openlineage_export.state.ledger import Ledger

REFUSAL = "the facet 'spark_version' is not known here"
"""What the server says of an event it refuses (a run of ``refuse``), alone or in a batch."""


class Server:
    """An in-process OpenLineage endpoint behind httpx.MockTransport (the host's HTTP seam)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.refuse: set[str] = set()  # run ids answered with 400
        self.whole: tuple[dict[str, int], threading.Event] | None = None
        """(each pipeline run's count of events, an event set once one run's are all taken)"""
        self.taken: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        got = orjson.loads(request.content)
        if request.url.path.endswith("/batch"):  # the spec's batch: each event's answer
            failed = [
                {"index": i, "reason": REFUSAL, "retriable": False}
                for i, event in enumerate(got)
                if not self.take(event)
            ]
            if not failed:
                return httpx.Response(204)
            return httpx.Response(200, json={"status": "partial_success", "failed_events": failed})
        return (
            httpx.Response(201) if self.take(got) else httpx.Response(400, json={"error": REFUSAL})
        )

    def take(self, event: dict[str, Any]) -> bool:
        with self.lock:
            if event["run"]["runId"] in self.refuse:
                return False
            self.events.append(event)
            if self.whole is not None:
                run = _pipeline_run(event)
                self.taken[run] = self.taken.get(run, 0) + 1
                if self.taken[run] == self.whole[0][run]:
                    self.whole[1].set()
        return True

    def runs(self) -> set[str]:
        return {e["run"]["runId"] for e in self.events}


def export(ws: WorkspaceMaker, server: Server, tmp_path: Path, **options: Any) -> ExportReport:
    ws.settings(
        {
            "openlineage.url": options.pop("url", "http://lineage.test"),
            "openlineage.concurrency": options.pop("concurrency", 4),
            **options.pop("settings", {}),
        }
    )
    return run_export(
        ExportRequest(
            workspace=ws.root,
            http=httpx.MockTransport(server),
            environ=options.pop(
                "environ", {"OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state")}
            ),
            **options,
        )
    )


def trail(ws: WorkspaceMaker, runs: int = 10) -> None:
    ws.segment("000001.jsonl", [run_record(f"run-{i}") for i in range(runs)])


def test_second_export_of_an_unchanged_trail_sends_nothing(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    trail(ws)
    server = Server()
    first = export(ws, server, tmp_path)
    assert (first.runs_sent, first.runs_unchanged, first.exit_code) == (10, 0, 0)
    sent = len(server.events)
    second = export(ws, server, tmp_path)
    assert (second.runs_sent, second.runs_unchanged, second.events_sent) == (0, 10, 0)
    assert len(server.events) == sent


def test_only_runs_whose_record_changed_are_sent_again(ws: WorkspaceMaker, tmp_path: Path) -> None:
    ws.segment(
        "000001.jsonl",
        [
            run_record("a"),
            run_record("b", status="running", stages=[stage_record(status="running")]),
        ],
    )
    server = Server()
    export(ws, server, tmp_path)
    ws.segment("000002.jsonl", [run_record("b", status="succeeded")])  # b has ended
    server.events.clear()
    report = export(ws, server, tmp_path)
    assert (report.runs_sent, report.runs_unchanged) == (1, 1)
    assert [e["eventType"] for e in server.events] == ["START", "START", "COMPLETE", "COMPLETE"]


def test_a_state_folder_whose_name_is_not_utf8_keeps_the_ledger(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """OPENLINEAGE_EXPORT_STATE_DIR=/.../state$'\\xff': Python reads the byte as U+DCFF, and the
    run index attached the ledger by that name, which SQLite takes as UTF-8: a traceback."""
    ws.segment("000001.jsonl", [run_record("r1"), run_record("r2")])
    state = tmp_path / "state\udcff"  # the file system's name: b"state\xff"
    server = Server()
    first = export(ws, server, tmp_path, environ={"OPENLINEAGE_EXPORT_STATE_DIR": str(state)})
    assert first.exit_code == 0 and first.runs_sent == 2
    again = export(ws, server, tmp_path, environ={"OPENLINEAGE_EXPORT_STATE_DIR": str(state)})
    assert again.exit_code == 0 and again.runs_sent == 0  # the ledger there was read
    assert (tmp_path / "state\udcff" / "ledger.sqlite").exists()


def test_full_sends_everything_again(ws: WorkspaceMaker, tmp_path: Path) -> None:
    trail(ws, 3)
    server = Server()
    export(ws, server, tmp_path)
    report = export(ws, server, tmp_path, full=True)
    assert report.runs_sent == 3 and report.runs_unchanged == 0


def test_ledger_is_per_destination(ws: WorkspaceMaker, tmp_path: Path) -> None:
    trail(ws, 3)
    export(ws, Server(), tmp_path)
    other = export(ws, Server(), tmp_path, url="http://other.test")
    assert other.runs_sent == 3


def test_a_settings_change_that_changes_events_makes_every_run_pending(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    trail(ws, 3)
    export(ws, Server(), tmp_path)
    report = export(ws, Server(), tmp_path, settings={"openlineage.namespace": "renamed"})
    assert report.runs_sent == 3


def test_the_namespace_of_the_last_export_is_remembered_and_a_change_said(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """Marquez keys runs by run id across namespaces: a new namespace is worth a warning that
    names the one the runs already there were sent under, and how to keep it."""
    trail(ws, 2)
    export(ws, Server(), tmp_path, settings={"openlineage.namespace": "first"})
    same = export(ws, Server(), tmp_path, settings={"openlineage.namespace": "first"})
    assert not [w for w in same.warnings if "namespace" in w]
    renamed = export(ws, Server(), tmp_path, settings={"openlineage.namespace": "second"})
    [warning] = [w for w in renamed.warnings if "openlineage.namespace is now" in w]
    assert "'second'" in warning and "sent under 'first'" in warning
    assert warning.endswith("settings set openlineage.namespace first")
    again = export(ws, Server(), tmp_path, settings={"openlineage.namespace": "second"})
    assert not [w for w in again.warnings if "namespace" in w]  # remembered: said once


def test_refused_runs_are_recorded_failed_and_retried_next_time(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    trail(ws, 5)
    server = Server()
    dry = dry_run_ids(ws)
    server.refuse = {dry["run-2"]}
    first = export(ws, server, tmp_path)
    assert (first.runs_sent, first.runs_failed, first.exit_code) == (4, 1, 1)
    with sqlite3.connect(tmp_path / "state" / "ledger.sqlite") as db:
        states = dict(db.execute("SELECT trace_id, state FROM runs"))
    assert states["run-2"] == "failed" and list(states.values()).count("delivered") == 4
    server.refuse = set()
    second = export(ws, server, tmp_path)
    assert (second.runs_sent, second.runs_unchanged, second.exit_code) == (1, 4, 0)


def test_an_interrupted_export_loses_nothing(ws: WorkspaceMaker, tmp_path: Path) -> None:
    """Cancelled once the server took every event of one editor run (the premise of a run
    accepted whole, whatever batches carried them): the runs accepted whole are recorded, the
    next export sends the rest."""
    trail(ws, 40)
    server = Server()
    cancel = threading.Event()
    server.whole = (events_per_run(ws), cancel)
    first = export(ws, server, tmp_path, cancel=cancel, concurrency=2)
    assert first.cancelled and first.exit_code == 130
    assert 0 < first.runs_sent < 40
    accepted_whole = first.runs_sent
    second = export(ws, server, tmp_path)
    assert second.runs_unchanged == accepted_whole
    assert second.runs_sent == 40 - accepted_whole
    assert len(server.runs()) == 40 * 2  # every pipeline and stage run reached the server


def test_dry_run_never_touches_the_ledger(ws: WorkspaceMaker, tmp_path: Path) -> None:
    trail(ws, 2)
    out = tmp_path / "events.jsonl"
    with out.open("wb") as stream:
        run_export(
            ExportRequest(
                workspace=ws.root,
                dry_run=True,
                output=stream,
                environ={"OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "s")},
            )
        )
    assert not (tmp_path / "s").exists()


def test_ledger_file_is_private_and_outside_the_workspace(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    trail(ws, 1)
    export(ws, Server(), tmp_path)
    path = tmp_path / "state" / "ledger.sqlite"
    assert path.stat().st_mode & 0o077 == 0
    assert not any(p.suffix == ".sqlite" for p in ws.root.rglob("*"))
    ledger = Ledger(path)
    assert ledger.status(str(ws.root))[0].delivered == 1
    ledger.close()


def dry_run_ids(ws: WorkspaceMaker) -> dict[str, str]:
    import io

    stream = io.BytesIO()
    run_export(ExportRequest(workspace=ws.root, dry_run=True, output=stream))
    ids = {}
    for line in stream.getvalue().splitlines():
        event = orjson.loads(line)
        for tag in event["run"]["facets"].get("tags", {}).get("tags", []):
            if tag["key"] == "traceId":
                ids[tag["value"]] = event["run"]["runId"]
    return ids


def events_per_run(ws: WorkspaceMaker) -> dict[str, int]:
    """How many events each pipeline run of the dry run has (its stages' included)."""
    import io

    stream = io.BytesIO()
    run_export(ExportRequest(workspace=ws.root, dry_run=True, output=stream))
    counts: dict[str, int] = {}
    for line in stream.getvalue().splitlines():
        run = _pipeline_run(orjson.loads(line))
        counts[run] = counts.get(run, 0) + 1
    return counts


@pytest.fixture(autouse=True)
def _settings_dir(ws: WorkspaceMaker) -> None:
    (ws.root / ".workspace").mkdir(exist_ok=True)


# Two processes, one ledger: real processes on one state folder.


def _pipeline_run(event: dict[str, Any]) -> str:
    parent = event["run"]["facets"].get("parent")
    return str(parent["run"]["runId"] if parent else event["run"]["runId"])


def test_a_stalled_export_holds_up_neither_status_nor_another_export(tmp_path: Path) -> None:
    import collections
    import io
    import signal
    import subprocess

    from fakeserver import Answer, FakeServer
    from helpers import cli_command, cli_env, delivered_runs
    from hubwriter.synth import write_workspace
    from support.holds import wait_until

    stalled, other = tmp_path / "stalled", tmp_path / "other"
    write_workspace(stalled, 40, seed=1)
    write_workspace(other, 40, seed=2)
    (stalled / ".workspace" / "settings.json").write_text('{"openlineage.concurrency": 1}')
    dry = io.BytesIO()
    run_export(ExportRequest(stalled, dry_run=True, output=dry))
    expected = collections.Counter(
        _pipeline_run(orjson.loads(line)) for line in dry.getvalue().splitlines()
    )
    with FakeServer() as slow, FakeServer() as fast:
        stalled_until = threading.Event()  # set when the test is done
        slow.script(
            lambda request: Answer(201, hold=stalled_until if len(slow.requests) > 30 else None)
        )
        env = cli_env(tmp_path)
        holder = subprocess.Popen(
            cli_command("export", "-w", str(stalled)),
            env={**env, "OPENLINEAGE_URL": slow.url},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert slow.wait_for(31)
            received = collections.Counter(_pipeline_run(r.json()) for r in slow.requests[:30])
            accepted = sum(1 for run, n in received.items() if n == expected[run])
            # Stalled: what was accepted reaches the ledger within a second all the same.
            wait_until(
                lambda: delivered_runs(tmp_path / "state" / "ledger.sqlite") == accepted,
                f"the ledger to hold the {accepted} runs accepted",
            )

            def run(*args: str, url: str | None = None) -> subprocess.CompletedProcess[str]:
                """A command that waited on the ledger's lock would fail, "database is
                locked", after its busy timeout: none may."""
                done = subprocess.run(
                    cli_command(*args),
                    capture_output=True,
                    text=True,
                    env={**env, **({"OPENLINEAGE_URL": url} if url else {})},
                    timeout=300,
                )
                assert "Traceback" not in done.stderr and "locked" not in done.stderr
                return done

            status = run("status", "-w", str(stalled), "--json")
            assert status.returncode == 0, status.stderr
            (state,) = orjson.loads(status.stdout)["destinations"]
            assert accepted >= 1 and state["exported"] == accepted  # every run it had finished

            exported = run("export", "-w", str(other), "--json", url=fast.url)
            assert exported.returncode == 0, exported.stderr
            assert orjson.loads(exported.stdout)["runs"]["sent"] == 40
            status = run("status", "-w", str(other), "--json")
            assert status.returncode == 0, status.stderr
            assert orjson.loads(status.stdout)["destinations"][0]["exported"] == 40
        finally:
            holder.send_signal(signal.SIGINT)
            _, err = holder.communicate(timeout=300)
            stalled_until.set()
        assert holder.returncode == 130 and "Traceback" not in err, err


# The state folder under a hostile world: full, read-only, not a folder, damaged. Each is one
# line naming the path and what to do (exit 2), and the ledger never claims a run the server
# did not accept.


def _cli(command: list[str], env: dict[str, str]) -> tuple[int, str]:
    import subprocess

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stderr


def test_a_full_disk_under_the_state_folder_stops_the_export_and_keeps_the_ledger_true(
    tmp_path: Path,
) -> None:
    """The disk fills once the ledger holds the first runs (observed through the export's own
    mount namespace); until then the server holds every request past the first runs'."""
    import collections
    import errno
    import io
    import os
    import shlex
    import shutil
    import subprocess

    from fakeserver import Answer, FakeServer
    from helpers import can_mount, cli_command, cli_env
    from hubwriter.synth import write_workspace
    from support.holds import DEADLINE, wait_until

    if (why := can_mount()) is not None:
        pytest.skip(why)
    root = tmp_path / "ws"
    write_workspace(root, 400, seed=5)
    dry = io.BytesIO()
    run_export(ExportRequest(root, dry_run=True, output=dry))
    expected = collections.Counter(
        _pipeline_run(orjson.loads(line)) for line in dry.getvalue().splitlines()
    )
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    disk.mkdir()
    export = " ".join(shlex.quote(part) for part in cli_command("export", "-w", str(root)))
    script = (
        f"mount -t tmpfs -o size=1m tmpfs {disk} && {{ {export}; code=$?; "
        f"cp -r {disk}/state {kept}; exit $code; }}"
    )
    full = threading.Event()

    def answer(request: Any) -> Answer:
        """Every event is accepted until one run has all of its events in; then each waits
        for the disk to be full."""
        got = collections.Counter(
            _pipeline_run(r.json()) for r in server.requests if r is not request
        )
        whole = any(n == expected[run] for run, n in got.items())
        return Answer(201, hold=full if whole else None)

    with FakeServer() as server:
        server.script(answer)
        proc = subprocess.Popen(
            ["unshare", "-m", "sh", "-c", script],
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(
                tmp_path,
                OPENLINEAGE_URL=server.url,
                OPENLINEAGE_EXPORT_STATE_DIR=str(disk / "state"),
            ),
        )
        try:
            inside = Path(f"/proc/{proc.pid}/root{disk}")  # the tmpfs, as the export sees it

            def recorded() -> int:
                """Runs in a copy of the ledger (SQLite would resolve /proc/PID/root to ours)."""
                copy = tmp_path / "copy"
                shutil.rmtree(copy, ignore_errors=True)
                copy.mkdir()
                try:
                    for name in ("ledger.sqlite", "ledger.sqlite-wal"):
                        shutil.copyfile(inside / "state" / name, copy / name)
                    with contextlib.closing(sqlite3.connect(copy / "ledger.sqlite")) as db:
                        return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])
                except (OSError, sqlite3.Error):
                    return 0

            wait_until(lambda: recorded() > 0, "the ledger to record the first runs accepted")
            filler = os.open(inside / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                while True:
                    os.write(filler, b"\0" * 4096)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
            finally:
                os.close(filler)
        finally:
            full.set()
            _, err = proc.communicate(timeout=DEADLINE)
        code = proc.returncode
        received = collections.Counter(_pipeline_run(r.json()) for r in server.requests)
    assert "Traceback" not in err, err
    assert code == 2, err
    stopped = [line for line in err.splitlines() if line.startswith("stopped: ")]
    assert len(stopped) == 1, err
    # Said as a full disk (what to do about it), whatever SQLite or the OS called it.
    reason_between(
        stopped[0],
        f"stopped: the export ledger {disk}/state/ledger.sqlite cannot be used (",
        "); free some space there, or set OPENLINEAGE_EXPORT_STATE_DIR to a "
        "folder with room (the runs sent since it was last written were not "
        "recorded: the next export sends them again)",
    )
    head = err.splitlines()
    assert head[0] == stopped[0] and " runs sent before it stopped " in head[1], err
    with sqlite3.connect(kept / "ledger.sqlite") as db:
        claimed = [
            row[0] for row in db.execute("SELECT run_id FROM runs WHERE state = 'delivered'")
        ]
    assert claimed, "nothing was recorded before the disk filled"
    assert all(received[run] == expected[run] for run in claimed), "a claim the server lacks"


@pytest.mark.parametrize(
    "case", ["read-only state folder", "read-only home", "state folder under a file"]
)
def test_a_state_folder_that_cannot_be_written_is_one_line(
    case: str, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    from helpers import can_drop_privileges, cli_command, cli_env, without_root_privileges

    ws.segment("000001.jsonl", [run_record("r")])
    env = cli_env(tmp_path, OPENLINEAGE_URL="http://127.0.0.1:9")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    command = cli_command("export", "-w", str(ws.root))
    if case == "read-only state folder":
        env["OPENLINEAGE_EXPORT_STATE_DIR"] = str(locked / "state")
        folder = locked / "state"
    elif case == "read-only home":
        del env["OPENLINEAGE_EXPORT_STATE_DIR"]
        env["HOME"] = str(locked)
        folder = locked / ".local" / "state" / "openlineage-export"
    else:
        (tmp_path / "a-file").write_text("")
        env["OPENLINEAGE_EXPORT_STATE_DIR"] = str(tmp_path / "a-file" / "state")
        folder = tmp_path / "a-file" / "state"
    if case != "state folder under a file":
        if (why := can_drop_privileges()) is not None:
            pytest.skip(why)
        command = without_root_privileges(command)
    code, err = _cli(command, env)
    assert code == 2, err
    (line,) = err.splitlines()
    assert line.startswith(f"error: the lock file {folder}/locks/"), line
    assert line.endswith(
        f"; check that {folder} is a folder you can write to, or set "
        "OPENLINEAGE_EXPORT_STATE_DIR to another one"
    ), line


def test_a_ledger_damaged_in_its_middle_is_one_line_saying_to_move_it_away(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    from helpers import cli_command, cli_env

    ws.segment(
        "000001.jsonl",
        [
            run_record(f"run-{i:04}", stages=[stage_record(f"s{j}") for j in range(5)])
            for i in range(300)
        ],
    )
    server = Server()
    export(ws, server, tmp_path)
    ledger = tmp_path / "state" / "ledger.sqlite"
    with contextlib.closing(sqlite3.connect(ledger)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = db.execute("PRAGMA page_size").fetchone()[0]  # SQLite's, as it was built
    data = bytearray(ledger.read_bytes())
    assert len(data) >= 6 * page
    data[2 * page : len(data) - page] = b"\x5a" * (len(data) - 3 * page)
    ledger.write_bytes(bytes(data))
    env = cli_env(tmp_path, OPENLINEAGE_URL="http://127.0.0.1:9")
    advice = (
        f"the file is damaged: move it away (mv {ledger} {ledger}.damaged); the next "
        "export then starts a new ledger and sends every run again"
    )
    for command in (
        cli_command("export", "-w", str(ws.root)),
        cli_command("status", "-w", str(ws.root)),
    ):
        code, err = _cli(command, env)
        assert code == 2, err
        (line,) = err.splitlines()
        assert line.startswith(f"error: the export ledger {ledger} cannot be used ("), line
        assert line.endswith(advice), line


def _three_runs_exported(ws: WorkspaceMaker, tmp_path: Path, server: Any) -> dict[str, str]:
    import subprocess

    from helpers import cli_command, cli_env

    ws.segment("000001.jsonl", [run_record("a"), run_record("b"), run_record("c")])
    env = cli_env(tmp_path, OPENLINEAGE_URL=server.url)
    first = subprocess.run(
        cli_command("export", "-w", str(ws.root)),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert first.returncode == 0, first.stderr
    return env


def test_a_damaged_ledger_is_said_in_one_line_and_nothing_is_sent_again(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """The destinations' page overwritten (its index intact): the export's own reads found no
    destination and sent every run again, exit 0. SQLite's check at opening finds it."""
    import subprocess

    from fakeserver import FakeServer
    from helpers import cli_command

    with FakeServer() as server:
        env = _three_runs_exported(ws, tmp_path, server)
        sent = len(server.requests)
        ledger = tmp_path / "state" / "ledger.sqlite"
        assert not ledger.with_name("ledger.sqlite-wal").exists()  # all of it in the file
        with sqlite3.connect(ledger) as db:
            page, size = (
                db.execute(
                    "SELECT rootpage FROM sqlite_master WHERE name = 'destinations'"
                ).fetchone()[0],
                db.execute("PRAGMA page_size").fetchone()[0],
            )
        db.close()
        with ledger.open("r+b") as file:  # the whole page, whatever it held: the same damage
            file.seek((page - 1) * size)  # on every run (its rows hold times, which vary)
            file.write(bytes(size))
        for command in (["export"], ["status"]):
            again = subprocess.run(
                cli_command(*command, "-w", str(ws.root)),
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert again.returncode == 2, (command, again.stderr)
            # Our promise, not SQLite's diagnosis (its words depend on what the bytes hit):
            # one line, naming the ledger, saying it is damaged and what to do.
            lines = again.stderr.splitlines()
            assert len(lines) == 1, again.stderr
            assert lines[0].startswith(
                f"error: the export ledger {ledger} cannot be used (damaged: "
            ), lines
            assert lines[0].endswith(
                f"); the file is damaged: move it away (mv {ledger} {ledger}.damaged); the "
                "next export then starts a new ledger and sends every run again"
            ), lines
        assert len(server.requests) == sent, "runs were sent again"


def test_status_with_an_unusable_state_folder_says_it_cannot_read_the_ledger(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    import subprocess

    from helpers import cli_command, cli_env

    ws.segment("000001.jsonl", [run_record("a")])
    (tmp_path / "state").write_text("a file where the state folder should be")
    proc = subprocess.run(
        cli_command("status", "-w", str(ws.root)),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "never exported" not in proc.stdout
    (line,) = proc.stderr.splitlines()
    reason_between(
        line,
        f"error: cannot read the export ledger {tmp_path}/state/ledger.sqlite (",
        f"); check that {tmp_path}/state is a folder you can write to, or set "
        "OPENLINEAGE_EXPORT_STATE_DIR to another one",
    )


# -- the ledger is the user's own: never through a link, never a checkout's (attack A, 2) -------


@pytest.mark.parametrize("name", ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"])
def test_a_dangling_link_in_the_state_folder_creates_nothing(tmp_path: Path, name: str) -> None:
    from openlineage_export.errors import StateError

    state = tmp_path / "state"
    state.mkdir()
    (state / name).symlink_to(tmp_path / "created-elsewhere")
    with pytest.raises(StateError, match=r"cannot be used \(a link, not a file\)"):
        Ledger(state / "ledger.sqlite")
    assert not (tmp_path / "created-elsewhere").exists()


def test_a_ledger_in_a_checkout_is_not_believed(ws: WorkspaceMaker, tmp_path: Path) -> None:
    """A committed ledger that says the pusher's run was sent: refused, nothing read of it."""
    from openlineage_export.errors import StateError

    trail(ws, 2)
    export(ws, Server(), tmp_path / "checkout")  # made where no checkout was yet
    state = tmp_path / "checkout" / "state"
    assert (state / "ledger.sqlite").exists()
    (tmp_path / "checkout" / ".git").mkdir()
    with pytest.raises(StateError, match="is not used: it lies in the checkout"):
        Ledger(state / "ledger.sqlite")
    with pytest.raises(StateError, match="is not used: it lies in the checkout"):
        Ledger.open_read_only({"OPENLINEAGE_EXPORT_STATE_DIR": str(state)})
