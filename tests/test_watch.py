"""``export --watch``: a real process follows the trail and sends each run once it ends.

Each test starts ``openlineage-export export --watch`` against the fake server, writes the
trail as the hub does (a line at a time, a new segment, an old one gzipped, a line torn then
finished) and waits until the server has received what it must (never a sleep); the watch is
stopped by a signal, and ``status`` afterwards agrees with what the server received.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fakeserver import (
    FakeServer,
    fake_server_fixture,  # noqa: F401 - registers fake_server
    refusing_socket,
)
from helpers import WorkspaceMaker, cli_command, cli_env, run_record
from hubwriter import append, gzip_segment
from support.holds import DEADLINE
from support.watch import Watch, pipeline_run


@pytest.fixture
def watching() -> Iterator[Callable[..., Watch]]:
    started: list[Watch] = []

    def start(root: Path, env: dict[str, str], *extra: str, stdin: int | None = None) -> Watch:
        started.append(Watch(root, env, *extra, stdin=stdin))
        return started[-1]

    yield start
    for watch in started:
        watch.close()


def received(server: FakeServer) -> Counter[str]:
    """Events the server received, per pipeline run id."""
    return Counter(pipeline_run(event) for event in server.events())


def has_received(
    server: FakeServer, watch: Watch, trace_id: str, sends: int = 1
) -> Callable[[], bool]:
    """Whether the watch said ``trace_id`` was sent ``sends`` times, and the server holds
    every event of those sends."""

    def check() -> bool:
        said = [e for e in watch.sent() if e["traceId"] == trace_id]
        if len(said) < sends:
            return False
        return received(server)[said[0]["runId"]] >= sum(e["events"] for e in said)

    return check


def status(root: Path, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        cli_command("status", "-w", str(root), "--json"),
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def exactly_once(server: FakeServer, watch: Watch) -> None:
    """Every run the watch said it sent is at the server, each send's events once."""
    expected: Counter[str] = Counter()
    for event in watch.sent():
        expected[event["runId"]] += event["events"]
    assert received(server) == expected


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cli_env(tmp_path)


def test_runs_are_sent_as_they_end_once_each_and_a_running_run_again_with_its_end(
    ws: WorkspaceMaker, fake_server: FakeServer, env: dict[str, str], watching: Callable[..., Watch]
) -> None:
    ws.settings({"openlineage.url": fake_server.url})
    segment = ws.segment(
        "000001.jsonl", [run_record("run-1"), run_record("run-2", status="running")]
    )
    watch = watching(ws.root, env, "--progress", "json")
    watch.wait(lambda: bool(watch.events("watching")), "the watch to export what was pending")
    assert [e["traceId"] for e in watch.sent()] == ["run-1", "run-2"]  # as an export does
    assert watch.events("watching") == [
        {"event": "watching", "segment": ".workspace/lineage/audit/000001.jsonl"}
    ]

    # One line at a time: a running run is not sent; a run that ends is, within the watch.
    append(segment, run_record("run-3", status="running"))
    append(segment, run_record("run-4"))
    watch.wait(has_received(fake_server, watch, "run-4"), "run-4 at the server")
    assert [e["traceId"] for e in watch.sent()] == ["run-1", "run-2", "run-4"]
    append(segment, run_record("run-3", status="failed"))
    watch.wait(has_received(fake_server, watch, "run-3"), "run-3 at the server once it failed")
    # run-2 was sent while running: its end is sent again, the last record of its trace id.
    append(segment, run_record("run-2", status="cancelled"))
    watch.wait(has_received(fake_server, watch, "run-2", 2), "run-2 sent again with its end")
    run_2 = [e for e in watch.sent() if e["traceId"] == "run-2"]
    assert [e["status"] for e in run_2] == ["running", "cancelled"]
    last = [e for e in fake_server.events() if e["run"]["runId"] == run_2[0]["runId"]][-1]
    assert last["eventType"] == "ABORT"
    # Each run sent is one JSON line as it happens, in the style of the progress objects.
    assert {k for e in watch.sent() for k in e} == {
        "event",
        "state",
        "traceId",
        "runId",
        "pipeline",
        "status",
        "events",
    }

    assert watch.stop(signal.SIGINT) == 130
    exactly_once(fake_server, watch)
    standing = status(ws.root, env)["destinations"]
    assert [(d["exported"], d["pending"], d["lastExportOutcome"]) for d in standing] == [
        (4, 0, "interrupted")
    ]


