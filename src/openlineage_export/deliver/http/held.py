"""What the server already holds, asked before a first export: send only the rest.

A CI job starts on a fresh machine with an empty ledger, so every push would send the whole
history again. Where the ledger holds no accepted run for this workspace and destination, and
the server is Marquez, its read API tells what it holds: for each job the export would send
to (the pipelines and stages of the trail), ``GET /api/v1/namespaces/{namespace}/jobs/{job}/runs
?limit=N&offset=M`` pages its runs, each with its ``id``, ``state`` and ``endedAt``. An editor run
whose every run (the pipeline run and each stage run) is there, in the state and with the end
time its events would leave, is *held*: recorded in the ledger as accepted, not sent. A run
changed on the trail since (running, now completed) is not held: it is sent.

Why these requests: a job's own payload (``GET .../jobs``) carries its ten latest runs, whole
(each run with its facets and dataset versions, about 2.5 KB), so a page of jobs holds two or
three of them within the body limit: no fewer requests than the runs' own pages, which carry
only the runs of the jobs we send to. Marquez sets no upper bound on ``limit``; the body limit
(:data:`~.poster.BODY_LIMIT`, as for every answer) does: the first page of a job asks for
:data:`FIRST_PAGE` runs, each later one for as many as fit in 60 % of the limit by the size of
the page before it, and a page that comes back cut at the limit is asked for again, halved.

Nothing the server says sizes what we do (issue 43): a job's pages are asked for one at a
time, the next once one came back (its offset is what was read), until every run of the trail
of that job is found (:class:`Wanted`, what the trail would send), or the server's pages run
out: a page shorter than asked for, the end of the count it gives (a count only ever ends the
asking, never extends it), or a page of nothing new (the same page again). :data:`CONCURRENCY`
jobs are read at a time at most (fewer when ``openlineage.concurrency`` is lower), all within
one deadline; what is kept is a run id and one integer (its state and end time) per run of
the trail found, never an event, nor any other run the server has.

Asking goes as in ``recall.py``: the destination's own client (its proxy, its body limit),
no API key. The namespace is asked for first (``GET /api/v1/namespaces/{namespace}``):

- Marquez's 404 (``{"code": 404, "message": ...}``), or a hidden namespace: it holds nothing;
  every run is sent, nothing said.
- An answer that is not Marquez's (another server, a proxy's page), or no answer at all (the
  export says so itself as it posts): :data:`None`, nothing said, every run sent.
- A refusal (401, 403), a server error, an answer not understood once Marquez has answered,
  the deadline, a client that fails on a question: :class:`~.recall.CannotAsk` (why, in a few
  words): one line for the user, every run sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import quote

import orjson

from ...hub.times import parse_time
from ...translate.encoded import EventFacts
from .poster import BODY_LIMIT, Answer, BadCertificate, NoAnswer, NoTls, Poster, TransportFailure
from .recall import CannotAsk, marquez_api

FIRST_PAGE = 20
"""Runs asked for on a job's first page (about 2.5 KB each, as Marquez writes a stage run)."""

MOST_PER_PAGE = 1000
"""Runs asked for on one page at most, however small they are."""

CONCURRENCY = 8
"""Jobs read at once, at most (a page each): Marquez builds each page from every run of the
job."""

STATES = {"RUNNING": 1, "COMPLETED": 2, "ABORTED": 3, "FAILED": 4}
"""Marquez's run states we compare (its ``RunState``); any other is held by no event of ours."""

EVENT_STATES = {"START": 1, "RUNNING": 1, "COMPLETE": 2, "ABORT": 3, "FAIL": 4}
"""The state Marquez gives a run whose last event has this type (``RunState.forType``)."""

_DONE = frozenset({2, 3, 4})
"""The states that set a run's ``endedAt`` (``RunState.isDone``)."""

