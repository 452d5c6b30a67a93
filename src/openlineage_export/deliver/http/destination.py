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
from collections.abc import Sequence

import orjson

from ... import DISTRIBUTION
from ...errors import ConfigError, DestinationUnreachable
from ...guards.secrecy import Redactor, masked_logs
from ...translate.asking import keeps_duplicates
from ...translate.encoded import TranslatedRun
from ..destination import Retry, RunOutcome, Supplied, Tally
from ..retry import Tries, retry_after_seconds
from .batching import Batches
from .client import poster_for
from .config import KIND, HttpConfig
from .held import Holdings, Wanted, deadline_for, holdings
from .poster import Answer, BadCertificate, NoAnswer, NoTls, Refused, TransportFailure
from .recall import forgotten
from .signs import FirstSigns, describe_answer, no_tls

USER_AGENT_PREFIX = DISTRIBUTION

__all__ = ["KIND", "HttpConfig", "HttpDestination"]

RUNS_A_REQUEST = 8
"""Where the server may take batches, this many times ``openlineage.concurrency`` editor runs
send at once (each still one event at a time, in causal order)."""

AUTH_STRIKES = 3
"""After this many 401/403 answers in a row (nothing accepted between), the key is wrong for
every run: the export stops instead of trying each run."""


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
        self._requests = asyncio.Semaphore(max(1, config.concurrency))
        """``openlineage.concurrency`` requests in flight at most, batches or single events."""
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
        self._plain = {"Content-Type": "application/json"}
        if config.api_key:
            self._plain["Authorization"] = f"Bearer {config.api_key}"
        self._headers = dict(self._plain)
        if config.gzip_body:
            self._headers["Content-Encoding"] = "gzip"
        self._masking = contextlib.ExitStack()
        self._last_success = time.monotonic()
        self._auth_refusals = 0
        self._rng = random.Random(seed)
        self._started = False
        # A server that keeps every event it is given (Feast) holds twice an event sent again
        # after its answer was lost: such an event is never sent again blind.
        self.keeps_duplicates = keeps_duplicates(config.asking)
        self._batches = Batches(self, seed=seed)

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
            concurrency=self.config.concurrency,
            asking=self.config.asking,
        )
        if held is not None and keeps_duplicates(self.config.asking, held.asking.name):
            self.keeps_duplicates = True
        return held

    async def send(self, run: TranslatedRun, stop: asyncio.Event, tally: Tally) -> RunOutcome:
        """Send the run's events one after the other (each in the batch being gathered, or
        alone where the server takes no batches); the first refusal ends the run."""
        for body in run.bodies:
            if stop.is_set():
                return RunOutcome(tally.accepted, "cancelled before every event was sent")
            error = await self._batches.send(body, stop)
            if error is not None:
                return RunOutcome(tally.accepted, error)
            tally.accepted += 1
        return RunOutcome(tally.accepted)

    @property
    def concurrency(self) -> int:
        """Editor runs sending at once (the engine reads it as delivery begins, once the
        ledger told what an earlier export learnt of batches): ``openlineage.concurrency``, or
        :data:`RUNS_A_REQUEST` times as many where the server may take batches, so that a
        batch has events of many runs to carry; the requests in flight stay within
        ``openlineage.concurrency`` all the same. A concurrency of 1 stays one run at a time
        (in trail order, whatever the server takes)."""
        if self._batches.taken is False or self.config.concurrency == 1:
            return self.config.concurrency
        return self.config.concurrency * RUNS_A_REQUEST

    @property
    def batches(self) -> bool | None:
        """Whether the server takes the spec's batches (None: not known yet)."""
        return self._batches.learnt

    @batches.setter
    def batches(self, taken: bool | None) -> None:
        """What an earlier export learnt of this destination (the ledger remembers it)."""
        self._batches.taken = taken

    @property
    def batches_taken(self) -> int:
        """How many batches the server took in this export."""
        return self._batches.batches_taken

    @property
    def notes(self) -> list[str]:
        """What this export learnt of the server's batches, in words (for the summary)."""
        return self._batches.notes

    async def post_alone(self, body: bytes, stop: asyncio.Event) -> str | None:
        """One event in a request of its own: None, taken; else why not."""
        if self.config.gzip_body:
            body = gzip.compress(body, mtime=0)
        async with self._requests:
            if stop.is_set():  # the export stopped while this waited its turn
                return _STOPPED
            got = await self._exchange(self.url, body, self._headers, stop)
        return got if isinstance(got, str) else None

    async def post_batch(
        self, url: str, body: bytes, gzipped: bool, stop: asyncio.Event, decided: frozenset[int]
    ) -> Answer | str:
        """One batch (a JSON array, gzipped or not) until answered: the answer when it is a
        2xx or in ``decided`` (those the batch reading decides on), else why not (a refusal,
        or no answer in the retry time)."""
        headers = self._headers if gzipped else self._plain
        async with self._requests:
            if stop.is_set():  # the export stopped while this waited its turn
                return _STOPPED
            return await self._exchange(url, body, headers, stop, passing=decided)

    async def close(self) -> None:
        """Close the client we opened (a host's is the host's to close); stop masking logs."""
        self._batches.close()
        try:
            await self._poster.close()
        finally:
            self._masking.close()

    async def _exchange(
        self,
        url: str,
        body: bytes,
        headers: dict[str, str],
        stop: asyncio.Event,
        passing: frozenset[int] = frozenset(),
    ) -> Answer | str:
        """One request until answered with a 2xx or a status in ``passing`` (the answer),
        refused or out of retry time (the reason)."""
        policy = self.retry
        tries = Tries(policy, self._rng)
        while True:
            tries.attempt += 1
            asked: float | None = None
            # Whether the attempt got no answer at all (refused, reset, closed): an event whose
            # connection broke when the server went away, then found none for the rest of its
            # time, met an outage.
            unreachable = False
            try:
                answer = await self._poster.post(url, body, headers, once=self.keeps_duplicates)
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
                elif self.keeps_duplicates:
                    return self._lost(f"no answer ({self.redact(str(exc))})")
                unreachable = True
                reason = f"no answer from {self.url} ({self.redact(str(exc))})"
            except TimeoutError:
                if self.keeps_duplicates:
                    return self._lost(f"no answer within {self.config.timeout:g} s")
                reason = (
                    f"no answer from {self.url} within the timeout "
                    f"({self.config.timeout:g} s, openlineage.timeout)"
                )
            except TransportFailure as exc:
                if self.keeps_duplicates:
                    return self._lost(f"the connection failed ({self.redact(str(exc))})")
                reason = f"connection to {self.url} failed ({self.redact(str(exc))})"
            else:
                if 200 <= answer.status < 300:
                    self._last_success = time.monotonic()
                    self._auth_refusals = 0
                    self._signs.accepted()
                    return answer
                if answer.status in passing:
                    return answer
                reason = self.describe(answer)
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
            elapsed = tries.elapsed
            left = policy.max_time - elapsed
            if left <= 0 and unreachable:
                # No server now: an outage once nothing was accepted for a whole window. An
                # event sent just before the server went away waits for that (at most one more
                # window), rather than being given up as if the server had refused its run.
                left = self._until_outage(reason, policy.max_time)
                if elapsed >= 2 * policy.max_time:
                    left = 0
            if left <= 0:
                return f"gave up after {tries.attempt} attempts in {elapsed:.0f} s: {reason}"
            if self._on_retry is not None:
                self._on_retry(Retry(self.name, reason, tries.attempt, left))
            if await tries.pause(stop, left, asked):
                return _STOPPED

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

    def describe(self, answer: Answer) -> str:
        """An answer that refuses, in words (the key masked)."""
        return describe_answer(answer, self.redact)


_STOPPED = "cancelled before every event was sent"


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
