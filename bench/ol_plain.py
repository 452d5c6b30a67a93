"""The plain openlineage-python way: the same events built with the library's classes.

This is what a user would script with openlineage-python alone. The benchmark times it
against our translation, and ``tests/test_conformance.py`` checks that ``Serde.to_dict`` of
these objects equals our events, so our fast dicts have exactly the library's shapes.
"""

from __future__ import annotations

import orjson
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    dataset_version_dataset,
    documentation_job,
    error_message_run,
    execution_parameters_run,
    job_type_job,
    output_statistics_output_dataset,
    parent_run,
    processing_engine_run,
    schema_dataset,
    tags_run,
)

from openlineage_export import DISTRIBUTION, __version__
from openlineage_export.hub import model
from openlineage_export.translate.datasets import DatasetNamer
from openlineage_export.translate.facets import INTEGRATION, PRODUCER, UNKNOWN_LANGUAGE
from openlineage_export.translate.ids import canonical_uuid, pipeline_run_id, stage_run_id

STATES = {"succeeded": RunState.COMPLETE, "failed": RunState.FAIL, "cancelled": RunState.ABORT}
LANG = {".py": "python", ".sql": "sql"}


def build_events(run: model.Run, graph: model.Graph, namespace: str) -> list[RunEvent]:
    """All events of one editor run, with openlineage-python's classes."""
    names = DatasetNamer(graph.workspace_name)
    pipeline = graph.pipeline(run.pipeline)
    run_id = pipeline_run_id(namespace, run.pipeline, run.trace_id, run.started_at)
    engine = processing_engine_run.ProcessingEngineRunFacet(
        version=(run.engine.version or "unknown") if run.engine else __version__,
        name=run.engine.name if run.engine else DISTRIBUTION,
        openlineageAdapterVersion=__version__,
        producer=PRODUCER,
    )
    job_facets: dict = {
        "jobType": job_type_job.JobTypeJobFacet(
            processingType="BATCH", integration=INTEGRATION, jobType="DAG", producer=PRODUCER
        )
    }
    if pipeline and pipeline.description:
        job_facets["documentation"] = documentation_job.DocumentationJobFacet(
            description=pipeline.description, producer=PRODUCER
        )
    run_facets: dict = {"processing_engine": engine}
    tags = []
    if canonical_uuid(run.trace_id) is None:
        tags.append(tags_run.TagsRunFacetFields("traceId", run.trace_id, INTEGRATION))
    if run.trigger:
        tags.append(tags_run.TagsRunFacetFields("trigger", run.trigger, INTEGRATION))
    if tags:
        run_facets["tags"] = tags_run.TagsRunFacet(tags=tags, producer=PRODUCER)
    if run.parameters:
        run_facets["executionParameters"] = _parameters(run.parameters)
    job = Job(namespace=namespace, name=run.pipeline, facets=job_facets)
    events = [
        RunEvent(
            eventType=RunState.START,
            eventTime=run.started_at,
            producer=PRODUCER,
            run=Run(runId=run_id, facets=run_facets),
            job=job,
        )
    ]
    for stage in run.stages:
        if stage.status == "skipped" or stage.started_at is None:
            continue
        declared = pipeline.stage(stage.stage) if pipeline else None
        sid = stage_run_id(run_id, stage.stage, stage.attempt, stage.started_at)
        s_job_facets: dict = {
            "jobType": job_type_job.JobTypeJobFacet(
                processingType="BATCH", integration=INTEGRATION, jobType="TASK", producer=PRODUCER
            )
        }
        if declared and declared.description:
            s_job_facets["documentation"] = documentation_job.DocumentationJobFacet(
                description=declared.description, producer=PRODUCER
            )
        s_job = Job(namespace=namespace, name=f"{run.pipeline}.{stage.stage}", facets=s_job_facets)
        pj = parent_run.Job(namespace=namespace, name=run.pipeline)
        s_facets: dict = {
            "parent": parent_run.ParentRunFacet(
                run=parent_run.Run(runId=run_id),
                job=pj,
                root=parent_run.Root(
                    run=parent_run.RootRun(runId=run_id),
                    job=parent_run.RootJob(namespace=namespace, name=run.pipeline),
                ),
                producer=PRODUCER,
            ),
            "processing_engine": engine,
        }
        if stage.attempt != 1:
            s_facets["tags"] = tags_run.TagsRunFacet(
                tags=[tags_run.TagsRunFacetFields("attempt", str(stage.attempt), INTEGRATION)],
                producer=PRODUCER,
            )
        if stage.parameters:
            s_facets["executionParameters"] = _parameters(stage.parameters)
        inputs = [
            InputDataset(namespace=ns, name=n, facets=_version(r))
            for r in stage.reads
            for ns, n in [names.name(r.dataset)]
        ]
        outputs = [
            OutputDataset(namespace=ns, name=n, facets=_out_facets(w), outputFacets=_stats(w))
            for w in stage.writes
            for ns, n in [names.name(w.dataset)]
        ]
        events.append(
            RunEvent(
                eventType=RunState.START,
                eventTime=stage.started_at,
                producer=PRODUCER,
                run=Run(runId=sid, facets=s_facets),
                job=s_job,
                inputs=inputs,
                outputs=outputs,
            )
        )
        if stage.status in STATES and stage.ended_at:
            end_facets = dict(s_facets)
            if stage.error and stage.status != "succeeded":
                end_facets["errorMessage"] = _error(
                    stage.error, declared.source if declared else None
                )
            events.append(
                RunEvent(
                    eventType=STATES[stage.status],
                    eventTime=stage.ended_at,
                    producer=PRODUCER,
                    run=Run(runId=sid, facets=end_facets),
                    job=s_job,
                    inputs=inputs,
                    outputs=outputs,
                )
            )
    if run.status in STATES and run.ended_at:
        end_facets = dict(run_facets)
        error, source = run.error, None
        if error is None:
            for stage in reversed(run.stages):
                if stage.error and stage.status in ("failed", "cancelled"):
                    error = stage.error
                    declared = pipeline.stage(stage.stage) if pipeline else None
                    source = declared.source if declared else None
                    break
        if error and run.status != "succeeded":
            end_facets["errorMessage"] = _error(error, source)
        events.append(
            RunEvent(
                eventType=STATES[run.status],
                eventTime=run.ended_at,
                producer=PRODUCER,
                run=Run(runId=run_id, facets=end_facets),
                job=job,
            )
        )
    return events


