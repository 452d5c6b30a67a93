"""Causal order: which earlier runs a run must wait for before it is sent.

Marquez files a read under the dataset version that is current *when it processes the read*,
so two runs that touch the same dataset, one of them writing it, must reach the server in the
order of the trail, or a read is filed under the wrong version. A read of a dataset that has no
version yet makes one (named after that first reader), so the first run of the export to touch
a dataset counts as writing it. Runs that share no dataset, or only read the same ones, go in
parallel. Every run is admitted in the order of the trail; besides the names of the datasets
seen (as many as the graph has, whatever the number of runs), the bookkeeping holds only runs
still in flight, so it stays as small as the engine's window.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from ..translate.events import TranslatedRun

Dataset = tuple[str, str]
"""A dataset's (namespace, name), as the events name it."""


class Ticket:
    """One admitted run: what it must wait for, and a signal for those that wait for it."""

    __slots__ = ("after", "done", "reads", "writes")

    def __init__(self, reads: frozenset[Dataset], writes: frozenset[Dataset],
                 after: list[Ticket]) -> None:
        self.reads = reads
        self.writes = writes
        self.after = after
        """The earlier runs this one must wait for."""
        self.done = asyncio.Event()

    async def ready(self) -> None:
        """Wait until every earlier conflicting run is done (accepted, refused or dropped)."""
        for earlier in self.after:
            await earlier.done.wait()


class CausalOrder:
    """Admits runs in trail order; a run waits for each earlier run still in flight that
    writes a dataset it reads or writes, or reads a dataset it writes."""

    def __init__(self) -> None:
        self._writer: dict[Dataset, Ticket] = {}
        self._readers: dict[Dataset, set[Ticket]] = {}
        self._seen: set[Dataset] = set()

    def admit(self, run: TranslatedRun) -> Ticket:
        """The ticket of the next run on the trail."""
        reads, writes = datasets(run)
        first = reads - self._seen
        if first:  # the first read of a dataset makes its first version: a write, in effect
            writes = writes | first
            self._seen.update(first)
        self._seen.update(writes)
        after: set[Ticket] = set()
        for dataset in reads | writes:
            writer = self._writer.get(dataset)
            if writer is not None:
                after.add(writer)
        for dataset in writes:
            after.update(self._readers.get(dataset, ()))
        ticket = Ticket(reads, writes, list(after))
        for dataset in reads - writes:
            self._readers.setdefault(dataset, set()).add(ticket)
        for dataset in writes:
            self._writer[dataset] = ticket
            self._readers.pop(dataset, None)
        return ticket

    def finish(self, ticket: Ticket) -> None:
        """The run is done: those waiting for it may go, and it is forgotten."""
        for dataset in ticket.writes:
            if self._writer.get(dataset) is ticket:
                del self._writer[dataset]
        for dataset in ticket.reads:
            readers = self._readers.get(dataset)
            if readers is not None:
                readers.discard(ticket)
                if not readers:
                    del self._readers[dataset]
        ticket.done.set()

    def __len__(self) -> int:
        """How many datasets are being tracked (for tests: it drains to 0)."""
        return len(self._writer) + len(self._readers)


def datasets(run: TranslatedRun) -> tuple[frozenset[Dataset], frozenset[Dataset]]:
    """The datasets the run's events read and write."""
    return (frozenset(_named(e.get("inputs") for e in run.events)),
            frozenset(_named(e.get("outputs") for e in run.events)))


def _named(groups: Iterable[object]) -> Iterable[Dataset]:
    for group in groups:
        if isinstance(group, list):
            for dataset in group:
                yield dataset["namespace"], dataset["name"]
