"""Events shaped for Data.Rentgen: what its Kafka consumer needs to keep every run.

Data.Rentgen (an OpenLineage server fed through Kafka; docs/data-rentgen.md) partitions its
tables by the time inside a run id, so it takes only UUIDv7 run ids: an event whose run id, or
whose ``parent``/``root`` run id, is another kind of UUID is refused whole. In Data.Rentgen mode:

- a trace id that is a UUIDv7 is the run id, as everywhere; any other trace id (a UUID of
  another version, or no UUID) gets the UUIDv7 every other server gets for a trace id that is
  no UUID (``ids.derived_run_id``: its time the run's start, the rest a hash of the namespace,
  pipeline and trace id), so the same run has the same id on every export and every machine,
  and a stage's run id and its ``parent``/``root`` references follow from it;
- the trace id itself rides as the run's ``external_id`` (Data.Rentgen's own run facet,
  ``dataRentgen_run``), which Data.Rentgen shows on each run and searches by, and a stage run's
  attempt as its ``attempt`` there: not in ``tags``, which Data.Rentgen files under the job
  (one tag value per run would pile up on every job);
- the jobs' namespace is given as a location Data.Rentgen reads (``scheme://name``): a namespace
  that is no ``scheme://...`` address becomes ``lineage-hub://<namespace>``, where Data.Rentgen
  would otherwise show ``unknown://<namespace>``.

Everything else (job names, datasets, facets, times, event types) is what every server gets.
Pure, like the rest of ``translate/``.
"""

from __future__ import annotations

from typing import Any

from ..hub.model import Graph, Run, StageExecution
from . import spec
from .events import TranslationConfig, Translator
from .facets import PRODUCER
from .ids import canonical_uuid, derived_run_id

SERVER = "data-rentgen"
"""The ``openlineage.server`` value of this shape."""

LOCATION_TYPE = "lineage-hub"
"""The scheme of the jobs' location: Data.Rentgen shows it as the location's type, as it shows
``airflow`` for the jobs of an Airflow."""

RUN_FACET = "dataRentgen_run"
"""Data.Rentgen's own run facet (``DataRentgenRunInfoFacet``): a run's external id, attempt..."""

RUN_FACET_SCHEMA = spec.RUN_FACET
"""Its ``_schemaURL``: the spec's base run facet, as custom facets without a schema of their own
name it (Data.Rentgen publishes none)."""


def is_uuid7(uuid: str) -> bool:
    """Whether ``uuid`` (canonical: lower case, 8-4-4-4-12) is a UUID of version 7 in RFC 9562's
    variant: the only run ids Data.Rentgen takes."""
    return uuid[14] == "7" and uuid[19] in "89ab"


def pipeline_run_id(namespace: str, pipeline: str, trace_id: str, started_at: str) -> str:
    """The run id of an editor run's pipeline run in Data.Rentgen mode: a UUIDv7 trace id as it
    is, else the id derived from the run (a UUID trace id in its canonical form, so that its
    letter case does not matter)."""
    as_uuid = canonical_uuid(trace_id)
    if as_uuid is not None and is_uuid7(as_uuid):
        return as_uuid
    return derived_run_id(namespace, pipeline, as_uuid or trace_id, started_at)


def job_namespace(namespace: str) -> str:
    """The jobs' namespace as a location Data.Rentgen reads: kept when it is an address
    (``scheme://...``), else ``lineage-hub://<namespace>`` (a ``/`` in it written ``%2F``, so
    that all of it is the location's name)."""
    if "://" in namespace:
        return namespace
    return f"{LOCATION_TYPE}://{namespace.replace('/', '%2F')}"


def run_facet(*, external_id: str | None = None, attempt: int | None = None) -> dict[str, Any]:
    """``dataRentgen_run`` with a run's external id (the trace id) or attempt."""
    facet: dict[str, Any] = {"_producer": PRODUCER, "_schemaURL": RUN_FACET_SCHEMA}
    if external_id is not None:
        facet["external_id"] = external_id
    if attempt is not None:
        facet["attempt"] = str(attempt)
    return facet


class DataRentgenTranslator(Translator):
    """The :class:`Translator` whose events Data.Rentgen keeps whole (module docstring)."""

    def __init__(self, graph: Graph, config: TranslationConfig) -> None:
        super().__init__(graph, config)
        self.job_namespace = job_namespace(self.namespace)

    def run_id(self, run: Run) -> str:
        return pipeline_run_id(self.namespace, run.pipeline, run.trace_id, run.started_at)

    def trace_tags(self, run: Run) -> list[tuple[str, str]]:
        return []

    def attempt_tags(self, stage: StageExecution) -> list[tuple[str, str]]:
        return []

    def server_run_facets(self, run: Run, stage: StageExecution | None) -> dict[str, Any]:
        if stage is None:
            return {RUN_FACET: run_facet(external_id=run.trace_id)}
        return {RUN_FACET: run_facet(attempt=stage.attempt)}
