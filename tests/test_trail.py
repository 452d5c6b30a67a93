"""The audit trail reader, per the contract: order, gzip, kinds, last record wins, bad lines."""

from __future__ import annotations

import gzip
import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fakeserver import Answer, FakeServer
from helpers import WorkspaceMaker, cli_command, cli_env, read_position, run_record, stage_record

from openlineage_export.errors import WorkspaceError
from openlineage_export.hub.model import QUOTE_LIMIT, BadEntry
from openlineage_export.hub.segments import GZIP_FLOOR, MAX_GZIP_RATIO, MAX_LINE_BYTES
from openlineage_export.hub.trail import AuditTrail


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
    ws.segment(
        "000001.jsonl",
        [{"kind": "edit", "file": "x"}, run_record("a"), {"kind": "export", "traceId": 5}],
    )
    runs, bad, scan = read(ws)
    assert [r.trace_id for r in runs] == ["a"] and bad == []
    assert scan.lines == 3 and scan.run_lines == 1


def test_last_record_of_a_trace_id_wins_across_segments(ws: WorkspaceMaker) -> None:
    ws.segment(
        "000001.jsonl.gz",
        [run_record("a", status="running", stages=[stage_record(status="running")])],
    )
    ws.segment("000002.jsonl", [run_record("b"), run_record("a", status="failed")])
    runs, _, scan = read(ws)
    assert scan.runs == 2
    assert {r.trace_id: r.status for r in runs} == {"a": "failed", "b": "succeeded"}


def test_a_bad_later_record_does_not_erase_the_last_good_one(ws: WorkspaceMaker) -> None:
    ws.segment(
        "000001.jsonl",
        [run_record("a", status="running", stages=[]), run_record("a", status="finished")],
    )
    runs, bad, _ = read(ws)
    assert [(r.trace_id, r.status) for r in runs] == [("a", "running")]
    assert len(bad) == 1 and bad[0].line == 2
    assert "status 'finished' is not one of" in bad[0].reason


def test_half_written_last_line_of_newest_segment_is_not_an_error(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record("a")])
    ws.segment(
        "000002.jsonl",
        [run_record("b"), '{"kind": "run", "traceId": "c", "pipel'],
        end_newline=False,
    )
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


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"kind": "run", "pipeline": "p", "status": "succeeded"}, "missing required field traceId"),
        (run_record(traceId=7), "traceId must be a string, got a whole number"),
        (run_record(startedAt="2026-11-02T02:00:00"), "has no UTC offset"),
        (run_record(startedAt="yesterday"), "is not an RFC 3339 time"),
        (run_record(startedAt="2026-13-02T02:00:00Z"), "is not a valid time"),
        (
            run_record(status="done"),
            "status 'done' is not one of succeeded, failed, cancelled, running",
        ),
        (run_record(endedAt=None), "missing required field endedAt (run is succeeded)"),
        (run_record(stages="x"), "stages must be a list, got a string"),
        (
            run_record(stages=[stage_record(attempt=0)]),
            "stages[0].attempt must be a whole number >= 1",
        ),
        (
            run_record(stages=[stage_record(status="weird")]),
            "stages[0].status 'weird' is not one of",
        ),
        (
            run_record(stages=[stage_record(startedAt=None)]),
            "missing required field stages[0].startedAt",
        ),
        (run_record(stages=[stage_record(), stage_record()]), "attempt 1 appears twice"),
        (
            run_record(stages=[stage_record(reads=[{"digest": "x"}])]),
            "missing required field stages[0].reads[0].dataset",
        ),
        (
            run_record(stages=[stage_record(writes=[{"dataset": "d", "rows": -1}])]),
            "stages[0].writes[0].rows must be a whole number >= 0",
        ),
        (run_record(error={"type": "X"}), "missing required field error.message"),
        (run_record(engine="hub"), "engine must be an object, got a string"),
        ({"traceId": "a"}, "missing required field 'kind'"),
        ([1, 2], "not a JSON object"),
    ],
)
def test_each_malformed_record_is_named_with_file_line_and_reason(
    ws: WorkspaceMaker, record: object, expected: str
) -> None:
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
    ws.segment(
        "000001.jsonl",
        [
            {
                "kind": "run",
                "traceId": "a",
                "pipeline": "p",
                "status": "running",
                "startedAt": "2026-11-02T02:00:00+01:00",
                "stages": [
                    {"stage": "s", "status": "skipped"},
                    {"stage": "t", "status": "running", "startedAt": "2026-11-02T02:00:01+01:00"},
                ],
            }
        ],
    )
    runs, bad, _ = read(ws)
    assert bad == []
    (run,) = runs
    assert run.ended_at is None and run.engine is None and run.stages[0].attempt == 1
    assert run.stages[0].started_at is None and run.stages[1].reads == ()


