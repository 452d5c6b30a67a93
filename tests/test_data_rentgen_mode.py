"""Data.Rentgen mode (translate/data_rentgen.py): UUIDv7 run ids, the trace id as the run's
external id, the jobs' location; every other server's events unchanged.

What Data.Rentgen itself makes of the events is in tests/e2e/test_data_rentgen.py (this file is
named apart from it: pytest imports test modules by their base name).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import DEMO, ROOT, SHARED, WorkspaceMaker, run_record, stage_record
from hypothesis import given
from hypothesis import strategies as st

from openlineage_export.deliver.registry import CATALOGUE
from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.opening import open_workspace
from openlineage_export.translate import data_rentgen, modes
from openlineage_export.translate.ids import canonical_uuid

MODE = {"OPENLINEAGE_SERVER": "data-rentgen"}
V4 = "3f2c5a1e-9b7d-4c8e-a1f0-2d6b9e8c7a54"
V7 = "019a4a1c-6f48-7d3e-9b2a-5c1d0e8f7a61"


def events(root: Path, **environ: str) -> list[dict[str, Any]]:
    out = io.BytesIO()
    report = run_export(ExportRequest(workspace=root, dry_run=True, output=out, environ=environ))
    assert report.exit_code in (0, 1)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def is_v7(text: str) -> bool:
    """RFC 9562 read by the standard library: version 7 of the RFC's variant, canonical."""
    value = uuid.UUID(text)
    return value.version == 7 and value.variant == uuid.RFC_4122 and str(value) == text


def run_ids(event: dict[str, Any]) -> list[str]:
    """The run id of an event and every run it refers to (parent, root)."""
    facets = event["run"]["facets"]
    found = [event["run"]["runId"]]
    if "parent" in facets:
        found += [facets["parent"]["run"]["runId"], facets["parent"]["root"]["run"]["runId"]]
    return found


def start_ms(when: str) -> int:
    return int(datetime.fromisoformat(when).timestamp() * 1000)


def test_the_setting_offers_every_shape() -> None:
    row = CATALOGUE.get("openlineage.server")
    assert row is not None and row.choices is not None
    assert set(row.choices) == {"auto", *modes.MODES}


@pytest.mark.parametrize("transport", ["http", "kafka", "file"])
def test_the_mode_holds_whatever_the_transport(transport: str) -> None:
    opened = open_workspace(
        DEMO, None, {**MODE, "OPENLINEAGE_TRANSPORT": transport}, lambda bad: None
    )
    assert opened.translation.server == "data-rentgen"


def test_the_mode_changes_the_fingerprint() -> None:
    plain = open_workspace(DEMO, None, {}, lambda bad: None)
    shaped = open_workspace(DEMO, None, MODE, lambda bad: None)
    assert plain.fingerprint != shaped.fingerprint


def test_every_run_id_of_the_demo_is_a_uuid7_and_parents_agree() -> None:
    shaped = events(DEMO, **MODE)
    assert len(shaped) == len(events(DEMO)) == 236
    pipeline_runs = {e["run"]["runId"] for e in shaped if "parent" not in e["run"]["facets"]}
    for event in shaped:
        assert all(is_v7(run_id) for run_id in run_ids(event))
        parent = event["run"]["facets"].get("parent")
        if parent is not None:
            assert parent["run"]["runId"] in pipeline_runs
            assert parent["root"]["run"] == parent["run"]
            assert parent["job"]["namespace"] == event["job"]["namespace"]


def test_the_time_of_a_derived_id_is_the_start_of_its_run() -> None:
    for event in events(DEMO, **MODE):
        if event["eventType"] == "START":
            assert uuid.UUID(event["run"]["runId"]).int >> 80 == start_ms(event["eventTime"])


