"""The audit trail reader, per the contract: order, gzip, kinds, last record wins, bad lines."""

from __future__ import annotations

import gzip

import pytest
from helpers import WorkspaceMaker, run_record, stage_record

from openlineage_export.errors import WorkspaceError
from openlineage_export.hub.model import BadEntry
from openlineage_export.hub.trail import MAX_LINE_BYTES, AuditTrail


def read(ws: WorkspaceMaker) -> tuple[list, list[BadEntry], object]:
    bad: list[BadEntry] = []
    trail = AuditTrail(ws.audit, display_root=ws.root)
    scan = trail.scan(bad.append)
    runs = [run for run, _ in trail.runs(scan, scan.index.in_trail_order())]
    return runs, bad, scan


def test_segments_are_read_in_name_order_and_gzip_is_read(ws: WorkspaceMaker) -> None:
    ws.segment("000002.jsonl", [run_record("b")])
    ws.segment("000001.jsonl.gz", [run_record("a")])
    ws.segment("000003.jsonl", [run_record("c")])
    runs, bad, _ = read(ws)
    assert [r.trace_id for r in runs] == ["a", "b", "c"]
    assert bad == []


def test_other_kinds_are_ignored(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [{"kind": "edit", "file": "x"}, run_record("a"),
                                {"kind": "export", "traceId": 5}])
    runs, bad, scan = read(ws)
    assert [r.trace_id for r in runs] == ["a"] and bad == []
    assert scan.lines == 3 and scan.run_lines == 1


def test_last_record_of_a_trace_id_wins_across_segments(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl.gz", [run_record("a", status="running",
                                              stages=[stage_record(status="running")])])
    ws.segment("000002.jsonl", [run_record("b"), run_record("a", status="failed")])
    runs, _, scan = read(ws)
    assert scan.runs == 2
    assert {r.trace_id: r.status for r in runs} == {"a": "failed", "b": "succeeded"}


def test_a_bad_later_record_does_not_erase_the_last_good_one(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record("a", status="running", stages=[]),
                                run_record("a", status="finished")])
    runs, bad, _ = read(ws)
    assert [(r.trace_id, r.status) for r in runs] == [("a", "running")]
    assert len(bad) == 1 and bad[0].line == 2
    assert "status 'finished' is not one of" in bad[0].reason


def test_half_written_last_line_of_newest_segment_is_not_an_error(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record("a")])
    ws.segment("000002.jsonl", [run_record("b"), '{"kind": "run", "traceId": "c", "pipel'],
               end_newline=False)
    runs, bad, scan = read(ws)
    assert [r.trace_id for r in runs] == ["a", "b"]
    assert bad == [] and scan.incomplete_tail


def test_a_truncated_line_elsewhere_is_a_bad_entry(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record("a"), '{"kind": "run", "traceId": "c", "pipel'])
    ws.segment("000002.jsonl", [run_record("b")])
    runs, bad, _ = read(ws)
    assert [r.trace_id for r in runs] == ["a", "b"]
    assert [(b.file, b.line) for b in bad] == [(".workspace/lineage/audit/000001.jsonl", 2)]
    assert bad[0].reason.startswith("not JSON")


@pytest.mark.parametrize(("record", "expected"), [
    ({"kind": "run", "pipeline": "p", "status": "succeeded"}, "missing required field traceId"),
    (run_record(traceId=7), "traceId must be a string, got a whole number"),
    (run_record(startedAt="2026-11-02T02:00:00"), "has no UTC offset"),
    (run_record(startedAt="yesterday"), "is not an RFC 3339 time"),
    (run_record(startedAt="2026-13-02T02:00:00Z"), "is not a valid time"),
    (run_record(status="done"), "status 'done' is not one of succeeded, failed, cancelled, running"),
    (run_record(endedAt=None), "missing required field endedAt (run is succeeded)"),
    (run_record(stages="x"), "stages must be a list, got a string"),
    (run_record(stages=[stage_record(attempt=0)]), "stages[0].attempt must be a whole number >= 1"),
    (run_record(stages=[stage_record(status="weird")]), "stages[0].status 'weird' is not one of"),
    (run_record(stages=[stage_record(startedAt=None)]), "missing required field stages[0].startedAt"),
    (run_record(stages=[stage_record(), stage_record()]), "attempt 1 appears twice"),
    (run_record(stages=[stage_record(reads=[{"digest": "x"}])]),
     "missing required field stages[0].reads[0].dataset"),
    (run_record(stages=[stage_record(writes=[{"dataset": "d", "rows": -1}])]), "stages[0].writes[0].rows must be a whole number >= 0"),
    (run_record(error={"type": "X"}), "missing required field error.message"),
    (run_record(engine="hub"), "engine must be an object, got a string"),
    ({"traceId": "a"}, "missing required field 'kind'"),
    ([1, 2], "not a JSON object"),
])
def test_each_malformed_record_is_named_with_file_line_and_reason(
        ws: WorkspaceMaker, record: object, expected: str) -> None:
    ws.segment("000001.jsonl", [run_record("good-1"), record, run_record("good-2")])  # type: ignore[list-item]
    runs, bad, _ = read(ws)
    assert [r.trace_id for r in runs] == ["good-1", "good-2"]
    assert len(bad) == 1
    assert bad[0].file == ".workspace/lineage/audit/000001.jsonl" and bad[0].line == 2
    assert expected in bad[0].reason, bad[0].reason


