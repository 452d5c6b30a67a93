"""A translated run as it is sent: each event's JSON bytes, and the few facts read of it.

The translator (``events.py``) builds every event straight as its bytes from parts already
encoded (:func:`body`); what the engine, the ledger and the report read of an event rides
beside them as :class:`EventFacts`, so nothing decodes an event to send it. The bytes are
exactly what ``orjson`` writes for the event as a dict, its control characters escaped
(``jsonout.py``: a dry run's events may meet a terminal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from ..jsonout import dumps, escape_controls
from . import facets

Event = dict[str, Any]
Named = tuple[str, str]
"""A job's or a dataset's (namespace, name)."""
Dataset = Named
"""A dataset's (namespace, name)."""
NO_DATASETS: tuple[Dataset, ...] = ()


class EventFacts(NamedTuple):
    """What is read of an event besides its bytes: by the causal order (its datasets), the
    ledger and the report (the namespaces, the graph), and the asking of a server (the run
    and the state the event leaves it in)."""

    event_type: str
    event_time: str
    run_id: str
    job: Named
    """The job's (namespace, name)."""
    inputs: tuple[Dataset, ...]
    outputs: tuple[Dataset, ...]


@dataclass(frozen=True, slots=True)
class TranslatedRun:
    """The events of one editor run, in the order they must be sent: each one's JSON bytes
    (``bodies``, what the dry run writes and the transports send) and its :class:`EventFacts`."""

    trace_id: str
    pipeline: str
    run_id: str
    status: str
    bodies: list[bytes]
    facts: list[EventFacts]

    @classmethod
    def of(
        cls, trace_id: str, pipeline: str, run_id: str, status: str, events: list[Event]
    ) -> TranslatedRun:
        """A run of events given as dicts (a test's, or a host's own): each encoded, its facts
        read from it (a field it lacks is empty)."""
        return cls(
            trace_id,
            pipeline,
            run_id,
            status,
            [encode(e) for e in events],
            [facts(e) for e in events],
        )

    @property
    def events(self) -> list[Event]:
        """The events decoded back into dicts (for a reader of their whole content; the
        export itself reads ``bodies`` and ``facts``)."""
        return [orjson.loads(body) for body in self.bodies]

    def __len__(self) -> int:
        """How many events."""
        return len(self.bodies)

    def part(self, start: int, end: int) -> TranslatedRun:
        """The run with only its events from ``start`` to ``end`` (one leg of it)."""
        return TranslatedRun(
            self.trace_id,
            self.pipeline,
            self.run_id,
            self.status,
            self.bodies[start:end],
            self.facts[start:end],
        )

    def only(self, indexes: list[int]) -> TranslatedRun:
        """The run with only the events at ``indexes`` (in order): those a server lacks."""
        return TranslatedRun(
            self.trace_id,
            self.pipeline,
            self.run_id,
            self.status,
            [self.bodies[i] for i in indexes],
            [self.facts[i] for i in indexes],
        )


def encode(event: Event) -> bytes:
    """One event as compact JSON bytes (what the dry run writes and the transports send), its
    control characters escaped (``jsonout.py``: a dry run's events may meet a terminal)."""
    return dumps(event)


def facts(event: Event) -> EventFacts:
    """The :class:`EventFacts` of an event given as a dict."""
    run = event.get("run") or {}
    job = event.get("job") or {}
    return EventFacts(
        event.get("eventType", ""),
        event.get("eventTime", ""),
        run.get("runId", ""),
        (job.get("namespace", ""), job.get("name", "")),
        tuple((d["namespace"], d["name"]) for d in event.get("inputs") or ()),
        tuple((d["namespace"], d["name"]) for d in event.get("outputs") or ()),
    )


# An event is written as orjson writes it from a dict with keys in this order: eventTime,
# producer, schemaURL, eventType, run {runId, facets}, job, inputs, outputs.
_HEAD = b'{"eventTime":'
_AFTER_TIME = (
    b',"producer":'
    + orjson.dumps(facets.PRODUCER)
    + b',"schemaURL":'
    + orjson.dumps(facets.RUN_EVENT_SCHEMA)
    + b',"eventType":'
)
_TYPED = {
    t: _AFTER_TIME + orjson.dumps(t) + b',"run":{"runId":'
    for t in ("START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER")
}
EMPTY_LIST = b"[]"


def tail(run_facets: bytes, job: bytes, inputs: bytes, outputs: bytes) -> bytes:
    """The part of an event after its run id: the run's facets, the job, the inputs and the
    outputs, each given as JSON (:func:`~openlineage_export.jsonout.fragment`), with every
    control character escaped here, once, for all of them. A stage run's two events share it."""
    return escape_controls(
        b"".join(
            (
                b',"facets":',
                run_facets,
                b'},"job":',
                job,
                b',"inputs":',
                inputs,
                b',"outputs":',
                outputs,
                b"}",
            )
        )
    )


def body(event_type: str, when: str, run_id: str, after: bytes) -> bytes:
    """One event's bytes: its time, type and run id before the :func:`tail` it shares.

    ``when`` is a trail time (checked on reading: digits and ``-:.TZ+``) and ``run_id`` a UUID,
    so orjson's escapes are all they need."""
    return b"".join((_HEAD, orjson.dumps(when), _TYPED[event_type], orjson.dumps(run_id), after))
