"""Job names, and the names that would stand for two different jobs.

A pipeline is the job ``<pipeline id>`` and each of its stages the job
``<pipeline id>.<stage id>``. Ids may hold dots, so two different jobs can get one name:
pipeline ``a.b`` and stage ``b`` of pipeline ``a`` are both ``a.b``. A lineage server would
merge their runs into one job without a word, so such a name is *ambiguous*: the runs that
would use it are not exported (see docs/mapping.md). Pure, like the rest of ``translate/``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..hub.model import Graph, Run, quoted


def pipeline_job(pipeline: str) -> str:
    """The job name of a pipeline."""
    return pipeline


def stage_job(pipeline: str, stage: str) -> str:
    """The job name of a stage of a pipeline."""
    return f"{pipeline}.{stage}"


Claim = tuple[str, str | None]
"""A job the events may name: (pipeline id, None) for a pipeline, (pipeline id, stage id)."""


def _words(claim: Claim) -> str:
    pipeline, stage = claim
    if stage is None:
        return f"pipeline {quoted(pipeline)}"
    return f"stage {quoted(stage)} of pipeline {quoted(pipeline)}"


@dataclass(frozen=True, slots=True)
class Clash:
    """One job name that two or more different jobs would get."""

    name: str
    claims: tuple[Claim, ...]
    """The jobs that would share it, sorted (pipelines first)."""

    def __str__(self) -> str:
        owners = [_words(claim) for claim in self.claims]
        listed = ", ".join(owners[:-1]) + " and " + owners[-1]
        return f"job name {quoted(self.name)} would stand for both {listed}"


class JobNames:
    """The ambiguous job names among a set of jobs, and which runs would use one."""

    def __init__(self, claims: Iterable[Claim]) -> None:
        owners: dict[str, set[Claim]] = {}
        for claim in claims:
            pipeline, stage = claim
            name = pipeline_job(pipeline) if stage is None else stage_job(pipeline, stage)
            owners.setdefault(name, set()).add(claim)
        self.clashes: dict[str, Clash] = {
            name: Clash(name, tuple(sorted(found, key=lambda c: (c[1] is not None, c))))
            for name, found in sorted(owners.items())
            if len(found) > 1
        }

    def clash(self, run: Run) -> Clash | None:
        """The first ambiguous name the run's events would use, or None."""
        if not self.clashes:
            return None
        found = self.clashes.get(pipeline_job(run.pipeline))
        if found is not None:
            return found
        for stage in run.stages:
            if stage.status != "skipped" and stage.started_at is not None:
                found = self.clashes.get(stage_job(run.pipeline, stage.stage))
                if found is not None:
                    return found
        return None


def may_clash(pipelines: Iterable[str]) -> bool:
    """Whether any two jobs can share a name at all: only when a pipeline id holds a dot
    (``p.s`` = ``q.t`` with neither ``p`` nor ``q`` dotted means ``p`` = ``q``, ``s`` = ``t``)."""
    return any("." in pipeline for pipeline in pipelines)


def graph_claims(graph: Graph) -> Iterator[Claim]:
    """The jobs the graph declares: its pipelines and their stages."""
    for pipeline in graph.pipelines:
        yield pipeline.id, None
        for stage in pipeline.stages:
            yield pipeline.id, stage.id
