"""A loopback server that answers the OpenLineage spec's batch endpoint as the spec says, scripted.

No real server can be made to answer every way the spec allows (Feast, the one that takes
batches, never names the events that failed), so this one does, on the real HTTP server of
``fakeserver`` (threads, keep-alive, every request recorded, resets and delays). It keeps every
event it accepted, in order, so that a test can say "every event accepted exactly once".

The contract, from ``spec/OpenLineage.yml`` (OpenLineage 1.40.0 on; read at commit 8f02abf of
OpenLineage/OpenLineage; docs/feast.md quotes it whole):

- ``POST <endpoint>/batch`` (``/api/v1/lineage/batch``): the body, required, is a JSON array of
  events (RunEvent, DatasetEvent or JobEvent).
- ``204``: the batch was received; no body.
- ``200``: received, and the body says how: ``{"status": "success" | "partial_success",
  "summary": {"received", "successful", "failed", "retriable"?, "non_retriable"?},
  "failed_events"?: [{"index", "reason", "retriable"}]}``; ``status`` and ``summary`` (with
  ``received``, ``successful``, ``failed``) are required, ``failed_events`` is not.
- Nothing more: a server without the endpoint, a body too large or a compression it does not
  take are answered as HTTP answers them (404, 405, 501; 413; 415).

Use::

    from support.batch_server import spec_batch_fixture  # registers the fixture ``spec_batch``

    def test_x(spec_batch):
        spec_batch.plan(Plan(failures={1: Failure("Timeout", retriable=True)}))
        ... export to spec_batch.url ...
        assert spec_batch.check(dry_run_events).ok

A single event (``POST <endpoint>``) is accepted (200, the spec's answer) and kept like the
events of a batch; a GET is the fake server's (a 404 page, in ``server.reads``).
"""

from __future__ import annotations

import json
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from fakeserver import Answer, FakeServer, Recorded

__all__ = ["Check", "Failure", "Plan", "SpecBatch", "spec_batch_fixture"]

NO_BATCH_STATUSES = (404, 405, 415, 501)
"""What a server without the batch endpoint answers there (the issue's list)."""


@dataclass(frozen=True)
class Failure:
    """One event of a batch that the server does not take."""

    reason: str = "Server error"
    retriable: bool = True
    stored: bool = False
    """Kept all the same (Feast stores an event, then may fail it): a resend duplicates it."""


@dataclass(frozen=True)
class Plan:
    """How the server answers one batch request; plans are used in order, then the default (every
    event accepted, 204)."""

    failures: Mapping[int, Failure] = field(default_factory=dict)
    """Index in the batch -> how that event fails."""
    indexes: bool = True
    """Whether the 200 lists ``failed_events`` (False: the summary only, as Feast answers)."""
    success_body: bool = False
    """All accepted: 200 ``{"status": "success", "summary": ...}`` instead of 204."""
    status: int | None = None
    """Answer this status instead (a 500, a 503...): nothing of the batch is kept."""
    lose_answer: bool = False
    """Keep what the batch would keep, then reset the connection: the client gets no answer."""


@dataclass(frozen=True)
class Check:
    """What the server accepted, against what it should have: each exactly once."""

    missing: list[dict[str, Any]]
    twice: list[dict[str, Any]]
    """Each event accepted more than once, once per extra time."""
    unexpected: list[dict[str, Any]]

    @property
    def ok(self) -> bool:
        """Every expected event accepted exactly once, nothing else."""
        return not (self.missing or self.twice or self.unexpected)


def identity(event: Any) -> str:
    """An event's identity: its content (the export's events are the same byte for byte each
    time, so an event sent twice is the same JSON twice)."""
    return json.dumps(event, sort_keys=True, separators=(",", ":"))


