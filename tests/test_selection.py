"""A part of the trail (selection.py): the WHEN parser, the Selection value, and the export of
the selected runs through the library, instants given (no clock)."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from helpers import WorkspaceMaker, run_record

from openlineage_export.errors import ConfigError
from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.opening import open_workspace
from openlineage_export.export.scanning import scan_trail
from openlineage_export.export.selection import WHEN_FORMS, Selection, instant_text, parse_when
from openlineage_export.export.status import export_status
from openlineage_export.hub.times import microseconds, start_microseconds

NOW = datetime(2026, 11, 10, 12, 0, 0, tzinfo=UTC)
CET = timezone(timedelta(hours=1))


# -- WHEN -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-01", datetime(2026, 11, 1, tzinfo=UTC)),
        ("2024-02-29", datetime(2024, 2, 29, tzinfo=UTC)),
        ("2026-11-03T10:00:00Z", datetime(2026, 11, 3, 10, tzinfo=UTC)),
        ("2026-11-03t10:00:00z", datetime(2026, 11, 3, 10, tzinfo=UTC)),
        ("2026-11-03T10:00:00+01:00", datetime(2026, 11, 3, 10, tzinfo=CET)),
        ("2026-11-03T10:00:00.250-05:30", datetime(2026, 11, 3, 15, 30, 0, 250000, tzinfo=UTC)),
        ("2026-11-03 10:00:00+00:00", datetime(2026, 11, 3, 10, tzinfo=UTC)),
        ("90s", NOW - timedelta(seconds=90)),
        ("30m", NOW - timedelta(minutes=30)),
        ("12h", NOW - timedelta(hours=12)),
        ("7d", NOW - timedelta(days=7)),
        ("2w", NOW - timedelta(weeks=2)),
        ("0s", NOW),
        (" 7d ", NOW - timedelta(days=7)),
    ],
)
def test_when_reads_a_date_a_time_with_an_offset_and_a_duration(
    text: str, expected: datetime
) -> None:
    got = parse_when(text, NOW)
    assert got == expected and got.utcoffset() is not None


def test_an_offset_names_the_instant_it_is() -> None:
    # The same instant, three ways: they compare, and index, as one.
    ways = ["2026-11-03T10:00:00+01:00", "2026-11-03T09:00:00Z", "2026-11-03T04:00:00-05:00"]
    instants = {parse_when(w, NOW) for w in ways}
    assert len(instants) == 1
    assert {microseconds(parse_when(w, NOW)) for w in ways} == {start_microseconds(ways[1])}
    # A date is midnight UTC, whatever the machine's zone.
    assert parse_when("2026-11-03", NOW) == parse_when("2026-11-03T01:00:00+01:00", NOW)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("yesterday", "is not a date (2026-11-01), an RFC 3339 time with an offset"),
        ("7 days", "or a duration back from now (7d, 12h, 30m, 2w, 90s)"),
        ("-7d", "is not a date"),
        ("7y", "is not a date"),
        ("7D", "is not a date"),
        ("1d12h", "is not a date"),
        ("", "is not a date"),
        ("2026-11-03T10:00:00", "has no UTC offset: add Z for UTC, or one such as +01:00"),
        ("2026-11-03T25:00:00Z", "is not a valid time"),
        ("2026-11-03T10:00:00+24:00", "is not a valid time"),
        ("2026-11-03T10:00Z", "is not a date"),
        ("99999999999w", "reaches back further than a date can (year 1)"),
        ("1" * 5000 + "d", "reaches back further than a date can (year 1)"),
        ("\u0662\u0660\u0662\u0666-11-01", "is not a date"),  # Arabic-Indic digits: not here
        ("7\uff44", "is not a date"),  # a fullwidth d
    ],
)
def test_when_refuses_what_is_none_of_its_forms(text: str, said: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_when(text, NOW)
    assert said in str(raised.value)


@pytest.mark.parametrize("text", ["2026-13-01", "2026-02-30"])
def test_a_date_of_the_right_form_that_is_no_day_is_refused_with_why(text: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_when(text, NOW)
    said = str(raised.value)
    # The why is Python's own wording (it changes between versions): said, not matched.
    assert said.startswith("is not a date (") and said.endswith(")"), said
    assert WHEN_FORMS not in said and len(said) > len("is not a date ()"), said


def test_instants_are_written_in_the_offset_they_were_given_in() -> None:
    assert instant_text(datetime(2026, 11, 1, tzinfo=UTC)) == "2026-11-01T00:00:00Z"
    assert instant_text(datetime(2026, 11, 3, 10, tzinfo=CET)) == "2026-11-03T10:00:00+01:00"


# -- the Selection value ----------------------------------------------------------------------


def test_a_selection_holds_instants_in_order() -> None:
    with pytest.raises(ConfigError, match="has no time zone"):
        Selection(since=datetime(2026, 11, 1))
    with pytest.raises(ConfigError, match=r"since \(2026-11-03T00:00:00Z\) is not before"):
        Selection(since=datetime(2026, 11, 3, tzinfo=UTC), until=datetime(2026, 11, 3, tzinfo=UTC))
    with pytest.raises(TypeError):
        Selection(pipelines="daily-sales")  # type: ignore[arg-type]
    both = Selection(("a", "b", "a"), datetime(2026, 11, 1, tzinfo=UTC), NOW)
    assert both.pipelines == ("a", "b")
    assert both.describe() == (
        "pipelines a, b; started at or after 2026-11-01T00:00:00Z and before 2026-11-10T12:00:00Z"
    )
    assert both.to_dict() == {
        "pipelines": ["a", "b"],
        "since": "2026-11-01T00:00:00Z",
        "until": "2026-11-10T12:00:00Z",
    }
    assert Selection().takes_every_run and not Selection(("a",)).takes_every_run
    only = both.run_filter()
    assert only.since == microseconds(datetime(2026, 11, 1, tzinfo=UTC)) and only.timed


# -- the export, through the library ----------------------------------------------------------

GRAPH = {
    "format": "lineage-hub/graph@1",
    "workspace": {"name": "sel"},
    "pipelines": [
        {"id": "alpha", "stages": [{"id": "extract"}]},
        {"id": "beta", "stages": [{"id": "extract"}]},
        {"id": "gamma", "stages": [{"id": "extract"}]},
    ],
}


def uuid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def timed_run(n: int, pipeline: str, started: str, **extra: Any) -> dict[str, Any]:
    return run_record(uuid(n), pipeline=pipeline, startedAt=started, **extra)


def make_trail(ws: WorkspaceMaker) -> None:
    """Runs around the edges of 2026-11-03T00:00Z .. 2026-11-04T00:00Z, in other offsets too."""
    ws.graph(GRAPH)
    ws.segment(
        "000001.jsonl.gz",
        [
            timed_run(1, "alpha", "2026-11-02T23:59:59.999Z"),  # just before
            timed_run(2, "alpha", "2026-11-03T00:00:00Z"),  # at since: in
            timed_run(3, "beta", "2026-11-03T00:30:00+01:00"),  # 23:30Z the day before: out
            timed_run(4, "beta", "2026-11-02T20:00:00-05:00"),  # 01:00Z: in
            # 5 starts in the window here, but its last record (below) starts after it
            timed_run(5, "alpha", "2026-11-03T12:00:00Z", status="running"),
        ],
    )
    ws.segment(
        "000002.jsonl",
        [
            timed_run(6, "alpha", "2026-11-03T23:59:59.999999Z"),  # in
            timed_run(7, "alpha", "2026-11-04T00:00:00Z"),  # at until: out
            timed_run(8, "beta", "2026-11-04T00:30:00+01:00"),  # 23:30Z: in
            timed_run(5, "alpha", "2026-11-05T12:00:00Z"),
            timed_run(9, "legacy", "2026-11-03T06:00:00Z"),  # deleted from the graph: in
        ],
    )


WINDOW = Selection(since=datetime(2026, 11, 3, tzinfo=UTC), until=datetime(2026, 11, 4, tzinfo=UTC))


def dry_run(ws: WorkspaceMaker, selection: Selection | None = None) -> tuple[Any, list[bytes]]:
    out = io.BytesIO()
    report = run_export(ExportRequest(ws.root, dry_run=True, output=out, selection=selection))
    return report, out.getvalue().splitlines()


def editor_run(line: bytes) -> str:
    event = json.loads(line)
    parent = event["run"]["facets"].get("parent")
    return str(parent["run"]["runId"] if parent else event["run"]["runId"])


@pytest.mark.parametrize(
    ("selection", "runs"),
    [
        (WINDOW, {2, 4, 6, 8, 9}),
        (Selection(("alpha",)), {1, 2, 5, 6, 7}),
        (Selection(("alpha", "legacy"), until=datetime(2026, 11, 4, tzinfo=UTC)), {1, 2, 6, 9}),
        (Selection(("beta",), since=datetime(2026, 11, 3, 0, 30, tzinfo=CET)), {3, 4, 8}),
        (Selection(("gamma",)), set()),
    ],
)
def test_the_selected_runs_are_built_as_the_whole_trail_builds_them(
    ws: WorkspaceMaker, selection: Selection, runs: set[int]
) -> None:
    make_trail(ws)
    whole, every_line = dry_run(ws)
    report, lines = dry_run(ws, selection)
    wanted = {uuid(n) for n in runs}
    assert lines == [line for line in every_line if editor_run(line) in wanted]
    assert report.runs_total == report.runs_sent == len(runs)
    assert report.runs_on_trail == whole.runs_total == 9
    assert report.selection == selection and whole.selection is None
    assert report.to_dict()["selection"]["runsSelected"] == len(runs)
    # Never run: the graph's pipelines with no run on the trail (of those named, if any).
    named = selection.pipelines or ("alpha", "beta", "gamma")
    assert report.never_run == (["gamma"] if "gamma" in named else [])
    assert report.exit_code == 0


def test_an_empty_selection_is_no_selection(ws: WorkspaceMaker) -> None:
    make_trail(ws)
    report, _ = dry_run(ws, Selection())
    assert report.selection is None and report.to_dict()["selection"] is None
    assert report.never_run == ["gamma"]


def test_an_unknown_pipeline_is_named_with_the_graphs(ws: WorkspaceMaker) -> None:
    make_trail(ws)
    with pytest.raises(ConfigError) as raised:
        dry_run(ws, Selection(("alpha", "nope", "legacy")))
    message = str(raised.value)
    assert "'nope'" in message and "'alpha'" not in message and "'legacy'" not in message
    assert message.endswith("the graph's pipelines: alpha, beta, gamma")
    assert "\n" not in message


def test_the_list_of_the_graphs_pipelines_is_bounded(ws: WorkspaceMaker) -> None:
    ws.graph({**GRAPH, "pipelines": [{"id": f"p{i:02d}"} for i in range(45)]})
    with pytest.raises(ConfigError) as raised:
        dry_run(ws, Selection(tuple(f"x{i}" for i in range(8))))
    message = str(raised.value)
    assert "no pipelines 'x0', 'x1', 'x2', 'x3', 'x4' and 3 more in the graph" in message
    assert "p19 and 25 more" in message and "p20" not in message


def test_a_scan_without_start_times_cannot_select_by_time(ws: WorkspaceMaker) -> None:
    make_trail(ws)
    opened = open_workspace(ws.root, None, {}, lambda _: None)
    scan = scan_trail(opened, lambda _: None)
    try:
        with pytest.raises(ValueError, match="keeps no start times"):
            scan.index.count(WINDOW.run_filter())
        assert scan.index.count(Selection(("beta",)).run_filter()) == 3
    finally:
        scan.index.close()


def test_the_runs_left_out_stay_pending_and_full_sends_only_the_selected(
    ws: WorkspaceMaker, tmp_path: Path, environ: dict[str, str]
) -> None:
    make_trail(ws)
    events = tmp_path / "events.jsonl"
    environ = {**environ, "OPENLINEAGE_TRANSPORT": "file", "OPENLINEAGE_FILE_PATH": str(events)}

    def export(selection: Selection | None, *, full: bool = False) -> Any:
        before = events.read_bytes().splitlines() if events.exists() else []
        report = run_export(ExportRequest(ws.root, environ=environ, selection=selection, full=full))
        return report, {
            editor_run(line) for line in events.read_bytes().splitlines()[len(before) :]
        }

    def pending() -> int:
        (state,) = export_status(ws.root, environ).destinations
        return state.pending

    report, sent = export(WINDOW)
    assert sent == {uuid(n) for n in (2, 4, 6, 8, 9)} and report.runs_sent == 5
    assert pending() == 4
    report, sent = export(WINDOW, full=True)
    assert sent == {uuid(n) for n in (2, 4, 6, 8, 9)} and report.runs_sent == 5
    assert pending() == 4
    report, sent = export(None)
    assert sent == {uuid(n) for n in (1, 3, 5, 7)}
    assert (report.runs_sent, report.runs_unchanged, pending()) == (4, 5, 0)
