"""One audit line -> one run, or why not (hub/records.py): times, leap seconds, the trusted
second reading."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import WorkspaceMaker, run_record, stage_record
from hubwriter.synth import write_workspace

from openlineage_export.export import ExportRequest, run_export
from openlineage_export.hub.model import BadRecord
from openlineage_export.hub.records import kind_of, parse_run, parse_trusted
from openlineage_export.hub.times import ends_before_start, normalise_time, parse_time
from openlineage_export.translate.ids import pipeline_run_id


def line(record: dict[str, object]) -> bytes:
    return json.dumps(record).encode()


@pytest.mark.parametrize(
    ("value", "normal"),
    [
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59.999999Z"),
        ("2016-12-31t23:59:60.5z", "2016-12-31T23:59:59.999999Z"),
        ("2016-12-31 18:59:60-05:00", "2016-12-31T18:59:59.999999-05:00"),
        ("2015-07-01T01:59:60.123456789+02:00", "2015-07-01T01:59:59.999999+02:00"),
    ],
)
def test_a_leap_second_is_accepted_and_written_as_a_time_servers_can_store(
    value: str, normal: str
) -> None:
    # RFC 3339 allows second 60; Marquez and DataHub (java.time) refuse it in an event.
    assert normalise_time(value, "startedAt") == normal
    assert parse_time(value).astimezone(UTC) == datetime(
        *((2016, 12, 31) if value.startswith("2016") else (2015, 6, 30)),
        23,
        59,
        59,
        999_999,
        tzinfo=UTC,
    )
    run = parse_run(line(run_record("leap", startedAt=value, endedAt=value)))
    assert run.started_at == run.ended_at == normal


@pytest.mark.parametrize(
    "value", ["2016-12-31T12:00:60Z", "2016-12-31T23:59:61Z", "2016-12-31T23:59:60+01:00"]
)
def test_a_second_60_that_is_no_leap_second_is_refused(value: str) -> None:
    with pytest.raises(BadRecord, match="is not a valid time"):
        normalise_time(value, "startedAt")


@pytest.mark.parametrize(
    ("value", "utc"),
    [
        ("2026-11-02T02:00:00+18:30", "2026-11-01T07:30:00Z"),
        ("2026-11-02t02:00:00.5-19:00", "2026-11-02T21:00:00.5Z"),
        ("2026-11-02 02:00:00+23:59", "2026-11-01T02:01:00Z"),
        ("2026-11-02T02:00:00.123456789-18:01", "2026-11-02T20:01:00.123456789Z"),
        ("2017-01-01T22:59:60.5+23:00", "2016-12-31T23:59:59.999999Z"),  # a leap second
    ],
)
def test_an_offset_beyond_18_hours_is_delivered_as_the_same_instant_in_utc(
    ws: WorkspaceMaker, value: str, utc: str
) -> None:
    """Issue 30, 12: RFC 3339 allows offsets to ±23:59; java.time reads ±18:00 only (Marquez
    answers a 500 beyond). Such a time is no bad entry: it is sent as the same instant in UTC,
    and ±18:00 itself as it is. The second pass (which trusts the first) writes it the same."""
    ws.segment(
        "000001.jsonl",
        [
            run_record("a", pipeline="p-a", startedAt="2026-11-02T02:00:00+18:00", stages=[]),
            run_record("b", pipeline="p-b", stages=[stage_record(startedAt=value)]),
            run_record("c", pipeline="p-c", startedAt=value, endedAt=value, stages=[]),
        ],
    )
    out = io.BytesIO()
    bad: list[object] = []
    report = run_export(ExportRequest(ws.root, dry_run=True, output=out, on_bad_entry=bad.append))
    assert [str(entry) for entry in bad] == [] and report.runs_total == 3
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    times = {(e["job"]["name"], e["eventType"]): e["eventTime"] for e in events}
    assert times[("p-a", "START")] == "2026-11-02T02:00:00+18:00"
    assert times[("p-b.extract", "START")] == utc
    assert times[("p-c", "START")] == times[("p-c", "COMPLETE")] == utc


def test_a_leap_second_gives_the_same_run_id_everywhere(ws: WorkspaceMaker) -> None:
    ws.segment(
        "000001.jsonl",
        [
            run_record(
                "leap-run",
                startedAt="2016-12-31T23:59:60Z",
                endedAt="2017-01-01T00:00:01Z",
                stages=[],
            )
        ],
    )
    outputs = []
    for _ in range(2):
        out = io.BytesIO()
        report = run_export(ExportRequest(ws.root, dry_run=True, output=out))
        assert report.exit_code == 0 and report.bad_entries == 0
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1]
    start = json.loads(outputs[0].splitlines()[0])
    assert start["eventTime"] == "2016-12-31T23:59:59.999999Z"
    assert start["run"]["runId"] == pipeline_run_id(
        "test-ws", "daily-sales", "leap-run", "2016-12-31T23:59:59.999999Z"
    )


def test_the_second_reading_trusts_what_the_first_checked(tmp_path: Path) -> None:
    # Every run line of a varied trail (other offsets, lower-case t/z, retries, skipped and
    # running stages...): decoded without the checks, it is the very run the checks give.
    root = tmp_path / "ws"
    write_workspace(root, 400, seed=11, gzip_closed=False, running_tail=5)
    audit = root / ".workspace" / "lineage" / "audit"
    odd = [
        line(
            run_record(
                "lower",
                startedAt="2026-11-02t02:00:00.5z",
                endedAt="2026-11-02 03:00:00+02:00",
                stages=[
                    stage_record(status="running", endedAt="x"),
                    stage_record("s", status="skipped", endedAt="y"),
                ],
            )
        ),
        line(run_record("leap", startedAt="2016-12-31T23:59:60.25Z")),
    ]
    checked = 0
    for raw in [*(b for p in sorted(audit.iterdir()) for b in p.read_bytes().splitlines()), *odd]:
        try:
            if kind_of(raw)[0] != "run":
                continue
            expected = parse_run(raw)
        except (BadRecord, ValueError):
            continue
        assert parse_trusted(raw) == expected
        checked += 1
    assert checked > 400


def test_what_ends_before_it_starts_is_named() -> None:
    run = parse_run(
        line(
            run_record(
                "r",
                startedAt="2026-11-02T02:00:00.120Z",
                endedAt="2026-11-02T01:00:00Z",
                stages=[
                    stage_record(
                        "a", startedAt="2026-11-02T02:00:00+01:00", endedAt="2026-11-02T01:30:00Z"
                    ),
                    stage_record(
                        "b",
                        attempt=2,
                        startedAt="2026-11-02T02:00:00.5Z",
                        endedAt="2026-11-02T02:00:00.4Z",
                    ),
                ],
            )
        )
    )
    assert ends_before_start(run) == [
        "ends (2026-11-02T01:00:00Z) before it starts (2026-11-02T02:00:00.120Z)",
        "stage 'b' attempt 2 ends (2026-11-02T02:00:00.4Z) before it starts "
        "(2026-11-02T02:00:00.5Z)",
    ]


def test_a_run_that_ends_before_it_starts_is_exported_with_a_warning(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.segment(
        "000001.jsonl",
        [
            run_record("fine"),
            run_record(
                "backwards", startedAt="2026-11-02T02:00:00Z", endedAt="2026-11-02T01:59:59Z"
            ),
        ],
    )
    out = io.BytesIO()
    report = run_export(ExportRequest(ws.root, dry_run=True, output=out))
    assert report.exit_code == 0 and report.runs_sent == 2
    assert report.warnings == [
        ".workspace/lineage/audit/000001.jsonl:2: run 'backwards' ends (2026-11-02T01:59:59Z) "
        "before it starts (2026-11-02T02:00:00Z); exported as recorded"
    ]
    times = [json.loads(e)["eventTime"] for e in out.getvalue().splitlines()]
    assert "2026-11-02T01:59:59Z" in times


_HOSTILE_STRINGS = [
    b'"\\' * 2_000,  # attacker B's F01: an unterminated string of escaped quotes
    b'"\\' * 2_000 + b'"',
    b'"abc\\',  # a backslash as the line's last byte
    b'"a\\\n"b',  # an escaped newline
    b'"' * 3_001,
    b'"\\\\"\\"[{',
]


@pytest.mark.parametrize("tail", _HOSTILE_STRINGS)
def test_nesting_is_counted_in_one_pass_however_the_strings_end(tail: bytes) -> None:
    """Found by attacker B (F01): the string pattern failed at every quote of an unterminated
    ``"\\"\\...`` and rescanned the rest of the line from each (a 64 KiB line: a minute of CPU,
    a 32 MiB one: days). It must match at every quote it is tried at (a match is never retried
    from the next quote inside it), which is what keeps the pass linear."""
    from openlineage_export.hub import records

    line = b'{"kind":"run",' + b"[" * (records.MAX_NESTING + 1) + tail
    position = 0
    while (position := line.find(b'"', position)) != -1:
        match = records._STRING.match(line, position)
        assert match is not None, f"the string at byte {position} does not match"
        position = match.end()
    with pytest.raises(BadRecord, match="nested more than 500 levels"):
        kind_of(line)
