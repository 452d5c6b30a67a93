"""How the ``http`` destination sends: in the spec's batches where the server takes them.

Every event goes to the batch being gathered (``batches.py``: :class:`~.batches.Gatherer`) and
is posted to the endpoint plus ``/batch``, until the server shows it takes no batches there: a
404, 405, 415 or 501 means one event a request from then on, remembered in the ledger for the
next export (``export/batching.py``).

A note says it once, in the summary, and only once a single event was then taken: a server that
answers 404 to every request has a wrong address (``signs.py`` says so), not a missing batch
endpoint. Then:

- 204, or 200 ``success``: every event taken. The server is known to take batches.
- 200 ``partial_success`` with ``failed_events``: a retriable one is sent again in a later
  batch (within ``openlineage.retry.maxTime`` of its first try), another refuses its run with
  the server's reason.
- ``partial_success`` without indexes (Feast's, a summary only): where the server keeps every
  event it is given, no event of that batch is sent again blind: their runs fail saying so, and
  the next export asks the server what it holds first (``held.py``); elsewhere the batch's
  events are sent again, as retriable.
- 400 or 422 to the first batch (a route of the server's own that is no batch endpoint): the
  same, one event a request; after a batch was taken, the batch's runs are refused.
- 413: the batch is halved (and so are the batches after it), down to one event; one event
  refused with 413 refuses its run.
- 400 or 415 to a gzipped batch (Feast reads no gzip: 400): batches go uncompressed from then
  on, noted once; batches are gzipped only when ``openlineage.compression`` asks for it.
- Anything else goes as a single event's request goes (``destination.py``): retries, outages,
  401/403 strikes, a server's own refusals, and no blind resend to a server that keeps
  duplicates.
"""

from __future__ import annotations

import asyncio
import gzip
import random
from typing import Protocol

from ..retry import RetryPolicy, Tries
from .batches import DECIDED, NO_BATCHES, NOT_A_BATCH, Again, Gatherer, Outcome, read_answer
from .config import HttpConfig
from .poster import Answer


class Sender(Protocol):
    """What batching needs of the destination."""

    url: str
    config: HttpConfig
    retry: RetryPolicy
    keeps_duplicates: bool

    async def post_alone(self, body: bytes, stop: asyncio.Event) -> str | None:
        """One event in a request of its own: None, taken; else why not."""
        ...

    async def post_batch(
        self, url: str, body: bytes, gzipped: bool, stop: asyncio.Event, decided: frozenset[int]
    ) -> Answer | str:
        """One batch until answered with a 2xx or a status in ``decided`` (the answer), else
        why not (see ``destination.py``)."""
        ...

    def describe(self, answer: Answer) -> str:
        """An answer that refuses, in words."""
        ...