def test_a_new_segment_and_a_gzipped_old_one_are_followed(
    ws: WorkspaceMaker, fake_server: FakeServer, env: dict[str, str], watching: Callable[..., Watch]
) -> None:
    ws.settings({"openlineage.url": fake_server.url})
    first = ws.segment("000001.jsonl", [run_record("run-1")])
    watch = watching(ws.root, env, "--progress", "json")
    watch.wait(has_received(fake_server, watch, "run-1"), "run-1 at the server")

    # Rotation: the last line of the old segment, a new segment, the old one gzipped, all
    # before the watch may look again; the rest of the old one is read from its .gz.
    append(first, run_record("run-2"))
    second = ws.audit / "000002.jsonl"
    append(second, run_record("run-3"))
    gzip_segment(first)
    watch.wait(has_received(fake_server, watch, "run-2"), "run-2, read from 000001.jsonl.gz")
    watch.wait(has_received(fake_server, watch, "run-3"), "run-3 from the new segment")
    append(second, run_record("run-4"))
    watch.wait(has_received(fake_server, watch, "run-4"), "run-4, appended to the new segment")
    third = ws.audit / "000003.jsonl"
    append(third, run_record("run-5"))
    gzip_segment(second)
    watch.wait(has_received(fake_server, watch, "run-5"), "run-5 in a third segment")

    assert watch.stop(signal.SIGTERM) == 143
    assert sorted(e["traceId"] for e in watch.sent()) == [f"run-{n}" for n in range(1, 6)]
    exactly_once(fake_server, watch)
    assert not watch.events("badEntry")
    assert status(ws.root, env)["destinations"][0]["exported"] == 5


def test_a_torn_line_is_sent_once_when_finished_and_is_bad_once_abandoned(
    ws: WorkspaceMaker, fake_server: FakeServer, env: dict[str, str], watching: Callable[..., Watch]
) -> None:
    ws.settings({"openlineage.url": fake_server.url})
    torn = json.dumps(run_record("run-torn")).encode()
    segment = ws.segment("000001.jsonl", [run_record("run-1"), torn[:40]], end_newline=False)
    watch = watching(ws.root, env, "--progress", "json")
    # The watch has read the segment as it is, the torn line included: not there yet.
    watch.wait(lambda: bool(watch.events("watching")), "the watch to export what was pending")
    assert [e["traceId"] for e in watch.sent()] == ["run-1"]
    assert not watch.events("badEntry")

    append(segment, torn[40:] + b"\n")
    watch.wait(has_received(fake_server, watch, "run-torn"), "the finished line's run")

    # A line the hub abandoned (a newer segment appeared after it) is one bad entry.
    append(segment, b'{"kind": "run", "traceId": "abandoned", ')
    append(ws.audit / "000002.jsonl", run_record("run-2"))
    watch.wait(has_received(fake_server, watch, "run-2"), "run-2 from the new segment")
    bad = watch.events("badEntry")
    assert [(b["file"], b["line"]) for b in bad] == [(".workspace/lineage/audit/000001.jsonl", 3)]

    assert watch.stop(signal.SIGHUP) == 129
    assert [e["traceId"] for e in watch.sent()] == ["run-1", "run-torn", "run-2"]
    exactly_once(fake_server, watch)


