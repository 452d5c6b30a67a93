"""The delivery engine: editor runs in, outcomes out, on one asyncio event loop.

One coroutine per editor run in flight sends its events strictly in order (a START accepted
before the run's end, the pipeline's START before its stages'); at most
``destination.concurrency`` runs are sending at once, and an event waits for every earlier
run's event that touches a dataset it writes or writes one it reads (``order.py``: a run is
sent in legs, each leg once those it waits for are done), so the server files every read under
the version a one-at-a-time export gives. Runs are pulled from the translating generator only
as room frees up: at most twice the concurrency are translated and waiting. A destination
that takes runs whole (``event_legs`` false: Kafka, files), or a concurrency of 1, makes each
run one leg, waiting for every earlier run it shares a dataset with.

A destination whose ``send`` never waits (:class:`~.destination.NeverWaits`: a file, the dry
run's stream) is handed the runs one after the other, without a task each. One that files
events in the order its sends start (:class:`~.destination.KeepsSendOrder`: Kafka) needs no
causal order from the engine: each run is one leg that waits for nothing, its send started in
trail order.

A cancel (the host's ``threading.Event``) stops new runs and new events at once; requests
still in flight get :data:`CANCEL_GRACE` seconds to be answered, then they are abandoned, so
the export returns within about a second. Abandoned and cut-short runs are reported as not
delivered (they stay pending in the ledger).

No error is lost: a send that raises anything but our own errors (a bug, a library's
``OverflowError``) is that run's failure, with the error as its reason (:func:`crash_reason`),
counted as any refused run is; no task is left with an exception nobody retrieves.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, Generic, TypeVar

from ..errors import ExportError
from ..translate.encoded import TranslatedRun
from .destination import Destination, KeepsSendOrder, NeverWaits, RunOutcome, Tally
from .order import CausalOrder, Leg, Ordering, Ticket

T = TypeVar("T")
"""What the caller attaches to each run and gets back with its outcome (e.g. its ledger key)."""

CANCEL_GRACE = 0.8
"""Seconds the requests in flight get to be answered after a cancel."""
_WATCH_EVERY = 0.05
MAX_BYTES_WAITING = 128 * 1024 * 1024
"""No run more is translated while the events of the runs in flight take this many bytes: a
run's events may take up to 64 MiB (``translate/events.py``), and twice the concurrency of
them would be gigabytes."""

OnOutcome = Callable[[TranslatedRun, T, RunOutcome], None]

_REASON_LIMIT = 300


def crash_reason(exc: BaseException, redact: Callable[[str], str]) -> str:
    """A failed run's reason for an error that is none of ours: what it is, in one line."""
    detail = " ".join(redact(str(exc)).split())[:_REASON_LIMIT]
    name = type(exc).__name__
    return f"failed inside the exporter ({name}{': ' + detail if detail else ''})"


async def deliver_async(
    runs: Iterable[tuple[TranslatedRun, T]],
    destination: Destination,
    on_outcome: OnOutcome[T],
    cancel: threading.Event,
    order: Ordering | None = None,
) -> None:
    """Start the destination and send every run; report each outcome (on the loop) as soon as
    it is known. The caller closes the destination. Runs that overlap keep ``order``
    (default: a new :class:`~.order.CausalOrder`).

    Returns when all runs were tried or ``cancel`` was set; re-raises the first
    :class:`~openlineage_export.errors.ExportError` a destination raised (an outage, a key the
    server refuses) after the other runs stopped, so it ends the export.
    """
    await destination.start()
    await _Delivery(destination, on_outcome, cancel, order or CausalOrder()).run(runs)


R = TypeVar("R")


async def unless_cancelled(work: Coroutine[Any, Any, R], cancel: threading.Event) -> R | None:
    """``work``'s result, or None once the host's ``cancel`` is set first (``work`` is then
    cancelled: a request in flight is abandoned)."""
    task = asyncio.ensure_future(work)
    while not cancel.is_set():
        done, _ = await asyncio.wait([task], timeout=_WATCH_EVERY)
        if done:
            return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None


