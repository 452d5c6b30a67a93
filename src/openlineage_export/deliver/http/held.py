"""What the server already holds, asked before sending: send only the rest.

A CI job starts on a fresh machine with an empty ledger, so every push would send the whole
history again; and a server that keeps every event it is given (Feast) holds twice what is
sent twice. Where the server can be asked, its read API tells what it holds of the runs the
trail would send (:class:`~.holdings.Wanted`): for each job the export would send to, pages of
the job's runs (Marquez) or events (Feast), newest first, as the mode's row describes its read
API (``translate/asking.py``: the urls, how an answer reads, what it holds). What is found is
:class:`~.holdings.Holdings`: an editor run the server holds whole is recorded as accepted, not
sent; of one it holds in part (Feast), only the events it lacks are sent.

The first question tells which server it is (``Asking.probe``): each read API the mode names,
in turn (``generic``: Marquez's, then Feast's: a Feast behind ``auto`` is told apart by its
answers, never by its address).

- A server with nothing of the namespace (Marquez's 404, a hidden namespace, Feast's empty
  page): it holds nothing; every run is sent, nothing said.
- An answer that is none of theirs (another server, a proxy's page), or no answer at all (the
  export says so itself as it posts): :data:`None`, nothing said, every run sent.
- A refusal (401, 403), a server error, an answer not understood once the server answered, the
  deadline, a client that fails on a question: :class:`~.recall.CannotAsk` (why, in a few
  words): one line for the user, every run sent.

Nothing the server says sizes what we do (issue 43, attacker B's F03): a job's pages are asked
for one at a time, the next once one came back (its offset is what was read), and end when
every run of the trail of that job is found (whole runs), when the pages are older than the
job's earliest run on the trail (events: newest first), or when the server's pages run out: a
page shorter than asked for, the end of the count it gives (a count only ever ends the asking),
a page of nothing new (the same page again), or more items than the trail could account for
(:data:`ITEMS_PER_RUN` a run of the job: a server that answers every page full of ids never
ours). The first page asks for ``Asking.first_page`` items, each later one as many as fit in
60 % of the page's body bound (``Asking.body_limit``: a page of Feast's events is about 3 MB,
not the 64 KiB of an answer to a POST) by the size of the page before it, and a page cut at
the bound is asked for again, halved. :data:`CONCURRENCY` jobs are read at a time at most, all
within one deadline that the workspace cannot stretch past :data:`DEADLINE_CEILING`; what is
kept is only what the trail's runs need.

Asking goes as in ``recall.py``: the destination's own client (its proxy), no API key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ...translate.asking import MARQUEZ, Asking, PageRead
from .holdings import Holdings, Wanted
from .poster import Answer, BadCertificate, NoAnswer, NoTls, Poster, TransportFailure
from .recall import CannotAsk

__all__ = ["FIRST_PAGE", "Holdings", "Wanted", "deadline_for", "holdings"]

FIRST_PAGE = MARQUEZ.first_page
"""Runs asked for on a job's first page of Marquez's (about 2.5 KB each)."""

CONCURRENCY = 8
"""Jobs read at once, at most (a page each): Marquez builds each page from every run of the
job; Feast answers one request at a time anyway."""

ITEMS_PER_RUN = 8
"""Items (runs or events) a job's pages may list for each of its runs on the trail, at least a
page's worth: more, and the rest of the job's pages are not asked for (what is not found is
sent)."""

DEADLINE_CEILING = 600.0
"""The most seconds one question may take, whatever the settings say (a workspace sets
``openlineage.retry.maxTime`` up to a day)."""

_NO_HEADERS: dict[str, str] = {}
_MS = 1000


def deadline_for(timeout: float, retry_max_time: float, runs: int) -> float:
    """The time all the pages of one question have together: ``openlineage.retry.maxTime`` (at
    least ``openlineage.timeout``), and ``openlineage.timeout`` more for every 500 runs of the
    trail (230 s at the defaults for 10,000 runs: about 2,500 pages), at most
    :data:`DEADLINE_CEILING`."""
    return min(DEADLINE_CEILING, max(timeout, retry_max_time) + timeout * (runs // 500))


async def holdings(
    poster: Poster,
    events_url: str,
    namespace: str,
    wanted: Wanted,
    *,
    deadline: float,
    concurrency: int = CONCURRENCY,
    asking: Sequence[Asking] = (MARQUEZ,),
) -> Holdings | None:
    """The runs of ``wanted`` (by job of ``namespace``) the server holds, as the first read API
    of ``asking`` it answers describes them, or None: it answers none of them (or gave no
    answer at all). :class:`CannotAsk` (why) when it refused, failed, answered what we do not
    understand, or had not answered every page within ``deadline`` seconds, all of them
    together. ``poster`` is started; ``wanted`` is used up."""
    reader = _Reader(poster, events_url, namespace, min(concurrency, CONCURRENCY))
    window = asyncio.timeout(deadline)
    try:
        async with window:
            return await reader.read(asking, wanted)
    except TimeoutError:
        if window.expired():
            raise CannotAsk(
                f"it had not answered within {deadline:g} s ({reader.pages} pages read)"
            ) from None
        raise CannotAsk("a page was not answered within openlineage.timeout") from None
    except CannotAsk:
        raise
    except (NoAnswer, BadCertificate, NoTls, TransportFailure):
        return None  # no answer: the export itself will say so, as it posts
    except Exception as exc:  # a host's client (or its stand-in) that cannot GET
        detail = " ".join(str(exc).split())[:200]
        raise CannotAsk(f"{type(exc).__name__}{': ' + detail if detail else ''}") from None


class _TooBig(Exception):
    """A page came back cut at its body bound: ask for fewer items."""


class _Reader:
    """One question: which server, then each job's items, page after page."""

    def __init__(self, poster: Poster, events_url: str, namespace: str, concurrency: int) -> None:
        self.poster = poster
        self.events_url = events_url
        self.namespace = namespace
        self.concurrency = max(1, concurrency)
        self.asking = MARQUEZ
        self.base = ""
        self.held = Holdings()
        self.pages = 0

    async def read(self, askings: Sequence[Asking], wanted: Wanted) -> Holdings | None:
        there = await self._which(askings)
        if there is None:
            return None
        jobs = wanted.jobs()
        if there and jobs:
            queue = iter(jobs)  # shared: each worker takes the next job not taken yet

            async def worker() -> None:
                for job in queue:
                    await self._job(job, wanted.of(job), wanted.since(job))

            try:
                async with asyncio.TaskGroup() as group:
                    for _ in range(min(self.concurrency, len(jobs))):
                        group.create_task(worker())
            except ExceptionGroup as failed:
                raise _telling(failed) from None
        return self.held

    async def _which(self, askings: Sequence[Asking]) -> bool | None:
        """The first read API the server answers as its own (kept as ``asking``): whether the
        namespace is there to read; None: none of them."""
        for asking in askings:
            base = asking.base(self.events_url)
            if base is None:
                continue
            answer = await self.poster.get(asking.probe_url(base, self.namespace), _NO_HEADERS)
            self.pages += 1
            said = asking.probe(answer.status, answer.body)
            if said == "other":
                continue
            if said == "refused":
                raise CannotAsk(f"it answered HTTP {answer.status}")
            self.asking, self.base, self.held = asking, base, Holdings(asking)
            return said == "there"
        return None

    async def _job(self, job: str, wanted: set[int], since: int | None) -> None:
        """The pages of one job's items, each asked for once the one before it came back,
        until the trail's runs of the job are all found or passed, or the pages run out."""
        asking = self.asking
        whole_runs = asking.holds == "runs"
        offset, limit = 0, asking.first_page
        budget = max(asking.most_per_page, ITEMS_PER_RUN * len(wanted))
        ours = set(wanted)
        before: set[tuple[int, str, int | None]] = set()
        while wanted or not whole_runs:
            url = asking.page_url(self.base, self.namespace, job, offset, limit)
            try:
                page = self._page(url, await self._get(url))
            except _TooBig:
                if limit == 1:
                    raise CannotAsk(
                        f"one item of job {job!r} is larger than the "
                        f"{asking.body_limit // 1024} KiB a page of it may be"
                    ) from None
                limit //= 2
                continue
            if page is None:
                return
            on_page: set[tuple[int, str, int | None]] = set()
            oldest: int | None = None
            try:
                for raw in page[0].items:
                    item = asking.item(raw)
                    on_page.add((item.run, item.kind, item.time))
                    if item.time is not None:
                        oldest = item.time if oldest is None else min(oldest, item.time)
                    if item.run in ours:
                        wanted.discard(item.run)
                        self.held.add_item(item)
            except ValueError:
                raise CannotAsk(f"its answer to {url} has an item we cannot read") from None
            read, total = len(page[0].items), page[0].total
            offset += read
            # Newest first: a page of events older than the job's earliest run on the trail
            # (within the server's ms) is followed by no event of ours.
            passed = (
                not whole_runs and since is not None and oldest is not None and oldest < since - _MS
            )
            if (
                read < limit
                or (total is not None and offset >= total)
                or on_page <= before
                or offset >= budget
                or passed
            ):
                return  # the last page, the same one again, or past the trail's runs
            before = on_page
            room = int(asking.body_limit * 0.6 * read / max(1, page[1]))
            limit = max(1, min(asking.most_per_page, room))

    async def _get(self, url: str) -> Answer:
        try:
            return await self.poster.get(url, _NO_HEADERS, limit=self.asking.body_limit)
        finally:
            self.pages += 1

    def _page(self, url: str, answer: Answer) -> tuple[PageRead, int] | None:
        if answer.status == 200 and len(answer.body) >= self.asking.body_limit:
            raise _TooBig
        try:
            page = self.asking.page(answer.status, answer.body)
        except ValueError as exc:
            if answer.status != 200:
                raise CannotAsk(f"it answered HTTP {answer.status} to {url}") from None
            raise CannotAsk(f"its answer to {url} is not a page ({exc})") from None
        return None if page is None else (page, len(answer.body))


def _telling(failed: BaseExceptionGroup[Exception]) -> Exception:
    """The one failure of a group of page requests to tell: a reason we can say first."""
    leaves: list[Exception] = []
    pending: list[BaseException] = [failed]
    while pending:
        exc = pending.pop()
        if isinstance(exc, BaseExceptionGroup):
            pending.extend(exc.exceptions)
        elif isinstance(exc, Exception):
            leaves.append(exc)
    for kind in (CannotAsk, NoAnswer, BadCertificate, NoTls, TransportFailure):
        for exc in leaves:
            if isinstance(exc, kind):
                return exc
    return leaves[0] if leaves else CannotAsk("its answers could not be read")
