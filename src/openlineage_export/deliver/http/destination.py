"""The ``http`` destination: POST each event to an OpenLineage endpoint (Marquez, DataHub...).

Each event is one POST (JSON, gzip when asked) through an asyncio HTTP client
(``http_client.py``: libcurl by default, or the host's own session or httpx client), on the
engine's loop. An event is retried on connection errors, timeouts, 408, 425, 429 and 5xx with
exponential backoff and jitter (never less than the backoff, even when ``Retry-After`` asks for
less), for at most ``openlineage.retry.maxTime`` seconds; ``openlineage.timeout`` is a deadline
for the whole request, answer included. Other 4xx refuse the run; 401 and 403 again and again
mean the key is wrong for every run: the export stops as a configuration error. A server that
answers nothing for a whole retry window is an outage: the export stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ... import DISTRIBUTION
from ...errors import ConfigError, DestinationUnreachable
from ...guards.keys import KeySettings
from ...guards.proxy import environment_proxy
from ...guards.secrecy import (
    Redactor,
    check_header_safe,
    check_key_transport,
    masked_logs,
    resolve_secret,
)
from ...guards.trust import check_key_destination
from ...translate.asking import Asking
from ...translate.encoded import TranslatedRun
from ...translate.modes import mode_of
from ..destination import DeliverySettings, Opening, Retry, RunOutcome, Supplied, Tally
from ..retry import RetryPolicy, retry_after_seconds
from .address import url_doubts
from .client import poster_for
from .held import Holdings, Wanted, deadline_for, holdings
from .poster import Answer, BadCertificate, NoAnswer, NoTls, Refused, TransportFailure
from .recall import forgotten
from .settings import API_KEY_ENV, HttpSettings, ecosystem_api_key
from .signs import FirstSigns, describe_answer, no_tls

USER_AGENT_PREFIX = DISTRIBUTION

KIND = "http"
"""The name ``openlineage.transport`` gives this kind (its row in ``registry.py``)."""

AUTH_STRIKES = 3
"""After this many 401/403 answers in a row (nothing accepted between), the key is wrong for
every run: the export stops instead of trying each run."""


@dataclass(frozen=True)
class HttpConfig:
    """Where to post, with what key, and how patiently: checked, the key resolved."""

    url: str
    api_key: str | None = field(default=None, repr=False)
    gzip_body: bool = False
    timeout: float = 10.0
    concurrency: int = 32
    retry: RetryPolicy = RetryPolicy()
    verify: bool | Path = True
    """Verify the server's certificate: with the system's CAs (True), a CA bundle, or not."""
    key_origin: str | None = None
    """Where the API key came from (``the secret 'marquez-prod'``), for messages."""
    key_fix: str | None = None
    """How the user replaces the key, for messages."""
    refusal: Callable[[int, bytes], str | None] | None = None
    """How the server refuses a run in a way of its own (its mode's reading), else None."""
    address: str = "openlineage.url"
    """What the address was set with, for messages: ``openlineage.url``, or ``--url``."""
    doubt: str | None = None
    """What is likely wrong with the url, said before sending (``http_address.py``)."""
    asking: tuple[Asking, ...] = ()
    """The read APIs the server may be asked what it holds through (its mode's row)."""

    @classmethod
    def from_settings(cls, opening: Opening) -> HttpConfig:
        """The config the settings give; the key from the environment or the secrets store."""
        http = opening.settings.of(HttpSettings)
        delivery = opening.settings.of(DeliverySettings)
        keys = opening.settings.of(KeySettings)
        url = http.events_url
        if url is None:
            raise ConfigError(
                "openlineage.url is not set: set it with "
                f"'{DISTRIBUTION} settings set openlineage.url "
                "http://localhost:5000' (or OPENLINEAGE_URL), or use --dry-run"
            )
        key = None if opening.environ.get(API_KEY_ENV) else ecosystem_api_key(opening)
        key = key or resolve_secret(
            opening.environ,
            http.api_key_secret_ref,
            API_KEY_ENV,
            store=opening.secrets,
            setting="openlineage.apiKey.secretRef",
        )
        if key is not None:
            check_header_safe(key)
            check_key_destination(
                key, [url], opening.settings, opening.secrets, setting="openlineage.url"
            )
        # The proxy our client will really use (a host's own client picks its own).
        proxy = environment_proxy(url) if opening.supplied.client(KIND) is None else None
        check_key_transport(url, key is not None, keys.allow_insecure_key, proxy)
        return cls(
            url,
            api_key=key.value if key else None,
            gzip_body=http.compression == "gzip",
            timeout=delivery.timeout,
            concurrency=delivery.concurrency,
            retry=RetryPolicy(max_time=delivery.retry_max_time),
            verify=keys.tls_ca_bundle or keys.tls_verify,
            key_origin=key.origin if key else None,
            key_fix=key.fix if key else None,
            refusal=mode_of(opening.settings).refusal,
            address="--url"
            if opening.settings.source("openlineage.url") == "given"
            else "openlineage.url",
            doubt=next(iter(url_doubts(opening.settings)), None),
            asking=mode_of(opening.settings).asking,
        )

    @property
    def name(self) -> str:
        """The address events are posted to."""
        return self.url


class HttpDestination:
    """POSTs each event as JSON; per-run order, retries, and a clear verdict on outages."""

    def __init__(
        self, config: HttpConfig, supplied: Supplied | None = None, *, seed: int | None = None
    ) -> None:
        from ... import __version__

        supplied = supplied or Supplied()
        self.config = config
        self.url = config.url
        self.name = config.url
        self.concurrency = config.concurrency
        # An OpenLineage server files a read under the version current when it takes it: the
        # engine holds back each event, not each run, until those it depends on are accepted.
        self.event_legs = True
        self.retry = config.retry
        self.redact = Redactor(config.api_key)
        self._on_retry = supplied.on_retry
        self._signs = FirstSigns(
            config.url,
            address=config.address,
            retry_time=config.retry.max_time,
            doubt=config.doubt,
            warn=supplied.on_warning,
            notice=supplied.on_notice,
        )
        self._poster = poster_for(
            supplied.client(KIND),
            verify=config.verify,
            concurrency=config.concurrency,
            timeout=config.timeout,
            user_agent=f"{USER_AGENT_PREFIX}/{__version__}",
        )
        self._headers = {"Content-Type": "application/json"}
        if config.gzip_body:
            self._headers["Content-Encoding"] = "gzip"
        if config.api_key:
            self._headers["Authorization"] = f"Bearer {config.api_key}"
        self._masking = contextlib.ExitStack()
        self._last_success = time.monotonic()
        self._auth_refusals = 0
        self._rng = random.Random(seed)
        self._started = False
        # A server that keeps every event it is given (Feast) holds twice an event sent again
        # after its answer was lost: such an event is never sent again blind.
        self._keeps_duplicates = bool(config.asking) and all(
            asking.keeps_duplicates for asking in config.asking
        )

    async def start(self) -> None:
        """Open the client's connection pool; mask the key in the HTTP stack's logs. Once: the
        first of :meth:`forgotten` and the engine's start opens it."""
        self._last_success = time.monotonic()
        if self._started:
            return
        self._started = True
        self._masking.enter_context(masked_logs(self.redact))
        await self._poster.start()

    async def forgotten(self, namespace: str, run_ids: Sequence[str]) -> str | None:
        """What the server no longer has of the runs the ledger says it accepted (a sentence;
        every run is then sent again), or None (``recall.py``: Marquez can be asked), all
        within ``openlineage.timeout``; ``recall.CannotAsk`` when it could not be asked."""
        await self.start()
        return await forgotten(
            self._poster, self.url, namespace, run_ids, deadline=self.config.timeout
        )

    async def holdings(self, namespace: str, wanted: Wanted, runs: int) -> Holdings | None:
        """The runs of ``wanted`` the server already holds (``held.py``: Marquez can be
        asked), or None; ``recall.CannotAsk`` when it could not be asked. All the pages
        together have ``openlineage.retry.maxTime`` (at least ``openlineage.timeout``), and
        ``openlineage.timeout`` more for every 500 runs of the trail (the pages grow with it)."""
        await self.start()
        held = await holdings(
            self._poster,
            self.url,
            namespace,
            wanted,
            deadline=deadline_for(self.config.timeout, self.retry.max_time, runs),
            concurrency=self.concurrency,
            asking=self.config.asking,
        )
        if held is not None and held.keeps_duplicates:
            self._keeps_duplicates = True
        return held

    async def send(self, run: TranslatedRun, stop: asyncio.Event, tally: Tally) -> RunOutcome:
        """POST the run's events one after the other; the first refusal ends the run."""
        for body in run.bodies:
            if stop.is_set():
                return RunOutcome(tally.accepted, "cancelled before every event was sent")
            if self.config.gzip_body:
                body = gzip.compress(body, mtime=0)
            error = await self._post(body, stop)
            if error is not None:
                return RunOutcome(tally.accepted, error)
            tally.accepted += 1
        return RunOutcome(tally.accepted)

    async def close(self) -> None:
        """Close the client we opened (a host's is the host's to close); stop masking logs."""
        try:
            await self._poster.close()
        finally:
            self._masking.close()

    async def _post(self, body: bytes, stop: asyncio.Event) -> str | None:
        """One event until accepted (None), refused (the reason), or out of retry time."""
        policy = self.retry
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            asked: float | None = None
            # Whether the attempt got no answer at all (refused, reset, closed): an event whose
            # connection broke when the server went away, then found none for the rest of its
            # time, met an outage.
            unreachable = False
            try:
                answer = await self._poster.post(
                    self.url, body, self._headers, once=self._keeps_duplicates
                )
            except BadCertificate as exc:  # no retry will make it trusted: stop now
                raise DestinationUnreachable(
                    self.redact(
                        f"the server at {self.url} could not be reached securely: its TLS "
                        f"certificate was not accepted ({exc}); if it is the right server, point "
                        "openlineage.tls.caBundle at the certificate of the CA that signed it"
                    ),
                    explained=True,
                ) from None
            except NoTls as exc:  # no retry will make it speak TLS: stop now
                raise DestinationUnreachable(
                    self.redact(no_tls(self.url, str(exc))), explained=True
                ) from None
            except NoAnswer as exc:
                if isinstance(exc, Refused):
                    self._signs.connection_refused()
                elif self._keeps_duplicates:
                    return self._lost(f"no answer ({self.redact(str(exc))})")
                unreachable = True
                reason = f"no answer from {self.url} ({self.redact(str(exc))})"
            except TimeoutError:
                if self._keeps_duplicates:
                    return self._lost(f"no answer within {self.config.timeout:g} s")
                reason = (
                    f"no answer from {self.url} within the timeout "
                    f"({self.config.timeout:g} s, openlineage.timeout)"
                )
            except TransportFailure as exc:
                if self._keeps_duplicates:
                    return self._lost(f"the connection failed ({self.redact(str(exc))})")
                reason = f"connection to {self.url} failed ({self.redact(str(exc))})"
            else:
                if 200 <= answer.status < 300:
                    self._last_success = time.monotonic()
                    self._auth_refusals = 0
                    self._signs.accepted()
                    return None
                reason = self._describe(answer)
                if answer.status in (401, 403):
                    self._refused_credentials(answer, reason)
                if self.config.refusal is not None:
                    own = self.config.refusal(answer.status, answer.body)
                    if own is not None:
                        return own
                if answer.status not in policy.status_forcelist or _says_client_error(answer):
                    self._signs.refused(answer)
                    return reason
                asked = retry_after_seconds(answer.retry_after, time.time())
            elapsed = time.monotonic() - started
            left = policy.max_time - elapsed
            if left <= 0 and unreachable:
                # No server now: an outage once nothing was accepted for a whole window. An
                # event sent just before the server went away waits for that (at most one more
                # window), rather than being given up as if the server had refused its run.
                left = self._until_outage(reason, policy.max_time)
                if elapsed >= 2 * policy.max_time:
                    left = 0
            if left <= 0:
                return f"gave up after {attempt} attempts in {elapsed:.0f} s: {reason}"
            wait = policy.backoff(attempt, self._rng)
            if asked is not None:
                wait = max(wait, asked)  # a server may ask for longer, never for less
            if self._on_retry is not None:
                self._on_retry(Retry(self.name, reason, attempt, left))
            if await _stopped(stop, min(wait, left)):
                return "cancelled before every event was sent"

    def _lost(self, why: str) -> str:
        """Why an event whose answer was lost is not sent again: the server may hold it, and
        holds twice what it is given twice; the next export asks it what it holds first."""
        return (
            f"{why}: the server at {self.url} may have taken it and keeps every event it is "
            "given, so it is not sent again blind; the next export asks it what it holds"
        )

    def _refused_credentials(self, answer: Answer, reason: str) -> None:
        """401/403: the key is wrong for every run once it keeps happening; stop then."""
        self._auth_refusals += 1
        if self._auth_refusals < AUTH_STRIKES:
            return
        if self.config.key_origin is None:
            fix = (
                f"it asks for an API key: store it with '{DISTRIBUTION} secrets set NAME' "
                "and set openlineage.apiKey.secretRef to NAME"
            )
        else:
            fix = (
                f"the API key from {self.config.key_origin} is wrong or lacks the permission; "
                f"{self.config.key_fix}"
            )
        raise ConfigError(
            self.redact(
                f"the server at {self.url} refused {AUTH_STRIKES} requests in a row with "
                f"HTTP {answer.status} ({reason}): {fix}"
            )
        )

    def _until_outage(self, reason: str, window: float) -> float:
        """Seconds until nothing will have been accepted for ``window``; raises
        :class:`DestinationUnreachable` when that is already so."""
        quiet_for = time.monotonic() - self._last_success
        if quiet_for >= window:
            # The address once: the reason names it too ("no answer from URL (refused)").
            cause = reason.replace(f" from {self.url}", "").replace(f" to {self.url}", "")
            if cause.startswith("no answer (") and cause.endswith(")"):
                cause = cause.removeprefix("no answer (")[:-1]
            raise DestinationUnreachable(
                f"the server at {self.url} could not be reached for {window:.0f} s "
                f"({cause}); nothing more was sent"
            )
        return window - quiet_for

    def _describe(self, answer: Answer) -> str:
        return describe_answer(answer, self.redact)


async def _stopped(stop: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds``, or less when ``stop`` is set; True when it was."""
    try:
        async with asyncio.timeout(seconds):
            await stop.wait()
    except TimeoutError:
        return False
    return True


def _says_client_error(answer: Answer) -> bool:
    """Marquez answers malformed JSON with a 500 whose body says 400: that is a refusal."""
    if answer.status != 500:
        return False
    try:
        body = orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        return False
    code = body.get("code") if isinstance(body, dict) else None
    return isinstance(code, int) and 400 <= code < 500
