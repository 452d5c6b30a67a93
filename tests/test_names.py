"""Job names: two different jobs never get the same one (translate/names.py)."""

from __future__ import annotations

import io
import json

from helpers import WorkspaceMaker, run_record, stage_record

from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.report import ExportReport
from openlineage_export.translate.names import JobNames

GRAPH = {
    "format": "lineage-hub/graph@1",
    "workspace": {"name": "dots"},
    "pipelines": [
        {"id": "a.b", "stages": [{"id": "c"}]},
        {"id": "a", "stages": [{"id": "b.c"}, {"id": "b"}, {"id": "z"}]},
        {"id": "fine", "stages": [{"id": "s"}]},
    ],
}


def dry_run(ws: WorkspaceMaker) -> tuple[ExportReport, list[dict[str, object]]]:
    out = io.BytesIO()
    report = run_export(ExportRequest(ws.root, dry_run=True, output=out))
    return report, [json.loads(line) for line in out.getvalue().splitlines()]


def jobs_by_name(events: list[dict]) -> dict[str, set[str]]:
    """Each emitted job name -> the jobType facets (DAG or TASK) it was emitted with."""
    found: dict[str, set[str]] = {}
    for event in events:
        job = event["job"]
        found.setdefault(job["name"], set()).add(job["facets"]["jobType"]["jobType"])
    return found


def test_runs_whose_job_name_would_stand_for_two_jobs_are_refused_by_name(
    ws: WorkspaceMaker,
) -> None:
    ws.graph(GRAPH)
    ws.segment(
        "000001.jsonl",
        [
            run_record("ab-1", pipeline="a.b", stages=[stage_record("c")]),
            run_record("a-1", pipeline="a", stages=[stage_record("b.c")]),
            run_record("a-2", pipeline="a", stages=[stage_record("b")]),
            run_record(
                "a-3", pipeline="a", stages=[stage_record("z"), stage_record("b", status="skipped")]
            ),
            run_record("fine-1", pipeline="fine", stages=[stage_record("s")]),
        ],
    )
    report, events = dry_run(ws)
    assert report.exit_code == 1
    refused = {f.trace_id: f.reason for f in report.failed}
    assert set(refused) == {"ab-1", "a-1", "a-2"}
    assert refused["a-2"].startswith(
        "job name 'a.b' would stand for both pipeline 'a.b' and stage 'b' of pipeline 'a'"
    )
    assert (
        "job name 'a.b.c' would stand for both stage 'b.c' of pipeline 'a' and stage 'c' of "
        "pipeline 'a.b'" in refused["a-1"]
    )
    assert len(report.warnings) == 2 and all(
        "give one of them another id" in w for w in report.warnings
    )
    # What was built is unambiguous: each name one job, and the other runs all there.
    assert report.runs_sent == 2
    assert all(len(kinds) == 1 for kinds in jobs_by_name(events).values())
    assert set(jobs_by_name(events)) == {"a", "a.z", "fine", "fine.s"}


def test_a_pipeline_deleted_from_the_graph_still_counts(ws: WorkspaceMaker) -> None:
    ws.graph({**GRAPH, "pipelines": [{"id": "a", "stages": [{"id": "b"}]}]})
    ws.segment(
        "000001.jsonl",
        [
            run_record("old", pipeline="a.b", stages=[stage_record("x")]),
            run_record("new", pipeline="a", stages=[stage_record("b")]),
            run_record("other", pipeline="a", stages=[stage_record("y")]),
        ],
    )
    report, events = dry_run(ws)
    assert {f.trace_id for f in report.failed} == {"old", "new"}
    assert set(jobs_by_name(events)) == {"a", "a.y"}


def test_stages_only_the_trail_knows_count_too(ws: WorkspaceMaker) -> None:
    ws.graph({**GRAPH, "pipelines": []})
    ws.segment(
        "000001.jsonl",
        [
            run_record("one", pipeline="p", stages=[stage_record("q.r")]),
            run_record("two", pipeline="p.q", stages=[stage_record("r")]),
        ],
    )
    report, events = dry_run(ws)
    assert {f.trace_id for f in report.failed} == {"one", "two"}
    assert events == []


def test_dotted_ids_that_do_not_clash_are_exported_as_they_are(ws: WorkspaceMaker) -> None:
    ws.graph({**GRAPH, "pipelines": [{"id": "sales.daily", "stages": [{"id": "load.v2"}]}]})
    ws.segment(
        "000001.jsonl", [run_record("r", pipeline="sales.daily", stages=[stage_record("load.v2")])]
    )
    report, events = dry_run(ws)
    assert report.exit_code == 0 and report.warnings == []
    assert set(jobs_by_name(events)) == {"sales.daily", "sales.daily.load.v2"}


def test_the_check_is_a_function_of_the_jobs_alone() -> None:
    names = JobNames([("a.b", None), ("a", "b"), ("a", "b"), ("x", None), ("x", "y")])
    assert list(names.clashes) == ["a.b"]
    assert names.clashes["a.b"].claims == (("a.b", None), ("a", "b"))
    assert JobNames([("x", None), ("x", "y.z"), ("x.y", "w")]).clashes == {}
