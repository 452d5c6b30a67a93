"""The Lineage hub as we receive it: the graph and the runs of the audit trail, as values.

These frozen dataclasses are what the reader produces and what translation consumes; they
hold exactly what the contract (``lineage-hub/CONTRACT.md``) defines, already validated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol, TypeVar

import msgspec


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


_Item = TypeVar("_Item", bound=_Identified)


class BadRecord(ValueError):
    """A record breaks the contract; the message says which field and how."""


QUOTE_LIMIT = 200
"""The most characters of a value from the trail (an id, a time) a reason quotes: the trail
lets an id be almost a whole line (32 MiB), and a reason is kept, listed and streamed."""


def quoted(value: str) -> str:
    """``repr(value)``, of its first :data:`QUOTE_LIMIT` characters when it is longer, saying
    how many more it had."""
    if len(value) <= QUOTE_LIMIT:
        return repr(value)
    return f"{value[:QUOTE_LIMIT]!r}... ({len(value) - QUOTE_LIMIT:,} more characters)"


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
    _by_id: dict[str, Stage] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        # An index, not a scan: one run names every stage it ran, and a scan per stage made a
        # run of S stages cost S * S (issue 43).
        object.__setattr__(self, "_by_id", _first_by_id(self.stages))

    def stage(self, stage_id: str) -> Stage | None:
        """The declared stage with this id (the first, if declared twice), if the graph still
        has it."""
        return self._by_id.get(stage_id)


@dataclass(frozen=True, slots=True)
class Graph:
    """The graph the editor holds (``graph.json``)."""

    workspace_name: str
    pipelines: tuple[Pipeline, ...] = ()
    _by_id: dict[str, Pipeline] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", _first_by_id(self.pipelines))

    def pipeline(self, pipeline_id: str) -> Pipeline | None:
        """The pipeline with this id, or None when it was deleted from the graph."""
        return self._by_id.get(pipeline_id)


def _first_by_id(items: tuple[_Item, ...]) -> dict[str, _Item]:
    by_id: dict[str, _Item] = {}
    for item in items:
        by_id.setdefault(item.id, item)
    return by_id


# The run records: msgspec Structs, so the reader decodes and type-checks a line in C, straight
# into these values (field names are the trail's camelCase ones, in snake_case here).

NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
Count = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
"""Rows and bytes: what a 64-bit count holds, as lineage servers (and JSON encoders) store them."""


class ErrorInfo(msgspec.Struct, frozen=True, rename="camel"):
    """What the trail says about a failure; only ``message`` is sure to be there."""

    message: NonEmpty
    type: NonEmpty | None = None
    stack_trace: NonEmpty | None = None
    programming_language: NonEmpty | None = None


class Field(msgspec.Struct, frozen=True):
    """One column of a written dataset's schema."""

    name: NonEmpty
    type: NonEmpty | None = None


class DataAccess(msgspec.Struct, frozen=True):
    """One read or write of a stage execution: where the data lives and its content digest."""

    dataset: NonEmpty
    digest: NonEmpty | None = None
    bytes: Count | None = None
    rows: Count | None = None
    schema: tuple[Field, ...] | None = None


class StageExecution(msgspec.Struct, frozen=True, rename="camel"):
    """One attempt of one stage in a run (a retried stage has one per attempt)."""

    stage: NonEmpty
    status: Literal["succeeded", "failed", "cancelled", "running", "skipped"]
    attempt: Annotated[int, msgspec.Meta(ge=1)] = 1
    started_at: str | None = None
    ended_at: str | None = None
    parameters: dict[str, Any] = {}
    reads: tuple[DataAccess, ...] = ()
    writes: tuple[DataAccess, ...] = ()
    error: ErrorInfo | None = None


class Engine(msgspec.Struct, frozen=True):
    """The engine that ran the pipeline, as the trail names it."""

    name: NonEmpty
    version: NonEmpty | None = None


class Run(msgspec.Struct, frozen=True, rename="camel"):
    """One editor run: the current state of one trace id on the trail."""

    trace_id: NonEmpty
    pipeline: NonEmpty
    status: Literal["succeeded", "failed", "cancelled", "running"]
    started_at: str
    ended_at: str | None = None
    engine: Engine | None = None
    trigger: NonEmpty | None = None
    parameters: dict[str, Any] = {}
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
