"""How a server is asked what it already holds: a pure description of its read API.

A mode's row (``modes.py``) names the read APIs its server may answer (``Mode.asking``); the one
pager, ``deliver/http/held.py``, does the asking with it: the urls to GET, how an answer reads,
and what the server holds. Nothing here does I/O.

Two kinds of holding:

- *runs* (Marquez): a run is held whole or not at all, by its id, in the state and with the
  end time its last event leaves it (re-sending a run only updates it);
- *events* (Feast): each event is a row of its own, known by its run id, ``eventType`` and
  ``eventTime`` (an export gives each such key once); an event sent twice is held twice, so
  the server ``keeps_duplicates``: what it holds is never sent again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from urllib.parse import quote, urlsplit

import orjson

from ..hub.times import parse_time

Probe = Literal["there", "empty", "other", "refused"]
"""What the first answer says: the namespace is there to read; the server has nothing of it;
the server is not of this kind (nothing to say); it refused or failed (said in one line)."""

_EPOCH = datetime(1, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
EPOCH_MICROS = (datetime(1970, 1, 1, tzinfo=UTC) - _EPOCH) // _MICRO
"""The Unix epoch in microseconds since year 1 (Feast gives times in ms since the epoch)."""

LINEAGE_PATH = "/api/v1/lineage"
"""The events path both read APIs hang from (``openlineage.endpoint``'s default)."""


@dataclass(frozen=True, slots=True)
class Item:
    """One thing a page lists, as far as holding goes: the run it is of (its id as an
    integer), its state or event type, and a time (microseconds since year 1; None: none)."""

    run: int
    kind: str
    time: int | None


@dataclass(frozen=True, slots=True)
class PageRead:
    """A page as read: its items (as the server wrote them) and the count it gives, if any."""

    items: list[Any]
    total: int | None


@dataclass(frozen=True)
class Asking:
    """One server's read API, as data and pure functions."""

    name: str
    """The server's name, as a person writes it (and as the ledger remembers it)."""
    holds: Literal["runs", "events"]
    """What it holds: whole runs, or each event apart."""
    keeps_duplicates: bool
    """Whether an event sent twice is held twice: never re-send what it may hold."""
    base: Callable[[str], str | None]
    """Its read API's base url from the events url (None: not an address it serves)."""
    probe_url: Callable[[str, str], str]
    """The first question (base, namespace): is this the server, and has it the namespace."""
    probe: Callable[[int, bytes], Probe]
    """How that answer reads (status, body)."""
    page_url: Callable[[str, str, str, int, int], str]
    """A page of a job's items (base, namespace, job, offset, limit), newest first."""
    page: Callable[[int, bytes], PageRead | None]
    """How a page reads (status, body); None: no such job; ``ValueError``: not a page."""
    item: Callable[[Any], Item]
    """One item of a page (``ValueError``: one we cannot read)."""
    first_page: int
    """Items asked for on a job's first page."""
    most_per_page: int
    """Items asked for on one page at most (the server's own limit, or ours)."""
    body_limit: int
    """The most of one page's answer read, in bytes: a page of ``most_per_page`` items fits."""


def uuid_int(run_id: str) -> int:
    """A run id (a UUID as text) as an integer (``ValueError``: no UUID)."""
    if len(run_id) != 36:
        raise ValueError(run_id)
    return int(run_id.replace("-", ""), 16)


def micros(moment: str) -> int:
    """An RFC 3339 time as microseconds since year 1 (``ValueError``: no such time). Not
    ``hub.times.microseconds`` (since 1970): from year 1, every time is a non-negative int,
    which ``holdings.py`` packs with a run's state in one int (an end before 1970 included)."""
    return (parse_time(moment) - _EPOCH) // _MICRO


def json_of(body: bytes) -> object:
    """A body as JSON, or None when it is none."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def lineage_base(suffix: str) -> Callable[[str], str | None]:
    def base(events_url: str) -> str | None:
        parts = urlsplit(events_url)
        if parts.query or not parts.path.rstrip("/").endswith(LINEAGE_PATH):
            return None
        return events_url.rstrip("/")[: -len("/lineage")] + suffix

    return base


# --- Marquez's read API (api/src/main/java/marquez/api/JobResource.java) -------------------


def marquez_404(status: int, body: object) -> bool:
    """Marquez's own 404 (``{"code": 404, "message": ...}``): it has no such thing."""
    return (
        status == 404 and isinstance(body, dict) and body.get("code") == 404 and "message" in body
    )


def _marquez_probe(status: int, body: bytes) -> Probe:
    got = json_of(body)
    if status == 200 and isinstance(got, dict) and "name" in got:
        return "empty" if got.get("isHidden") is True else "there"
    if marquez_404(status, got):
        return "empty"
    if status in (401, 403, 429) or status >= 500:
        return "refused"
    return "other"


def _marquez_page(status: int, body: bytes) -> PageRead | None:
    got = json_of(body)
    if marquez_404(status, got):
        return None
    if status != 200:
        raise ValueError(f"HTTP {status}")
    runs = got.get("runs") if isinstance(got, dict) else None
    total = got.get("totalCount") if isinstance(got, dict) else None
    if not isinstance(runs, list) or type(total) is not int:
        raise ValueError("not a page of runs")
    return PageRead(runs, total)


def _marquez_run(run: Any) -> Item:
    got = run if isinstance(run, dict) else {}
    run_id, state, ended_at = got.get("id"), got.get("state"), got.get("endedAt")
    if isinstance(run_id, str) and isinstance(state, str) and isinstance(ended_at, str | None):
        return Item(uuid_int(run_id), state, None if ended_at is None else micros(ended_at))
    raise ValueError("not a run")


def _ns(namespace: str) -> str:
    return quote(namespace, safe="")


MARQUEZ = Asking(
    name="Marquez",
    holds="runs",
    keeps_duplicates=False,
    base=lineage_base(""),
    probe_url=lambda base, ns: f"{base}/namespaces/{_ns(ns)}",
    probe=_marquez_probe,
    page_url=lambda base, ns, job, offset, limit: (
        f"{base}/namespaces/{_ns(ns)}/jobs/{quote(job, safe='')}/runs?limit={limit}&offset={offset}"
    ),
    page=_marquez_page,
    item=_marquez_run,
    first_page=20,  # about 2.5 KB a run, as Marquez writes a stage run
    most_per_page=1000,  # Marquez sets no bound: ours
    body_limit=64 * 1024,
)
"""Marquez's runs, by job (``GET /api/v1/namespaces/{ns}/jobs/{job}/runs``), latest started
first: each with its ``id``, ``state`` and ``endedAt``."""


def keeps_duplicates(asking: tuple[Asking, ...], answered: str | None = None) -> bool:
    """Whether the server keeps every event it is given (an event sent twice is held twice, so
    none is ever sent again blind): every read API its mode may answer through says so, or the
    one it answered through (``answered``: remembered by the ledger, or answered now) does.
    Decided here only: the export (``export/holding.py``) and the destination both ask this."""
    return bool(asking) and (
        all(a.keeps_duplicates for a in asking)
        or any(a.keeps_duplicates and a.name == answered for a in asking)
    )