def test_a_uuid4_trace_id_is_replaced_only_in_this_mode(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record(V4)])
    generic, shaped = events(ws.root), events(ws.root, **MODE)
    assert generic[0]["run"]["runId"] == V4
    derived = shaped[0]["run"]["runId"]
    assert derived != V4 and is_v7(derived)
    assert uuid.UUID(derived).int >> 80 == start_ms("2026-11-02T02:00:00.120+00:00")
    assert [e["run"]["runId"] for e in shaped] == [
        derived,
        *([shaped[1]["run"]["runId"]] * 2),
        derived,
    ]
    assert {e["run"]["facets"]["parent"]["run"]["runId"] for e in shaped[1:3]} == {derived}


@pytest.mark.parametrize("trace_id", [V7, V7.upper()])
def test_a_uuid7_trace_id_is_kept_as_the_run_id(ws: WorkspaceMaker, trace_id: str) -> None:
    ws.segment("000001.jsonl", [run_record(trace_id)])
    shaped = events(ws.root, **MODE)
    assert shaped[0]["run"]["runId"] == V7 == events(ws.root)[0]["run"]["runId"]
    assert shaped[1]["run"]["facets"]["parent"]["run"]["runId"] == V7


def test_an_id_that_is_no_uuid_is_derived_as_for_every_server(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record("run-20240301-0007")])
    assert [e["run"]["runId"] for e in events(ws.root, **MODE)] == [
        e["run"]["runId"] for e in events(ws.root)
    ]


def test_the_same_run_gets_the_same_id_in_every_export(make_workspace: Any) -> None:
    a, b = make_workspace(), make_workspace()
    for ws in (a, b):
        ws.segment("000001.jsonl", [run_record(V4), run_record("run-1", pipeline="daily-sales")])
    assert events(a.root, **MODE) == events(b.root, **MODE) == events(a.root, **MODE)


def test_the_letter_case_of_a_uuid_trace_id_does_not_change_its_run_id(make_workspace: Any) -> None:
    lower, upper = make_workspace(), make_workspace()
    lower.segment("000001.jsonl", [run_record(V4)])
    upper.segment("000001.jsonl", [run_record(V4.upper())])
    assert (
        events(lower.root, **MODE)[0]["run"]["runId"]
        == events(upper.root, **MODE)[0]["run"]["runId"]
    )


def test_two_runs_of_one_uuid_in_two_namespaces_get_two_ids(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record(V4)])
    first = events(ws.root, **MODE, OPENLINEAGE_NAMESPACE="a")[0]["run"]["runId"]
    second = events(ws.root, **MODE, OPENLINEAGE_NAMESPACE="b")[0]["run"]["runId"]
    assert first != second and is_v7(first) and is_v7(second)


uuids = st.uuids().map(str)


@given(
    trace=st.one_of(uuids, st.text(min_size=1, max_size=40)),
    minute=st.integers(min_value=0, max_value=59),
)
def test_derived_ids_are_uuid7_with_the_start_as_their_time(trace: str, minute: int) -> None:
    started = f"2026-11-02T02:{minute:02d}:00.250Z"
    run_id = data_rentgen.pipeline_run_id("ns", "p", trace, started)
    assert is_v7(run_id)
    as_uuid = canonical_uuid(trace)
    if as_uuid is not None and uuid.UUID(as_uuid).version == 7:
        assert run_id == as_uuid
    else:
        assert uuid.UUID(run_id).int >> 80 == start_ms(started.replace("Z", "+00:00"))
    assert run_id == data_rentgen.pipeline_run_id("ns", "p", trace, started)


@pytest.mark.parametrize(
    "text, expected",
    [
        (V7, True),
        (V4, False),
        ("00000000-0000-0000-0000-000000000000", False),
        ("019a4a1c-6f48-6d3e-9b2a-5c1d0e8f7a61", False),  # version 6
        ("019a4a1c-6f48-7d3e-cb2a-5c1d0e8f7a61", False),  # version nibble 7, Microsoft's variant
    ],
)
def test_only_rfc_9562_version_7_counts_as_uuid7(text: str, expected: bool) -> None:
    assert data_rentgen.is_uuid7(text) is expected is is_v7(text)


