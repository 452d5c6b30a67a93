"""Hostile input: whatever the trail holds, the export never crashes, names every bad line
(file and line), and still exports every good run, exactly as if the junk were not there.

Workspaces mix known-good run records (unicode everywhere: trace ids, pipeline and stage ids,
dataset names, times in every RFC 3339 form) with hostile lines: arbitrary bytes, text that is
no Unicode where the reader reads it (a lone surrogate escape, bytes that are no UTF-8), JSON
that is not an object, records with a field of the wrong type or missing, bad times, deep nesting,
duplicate and conflicting records of one trace id, lines of other kinds, torn and truncated
segments. An oracle written from the contract (not from the reader) says what each line is;
the dry run's events must equal those of a clean workspace holding only each trace id's last
good record. Then the same through the CLI, and what a broken workspace makes of it.
"""

from __future__ import annotations

import copy
import gzip
import io
import json
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import GRAPH, WorkspaceMaker, cli_command, reason_between, run_record, stage_record
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from openlineage_export.cli import main
from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.report import ExportReport
from openlineage_export.hub.model import BadEntry

AUDIT = ".workspace/lineage/audit"
NAMESPACE = GRAPH["workspace"]["name"]
EVENT_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)", re.ASCII)
RUN_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.ASCII)
DELETE = object()
"""A mutation that removes the field."""

FUZZ = settings(
    max_examples=60,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


# -- what a line is, by the contract ----------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One line of a segment (without its newline) and what the contract makes of it."""

    data: bytes
    expect: str
    """``run`` (a good record: it becomes its trace id's current state), ``bad`` (must be named),
    ``ignored`` (another kind: skipped silently), ``either`` (bad or ignored; never a run)."""
    trace_id: str | None = None


def classify(data: bytes) -> str:
    """Arbitrary bytes, judged by the contract with the standard library's strict JSON."""
    if not data or data.isspace():
        return "ignored"  # a blank line is no entry
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "bad"
    if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
        return "bad"
    if value["kind"] == "run":
        return "run?"
    # Another kind: ignored, unless it holds what JSON text can say but UTF-8 cannot (a lone
    # surrogate escape), which a reader may refuse.
    return "ignored" if "\\ud" not in data.decode("utf-8").lower() else "either"


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def dumps(value: Any, ascii_only: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")


# -- strategies: good records -----------------------------------------------------------------

identifiers = st.text(min_size=1, max_size=12)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
parameters = st.dictionaries(st.text(max_size=8), json_values, max_size=3)


@st.composite
def times(draw: st.DrawFn) -> str:
    """Every RFC 3339 form the contract allows: T/t/space, 0 to 9 fraction digits, Z/z/offset."""
    moment = draw(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2199, 1, 1)))
    fraction = draw(st.text("0123456789", max_size=9))
    # Offsets up to ±23:59, as RFC 3339 allows (beyond ±18:00 they are sent in UTC).
    offset = draw(
        st.sampled_from(["Z", "z"])
        | st.builds(
            lambda sign, minutes: f"{sign}{minutes // 60:02d}:{minutes % 60:02d}",
            st.sampled_from("+-"),
            st.integers(0, 18 * 60) | st.integers(18 * 60, 24 * 60 - 1),
        )
    )
    return (
        f"{moment:%Y-%m-%d}{draw(st.sampled_from('Tt '))}{moment:%H:%M:%S}"
        + (f".{fraction}" if fraction else "")
        + offset
    )


datasets = identifiers | st.builds(
    "{}://{}/{}".format,
    st.sampled_from(
        [
            "s3",
            "s3a",
            "gs",
            "postgres",
            "mysql",
            "kafka",
            "file",
            "hdfs",
            "abfss",
            "bigquery",
            "x-custom",
        ]
    ),
    st.text(max_size=10),
    st.text(max_size=10),
)


def _maybe(draw: st.DrawFn, record: dict[str, Any], key: str, strategy: Any) -> None:
    if draw(st.booleans()):
        record[key] = draw(strategy)


@st.composite
def errors(draw: st.DrawFn) -> dict[str, Any]:
    error = {"message": draw(identifiers)}
    for key in ("type", "stackTrace", "programmingLanguage"):
        _maybe(draw, error, key, identifiers)
    return error


