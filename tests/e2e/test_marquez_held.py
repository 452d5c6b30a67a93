"""End to end against the real Marquez: a first export (an empty ledger, as on a CI job's fresh
machine) asks Marquez what it already holds and sends only the rest (deliver/http/held.py).

A proxy in front of Marquez (faultproxy.py, no faults) counts what reached it: the POSTs (the
events) and the reads (the questions)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from faultproxy import FaultProxy, Passed
from helpers import run_cli
from hubwriter.synth import write_workspace

pytestmark = pytest.mark.e2e

NAMESPACE = "olx-held-e2e"
"""A namespace of this test's own (Marquez is emptied once per session)."""


def cli(env: dict[str, str], *args: str) -> dict[str, Any]:
    """Run the CLI to success; its ``--json`` report (or nothing without ``--json``)."""
    result = run_cli(*args, env=env)
    assert result.returncode == 0, result.stderr + result.stdout
    if "--json" not in args:
        return {}
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def environment(tmp_path: Path, url: str, state: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    return {
        **environ,
        "OPENLINEAGE_URL": url,
        "OPENLINEAGE_NAMESPACE": NAMESPACE,
        "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "config"),
        "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / state),  # a fresh machine: empty
    }


def completed(record: dict[str, Any]) -> dict[str, Any]:
    """The later record of a run recorded while running: it has ended."""
    stages = [
        {**stage, "status": "succeeded", "endedAt": "2026-12-01T00:00:00.000Z"}
        if stage["status"] == "running"
        else stage
        for stage in record["stages"]
    ]
    return {
        **record,
        "status": "succeeded",
        "stages": stages,
        "endedAt": "2026-12-01T00:00:01.000Z",
        "recordedAt": "2026-12-01T00:00:02.000Z",
    }


def taken(passed: list[Passed]) -> list[Any]:
    """The events Marquez took, of the requests the proxy passed on: every one but the first
    batch of an export from an empty ledger, which Marquez 0.51 has no endpoint for (the export
    then sends one event a request)."""
    batches = [p for p in passed if p.body.startswith(b"[")]
    assert all(p.status in (404, 405) for p in batches), [p.status for p in batches]
    assert all(200 <= p.status < 300 for p in passed if p not in batches)
    return [json.loads(p.body) for p in passed if p not in batches]


def test_a_trail_marquez_holds_is_not_sent_again_from_an_empty_ledger_but_a_change_is(
    marquez: Any, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    summary = write_workspace(ws, 40, seed=4242, pipelines=4, running_tail=2)
    with FaultProxy(marquez.url, seed=0) as proxy:
        loaded = cli(environment(tmp_path, proxy.url, "a"), "export", "-w", str(ws), "--json")
        assert loaded["runs"]["sent"] == summary["runs"] and loaded["runs"]["failed"] == 0
        assert len(taken(proxy.passed)) == loaded["events"]["sent"] > 0
        assert loaded["batches"] == 0 and [note for note in loaded["notes"] if "batch" in note]

        # Another machine, an empty ledger: Marquez is asked, nothing is posted.
        posted, reads = len(proxy.passed), len(proxy.reads)
        again = cli(environment(tmp_path, proxy.url, "b"), "export", "-w", str(ws), "--json")
        assert len(proxy.passed) == posted, "Marquez held every run: nothing is sent"
        assert again["runs"]["held"] == again["runs"]["unchanged"] == summary["runs"]
        assert again["runs"]["sent"] == 0 and again["warnings"] == []
        assert len(proxy.reads) > reads
        assert all(
            read.startswith(f"GET /api/v1/namespaces/{NAMESPACE}") for read in proxy.reads[reads:]
        )

        # A run recorded while running has ended since: only its events go.
        segment = sorted((ws / ".workspace/lineage/audit").iterdir())[-1]
        lines = [json.loads(line) for line in segment.read_text().splitlines()]
        running = [r for r in lines if r.get("kind") == "run" and r["status"] == "running"][-1]
        with segment.open("a") as trail:
            trail.write(json.dumps(completed(running)) + "\n")
        out = tmp_path / "events.jsonl"
        cli(
            environment(tmp_path, proxy.url, "dry"),
            "export",
            "--dry-run",
            "-w",
            str(ws),
            "-o",
            str(out),
            "-q",
        )
        events = [json.loads(line) for line in out.read_text().splitlines()]
        run_id = running["traceId"].lower()  # a UUID trace id is the run id
        of_run = [
            (e["run"]["runId"], e["eventType"], e["eventTime"])
            for e in events
            if e["run"]["runId"] == run_id
            or e["run"]["facets"].get("parent", {}).get("run", {}).get("runId") == run_id
        ]
        posted = len(proxy.passed)
        third = cli(environment(tmp_path, proxy.url, "c"), "export", "-w", str(ws), "--json")
        sent = taken(proxy.passed[posted:])
    assert third["runs"]["sent"] == 1 and third["runs"]["held"] == summary["runs"] - 1
    assert sorted((e["run"]["runId"], e["eventType"], e["eventTime"]) for e in sent) == sorted(
        of_run
    )
    assert {state for _, state, _ in of_run} >= {"START", "COMPLETE"}
    held = {run["id"]: run["state"] for run in marquez.runs(NAMESPACE, running["pipeline"])}
    assert held[run_id] == "COMPLETED"
