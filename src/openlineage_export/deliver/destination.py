"""The seam between translation and the wire: what every destination is and is given.

A destination kind is a pair, as in openlineage-python's transports: a *config* built from the
settings (:meth:`DestinationConfig.from_settings`, where secrets are resolved and every rule is
checked before anything is sent) and a :class:`Destination` that takes one editor run at a
time. ``deliver/registry.py`` lists the kinds.

What only some destinations can do is a Protocol of its own, checked with ``isinstance``:
:class:`Recalling` (it can be asked what the server forgot), :class:`Holding` (it can be asked
what the server already holds), :class:`Batching` (it learns whether the server takes batches),
:class:`NeverWaits` (its ``send`` writes and returns) and
:class:`KeepsSendOrder` (it files events in the order they are sent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from ..guards.secrecy import Redactor
from ..host.secrets import SecretStore
from ..host.setting_row import SettingsGroup, setting
from ..host.settings import Settings
from ..translate.encoded import TranslatedRun
from .http.held import Holdings, Wanted


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What became of one editor run at the destination."""

    accepted: int
    """How many of its events the destination accepted, in order."""
    error: str | None = None
    """Why the rest were not (the server's reason, secrets redacted); None when all were."""

    @property
    def delivered(self) -> bool:
        """True when every event of the run was accepted."""
        return self.error is None


class Tally:
    """How many of a run's events the destination has accepted so far (the engine reads it
    when it has to abandon a run mid-way)."""

    __slots__ = ("accepted",)

    def __init__(self) -> None:
        self.accepted = 0


class Destination(Protocol):
    """Where events go: a server over HTTP, a Kafka topic, a file.

    Used on one asyncio event loop (the engine's): :meth:`start` once, then :meth:`send` for
    many runs at once (each run's events in order), then :meth:`close`. ``send`` raises
    :class:`~openlineage_export.errors.DestinationError` only when the destination as a whole
    cannot take events (the export stops), or a
    :class:`~openlineage_export.errors.ConfigError` when what was configured cannot work (a key
    the server refuses); a refusal of one run is a :class:`RunOutcome` with an error.
    """

    name: str
    """The destination's identity, as the ledger and the summary name it."""

    @property
    def concurrency(self) -> int:
        """How many editor runs it takes at once (read as delivery begins)."""
        ...

    event_legs: bool
    """True when it may be handed a run a few events at a time (a *leg*, see ``order.py``),
    so that runs touching the same datasets overlap in causal order; False: whole runs only."""
    redact: Redactor
    """Masks the secrets this destination holds in any text about it."""

    async def start(self) -> None:
        """Open connections (inside the engine's event loop)."""
        ...

    async def send(self, run: TranslatedRun, stop: asyncio.Event, tally: Tally) -> RunOutcome:
        """Deliver the run's events in order, counting each accepted one in ``tally``; stop
        early (not delivered) once ``stop`` is set."""
        ...

    async def close(self) -> None:
        """Release connections and flush; called once at the end, after :meth:`start`."""
        ...


@runtime_checkable
class Recalling(Protocol):
    """A destination that can be asked, before anything is sent, whether the server still has
    what the ledger says it accepted (``recall.py``)."""

    async def forgotten(self, namespace: str, run_ids: Sequence[str]) -> str | None:
        """What the server no longer has of these runs (a sentence: every run is then sent
        again), or None: it has them, or it is not a server that can be asked;
        ``recall.CannotAsk`` (why) when it could not be asked: no answer in time, a client
        that failed on the question."""
        ...


@runtime_checkable
class Holding(Protocol):
    """A destination that can be asked, before a first export (the ledger holds nothing of it),
    which runs the server already holds (``held.py``), so that only the rest is sent."""

    keeps_duplicates: bool
    """Whether the server keeps every event it is given, so that none is ever sent again
    blind (``translate/asking.py``'s :func:`keeps_duplicates` decides; the export tells it
    what the ledger remembers of the server before anything is sent)."""

    async def holdings(self, namespace: str, wanted: Wanted, runs: int) -> Holdings | None:
        """The runs of ``wanted`` (by job) the server holds (of a trail of ``runs`` editor
        runs: the time it is given grows with them), or None: it is not a server that can be
        asked; ``recall.CannotAsk`` (why) when it could not be asked: a refusal, an answer not
        understood, no answer in time."""
        ...


