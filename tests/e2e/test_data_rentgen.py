"""End to end against a real Data.Rentgen (scripts/data-rentgen.sh; scripts/test.sh starts it
and sets DATA_RENTGEN_URL and OLX_REQUIRE_DATA_RENTGEN): the demo and a synthetic trail of 300
runs exported with the kafka transport in Data.Rentgen mode (``openlineage.server:
data-rentgen``) into a topic its consumer reads, then read back through its REST API.

What must hold: every event is parsed (none of this test's is on its malformed-messages
topic), and its jobs, runs, parent links, operations, datasets, inputs, outputs (rows, bytes)
and statuses are what was sent (the export's dry run, in the same mode); exporting again from
another machine changes nothing there; a trace id that is already a UUIDv7 is the run id. And,
what the mode is for: without it, Data.Rentgen refuses every event of a run whose trace id is a
UUIDv4.

Each test exports into a job namespace of its own (``olx-e2e-<hex>``, which Data.Rentgen shows at
``lineage-hub://olx-e2e-<hex>``), so that tests and sessions never see each other's runs: the
datasets are shared (their locations are the data's), the jobs and runs are not. They share
one topic (tests/e2e/rentgen.py says why). How the consumer is seen to have taken everything:
tests/e2e/rentgen.py.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient
from helpers import DEMO, WorkspaceMaker, run_cli, run_record
from hubwriter.synth import write_workspace
from rentgen import DataRentgen, Held, bootstrap, malformed_with, sent, settle, shared_topic

pytestmark = pytest.mark.e2e


@pytest.fixture
def topic(rentgen_kafka: AdminClient, rentgen: DataRentgen) -> str:
    return shared_topic(rentgen_kafka)


@pytest.fixture
def job_namespace() -> str:
    return f"olx-e2e-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def env(topic: str, job_namespace: str, tmp_path: Path) -> dict[str, str]:
    """The CLI's environment: kafka to ``topic``, Data.Rentgen mode, this test's namespace."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    return {
        **environ,
        "OPENLINEAGE_TRANSPORT": "kafka",
        "OPENLINEAGE_SERVER": "data-rentgen",
        "OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS": bootstrap(),
        "OPENLINEAGE_KAFKA_TOPIC": topic,
        "OPENLINEAGE_NAMESPACE": job_namespace,
        "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "config"),
        "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
    }


def export(workspace: Path, env: dict[str, str]) -> dict[str, Any]:
    """Export ``workspace``; its --json summary."""
    result = run_cli("export", "-w", str(workspace), "--json", env=env)
    assert result.returncode == 0, result.stderr + result.stdout
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary


def dry_run_lines(workspace: Path, env: dict[str, str], tmp_path: Path) -> list[bytes]:
    """The bytes of each event the export sends, as its dry run writes them."""
    out = tmp_path / f"events-{uuid.uuid4().hex[:6]}.jsonl"
    result = run_cli("export", "--dry-run", "-w", str(workspace), "-o", str(out), "-q", env=env)
    assert result.returncode == 0, result.stderr
    return out.read_bytes().splitlines()


def dry_run(workspace: Path, env: dict[str, str], tmp_path: Path) -> list[dict[str, Any]]:
    """The events the export sends."""
    return [json.loads(line) for line in dry_run_lines(workspace, env, tmp_path)]


def trace_ids(workspace: Path) -> set[str]:
    """The trace ids of the runs on a workspace's trail (its good ``run`` lines)."""
    found = set()
    for segment in sorted((workspace / ".workspace" / "lineage" / "audit").iterdir()):
        data = segment.read_bytes()
        for line in (gzip.decompress(data) if segment.suffix == ".gz" else data).splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("kind") == "run":
                    found.add(record["traceId"])
    return found


def assert_holds(held: Held, expected: Held) -> None:
    """Data.Rentgen holds exactly what was sent, part by part (so a failure says which)."""
    assert held.jobs == expected.jobs
    assert held.runs == expected.runs
    assert held.parents == expected.parents
    assert held.operations == expected.operations
    assert held.datasets == expected.datasets
    assert held.inputs == expected.inputs
    assert held.outputs == expected.outputs


