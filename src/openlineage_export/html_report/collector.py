"""The report's collector: fed one exported run at a time, it keeps what the page will show.

Pure (no I/O, no clock) and bounded: whatever the number of runs, it holds counters, the
lineage graph (one node per job or dataset, so bounded by the workspace, and capped anyway),
the most recent runs of each pipeline in full and a few recent failures. Everything is read
from the events themselves, so the page names jobs and datasets exactly as the server will.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from ..export.report import MAX_LISTED, RunResult
from ..translate.encoded import TranslatedRun

RECENT_RUNS = 20
"""Runs of each pipeline kept in full (the most recent ones by start time)."""

RECENT_FAILURES = 5
"""Failed or aborted runs of each pipeline kept in full besides the most recent ones."""

MAX_DAYS = 730
"""Days of per-day counts kept per pipeline; older days are summed into ``earlier``."""

MAX_NODES = 1500
"""Jobs plus datasets kept for the graph; more are counted, not kept."""

MAX_EDGES = 5000
"""Reads and writes kept for the graph; more are counted, not kept."""

END_STATES = {"COMPLETE": "completed", "FAIL": "failed", "ABORT": "aborted"}
"""OpenLineage's terminal event types, as the run states the page shows."""

RUN_STATES = ("completed", "failed", "aborted", "running")
"""Run states in the order the page lists them; a run without an end event is ``running``."""

PROBLEM_STATES = frozenset({"failed", "aborted"})
"""Run states a person looks for first."""

DELIVERED = frozenset({"built", "sent", "unchanged"})
"""Export states whose events are (or, in a dry run, would be) on the server."""

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


_Kept = tuple[tuple[float, str, str], int, bool, Callable[[], RunDetail]]
"""A run kept on a heap: its sort key, its arrival number (unique), whether it is a problem,
and how to build its detail (built only for the page: most runs kept are later evicted)."""


@dataclass
class PipelineHistory:
    """Everything kept about one pipeline's runs: counts, counts per day, recent runs."""

    job: JobKey
    runs: int = 0
    events: int = 0
    states: Counter[str] = field(default_factory=Counter)
    exports: Counter[str] = field(default_factory=Counter)
    exported_events: Counter[str] = field(default_factory=Counter)
    """Events by what became of their run: ``built``, ``sent``, ``unchanged``, ..."""
    days: dict[str, Counter[str]] = field(default_factory=dict)
    earlier: Counter[str] = field(default_factory=Counter)
    """Runs on days older than the :data:`MAX_DAYS` kept, by state."""
    _recent: list[_Kept] = field(default_factory=list)
    _failures: list[_Kept] = field(default_factory=list)

    def add(
        self,
        order: tuple[float, str, str],
        state: str,
        export_state: str,
        day: str,
        events: int,
        detail: Callable[[], RunDetail],
    ) -> None:
        """Count one run; keep ``detail`` (unbuilt) if the run is recent or a recent failure."""
        self.runs += 1
        self.events += events
        self.states[state] += 1
        self.exports[export_state] += 1
        self.exported_events[export_state] += events
        counts = self.days.get(day)
        if counts is None:
            counts = self.days[day] = Counter()
            if len(self.days) > MAX_DAYS:
                oldest = min(self.days)
                self.earlier.update(self.days.pop(oldest))
                counts = self.days.get(day, self.earlier)  # older than every day kept
        counts[state] += 1
        problem = state in PROBLEM_STATES or export_state == "failed"
        kept: _Kept = (order, self.runs, problem, detail)
        if len(self._recent) < RECENT_RUNS:
            heapq.heappush(self._recent, kept)
            return
        if kept[:2] > self._recent[0][:2]:
            kept = heapq.heapreplace(self._recent, kept)
        if kept[2]:
            _keep_latest(self._failures, kept, RECENT_FAILURES)

    @property
    def kept(self) -> int:
        """Runs held in full (bounded: :data:`RECENT_RUNS` + :data:`RECENT_FAILURES`)."""
        return len(self._recent) + len(self._failures)

    @property
    def recent(self) -> list[RunDetail]:
        """The most recent runs kept in full, newest first."""
        return [kept[3]() for kept in sorted(self._recent, key=_by_order, reverse=True)]

    @property
    def earlier_failures(self) -> list[RunDetail]:
        """Failed runs older than :attr:`recent` kept in full, newest first."""
        return [kept[3]() for kept in sorted(self._failures, key=_by_order, reverse=True)]


def _by_order(kept: _Kept) -> tuple[tuple[float, str, str], int]:
    return kept[0], kept[1]


def _keep_latest(heap: list[_Kept], item: _Kept, size: int) -> None:
    """Push ``item`` on a min-heap of at most ``size`` items, the oldest falling out."""
    if len(heap) < size:
        heapq.heappush(heap, item)
    elif item[:2] > heap[0][:2]:
        heapq.heapreplace(heap, item)