@runtime_checkable
class Batching(Protocol):
    """A destination that learns whether the server takes batches of events, and is told what
    an earlier export learnt (the ledger remembers it per destination)."""

    batches: bool | None
    """Whether the server takes them (None: not known yet)."""

    notes: list[str]
    """What this export learnt of them, in words, said once in the summary."""

    batches_taken: int
    """How many batches the server took (answered 2xx) in this export."""


@runtime_checkable
class NeverWaits(Protocol):
    """A destination whose ``send`` writes and returns without waiting (a file, the dry run's
    stream): the engine hands it the runs one after the other, without a task each. A
    destination has it or has not: there is no ``never_waits = False``."""

    never_waits: Literal[True]


@runtime_checkable
class KeepsSendOrder(Protocol):
    """A destination that files events in the order its sends start, whatever comes back
    when (Kafka: a partition's log is in the order messages were produced, retries included,
    and a key's messages share a partition): the engine keeps no causal order of its own for
    it, and starts each run's send in trail order without waiting for another run's answer."""

    keeps_send_order: Literal[True]


@dataclass(frozen=True, slots=True)
class Retry:
    """The destination did not take an event and will try again: for a host to say so as it
    happens (``ExportRequest.on_retry``), rather than show an unmoving bar."""

    destination: str
    """The destination's name (its address), as the summary gives it."""
    reason: str
    """Why the last attempt failed, secrets redacted (e.g. ``cannot connect to ...``)."""
    attempt: int
    """The attempt that just failed (1 is the first)."""
    seconds_left: float
    """Seconds until the destination gives up on the event (``openlineage.retry.maxTime``)."""


@dataclass(frozen=True)
class Supplied:
    """What the host hands in for the destinations, besides settings and secrets."""

    clients: Mapping[str, Any] = field(default_factory=dict)
    """The clients of the host's own, by the kind that takes one (what each may be is its
    registry row's ``client``): ``http``, an ``aiohttp.ClientSession`` (used on the engine's
    loop) or an httpx client or transport; ``kafka``, a producer (the host closes it)."""
    on_retry: Callable[[Retry], None] | None = None
    """Told each time an event is about to be tried again (the host says so as it happens)."""
    on_warning: Callable[[str], None] | None = None
    """Told what the first answers say is likely wrong and stays so (every event refused with
    404): the host says so at once, and the summary again."""
    on_notice: Callable[[str], None] | None = None
    """Told what the first answers say may be wrong for now (nothing listens at the address:
    a server may be starting): the host says so at once; the summary says what came of it."""

    def client(self, kind: str) -> Any:
        """The host's own client for the destination kind ``kind``, or None."""
        return self.clients.get(kind)


@dataclass(frozen=True)
class Opening:
    """Everything a config may draw on when it is built."""

    settings: Settings
    secrets: SecretStore
    environ: Mapping[str, str]
    workspace: Path
    """The workspace folder: relative paths in settings start there."""
    supplied: Supplied = Supplied()


class DestinationConfig(Protocol):
    """A destination's configuration, checked and with its secrets resolved."""

    @property
    def name(self) -> str:
        """The destination's identity (the ledger keeps runs per destination)."""
        ...


@dataclass(frozen=True)
class DeliverySettings(SettingsGroup):
    """How events are delivered, whatever the destination."""

    title: ClassVar[str] = "delivery"

    timeout: float = setting(
        "openlineage.timeout",
        "number",
        10.0,
        "Seconds to wait for one request.",
        minimum=0.1,
        maximum=900,
        ecosystem="transport.timeout",
    )
    retry_max_time: float = setting(
        "openlineage.retry.maxTime",
        "number",
        30.0,
        "Total seconds spent retrying one event before giving up and declaring the server "
        "unreachable (0: a single attempt).",
        minimum=0,
        maximum=86400,
    )
    concurrency: int = setting(
        "openlineage.concurrency",
        "integer",
        32,
        "Requests in flight at once: editor runs sending at once, each one event at a time "
        "(above 1, 8 times as many runs where the server takes batches of events, the "
        "requests still within this).",
        minimum=1,
        maximum=64,
    )
