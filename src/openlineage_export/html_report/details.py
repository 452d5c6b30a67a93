"""What the report shows of one run in full: its stage runs, read back from its events."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

END_STATES = {"COMPLETE": "completed", "FAIL": "failed", "ABORT": "aborted"}
"""OpenLineage's terminal event types, as the run states the page shows."""

PROBLEM_STATES = frozenset({"failed", "aborted"})
"""Run states a person looks for first."""

JobKey = tuple[str, str]
"""A job or dataset as the events name it: (namespace, name)."""


@dataclass(frozen=True, slots=True)
class StageRun:
    """One stage attempt of a run: a run of job ``<pipeline>.<stage>`` in the events."""

    job: JobKey
    attempt: int
    state: str
    started: str
    ended: str | None
    seconds: float | None
    error: str | None
    inputs: int
    outputs: int


@dataclass(frozen=True, slots=True)
class RunDetail:
    """One editor run as the page shows it in full: the pipeline run and its stage runs."""

    trace_id: str
    run_id: str
    state: str
    started: str
    ended: str | None
    seconds: float | None
    export_state: str
    export_reason: str | None
    error: str | None
    stages: tuple[StageRun, ...]
    order: tuple[float, str, str]
    """Sort key: start time (UTC seconds), then trace id and run id, for a stable order."""

    @property
    def problem(self) -> bool:
        """Failed or aborted on the trail, or refused by the server."""
        return self.state in PROBLEM_STATES or self.export_state == "failed"

    @property
    def retried(self) -> list[tuple[str, int]]:
        """Stage jobs run more than once in this run, with their number of attempts."""
        attempts = Counter(stage.job[1] for stage in self.stages)
        return [(job, n) for job, n in attempts.items() if n > 1]


def stage_runs(events: list[dict[str, Any]], pipeline_run_id: str) -> tuple[StageRun, ...]:
    """The stage runs of one editor run, in the order the events give them."""
    by_run: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if event["run"]["runId"] != pipeline_run_id:
            by_run.setdefault(event["run"]["runId"], []).append(event)
    return tuple(_stage_run(stage_events) for stage_events in by_run.values())


def _stage_run(events: list[dict[str, Any]]) -> StageRun:
    start, end = events[0], events[-1]
    facets = start["run"].get("facets") or {}
    attempt = 1
    for tag in (facets.get("tags") or {}).get("tags") or ():
        if tag.get("key") == "attempt" and str(tag.get("value", "")).isdigit():
            attempt = int(tag["value"])
    state = END_STATES.get(end.get("eventType", "")) if len(events) > 1 else None
    started = str(start.get("eventTime", ""))
    ended = str(end["eventTime"]) if state else None
    return StageRun(
        job=(start["job"]["namespace"], start["job"]["name"]),
        attempt=attempt,
        state=state or "running",
        started=started,
        ended=ended,
        seconds=seconds_between(utc(started), ended),
        error=error_of(end) if state else None,
        inputs=len(start.get("inputs") or ()),
        outputs=len(start.get("outputs") or ()),
    )


def error_of(event: dict[str, Any] | None) -> str | None:
    """The ``errorMessage`` facet's message of an event, if it has one."""
    if event is None:
        return None
    facet = ((event.get("run") or {}).get("facets") or {}).get("errorMessage")
    return str(facet.get("message", "")) if isinstance(facet, dict) else None


def utc(when: str) -> datetime | None:
    """An event time (ISO 8601, any offset) as a UTC datetime; None when it is not one."""
    try:
        moment = datetime.fromisoformat(when)
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def seconds_between(start: datetime | None, ended: str | None) -> float | None:
    """Seconds from ``start`` to the event time ``ended``, when both are known."""
    end = utc(ended) if ended else None
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds())
