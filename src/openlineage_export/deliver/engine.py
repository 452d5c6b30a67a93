"""The delivery engine: editor runs in, outcomes out; bounded concurrency across runs.

Each run's events go in order on one thread (START accepted before the end, the pipeline's
START before its stages'); different runs go in parallel, at most ``destination.concurrency``
at once, with at most twice that many translated and waiting, so memory stays flat.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from ..errors import DestinationError
from ..translate.events import TranslatedRun
from .destination import Destination, RunOutcome

T = TypeVar("T")
"""What the caller attaches to each run and gets back with its outcome (e.g. its ledger key)."""


def deliver(runs: Iterable[tuple[TranslatedRun, T]], destination: Destination,
            on_outcome: Callable[[TranslatedRun, T, RunOutcome], None],
            cancel: threading.Event) -> None:
    """Send every run; report each outcome (on the calling thread) as soon as it is known.

    Returns when all runs were tried or ``cancel`` was set; re-raises the first
    :class:`DestinationError` (after stopping the other senders), so an outage ends the export.
    """
    workers = max(1, destination.concurrency)
    if workers == 1:
        for run, tag in runs:
            if cancel.is_set():
                return
            on_outcome(run, tag, destination.send(run, cancel))
        return
    # The senders watch ``stop``: set when the host cancels (propagated below) or on an outage.
    stop = threading.Event()
    pending: dict[Future[RunOutcome], tuple[TranslatedRun, T]] = {}
    # Finished senders queue themselves here, so settling costs nothing per pending run.
    finished: queue.SimpleQueue[Future[RunOutcome]] = queue.SimpleQueue()
    failure: DestinationError | None = None
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="deliver") as pool:

        def settle(block: bool) -> None:
            nonlocal failure
            done = []
            try:
                done.append(finished.get(timeout=0.1) if block else finished.get_nowait())
                while True:
                    done.append(finished.get_nowait())
            except queue.Empty:
                pass
            if cancel.is_set():
                stop.set()
            for future in done:
                run, tag = pending.pop(future)
                try:
                    outcome = future.result()
                except DestinationError as exc:
                    if failure is None:
                        failure = exc
                    stop.set()
                    continue
                if failure is not None and not outcome.delivered and not cancel.is_set():
                    # Cut short by the outage (``stop``), not refused by the destination: not a
                    # failed run, as the one sender does not report the run the outage stopped.
                    continue
                on_outcome(run, tag, outcome)

        for run, tag in runs:
            if stop.is_set() or cancel.is_set():
                break
            future = pool.submit(destination.send, run, stop)
            pending[future] = (run, tag)
            future.add_done_callback(finished.put)
            while len(pending) >= 2 * workers:
                settle(block=True)
            settle(block=False)
        while pending:
            settle(block=True)
    if failure is not None:
        raise failure
