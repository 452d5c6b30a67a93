"""Retry policy: what is worth another try, how long to wait, and what Retry-After may ask."""

from __future__ import annotations

import random
from email.utils import formatdate

import pytest

from openlineage_export.deliver.retry import RetryPolicy, retry_after_seconds

NOW = 1_796_000_000.0


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(backoff_factor=0.25, max_backoff=10.0)
    rng = random.Random(7)
    for attempt, ceiling in [(1, 0.25), (2, 0.5), (3, 1.0), (4, 2.0), (7, 10.0), (30, 10.0)]:
        waits = [policy.backoff(attempt, rng) for _ in range(200)]
        assert min(waits) >= ceiling / 2 and max(waits) <= ceiling
        assert max(waits) - min(waits) > ceiling / 10, "jittered, not a fixed wait"


def test_what_is_retried_is_named_data() -> None:
    assert RetryPolicy().status_forcelist == {408, 425, 429, 500, 502, 503, 504}


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120.0),
        (" 7 ", 7.0),
        ("0", 0.0),
        ("99999999999999999999", 1e9),
        (formatdate(NOW + 30, usegmt=True), 30.0),
        (formatdate(NOW - 3600, usegmt=True), 0.0),
    ],
)
def test_retry_after_in_seconds_or_as_a_date(value: str, seconds: float) -> None:
    assert retry_after_seconds(value, NOW) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "value",
    [None, "", "²", "١٢", "-5", "1.5", "1e9", "soon", "Mon, 99 Foo 2026 25:61:00 GMT", "\x00"],
)
def test_anything_else_asks_for_nothing(value: str | None) -> None:
    assert retry_after_seconds(value, NOW) is None


@pytest.mark.parametrize("attempt", [64, 65, 1024, 1025, 10**6, 2**63])
@pytest.mark.parametrize("factor", [0.0, 0.25, 1e300])
def test_backoff_of_any_attempt_is_a_wait_within_the_cap(attempt: int, factor: float) -> None:
    """Found by attacker B (f15): attempt 1025 doubled the first wait 1,024 times, an int no
    float holds (OverflowError inside the send, the run recorded as refused by a crash of ours);
    a server answering 503 for a workspace's ``retry.maxTime`` of a day gets there."""
    policy = RetryPolicy(backoff_factor=factor, max_backoff=10.0)
    wait = policy.backoff(attempt, random.Random(attempt))
    ceiling = min(10.0, factor * 2.0**64)
    assert ceiling / 2 <= wait <= ceiling