def test_the_demo_lands_whole_and_a_second_export_changes_nothing(
    rentgen: DataRentgen,
    rentgen_kafka: AdminClient,
    env: dict[str, str],
    topic: str,
    job_namespace: str,
    tmp_path: Path,
) -> None:
    events = dry_run(DEMO, env, tmp_path)
    summary = export(DEMO, env)
    assert summary["runs"]["sent"] == summary["runs"]["total"] == 31
    assert summary["events"]["sent"] == len(events) == 236
    settle(rentgen, rentgen_kafka, topic)
    assert malformed_with(job_namespace) == []
    expected = sent(events)
    held = rentgen.held(f"lineage-hub://{job_namespace}")
    assert_holds(held, expected)
    assert (len(held.jobs), len(held.runs), len(held.operations)) == (19, 119, 87)
    assert len(expected.schemas) == 5  # the demo writes each of these with one schema
    assert {key: held.schemas.get(key) for key in expected.schemas} == expected.schemas
    assert {run.external_id for run in held.runs.values() if run.parent is None} == trace_ids(DEMO)

    # Another machine (no ledger: every run is sent again) exports the same demo.
    again = export(DEMO, {**env, "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "other")})
    assert again["events"]["sent"] == 236
    settle(rentgen, rentgen_kafka, topic)
    assert malformed_with(job_namespace) == []
    assert_holds(rentgen.held(f"lineage-hub://{job_namespace}"), expected)


def test_a_synthetic_trail_of_300_runs_lands_whole(
    rentgen: DataRentgen,
    rentgen_kafka: AdminClient,
    env: dict[str, str],
    topic: str,
    job_namespace: str,
    tmp_path: Path,
) -> None:
    trail = write_workspace(tmp_path / "synthetic", 300, seed=31)
    assert trail["runs"] == 300
    events = dry_run(tmp_path / "synthetic", env, tmp_path)
    summary = export(tmp_path / "synthetic", env)
    assert summary["runs"]["sent"] == summary["runs"]["total"] == 300
    assert summary["events"]["sent"] == len(events)
    settle(rentgen, rentgen_kafka, topic)
    assert malformed_with(job_namespace) == []
    held = rentgen.held(f"lineage-hub://{job_namespace}")
    assert_holds(held, sent(events))
    assert sum(run.parent is None for run in held.runs.values()) == 300


def uuid7(at: datetime) -> str:
    """A UUIDv7 (RFC 9562) of the instant ``at``, the rest random: a trace id an editor of
    today could write."""
    value = (int(at.timestamp() * 1000) << 80) | (uuid.uuid4().int & ((1 << 80) - 1))
    value = (value & ~(0xF << 76)) | (7 << 76)
    value = (value & ~(0b11 << 62)) | (0b10 << 62)
    return str(uuid.UUID(int=value))


def test_a_uuid7_trace_id_stays_the_run_id_and_a_uuid4_gets_one_derived(
    rentgen: DataRentgen,
    rentgen_kafka: AdminClient,
    env: dict[str, str],
    topic: str,
    job_namespace: str,
    ws: WorkspaceMaker,
    tmp_path: Path,
) -> None:
    v7 = uuid7(datetime(2026, 11, 2, 2, 0, 0, 120_000, tzinfo=UTC))
    v4 = str(uuid.uuid4())
    ws.segment("000001.jsonl", [run_record(v7.upper()), run_record(v4)])
    events = dry_run(ws.root, env, tmp_path)
    export(ws.root, env)
    settle(rentgen, rentgen_kafka, topic)
    assert malformed_with(job_namespace) == []
    held = rentgen.held(f"lineage-hub://{job_namespace}")
    assert_holds(held, sent(events))
    pipeline_runs = {
        run_id: run.external_id for run_id, run in held.runs.items() if run.parent is None
    }
    assert pipeline_runs[v7] == v7.upper()
    (derived,) = (run_id for run_id, trace in pipeline_runs.items() if trace == v4)
    assert derived != v4 and uuid.UUID(derived).version == 7


def test_without_the_mode_every_event_of_a_uuid4_run_is_refused(
    rentgen: DataRentgen,
    rentgen_kafka: AdminClient,
    env: dict[str, str],
    topic: str,
    job_namespace: str,
    tmp_path: Path,
) -> None:
    generic = {**env, "OPENLINEAGE_SERVER": "generic"}
    lines = dry_run_lines(DEMO, generic, tmp_path)
    export(DEMO, generic)
    settle(rentgen, rentgen_kafka, topic)

    def uuid7_only(line: bytes) -> bool:
        run = json.loads(line)["run"]
        parent = run["facets"].get("parent", {"run": run})
        return all(uuid.UUID(r["runId"]).version == 7 for r in (run, parent["run"]))

    kept = [line for line in lines if uuid7_only(line)]
    refused = malformed_with(job_namespace)
    assert (len(kept), len(refused)) == (32, 204)
    assert sorted(refused) == sorted(line for line in lines if not uuid7_only(line))
    held = rentgen.held(f"unknown://{job_namespace}")
    assert held.runs == sent([json.loads(line) for line in kept]).runs
