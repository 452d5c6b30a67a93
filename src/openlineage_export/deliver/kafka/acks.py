"""What the ``kafka`` destination asks of a producer (the part of ``confluent_kafka.Producer``
it uses, so a test can hand in a stand-in); the delivery reports of one run's messages as the
producer's ``poll`` hands them over (on the event loop, or on a host's thread polling its own
producer); and the polling of the producer on the event loop while runs wait."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Protocol

from confluent_kafka import KafkaError, Message

from ..destination import Tally

SERVE_EVERY = 0.002
"""Seconds between two polls of the producer while runs wait for their delivery reports."""
LOOK_EVERY = 0.05
"""Seconds between two looks at what may end a run's wait early (a cancel, its deadline, a
fatal error)."""

DeliveryCallback = Callable[[KafkaError | None, Message], None]


class Producer(Protocol):
    """The part of ``confluent_kafka.Producer`` used here; a test hands in a stand-in."""

    def produce(
        self, topic: str, value: bytes, key: bytes, *, on_delivery: DeliveryCallback
    ) -> None:
        """Queue one message; ``on_delivery(error or None, message)`` is called from poll()."""
        ...

    def poll(self, timeout: float) -> int:
        """Serve delivery reports (and log/error callbacks), waiting at most ``timeout``."""
        ...

    def flush(self, timeout: float) -> int:
        """Wait until every queued message is reported, at most ``timeout``; how many are left."""
        ...

    def purge(self) -> None:
        """Drop every message not yet acknowledged (they are then reported as purged)."""
        ...

    def __len__(self) -> int:
        """Messages queued or in flight."""
        ...


class RunAcks:
    """The delivery reports of one run's messages, filled in by whoever polls the producer."""

    def __init__(self, count: int, loop: asyncio.AbstractEventLoop) -> None:
        self.errors: list[KafkaError | None] = [None] * count
        self.reported = [False] * count
        self.produced = 0
        self.all_reported: asyncio.Future[None] = loop.create_future()
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._left = 0
        self._done_producing = False
        self._lock = threading.Lock()

    def expect(self, count: int = 1) -> None:
        """``count`` more messages are about to be produced (a report may come at once)."""
        with self._lock:
            self.produced += count
            self._left += count

    def withdraw(self, count: int = 1) -> None:
        """The last ``count`` messages expected were not produced after all."""
        if count:
            with self._lock:
                self.produced -= count
                self._left -= count

    def report(self, index: int, error: KafkaError | None) -> None:
        """The delivery report of message ``index`` (from whichever thread polls)."""
        with self._lock:
            self.errors[index] = error
            self.reported[index] = True
            self._left -= 1
            done = self._left == 0 and self._done_producing
        if done:
            self.wake()

    def stop_expecting(self) -> None:
        """No more messages will be produced."""
        with self._lock:
            self._done_producing = True
            done = self._left == 0
        if done:
            self.wake()

    async def woken(self) -> None:
        """Wait until :meth:`wake` (every report came, or the run must look again); the next
        call waits for the next wake."""
        await self.all_reported
        self.all_reported = self._loop.create_future()

    def wake(self) -> None:
        """Wake the run waiting on :attr:`all_reported` (every report came, or it must look
        again: a cancel, a deadline, a fatal error)."""
        if threading.get_ident() == self._loop_thread:
            _resolve(self.all_reported)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(_resolve, self.all_reported)

    @property
    def complete(self) -> bool:
        """Whether every message produced has its report and no more will be produced."""
        with self._lock:
            return self._done_producing and self._left == 0

    def acknowledged(self) -> int:
        """How many messages, from the first on, the broker acknowledged."""
        with self._lock:
            for index in range(self.produced):
                if not self.reported[index] or self.errors[index] is not None:
                    return index
            return self.produced

    def only_failed_after(self, index: int) -> bool:
        """Whether every message from ``index`` on was reported and none of them delivered
        (so they can be sent again, in order, without a duplicate)."""
        with self._lock:
            return all(
                self.reported[i] and self.errors[i] is not None for i in range(index, self.produced)
            )

    def first_error(self) -> tuple[int, KafkaError] | None:
        """The first message the broker did not take, and why."""
        with self._lock:
            for index, error in enumerate(self.errors[: self.produced]):
                if error is not None:
                    return index, error
            return None


class Waiting:
    """A run waiting for its delivery reports, and what may end the wait early."""

    __slots__ = ("acks", "deadline", "stop", "tally")

    def __init__(self, acks: RunAcks, stop: asyncio.Event, tally: Tally, deadline: float) -> None:
        self.acks = acks
        self.stop = stop
        self.tally = tally
        """Kept up to date with what the broker acknowledged (the engine reads it when it
        abandons a run)."""
        self.deadline = deadline


class ReportServer:
    """Polls the producer on the event loop (delivery reports, errors, librdkafka's log) while
    runs wait for their reports: no thread of its own, so a report costs no hand-over between
    threads. Every :data:`LOOK_EVERY` seconds it wakes each waiting run that must stop
    (``stop``), whose time is up, or whose producer ``failed()``."""

    def __init__(
        self,
        producer: Producer,
        failed: Callable[[], bool],
        on_error: Callable[[Exception], None],
    ) -> None:
        self._producer = producer
        self._failed = failed
        self._on_error = on_error
        self._waiting: set[Waiting] = set()
        self._task: asyncio.Task[None] | None = None

    def add(self, waiting: Waiting) -> None:
        """A run waits (on this loop) until ``discard``: the producer is polled meanwhile."""
        self._waiting.add(waiting)
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._task = loop.create_task(self._serve())

    def discard(self, waiting: Waiting) -> None:
        self._waiting.discard(waiting)

    async def _serve(self) -> None:
        poll = self._producer.poll
        look_at = 0.0
        while self._waiting:
            try:
                poll(0)
            except Exception as exc:  # a report callback failed: say so to every run
                self._on_error(exc)
            now = time.monotonic()
            if now >= look_at:
                look_at = now + LOOK_EVERY
                failed = self._failed()
                for waiting in list(self._waiting):
                    waiting.tally.accepted = waiting.acks.acknowledged()
                    if failed or waiting.stop.is_set() or now >= waiting.deadline:
                        waiting.acks.wake()
            await asyncio.sleep(SERVE_EVERY)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
