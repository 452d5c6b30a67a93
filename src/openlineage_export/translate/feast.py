"""Feast's mode (``openlineage.server = feast``): Feast's OpenLineage consumer (docs/feast.md).

Feast 0.67 (``feast serve_lineage``, its consumer enabled) takes the events every server gets,
at ``/api/v1/lineage`` and at the spec's batch endpoint ``/api/v1/lineage/batch``, and keeps them
as they were sent: its events are the generic ones (:class:`~.events.Translator`). What sets it
apart is what it keeps, not the shape it wants:

- every event it is given is a new row (an id of its own; nothing compared with what is
  there): an event sent twice is held twice. An event is known only by what it says: its run
  id, ``eventType`` and ``eventTime``, which an export gives once per event;
- its read API gives those events back, by namespace and job, newest first
  (``GET /api/v1/lineage/openlineage/events``);
- it answers one request at a time, server-wide, and processes a batch's events in order.

Pure, like the rest of ``translate/``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from .asking import EPOCH_MICROS, Asking, Item, PageRead, Probe, json_of, lineage_base, uuid_int

SERVER = "feast"
"""The ``openlineage.server`` value of this mode."""

SERVER_NAME = "Feast"
"""Its own name, as a person writes it."""

DESCRIPTION = "Feast's, which keeps every event it is given (docs/feast.md)"
"""What the mode is for, for a person (``openlineage.server``'s help)."""


def _feast_events(status: int, body: bytes) -> PageRead | None:
    got = json_of(body)
    if status != 200:
        raise ValueError(f"HTTP {status}")
    events = got.get("events") if isinstance(got, dict) else None
    total = got.get("total") if isinstance(got, dict) else None
    if not isinstance(events, list) or type(total) is not int:
        raise ValueError("not a page of events")
    return PageRead(events, None)  # its total is the page's own count: it ends nothing


def _feast_probe(status: int, body: bytes) -> Probe:
    if status in (401, 403, 429) or status >= 500:
        return "refused"
    try:
        page = _feast_events(status, body)
    except ValueError:
        return "other"
    return "there" if page is not None and page.items else "empty"


def _feast_event(row: Any) -> Item:
    got = row if isinstance(row, dict) else {}
    run_id, event_type, when = got.get("run_id"), got.get("event_type"), got.get("event_time")
    if isinstance(run_id, str) and isinstance(event_type, str) and type(when) is int:
        return Item(uuid_int(run_id), event_type, when * 1000 + EPOCH_MICROS)
    raise ValueError("not an event")


def _query(**params: str | int) -> str:
    return urlencode(params, quote_via=quote)


ASKING = Asking(
    name="Feast",
    holds="events",
    keeps_duplicates=True,
    base=lineage_base("/lineage/openlineage"),
    probe_url=lambda base, ns: f"{base}/events?{_query(namespace=ns, limit=1)}",
    probe=_feast_probe,
    page_url=lambda base, ns, job, offset, limit: (
        f"{base}/events?{_query(namespace=ns, job_name=job, limit=limit, offset=offset)}"
    ),
    page=_feast_events,
    item=_feast_event,
    first_page=100,
    most_per_page=1000,  # its own bound (1,001 is a 422)
    body_limit=4 * 1024 * 1024,  # about 3.1 KB an event: a full page is about 3 MB
)
"""Feast's events, by namespace and job (``GET /api/v1/lineage/openlineage/events``), newest
first by ``eventTime`` (in ms: ``event_time``); its ``total`` is the page's own count."""