_EPOCH = datetime(1, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
_NO_HEADERS: dict[str, str] = {}


def deadline_for(timeout: float, retry_max_time: float, runs: int) -> float:
    """The time all the pages of one question have together: ``openlineage.retry.maxTime`` (at
    least ``openlineage.timeout``), and ``openlineage.timeout`` more for every 500 runs of the
    trail (230 s at the defaults for 10,000 runs: about 2,500 pages)."""
    return max(timeout, retry_max_time) + timeout * (runs // 500)


class Wanted:
    """The runs the trail would send, by job: what the server is asked about (each run id as
    an integer, about 100 bytes a run). Asking takes each job's runs out as it finds them."""

    __slots__ = ("_jobs",)

    def __init__(self) -> None:
        self._jobs: dict[str, set[int]] = {}

    def add(self, job: str, run_id: str) -> None:
        """A run of ``job`` the trail would send (an id that is no UUID: no server holds it)."""
        try:
            key = _uuid(run_id)
        except ValueError:
            return
        self._jobs.setdefault(job, set()).add(key)

    def jobs(self) -> list[str]:
        """The jobs with a run to look for, by name."""
        return sorted(job for job, runs in self._jobs.items() if runs)

    def of(self, job: str) -> set[int]:
        """The runs of ``job`` still to find (asking takes them out)."""
        return self._jobs.get(job, set())


class Holdings:
    """The runs of the trail the server holds: per run id (as an integer), one integer of its
    state and end time (about 150 bytes a run, 14 MB for the 90,000 runs of 10,000 editor
    runs). Only runs the trail would send are kept, whatever else the server has."""

    __slots__ = ("_runs",)

    def __init__(self) -> None:
        self._runs: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._runs)

    def add(self, run_id: str | int, state: str, ended_at: str | None) -> None:
        """A run as the server describes it, its id as text or an integer (``ValueError``: a
        field we cannot read)."""
        key = run_id if isinstance(run_id, int) else _uuid(run_id)
        self._runs[key] = _packed(STATES.get(state, 0), _micros(ended_at))

    def holds(self, events: Iterable[EventFacts]) -> bool:
        """Whether every run of these events (one editor run's, in order) is on the server in
        the state and with the end time the last of its events would leave."""
        last: dict[str, tuple[str, str]] = {}
        for event in events:
            last[event.run_id] = (event.event_type, event.event_time)
        if not last:
            return False
        for run_id, (event_type, event_time) in last.items():
            state = EVENT_STATES.get(event_type, 0)
            try:
                key = _uuid(run_id)
                end = _micros(event_time) if state in _DONE else None
            except ValueError:
                return False
            held = self._runs.get(key)
            if held is None or state == 0 or not _same(held, _packed(state, end)):
                return False
        return True


def _uuid(run_id: str) -> int:
    if len(run_id) != 36:
        raise ValueError(run_id)
    return int(run_id.replace("-", ""), 16)


def _micros(moment: str | None) -> int | None:
    """An RFC 3339 time as microseconds since year 1 (None stays None)."""
    if moment is None:
        return None
    return (parse_time(moment) - _EPOCH) // _MICRO


def _packed(state: int, end: int | None) -> int:
    return state if end is None else ((end + 1) << 3) | state


def _same(held: int, ours: int) -> bool:
    """The same state and end time; the times within a microsecond (PostgreSQL keeps
    microseconds, rounded; a time of ours with more digits is cut to six)."""
    if held & 7 != ours & 7 or (held >> 3 == 0) != (ours >> 3 == 0):
        return False
    return abs((held >> 3) - (ours >> 3)) <= 1


async def holdings(
    poster: Poster,
    events_url: str,
    namespace: str,
    wanted: Wanted,
    *,
    deadline: float,
    concurrency: int = CONCURRENCY,
) -> Holdings | None:
    """The runs of ``wanted`` (by job of ``namespace``) the server holds, or None: it is no
    Marquez (or gave no answer at all). :class:`CannotAsk` (why) when it refused, failed,
    answered what we do not understand, or had not answered every page within ``deadline``
    seconds, all of them together. ``poster`` is started; ``wanted`` is used up."""
    base = marquez_api(events_url)
    if base is None:
        return None
    reader = _Reader(_MarquezRuns(poster, base, namespace), min(concurrency, CONCURRENCY))
    window = asyncio.timeout(deadline)
    try:
        async with window:
            return await reader.read(wanted)
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


class _NotMarquez(Exception):
    """The first answer is not Marquez's: nothing to say."""


class _TooBig(Exception):
    """A page came back cut at the body limit: ask for fewer runs."""


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a job's runs, as a server gave it."""

    url: str
    runs: list[Any]
    """Each run as the server wrote it (read by :meth:`RunPages.run`)."""
    total: int
    """How many runs the server says the job has: only ever a reason to stop asking."""
    size: int
    """The answer's size in bytes (what sizes the next page)."""


class RunPages(Protocol):
    """How one kind of server is read: its namespace, then pages of a job's runs (the paging
    itself, the same for every server, is :class:`_Reader`'s)."""

    async def namespace(self) -> bool:
        """Whether the namespace is there to read; ``_NotMarquez``: no server of this kind."""
        ...

    async def page(self, job: str, offset: int, limit: int) -> Page | None:
        """Up to ``limit`` runs of ``job`` from ``offset`` on (newest first); None: the server
        has no such job. ``_TooBig``: the answer was cut at the body limit."""
        ...

    def run(self, run: Any) -> tuple[int, str, str | None]:
        """A run of a page: its id (as an integer), state and end time (``ValueError``: one
        we cannot read)."""
        ...


class _Reader:
    """One question: the namespace, then each job's runs, page after page."""

    def __init__(self, source: RunPages, concurrency: int) -> None:
        self.source = source
        self.concurrency = max(1, concurrency)
        self.held = Holdings()
        self.pages = 0

    async def read(self, wanted: Wanted) -> Holdings | None:
        try:
            there = await self.source.namespace()
        except _NotMarquez:
            return None
        self.pages += 1
        jobs = wanted.jobs()
        if there and jobs:
            queue = iter(jobs)  # shared: each worker takes the next job not taken yet

            async def worker() -> None:
                for job in queue:
                    await self._job(job, wanted.of(job))

            try:
                async with asyncio.TaskGroup() as group:
                    for _ in range(min(self.concurrency, len(jobs))):
                        group.create_task(worker())
            except ExceptionGroup as failed:
                raise _telling(failed) from None
        return self.held

    async def _job(self, job: str, wanted: set[int]) -> None:
        """The pages of one job's runs, each asked for once the one before it came back, until
        every run of ``wanted`` is found or the server's pages run out."""
        offset, limit = 0, FIRST_PAGE
        before: set[int] = set()
        while wanted:
            try:
                page = await self.source.page(job, offset, limit)
            except _TooBig:
                if limit == 1:
                    raise CannotAsk(
                        f"one run of job {job!r} is larger than the {BODY_LIMIT // 1024} KiB "
                        "an answer may be"
                    ) from None
                limit //= 2
                continue
            finally:
                self.pages += 1
            if page is None:
                return
            on_page: set[int] = set()
            try:
                for run in page.runs:
                    key, state, ended_at = self.source.run(run)
                    on_page.add(key)
                    if key in wanted:
                        wanted.discard(key)
                        self.held.add(key, state, ended_at)
            except ValueError:
                raise CannotAsk(f"its answer to {page.url} has a run we cannot read") from None
            read = len(page.runs)
            if read < limit or offset + read >= page.total or on_page <= before:
                return  # the last page, or the same one again
            offset += read
            before = on_page
            limit = max(1, min(MOST_PER_PAGE, int(BODY_LIMIT * 0.6 * read / max(1, page.size))))


class _MarquezRuns:
    """Marquez's read API (``api/src/main/java/marquez/api/JobResource.java``)."""

    def __init__(self, poster: Poster, base: str, namespace: str) -> None:
        self.poster = poster
        self.base = f"{base}/namespaces/{quote(namespace, safe='')}"

    async def namespace(self) -> bool:
        """Whether the namespace is there to read (False: Marquez has none, or hid it)."""
        answer = await self.poster.get(self.base, _NO_HEADERS)
        body = _json(answer)
        if answer.status == 200 and isinstance(body, dict) and "name" in body:
            return body.get("isHidden") is not True
        if _marquez_404(answer, body):
            return False
        if answer.status in (401, 403) or answer.status == 429 or answer.status >= 500:
            raise CannotAsk(f"it answered HTTP {answer.status}")
        raise _NotMarquez

    async def page(self, job: str, offset: int, limit: int) -> Page | None:
        """A page of a job's runs, the latest started first (``ORDER BY started_at DESC``)."""
        url = f"{self.base}/jobs/{quote(job, safe='')}/runs?limit={limit}&offset={offset}"
        answer = await self.poster.get(url, _NO_HEADERS)
        if answer.status == 200 and len(answer.body) >= BODY_LIMIT:
            raise _TooBig
        body = _json(answer)
        if _marquez_404(answer, body):
            return None
        if answer.status != 200:
            raise CannotAsk(f"it answered HTTP {answer.status} to {url}")
        runs = body.get("runs") if isinstance(body, dict) else None
        total = body.get("totalCount") if isinstance(body, dict) else None
        if not isinstance(runs, list) or type(total) is not int:
            raise CannotAsk(f"its answer to {url} is not a page of runs")
        return Page(url, runs, total, len(answer.body))

    def run(self, run: Any) -> tuple[int, str, str | None]:
        """A run's ``id``, ``state`` and ``endedAt``."""
        got = run if isinstance(run, dict) else {}
        run_id, state, ended_at = got.get("id"), got.get("state"), got.get("endedAt")
        if isinstance(run_id, str) and isinstance(state, str) and isinstance(ended_at, str | None):
            return _uuid(run_id), state, ended_at
        raise ValueError("not a run")


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


def _marquez_404(answer: Answer, body: object) -> bool:
    return (
        answer.status == 404
        and isinstance(body, dict)
        and body.get("code") == 404
        and "message" in body
    )


def _json(answer: Answer) -> object:
    try:
        return orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        return None