def blocking(work: Coroutine[Any, Any, R]) -> R:
    """Run ``work`` to the end on an event loop of its own: in this thread, or, when this
    thread already runs a loop (an asyncio host called a blocking function), in a new one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="export") as pool:
        return pool.submit(asyncio.run, work).result()


class _Delivery(Generic[T]):
    """One delivery: the runs in flight, the causal order, and the first fatal error."""

    def __init__(
        self,
        destination: Destination,
        on_outcome: OnOutcome[T],
        cancel: threading.Event,
        order: Ordering,
    ) -> None:
        self.destination = destination
        self.on_outcome = on_outcome
        self.cancel = cancel
        self.stop = asyncio.Event()
        self.slots = asyncio.Semaphore(max(1, destination.concurrency))
        self.order = order
        self.concurrent = destination.concurrency > 1 and not isinstance(
            destination, KeepsSendOrder
        )
        """Whether the engine keeps the causal order: runs overlap, and the destination files
        events in the order they arrive, not in the order they were sent."""
        self.split = destination.event_legs and self.concurrent
        """Send runs in legs; with one run at a time there is nothing to gain."""
        self.tasks: set[asyncio.Task[None]] = set()
        self.sizes: dict[asyncio.Task[None], int] = {}
        """The bytes of each run in flight's events."""
        self.waiting_bytes = 0
        self.failure: ExportError | None = None
        self.crash: BaseException | None = None
        """An error outside any send (handing an outcome over): re-raised once all stopped."""
        self.changed = asyncio.Event()
        """Set when a run finishes or the delivery must stop: time to look again."""

    async def run(self, runs: Iterable[tuple[TranslatedRun, T]]) -> None:
        if isinstance(self.destination, NeverWaits):
            await self._one_after_another(runs)
            return
        watcher = asyncio.create_task(self._watch_cancel())
        window = 2 * max(1, self.destination.concurrency)
        try:
            for run, tag in runs:  # translation happens here, between sends
                if self._stopping():
                    break
                # One run at a time is in trail order already, and a destination that keeps
                # the order of its sends keeps it: no dataset to keep track of.
                legs = (
                    self.order.legs(run, split=self.split)
                    if self.concurrent
                    else [Leg(0, len(run), Ticket([]))]
                )
                task = asyncio.create_task(self._one(run, tag, legs))
                self.tasks.add(task)
                self.sizes[task] = size = sum(map(len, run.bodies))
                self.waiting_bytes += size
                task.add_done_callback(self._finished)
                if len(self.tasks) >= window or self.waiting_bytes >= MAX_BYTES_WAITING:
                    while self.tasks and (
                        len(self.tasks) >= window or self.waiting_bytes >= MAX_BYTES_WAITING
                    ):
                        await self._one_finished_or_stop()
                        if self._stopping():
                            break
                else:
                    await asyncio.sleep(0)  # let the sends in flight progress
            await self._drain()
        finally:
            watcher.cancel()
        if self.failure is not None:
            raise self.failure
        if self.crash is not None:
            raise self.crash

    async def _one_after_another(self, runs: Iterable[tuple[TranslatedRun, T]]) -> None:
        """A destination whose ``send`` never waits (a file, the dry run's stream) gains
        nothing from a task per run: each run is sent here, in trail order, and the cancel
        looked at between runs."""
        for run, tag in runs:
            if self.cancel.is_set():
                self.stop.set()
                break
            tally = Tally()
            try:
                outcome = await self.destination.send(run, self.stop, tally)
            except ExportError as exc:
                self.failure = exc
                break
            except Exception as exc:  # any error of a send is its run's failure
                outcome = RunOutcome(tally.accepted, crash_reason(exc, self.destination.redact))
            self._report(run, tag, outcome)
            if self.failure is not None:
                break
        if self.failure is not None:
            raise self.failure

    async def _one(self, run: TranslatedRun, tag: T, legs: list[Leg]) -> None:
        accepted = 0  # events of the legs done
        done = 0  # legs done
        tally = Tally()  # of the leg being sent
        outcome: RunOutcome | None = None
        try:
            for leg in legs:
                for earlier in leg.ticket.after:
                    if not earlier.done.is_set():
                        await earlier.done.wait()
                async with self.slots:
                    if self._stopping():
                        if accepted:
                            outcome = RunOutcome(accepted, "cancelled before every event was sent")
                        break
                    part = run if len(legs) == 1 else run.part(leg.start, leg.end)
                    tally = Tally()
                    sent = await self.destination.send(part, self.stop, tally)
                self.order.finish(leg.ticket)
                done += 1
                accepted += sent.accepted
                if not sent.delivered:
                    outcome = RunOutcome(accepted, sent.error)
                    break
            else:
                outcome = RunOutcome(accepted)
        except ExportError as exc:
            if self.failure is None:
                self.failure = exc
            self.stop.set()
            self.changed.set()
        except asyncio.CancelledError:  # abandoned after a cancel's grace time
            outcome = RunOutcome(
                accepted + tally.accepted, "interrupted before the server answered"
            )
        except Exception as exc:  # any error of a send is its run's failure
            outcome = RunOutcome(
                accepted + tally.accepted, crash_reason(exc, self.destination.redact)
            )
        finally:
            for leg in legs[done:]:  # what will never be sent is waited for no more
                self.order.finish(leg.ticket)
        if outcome is None:
            if self.failure is None:  # never started: stopped by a cancel
                self._report(run, tag, RunOutcome(0, "interrupted before it was sent"))
            return
        if self.failure is not None and not outcome.delivered and not self.cancel.is_set():
            # Cut short by the outage (``stop``), not refused by the destination: not a
            # failed run; it stays pending.
            return
        self._report(run, tag, outcome)

    def _report(self, run: TranslatedRun, tag: T, outcome: RunOutcome) -> None:
        """Hand an outcome over; a failure to keep it (a full disk under the ledger) stops
        the delivery, so nothing more is sent that could not be recorded."""
        try:
            self.on_outcome(run, tag, outcome)
        except ExportError as exc:
            if self.failure is None:
                self.failure = exc
            self.stop.set()
            self.changed.set()

    async def _drain(self) -> None:
        """Wait for the runs in flight; after a cancel, abandon what outlasts the grace."""
        while self.tasks:
            if not self.cancel.is_set():
                await self._one_finished_or_stop()
                continue
            _, late = await asyncio.wait(self.tasks, timeout=CANCEL_GRACE)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late)

    def _stopping(self) -> bool:
        """Whether to start nothing new: a fatal error, or the host's cancel, looked at here
        too (not only by the watcher), so nothing starts once a cancel was set."""
        if not self.stop.is_set() and self.cancel.is_set():
            self.stop.set()
            self.changed.set()
        return self.stop.is_set()

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        self.waiting_bytes -= self.sizes.pop(task, 0)
        self.changed.set()
        if not task.cancelled() and (exc := task.exception()) is not None:
            # Not a send's (those are outcomes): reporting one failed. Retrieved here, so
            # asyncio never prints "Task exception was never retrieved"; it ends the delivery.
            self.crash = self.crash or exc
            self.stop.set()

    async def _one_finished_or_stop(self) -> None:
        """Wait until a run finishes, or (unless already stopping) the delivery must stop."""
        if self.stop.is_set():
            await asyncio.wait(self.tasks, return_when=asyncio.FIRST_COMPLETED)
            return
        self.changed.clear()
        await self.changed.wait()

    async def _watch_cancel(self) -> None:
        """The host's cancel is a thread's event: look at it often, turn it into ``stop``."""
        while not self.cancel.is_set():
            await asyncio.sleep(_WATCH_EVERY)
        self.stop.set()
        self.changed.set()