@st.composite
def accesses(draw: st.DrawFn, write: bool) -> dict[str, Any]:
    access: dict[str, Any] = {"dataset": draw(datasets)}
    _maybe(draw, access, "digest", identifiers)
    if write:
        _maybe(draw, access, "rows", st.integers(0, 2**63 - 1))
        _maybe(draw, access, "bytes", st.integers(0, 2**63 - 1))
        _maybe(
            draw,
            access,
            "schema",
            st.lists(
                st.fixed_dictionaries({"name": identifiers}, optional={"type": identifiers}),
                max_size=3,
            ),
        )
    return access


@st.composite
def stages(draw: st.DrawFn) -> list[dict[str, Any]]:
    keys = draw(st.lists(st.tuples(identifiers, st.integers(1, 3)), max_size=3, unique=True))
    found = []
    for stage_id, attempt in keys:
        status = draw(st.sampled_from(["succeeded", "failed", "cancelled", "running", "skipped"]))
        stage: dict[str, Any] = {"stage": stage_id, "status": status}
        if attempt != 1 or draw(st.booleans()):
            stage["attempt"] = attempt
        if status != "skipped" or draw(st.booleans()):
            stage["startedAt"] = draw(times())
        if status not in ("running", "skipped"):
            stage["endedAt"] = draw(times())
        _maybe(draw, stage, "parameters", parameters)
        _maybe(draw, stage, "reads", st.lists(accesses(write=False), max_size=2))
        _maybe(draw, stage, "writes", st.lists(accesses(write=True), max_size=2))
        if status in ("failed", "cancelled"):
            _maybe(draw, stage, "error", errors())
        found.append(stage)
    return found


@st.composite
def good_runs(draw: st.DrawFn, trace_id: str) -> dict[str, Any]:
    """A record the contract accepts, of any shape it allows."""
    status = draw(st.sampled_from(["succeeded", "failed", "cancelled", "running"]))
    record: dict[str, Any] = {
        "kind": "run",
        "traceId": trace_id,
        "status": status,
        "startedAt": draw(times()),
        "pipeline": draw(st.sampled_from(["daily-sales", "never"]) | identifiers),
    }
    if status != "running":
        record["endedAt"] = draw(times())
    _maybe(draw, record, "recordedAt", times() | json_values)  # not the exporter's business
    _maybe(
        draw,
        record,
        "engine",
        st.fixed_dictionaries({"name": identifiers}, optional={"version": identifiers}),
    )
    _maybe(draw, record, "trigger", identifiers)
    _maybe(draw, record, "parameters", parameters)
    if status in ("failed", "cancelled"):
        _maybe(draw, record, "error", errors())
    _maybe(draw, record, "stages", stages())
    _maybe(draw, record, "someFutureField", json_values)
    return record


# -- strategies: hostile lines ----------------------------------------------------------------

ARABIC_2026 = "\u0662\u0660\u0662\u0666"
FULLWIDTH_2026 = "\uff12\uff10\uff12\uff16"
BAD_TIMES = [
    "2026-11-02T02:00:00",
    "2026-02-30T00:00:00Z",
    "2026-11-02T24:00:00Z",
    "2026-11-02T02:00:00+24:00",
    f"{ARABIC_2026}-11-02T02:00:00Z",
    f"{FULLWIDTH_2026}-11-02t02:00:00z",
    "0001-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59-01:00",
    "",
    "yesterday",
    5,
    "2026-11-02T02:00:00.1234567890Z",
    "2026-11-02",
]
NOT_TEXT = [5, [], {}, True, 1.5]