def test_an_outage_is_waited_out_said_once_and_no_run_is_lost(
    ws: WorkspaceMaker, env: dict[str, str], watching: Callable[..., Watch]
) -> None:
    held = refusing_socket()
    port = held.getsockname()[1]
    ws.settings({"openlineage.url": f"http://127.0.0.1:{port}", "openlineage.retry.maxTime": 1})
    segment = ws.segment("000001.jsonl", [run_record("run-1")])
    watch = watching(ws.root, env, "--progress", "json")
    try:
        watch.wait(lambda: bool(watch.events("outage")), "the watch to say the server is gone")
        # Runs end while the server is gone: the watch goes on, and keeps them pending.
        append(segment, run_record("run-2"))
        append(ws.audit / "000002.jsonl", run_record("run-3", status="running"))
        append(ws.audit / "000002.jsonl", run_record("run-3"))
        assert watch.proc.poll() is None, "".join(watch.err)
        server = FakeServer(bound=held)  # the port answers again
    except BaseException:
        held.close()
        raise
    try:
        watch.wait(lambda: bool(watch.events("back")), "the watch to say the server is back")
        for trace_id in ("run-1", "run-2", "run-3"):
            watch.wait(has_received(server, watch, trace_id), f"{trace_id} at the server")
        append(ws.audit / "000002.jsonl", run_record("run-4"))
        watch.wait(has_received(server, watch, "run-4"), "run-4, after the outage")
        assert watch.stop(signal.SIGINT) == 130
        # Said once each; no retry told while the outage was said.
        kinds = [e["event"] for e in watch.events() if e["event"] in ("outage", "back", "retry")]
        assert kinds.count("outage") == 1 and kinds.count("back") == 1
        assert "retry" not in kinds[kinds.index("outage") :]
        # Nothing reached the server while it refused: each run's events once.
        assert sorted(e["traceId"] for e in watch.sent()) == ["run-1", "run-2", "run-3", "run-4"]
        exactly_once(server, watch)
        assert status(ws.root, env)["destinations"][0]["exported"] == 4
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_a_stop_signal_ends_the_watch_with_the_ledger_true(
    ws: WorkspaceMaker,
    fake_server: FakeServer,
    env: dict[str, str],
    watching: Callable[..., Watch],
    stop: signal.Signals,
    code: int,
) -> None:
    ws.settings({"openlineage.url": fake_server.url})
    segment = ws.segment("000001.jsonl", [run_record("run-1")])
    watch = watching(ws.root, env)  # on no terminal: plain lines
    watch.wait(lambda: fake_server.wait_for(4, 0), "run-1 at the server")
    watch.wait(lambda: any(line.startswith("following ") for line in watch.err), "following")
    append(segment, run_record("run-2"), run_record("run-3", status="running"))
    watch.wait(
        lambda: any(line.startswith("sent: daily-sales run-2 ") for line in watch.err),
        "the line saying run-2 was sent",
    )
    assert watch.stop(stop) == code
    err = "".join(watch.err)
    assert "Traceback" not in err
    assert "sent: daily-sales run-2 (succeeded, 4 events)\n" in err
    assert "run-3" not in err  # still running: not sent
    said = [line for line in watch.err if line.startswith("exported to ")]
    assert len(said) == 1, err
    standing = status(ws.root, env)
    # status agrees with the server: run-1 and run-2 exported, run-3 pending.
    assert len(received(fake_server)) == 2
    assert standing["runs"] == 3
    assert [(d["exported"], d["pending"]) for d in standing["destinations"]] == [(2, 1)]


@pytest.mark.parametrize("end", ["stdin closed", "SIGINT, stdin open"])
def test_the_end_of_stdin_ends_the_watch_as_sigterm_does_when_asked(
    ws: WorkspaceMaker,
    fake_server: FakeServer,
    env: dict[str, str],
    watching: Callable[..., Watch],
    end: str,
) -> None:
    """An editor runs the watch as its child with a pipe for stdin: when the editor goes (even
    killed, saying nothing), the pipe closes, and the watch ends as SIGTERM ends it; stopped
    by a signal while the pipe is open, it ends as that signal says (the thread reading the
    pipe does not stand in the way of the interpreter's exit)."""
    ws.settings({"openlineage.url": fake_server.url})
    segment = ws.segment("000001.jsonl", [run_record("run-1")])
    watch = watching(
        ws.root, env, "--progress", "json", "--until-stdin-closes", stdin=subprocess.PIPE
    )
    watch.wait(lambda: bool(watch.events("watching")), "the watch to follow the trail")
    append(segment, run_record("run-2"), run_record("run-3", status="running"))
    watch.wait(has_received(fake_server, watch, "run-2"), "run-2 at the server")
    assert watch.proc.stdin is not None
    watch.proc.stdin.write(b"anything a host writes is not read as a command\n")
    watch.proc.stdin.flush()
    assert watch.proc.poll() is None  # what comes on stdin is not its end
    if end == "stdin closed":
        watch.proc.stdin.close()
        assert watch.proc.wait(DEADLINE) == 143
    else:
        assert watch.stop(signal.SIGINT) == 130
    exactly_once(fake_server, watch)
    err = "".join(watch.err)
    assert "Traceback" not in err and "Fatal Python error" not in err, err
    assert watch.events("finished")[-1]["exitCode"] == watch.proc.returncode
    standing = status(ws.root, env)
    assert [(d["exported"], d["pending"]) for d in standing["destinations"]] == [(2, 1)]


