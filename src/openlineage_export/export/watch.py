"""``export --watch`` as one library call: export what is pending, then follow the trail and
export each run once it ends, until the host's cancel flag is set.

The steps are the export's (``export.py``): open, then the lock and the ledger, held for the
whole watch. Then:

1. *read* the whole trail with a :class:`~.hub.follow.TrailFollower`, which indexes each
   trace id's current record in the on-disk run index (as a scan does) and remembers how far
   it read each segment;
2. *catch up*: classify every run against the ledger and send the pending ones, exactly as an
   export does (``classify``, ``translate``, ``deliver_async``);
3. *follow*: every :data:`LOOK_EVERY` seconds, look at the trail (two ``stat`` calls); read
   only what is new, at most :data:`BATCH` records at a time; index each run record; send
   each record that is final (the run succeeded, failed or was cancelled) and is the last of
   its trace id in what was read. A record of a running run is indexed, not sent: the run is
   sent once it ends (a run sent while running, by the catch-up, is sent again with its end:
   its record changed, as the ledger sees it).

Memory stays bounded however long it runs: the runs are in the run index and the ledger (both
SQLite files), the follower holds two numbers per segment, and one batch at most is in memory.

When the destination cannot be reached (:class:`~.errors.DestinationUnreachable`, after
``openlineage.retry.maxTime`` of retries), the watch does not end: it says so once
(``on_outage``), keeps reading the trail into the index, and tries again after
:data:`OUTAGE_PAUSE` seconds with a catch-up, whose requests retry as any export's do. The
runs not accepted were never recorded: the ledger holds them pending, and the catch-up sends
them. The first catch-up the server answers is said once (``on_back``). While the outage
lasts, its retries are not told to the host one by one.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass

from ..deliver.destination import Destination, Retry
from ..deliver.engine import blocking, deliver_async
from ..errors import DestinationUnreachable, StateError, WorkspaceError
from ..host.workspace import MARKER
from ..hub.follow import Found, TrailFollower
from ..state.index import RunIndex, Winner
from ..translate import modes
from ..translate.encoded import TranslatedRun
from ..translate.names import JobNames
from .classifying import classify
from .opening import Opened, begin, ledger_keys, opened_destination, take_ledger
from .recalling import server_forgot
from .recording import Recorder
from .report import ExportReport, Progress
from .request import ExportRequest
from .scanning import never_run
from .translating import check_names, goes, translate, translated

LOOK_EVERY = 0.25
"""Seconds between two looks at the trail: a run is sent well within a second of its line."""
BATCH = 500
"""Run records read (and sent) at a time: what a watch holds in memory at most."""
OUTAGE_PAUSE = 1.0
"""Seconds between two tries while the destination cannot be reached (each try itself retries
for ``openlineage.retry.maxTime``)."""


@dataclass(frozen=True)
class WatchRequest:
    """What a host hands to :func:`run_watch`: an export's request, and what to tell it."""

    export: ExportRequest
    """The export (``full`` is not for a watch: every run would be sent at every start)."""
    on_following: Callable[[str | None], None] | None = None
    """Called once what was pending is exported, with the segment followed from now on (as
    users see it; None while the trail has none)."""
    on_outage: Callable[[str], None] | None = None
    """Called once when the destination cannot be reached, with why (secrets redacted)."""
    on_back: Callable[[str], None] | None = None
    """Called once when it answers again, with its name."""
    look_every: float = LOOK_EVERY


def run_watch(request: WatchRequest) -> ExportReport:
    """Export what is pending, then each run as it ends, until ``request.export.cancel`` is
    set; returns the report of everything the watch did (``cancelled`` set).

    Raises as :func:`~.export.run_export` does before anything is sent, and
    :class:`~.errors.WorkspaceError` when the workspace is removed while it watches (the
    ledger holds what was accepted until then). Blocking, like ``run_export``.
    """
    return blocking(run_watch_async(request))


async def run_watch_async(request: WatchRequest) -> ExportReport:
    """The watch on the caller's event loop (see :func:`run_watch`)."""
    base = request.export
    gates = _Gates(base.on_progress, base.on_retry)
    begun = begin(base, gates.progress, gates.retry)
    report, cancel, recorder, opened = begun.report, begun.cancel, begun.recorder, begun.opened
    async with contextlib.AsyncExitStack() as stack:
        destination = opened_destination(stack, base, begun)
        if not base.dry_run:
            ledger = take_ledger(stack, base, opened, destination, recorder)
            recorder.use_ledger(ledger, *ledger_keys(opened))
        index = RunIndex()
        stack.callback(index.close)
        follower = TrailFollower(
            opened.trail,
            index,
            recorder.bad_entry,
            workspace_marker=opened.workspace.root / MARKER,
        )
        watch = _Watch(request, opened, destination, recorder, follower, gates, cancel)
        try:
            await watch.run()
            report.runs_total = index.count()
            # A dry run's events are written as they come: stopping is how it ends.
            recorder.finish(cancelled=cancel.is_set() and not base.dry_run)
        except StateError as exc:
            if not recorder.sent_anything:
                recorder.abandon()
                raise
            recorder.state_failure(str(exc), cancelled=cancel.is_set())
        except WorkspaceError:
            recorder.abandon()
            raise
    return report