# (where, bad values): ``where`` is a key of the record or ``stages.<key>`` of its first stage.
MUTATIONS: list[tuple[str, list[Any]]] = [
    ("kind", [DELETE, None, *NOT_TEXT]),
    ("traceId", [DELETE, None, "", *NOT_TEXT]),
    ("pipeline", [DELETE, None, "", *NOT_TEXT]),
    ("status", [DELETE, None, "bogus", "Succeeded", " succeeded", *NOT_TEXT]),
    ("startedAt", [DELETE, None, *BAD_TIMES]),
    ("endedAt", [DELETE, None, *BAD_TIMES]),
    (
        "engine",
        [
            5,
            "hub",
            [],
            {"version": "1"},
            {"name": 5},
            {"name": ""},
            {"name": "hub", "version": 4.2},
        ],
    ),
    ("trigger", ["", *NOT_TEXT]),
    ("parameters", [5, "x", [], True]),
    (
        "error",
        [
            "boom",
            5,
            [],
            {"type": "x"},
            {"message": 5},
            {"message": ""},
            {"message": "m", "stackTrace": 5},
            {"message": "m", "programmingLanguage": []},
        ],
    ),
    ("stages", [{}, "x", 5, [5], [[]], [None]]),
    ("stages.stage", [DELETE, None, "", *NOT_TEXT]),
    ("stages.status", [DELETE, None, "bogus", *NOT_TEXT]),
    ("stages.attempt", [0, -1, 1.5, "1", True, None]),
    ("stages.startedAt", [DELETE, None, *BAD_TIMES]),
    ("stages.endedAt", [DELETE, None, *BAD_TIMES]),
    ("stages.parameters", [5, [], "x"]),
    (
        "stages.reads",
        [
            {},
            5,
            [5],
            [{"digest": "x"}],
            [{"dataset": 5}],
            [{"dataset": ""}],
            [{"dataset": "a", "digest": 5}],
        ],
    ),
    (
        "stages.writes",
        [
            [{"dataset": "a", "rows": -1}],
            [{"dataset": "a", "rows": "3"}],
            [{"dataset": "a", "bytes": 1.5}],
            [{"dataset": "a", "rows": 2**64}],
            [{"dataset": "a", "bytes": 2**63}],
            [{"dataset": "a", "schema": "x"}],
            [{"dataset": "a", "schema": [5]}],
            [{"dataset": "a", "schema": [{"type": "x"}]}],
            [{"dataset": "a", "schema": [{"name": ""}]}],
            [{"dataset": "a", "schema": [{"name": "id", "type": 5}]}],
        ],
    ),
    ("stages.error", ["x", {"type": "y"}]),
    ("stages.twice", [True]),
]


def spoil(record: dict[str, Any], where: str, value: Any) -> dict[str, Any]:
    """``record`` broken at ``where``; statuses are set so that the field is required there."""
    bad = copy.deepcopy(record)
    if where in ("endedAt", "error") and bad["status"] not in ("failed", "cancelled"):
        bad["status"] = "succeeded"
        bad.setdefault("endedAt", "2026-11-02T02:07:31Z")
    target = bad
    key = where
    if where.startswith("stages."):
        key = where.removeprefix("stages.")
        stage = stage_record("spoilt")
        bad["stages"] = [stage]
        target = stage
        if key == "twice":
            bad["stages"] = [stage, copy.deepcopy(stage)]
            return bad
    if value is DELETE:
        target.pop(key, None)
    else:
        target[key] = value
    return bad


STRAY_MARK = "STRAY-MARK"
STRAYS = [
    b"\\udcff",
    b"\\ud800",
    b"\\uDFFF",
    b"\\ud83d",
    b"\xff",
    b"\x80",
    b"\xc3",
    b"\xed\xb3\xbf",
]
"""What JSON text or bytes can hold and Unicode cannot: a lone surrogate as an escape (valid JSON)
or as the bytes UTF-8 would give it (it gives none), a byte that starts or continues nothing."""
STRAY_FIELDS = ["pipeline", "trigger", "stage", "dataset", "error", "parameter", "engine"]


def stray(record: dict[str, Any], where: str) -> dict[str, Any]:
    """``record`` with :data:`STRAY_MARK` in a text field the reader reads (a field it skips
    is never decoded: what it holds never enters)."""
    bad = copy.deepcopy(record)
    if where == "pipeline":
        bad["pipeline"] = f"p{STRAY_MARK}"
    elif where == "trigger":
        bad["trigger"] = STRAY_MARK
    elif where == "stage":
        bad["stages"] = [stage_record(f"s{STRAY_MARK}")]
    elif where == "dataset":
        bad["stages"] = [stage_record(reads=[{"dataset": f"s3://b/{STRAY_MARK}"}])]
    elif where == "error":
        bad["status"] = "failed"
        bad.setdefault("endedAt", "2026-11-02T02:07:31Z")
        bad["error"] = {"message": STRAY_MARK}
    elif where == "parameter":
        bad["parameters"] = {"k": [STRAY_MARK]}
    else:
        bad["engine"] = {"name": STRAY_MARK}
    return bad


