"""Causal order: which earlier events an event must wait for before it is sent.

Marquez files a read under the dataset version that is current *when it processes the read*,
so two events that touch the same dataset, one of them writing it, must reach the server in the
order of the trail, or a read is filed under the wrong version. A read of a dataset that has no
version yet makes one (named after that first reader), so the first event of the export to
touch a dataset counts as writing it. Events that share no dataset, or only read the same ones,
go in parallel.

Runs are admitted in the order of the trail. Cut into *legs* (a leg starts at each event that
reads or writes a dataset), a run of the pipeline that ran next starts its first stage as soon
as the earlier run's events that touch the same datasets are accepted, not when the whole
earlier run is: a trail is mostly the same few pipelines again and again, and waiting run by
run would send each pipeline's runs one at a time. A run's own events are in order anyway, so
a leg waits only for other runs' legs.
Besides the names of the datasets seen (at most :data:`SEEN_AT_MOST`: a trail that writes a
new partition each run names as many as it has runs), the bookkeeping holds only legs still in
flight, so it stays as small as the engine's window.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from ..translate.encoded import Dataset, EventFacts, TranslatedRun

SEEN_AT_MOST = 65_536
"""Datasets remembered as seen, at most; then they are forgotten, and the next read of one
counts as its first version again (it waits as a write does: more waiting, never less)."""


class Ticket:
    """One admitted leg: what it must wait for, and a signal for those that wait for it."""

    __slots__ = ("after", "done", "reads", "writes")

    def __init__(self, after: list[Ticket]) -> None:
        self.reads: set[Dataset] = set()
        self.writes: set[Dataset] = set()
        self.after = after
        """The earlier legs (of other runs) this one must wait for."""
        self.done = asyncio.Event()


@dataclass(frozen=True, slots=True)
class Leg:
    """The events ``start:end`` of a run, sent once ``ticket`` is ready."""

    start: int
    end: int
    ticket: Ticket


class Ordering(Protocol):
    """What the engine asks of the order between runs (:class:`CausalOrder`, the one an export
    keeps; another is handed in only to measure what it costs, in bench/)."""

    def legs(self, run: TranslatedRun, *, split: bool = True) -> list[Leg]:
        """The next run on the trail, in legs, each with the ticket it waits on."""
        ...

    def finish(self, ticket: Ticket) -> None:
        """The leg of ``ticket`` is done (or will never be sent): those waiting for it may go."""
        ...


class CausalOrder:
    """Admits runs in trail order; an event waits for each earlier event still in flight that
    writes a dataset it reads or writes, or reads a dataset it writes."""

    def __init__(self) -> None:
        self._writer: dict[Dataset, Ticket] = {}
        self._readers: dict[Dataset, set[Ticket]] = {}
        self._seen: set[Dataset] = set()

    def admit(self, run: TranslatedRun) -> Ticket:
        """The ticket of the next run on the trail, whole (one leg)."""
        return self.legs(run, split=False)[0].ticket

    def legs(self, run: TranslatedRun, *, split: bool = True) -> list[Leg]:
        """The next run on the trail, in legs: one per event that touches a dataset (with the
        events after it that touch none), or the whole run as one leg unless ``split``.

        An event that touches the very datasets the event before it touched (a stage's end
        after its start) stays in that event's leg: everything it could wait for, that one
        waited for, and later runs wait for the run's last event on a dataset either way."""
        # Sets, not lists: a run of S stages has S legs, and a dataset may have as many
        # readers; a scan of them per event made one run cost S * S (issue 43).
        own: set[Ticket] = set()
        legs: list[Leg] = []
        ticket = Ticket([])
        waits: set[Ticket] = set()  # ticket.after, for look-ups
        start = 0
        last: tuple[set[Dataset], set[Dataset]] | None = None
        for index, event in enumerate(run.facts):
            reads, writes = touched = _touches(event)
            if not reads and not writes:
                continue
            same = touched == last
            last = (set(reads), set(writes))
            if len(self._seen) >= SEEN_AT_MOST:
                self._seen.clear()
            first = reads - self._seen
            if first:  # the first read of a dataset makes its first version: a write, in effect
                writes |= first
                self._seen.update(first)
            self._seen.update(writes)
            after = self._conflicts(reads, writes, own)
            if split and index > start and not same:
                legs.append(Leg(start, index, ticket))
                ticket = Ticket([])
                waits = set()
                start = index
            own.add(ticket)
            for earlier in after:
                if earlier not in waits:
                    waits.add(earlier)
                    ticket.after.append(earlier)
            self._register(ticket, reads, writes)
        legs.append(Leg(start, len(run), ticket))
        return legs

    def _conflicts(
        self, reads: set[Dataset], writes: set[Dataset], own: set[Ticket]
    ) -> dict[Ticket, None]:
        after: dict[Ticket, None] = {}  # in the order found, each once
        for dataset in reads | writes:
            writer = self._writer.get(dataset)
            if writer is not None and writer not in own:
                after[writer] = None
        for dataset in writes:
            for reader in self._readers.get(dataset, ()):
                if reader not in own:
                    after[reader] = None
        return after

    def _register(self, ticket: Ticket, reads: set[Dataset], writes: set[Dataset]) -> None:
        ticket.reads |= reads - writes
        ticket.writes |= writes
        for dataset in reads - writes:
            if self._writer.get(dataset) is not ticket:
                self._readers.setdefault(dataset, set()).add(ticket)
        for dataset in writes:
            self._writer[dataset] = ticket
            self._readers.pop(dataset, None)

    def finish(self, ticket: Ticket) -> None:
        """The leg is done (or will never be sent): those waiting for it may go, and it is
        forgotten. Finishing a leg twice is harmless."""
        for dataset in ticket.writes:
            if self._writer.get(dataset) is ticket:
                del self._writer[dataset]
        for dataset in ticket.reads:
            readers = self._readers.get(dataset)
            if readers is not None:
                readers.discard(ticket)
                if not readers:
                    del self._readers[dataset]
        # What it waited for is of no more use, and kept it alive: each leg holding the one
        # before it, a long export held every leg it ever sent (475 MB at a million runs).
        ticket.after.clear()
        ticket.done.set()

    def __len__(self) -> int:
        """How many datasets are being tracked (for tests: it drains to 0)."""
        return len(self._writer) + len(self._readers)


def datasets(run: TranslatedRun) -> tuple[frozenset[Dataset], frozenset[Dataset]]:
    """The datasets the run's events read and write."""
    reads: set[Dataset] = set()
    writes: set[Dataset] = set()
    for event in run.facts:
        event_reads, event_writes = _touches(event)
        reads |= event_reads
        writes |= event_writes
    return frozenset(reads), frozenset(writes)


def _touches(event: EventFacts) -> tuple[set[Dataset], set[Dataset]]:
    return set(event.inputs), set(event.outputs)