@dataclass
class LineageGraph:
    """Jobs and datasets as nodes, reads and writes as edges, as the events draw them.

    ``delivered`` marks what is (or would be) on the server: a node or an edge seen only in
    runs the server refused is drawn apart.
    """

    pipelines: dict[JobKey, bool] = field(default_factory=dict)
    stages: dict[JobKey, JobKey] = field(default_factory=dict)
    """Stage job -> its pipeline job (the ``parent`` facet's job)."""
    datasets: dict[JobKey, bool] = field(default_factory=dict)
    reads: dict[tuple[JobKey, JobKey], bool] = field(default_factory=dict)
    """(dataset, stage job) -> delivered."""
    writes: dict[tuple[JobKey, JobKey], bool] = field(default_factory=dict)
    """(stage job, dataset) -> delivered."""
    delivered_jobs: set[JobKey] = field(default_factory=set)
    nodes_left_out: int = 0
    """Times a job or dataset was seen while the graph was full (the same one may recur)."""
    edges_left_out: int = 0

    @property
    def nodes(self) -> int:
        """Jobs and datasets kept."""
        return len(self.pipelines) + len(self.stages) + len(self.datasets)

    def add_pipeline(self, job: JobKey, delivered: bool) -> bool:
        """Note a pipeline job; False when the graph is full and it was left out."""
        if job not in self.pipelines and not self._room():
            return False
        self.pipelines[job] = self.pipelines.get(job, False) or delivered
        return True

    def add_stage(self, job: JobKey, pipeline: JobKey, delivered: bool) -> bool:
        """Note a stage job under its pipeline; False when left out."""
        if job not in self.stages and not self._room():
            return False
        self.stages.setdefault(job, pipeline)
        if delivered:
            self.delivered_jobs.add(job)
        return True

    def add_access(self, dataset: JobKey, job: JobKey, *, write: bool, delivered: bool) -> None:
        """Note a read (dataset -> job) or a write (job -> dataset)."""
        edges, key = (self.writes, (job, dataset)) if write else (self.reads, (dataset, job))
        known = edges.get(key)
        if known or (known is not None and not delivered):
            return  # the common case: every run of a job reads and writes the same datasets
        if dataset not in self.datasets:
            if not self._room():
                return
            self.datasets[dataset] = False
        self.datasets[dataset] = self.datasets[dataset] or delivered
        if key not in edges and len(self.reads) + len(self.writes) >= MAX_EDGES:
            self.edges_left_out += 1
            return
        edges[key] = edges.get(key, False) or delivered

    def _room(self) -> bool:
        if self.nodes >= MAX_NODES:
            self.nodes_left_out += 1
            return False
        return True


@dataclass(frozen=True, slots=True)
class RefusedRun:
    """A run the destination did not take whole, with its reason."""

    pipeline: JobKey
    trace_id: str
    run_id: str
    reason: str


class ReportCollector:
    """Collects what the HTML report shows; pass :meth:`add` as ``ExportRequest.on_run``.

    Call it from one thread (the export calls ``on_run`` on the thread that runs it).
    """

    def __init__(self) -> None:
        self.graph = LineageGraph()
        self.histories: dict[JobKey, PipelineHistory] = {}
        self.runs = 0
        self.events = 0
        self.exports: Counter[str] = Counter()
        self.refused: list[RefusedRun] = []
        """The first :data:`~openlineage_export.export.report.MAX_LISTED` runs refused (all
        counted)."""

    def add(self, result: RunResult) -> None:
        """Take one exported run: its events and what became of them."""
        run = result.run
        pipeline: JobKey = run.facts[0].job if run.facts else ("", run.pipeline)
        delivered = result.state in DELIVERED
        self.runs += 1
        self.events += len(run)
        self.exports[result.state] += 1
        if result.state == "failed" and len(self.refused) < MAX_LISTED:
            self.refused.append(RefusedRun(pipeline, run.trace_id, run.run_id, result.reason or ""))
        if self.graph.add_pipeline(pipeline, delivered):
            self._add_to_graph(run, pipeline, delivered)

        # The run's own start and end (their facts: nothing is decoded but for a run's detail).
        first = run.facts[0] if run.facts else None
        last = run.facts[-1] if len(run.facts) > 1 else None
        own_end = last if last is not None and last.run_id == run.run_id else None
        state = END_STATES.get(own_end.event_type, "running") if own_end else "running"
        started = first.event_time if first else ""
        start_utc = utc(started)
        order = (start_utc.timestamp() if start_utc else 0.0, run.trace_id, run.run_id)

        def detail() -> RunDetail:
            ended = own_end.event_time if own_end and state != "running" else None
            return RunDetail(
                trace_id=run.trace_id,
                run_id=run.run_id,
                state=state,
                started=started,
                ended=ended,
                seconds=_seconds(start_utc, ended),
                export_state=result.state,
                export_reason=result.reason,
                error=_error(orjson.loads(run.bodies[-1])) if ended else None,
                stages=_stage_runs(run.events, run.run_id),
                order=order,
            )

        history = self.histories.get(pipeline)
        if history is None:
            history = self.histories[pipeline] = PipelineHistory(pipeline)
        day = start_utc.date().isoformat() if start_utc else started[:10]
        history.add(order, state, result.state, day, len(run), detail)

    def _add_to_graph(self, run: TranslatedRun, pipeline: JobKey, delivered: bool) -> None:
        graph = self.graph
        for event in run.facts:
            if event.event_type != "START" or event.run_id == run.run_id:
                continue  # inputs and outputs ride on both events of a stage run: one is enough
            job: JobKey = event.job
            if not graph.add_stage(job, pipeline, delivered):
                continue
            for dataset in event.inputs:
                graph.add_access(dataset, job, write=False, delivered=delivered)
            for dataset in event.outputs:
                graph.add_access(dataset, job, write=True, delivered=delivered)

    def pipelines(self) -> list[PipelineHistory]:
        """Every pipeline that ran, by namespace and name."""
        return [self.histories[key] for key in sorted(self.histories)]


def _stage_runs(events: list[dict[str, Any]], pipeline_run_id: str) -> tuple[StageRun, ...]:
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
        seconds=_seconds(utc(started), ended),
        error=_error(end) if state else None,
        inputs=len(start.get("inputs") or ()),
        outputs=len(start.get("outputs") or ()),
    )


def _error(event: dict[str, Any] | None) -> str | None:
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


def _seconds(start: datetime | None, ended: str | None) -> float | None:
    end = utc(ended) if ended else None
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds())
