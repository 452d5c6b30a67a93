"""What the trail asks a server about, and what the server was found to hold of it.

:class:`Wanted` is the runs the trail would send, by job (what ``held.py`` pages for);
:class:`Holdings` is what the pages said of them, as the server holds it
(``translate/asking.py``): whole runs (Marquez), or each event apart (Feast). One question for
both: :meth:`Holdings.missing`, the events of an editor run the server lacks.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...translate.asking import MARQUEZ, Asking, Item, micros, uuid_int
from ...translate.encoded import EventFacts

STATES = {"RUNNING": 1, "COMPLETED": 2, "ABORTED": 3, "FAILED": 4}
"""Marquez's run states we compare (its ``RunState``); any other is held by no event of ours."""

EVENT_STATES = {"START": 1, "RUNNING": 1, "COMPLETE": 2, "ABORT": 3, "FAIL": 4}
"""The state Marquez gives a run whose last event has this type (``RunState.forType``)."""

_DONE = frozenset({2, 3, 4})
"""The states that set a run's ``endedAt`` (``RunState.isDone``)."""

_MS = 1000
"""Microseconds in a millisecond: Feast keeps an event's time in ms."""


class Wanted:
    """The runs the trail would send, by job: what the server is asked about (each run id as
    an integer, about 100 bytes a run), and each job's earliest start (a page of events older
    than it holds none of ours). Asking whole runs takes each job's runs out as it finds them."""

    __slots__ = ("_jobs", "_since")

    def __init__(self) -> None:
        self._jobs: dict[str, set[int]] = {}
        self._since: dict[str, int] = {}

    def add(self, job: str, run_id: str, started: str | None = None) -> None:
        """A run of ``job`` the trail would send, started at ``started`` (an id that is no
        UUID: no server holds it)."""
        try:
            key = uuid_int(run_id)
            since = None if started is None else micros(started)
        except ValueError:
            return
        self._jobs.setdefault(job, set()).add(key)
        if since is not None:
            self._since[job] = min(since, self._since.get(job, since))

    def jobs(self) -> list[str]:
        """The jobs with a run to look for, by name."""
        return sorted(job for job, runs in self._jobs.items() if runs)

    def of(self, job: str) -> set[int]:
        """The runs of ``job`` still to find (asking whole runs takes them out)."""
        return self._jobs.get(job, set())

    def since(self, job: str) -> int | None:
        """The earliest start of ``job``'s runs (microseconds since year 1), if known."""
        return self._since.get(job)


class Holdings:
    """What the server holds of the trail's runs, as its read API (``asking``) describes it.

    Whole runs: per run id (as an integer), one integer of its state and end time (about 150
    bytes a run). Events: per (run id, event type), the times (ms) of the events held. Only
    runs the trail would send are kept, whatever else the server has."""

    __slots__ = ("_events", "_runs", "asking")

    def __init__(self, asking: Asking = MARQUEZ) -> None:
        self.asking = asking
        self._runs: dict[int, int] = {}
        self._events: dict[tuple[int, str], list[int]] = {}

    def __len__(self) -> int:
        return len(self._runs) + len(self._events)

    @property
    def keeps_duplicates(self) -> bool:
        """Whether the server holds an event sent twice twice (never re-send what it holds)."""
        return self.asking.keeps_duplicates

    def add(self, run_id: str | int, state: str, ended_at: str | None) -> None:
        """A whole run as the server describes it, its id as text or an integer
        (``ValueError``: a field we cannot read)."""
        key = run_id if isinstance(run_id, int) else uuid_int(run_id)
        end = None if ended_at is None else micros(ended_at)
        self._runs[key] = _packed(STATES.get(state, 0), end)

    def add_item(self, item: Item) -> None:
        """One item of a page, as the asking read it."""
        if self.asking.holds == "runs":
            self._runs[item.run] = _packed(STATES.get(item.kind, 0), item.time)
        elif item.time is not None:
            self._events.setdefault((item.run, item.kind), []).append(item.time // _MS)

    def holds(self, events: Sequence[EventFacts]) -> bool:
        """Whether the server holds every one of these events (one editor run's, in order)."""
        return bool(events) and not self.missing(events)

    def missing(self, events: Sequence[EventFacts]) -> list[int]:
        """The indexes of ``events`` (one editor run's, in order) the server lacks: all or
        none where it holds whole runs, each event apart where it holds events."""
        if self.asking.holds == "events":
            return [i for i, event in enumerate(events) if not self._has_event(event)]
        return [] if events and self._has_runs(events) else list(range(len(events)))

    def _has_event(self, event: EventFacts) -> bool:
        try:
            key = (uuid_int(event.run_id), event.event_type)
            when = micros(event.event_time) // _MS
        except ValueError:
            return False
        # Within a millisecond: the server writes the time it parsed as ms, rounded its way.
        return any(abs(held - when) <= 1 for held in self._events.get(key, ()))

    def _has_runs(self, events: Sequence[EventFacts]) -> bool:
        """Whether every run of these events is on the server in the state and with the end
        time the last of its events would leave."""
        last: dict[str, tuple[str, str]] = {}
        for event in events:
            last[event.run_id] = (event.event_type, event.event_time)
        for run_id, (event_type, event_time) in last.items():
            state = EVENT_STATES.get(event_type, 0)
            try:
                key = uuid_int(run_id)
                end = micros(event_time) if state in _DONE else None
            except ValueError:
                return False
            held = self._runs.get(key)
            if held is None or state == 0 or not _same(held, _packed(state, end)):
                return False
        return True


def _packed(state: int, end: int | None) -> int:
    return state if end is None else ((end + 1) << 3) | state


def _same(held: int, ours: int) -> bool:
    """The same state and end time; the times within a microsecond (PostgreSQL keeps
    microseconds, rounded; a time of ours with more digits is cut to six)."""
    if held & 7 != ours & 7 or (held >> 3 == 0) != (ours >> 3 == 0):
        return False
    return abs((held >> 3) - (ours >> 3)) <= 1
