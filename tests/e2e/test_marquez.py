"""End to end against the real Marquez: export the demo, read it back through Marquez's API."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from helpers import DEMO, run_cli

pytestmark = pytest.mark.e2e

STATE = {"COMPLETE": "COMPLETED", "FAIL": "FAILED", "ABORT": "ABORTED", "START": "RUNNING"}


@pytest.fixture
def env(marquez: Any, namespace: str, tmp_path: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    return {
        **environ,
        "OPENLINEAGE_URL": marquez.url,
        "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "config"),
    }


def dry_run(env: dict[str, str], tmp_path: Path) -> list[dict[str, Any]]:
    out = tmp_path / "events.jsonl"
    result = run_cli("export", "--dry-run", "-w", str(DEMO), "-o", str(out), "-q", env=env)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in out.read_text().splitlines()]


def expected_runs(events: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """job name -> {run id: the state Marquez must show} (the last event of a run decides)."""
    jobs: dict[str, dict[str, str]] = defaultdict(dict)
    for event in events:
        jobs[event["job"]["name"]][event["run"]["runId"]] = STATE[event["eventType"]]
    return jobs


def export(env: dict[str, str], *args: str) -> dict[str, Any]:
    result = run_cli("export", "-w", str(DEMO), "--json", *args, env=env)
    assert result.returncode == 0, result.stderr + result.stdout
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_demo_history_shows_up_in_marquez(
    marquez: Any, namespace: str, env: dict[str, str], tmp_path: Path
) -> None:
    events = dry_run(env, tmp_path)
    # --full: every run sent, whatever an earlier test of the session left in Marquez (from an
    # empty ledger, an export sends only what Marquez does not hold: test_marquez_held.py).
    report = export(env, "--full")
    assert report["runs"]["sent"] == report["runs"]["total"] == 31
    assert report["events"]["sent"] == len(events)
    assert report["neverRun"] == ["churn-model"]

    expected = expected_runs(events)
    jobs = marquez.jobs(namespace)
    assert set(jobs) == set(expected)  # pipelines and stages; never-run pipeline absent
    assert not any(name.startswith("churn-model") for name in jobs)
    for name, runs in expected.items():
        pipeline, _, stage = name.partition(".")
        if stage:
            assert jobs[name]["parentJobName"] == pipeline, name
        in_marquez = {run["id"]: run["state"] for run in marquez.runs(namespace, name)}
        assert in_marquez == runs, name
    states = {state for runs in expected.values() for state in runs.values()}
    assert states == {"COMPLETED", "FAILED", "ABORTED", "RUNNING"}


def test_uuid_trace_ids_are_the_run_ids_in_marquez(
    marquez: Any, namespace: str, env: dict[str, str]
) -> None:
    export(env)
    trace_ids = set()
    for segment in sorted((DEMO / ".workspace/lineage/audit").iterdir()):
        opener = __import__("gzip").open if segment.name.endswith(".gz") else open
        with opener(segment, "rt") as lines:
            for line in lines:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if record.get("kind") == "run" and len(record["traceId"]) == 36:
                    trace_ids.add((record["pipeline"], record["traceId"]))
    assert any(t != t.lower() for _, t in trace_ids), "the demo should have an upper-case one"
    jobs = marquez.jobs(namespace)
    for pipeline, trace_id in trace_ids:
        if pipeline in jobs:
            ids = {run["id"] for run in marquez.runs(namespace, pipeline)}
            assert trace_id.lower() in ids


def test_digests_ride_as_the_dataset_version_facet(
    marquez: Any, namespace: str, env: dict[str, str], tmp_path: Path
) -> None:
    events = dry_run(env, tmp_path)
    export(env)
    # Marquez files a read under the dataset's current version and merges the facets of every
    # event that touched a version; datasets nobody reads show exactly their writer's facets.
    read = {(i["namespace"], i["name"]) for e in events for i in e["inputs"]}
    checked = 0
    for event in events:
        if event["eventType"] != "COMPLETE":
            continue
        (run,) = [
            r
            for r in marquez.runs(namespace, event["job"]["name"])
            if r["id"] == event["run"]["runId"]
        ]
        inputs = {
            (i["datasetVersionId"]["namespace"], i["datasetVersionId"]["name"])
            for i in run["inputDatasetVersions"]
        }
        assert inputs == {(i["namespace"], i["name"]) for i in event["inputs"]}
        for output in event["outputs"]:
            digest = output["facets"].get("version", {}).get("datasetVersion")
            if digest is None or (output["namespace"], output["name"]) in read:
                continue
            (version,) = [
                v["datasetVersionId"]
                for v in run["outputDatasetVersions"]
                if v["datasetVersionId"]["name"] == output["name"]
                and v["datasetVersionId"]["namespace"] == output["namespace"]
            ]
            stored = marquez.dataset_version(version["namespace"], version["name"], run["id"])
            assert stored["facets"]["version"]["datasetVersion"] == digest
            checked += 1
    assert checked >= 5


def test_exporting_twice_keeps_one_run_per_run_id_in_its_final_state(
    marquez: Any, namespace: str, env: dict[str, str], tmp_path: Path
) -> None:
    events = dry_run(env, tmp_path)
    export(env)
    first = {name: marquez.runs(namespace, name) for name in marquez.jobs(namespace)}
    export(env)
    second = {name: marquez.runs(namespace, name) for name in marquez.jobs(namespace)}
    assert {n: sorted((r["id"], r["state"]) for r in runs) for n, runs in first.items()} == {
        n: sorted((r["id"], r["state"]) for r in runs) for n, runs in second.items()
    }
    assert sum(len(runs) for runs in second.values()) == len({e["run"]["runId"] for e in events})


def test_a_server_that_forgot_the_namespace_is_told_and_sent_every_run_again(
    marquez: Any, tmp_path: Path
) -> None:
    """Marquez forgets (here: the namespace deleted through its API, which hides it, its jobs
    and runs; a database reset or an older backup does the same or worse): the ledger still
    says every run was accepted. The export asks Marquez first, says what it no longer has in
    one line, and sends every run again; Marquez shows them again."""
    import uuid
    from urllib.parse import quote

    from helpers import WorkspaceMaker, run_record

    namespace = f"olx-recall-{uuid.uuid4().hex[:10]}"  # a namespace of this test's own
    trace_ids = [str(uuid.uuid4()) for _ in range(4)]  # a UUID trace id is the run id
    ws = WorkspaceMaker(tmp_path / "ws")
    ws.segment("000001.jsonl", [run_record(trace_id) for trace_id in trace_ids])
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    env = {
        **environ,
        "OPENLINEAGE_URL": marquez.url,
        "OPENLINEAGE_NAMESPACE": namespace,
        "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "config"),
        "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
    }

    def export_json() -> dict[str, Any]:
        result = run_cli("export", "-w", str(ws.root), "--json", env=env)
        assert result.returncode == 0, result.stderr + result.stdout
        report: dict[str, Any] = json.loads(result.stdout)
        return report

    assert export_json()["runs"]["sent"] == 4
    again = export_json()  # Marquez has them all: asked, nothing said, nothing sent
    assert again["runs"] == {"total": 4, "sent": 0, "unchanged": 4, "held": 0, "failed": 0}
    assert again["warnings"] == []

    path = f"/api/v1/namespaces/{quote(namespace, safe='')}"
    assert marquez.http.delete(path).status_code == 200
    assert marquez.get(path)["isHidden"] is True

    third = export_json()
    assert third["runs"] == {"total": 4, "sent": 4, "unchanged": 0, "held": 0, "failed": 0}, third
    assert third["warnings"] == [
        f"the server no longer has the namespace '{namespace}' that the ledger says its runs "
        "were sent to (a database reset, or a restore of an older backup?): sending every "
        "run again"
    ]
    assert marquez.get(path)["isHidden"] is False
    for trace_id in trace_ids:
        assert marquez.get(f"/api/v1/jobs/runs/{trace_id}")["id"] == trace_id
    assert export_json()["warnings"] == []  # and then it remembers again
