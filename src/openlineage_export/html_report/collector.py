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

import orjson

from ..export.report import MAX_LISTED, RunResult
from ..translate.encoded import TranslatedRun
from .details import (
    END_STATES,
    PROBLEM_STATES,
    JobKey,
    RunDetail,
    error_of,
    seconds_between,
    stage_runs,
    utc,
)

RECENT_RUNS = 20
"""Runs of each pipeline kept in full (the most recent ones by start time)."""

RECENT_FAILURES = 5
"""Failed or aborted runs of each pipeline kept in full besides the most recent ones."""

MAX_KEPT_RUNS = 1000
"""Runs kept in full across every pipeline: a trail may name a new pipeline on every line, and
each pipeline keeps up to :data:`RECENT_RUNS` + :data:`RECENT_FAILURES` of its runs."""

MAX_KEPT_BYTES = 128 * 1024 * 1024
"""The most the events of the runs kept in full may take together (a run's events may take
up to 64 MiB). A run that would go over either bound is counted and not kept in full (the
page says how many were not), until runs kept before it give way to newer ones."""

MAX_PIPELINES = 1000
"""Pipelines whose history is kept; the runs of more are counted in the totals only."""

MAX_DAYS = 730
"""Days of per-day counts kept per pipeline; older days are summed into ``earlier``."""

MAX_NODES = 1500
"""Jobs plus datasets kept for the graph; more are counted, not kept."""

MAX_EDGES = 5000
"""Reads and writes kept for the graph; more are counted, not kept."""

RUN_STATES = ("completed", "failed", "aborted", "running")
"""Run states in the order the page lists them; a run without an end event is ``running``."""

DELIVERED = frozenset({"built", "sent", "unchanged"})
"""Export states whose events are (or, in a dry run, would be) on the server."""


_Kept = tuple[tuple[float, str, str], int, bool, Callable[[], RunDetail] | None, int]
"""A run kept on a heap: its sort key, its arrival number (unique), whether it is a problem,
how to build its detail (built only for the page: most runs kept are later evicted; None when
the :class:`KeptBudget` had no room for it) and the bytes of its events."""


@dataclass
class KeptBudget:
    """The runs kept in full across every pipeline, and what their events take together."""

    runs: int = 0
    bytes: int = 0
    left_out: int = 0
    """Runs that would have been kept in full but did not fit (counted once each)."""

    def take(self, size: int) -> bool:
        """Whether a run whose events take ``size`` bytes fits; counts it in if so."""
        if self.runs + 1 > MAX_KEPT_RUNS or self.bytes + size > MAX_KEPT_BYTES:
            self.left_out += 1
            return False
        self.runs += 1
        self.bytes += size
        return True

    def give_back(self, kept: _Kept | None) -> None:
        """A kept run fell out of its pipeline's heaps: what it held is free again."""
        if kept is not None and kept[3] is not None:
            self.runs -= 1
            self.bytes -= kept[4]


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
    budget: KeptBudget = field(default_factory=KeptBudget)
    """Shared by every pipeline of a collector."""
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
        size: int = 0,
    ) -> None:
        """Count one run; keep ``detail`` (unbuilt) if the run is recent or a recent failure,
        and the :class:`KeptBudget` has room for its events' ``size`` bytes."""
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
        key = (order, self.runs)
        if len(self._recent) >= RECENT_RUNS and key < self._recent[0][:2] and not problem:
            return  # older than every recent run kept, and no failure: nothing to keep
        kept: _Kept = (order, self.runs, problem, detail if self.budget.take(size) else None, size)
        if len(self._recent) < RECENT_RUNS:
            heapq.heappush(self._recent, kept)
            return
        if kept[:2] > self._recent[0][:2]:
            kept = heapq.heapreplace(self._recent, kept)
        if kept[2]:
            self.budget.give_back(_keep_latest(self._failures, kept, RECENT_FAILURES))
        else:
            self.budget.give_back(kept)

    @property
    def kept(self) -> int:
        """Runs held in full (bounded: :data:`RECENT_RUNS` + :data:`RECENT_FAILURES`, and
        the :class:`KeptBudget` across pipelines)."""
        return sum(kept[3] is not None for kept in (*self._recent, *self._failures))

    @property
    def recent(self) -> list[RunDetail]:
        """The most recent runs kept in full, newest first."""
        return _details(self._recent)

    @property
    def earlier_failures(self) -> list[RunDetail]:
        """Failed runs older than :attr:`recent` kept in full, newest first."""
        return _details(self._failures)


def _details(heap: list[_Kept]) -> list[RunDetail]:
    ordered = sorted(heap, key=_by_order, reverse=True)
    return [kept[3]() for kept in ordered if kept[3] is not None]


def _by_order(kept: _Kept) -> tuple[tuple[float, str, str], int]:
    return kept[0], kept[1]


def _keep_latest(heap: list[_Kept], item: _Kept, size: int) -> _Kept | None:
    """Push ``item`` on a min-heap of at most ``size`` items, the oldest falling out; returns
    the item that fell out (``item`` itself when it is older than every one kept)."""
    if len(heap) < size:
        heapq.heappush(heap, item)
        return None
    if item[:2] > heap[0][:2]:
        return heapq.heapreplace(heap, item)
    return item


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
        self.kept = KeptBudget()
        """The runs kept in full across every pipeline (:data:`MAX_KEPT_RUNS`,
        :data:`MAX_KEPT_BYTES`)."""
        self.runs = 0
        self.runs_left_out = 0
        self.states: Counter[str] = Counter()
        """Runs by how they ended in the editor, every pipeline's."""
        """Runs of pipelines past :data:`MAX_PIPELINES`: in the totals, in no history."""
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
                seconds=seconds_between(start_utc, ended),
                export_state=result.state,
                export_reason=result.reason,
                error=error_of(orjson.loads(run.bodies[-1])) if ended else None,
                stages=stage_runs(run.events, run.run_id),
                order=order,
            )

        self.states[state] += 1
        history = self.histories.get(pipeline)
        if history is None:
            if len(self.histories) >= MAX_PIPELINES:
                self.runs_left_out += 1
                return
            history = self.histories[pipeline] = PipelineHistory(pipeline, budget=self.kept)
        day = start_utc.date().isoformat() if start_utc else started[:10]
        size = sum(map(len, run.bodies))
        history.add(order, state, result.state, day, len(run), detail, size)

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
