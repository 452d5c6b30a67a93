"""The lineage graph cut the way the page shows it: one view per pipeline, and an overview.

A pipeline's view holds its stage jobs and every dataset they read or write, so it can be laid
out on its own, sources on the left and final outputs on the right. What ties pipelines
together, a dataset that more than one of them reads or writes, is kept twice: in each
pipeline's view (as a *shared* dataset, naming the other pipelines) and in the overview, where
pipelines are single nodes joined through the datasets they share.

Pure: read from the collector's :class:`~.collector.LineageGraph`, bounded by it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .collector import LineageGraph
from .details import JobKey

Edge = tuple[JobKey, JobKey, bool]
"""(from, to, delivered): a read is dataset -> job, a write job -> dataset."""


@dataclass(frozen=True, slots=True)
class Sharing:
    """The other pipelines that touch a dataset a pipeline reads or writes."""

    written_by: tuple[JobKey, ...]
    read_by: tuple[JobKey, ...]


@dataclass(frozen=True, slots=True)
class PipelineView:
    """One pipeline job's stage jobs and the datasets they read and write."""

    pipeline: JobKey
    delivered: bool
    """False when every run of it that was tried was refused (not on the server)."""
    stages: tuple[tuple[JobKey, bool], ...]
    datasets: tuple[tuple[JobKey, bool], ...]
    reads: tuple[Edge, ...]
    writes: tuple[Edge, ...]
    shared: dict[JobKey, Sharing]
    """Datasets of this view that other pipelines read or write too."""


@dataclass(frozen=True, slots=True)
class Overview:
    """Pipelines as nodes, joined through the datasets two or more of them touch."""

    pipelines: tuple[tuple[JobKey, bool], ...]
    """The pipelines that share a dataset with another."""
    alone: tuple[JobKey, ...]
    """The pipelines that share none."""
    datasets: tuple[tuple[JobKey, bool], ...]
    reads: tuple[Edge, ...]
    writes: tuple[Edge, ...]
    stage_counts: dict[JobKey, int]


@dataclass(frozen=True, slots=True)
class LineageViews:
    """Everything the page draws of the graph."""

    overview: Overview
    pipelines: tuple[PipelineView, ...]
    """In the order of :attr:`Overview.pipelines` (by namespace and name)."""

    @property
    def refused(self) -> bool:
        """Whether anything is drawn as seen only in refused runs."""
        views = self.pipelines
        return (
            any(not v.delivered for v in views)
            or any(not ok for v in views for _, ok in v.stages + v.datasets)
            or any(not ok for v in views for *_, ok in v.reads + v.writes)
        )


def views(graph: LineageGraph) -> LineageViews:
    """Cut ``graph`` into one view per pipeline job and the overview of what they share."""
    pipeline_of = graph.stages
    stages_of: dict[JobKey, list[JobKey]] = {}
    for stage, pipeline in pipeline_of.items():
        stages_of.setdefault(pipeline, []).append(stage)
    readers: dict[JobKey, set[JobKey]] = {}
    writers: dict[JobKey, set[JobKey]] = {}
    reads_of: dict[JobKey, list[Edge]] = {}
    writes_of: dict[JobKey, list[Edge]] = {}
    over_reads: dict[tuple[JobKey, JobKey], bool] = {}
    over_writes: dict[tuple[JobKey, JobKey], bool] = {}
    for (dataset, job), ok in graph.reads.items():
        pipeline = pipeline_of[job]
        readers.setdefault(dataset, set()).add(pipeline)
        reads_of.setdefault(pipeline, []).append((dataset, job, ok))
        over_reads[dataset, pipeline] = over_reads.get((dataset, pipeline), False) or ok
    for (job, dataset), ok in graph.writes.items():
        pipeline = pipeline_of[job]
        writers.setdefault(dataset, set()).add(pipeline)
        writes_of.setdefault(pipeline, []).append((job, dataset, ok))
        over_writes[pipeline, dataset] = over_writes.get((pipeline, dataset), False) or ok

    def touching(dataset: JobKey) -> set[JobKey]:
        return readers.get(dataset, set()) | writers.get(dataset, set())

    shared = {dataset for dataset in graph.datasets if len(touching(dataset)) > 1}
    pipeline_views = []
    for pipeline in sorted(graph.pipelines):
        reads, writes = sorted(reads_of.get(pipeline, ())), sorted(writes_of.get(pipeline, ()))
        mine = sorted({d for d, _, _ in reads} | {d for _, d, _ in writes})
        pipeline_views.append(
            PipelineView(
                pipeline=pipeline,
                delivered=graph.pipelines[pipeline],
                stages=tuple(
                    (s, s in graph.delivered_jobs) for s in sorted(stages_of.get(pipeline, ()))
                ),
                datasets=tuple((d, graph.datasets[d]) for d in mine),
                reads=tuple(reads),
                writes=tuple(writes),
                shared={d: _sharing(d, pipeline, writers, readers) for d in mine if d in shared},
            )
        )
    joined = {p for dataset in shared for p in touching(dataset)}
    overview = Overview(
        pipelines=tuple((p, ok) for p, ok in sorted(graph.pipelines.items()) if p in joined),
        alone=tuple(p for p in sorted(graph.pipelines) if p not in joined),
        datasets=tuple((d, graph.datasets[d]) for d in sorted(shared)),
        # A pipeline reading back what it wrote itself is its own business: not drawn here.
        reads=tuple(
            (d, p, ok)
            for (d, p), ok in sorted(over_reads.items())
            if d in shared and p not in writers.get(d, ())
        ),
        writes=tuple((p, d, ok) for (p, d), ok in sorted(over_writes.items()) if d in shared),
        stage_counts={p: len(s) for p, s in stages_of.items()},
    )
    return LineageViews(overview, tuple(pipeline_views))


def _sharing(
    dataset: JobKey,
    pipeline: JobKey,
    writers: dict[JobKey, set[JobKey]],
    readers: dict[JobKey, set[JobKey]],
) -> Sharing:
    """Who else writes ``dataset``, and who else reads it (a writer reading it back is not
    named twice)."""
    written_by = writers.get(dataset, set()) - {pipeline}
    return Sharing(
        tuple(sorted(written_by)),
        tuple(sorted(readers.get(dataset, set()) - written_by - {pipeline})),
    )