@st.composite
def hostile_lines(draw: st.DrawFn, fresh_trace_id: Callable[[], str]) -> Line:
    """A line that is not a good record of a known trace id (or a good one of a fresh id)."""
    choice = draw(
        st.sampled_from(
            ["bytes", "not-object", "spoilt", "deep", "other-kind", "blank", "big", "stray"]
        )
    )
    ascii_only = draw(st.booleans())
    if choice == "stray":
        record = draw(good_runs(fresh_trace_id()))
        data = dumps(stray(record, draw(st.sampled_from(STRAY_FIELDS))), ascii_only)
        return Line(data.replace(STRAY_MARK.encode(), draw(st.sampled_from(STRAYS)), 1), "bad")
    if choice == "bytes":
        data = draw(st.binary(max_size=120)).replace(b"\n", b" ")
        expect = classify(data)
        if expect == "run?":  # bytes that spell a run record: too lucky to judge, say bad
            data = b"#" + data
            expect = "bad"
        return Line(data, expect)
    if choice == "not-object":
        value = draw(json_values.filter(lambda v: not isinstance(v, dict)))
        return Line(dumps(value, ascii_only), "bad")
    if choice == "spoilt":
        where, values = draw(st.sampled_from(MUTATIONS))
        value = draw(st.sampled_from(values))
        record = spoil(draw(good_runs(fresh_trace_id())), where, value)
        return Line(dumps(record, ascii_only), "bad")
    if choice == "deep":
        depth = draw(st.integers(1, 300) | st.integers(2000, 50_000))
        where = draw(st.sampled_from(["top", "other-kind", "run"]))
        nested = "[" * depth + "]" * depth
        if where == "top":
            return Line(nested.encode(), "bad")
        if where == "other-kind":
            return Line(
                f'{{"kind":"note","deep":{nested}}}'.encode(), "ignored" if depth <= 300 else "bad"
            )
        trace_id = fresh_trace_id()
        record = dumps(draw(good_runs(trace_id)) | {"parameters": {"p": 0}}, ascii_only)
        data = record.replace(b'{"p": 0}', f'{{"p": {nested}}}'.encode(), 1)
        return Line(data, "run", trace_id) if depth <= 300 else Line(data, "bad")
    if choice == "other-kind":
        kind = draw(st.text(max_size=10).filter(lambda k: k != "run"))
        record = {"kind": kind, "traceId": draw(json_values), "status": draw(json_values)}
        return Line(dumps(record, ascii_only), "ignored")
    if choice == "blank":
        return Line(draw(st.sampled_from([b"", b" ", b"\t", b"\r"])), "ignored")
    trace_id = fresh_trace_id()  # big: a good record of 100 kB
    record = draw(good_runs(trace_id)) | {"parameters": {"blob": "é" * 50_000}}
    return Line(dumps(record, ascii_only), "run", trace_id)


@st.composite
def trails(draw: st.DrawFn) -> list[Line]:
    """Good records of several trace ids (some recorded again, in conflict, or spoilt later)
    among hostile lines."""
    known: list[str] = []
    seen: set[str] = set()
    good: dict[str, bytes] = {}

    def fresh_trace_id() -> str:
        if draw(st.booleans()):
            text = str(draw(st.uuids()))
            text = text.upper() if draw(st.booleans()) else text
            if text.lower() not in seen:
                seen.add(text.lower())
                return text
        text = f"{draw(st.text(max_size=10))}#{len(seen)}"  # never a UUID, never a repeat
        seen.add(text)
        return text

    lines = []
    for step in draw(
        st.lists(
            st.sampled_from(["new", "new", "again", "repeat", "spoil", "hostile", "hostile"]),
            min_size=1,
            max_size=14,
        )
    ):
        ascii_only = draw(st.booleans())
        if step in ("again", "repeat", "spoil") and not known:
            step = "new"
        if step == "new":
            trace_id = fresh_trace_id()
            known.append(trace_id)
        elif step == "hostile":
            line = draw(hostile_lines(fresh_trace_id))
            lines.append(line)
            continue
        else:
            trace_id = draw(st.sampled_from(known))
        if step == "repeat":
            lines.append(Line(good[trace_id], "run", trace_id))
        elif step == "spoil":
            where, values = draw(st.sampled_from([m for m in MUTATIONS if m[0] != "traceId"]))
            record = spoil(draw(good_runs(trace_id)), where, draw(st.sampled_from(values)))
            lines.append(Line(dumps(record, ascii_only), "bad"))
        else:  # new, or again: a later (maybe conflicting: other pipeline, status) record
            data = dumps(draw(good_runs(trace_id)), ascii_only)
            good[trace_id] = data
            lines.append(Line(data, "run", trace_id))
    return lines