def test_bad_entry_names_the_trace_id_when_it_has_one(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record("r-9", status="nope")])
    _, bad, _ = read(ws)
    assert str(bad[0]).startswith(".workspace/lineage/audit/000001.jsonl:1: run 'r-9':")


def test_not_utf8_and_non_json_lines_are_bad_entries(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [b"\xff\xfe{}", b"not json", run_record("a")])
    runs, bad, _ = read(ws)
    assert [r.trace_id for r in runs] == ["a"]
    assert [b.line for b in bad] == [1, 2]


def test_optional_fields_default_and_skipped_stage_needs_no_times(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [{
        "kind": "run", "traceId": "a", "pipeline": "p", "status": "running",
        "startedAt": "2026-11-02T02:00:00+01:00",
        "stages": [{"stage": "s", "status": "skipped"}, {"stage": "t", "status": "running",
                                                          "startedAt": "2026-11-02T02:00:01+01:00"}],
    }])
    runs, bad, _ = read(ws)
    assert bad == []
    (run,) = runs
    assert run.ended_at is None and run.engine is None and run.stages[0].attempt == 1
    assert run.stages[0].started_at is None and run.stages[1].reads == ()


def test_times_are_normalised_to_upper_case_t_and_z(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record("a", startedAt="2026-11-02t02:00:00.5z",
                                           endedAt="2026-11-02 03:00:00+02:00")])
    (run,), bad, _ = read(ws)
    assert bad == []
    assert (run.started_at, run.ended_at) == ("2026-11-02T02:00:00.5Z", "2026-11-02T03:00:00+02:00")


def test_truncated_gzip_segment_keeps_what_was_readable(ws: WorkspaceMaker) -> None:
    data = gzip.compress(b"\n".join(
        __import__("json").dumps(run_record(f"r{i}")).encode() for i in range(200)) + b"\n")
    (ws.audit / "000001.jsonl.gz").write_bytes(data[: len(data) // 2])
    ws.segment("000002.jsonl", [run_record("later")])
    runs, bad, _ = read(ws)
    assert runs[-1].trace_id == "later" and len(runs) > 1
    assert len(bad) == 1 and "gzip segment is truncated or corrupt" in bad[0].reason
    assert bad[0].file.endswith("000001.jsonl.gz")


def test_huge_line_is_one_bad_entry(ws: WorkspaceMaker) -> None:
    huge = b'{"kind": "run", "x": "' + b"a" * (MAX_LINE_BYTES + 10) + b'"}'
    ws.segment("000001.jsonl", [huge, run_record("a")])
    runs, bad, _ = read(ws)
    assert [r.trace_id for r in runs] == ["a"]
    assert len(bad) == 1 and bad[0].line == 1 and "longer than" in bad[0].reason


def test_no_audit_folder_means_no_runs(ws: WorkspaceMaker) -> None:
    ws.audit.rmdir()
    runs, bad, _ = read(ws)
    assert runs == [] and bad == []


def test_a_segment_that_shrinks_between_passes_is_a_workspace_error(ws: WorkspaceMaker) -> None:
    path = ws.segment("000001.jsonl", [run_record("a"), run_record("b")])
    trail = AuditTrail(ws.audit, display_root=ws.root)
    scan = trail.scan(lambda entry: None)
    path.write_text("")
    with pytest.raises(WorkspaceError, match="got shorter"):
        list(trail.runs(scan, scan.index.in_trail_order()))


def test_the_index_holds_positions_on_disk_not_runs(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record(f"r{i}") for i in range(50)])
    ws.segment("000002.jsonl", [run_record("r7", status="failed")])
    trail = AuditTrail(ws.audit, display_root=ws.root)
    scan = trail.scan(lambda entry: None)
    assert scan.index.path.exists() and scan.runs == 50
    positions = [(w.segment, w.line) for w in scan.index.in_trail_order()]
    assert positions == sorted(positions) and positions[-1] == (1, 1)
    assert len(positions) == 50
    scan.index.close()
    assert not scan.index.path.exists()
