"""Retry policy as named data: which answers are worth another try, and how long to wait;
:class:`Tries`, the one loop's bookkeeping every retrying sender shares (a request's, in
``http/destination.py``; the events a batch failed as retriable, in ``http/batching.py``)."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, bounded in total time per event."""

    status_forcelist: frozenset[int] = frozenset({408, 425, 429, 500, 502, 503, 504})
    """HTTP statuses that mean "try again later"; every other 4xx/5xx is a refusal."""
    backoff_factor: float = 0.25
    """First wait in seconds; doubled after each failed attempt."""
    max_backoff: float = 10.0
    """No single wait is longer than this (a server's Retry-After may ask for longer, up to the
    time left)."""
    max_time: float = 30.0
    """Total seconds spent on one event before giving up on it."""

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """The wait before retry number ``attempt`` (1-based): exponential, with jitter."""
        # The doubling stops at 2**64: any later attempt waits max_backoff anyway, and 2**1024
        # is an int no float holds (a day of 503s reaches attempt 1025).
        doublings = min(max(attempt - 1, 0), 64)
        ceiling = min(self.max_backoff, self.backoff_factor * 2.0**doublings)
        return float(ceiling * (0.5 + rng.random() / 2))


class Tries:
    """The tries of one thing sent (an event, a request) under a policy: how many so far, how
    long since the first, and the pause before the next, cut short when the export stops."""

    def __init__(self, policy: RetryPolicy, rng: random.Random) -> None:
        self.policy = policy
        self.attempt = 0
        """Tries so far (the caller counts each as it makes it)."""
        self._rng = rng
        self._started = time.monotonic()

    @property
    def elapsed(self) -> float:
        """Seconds since the first try began."""
        return time.monotonic() - self._started

    @property
    def left(self) -> float:
        """Seconds left of ``max_time`` (none left: 0 or less)."""
        return self.policy.max_time - self.elapsed

    async def pause(self, stop: asyncio.Event, left: float, asked: float | None = None) -> bool:
        """Wait the backoff before the next try (at least what a server ``asked`` for, never
        past ``left``); True when the export stopped meanwhile."""
        wait = self.policy.backoff(self.attempt, self._rng)
        if asked is not None:
            wait = max(wait, asked)  # a server may ask for longer, never for less
        return await stopped_within(stop, min(wait, left))


async def stopped_within(stop: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds``, or less when ``stop`` is set; True when it was."""
    try:
        async with asyncio.timeout(seconds):
            await stop.wait()
    except TimeoutError:
        return False
    return True


_DIGITS = frozenset("0123456789")


def retry_after_seconds(value: str | None, now_epoch: float) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date), if valid.

    Delta-seconds are ASCII digits only (``"²"`` is no number of seconds); a date in the past
    asks for 0. The caller never waits less than its own backoff, whatever is asked.
    """
    if not value:
        return None
    value = value.strip()
    if value and set(value) <= _DIGITS:
        return float(min(int(value[:12]), 10**9))
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now_epoch)
    except (TypeError, ValueError, IndexError, OverflowError, AttributeError):
        return None
