"""Hub runs -> OpenLineage run events. Pure: no I/O, no clock, no randomness.

One editor run becomes one pipeline run (job ``<pipeline id>``) plus one run per executed
stage attempt (job ``<pipeline id>.<stage id>``) filed under it with the ``parent`` facet.
Event times are the trail's; event types follow the statuses (see docs/mapping.md).

Each event is built straight as its JSON bytes: the parts every event of a job shares (the
job, its facets, the producer and schema URLs) are encoded once, a stage run's facets and
datasets once for both of its events, and the rest joined around them; no dict is made per
event. Beside the bytes, :class:`EventFacts` says what the engine, the ledger and the report
read of an event (its type, time, run, job and datasets); ``encoded.py`` holds both.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..hub.model import BadRecord, DataAccess, Graph, Run, StageExecution, quoted
from ..jsonout import fragment
from . import facets, names
from .bounded import BoundedCache
from .datasets import DatasetNamer
from .encoded import EMPTY_LIST, NO_DATASETS, Dataset, EventFacts, TranslatedRun, body, tail
from .ids import canonical_uuid, pipeline_run_id, stage_run_id

TERMINAL_EVENT = {"succeeded": "COMPLETE", "failed": "FAIL", "cancelled": "ABORT"}

MAX_RUN_BYTES = 64 * 1024 * 1024
"""The most the events of one editor run may take together, as JSON: a run whose events would
take more is not built (a bad entry naming its line). One line of the trail may be 32 MiB, and
each read or write in it becomes a dataset in two events, repeating its namespace (a workspace
name of up to 1,024 characters): built whole, one line took ~380 times its size in memory."""

JOBS_KEPT = 4096
"""The most jobs whose JSON a translator keeps, to make each once rather than per run."""

JOBS_KEPT_SIZE = 16 * 1024 * 1024
"""The most characters (ids, names and JSON together) the jobs a translator keeps may take:
a trail names as many distinct stages as it likes, each as long as it likes."""

_EVENT_BYTES = 400
"""What an event takes besides its run's facets, job and datasets (time, type, run id, the
producer and schema URLs), rounded up."""


class _Budget:
    """What the events of one run may still take; refuses the part that would go over."""

    __slots__ = ("left", "trace_id")

    def __init__(self, trace_id: str) -> None:
        self.left = MAX_RUN_BYTES
        self.trace_id = trace_id

    def spend(self, size: int, what: str) -> None:
        self.left -= size
        if self.left < 0:
            raise BadRecord(
                f"run {quoted(self.trace_id)}: its events would take more than "
                f"{MAX_RUN_BYTES // (1024 * 1024)} MiB (at {what}); not exported"
            )


@dataclass(frozen=True, slots=True)
class TranslationConfig:
    """What translation needs besides the graph: the namespace and the source repository."""

    namespace: str
    source_repository_url: str | None = None
    source_repository_version: str | None = None
    server: str = "generic"
    """Whose converter the events are shaped for: ``generic`` (any OpenLineage server),
    ``datahub`` or ``data-rentgen`` (``translate/modes.py``)."""


class Translator:
    """Translates the runs of one workspace; caches what is the same for every run of a job."""

    def __init__(self, graph: Graph, config: TranslationConfig) -> None:
        self.graph = graph
        self.config = config
        self.namespace = config.namespace
        self.job_namespace = config.namespace
        """The namespace the jobs are sent in (``namespace`` stays what ids are derived from)."""
        self._names = DatasetNamer(graph.workspace_name)
        self._jobs: BoundedCache[str | tuple[str, str], tuple[Dataset, bytes]] = BoundedCache(
            JOBS_KEPT, JOBS_KEPT_SIZE
        )
        """Each job's (namespace, name) and JSON, by pipeline id or (pipeline id, stage id): the
        recently used ones, within :data:`JOBS_KEPT` and :data:`JOBS_KEPT_SIZE`."""

    def translate(self, run: Run) -> TranslatedRun:
        """All events of one editor run: pipeline START, each stage's events, pipeline end.

        Raises :class:`~..hub.model.BadRecord` when they would take more than
        :data:`MAX_RUN_BYTES`, before the part that would go over is built."""
        budget = _Budget(run.trace_id)
        run_id = self.run_id(run)
        job, job_json = self._pipeline_job(run.pipeline)
        run_facets: dict[str, Any] = {"processing_engine": self.engine_facet(run)}
        tag_pairs = self.trace_tags(run)
        if run.trigger is not None:
            tag_pairs.append(("trigger", run.trigger))
        if tag_pairs:
            run_facets["tags"] = facets.tags(tag_pairs)
        if run.parameters:
            run_facets["executionParameters"] = facets.execution_parameters(run.parameters)
        run_facets.update(self.server_run_facets(run, None))
        after = tail(fragment(run_facets), job_json, EMPTY_LIST, EMPTY_LIST)
        budget.spend(len(after) + _EVENT_BYTES, "the pipeline run's facets")

        bodies = [body("START", run.started_at, run_id, after)]
        told = [EventFacts("START", run.started_at, run_id, job, NO_DATASETS, NO_DATASETS)]
        for stage in run.stages:
            if stage.status != "skipped" and stage.started_at is not None:
                self._stage_events(run, run_id, job[1], stage, bodies, told, budget)
        end = TERMINAL_EVENT.get(run.status)
        if end is not None and run.ended_at is not None:
            error = run.error or _last_stage_error(run.stages)
            if error is not None and run.status != "succeeded":
                run_facets["errorMessage"] = facets.error_message(
                    error, self._source(run.pipeline, error_stage(run))
                )
                after = tail(fragment(run_facets), job_json, EMPTY_LIST, EMPTY_LIST)
            budget.spend(len(after) + _EVENT_BYTES, "the pipeline run's facets")
            bodies.append(body(end, run.ended_at, run_id, after))
            told.append(EventFacts(end, run.ended_at, run_id, job, NO_DATASETS, NO_DATASETS))
        return TranslatedRun(run.trace_id, run.pipeline, run_id, run.status, bodies, told)

    def _stage_events(
        self,
        run: Run,
        parent_id: str,
        pipeline_job_name: str,
        stage: StageExecution,
        bodies: list[bytes],
        told: list[EventFacts],
        budget: _Budget,
    ) -> None:
        """A stage attempt's START and end, appended to ``bodies`` and ``told``: all but their
        times and types is encoded once for both (and counted twice, in ``budget``)."""
        assert stage.started_at is not None
        ns = self.job_namespace
        run_id = stage_run_id(parent_id, stage.stage, stage.attempt, stage.started_at)
        job, job_json = self._stage_job(run.pipeline, stage.stage)
        run_facets: dict[str, Any] = {
            "parent": self.parent_facet(ns, pipeline_job_name, parent_id),
            "processing_engine": self.engine_facet(run),
        }
        attempt_tags = self.attempt_tags(stage)
        if attempt_tags:
            run_facets["tags"] = facets.tags(attempt_tags)
        if stage.parameters:
            run_facets["executionParameters"] = facets.execution_parameters(stage.parameters)
        run_facets.update(self.server_run_facets(run, stage))
        end = TERMINAL_EVENT.get(stage.status)
        if stage.ended_at is None:
            end = None
        spend = _Spender(budget, 1 if end is None else 2, stage.stage)
        inputs, inputs_json = self._datasets(stage.reads, output=False, spend=spend)
        outputs, outputs_json = self._datasets(stage.writes, output=True, spend=spend)
        facets_json = fragment(run_facets)
        spend(len(facets_json) + len(job_json) + _EVENT_BYTES, "facets")
        after = tail(facets_json, job_json, inputs_json, outputs_json)
        bodies.append(body("START", stage.started_at, run_id, after))
        told.append(EventFacts("START", stage.started_at, run_id, job, inputs, outputs))
        if end is not None and stage.ended_at is not None:
            if stage.error is not None and stage.status != "succeeded":
                run_facets["errorMessage"] = facets.error_message(
                    stage.error, self._source(run.pipeline, stage.stage)
                )
                error_json = fragment(run_facets)
                budget.spend(
                    len(error_json) - len(facets_json), f"the error of stage {quoted(stage.stage)}"
                )
                after = tail(error_json, job_json, inputs_json, outputs_json)
            bodies.append(body(end, stage.ended_at, run_id, after))
            told.append(EventFacts(end, stage.ended_at, run_id, job, inputs, outputs))

    def run_ids(self, run: Run) -> Iterator[tuple[str, str, str]]:
        """The job name, run id and start of each run the events of ``run`` describe, as
        :meth:`translate` gives them: the pipeline run's, then each stage attempt's that ran
        (what a server is asked about before sending, ``deliver/http/held.py``)."""
        run_id = self.run_id(run)
        yield self.pipeline_job_name(run.pipeline), run_id, run.started_at
        for stage in run.stages:
            if stage.status != "skipped" and stage.started_at is not None:
                yield (
                    self.stage_job_name(run.pipeline, stage.stage),
                    stage_run_id(run_id, stage.stage, stage.attempt, stage.started_at),
                    stage.started_at,
                )

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

    def _datasets(
        self, accesses: tuple[DataAccess, ...], *, output: bool, spend: _Spender
    ) -> tuple[tuple[Dataset, ...], bytes]:
        """The (namespace, name) of each read or write, and all of them as the JSON list an
        event carries: a dataset read (or written) twice alike is one, and each is counted in
        ``spend`` before the next is made, so an over-long list stops at the bound."""
        if not accesses:
            return NO_DATASETS, EMPTY_LIST
        named: list[Dataset] = []
        parts: dict[bytes, None] = {}
        what = "writes" if output else "reads"
        for access in accesses:
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
            # A copy of its exact size: orjson leaves a small result in a buffer of ~16 KiB,
            # and a list of them would hold fifteen times what it says.
            part = bytes(memoryview(fragment(dataset)))
            if part in parts:
                continue
            spend(len(part) + 1, what)
            parts[part] = None
            named.append((namespace, name))
        # The list as fragment() writes it: compact, the items in their order.
        return tuple(named), b"[" + b",".join(parts) + b"]"

    def _pipeline_job(self, pipeline_id: str) -> tuple[Dataset, bytes]:
        """A pipeline's job, as (namespace, name) and as the JSON an event carries (once)."""
        cached = self._jobs.get(pipeline_id)
        if cached is None:
            job_facets: dict[str, Any] = {"jobType": facets.job_type("DAG")}
            pipeline = self.graph.pipeline(pipeline_id)
            if pipeline is not None and pipeline.description:
                job_facets["documentation"] = facets.documentation(pipeline.description)
            cached = self._job(self.pipeline_job_name(pipeline_id), job_facets)
            self._jobs.put(pipeline_id, cached, len(pipeline_id) + _job_size(cached))
        return cached

    def _stage_job(self, pipeline_id: str, stage_id: str) -> tuple[Dataset, bytes]:
        """A stage's job, as (namespace, name) and as the JSON an event carries (once)."""
        key = (pipeline_id, stage_id)
        cached = self._jobs.get(key)
        if cached is None:
            job_facets: dict[str, Any] = {"jobType": facets.job_type("TASK")}
            pipeline = self.graph.pipeline(pipeline_id)
            stage = pipeline.stage(stage_id) if pipeline is not None else None
            if stage is not None and stage.description:
                job_facets["documentation"] = facets.documentation(stage.description)
            repo = self.config.source_repository_url
            if stage is not None and stage.source and repo:
                job_facets["sourceCodeLocation"] = facets.source_code_location(
                    repo, stage.source, self.config.source_repository_version
                )
            cached = self._job(self.stage_job_name(pipeline_id, stage_id), job_facets)
            self._jobs.put(key, cached, len(pipeline_id) + len(stage_id) + _job_size(cached))
        return cached

    def _job(self, name: str, job_facets: dict[str, Any]) -> tuple[Dataset, bytes]:
        namespace = self.job_namespace
        return (namespace, name), fragment(
            {"namespace": namespace, "name": name, "facets": job_facets}
        )

    def _source(self, pipeline_id: str, stage_id: str | None) -> str | None:
        pipeline = self.graph.pipeline(pipeline_id)
        if pipeline is None or stage_id is None:
            return None
        stage = pipeline.stage(stage_id)
        return stage.source if stage is not None else None


def _job_size(job: tuple[Dataset, bytes]) -> int:
    (namespace, name), json = job
    return len(namespace) + len(name) + len(json)


class _Spender:
    """Spends a stage's parts from a run's budget once per event that carries them."""

    __slots__ = ("budget", "copies", "stage")

    def __init__(self, budget: _Budget, copies: int, stage: str) -> None:
        self.budget = budget
        self.copies = copies
        self.stage = stage

    def __call__(self, size: int, what: str) -> None:
        self.budget.spend(size * self.copies, f"the {what} of stage {quoted(self.stage)}")


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
