"""Deliver events to an Apache Kafka topic through confluent-kafka (librdkafka).

One idempotent producer (``enable.idempotence``, ``acks=all``) is shared by every run the
engine sends at once. Each event of an editor run is one message: the key is the pipeline run
id, so all of a run's events land on one partition in the order they were produced, and the
value is the event's JSON, byte for byte what the dry run writes. A run's coroutine produces all
of its events, then awaits the broker's acknowledgement of each one (delivery reports, served on
the event loop: after each run is produced, and every few milliseconds while runs wait); only
then is the run delivered.

Runs are produced in the order their sends start, the trail's (one run at a time, even while the
producer's queue is full), and a partition's log is in produce order (the idempotent producer
keeps it through retries): so the engine keeps no causal order for Kafka
(:class:`~.destination.KeepsSendOrder`), and a run never waits for another run's
acknowledgements. Kafka orders nothing across partitions; waiting for a run's acknowledgements
before producing the next would have promised a consumer nothing more, and cost the rate.
librdkafka retries on its own until ``message.timeout.ms`` (``openlineage.retry.maxTime``); a
message it gives up on ends its run, and when nothing at all
was acknowledged for that whole time the destination is declared unreachable, as for HTTP.

Messages of several runs travel in one batch, and a broker refuses a batch as a whole when it
is larger than it takes (``message.max.bytes``, a topic's ``max.message.bytes``): one event
too large would fail the small runs batched with it, with its reason. So a run refused for
size is sent again *alone*: the other runs wait, the producer is drained, and each of its
remaining events goes in a batch of its own. An event refused alone is too large; only its
run is refused, saying so. (A batch is refused whole: nothing of it was written, and
sending it again duplicates nothing.)
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Sequence
from typing import Literal

from confluent_kafka import KafkaError, KafkaException, Message
from confluent_kafka import Producer as _LibrdkafkaProducer

from ...errors import ConfigError, DestinationError, DestinationUnreachable
from ...guards.secrecy import Redactor
from ...translate.encoded import TranslatedRun
from ..destination import RunOutcome, Supplied, Tally
from .acks import Producer, ReportServer, RunAcks, Waiting
from .config import KafkaConfig
from .said import said

ACK_GRACE = 5.0
"""Seconds to wait for delivery reports beyond ``message.timeout.ms``: librdkafka expires
messages on a timer of its own, so a report may come a little after the timeout."""
CLOSE_GRACE = 1.0
"""Seconds ``close`` gives messages still in flight (none were reported delivered)."""

# Delivery errors that mean "the brokers did not answer in time" rather than "refused".
_UNANSWERED = frozenset(
    {
        KafkaError._MSG_TIMED_OUT,
        KafkaError._TIMED_OUT,
        KafkaError._TIMED_OUT_QUEUE,
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.NETWORK_EXCEPTION,
    }
)

# librdkafka's own log lines (connection refused, retries...) are not made at all: the user gets
# one sentence about an outage (error_cb, its words read by said.py), not a stream; and
# confluent_kafka decodes each line strictly before Python sees it, so a line quoting a broker's
# bytes that are no UTF-8 (a SASL error message) failed poll() and the export with it. An
# emergency line, should one come, goes to Python logging, silent unless the host configures it.
_librdkafka_log = logging.getLogger(__name__ + ".librdkafka")
_librdkafka_log.addHandler(logging.NullHandler())


class KafkaDestination:
    """Produces each run's events to one topic, keyed by the pipeline run id, and waits for
    the broker's acknowledgement of every one before calling the run delivered."""

    def __init__(
        self,
        config: KafkaConfig,
        supplied: Supplied | None = None,
        *,
        producer: Producer | None = None,
        concurrency: int | None = None,
    ) -> None:
        """``producer`` (or the host's own, ``supplied.client("kafka")``) replaces the one
        built from ``config`` (it then belongs to the caller, who closes it); ``concurrency``
        is how many runs the engine sends at once (default: ``config.concurrency``)."""
        if producer is None and supplied is not None:
            producer = supplied.client("kafka")
        concurrency = concurrency if concurrency is not None else config.concurrency
        self.config = config
        self.name = config.name
        self.concurrency = concurrency
        # Whole runs: each send waits for the broker's acknowledgements, and the run id is the
        # message key, so a run's events share a partition and keep their order.
        self.event_legs = False
        self.keeps_send_order: Literal[True] = True
        self.redact = Redactor(config.sasl_password)
        self._owned = producer is None
        self._last_ack = time.monotonic()
        self._broker_error: str | None = None
        self._fatal: str | None = None
        self._state_lock = threading.Lock()
        self._producer: Producer = producer if producer is not None else self._new_producer()
        self._alone = asyncio.Lock()
        """Held while a run refused for size is sent again event by event, alone."""
        self._turn = asyncio.Lock()
        """Held while a run's events are produced: runs are produced one after the other."""
        self._reports_served = ReportServer(self._producer, self._has_failed, self._serving_failed)

    def _new_producer(self) -> Producer:
        try:
            return _LibrdkafkaProducer(
                {
                    **self.config.producer_config(),
                    "error_cb": self._on_error,
                    "logger": _librdkafka_log,
                    "log_level": 0,
                }
            )
        except KafkaException as exc:  # a CA bundle that is no PEM file, for one
            raise ConfigError(
                self.redact(f"cannot set up the Kafka producer for {self.name}: {_describe(exc)}")
            ) from None

    async def start(self) -> None:
        """Nothing to open: the producer connects on its own."""

    async def send(self, run: TranslatedRun, stop: asyncio.Event, tally: Tally) -> RunOutcome:
        """Produce every event of the run, then wait until the broker acknowledged each."""
        acks = RunAcks(len(run), asyncio.get_running_loop())
        key = run.run_id.encode()
        deadline = time.monotonic() + self.config.delivery_timeout + ACK_GRACE
        async with self._turn:
            refused = await self._produce(key, run.bodies, 0, acks, stop, deadline)
        acks.stop_expecting()
        self._producer.poll(0)  # the reports already there, at no wait
        unreported = await self._reports(acks, stop, tally)
        if unreported is not None:
            return unreported
        accepted = tally.accepted = acks.acknowledged()
        failed = acks.first_error()
        if failed is not None and _too_large(failed[1]) and acks.only_failed_after(accepted):
            # Maybe only batched with a message too large: this run's events again, alone.
            return await self._send_alone(run, key, accepted, stop, tally)
        if failed is not None:
            return RunOutcome(accepted, self._verdict(*failed, len(run)))
        if refused is not None:
            return RunOutcome(accepted, refused)
        if accepted < len(run):
            return RunOutcome(accepted, "cancelled before every event was sent")
        return RunOutcome(accepted)

    async def _reports(self, acks: RunAcks, stop: asyncio.Event, tally: Tally) -> RunOutcome | None:
        """Wait for the delivery report of every message produced: None, or the run's outcome
        when it was cancelled or not answered in time."""
        # After the last produce, librdkafka has delivery_timeout to report each message.
        waiting = Waiting(
            acks, stop, tally, time.monotonic() + self.config.delivery_timeout + ACK_GRACE
        )
        self._reports_served.add(waiting)
        try:
            while not acks.complete:
                await acks.woken()  # by the last report, or to look again
                self._raise_if_fatal()
                if acks.complete:
                    break
                if stop.is_set():
                    return RunOutcome(
                        acks.acknowledged(),
                        "cancelled before every event was acknowledged by the broker",
                    )
                if time.monotonic() >= waiting.deadline:
                    return RunOutcome(
                        acks.acknowledged(),
                        self._unanswered("no delivery report from the producer"),
                    )
        finally:
            self._reports_served.discard(waiting)
        self._raise_if_fatal()
        return None

    def _has_failed(self) -> bool:
        """Whether the producer failed for good."""
        with self._state_lock:
            return self._fatal is not None

    def _serving_failed(self, exc: Exception) -> None:
        """A delivery report could not be taken in (a bug of ours): no report can be trusted
        any more, so the producer counts as failed for good and the export stops."""
        with self._state_lock:
            self._fatal = self._fatal or f"serving its delivery reports failed: {exc!r}"

    async def _send_alone(
        self, run: TranslatedRun, key: bytes, accepted: int, stop: asyncio.Event, tally: Tally
    ) -> RunOutcome:
        """Send the run's events from ``accepted`` on again, each in a batch of its own: the
        other runs wait and the producer is drained first. An event the broker refuses alone
        is too large, and ends its run."""
        count = len(run)
        async with self._alone:
            for index in range(accepted, count):
                deadline = time.monotonic() + self.config.delivery_timeout + ACK_GRACE
                while len(self._producer):  # nothing of another run's may share the batch
                    if stop.is_set():
                        return RunOutcome(index, "cancelled before every event was sent")
                    if time.monotonic() >= deadline:
                        return RunOutcome(index, self._unanswered("the producer did not drain"))
                    self._producer.poll(0)
                    await asyncio.sleep(0.005)
                value = run.bodies[index]
                alone = RunAcks(1, asyncio.get_running_loop())
                refused = await self._produce(
                    key, run.bodies, index, alone, stop, deadline, alone=True
                )
                alone.stop_expecting()
                if refused is not None:
                    return RunOutcome(index, refused)
                unreported = await self._reports(alone, stop, Tally())
                if unreported is not None:
                    return RunOutcome(index, unreported.error)
                failed = alone.first_error()
                if failed is not None and _too_large(failed[1]):
                    return RunOutcome(
                        index,
                        self.redact(
                            f"event {index + 1} of {count} is {len(value):,} bytes, more than the "
                            f"broker takes (its message.max.bytes, or the topic's "
                            f"max.message.bytes): {failed[1].name()}: {said(failed[1])}"
                        ),
                    )
                if failed is not None:
                    return RunOutcome(index, self._verdict(index, failed[1], count))
                tally.accepted = index + 1
        return RunOutcome(count)

    async def close(self) -> None:
        """Stop serving reports; an owned producer drops what was never acknowledged."""
        self.close_now()

    def close_now(self) -> None:
        """:meth:`close`, outside an event loop."""
        if self._owned:
            if len(self._producer):
                self._producer.purge()
            self._producer.flush(CLOSE_GRACE)

    async def _produce(
        self,
        key: bytes,
        bodies: Sequence[bytes],
        first: int,
        acks: RunAcks,
        stop: asyncio.Event,
        deadline: float,
        *,
        alone: bool = False,
    ) -> str | None:
        """Queue the events ``bodies[first:]`` (only ``bodies[first]`` when ``alone``), each
        reported to ``acks`` at its place from ``first``, waiting while the producer's queue is
        full or a run is being sent alone; None, or why not all."""
        produce = self._producer.produce
        topic = self.config.topic
        delivered = self._delivered
        end = first + 1 if alone else len(bodies)
        index = first
        acks.expect(end - first)
        refused: str | None = None
        try:
            if not alone:
                await self._after_alone()
            while index < end:
                if stop.is_set():
                    break
                try:
                    produce(
                        topic,
                        value=bodies[index],
                        key=key,
                        on_delivery=functools.partial(delivered, acks, index - first),
                    )
                except BufferError:
                    # The local queue is full: reports drain it.
                    if time.monotonic() >= deadline:
                        refused = self._unanswered("the producer's queue stayed full")
                        break
                    self._producer.poll(0)
                    await asyncio.sleep(0.01)
                    if stop.is_set():
                        refused = "cancelled before every event was sent"
                        break
                    if not alone:
                        await self._after_alone()
                    continue
                except KafkaException as exc:
                    refused = self.redact(
                        f"the producer refused event {index + 1}: {_describe(exc)}"
                    )
                    break
                index += 1
        finally:
            acks.withdraw(end - index)
        return refused

    async def _after_alone(self) -> None:
        """Wait while a run refused for size is being sent again alone."""
        if self._alone.locked():
            async with self._alone:
                pass

    def _delivered(
        self, acks: RunAcks, index: int, error: KafkaError | None, _message: Message
    ) -> None:
        """A delivery report (called by librdkafka from poll())."""
        if error is None:
            self._last_ack = time.monotonic()  # one float, written whole
        acks.report(index, error)

    def _verdict(self, index: int, error: KafkaError, count: int) -> str:
        """Why the run failed at message ``index``; raises when the brokers are gone."""
        if error.code() == KafkaError._FATAL or error.fatal():
            raise DestinationError(
                self.redact(
                    f"the Kafka producer for {self.name} failed for good ({said(error)}); "
                    "nothing more was sent"
                )
            )
        if error.code() in _UNANSWERED:
            return self._unanswered(said(error))
        return self.redact(
            f"the broker refused event {index + 1} of {count}: {error.name()}: {said(error)}"
        )

    def _unanswered(self, reason: str) -> str:
        """The reason for a message the brokers never answered; raises
        :class:`DestinationUnreachable` when nothing was acknowledged for the whole window."""
        window = self.config.delivery_timeout
        with self._state_lock:
            quiet_for = time.monotonic() - self._last_ack
            broker_error = self._broker_error
        detail = reason + (f"; last broker error: {broker_error}" if broker_error else "")
        if quiet_for >= window:
            raise DestinationUnreachable(
                self.redact(
                    f"the Kafka broker at {self.name} acknowledged nothing for {window:g} s "
                    f"({detail}); nothing more was sent"
                )
            )
        return self.redact(f"not acknowledged within {window:g} s: {detail}")

    def _raise_if_fatal(self) -> None:
        with self._state_lock:
            fatal = self._fatal
        if fatal is not None:
            raise DestinationError(
                self.redact(
                    f"the Kafka producer for {self.name} failed for good ({fatal}); "
                    "nothing more was sent"
                )
            )

    def _on_error(self, error: KafkaError) -> None:
        """librdkafka's client-level errors (all brokers down, authentication failed...)."""
        with self._state_lock:
            if error.fatal():
                self._fatal = said(error)
            # "1/1 brokers are down" follows the reason (refused, authentication failed): keep it.
            if error.code() != KafkaError._ALL_BROKERS_DOWN or self._broker_error is None:
                self._broker_error = said(error)


def _too_large(error: KafkaError) -> bool:
    """The broker refused the batch the message was in for its size."""
    return error.code() in (KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE)


def _describe(exc: KafkaException) -> str:
    if exc.args and isinstance(exc.args[0], KafkaError):
        error: KafkaError = exc.args[0]
        return f"{error.name()}: {said(error)}"
    return str(exc) or type(exc).__name__
