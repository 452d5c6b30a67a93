"""The export's report: the exit code tells the truth, and --json says what the summary says."""

from __future__ import annotations

import random

import pytest

from openlineage_export.export.report import MAX_LISTED, ExportReport, FailedRun
from openlineage_export.hub.model import BadEntry
from openlineage_export.terminal.summary import NAMESPACES_LISTED, summary


def report(**fields: object) -> ExportReport:
    r = ExportReport(destination="https://lineage.test/api/v1/lineage", dry_run=False)
    for name, value in fields.items():
        setattr(r, name, value)
    return r


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({}, 0),
        ({"bad_entries": 1}, 1),
        ({"runs_failed": 2}, 1),
        ({"outage": "gone", "runs_failed": 2}, 4),
        ({"cancelled": True, "outage": "gone", "bad_entries": 3}, 130),
    ],
)
def test_the_exit_code_tells_the_truth(fields: dict[str, object], code: int) -> None:
    assert report(**fields).exit_code == code


def test_everything_is_counted_and_the_first_ones_are_kept_by_name() -> None:
    r = report()
    for i in range(MAX_LISTED + 25):
        r.add_bad(BadEntry("audit/000001.jsonl", i + 1, "not JSON"))
        r.add_failed(FailedRun(f"t{i:04d}", f"id{i}", "p", "HTTP 422", 0))
        r.warn(f"warning {i}")
    assert (r.bad_entries, r.runs_failed) == (MAX_LISTED + 25, MAX_LISTED + 25)
    assert len(r.bad) == len(r.failed) == len(r.warnings) == MAX_LISTED


def test_refusals_come_in_a_stable_order_whatever_order_they_were_answered_in() -> None:
    r = report()
    for trace_id, pipeline, reason in [
        ("b", "z", "HTTP 422"),
        ("a", "z", "HTTP 400"),
        ("c", "a", "HTTP 422"),
        ("a", "a", "HTTP 422"),
    ]:
        r.add_failed(FailedRun(trace_id, f"id-{trace_id}", pipeline, reason, 0))
    assert [(f.pipeline, f.reason, f.trace_id) for f in r.failed_in_order()] == [
        ("a", "HTTP 422", "a"),
        ("a", "HTTP 422", "c"),
        ("z", "HTTP 400", "a"),
        ("z", "HTTP 422", "b"),
    ]


def test_json_holds_what_the_summary_holds() -> None:
    r = report(
        namespace="acme-analytics",
        namespace_from="acme analytics",
        runs_total=3,
        runs_sent=1,
        events_sent=4,
        runs_unchanged=1,
        never_run=["churn"],
    )
    r.add_failed(FailedRun("t1", "id1", "daily-sales", "HTTP 422: no", 2))
    r.add_bad(BadEntry("audit/000001.jsonl", 7, "not JSON"))
    r.warn("run t9 ends before it starts")
    data = r.to_dict()
    assert data["runs"] == {"total": 3, "sent": 1, "unchanged": 1, "held": 0, "failed": 1}
    assert data["events"] == {"sent": 4} and data["neverRun"] == ["churn"]
    assert data["badEntries"] == {
        "count": 1,
        "listed": [{"file": "audit/000001.jsonl", "line": 7, "reason": "not JSON"}],
    }
    assert data["failedRuns"][0]["reason"] == "HTTP 422: no"
    assert data["namespaceFrom"] == "acme analytics" and data["warnings"] == [
        "run t9 ends before it starts"
    ]
    assert data["exitCode"] == 1 and data["cancelled"] is False and data["outage"] is None


def test_the_dataset_namespaces_kept_are_bounded_and_the_same_in_any_order() -> None:
    """Attacker B (F02's variant): the report kept every distinct dataset namespace of the
    export, so its memory grew with the trail (2 lines of 50k namespaces: 206 MB). It keeps the
    first MAX_LISTED in sorted order, whatever order the runs ended in, and says there were
    more."""
    names = [f"s3://bucket-{i:05d}" for i in range(5 * MAX_LISTED)]
    kept = []
    for seed in (1, 2):
        shuffled = names + names[:50]
        random.Random(seed).shuffle(shuffled)
        r = report()
        for start in range(0, len(shuffled), 7):
            r.add_dataset_namespaces(shuffled[start : start + 7])
        assert r.dataset_namespaces_more
        kept.append(r.to_dict()["datasetNamespaces"])
    assert kept[0] == kept[1] == names[:MAX_LISTED]
    line = next(x for x in summary(r).splitlines() if x.startswith("datasets written"))
    assert f"and more (--json lists the first {MAX_LISTED})" in line


def test_a_few_dataset_namespaces_are_all_kept_and_counted() -> None:
    r = report()
    r.add_dataset_namespaces(["s3://b", "kafka://k", "s3://b"])
    r.add_dataset_namespaces([f"ns{i:02d}" for i in range(NAMESPACES_LISTED)])
    data = r.to_dict()
    assert len(data["datasetNamespaces"]) == NAMESPACES_LISTED + 2
    assert data["datasetNamespacesMore"] is False
    assert "and 2 more (--json lists them)" in summary(r)


def test_the_summary_lists_the_first_pipelines_never_run_and_counts_the_rest() -> None:
    """Attacker B (F14): one ``never run:`` line per pipeline of the graph, 3 million lines for
    a graph of 3 million pipelines that never ran."""
    never = [f"p{i:06d}" for i in range(MAX_LISTED + 1234)]
    lines = summary(report(never_run=never)).splitlines()
    listed = [line for line in lines if line.startswith("never run: ")]
    assert [line.split()[2] for line in listed] == never[:MAX_LISTED]
    assert "... and 1,234 more pipelines never run (--json lists them all)" in lines
    assert report(never_run=never).to_dict()["neverRun"] == never