# -- building and checking workspaces ---------------------------------------------------------


@dataclass
class Layout:
    """A workspace's segments as written: name -> lines, and the torn tail of the last one."""

    segments: dict[str, list[Line]] = field(default_factory=dict)
    torn: bytes = b""

    def positions(self, expect: str) -> set[tuple[str, int]]:
        return {
            (f"{AUDIT}/{name}", number)
            for name, lines in self.segments.items()
            for number, line in enumerate(lines, 1)
            if line.expect == expect
        }

    def winners(self) -> list[bytes]:
        """Each trace id's last good record, in trail order."""
        last: dict[str, tuple[int, bytes]] = {}
        order = 0
        for lines in self.segments.values():
            for line in lines:
                order += 1
                if line.expect == "run":
                    assert line.trace_id is not None
                    last[line.trace_id] = (order, line.data)
        return [data for _, data in sorted(last.values())]


def write(root: Path, layout: Layout) -> WorkspaceMaker:
    maker = WorkspaceMaker(root)
    names = list(layout.segments)
    for name, lines in layout.segments.items():
        data = b"".join(line.data + b"\n" for line in lines)
        if name == names[-1]:
            data += layout.torn
        maker.segment_bytes(name, data)
    return maker


def dry_run(root: Path) -> tuple[ExportReport, list[BadEntry], bytes]:
    out = io.BytesIO()
    bad: list[BadEntry] = []
    report = run_export(ExportRequest(root, dry_run=True, output=out, on_bad_entry=bad.append))
    return report, bad, out.getvalue()


def reference_events(root: Path, records: list[bytes]) -> bytes:
    """The events of a clean workspace holding only these records."""
    write(root, Layout({"000001.jsonl": [Line(r, "run") for r in records]}))
    report, bad, events = dry_run(root)
    assert not bad and report.exit_code == 0
    return events


def check_events(events: bytes) -> list[dict[str, Any]]:
    """Every line is a JSON object shaped like an OpenLineage run event."""
    parsed = []
    for line in events.splitlines():
        event = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
        assert event["eventType"] in ("START", "COMPLETE", "FAIL", "ABORT")
        assert EVENT_TIME.fullmatch(event["eventTime"]), event["eventTime"]
        # What java.time reads: an offset beyond ±18:00 is sent as the instant in UTC.
        assert event["eventTime"][-1] == "Z" or event["eventTime"][-5:] <= "18:00"
        assert RUN_ID.fullmatch(event["run"]["runId"])
        assert event["job"]["namespace"] == NAMESPACE and event["job"]["name"]
        for dataset in event["inputs"] + event["outputs"]:
            assert dataset["namespace"] and isinstance(dataset["name"], str)
        parsed.append(event)
    return parsed


def check_export(tmp: Path, layout: Layout) -> None:
    """The oracle's verdict: bad lines named, nothing else named, good runs all exported."""
    write(tmp / "hostile", layout)
    report, bad, events = dry_run(tmp / "hostile")
    named = [(entry.file, entry.line) for entry in bad]
    must, may = layout.positions("bad"), layout.positions("either")
    assert len(named) == len(set(named)) == report.bad_entries
    assert must <= set(named), f"not named: {sorted(must - set(named))}"
    assert set(named) <= must | may, f"named but good: {sorted(set(named) - must - may)}"
    assert all(entry.reason.strip() and "\n" not in entry.reason for entry in bad)
    check_events(events)
    winners = layout.winners()
    assert events == reference_events(tmp / "reference", winners)
    assert report.runs_total == len(winners)
    assert report.exit_code == (1 if named else 0)