def test_times_are_normalised_to_upper_case_t_and_z(ws: WorkspaceMaker) -> None:
    ws.segment(
        "000001.jsonl",
        [run_record("a", startedAt="2026-11-02t02:00:00.5z", endedAt="2026-11-02 03:00:00+02:00")],
    )
    (run,), bad, _ = read(ws)
    assert bad == []
    assert (run.started_at, run.ended_at) == ("2026-11-02T02:00:00.5Z", "2026-11-02T03:00:00+02:00")


def test_truncated_gzip_segment_keeps_what_was_readable(ws: WorkspaceMaker) -> None:
    data = gzip.compress(
        b"\n".join(__import__("json").dumps(run_record(f"r{i}")).encode() for i in range(200))
        + b"\n"
    )
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


def test_a_segment_rewritten_between_the_passes_leaves_its_runs_for_the_next_export(
    ws: WorkspaceMaker,
) -> None:
    ws.segment("000001.jsonl", [run_record("a"), run_record("b"), run_record("c")])
    ws.segment("000002.jsonl", [run_record("d")])
    trail = AuditTrail(ws.audit, display_root=ws.root)
    scan = trail.scan(lambda entry: None)
    ws.segment("000001.jsonl", [run_record("a"), run_record("B"), run_record("c")])
    bad: list[BadEntry] = []
    runs = [run.trace_id for run, _ in trail.runs(scan, scan.index.in_trail_order(), bad.append)]
    assert runs == ["a", "d"]
    assert [str(b) for b in bad] == [
        ".workspace/lineage/audit/000001.jsonl: line 2 changed while it was being exported; "
        "its 2 remaining runs were left for the next export"
    ]


