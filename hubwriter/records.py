"""What a test starts from: a small valid graph and run records, and the forms of a line.

:data:`GRAPH`, :func:`run_record` and :func:`stage_record` agree with each other (the run's
pipeline, stage and datasets are the graph's), so a workspace of them exports cleanly; keyword
arguments change or add fields.
"""

from __future__ import annotations

import json
from typing import Any

Line = dict[str, Any] | str | bytes
"""A line of a segment: a record (written as ``json.dumps`` writes it), text, or raw bytes."""

GRAPH: dict[str, Any] = {
    "format": "lineage-hub/graph@1",
    "workspace": {"name": "test-ws"},
    "pipelines": [
        {
            "id": "daily-sales",
            "name": "Daily sales",
            "description": "Builds the sales mart.",
            "stages": [
                {
                    "id": "extract",
                    "description": "Pull orders",
                    "source": "pipelines/extract.py",
                    "reads": ["postgres://db:5432/sales.public.orders"],
                    "writes": ["data/raw/o.parquet"],
                },
                {"id": "load", "source": "pipelines/load.sql"},
            ],
        },
        {"id": "never", "name": "Never ran", "stages": [{"id": "only"}]},
    ],
}
"""A graph of two pipelines: ``daily-sales`` (two stages) and ``never``, which never ran."""


def run_record(
    trace_id: str = "run-1",
    *,
    pipeline: str = "daily-sales",
    status: str = "succeeded",
    stages: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A valid ``kind: run`` record; keyword arguments override or add fields."""
    record: dict[str, Any] = {
        "kind": "run",
        "traceId": trace_id,
        "pipeline": pipeline,
        "status": status,
        "startedAt": "2026-11-02T02:00:00.120Z",
        "recordedAt": "2026-11-02T02:07:32.010Z",
        "engine": {"name": "hub-engine", "version": "4.2.0"},
        "stages": stages if stages is not None else [stage_record()],
    }
    if status != "running":
        record["endedAt"] = "2026-11-02T02:07:31.904Z"
    record.update(extra)
    return record


def stage_record(
    stage: str = "extract", *, status: str = "succeeded", attempt: int = 1, **extra: Any
) -> dict[str, Any]:
    """A valid stage execution."""
    record: dict[str, Any] = {
        "stage": stage,
        "attempt": attempt,
        "status": status,
        "startedAt": "2026-11-02T02:00:00.300Z",
        "reads": [{"dataset": "postgres://db:5432/sales.public.orders", "digest": "sha256:aa"}],
        "writes": [
            {
                "dataset": "data/raw/o.parquet",
                "digest": "sha256:bb",
                "rows": 3,
                "bytes": 10,
                "schema": [{"name": "id", "type": "BIGINT"}],
            }
        ],
    }
    if status not in ("running", "skipped"):
        record["endedAt"] = "2026-11-02T02:03:10.000Z"
    record.update(extra)
    return record


def line_bytes(line: Line) -> bytes:
    """A line's bytes, without its newline: a record as ``json.dumps`` writes it (ASCII), text
    in UTF-8, bytes as they are."""
    if isinstance(line, bytes):
        return line
    if isinstance(line, str):
        return line.encode()
    return json.dumps(line).encode()


def compact_line(record: dict[str, Any]) -> str:
    """A record as engine 4.x writes it: no spaces, text as it is (not escaped to ASCII)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))