@st.composite
def layouts(draw: st.DrawFn) -> Layout:
    """The lines cut into one to three segments, closed ones maybe gzip, maybe a torn tail."""
    lines = draw(trails())
    cuts = sorted(draw(st.lists(st.integers(0, len(lines)), max_size=2)))
    layout = Layout()
    start = 0
    for number, end in enumerate([*cuts, len(lines)], 1):
        last = end == len(lines) and number == len(cuts) + 1
        gz = not last and draw(st.booleans())
        layout.segments[f"{number:06d}.jsonl" + (".gz" if gz else "")] = lines[start:end]
        start = end
    if draw(st.booleans()):
        record = dumps(run_record("torn-tail"), True)
        layout.torn = record[: draw(st.integers(1, len(record) - 1))]
    return layout


@FUZZ
@given(layout=layouts())
def test_hostile_trails_name_every_bad_line_and_export_every_good_run(
    tmp_path_factory: pytest.TempPathFactory, layout: Layout
) -> None:
    check_export(tmp_path_factory.mktemp("fuzz"), layout)


@settings(FUZZ, max_examples=25)
@given(good=st.lists(st.integers(0, 3), min_size=2, max_size=6), cut=st.floats(0, 1))
def test_truncated_gzip_segment_keeps_what_it_can_and_the_other_segments(
    tmp_path_factory: pytest.TempPathFactory, good: list[int], cut: float
) -> None:
    tmp = tmp_path_factory.mktemp("gz")
    first = [
        dumps(run_record(f"gz-{i}", stages=[stage_record(attempt=a + 1)]), True)
        for i, a in enumerate(good)
    ]
    second = [dumps(run_record(f"plain-{i}"), True) for i in range(2)]
    maker = write(
        tmp / "ws",
        Layout(
            {
                "000001.jsonl.gz": [],
                "000002.jsonl": [Line(r, "run", f"plain-{i}") for i, r in enumerate(second)],
            }
        ),
    )
    whole = gzip.compress(b"".join(r + b"\n" for r in first), mtime=0)
    # At least one byte (an empty file is an empty segment), at most all but the last.
    (maker.audit / "000001.jsonl.gz").write_bytes(whole[: 1 + int((len(whole) - 2) * cut)])
    report, bad, events = dry_run(tmp / "ws")
    check_events(events)
    assert bad and all(entry.file == f"{AUDIT}/000001.jsonl.gz" for entry in bad)
    assert any("truncated or corrupt" in entry.reason for entry in bad)
    exported = {
        e["run"]["facets"]["tags"]["tags"][0]["value"]
        for e in check_events(events)
        if "parent" not in e["run"]["facets"]
    }
    kept = [r for i, r in enumerate(first) if f"gz-{i}" in exported]
    assert kept == first[: len(kept)], "what survives a cut is a prefix of the segment"
    assert events == reference_events(tmp / "reference", kept + second)
    assert report.exit_code == 1


def test_a_line_too_long_to_hold_is_one_bad_entry(tmp_path: Path) -> None:
    huge = b'{"kind":"run","traceId":"huge","padding":"' + b"x" * (33 * 1024 * 1024) + b'"}'
    layout = Layout(
        {
            "000001.jsonl": [
                Line(dumps(run_record("before"), True), "run", "before"),
                Line(huge, "bad"),
                Line(dumps(run_record("after"), True), "run", "after"),
            ]
        }
    )
    check_export(tmp_path, layout)


def test_nesting_limit_is_the_same_wherever_the_line_is_read(tmp_path: Path) -> None:
    # The record is one level, its parameters a second: 498 lists make 500 levels, the limit.
    def nested(trace_id: str, lists: int) -> bytes:
        record = dumps(run_record(trace_id, parameters={"p": 0}), True)
        return record.replace(b'{"p": 0}', b'{"p": ' + b"[" * lists + b"]" * lists + b"}")

    check_export(
        tmp_path,
        Layout(
            {
                "000001.jsonl": [
                    Line(nested("at-the-limit", 498), "run", "at-the-limit"),
                    Line(nested("over-the-limit", 499), "bad"),
                ]
            }
        ),
    )


