"""What the ``kafka`` destination asks of a producer (the part of ``confluent_kafka.Producer``
it uses, so a test can hand in a stand-in), and the delivery reports of one run's messages as
librdkafka's polling thread hands them over to the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Protocol

from confluent_kafka import KafkaError, Message

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
    """The delivery reports of one run's messages, filled in by the polling thread."""

    def __init__(self, count: int, loop: asyncio.AbstractEventLoop) -> None:
        self.errors: list[KafkaError | None] = [None] * count
        self.reported = [False] * count
        self.produced = 0
        self.all_reported: asyncio.Future[None] = loop.create_future()
        self._loop = loop
        self._left = 0
        self._done_producing = False
        self._lock = threading.Lock()

    def expect(self) -> None:
        """One more message is about to be produced (its report may come at once)."""
        with self._lock:
            self.produced += 1
            self._left += 1

    def withdraw(self) -> None:
        """The message just expected was not produced after all."""
        with self._lock:
            self.produced -= 1
            self._left -= 1

    def report(self, index: int, error: KafkaError | None) -> None:
        """The delivery report of message ``index``."""
        with self._lock:
            self.errors[index] = error
            self.reported[index] = True
            self._left -= 1
            if self._left == 0 and self._done_producing:
                self._loop.call_soon_threadsafe(_resolve, self.all_reported)

    def stop_expecting(self) -> None:
        """No more messages will be produced."""
        with self._lock:
            self._done_producing = True
            if self._left == 0:
                self._loop.call_soon_threadsafe(_resolve, self.all_reported)

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


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
