"""``status`` (status.py): per destination, exported, pending and failed, read-only."""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path

from fakeserver import Answer, FakeServer
from helpers import WorkspaceMaker, cli_command, cli_env, delivered_runs, run_record
from support.holds import wait_until
from test_ledger import Server, dry_run_ids, export, trail

from openlineage_export.status import export_status


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
    done = subprocess.run(cli_command("status", "-w", str(ws.root)), env=cli_env(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def test_a_workspace_never_exported_says_so_and_creates_nothing(ws: WorkspaceMaker,
                                                                tmp_path: Path) -> None:
    ws.segment("000001.jsonl", [run_record("a"), "not json", run_record("b")])
    assert status(ws, tmp_path) == ("2 runs on the trail, 1 bad entry\n"
                                    "never exported (a dry run does not count)\n")
    assert not (tmp_path / "state").exists()


def test_an_export_that_was_killed_shows_as_such_and_its_runs_as_pending(
        ws: WorkspaceMaker, tmp_path: Path) -> None:
    ws.segment("000001.jsonl", [run_record(f"r{i}") for i in range(6)])
    ws.settings({"openlineage.concurrency": 1})
    never = threading.Event()  # the 9th event and later are never answered
    with FakeServer() as server:
        server.script(lambda request: Answer(201, hold=never if len(server.requests) > 8
                                             else None))
        killed = subprocess.Popen(cli_command("export", "-w", str(ws.root)),
                                  env=cli_env(tmp_path, OPENLINEAGE_URL=server.url),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert server.wait_for(9)
            # The two runs whose events were all accepted reach the ledger within a second.
            wait_until(lambda: delivered_runs(tmp_path / "state" / "ledger.sqlite") == 2,
                       "the ledger to hold the two runs accepted")
        finally:
            killed.send_signal(signal.SIGKILL)
            killed.communicate()
        lines = status(ws, tmp_path).splitlines()
    assert lines[0] == "6 runs on the trail"
    assert lines[1].startswith(f"{server.url}/api/v1/lineage: 2 of 6 runs exported; 4 pending")
    assert lines[2].startswith("  last export: started ")
    assert lines[2].endswith("not finished: still running, or killed (the next export sends "
                             "what it did not record)")