def test_a_location_no_url_parser_takes_is_named_without_its_credentials(tmp_path: Path) -> None:
    locations = [
        "postgres://admin:hunter2@[db/sales.public.orders?sslmode=require",
        "s3://key:hunter2@bucket\u2100/raw/o.parquet#frag",
    ]
    maker = WorkspaceMaker(tmp_path / "ws")
    maker.segment(
        "000001.jsonl",
        [
            run_record(
                "r", stages=[stage_record(reads=[{"dataset": location} for location in locations])]
            )
        ],
    )
    report, bad, events = dry_run(maker.root)
    assert report.exit_code == 0 and not bad
    inputs = [(i["namespace"], i["name"]) for e in check_events(events) for i in e["inputs"]]
    assert len(inputs) == 2 * len(locations)
    for namespace, name in inputs:
        for secret in ("admin", "hunter2", "sslmode", "frag", "key:"):
            assert secret not in namespace + name


# -- the same through the CLI -----------------------------------------------------------------

CURATED = [
    b"\x00\xff\xfe garbage",
    b"<<<<<<< HEAD",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"kind":"run","traceId":"deep","pipeline":"p","status":"succeeded",'
    b'"startedAt":"2026-11-02T02:00:00Z","endedAt":"2026-11-02T02:00:01Z","parameters":{"p":'
    + b"[" * 300
    + b"]" * 300
    + b"}}",
    b'{"kind":"run","traceId":"big","pipeline":"p","status":"succeeded",'
    b'"startedAt":"2026-11-02T02:00:00Z","endedAt":"2026-11-02T02:00:01Z",'
    b'"parameters":{"n":123456789012345678901234567890}}',
    dumps(run_record("\u202eevil\x1b[2J\n", startedAt=f"{FULLWIDTH_2026}-11-02t02:00:00z"), False),
    dumps(run_record("year-one", startedAt="0001-01-01T00:00:00+01:00"), True),
    dumps(
        run_record(
            "s3-bad",
            stages=[
                stage_record(
                    reads=[
                        {"dataset": "s3://[bucket/key"},
                        {"dataset": "postgres://h\u2100st/db.s.t"},
                    ]
                )
            ],
        ),
        False,
    ),
    dumps(
        run_record("rows", stages=[stage_record(writes=[{"dataset": "a", "rows": 2**64}])]), True
    ),
    dumps(run_record("stray-escape", pipeline="p\udcff"), True),
    dumps(run_record("stray-byte", pipeline=f"p{STRAY_MARK}"), False).replace(
        STRAY_MARK.encode(), b"\xff\xed\xb3\xbf"
    ),
]


def test_cli_dry_run_names_every_bad_entry_without_a_traceback(tmp_path: Path) -> None:
    layout = Layout({"000001.jsonl.gz": [], "000002.jsonl": []})
    good = [
        dumps(run_record(f"good-{i}", status=s), i % 2 == 0)
        for i, s in enumerate(["succeeded", "failed", "running", "cancelled"])
    ]
    runs = {b"deep", b"big", b"s3-bad"}  # hostile, but good records: exported
    lines = [Line(good[0], "run", "good-0")]
    for data in CURATED:
        trace = next(
            (
                t
                for t in runs
                if b'"traceId":"' + t + b'"' in data or b'"traceId": "' + t + b'"' in data
            ),
            None,
        )
        lines.append(Line(data, "run", trace.decode()) if trace else Line(data, "bad"))
    lines += [Line(g, "run", f"good-{i}") for i, g in enumerate(good) if i]
    layout.segments["000001.jsonl.gz"] = lines[:6]
    layout.segments["000002.jsonl"] = lines[6:]
    layout.torn = b'{"kind":"run","traceId":"half'
    write(tmp_path / "ws", layout)
    result = subprocess.run(
        cli_command(
            "export",
            "--dry-run",
            "-w",
            str(tmp_path / "ws"),
        ),
        capture_output=True,
        env=_env(tmp_path),
        timeout=300,
    )
    stderr = result.stderr.decode("utf-8")
    assert result.returncode == 1, stderr
    assert "Traceback" not in stderr
    printed = {
        (m.group(1), int(m.group(2)))
        for m in re.finditer(r"^bad entry: (\S+):(\d+): \S", stderr, re.MULTILINE)
    }
    assert printed == layout.positions("bad"), stderr
    assert f"{len(printed)} bad entries on the audit trail were skipped" in stderr
    assert "\x1b" not in stderr, "a control character from the trail reached the terminal"
    check_events(result.stdout)
    assert result.stdout == reference_events(tmp_path / "reference", layout.winners())


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    return env | {
        "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
        "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "config"),
    }