def test_a_fifo_a_link_or_a_folder_among_the_segments_is_skipped_not_waited_on(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    import os

    ws.segment("000001.jsonl", [run_record("a")])
    os.mkfifo(ws.audit / "000002.jsonl")
    (ws.audit / "000003.jsonl").symlink_to("/dev/zero")
    (ws.audit / "000004.jsonl.gz").mkdir()
    (ws.audit / "000005.jsonl").symlink_to(ws.segment("elsewhere.txt", [run_record("e")]))
    ws.segment("000006.jsonl", [run_record("f")])
    done = subprocess.run(
        cli_command(
            "export", "--dry-run", "-w", str(ws.root), "-o", str(tmp_path / "events.jsonl")
        ),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("bad entry")] == [
        f"bad entry: .workspace/lineage/audit/{name}: skipped: it is {kind}, not a file of the "
        "audit trail"
        for name, kind in [
            ("000002.jsonl", "a named pipe (FIFO)"),
            ("000003.jsonl", "a link"),
            ("000004.jsonl.gz", "a folder"),
            ("000005.jsonl", "a link"),  # even to a file inside the workspace
        ]
    ]
    assert traced(tmp_path / "events.jsonl") == {"a", "f"}


# The trail changing under a running export, as the contract allows: a real export process
# reads while the test, playing the hub, appends to the newest segment or rotates a closed one.


def test_a_line_the_hub_finishes_while_it_is_read_is_left_for_the_next_export(
    make_workspace: Callable[..., WorkspaceMaker], tmp_path: Path
) -> None:
    # The newest segment ends in half a line; the hub finishes it (and writes more) right after
    # the export has read that half. Reading what the segment held when the export began, the
    # export leaves the line for next time instead of reading its rest as a line of its own.
    # The moment is observed (the export's read position in /proc), and a try in which the
    # export was already past it is made again: the premise is seen, never assumed.
    for attempt in range(20):
        outcome = _finish_the_line_while_it_is_read(
            make_workspace(f"try{attempt}"), tmp_path / f"export{attempt}"
        )
        if outcome is not None:
            break
    else:
        pytest.fail("in 20 tries, the export was never seen at the half line")
    root, out_file, err = outcome
    assert "bad entry" not in err and "Traceback" not in err
    assert traced(out_file) == {f"old-{i}" for i in range(100)} | {f"new-{i}" for i in range(10)}

    again = subprocess.run(
        cli_command(
            "export", "--dry-run", "-w", str(root), "-o", str(out_file.with_name("second.jsonl"))
        ),
        env=cli_env(out_file.parent),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert traced(out_file.with_name("second.jsonl")) >= {"big", *(f"later-{i}" for i in range(5))}


def _finish_the_line_while_it_is_read(
    ws: WorkspaceMaker, folder: Path
) -> tuple[Path, Path, str] | None:
    """One try: (workspace, the dry run's events, its stderr) once the half line was finished
    while the export read it; None when the export had read past it before that was seen."""
    folder.mkdir()
    ws.segment("000001.jsonl", [run_record(f"old-{i}") for i in range(100)])
    big = json.dumps(run_record("big", parameters={"blob": "x" * 6_000_000})).encode() + b"\n"
    half = len(big) // 2
    newest = ws.segment("000002.jsonl", [run_record(f"new-{i}") for i in range(10)])
    with newest.open("ab") as out:
        out.write(big[:half])
    size = newest.stat().st_size
    out_file = folder / "first.jsonl"
    export = subprocess.Popen(
        cli_command("export", "--dry-run", "-w", str(ws.root), "-o", str(out_file)),
        env=cli_env(folder),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while read_position(export.pid, newest) != size:
            if export.poll() is not None:
                export.communicate()
                return None
            assert time.monotonic() < deadline, "the export never opened the segment"
            time.sleep(0.0002)
        # The export has read up to the half line: what it reads now would be the rest.
        with newest.open("ab") as out:
            out.write(big[half:])
            out.write(
                b"".join(json.dumps(run_record(f"later-{i}")).encode() + b"\n" for i in range(5))
            )
        _, err = export.communicate(timeout=120)
    finally:
        if export.poll() is None:
            export.kill()
    assert export.returncode == 0, err
    return ws.root, out_file, err


def traced(events_file: Path) -> set[str]:
    """The trace ids of the pipeline runs in a dry run's output."""
    ids = set()
    for line in events_file.read_bytes().splitlines():
        event = json.loads(line)
        for tag in event["run"]["facets"].get("tags", {}).get("tags", []):
            if tag["key"] == "traceId":
                ids.add(tag["value"])
    return ids


def test_a_segment_rotated_during_the_export_is_followed_to_its_compressed_form(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    # The contract lets the hub gzip a closed segment (and remove the plain one) at any time,
    # and start a new segment. An export under way reads the same lines from the .gz.
    ws.segment("000001.jsonl", [run_record(f"one-{i}") for i in range(40)])
    closed = ws.segment("000002.jsonl", [run_record(f"two-{i}") for i in range(40)])
    rotated = threading.Event()
    with FakeServer() as server:
        # Past the 10th event the server answers once the rotation is done: the export, with
        # at most 4 runs built ahead, is still in the first segment until then.
        server.script(lambda req: Answer(201, hold=None if len(server.requests) <= 10 else rotated))
        ws.settings({"openlineage.concurrency": 2})
        env = cli_env(tmp_path, OPENLINEAGE_URL=server.url)
        export = subprocess.Popen(
            cli_command("export", "-w", str(ws.root)),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.wait_for(11), export.communicate()
            # Still in the first segment: rotate the second one, as the hub does.
            (ws.audit / "000002.jsonl.gz").write_bytes(gzip.compress(closed.read_bytes()))
            closed.unlink()
            ws.segment("000003.jsonl", [run_record(f"three-{i}") for i in range(5)])
            rotated.set()
            _, err = export.communicate(timeout=120)
        finally:
            rotated.set()
            if export.poll() is None:
                export.kill()
        assert export.returncode == 0, err
        assert "Traceback" not in err and "bad entry" not in err
        first = {e["run"]["runId"] for e in server.events()}
        assert len(first) == 80 * 2  # each run of both segments: its pipeline and stage run
        assert len(server.requests) == 80 * 4  # each event once
        server.default = Answer(201)
        again = subprocess.run(
            cli_command("export", "-w", str(ws.root), "--json"),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["runs"] == {
            "total": 85,
            "sent": 5,
            "unchanged": 80,
            "held": 0,
            "failed": 0,
        }


def test_blank_lines_are_no_entries_and_a_flood_of_them_is_read_in_bulk(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """Blank lines (an editor's, or 16 MiB of line breaks) are passed over without a word: 0
    bad entries, exit 0; the lines after them keep their numbers. (In a gzip segment a flood
    of them is bounded as any gzip segment is: see the test below.)"""
    flood = b"\n" * (16 << 20)
    (ws.audit / "000001.jsonl").write_bytes(
        json.dumps(run_record("a")).encode()
        + b"\n"
        + flood
        + b"  \r\n\t\n"
        + json.dumps(run_record("b")).encode()
        + b"\n"
        + flood
        + b"{oops\n"
    )
    ws.segment("000002.jsonl", ["", json.dumps(run_record("c")), "   ", ""])
    runs, bad, _ = read(ws)
    assert [r.trace_id for r in runs] == ["a", "b", "c"]
    flood_lines = 16 << 20
    assert [(b.file, b.line) for b in bad] == [
        (".workspace/lineage/audit/000001.jsonl", 2 * flood_lines + 5)
    ]

    (ws.audit / "000001.jsonl").write_bytes(flood)
    proc = subprocess.run(
        cli_command(
            "export", "--dry-run", "-o", str(tmp_path / "ev.jsonl"), "--json", "-w", str(ws.root)
        ),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["badEntries"]["count"] == 0 and report["runs"]["total"] == 1


def test_a_gzip_segment_is_read_to_a_bounded_multiple_of_its_size_on_disk(
    ws: WorkspaceMaker,
) -> None:
    """Attack C, C4: 3 million lines of ``{}`` gzip to 8.8 KB and cost 6 s of CPU, a thousand
    times what the file's size would. Past MAX_GZIP_RATIO times its size on disk a gzip
    segment is one bad entry naming it; what came before is kept, and so are later segments."""
    good = json.dumps(run_record("kept")).encode() + b"\n"
    data = gzip.compress(good + b"{}\n" * 3_000_000, mtime=0)
    (ws.audit / "000001.jsonl.gz").write_bytes(data)
    ws.segment("000002.jsonl", [run_record("later")])
    runs, bad, _ = read(ws)
    assert [r.trace_id for r in runs] == ["kept", "later"]
    assert "inflates to more than" in bad[-1].reason, bad[-1]
    assert bad[-1].file.endswith("000001.jsonl.gz")
    cap = max(GZIP_FLOOR, MAX_GZIP_RATIO * len(data))
    assert len(bad) - 1 <= cap // 3  # the lines of `{}` read: only those within the bound
    assert all("inflates" not in b.reason for b in bad[:-1])


class _CountedSize(int):
    """A segment's size that counts each time it is added to another."""

    added = 0

    def __add__(self, other: object) -> int:
        _CountedSize.added += 1
        return int(self) + int(other)  # type: ignore[call-overload]

    __radd__ = __add__


def test_the_progress_over_many_segments_adds_each_size_once(
    ws: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How far the segments have been read is a running total: one addition per segment, not
    the sum of every segment before it again for each (S * S for a trail of S files)."""
    import openlineage_export.hub.trail as trail_module

    count = 1500
    for n in range(count):
        ws.segment(f"{n:06d}.jsonl", [])
    sizes = trail_module.segment_size
    monkeypatch.setattr(
        trail_module, "segment_size", lambda tree, parts: _CountedSize(sizes(tree, parts))
    )
    reported: list[tuple[int, int]] = []
    _CountedSize.added = 0
    AuditTrail(ws.audit).scan(
        lambda e: None, on_read=lambda done, total: reported.append((done, total))
    )
    assert reported[-1][0] == reported[-1][1] and len(reported) > count
    assert _CountedSize.added <= 3 * count, _CountedSize.added


def test_a_reason_quotes_at_most_the_first_characters_of_a_value(ws: WorkspaceMaker) -> None:
    """Before: a reason quoted a stage id or trace id whole (up to ~16 MiB), kept 200 times
    and written whole by ``--json``: 100 such lines wrote 210 MB."""
    long = "x" * 100_000
    ws.segment(
        "000001.jsonl",
        [
            run_record(long, stages=[stage_record(long), stage_record(long)]),
            run_record(startedAt=long),
        ],
    )
    _, bad, _ = read(ws)
    assert [len(entry.reason) < 500 for entry in bad] == [True, True]
    assert bad[0].reason == (
        f"run {'x' * QUOTE_LIMIT!r}... ({100_000 - QUOTE_LIMIT:,} more characters): "
        f"stage {'x' * QUOTE_LIMIT!r}... ({100_000 - QUOTE_LIMIT:,} more characters) "
        "attempt 1 appears twice"
    )
    assert "(99,800 more characters)" in bad[1].reason
