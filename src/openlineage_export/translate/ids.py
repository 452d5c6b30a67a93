"""Run ids: a trace id that is a UUID *is* the run id; every other id is derived, never minted.

Derived ids are UUIDv7 built as openlineage-python's ``generate_static_uuid`` builds them
(``spec.static_uuid``, the same bits, checked against it by the tests): the time part
is the run's (or stage attempt's) start, the rest a hash of what identifies it. Same trail,
same ids, on any machine and in any later export, so re-exporting updates the same runs.
"""

from __future__ import annotations

import re

from ..hub.times import parse_time
from .spec import static_uuid

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def canonical_uuid(trace_id: str) -> str | None:
    """The canonical lower-case form of a trace id written as a UUID (8-4-4-4-12), else None."""
    if len(trace_id) == 36 and _UUID.fullmatch(trace_id):
        return trace_id.lower()
    return None


def pipeline_run_id(namespace: str, pipeline: str, trace_id: str, started_at: str) -> str:
    """The OpenLineage run id of an editor run's pipeline run."""
    as_uuid = canonical_uuid(trace_id)
    if as_uuid is not None:
        return as_uuid
    return derived_run_id(namespace, pipeline, trace_id, started_at)


def derived_run_id(namespace: str, pipeline: str, trace_id: str, started_at: str) -> str:
    """The run id derived for a pipeline run whose trace id cannot be its run id: a UUIDv7 of
    the run's start and a hash of the namespace, pipeline and trace id."""
    data = "\x00".join(("lineage-hub/run", namespace, pipeline, trace_id)).encode()
    return static_uuid(parse_time(started_at), data)


def stage_run_id(pipeline_run: str, stage: str, attempt: int, started_at: str) -> str:
    """The run id of one stage attempt, derived from its pipeline run, stage id and attempt."""
    data = "\x00".join(("lineage-hub/stage", pipeline_run, stage, str(attempt))).encode()
    return static_uuid(parse_time(started_at), data)