# -- a broken workspace: one clear line, the documented exit code -----------------------------


def _no_graph(maker: WorkspaceMaker) -> None:
    (maker.root / ".workspace" / "lineage" / "graph.json").unlink()


def _graph_not_json(maker: WorkspaceMaker) -> None:
    (maker.root / ".workspace" / "lineage" / "graph.json").write_text('{"format": ')


def _settings_not_json(maker: WorkspaceMaker) -> None:
    (maker.root / ".workspace" / "settings.json").write_text("{'openlineage.url': nope")


def _not_a_workspace(maker: WorkspaceMaker) -> None:
    for path in sorted(maker.root.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()


def _audit_is_a_file(maker: WorkspaceMaker) -> None:
    for path in maker.audit.iterdir():
        path.unlink()
    maker.audit.rmdir()
    maker.audit.write_text("not a folder")


@pytest.mark.parametrize(
    ("breakage", "code", "says"),
    [
        (_no_graph, 3, "graph.json not found"),
        (_graph_not_json, 3, "graph.json is not JSON"),
        (_settings_not_json, 2, "settings.json is not valid JSON"),
        (_not_a_workspace, 3, "is not a workspace"),
        (_audit_is_a_file, 3, "audit"),
    ],
    ids=[
        "no-graph",
        "graph-not-json",
        "settings-not-json",
        "not-a-workspace",
        "audit-not-a-folder",
    ],
)
@pytest.mark.parametrize("dry", [True, False], ids=["dry-run", "export"])
def test_broken_workspace_is_one_clear_line_and_the_documented_code(
    ws: WorkspaceMaker,
    breakage: Callable[[WorkspaceMaker], None],
    code: int,
    says: str,
    dry: bool,
    tmp_path: Path,
) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    if breakage is not _settings_not_json:
        ws.settings({"openlineage.url": "http://127.0.0.1:9"})
    breakage(ws)
    result = CliRunner().invoke(
        main, ["export", "-w", str(ws.root), *(["--dry-run"] if dry else [])], env=_env(tmp_path)
    )
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], lines
    assert result.stdout == ""


def test_missing_workspace_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["export", "--dry-run", "-w", str(tmp_path / "nowhere")], env=_env(tmp_path)
    )
    assert result.exit_code == 3
    assert result.stderr.count("\n") == 1 and "nowhere" in result.stderr


def test_segment_that_cannot_be_read_is_named_and_the_rest_exported(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    # Tests may run as root, whom chmod 000 does not stop: a folder named like a segment
    # cannot be read by anyone.
    ws.segment("000001.jsonl", [run_record("r1")])
    (ws.audit / "000002.jsonl").mkdir()
    ws.segment("000003.jsonl", [run_record("r3")])
    report, bad, events = dry_run(ws.root)
    assert [(b.file, b.line) for b in bad] == [(f"{AUDIT}/000002.jsonl", 0)]
    assert bad[0].reason == "skipped: it is a folder, not a file of the audit trail"
    assert report.exit_code == 1 and report.runs_total == 2
    assert events == reference_events(
        tmp_path / "ref", [dumps(run_record("r1"), False), dumps(run_record("r3"), False)]
    )


def test_unreadable_segment_file_is_named(ws: WorkspaceMaker, tmp_path: Path) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    locked = ws.segment("000002.jsonl", [run_record("r2")])
    locked.chmod(0)
    command = cli_command(
        "export",
        "--dry-run",
        "-w",
        str(ws.root),
        "-o",
        str(tmp_path / "events.jsonl"),
    )
    if os.geteuid() == 0:  # root reads any file: run the export without the power to
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    finally:
        locked.chmod(0o644)
    assert result.returncode == 1, result.stderr
    (bad,) = [line for line in result.stderr.splitlines() if line.startswith("bad entry: ")]
    reason_between(bad, f"bad entry: {AUDIT}/000002.jsonl: cannot read this segment (", ")")
    assert "dry run: 1 runs" in result.stderr
