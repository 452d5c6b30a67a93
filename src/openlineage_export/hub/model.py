"""The Lineage hub as we receive it: the graph and the runs of the audit trail, as values.

These frozen dataclasses are what the reader produces and what translation consumes; they
hold exactly what the contract (``lineage-hub/CONTRACT.md``) defines, already validated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RUN_STATUSES = ("succeeded", "failed", "cancelled", "running")
STAGE_STATUSES = ("succeeded", "failed", "cancelled", "running", "skipped")


@dataclass(frozen=True, slots=True)
class Stage:
    """A stage of a pipeline as the graph declares it."""

    id: str
    name: str | None = None
    description: str | None = None
    source: str | None = None
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Pipeline:
    """A pipeline of the graph: stable ``id``, a name for people, its stages."""

    id: str
    name: str | None = None
    description: str | None = None
    stages: tuple[Stage, ...] = ()

    def stage(self, stage_id: str) -> Stage | None:
        """The declared stage with this id, if the graph still has it."""
        for stage in self.stages:
            if stage.id == stage_id:
                return stage
        return None


@dataclass(frozen=True, slots=True)
class Graph:
    """The graph the editor holds (``graph.json``)."""

    workspace_name: str
    pipelines: tuple[Pipeline, ...] = ()

    def pipeline(self, pipeline_id: str) -> Pipeline | None:
        """The pipeline with this id, or None when it was deleted from the graph."""
        for pipeline in self.pipelines:
            if pipeline.id == pipeline_id:
                return pipeline
        return None


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """What the trail says about a failure; only ``message`` is sure to be there."""

    message: str
    type: str | None = None
    stack_trace: str | None = None
    programming_language: str | None = None


@dataclass(frozen=True, slots=True)
class Field:
    """One column of a written dataset's schema."""

    name: str
    type: str | None = None


@dataclass(frozen=True, slots=True)
class DataAccess:
    """One read or write of a stage execution: where the data lives and its content digest."""

    dataset: str
    digest: str | None = None
    bytes: int | None = None
    rows: int | None = None
    schema: tuple[Field, ...] | None = None


@dataclass(frozen=True, slots=True)
class StageExecution:
    """One attempt of one stage in a run (a retried stage has one per attempt)."""

    stage: str
    attempt: int
    status: str
    started_at: str | None
    ended_at: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    reads: tuple[DataAccess, ...] = ()
    writes: tuple[DataAccess, ...] = ()
    error: ErrorInfo | None = None


@dataclass(frozen=True, slots=True)
class Engine:
    """The engine that ran the pipeline, as the trail names it."""

    name: str
    version: str | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """One editor run: the current state of one trace id on the trail."""

    trace_id: str
    pipeline: str
    status: str
    started_at: str
    ended_at: str | None = None
    engine: Engine | None = None
    trigger: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    error: ErrorInfo | None = None
    stages: tuple[StageExecution, ...] = ()


@dataclass(frozen=True, slots=True)
class BadEntry:
    """A line of the trail we could not use, with where it is and what is wrong."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.reason}"
