"""Hub runs -> OpenLineage run events. Pure: no I/O, no clock, no randomness.

One editor run becomes one pipeline run (job ``<pipeline id>``) plus one run per executed
stage attempt (job ``<pipeline id>.<stage id>``) filed under it with the ``parent`` facet.
Event times are the trail's; event types follow the statuses (see docs/mapping.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..hub.model import DataAccess, Graph, Run, StageExecution
from ..jsonout import dumps
from . import facets, names
from .datasets import DatasetNamer
from .ids import canonical_uuid, pipeline_run_id, stage_run_id

TERMINAL_EVENT = {"succeeded": "COMPLETE", "failed": "FAIL", "cancelled": "ABORT"}

Event = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TranslationConfig:
    """What translation needs besides the graph: the namespace and the source repository."""

    namespace: str
    source_repository_url: str | None = None
    source_repository_version: str | None = None
    server: str = "generic"
    """Whose converter the events are shaped for: ``generic`` (any OpenLineage server),
    ``datahub`` or ``data-rentgen`` (``translate/shapes.py``)."""


@dataclass(frozen=True, slots=True)
class TranslatedRun:
    """The events of one editor run, in the order they must be sent."""

    trace_id: str
    pipeline: str
    run_id: str
    status: str
    events: list[Event]


def encode(event: Event) -> bytes:
    """One event as compact JSON bytes (what the dry run writes and the transports send), its
    control characters escaped (``jsonout.py``: a dry run's events may meet a terminal)."""
    return dumps(event)


class Translator:
    """Translates the runs of one workspace; caches what is the same for every run of a job."""

    def __init__(self, graph: Graph, config: TranslationConfig) -> None:
        self.graph = graph
        self.config = config
        self.namespace = config.namespace
        self.job_namespace = config.namespace
        """The namespace the jobs are sent in (``namespace`` stays what ids are derived from)."""
        self._names = DatasetNamer(graph.workspace_name)
        self._job_facets: dict[str, dict[str, Any]] = {}

    def translate(self, run: Run) -> TranslatedRun:
        """All events of one editor run: pipeline START, each stage's events, pipeline end."""
        run_id = self.run_id(run)
        pipeline_job = {
            "namespace": self.job_namespace,
            "name": self.pipeline_job_name(run.pipeline),
            "facets": self._pipeline_facets(run.pipeline),
        }
        run_facets: dict[str, Any] = {"processing_engine": self.engine_facet(run)}
        tag_pairs = self.trace_tags(run)
        if run.trigger is not None:
            tag_pairs.append(("trigger", run.trigger))
        if tag_pairs:
            run_facets["tags"] = facets.tags(tag_pairs)
        if run.parameters:
            run_facets["executionParameters"] = facets.execution_parameters(run.parameters)
        run_facets.update(self.server_run_facets(run, None))

        events = [self._event("START", run.started_at, run_id, run_facets, pipeline_job)]
        for stage in run.stages:
            if stage.status != "skipped" and stage.started_at is not None:
                events.extend(self._stage_events(run, run_id, stage))
        end = TERMINAL_EVENT.get(run.status)
        if end is not None and run.ended_at is not None:
            end_facets = run_facets
            error = run.error or _last_stage_error(run.stages)
            if error is not None and run.status != "succeeded":
                end_facets = {
                    **run_facets,
                    "errorMessage": facets.error_message(
                        error, self._source(run.pipeline, error_stage(run))
                    ),
                }
            events.append(self._event(end, run.ended_at, run_id, end_facets, pipeline_job))
        return TranslatedRun(run.trace_id, run.pipeline, run_id, run.status, events)

    def _stage_events(self, run: Run, parent_id: str, stage: StageExecution) -> Iterable[Event]:
        assert stage.started_at is not None
        ns = self.job_namespace
        run_id = stage_run_id(parent_id, stage.stage, stage.attempt, stage.started_at)
        job = {
            "namespace": ns,
            "name": self.stage_job_name(run.pipeline, stage.stage),
            "facets": self._stage_facets(run.pipeline, stage.stage),
        }
        run_facets: dict[str, Any] = {
            "parent": self.parent_facet(ns, self.pipeline_job_name(run.pipeline), parent_id),
            "processing_engine": self.engine_facet(run),
        }
        attempt_tags = self.attempt_tags(stage)
        if attempt_tags:
            run_facets["tags"] = facets.tags(attempt_tags)
        if stage.parameters:
            run_facets["executionParameters"] = facets.execution_parameters(stage.parameters)
        run_facets.update(self.server_run_facets(run, stage))
        inputs = [self._dataset(access, output=False) for access in stage.reads]
        outputs = [self._dataset(access, output=True) for access in stage.writes]
        yield self._event("START", stage.started_at, run_id, run_facets, job, inputs, outputs)
        end = TERMINAL_EVENT.get(stage.status)
        if end is not None and stage.ended_at is not None:
            end_facets = run_facets
            if stage.error is not None and stage.status != "succeeded":
                end_facets = {
                    **run_facets,
                    "errorMessage": facets.error_message(
                        stage.error, self._source(run.pipeline, stage.stage)
                    ),
                }
            yield self._event(end, stage.ended_at, run_id, end_facets, job, inputs, outputs)

    # What a server-shaped translator (translate/datahub.py, data_rentgen.py) changes: the run
    # ids, the job names, the engine, parent, tags and dataset facets, the dataset names, and
    # facets of the server's own.

    def run_id(self, run: Run) -> str:
        """The run id of an editor run's pipeline run (its trace id, when that is a UUID)."""
        return pipeline_run_id(self.namespace, run.pipeline, run.trace_id, run.started_at)

    def trace_tags(self, run: Run) -> list[tuple[str, str]]:
        """The ``tags`` that carry the trace id of a pipeline run: it, when it is no UUID (a
        UUID is the run id)."""
        return [("traceId", run.trace_id)] if canonical_uuid(run.trace_id) is None else []

    def attempt_tags(self, stage: StageExecution) -> list[tuple[str, str]]:
        """The ``tags`` of a stage run that say which attempt it is, after the first."""
        return [("attempt", str(stage.attempt))] if stage.attempt != 1 else []

    def server_run_facets(self, run: Run, stage: StageExecution | None) -> dict[str, Any]:
        """Run facets of the server's own, for a pipeline run (``stage`` None) or a stage run;
        none for servers at large."""
        return {}

    def pipeline_job_name(self, pipeline: str) -> str:
        """The job name of a pipeline."""
        return names.pipeline_job(pipeline)

    def stage_job_name(self, pipeline: str, stage: str) -> str:
        """The job name of a stage of a pipeline."""
        return names.stage_job(pipeline, stage)

    def engine_facet(self, run: Run) -> dict[str, Any]:
        """The ``processing_engine`` facet of a run's events."""
        return facets.processing_engine(run.engine)

    def parent_facet(self, namespace: str, pipeline_job_name: str, run_id: str) -> dict[str, Any]:
        """The ``parent`` facet of a stage run, filed under its pipeline run."""
        return facets.parent(namespace, pipeline_job_name, run_id)

    def dataset_name(self, location: str) -> tuple[str, str]:
        """The (namespace, name) of the data at ``location``."""
        return self._names.name(location)

    def dataset_facets(self, access: DataAccess, *, output: bool) -> dict[str, Any]:
        """The facets of one read or write."""
        return facets.dataset_facets(access, output=output)

    def _dataset(self, access: Any, *, output: bool) -> dict[str, Any]:
        namespace, name = self.dataset_name(access.dataset)
        dataset: dict[str, Any] = {
            "namespace": namespace,
            "name": name,
            "facets": self.dataset_facets(access, output=output),
        }
        if output:
            stats = facets.output_statistics(access)
            if stats is not None:
                dataset["outputFacets"] = {"outputStatistics": stats}
        return dataset

    @staticmethod
    def _event(
        event_type: str,
        when: str,
        run_id: str,
        run_facets: dict[str, Any],
        job: dict[str, Any],
        inputs: list[dict[str, Any]] | None = None,
        outputs: list[dict[str, Any]] | None = None,
    ) -> Event:
        return {
            "eventTime": when,
            "producer": facets.PRODUCER,
            "schemaURL": facets.RUN_EVENT_SCHEMA,
            "eventType": event_type,
            "run": {"runId": run_id, "facets": run_facets},
            "job": job,
            "inputs": inputs or [],
            "outputs": outputs or [],
        }

    def _pipeline_facets(self, pipeline_id: str) -> dict[str, Any]:
        cached = self._job_facets.get(pipeline_id)
        if cached is None:
            cached = {"jobType": facets.job_type("DAG")}
            pipeline = self.graph.pipeline(pipeline_id)
            if pipeline is not None and pipeline.description:
                cached["documentation"] = facets.documentation(pipeline.description)
            self._job_facets[pipeline_id] = cached
        return cached

    def _stage_facets(self, pipeline_id: str, stage_id: str) -> dict[str, Any]:
        key = f"{pipeline_id}\x00{stage_id}"
        cached = self._job_facets.get(key)
        if cached is None:
            cached = {"jobType": facets.job_type("TASK")}
            pipeline = self.graph.pipeline(pipeline_id)
            stage = pipeline.stage(stage_id) if pipeline is not None else None
            if stage is not None and stage.description:
                cached["documentation"] = facets.documentation(stage.description)
            repo = self.config.source_repository_url
            if stage is not None and stage.source and repo:
                cached["sourceCodeLocation"] = facets.source_code_location(
                    repo, stage.source, self.config.source_repository_version
                )
            self._job_facets[key] = cached
        return cached

    def _source(self, pipeline_id: str, stage_id: str | None) -> str | None:
        pipeline = self.graph.pipeline(pipeline_id)
        if pipeline is None or stage_id is None:
            return None
        stage = pipeline.stage(stage_id)
        return stage.source if stage is not None else None


def _last_stage_error(stages: tuple[StageExecution, ...]) -> Any:
    for stage in reversed(stages):
        if stage.error is not None and stage.status in ("failed", "cancelled"):
            return stage.error
    return None


def error_stage(run: Run) -> str | None:
    """The stage whose error the pipeline run reports, when the run has none of its own."""
    if run.error is not None:
        return None
    for stage in reversed(run.stages):
        if stage.error is not None and stage.status in ("failed", "cancelled"):
            return stage.stage
    return None
