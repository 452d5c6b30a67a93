"""The record step: the one writer of the report and the ledger, and the one redaction point."""

from __future__ import annotations

import threading
from pathlib import Path

from openlineage_export.deliver.destination import Retry, RunOutcome
from openlineage_export.export.recording import Recorder
from openlineage_export.export.report import ExportReport, Progress, RunResult
from openlineage_export.guards.secrecy import Redactor
from openlineage_export.hub.model import BadEntry
from openlineage_export.state.index import RunIndex, Winner
from openlineage_export.state.ledger import Ledger
from openlineage_export.translate.encoded import TranslatedRun

KEY = "k3y+S3cr/et=0123"
WINNER = Winner("trace-1", 0, 1, b"f" * 12)


def run(trace_id: str = "trace-1", events: int = 4) -> TranslatedRun:
    return TranslatedRun.of(
        trace_id, "daily-sales", f"id-{trace_id}", "succeeded", [{"n": i} for i in range(events)]
    )


def recorder(
    tmp_path: Path, *, cancel: threading.Event | None = None
) -> tuple[Recorder, Ledger, list[object]]:
    heard: list[object] = []
    report = ExportReport(destination="", dry_run=False)
    rec = Recorder(
        report,
        cancel or threading.Event(),
        on_bad_entry=heard.append,
        on_run=heard.append,
        on_progress=heard.append,
        on_retry=heard.append,
        on_warning=heard.append,
    )
    rec.destination("https://lineage.test/api/v1/lineage", Redactor(KEY))
    ledger = Ledger(tmp_path / "ledger.sqlite")
    rec.use_ledger(ledger, str(tmp_path / "ws"), b"c" * 12, "acme")
    return rec, ledger, heard


def pending_after(ledger: Ledger, tmp_path: Path, destination_id: int) -> bool:
    index = RunIndex(tmp_path)
    index.put(WINNER.trace_id, "daily-sales", WINNER.segment, WINNER.line, WINNER.fingerprint)
    try:
        (classified,) = ledger.classify(index, destination_id, b"c" * 12)
        return classified.pending
    finally:
        index.close()


def test_a_delivered_run_is_counted_recorded_and_told(tmp_path: Path) -> None:
    rec, ledger, heard = recorder(tmp_path)
    rec.outcome(run(), WINNER, RunOutcome(4))
    report = rec.report
    assert (report.runs_sent, report.events_sent, report.runs_failed) == (1, 4, 0)
    assert [h.state for h in heard if isinstance(h, RunResult)] == ["sent"]
    assert isinstance(heard[-1], Progress) and heard[-1].runs_done == 1
    ledger.flush()
    assert rec.destination_id is not None
    assert not pending_after(ledger, tmp_path, rec.destination_id)


def test_a_refusal_is_redacted_once_before_the_report_the_ledger_and_the_host_see_it(
    tmp_path: Path,
) -> None:
    rec, ledger, heard = recorder(tmp_path)
    echo = f"HTTP 400: bad token {KEY.replace('+', '%2B').replace('/', '%2F')}"
    rec.outcome(run(), WINNER, RunOutcome(1, echo))
    (failed,) = rec.report.failed
    assert failed.reason == "HTTP 400: bad token ***" and failed.events_accepted == 1
    told = [h for h in heard if isinstance(h, RunResult)]
    assert told[0].state == "failed" and told[0].reason == failed.reason
    ledger.flush()
    stored = ledger.db.execute("SELECT reason, state FROM runs").fetchall()
    assert stored == [("HTTP 400: bad token ***", "failed")]
    assert rec.destination_id is not None and pending_after(ledger, tmp_path, rec.destination_id)


def test_a_run_cut_short_by_a_cancel_is_interrupted_not_failed_and_not_recorded(
    tmp_path: Path,
) -> None:
    cancel = threading.Event()
    rec, ledger, heard = recorder(tmp_path, cancel=cancel)
    cancel.set()
    rec.outcome(run(), WINNER, RunOutcome(2, "cancelled before every event was sent"))
    assert rec.report.runs_failed == 0 and rec.report.events_sent == 2
    assert [h.state for h in heard if isinstance(h, RunResult)] == ["interrupted"]
    ledger.flush()
    assert ledger.db.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_retries_outages_and_bad_entries_reach_the_host_redacted(tmp_path: Path) -> None:
    rec, _, heard = recorder(tmp_path)
    rec.retry(Retry("https://lineage.test/api/v1/lineage", f"HTTP 503: {KEY}", 2, 7.5))
    rec.bad_entry(BadEntry("audit/000001.jsonl", 3, "not JSON"))
    rec.outage(f"the server said {KEY}")
    (retry,) = [h for h in heard if isinstance(h, Retry)]
    assert (retry.reason, retry.attempt, retry.seconds_left) == ("HTTP 503: ***", 2, 7.5)
    assert rec.report.outage == "the server said ***" and rec.report.bad_entries == 1
    assert any(isinstance(h, BadEntry) for h in heard)


def test_how_the_export_ended_is_written_to_the_ledger(tmp_path: Path) -> None:
    for cancelled, outage, expected in [
        (False, None, "finished"),
        (True, None, "interrupted"),
        (False, "gone", "stopped"),
    ]:
        folder = tmp_path / expected
        folder.mkdir()
        rec, ledger, _ = recorder(folder)
        if outage:
            rec.outage(outage)
        rec.finish(cancelled=cancelled)
        (status,) = ledger.status(str(folder / "ws"))
        assert status.last_export_outcome == expected and rec.report.cancelled is cancelled
        ledger.close()


def test_a_namespace_change_is_warned_of_before_anything_is_sent(tmp_path: Path) -> None:
    _, ledger, _ = recorder(tmp_path)
    ledger.close()
    heard: list[object] = []
    rec = Recorder(
        ExportReport(destination="", dry_run=False), threading.Event(), on_warning=heard.append
    )
    rec.destination("https://lineage.test/api/v1/lineage", Redactor())
    rec.use_ledger(Ledger(tmp_path / "ledger.sqlite"), str(tmp_path / "ws"), b"c" * 12, "other")
    (warning,) = heard
    assert "'other'" in str(warning) and "'acme'" in str(warning)
    assert rec.report.warnings == [warning]
