"""``status`` (status.py): per destination, exported, pending and failed, read-only."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import threading
from pathlib import Path

import pytest
from fakeserver import Answer, FakeServer
from helpers import (
    WorkspaceMaker,
    can_drop_privileges,
    can_mount,
    cli_command,
    cli_env,
    delivered_runs,
    on_read_only_mount,
    run_record,
    without_root_privileges,
)
from support.holds import wait_until
from test_ledger import REFUSAL, Server, dry_run_ids, export, trail

from openlineage_export.export.status import export_status


def test_status_counts_exported_pending_and_failed(ws: WorkspaceMaker, tmp_path: Path) -> None:
    trail(ws, 5)
    server = Server()
    server.refuse = {dry_run_ids(ws)["run-0"]}
    export(ws, server, tmp_path)
    ws.segment("000002.jsonl", [run_record("new-one")])
    ledger_file = tmp_path / "state" / "ledger.sqlite"
    before = ledger_file.read_bytes()
    standing = export_status(ws.root, {"OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state")})
    (state,) = standing.destinations
    assert (standing.runs, standing.bad_entries) == (6, 0)
    assert (state.exported, state.pending, state.failed) == (4, 2, 1)
    assert state.destination == "http://lineage.test/api/v1/lineage"
    assert state.last_export_finished is not None and state.last_export_outcome == "finished"
    assert ledger_file.read_bytes() == before, "status writes nothing"
    other = export_status(ws.root, {"OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "none")})
    assert other.destinations == [] and not (tmp_path / "none").exists()


def status(ws: WorkspaceMaker, tmp_path: Path) -> str:
    done = subprocess.run(
        cli_command("status", "-w", str(ws.root)),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def test_a_workspace_never_exported_says_so_and_creates_nothing(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.segment("000001.jsonl", [run_record("a"), "not json", run_record("b")])
    assert status(ws, tmp_path) == (
        "2 runs on the trail, 1 bad entry\nnever exported (a dry run does not count)\n"
    )
    assert not (tmp_path / "state").exists()


def test_an_export_that_was_killed_shows_as_such_and_its_runs_as_pending(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.segment("000001.jsonl", [run_record(f"r{i}") for i in range(6)])
    ws.settings({"openlineage.concurrency": 1})
    never = threading.Event()  # the 9th event and later are never answered
    with FakeServer() as server:
        server.script(lambda request: Answer(201, hold=never if len(server.requests) > 8 else None))
        killed = subprocess.Popen(
            cli_command("export", "-w", str(ws.root)),
            env=cli_env(tmp_path, OPENLINEAGE_URL=server.url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert server.wait_for(9)
            # The two runs whose events were all accepted reach the ledger within a second.
            wait_until(
                lambda: delivered_runs(tmp_path / "state" / "ledger.sqlite") == 2,
                "the ledger to hold the two runs accepted",
            )
        finally:
            killed.send_signal(signal.SIGKILL)
            killed.communicate()
        lines = status(ws, tmp_path).splitlines()
    assert lines[0] == "6 runs on the trail"
    assert lines[1].startswith(f"{server.url}/api/v1/lineage: 2 of 6 runs exported; 4 pending")
    assert lines[2].startswith("  last export: started ")
    assert lines[2].endswith(
        "not finished: still running, or killed (the next export sends what it did not record)"
    )


def _file_export(ws: WorkspaceMaker, tmp_path: Path) -> dict[str, str]:
    env = cli_env(
        tmp_path, OPENLINEAGE_TRANSPORT="file", OPENLINEAGE_FILE_PATH=str(tmp_path / "events.jsonl")
    )
    done = subprocess.run(
        cli_command("export", "-q", "-w", str(ws.root)),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return env


def test_status_reads_a_ledger_on_a_read_only_file_system(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """Issue 30, 11: SQLite opened read-only still makes the log's shared-memory file beside
    the ledger; on a read-only mount that was "unable to open database file"."""
    trail(ws, 3)
    env = _file_export(ws, tmp_path)
    state = tmp_path / "state"
    assert sorted(p.name for p in state.iterdir()) == ["ledger.sqlite", "locks"]
    if can_mount() is None:
        command = on_read_only_mount(state, cli_command("status", "-w", str(ws.root)))
    elif can_drop_privileges() is None:
        state.chmod(0o500)
        command = without_root_privileges(cli_command("status", "-w", str(ws.root)))
    else:
        pytest.skip(f"{can_mount()}; {can_drop_privileges()}")
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    finally:
        state.chmod(0o700)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "3 runs on the trail",
        f"{(tmp_path / 'events.jsonl').as_uri()}: 3 of 3 runs exported",
        f"  last export: {done.stdout.splitlines()[2].removeprefix('  last export: ')}",
    ]
    assert done.stdout.splitlines()[2].startswith("  last export: finished ")
    assert sorted(p.name for p in state.iterdir()) == ["ledger.sqlite", "locks"]


def test_every_folder_made_for_state_and_secrets_is_0700_whatever_the_umask(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """Issue 30, 11: under umask 000 the state folder was made 0777 (the lock folder first,
    its parents with the default mode); every folder we make is 0700, files 0600."""
    trail(ws, 1)
    home = tmp_path / "home"
    env = {
        k: v
        for k, v in cli_env(tmp_path).items()
        if k not in ("OPENLINEAGE_EXPORT_STATE_DIR", "OPENLINEAGE_EXPORT_CONFIG_DIR")
    }
    env.update(OPENLINEAGE_TRANSPORT="file", OPENLINEAGE_FILE_PATH=str(tmp_path / "ev.jsonl"))
    for command, given in [
        (["export", "-q", "-w", str(ws.root)], None),
        (["secrets", "set", "marquez", "--for", "https://m.example.com"], "olx-s3cret-v4lue"),
    ]:
        done = subprocess.run(
            cli_command(*command),
            env=env,
            input=given,
            text=True,
            capture_output=True,
            timeout=120,
            preexec_fn=lambda: os.umask(0),
        )
        assert done.returncode == 0, done.stderr
    state = home / ".local" / "state" / "openlineage-export"
    config = home / ".config" / "openlineage-export"
    folders = [
        home,
        home / ".local",
        home / ".local" / "state",
        state,
        state / "locks",
        home / ".config",
        config,
    ]
    assert {str(f): oct(stat.S_IMODE(f.stat().st_mode)) for f in folders} == dict.fromkeys(
        map(str, folders), "0o700"
    )
    files = [
        state / "ledger.sqlite",
        *(state / "locks").iterdir(),
        config / "secrets.json",
        config / "key-origins.json",
    ]
    assert {str(f): oct(stat.S_IMODE(f.stat().st_mode)) for f in files} == dict.fromkeys(
        map(str, files), "0o600"
    )


def test_status_runs_names_each_run_exported_pending_or_refused_with_the_reason(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    trail(ws, 4)
    server = Server()
    ids = dry_run_ids(ws)
    server.refuse = {ids["run-1"]}
    export(ws, server, tmp_path)
    # run-2 changed on the trail since (a later record of the same trace id), one run new.
    ws.segment("000002.jsonl", [run_record("run-2", status="failed"), run_record("new-one")])

    def runs(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cli_command("status", "--runs", "-w", str(ws.root), *args),
            env=cli_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
        )

    as_json, plain, elsewhere = runs("--json"), runs(), runs("--url", "http://other.test")
    for done in (as_json, plain, elsewhere):
        assert done.returncode == 0 and done.stderr == "", done.stderr
    standing = json.loads(as_json.stdout)
    assert standing["destination"] == "http://lineage.test/api/v1/lineage"
    by_trace = {run["traceId"]: run for run in standing["runs"]}
    assert [run["traceId"] for run in standing["runs"]] == [
        "run-0",
        "run-1",
        "run-3",
        "run-2",
        "new-one",
    ]  # trail order: a run's place is its current record's
    assert {t: r["state"] for t, r in by_trace.items()} == {
        "run-0": "exported",
        "run-1": "refused",
        "run-2": "pending",
        "run-3": "exported",
        "new-one": "pending",
    }
    assert REFUSAL in by_trace["run-1"]["reason"]
    # How each ended in the editor, and when: its current record's (run-2's is the later one).
    assert {t: r["status"] for t, r in by_trace.items()} == {
        **dict.fromkeys(["run-0", "run-1", "run-3", "new-one"], "succeeded"),
        "run-2": "failed",
    }
    assert {(r["startedAt"], r["endedAt"]) for r in standing["runs"]} == {
        ("2026-11-02T02:00:00.120Z", "2026-11-02T02:07:31.904Z")
    }
    assert by_trace["run-0"]["runId"] == ids["run-0"] and by_trace["new-one"]["runId"] is None
    assert plain.stdout.splitlines()[0] == (
        "http://lineage.test/api/v1/lineage (namespace test-ws): 5 runs"
    )
    assert "  refused   daily-sales  run-1: " in plain.stdout
    # Another server: nothing went there yet, every run pending.
    assert {line.split()[0] for line in elsewhere.stdout.splitlines()[1:]} == {"pending"}