class SpecBatch:
    """The script of a :class:`FakeServer` that plays an OpenLineage server with the spec's batch
    endpoint (or without it, ``batches=False``)."""

    def __init__(
        self,
        server: FakeServer,
        *,
        endpoint: str = "/api/v1/lineage",
        batches: bool = True,
        no_batch_status: int = 404,
        max_events: int | None = None,
        max_bytes: int | None = None,
        gzip: bool = True,
        gzip_refusal: int = 415,
        fail: Callable[[int, Any], Failure | None] | None = None,
    ) -> None:
        self.server = server
        server.answers_batches = True  # its batches are this script's
        self.endpoint = endpoint.rstrip("/")
        self.batches = batches
        """Whether ``<endpoint>/batch`` exists (else it answers ``no_batch_status``)."""
        self.no_batch_status = no_batch_status
        self.max_events = max_events
        """More events in one batch: 413."""
        self.max_bytes = max_bytes
        """A larger body (as sent, or decoded): 413."""
        self.gzip = gzip
        """Whether a gzip body is taken (else: ``gzip_refusal``)."""
        self.gzip_refusal = gzip_refusal
        self.fail = fail
        """Index, event -> how it fails, or None: for every batch, after the plan's failures."""
        self._lock = threading.Lock()
        self._plans: deque[Plan] = deque()
        self._accepted: list[Any] = []
        self._answered: list[tuple[str, int, int]] = []
        server.script(self)

    @property
    def url(self) -> str:
        """The server's address (give the export this, and the endpoint's path)."""
        return self.server.url

    @property
    def batch_path(self) -> str:
        return f"{self.endpoint}/batch"

    def plan(self, *plans: Plan) -> None:
        """Answer the next batch requests so, in order (then the default)."""
        with self._lock:
            self._plans.extend(plans)

    @property
    def accepted(self) -> list[Any]:
        """Every event accepted (kept), in the order it was kept."""
        with self._lock:
            return list(self._accepted)

    @property
    def answered(self) -> list[tuple[str, int, int]]:
        """(path, events in the body, status) of every POST, in order (-1 events: no array)."""
        with self._lock:
            return list(self._answered)

    def check(self, expected: Iterable[Any]) -> Check:
        """Whether every event of ``expected`` was accepted exactly once, and nothing else."""
        expected = list(expected)
        want = Counter(identity(e) for e in expected)
        got = Counter(identity(e) for e in self.accepted)
        events = {identity(e): e for e in self.accepted}
        expected_events = {identity(e): e for e in expected}
        missing = [expected_events[k] for k in want if k not in got]
        twice = [events[k] for k, n in got.items() if k in want for _ in range(n - 1)]
        unexpected = [events[k] for k in got if k not in want]
        return Check(missing, twice, unexpected)

    # -- the server's side ---------------------------------------------------------------------

    def __call__(self, request: Recorded) -> Answer:
        path = request.path.split("?", 1)[0].rstrip("/")
        if request.method != "POST" or path not in (self.endpoint, self.batch_path):
            return Answer(404, body=f"{request.method} {path}: not here")
        if path == self.batch_path and not self.batches:
            return self._answer(path, -1, Answer(self.no_batch_status, body="no batch endpoint"))
        refusal = self._refusal(request)
        if refusal is not None:
            return self._answer(path, -1, refusal)
        try:
            body = json.loads(request.body)
        except ValueError:
            return self._answer(path, -1, Answer(400, body="not JSON"))
        if path == self.endpoint:
            with self._lock:
                self._accepted.append(body)
            return self._answer(path, 1, Answer(200))
        if not isinstance(body, list):
            return self._answer(path, -1, Answer(400, body="a batch is a JSON array of events"))
        if self.max_events is not None and len(body) > self.max_events:
            return self._answer(
                path, len(body), Answer(413, body=f"at most {self.max_events} events a batch")
            )
        with self._lock:
            plan = self._plans.popleft() if self._plans else Plan()
        return self._answer(path, len(body), self._batch(body, plan))

    def _refusal(self, request: Recorded) -> Answer | None:
        encoding = request.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity") and (encoding != "gzip" or not self.gzip):
            return Answer(self.gzip_refusal, body=f"Content-Encoding {encoding} not taken")
        largest = max(len(request.raw), len(request.body))
        if self.max_bytes is not None and largest > self.max_bytes:
            return Answer(413, body=f"at most {self.max_bytes} bytes a request")
        return None

    def _batch(self, events: list[Any], plan: Plan) -> Answer:
        if plan.status is not None:
            return Answer(plan.status, body="scripted")
        failed: list[dict[str, Any]] = []
        with self._lock:
            for index, event in enumerate(events):
                failure = plan.failures.get(index)
                if failure is None and self.fail is not None:
                    failure = self.fail(index, event)
                if failure is None or failure.stored:
                    self._accepted.append(event)
                if failure is not None:
                    failed.append(
                        {"index": index, "reason": failure.reason, "retriable": failure.retriable}
                    )
        if plan.lose_answer:
            return Answer(reset=True)
        if not failed:
            if plan.success_body:
                return Answer(200, body={"status": "success", "summary": _summary(events, [])})
            return Answer(204)
        body: dict[str, Any] = {"status": "partial_success", "summary": _summary(events, failed)}
        if plan.indexes:
            body["failed_events"] = failed
        return Answer(200, body=body)

    def _answer(self, path: str, events: int, answer: Answer) -> Answer:
        with self._lock:
            self._answered.append((path, events, 0 if answer.reset else answer.status))
        return answer


def _summary(events: list[Any], failed: list[dict[str, Any]]) -> dict[str, int]:
    retriable = sum(1 for f in failed if f["retriable"])
    return {
        "received": len(events),
        "successful": len(events) - len(failed),
        "failed": len(failed),
        "retriable": retriable,
        "non_retriable": len(failed) - retriable,
    }


@pytest.fixture(name="spec_batch")
def spec_batch_fixture() -> Iterator[SpecBatch]:
    """A started server with the spec's batch endpoint, accepting everything (script it with
    ``plan``, or change its attributes); stopped (cleanly) after the test."""
    server = FakeServer(batches=True)
    try:
        yield SpecBatch(server)
    finally:
        server.stop()
