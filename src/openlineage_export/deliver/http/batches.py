"""The spec's batches: many events in one request, where the server takes them.

OpenLineage's ``POST <endpoint>/batch`` (``spec/OpenLineage.yml`` since 1.40.0; docs/feast.md
quotes it) takes a JSON array of events and answers ``204`` (all taken) or ``200`` with
``status`` ``success`` or ``partial_success`` and, maybe, ``failed_events[{index, reason,
retriable}]``. The spec promises no order within a batch, so two events of a causal chain never
share one: each leg the engine hands the destination gives the batch being gathered one event
at a time, its next once the one before it was accepted (:class:`Gatherer`), and events of
different legs (which the engine hands over only once what they wait for is accepted) fill a
batch together. A batch goes when it is full (``openlineage.batch.maxEvents``,
``openlineage.batch.maxBytes``) or when no more events arrive in this turn of the loop: never
on a timer.

:func:`read_answer` reads a batch's answer exactly; ``http/destination.py`` decides what each
event's outcome is (:data:`Outcome`).
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import orjson

from .poster import server_text

NO_BATCHES = frozenset({404, 405, 415, 501})
"""What a server without the batch endpoint answers there: one event a request from then on."""

NOT_A_BATCH = frozenset({400, 422})
"""What a server may answer to its first batch when its path is no batch endpoint but matches
one of its own (a catch-all route reading ``batch`` as a name, a body that is not one event):
until a batch was taken, one event a request from then on too; once one was, a refusal."""

DECIDED = NO_BATCHES | NOT_A_BATCH | {413}
"""The answers to a batch that its reading decides on (``batching.py``: no batches here, not a
batch endpoint, too large, gzip refused: 400 or 415), not the retry loop of a request."""


class Again(enum.Enum):
    """An event's outcome that is no verdict: send it again, in a later batch (``RETRY``), or
    alone, the server taking no batches (``ALONE``)."""

    RETRY = "retry"
    ALONE = "alone"


Outcome = str | None | Again
"""What became of one event of a batch: None, taken; a reason, refused; or :class:`Again`."""


@dataclass(frozen=True, slots=True)
class Failed:
    """One event of a batch the server did not take (``failed_events[]``)."""

    index: int
    reason: str
    retriable: bool


@dataclass(frozen=True, slots=True)
class BatchAnswer:
    """A 2xx answer to a batch, read: every event taken, or those that failed (``None``: the
    server said some failed, not which: a summary only, as Feast answers)."""

    failed: tuple[Failed, ...] | None = ()


def read_answer(status: int, body: bytes, size: int) -> BatchAnswer:
    """A 2xx answer to a batch of ``size`` events: 204 (or any 2xx without the spec's body) is
    every event taken; 200 ``partial_success`` lists the failed ones, or not. A failed event's
    index out of the batch, or given twice, is no index we can use: as if none were given."""
    try:
        got = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        got = None
    if status == 204 or not isinstance(got, dict) or got.get("status") != "partial_success":
        return BatchAnswer()
    failed = got.get("failed_events")
    if not isinstance(failed, list) or not failed:
        return BatchAnswer(None)
    read: dict[int, Failed] = {}
    for entry in failed:
        index = entry.get("index") if isinstance(entry, dict) else None
        if type(index) is not int or not 0 <= index < size or index in read:
            return BatchAnswer(None)
        reason = entry.get("reason")
        text = server_text(" ".join(reason.split())) if isinstance(reason, str) else ""
        read[index] = Failed(index, text or "no reason given", entry.get("retriable") is True)
    return BatchAnswer(tuple(read[i] for i in sorted(read)))


Post = Callable[[list[bytes]], Awaitable[list[Outcome]]]
"""Sends one batch of events (their JSON bodies), gives each event's outcome, in order."""


class Gatherer:
    """Gathers the events the legs hand over into batches, posts each with ``post``.

    :meth:`submit` adds one event to the batch being gathered and gives its outcome once that
    batch is answered. A batch goes once it is full, or in the next turn of the loop (when no
    more events arrived meanwhile), and only while fewer than ``in_flight()`` batches are in
    flight: the events that come meanwhile wait and fill the next one (a server that answers
    one request at a time, Feast, gets one batch at a time, not a queue of them each waiting
    for its turn within the timeout)."""

    def __init__(
        self, post: Post, max_events: int, max_bytes: int, in_flight: Callable[[], int]
    ) -> None:
        self._post = post
        self.max_events = max(1, max_events)
        self.max_bytes = max(1, max_bytes)
        self._in_flight = in_flight
        self._flying = 0
        self._closed = False
        self._pending: list[tuple[bytes, asyncio.Future[Outcome]]] = []
        self._bytes = 0
        self._scheduled = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def submit(self, body: bytes) -> Outcome:
        """Send ``body`` in a batch; its outcome."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Outcome] = loop.create_future()
        self._pending.append((body, future))
        self._bytes += len(body) + 1
        if len(self._pending) >= self.max_events or self._bytes >= self.max_bytes:
            self._flush()
        elif not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush)
        return await future

    def close(self) -> None:
        """Abandon the batches still in flight (the export is ending)."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()

    def _flush(self) -> None:
        self._scheduled = False
        while self._pending and not self._closed and self._flying < max(1, self._in_flight()):
            batch: list[tuple[bytes, asyncio.Future[Outcome]]] = []
            size = 0
            while self._pending and len(batch) < self.max_events:
                body, _ = self._pending[0]
                if batch and size + len(body) + 1 > self.max_bytes:
                    break
                batch.append(self._pending.pop(0))
                size += len(body) + 1
            self._bytes -= size
            self._flying += 1
            task = asyncio.get_running_loop().create_task(self._send(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, batch: list[tuple[bytes, asyncio.Future[Outcome]]]) -> None:
        futures = [future for _, future in batch]
        try:
            outcomes = await self._post([body for body, _ in batch])
        except asyncio.CancelledError:
            for future in futures:
                future.cancel()
            raise
        except BaseException as exc:  # the export stops (an outage, a key refused): tell all
            for future in futures:
                if not future.done():
                    future.set_exception(exc)
            return
        finally:
            self._flying -= 1
            if self._pending and not self._scheduled:  # what came meanwhile goes now
                self._flush()
        for future, outcome in zip(futures, outcomes, strict=True):
            if not future.done():
                future.set_result(outcome)