def test_a_dry_run_writes_each_run_as_it_ends(
    ws: WorkspaceMaker, env: dict[str, str], watching: Callable[..., Watch], tmp_path: Path
) -> None:
    segment = ws.segment("000001.jsonl", [run_record("run-1")])
    out = tmp_path / "events.jsonl"
    watch = watching(ws.root, env, "--dry-run", "-o", str(out))

    def runs_written() -> set[str]:
        text = out.read_text() if out.exists() else ""
        lines = text.splitlines(keepends=True)
        return {pipeline_run(json.loads(line)) for line in lines if line.endswith("\n")}

    watch.wait(lambda: len(runs_written()) == 1, "run-1's events in the file")
    append(segment, run_record("run-2"))
    watch.wait(lambda: len(runs_written()) == 2, "run-2's events in the file, flushed")
    assert watch.stop(signal.SIGINT) == 130
    assert len(runs_written()) == 2  # kept when stopped
    assert len(out.read_text().splitlines()) == 8

    watch = watching(ws.root, env, "--dry-run")  # standard output
    watch.wait(lambda: watch.out.count(b"\n") == 8, "both runs' events on standard output")
    append(segment, run_record("run-3"))
    watch.wait(lambda: watch.out.count(b"\n") == 12, "run-3's events on standard output")
    assert watch.stop(signal.SIGTERM) == 143


def test_a_removed_workspace_ends_the_watch_in_one_line(
    ws: WorkspaceMaker, fake_server: FakeServer, env: dict[str, str], watching: Callable[..., Watch]
) -> None:
    ws.settings({"openlineage.url": fake_server.url})
    ws.segment("000001.jsonl", [run_record("run-1")])
    watch = watching(ws.root, env, "--progress", "none")
    watch.wait(lambda: any(line.startswith("following ") for line in watch.err), "following")
    shutil.rmtree(ws.root)
    assert watch.proc.wait(DEADLINE) == 3
    errors = [line for line in watch.err if line.startswith("error")]
    assert len(errors) == 1 and "gone" in errors[0], watch.err
    assert "Traceback" not in "".join(watch.err)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--watch", "--full"], "--watch does not go with --full"),
        (["--watch", "--report", "r.html"], "--watch does not go with --report"),
        (["--until-stdin-closes"], "--until-stdin-closes goes with --watch"),
    ],
)
def test_watch_refuses_what_makes_no_sense(
    ws: WorkspaceMaker, env: dict[str, str], options: list[str], said: str
) -> None:
    done = subprocess.run(
        cli_command("export", "-w", str(ws.root), *options),
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: {said}"], done.stderr


def test_a_watching_dry_run_never_writes_through_a_committed_link(
    ws: WorkspaceMaker, env: dict[str, str], watching: Callable[..., Watch]
) -> None:
    """Attack A, 3: ``export --watch --dry-run -o events.jsonl`` (the last example of
    ``export --help``) opened the name with ``path.open("wb")``: a committed link
    ``events.jsonl -> .venv/bin/activate`` had the user's activate script overwritten."""
    (ws.root / ".git").mkdir()
    activate = ws.root / ".venv" / "bin" / "activate"
    activate.parent.mkdir(parents=True)
    activate.write_text("# the user's own activate\n")
    out = ws.root / "events.jsonl"
    out.symlink_to(".venv/bin/activate")
    ws.segment("000001.jsonl", [run_record("run-1")])
    watch = watching(ws.root, env, "--dry-run", "-o", str(out))

    def written() -> int:
        return 0 if out.is_symlink() or not out.exists() else out.read_text().count("\n")

    watch.wait(lambda: written() == 4, "run-1's events at that very name")
    assert watch.stop(signal.SIGTERM) == 143
    assert activate.read_text() == "# the user's own activate\n"