class _Gates:
    """What reaches the host while the watch follows: the progress of the first export only
    (then each run is told as it is sent), and no retries while an outage was said."""

    def __init__(
        self,
        on_progress: Callable[[Progress], None] | None,
        on_retry: Callable[[Retry], None] | None,
    ) -> None:
        self._on_progress = on_progress
        self._on_retry = on_retry
        self.following = False
        self.outage = False

    def progress(self, progress: Progress) -> None:
        if self._on_progress is not None and not self.following:
            self._on_progress(progress)

    def retry(self, notice: Retry) -> None:
        if self._on_retry is not None and not self.outage:
            self._on_retry(notice)


class _Watch:
    """One watch: the follower, the destination, and whether it is out of reach."""

    def __init__(
        self,
        request: WatchRequest,
        opened: Opened,
        destination: Destination,
        recorder: Recorder,
        follower: TrailFollower,
        gates: _Gates,
        cancel: threading.Event,
    ) -> None:
        self.request = request
        self.opened = opened
        self.destination = destination
        self.recorder = recorder
        self.follower = follower
        self.gates = gates
        self.cancel = cancel
        self.translator = modes.translator_for(opened.translation)(opened.graph, opened.translation)
        self.names = JobNames(())
        self.pipelines: set[str] = set()
        self.outage: str | None = None

    async def run(self) -> None:
        recorder, follower = self.recorder, self.follower
        recorder.reading(0, 0)
        await asyncio.to_thread(self._read_all)
        scan = follower.scan
        recorder.scanned(scan.runs, never_run(self.opened.graph, scan))
        self._check_names()
        await self._catch_up(first=True)
        self.gates.following = True
        if self.request.on_following is not None and not self.cancel.is_set():
            self.request.on_following(follower.following)
        while not self.cancel.is_set():
            if self.outage is not None:
                if await self._pause(OUTAGE_PAUSE):
                    break
                await asyncio.to_thread(self._read_all)  # indexed: the catch-up sends them
                await self._catch_up()
                continue
            if not follower.look():
                if await self._pause(self.request.look_every):
                    break
                continue
            batch = await asyncio.to_thread(lambda: list(follower.read(BATCH)))
            await self._send(_ended(batch))

    def _read_all(self) -> None:
        self.follower.look()
        for _ in self.follower.read():
            pass

    async def _pause(self, seconds: float) -> bool:
        """Wait ``seconds``, or less when cancelled; True when cancelled."""
        return await asyncio.to_thread(self.cancel.wait, seconds)

    def _check_names(self) -> None:
        scan = self.follower.scan
        self.pipelines = scan.pipelines
        self.names = check_names(self.opened, scan, self.recorder)

    async def _catch_up(self, *, first: bool = False) -> None:
        """Send what the ledger holds pending, as an export does (the first time, the server
        is asked whether it forgot runs, as an export asks)."""
        recorder, scan = self.recorder, self.follower.scan
        full = self.request.export.full
        if first:
            full = full or await server_forgot(
                self.destination, recorder, scan, self.opened, self.cancel
            )
        unchanged = recorder.report.runs_unchanged
        plan = classify(
            scan, recorder.ledger, recorder.destination_id, self.opened.fingerprint, full=full
        )
        runs = translate(self.opened, scan, plan, recorder, self.names, keep_unchanged=False)
        try:
            await self._deliver(runs)
        finally:
            _close(runs)
            _close(plan)
        if not first:  # counted once, at the start: the same runs are not "unchanged" again
            recorder.report.runs_unchanged = unchanged

    async def _send(self, found: list[Found]) -> None:
        """Send the runs that ended, in trail order."""
        if not found:
            return
        if any(item.run.pipeline not in self.pipelines for item in found):
            self._check_names()  # a new pipeline: its name may stand for another job's
        await self._deliver(self._translated(found))

    def _translated(self, found: list[Found]) -> Iterator[tuple[TranslatedRun, Winner]]:
        opened, scan, recorder, names = self.opened, self.follower.scan, self.recorder, self.names
        for item in found:
            events = translated(opened, scan, recorder, self.translator, item.run, item.winner)
            if events is not None and goes(
                opened, scan, recorder, names, item.run, events, item.winner
            ):
                yield events, item.winner

    async def _deliver(self, runs: Iterable[tuple[TranslatedRun, Winner]]) -> None:
        """Send; an outage is said once and waited out, never the end of the watch."""
        sent_before = self.recorder.report.events_sent
        try:
            await deliver_async(runs, self.destination, self.recorder.outcome, self.cancel)
        except DestinationUnreachable as exc:
            if self.outage is None:
                self.outage = self.destination.redact(str(exc))
                self.gates.outage = True
                if self.request.on_outage is not None:
                    self.request.on_outage(self.outage)
            return
        if self.outage is None or self.cancel.is_set():
            return
        self.outage = None
        self.gates.outage = False
        if self.recorder.report.events_sent > sent_before and self.request.on_back is not None:
            self.request.on_back(self.destination.name)


def _ended(batch: list[Found]) -> list[Found]:
    """The records to send of what was read: those final, each the last of its trace id in
    the batch (a later record of a run supersedes an earlier one, a running one too)."""
    last: dict[str, Found] = {}
    for item in batch:
        last.pop(item.winner.trace_id, None)
        last[item.winner.trace_id] = item
    return [item for item in last.values() if item.ended]


def _close(iterator: object) -> None:
    """End a generator the delivery may have left half read (it holds a segment open, or
    the ledger attached to the run index)."""
    if isinstance(iterator, Generator):
        iterator.close()