def test_the_trace_id_rides_as_the_external_id_and_the_attempt_as_the_attempt(
    ws: WorkspaceMaker,
) -> None:
    ws.segment(
        "000001.jsonl",
        [
            run_record(
                "run-7",
                trigger="manual",
                stages=[stage_record(status="failed"), stage_record(attempt=2)],
            )
        ],
    )
    shaped = events(ws.root, **MODE)
    pipeline = [e for e in shaped if "parent" not in e["run"]["facets"]]
    stages = [e for e in shaped if "parent" in e["run"]["facets"]]
    for event in pipeline:
        facet = event["run"]["facets"]["dataRentgen_run"]
        assert facet["external_id"] == "run-7" and "attempt" not in facet
        assert (
            facet["_schemaURL"]
            == "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"
        )
        assert event["run"]["facets"]["tags"]["tags"] == [
            {"key": "trigger", "value": "manual", "source": "LINEAGE_HUB"}
        ]
    assert [e["run"]["facets"]["dataRentgen_run"]["attempt"] for e in stages] == [
        "1",
        "1",
        "2",
        "2",
    ]
    assert all("tags" not in e["run"]["facets"] for e in stages)


@pytest.mark.parametrize(
    "namespace, expected",
    [
        ("acme-analytics", "lineage-hub://acme-analytics"),
        ("team/etl", "lineage-hub://team%2Fetl"),
        ("airflow://prod-airflow", "airflow://prod-airflow"),
    ],
)
def test_the_jobs_are_given_a_location(ws: WorkspaceMaker, namespace: str, expected: str) -> None:
    ws.segment("000001.jsonl", [run_record("run-1")])
    shaped = events(ws.root, **MODE, OPENLINEAGE_NAMESPACE=namespace)
    assert {e["job"]["namespace"] for e in shaped} == {expected}
    assert {e["run"]["facets"]["parent"]["job"]["namespace"] for e in shaped[1:3]} == {expected}
    report = run_export(
        ExportRequest(
            workspace=ws.root,
            dry_run=True,
            output=io.BytesIO(),
            environ={**MODE, "OPENLINEAGE_NAMESPACE": namespace},
        )
    )
    assert report.namespace == expected


def without_the_mode(event: dict[str, Any]) -> dict[str, Any]:
    """An event less what Data.Rentgen mode changes: run ids, job namespaces, the tags that
    carry the trace id and attempt, its own run facet."""
    facets = {
        k: v for k, v in event["run"]["facets"].items() if k not in ("dataRentgen_run", "tags")
    }
    tags = [
        t
        for t in event["run"]["facets"].get("tags", {}).get("tags", [])
        if t["key"] not in ("traceId", "attempt")
    ]
    if "parent" in facets:
        parent = facets["parent"]
        facets["parent"] = {
            **parent,
            "run": {},
            "job": {**parent["job"], "namespace": ""},
            "root": {"run": {}, "job": {**parent["job"], "namespace": ""}},
        }
    return {
        **event,
        "run": {"facets": facets, "tags": tags},
        "job": {**event["job"], "namespace": ""},
    }


def test_nothing_else_changes() -> None:
    assert [without_the_mode(e) for e in events(DEMO, **MODE)] == [
        without_the_mode(e) for e in events(DEMO)
    ]


def test_the_events_are_valid_openlineage(tmp_path: Path) -> None:
    spec = SHARED / "openlineage-spec"
    if not spec.is_dir():
        pytest.skip(f"{spec} is absent: a local copy of the schemas lives in ../shared")
    out = tmp_path / "events.jsonl"
    out.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in events(DEMO, **MODE)))
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "validate.py"), "--spec", str(spec), str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1] == "236 valid, 0 invalid"