def _parameters(parameters: dict) -> execution_parameters_run.ExecutionParametersRunFacet:
    return execution_parameters_run.ExecutionParametersRunFacet(
        parameters=[
            execution_parameters_run.ExecutionParameter(
                key=str(k), value=v if isinstance(v, str) else orjson.dumps(v).decode()
            )
            for k, v in parameters.items()
        ],
        producer=PRODUCER,
    )


def _version(access: model.DataAccess) -> dict:
    if access.digest is None:
        return {}
    return {
        "version": dataset_version_dataset.DatasetVersionDatasetFacet(
            datasetVersion=access.digest, producer=PRODUCER
        )
    }


def _out_facets(access: model.DataAccess) -> dict:
    facets = _version(access)
    if access.schema is not None:
        facets["schema"] = schema_dataset.SchemaDatasetFacet(
            fields=[
                schema_dataset.SchemaDatasetFacetFields(name=f.name, type=f.type, fields=None)
                for f in access.schema
            ],
            producer=PRODUCER,
        )
    return facets


def _stats(access: model.DataAccess) -> dict:
    if access.rows is None and access.bytes is None:
        return {}
    return {
        "outputStatistics": output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
            rowCount=access.rows, size=access.bytes, producer=PRODUCER
        )
    }


def _error(error: model.ErrorInfo, source: str | None) -> error_message_run.ErrorMessageRunFacet:
    language = error.programming_language
    if language is None and source:
        language = LANG.get(source[source.rfind(".") :].lower()) if "." in source else None
    return error_message_run.ErrorMessageRunFacet(
        message=error.message,
        programmingLanguage=language or UNKNOWN_LANGUAGE,
        stackTrace=error.stack_trace,
        producer=PRODUCER,
    )