class Batches:
    """The events of one destination, in batches where the server takes them."""

    def __init__(self, sender: Sender, *, seed: int | None = None) -> None:
        self.sender = sender
        self.url = sender.url.rstrip("/") + "/batch"
        self.taken: bool | None = None
        """Whether the server takes batches (None: not known yet)."""
        self._gzip = sender.config.gzip_body
        self.notes: list[str] = []
        """What this export learnt of the server's batches, in words, for the summary."""
        self._no_batches: int | None = None
        """The status the batch endpoint answered when it showed there are none."""
        self._gatherer = Gatherer(
            self._post, sender.config.batch_events, sender.config.batch_bytes, self._in_flight
        )
        self._stop = asyncio.Event()
        self._rng = random.Random(seed)
        self.batches_taken = 0
        """Batches the server answered with a 2xx (some of their events may have failed)."""
        self._alone_said = False
        self._probing = asyncio.Lock()

    async def send(self, body: bytes, stop: asyncio.Event) -> str | None:
        """One event, in a batch or alone: None, taken; else why not."""
        self._stop = stop
        tries = Tries(self.sender.retry, self._rng)
        while True:
            if self.taken is False:
                alone = await self.sender.post_alone(body, stop)
                if alone is None and self._no_batches is not None and not self._alone_said:
                    self._alone_said = True  # once, and only when a single event was taken
                    self._say(
                        f"the server at {self.sender.url} takes no batches of events (HTTP "
                        f"{self._no_batches} at {self.url}): one event a request"
                    )
                return alone
            got = await self._gatherer.submit(body)
            if got is Again.ALONE:
                continue
            if got is not Again.RETRY:
                return got
            tries.attempt += 1
            left = tries.left
            if left <= 0:
                return (
                    f"gave up after {tries.attempt} batches in {tries.elapsed:.0f} s: the "
                    f"server at {self.url} failed the event each time, saying it may be sent "
                    "again"
                )
            if await tries.pause(stop, left):
                return "cancelled before every event was sent"

    def _in_flight(self) -> int:
        """The most batches in flight at once: one to a server that keeps duplicates (Feast,
        which answers one request at a time: a queue of batches would only wait out their
        timeouts there), else one for every 16 of ``openlineage.concurrency``."""
        if self.sender.keeps_duplicates:
            return 1
        return max(1, self.sender.config.concurrency // 16)

    def close(self) -> None:
        """Abandon the batches still in flight."""
        self._gatherer.close()

    async def _post(self, bodies: list[bytes]) -> list[Outcome]:
        """One batch: each event's outcome. Until the server showed whether it takes batches,
        one batch at a time: a server without them is asked once, not once per batch."""
        if self.taken is None:
            async with self._probing:
                return await self._post_known(bodies)
        return await self._post_known(bodies)

    async def _post_known(self, bodies: list[bytes]) -> list[Outcome]:
        count = len(bodies)
        if self.taken is False:
            return [Again.ALONE] * count
        payload = b"[" + b",".join(bodies) + b"]"
        gzipped = self._gzip
        data = gzip.compress(payload, mtime=0) if gzipped else payload
        got = await self.sender.post_batch(self.url, data, gzipped, self._stop, DECIDED)
        if isinstance(got, str):
            return [got] * count
        status = got.status
        if gzipped and status in (400, 415):  # gzip refused (Feast: 400): say so, then plain
            if self._gzip:
                self._say(
                    f"the server at {self.sender.url} refused a gzipped batch (HTTP {status}): "
                    "batches go uncompressed from now on"
                )
            self._gzip = False
            return await self._post_known(bodies)
        if status in NO_BATCHES or (status in NOT_A_BATCH and self.taken is None):
            if self._no_batches is None:
                self._no_batches = status
            self.taken = False
            return [Again.ALONE] * count
        if status == 413:
            if count == 1:
                return [f"the server at {self.url} refused the event as too large (HTTP 413)"]
            half = count // 2
            self._gatherer.max_events = max(1, min(self._gatherer.max_events, half))
            self.taken = True  # it has the endpoint: these are too large for it
            first = await self._post_known(bodies[:half])
            return [*first, *await self._post_known(bodies[half:])]
        if not 200 <= status < 300:
            return [self.sender.describe(got)] * count
        self.taken = True
        self.batches_taken += 1
        read = read_answer(status, got.body, count)
        if read.failed is None:
            if self.sender.keeps_duplicates:
                return [self._unsaid()] * count
            return [Again.RETRY] * count
        outcomes: list[Outcome] = [None] * count
        for failed in read.failed:
            outcomes[failed.index] = (
                Again.RETRY if failed.retriable else f"the server refused it: {failed.reason}"
            )
        return outcomes

    def _unsaid(self) -> str:
        return (
            f"the server at {self.url} said some events of a batch failed, not which; it keeps "
            "every event it is given, so none is sent again blind: the next export asks it what "
            "it holds"
        )

    @property
    def learnt(self) -> bool | None:
        """What to remember for the next export: batches taken (True), none (False: the batch
        endpoint refused and a single event was then taken, or an earlier export learnt it),
        or not known (None: nothing was taken at all, e.g. a wrong address)."""
        if self.taken is False and self._no_batches is not None and not self._alone_said:
            return None
        return self.taken

    def _say(self, message: str) -> None:
        if message not in self.notes:
            self.notes.append(message)
