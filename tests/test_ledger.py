"""The ledger: only new or changed runs are sent; an interrupted export loses nothing."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from helpers import WorkspaceMaker, run_record, stage_record

from openlineage_export.export import ExportRequest, run_export
from openlineage_export.report import ExportReport
from openlineage_export.state.ledger import Ledger


class Server:
    """An in-process OpenLineage endpoint behind httpx.MockTransport (the host's HTTP seam)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.refuse: set[str] = set()  # run ids answered with 400
        self.after: tuple[int, threading.Event] | None = None  # set the event after N events
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        event = orjson.loads(request.content)
        with self.lock:
            if event["run"]["runId"] in self.refuse:
                return httpx.Response(400, json={"error": "no"})
            self.events.append(event)
            if self.after is not None and len(self.events) >= self.after[0]:
                self.after[1].set()
        return httpx.Response(201)

    def runs(self) -> set[str]:
        return {e["run"]["runId"] for e in self.events}


def export(ws: WorkspaceMaker, server: Server, tmp_path: Path, **options: Any) -> ExportReport:
    ws.settings({"openlineage.url": options.pop("url", "http://lineage.test"),
                 "openlineage.concurrency": options.pop("concurrency", 4),
                 **options.pop("settings", {})})
    return run_export(ExportRequest(
        workspace=ws.root, http=httpx.MockTransport(server),
        environ={"OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state")}, **options))


def trail(ws: WorkspaceMaker, runs: int = 10) -> None:
    ws.segment("000001.jsonl", [run_record(f"run-{i}") for i in range(runs)])


def test_second_export_of_an_unchanged_trail_sends_nothing(ws: WorkspaceMaker,
                                                           tmp_path: Path) -> None:
    trail(ws)
    server = Server()
    first = export(ws, server, tmp_path)
    assert (first.runs_sent, first.runs_unchanged, first.exit_code) == (10, 0, 0)
    sent = len(server.events)
    second = export(ws, server, tmp_path)
    assert (second.runs_sent, second.runs_unchanged, second.events_sent) == (0, 10, 0)
    assert len(server.events) == sent


def test_only_runs_whose_record_changed_are_sent_again(ws: WorkspaceMaker,
                                                       tmp_path: Path) -> None:
    ws.segment("000001.jsonl", [run_record("a"), run_record("b", status="running",
                                                            stages=[stage_record(status="running")])])
    server = Server()
    export(ws, server, tmp_path)
    ws.segment("000002.jsonl", [run_record("b", status="succeeded")])  # b has ended
    server.events.clear()
    report = export(ws, server, tmp_path)
    assert (report.runs_sent, report.runs_unchanged) == (1, 1)
    assert [e["eventType"] for e in server.events] == ["START", "START", "COMPLETE", "COMPLETE"]


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
        ws: WorkspaceMaker, tmp_path: Path) -> None:
    trail(ws, 3)
    export(ws, Server(), tmp_path)
    report = export(ws, Server(), tmp_path, settings={"openlineage.namespace": "renamed"})
    assert report.runs_sent == 3


def test_refused_runs_are_recorded_failed_and_retried_next_time(ws: WorkspaceMaker,
                                                                tmp_path: Path) -> None:
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
    trail(ws, 40)
    server = Server()
    cancel = threading.Event()
    server.after = (30, cancel)
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
        run_export(ExportRequest(workspace=ws.root, dry_run=True, output=stream,
                                 environ={"OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "s")}))
    assert not (tmp_path / "s").exists()


def test_status_counts_exported_pending_and_failed(ws: WorkspaceMaker, tmp_path: Path) -> None:
    from openlineage_export.status import export_status

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


def test_ledger_file_is_private_and_outside_the_workspace(ws: WorkspaceMaker,
                                                          tmp_path: Path) -> None:
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


@pytest.fixture(autouse=True)
def _settings_dir(ws: WorkspaceMaker) -> None:
    (ws.root / ".workspace").mkdir(exist_ok=True)
