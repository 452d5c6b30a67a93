"""The spec's batch endpoint as tests/support/batch_server.py plays it: its answers are the spec's
(spec/OpenLineage.yml), its scripts do what they say, and it tells what it accepted."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fakeserver import FakeServer
from support.batch_server import (
    NO_BATCH_STATUSES,
    Failure,
    Plan,
    SpecBatch,
    spec_batch_fixture,  # noqa: F401  (the fixture)
)

JSON = {"Content-Type": "application/json"}


def event(n: int, kind: str = "START") -> dict[str, Any]:
    return {
        "eventTime": f"2026-11-01T00:00:{n % 60:02d}.000Z",
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "eventType": kind,
        "run": {"runId": f"01a19483-60dc-7ca6-a43a-{n:012d}"},
        "job": {"namespace": "ns", "name": f"job-{n}"},
        "inputs": [],
        "outputs": [],
    }


@pytest.fixture
def http(spec_batch: SpecBatch) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=spec_batch.url, timeout=30) as client:
        yield client


def post_batch(http: httpx.Client, events: Any, **kwargs: Any) -> httpx.Response:
    return http.post("/api/v1/lineage/batch", content=json.dumps(events), headers=JSON, **kwargs)


def test_a_batch_taken_whole_is_204_without_a_body_and_each_event_kept_once(
    spec_batch: SpecBatch, http: httpx.Client
) -> None:
    events = [event(n) for n in range(5)]
    answer = post_batch(http, events)
    assert answer.status_code == 204
    assert answer.content == b""
    assert spec_batch.accepted == events
    assert spec_batch.check(events).ok
    assert spec_batch.answered == [("/api/v1/lineage/batch", 5, 204)]


def test_partial_success_names_each_failed_event_by_index_as_the_spec_says(
    spec_batch: SpecBatch, http: httpx.Client
) -> None:
    events = [event(n) for n in range(4)]
    spec_batch.plan(
        Plan(
            failures={
                1: Failure("Timeout", retriable=True),
                3: Failure("Unsupported facets", False),
            }
        )
    )
    answer = post_batch(http, events)
    assert answer.status_code == 200
    assert answer.json() == {
        "status": "partial_success",
        "summary": {
            "received": 4,
            "successful": 2,
            "failed": 2,
            "retriable": 1,
            "non_retriable": 1,
        },
        "failed_events": [
            {"index": 1, "reason": "Timeout", "retriable": True},
            {"index": 3, "reason": "Unsupported facets", "retriable": False},
        ],
    }
    assert spec_batch.accepted == [events[0], events[2]]
    # The retriable one sent again is taken; the check then misses only the refused one.
    assert post_batch(http, [events[1]]).status_code == 204
    check = spec_batch.check(events)
    assert check.missing == [events[3]] and not check.twice and not check.unexpected


def test_a_summary_without_indexes_and_an_event_failed_after_it_was_stored_as_feast_answers(
    spec_batch: SpecBatch, http: httpx.Client
) -> None:
    events = [event(n) for n in range(3)]
    spec_batch.plan(Plan(failures={0: Failure(stored=True)}, indexes=False))
    answer = post_batch(http, events)
    assert answer.status_code == 200
    assert answer.json() == {
        "status": "partial_success",
        "summary": {
            "received": 3,
            "successful": 2,
            "failed": 1,
            "retriable": 1,
            "non_retriable": 0,
        },
    }
    assert spec_batch.check(events).ok  # failed, yet kept
    post_batch(http, events[:1])  # a client that resends what "failed"
    assert spec_batch.check(events).twice == [events[0]]


def test_all_taken_can_be_said_with_a_200_success_body(
    spec_batch: SpecBatch, http: httpx.Client
) -> None:
    spec_batch.plan(Plan(success_body=True))
    answer = post_batch(http, [event(1), event(2)])
    assert answer.status_code == 200
    assert answer.json() == {
        "status": "success",
        "summary": {
            "received": 2,
            "successful": 2,
            "failed": 0,
            "retriable": 0,
            "non_retriable": 0,
        },
    }


@pytest.mark.parametrize("status", NO_BATCH_STATUSES)
def test_a_server_without_the_batch_endpoint_refuses_it_and_still_takes_single_events(
    spec_batch: SpecBatch, http: httpx.Client, status: int
) -> None:
    spec_batch.batches = False
    spec_batch.no_batch_status = status
    assert post_batch(http, [event(1)]).status_code == status
    assert spec_batch.accepted == []
    single = http.post("/api/v1/lineage", content=json.dumps(event(1)), headers=JSON)
    assert single.status_code == 200
    assert spec_batch.check([event(1)]).ok
    assert [a[2] for a in spec_batch.answered] == [status, 200]


def test_a_batch_over_its_bounds_is_413_and_nothing_of_it_is_kept(
    spec_batch: SpecBatch, http: httpx.Client
) -> None:
    spec_batch.max_events = 2
    assert post_batch(http, [event(n) for n in range(3)]).status_code == 413
    assert post_batch(http, [event(n) for n in range(2)]).status_code == 204
    spec_batch.max_events = None
    spec_batch.max_bytes = len(json.dumps([event(7)]))
    assert post_batch(http, [event(7), event(8)]).status_code == 413
    assert post_batch(http, [event(7)]).status_code == 204
    assert spec_batch.check([event(0), event(1), event(7)]).ok


def test_gzip_is_taken_decoded_or_refused(spec_batch: SpecBatch, http: httpx.Client) -> None:
    events = [event(1), event(2)]
    zipped = gzip.compress(json.dumps(events).encode())
    headers = {**JSON, "Content-Encoding": "gzip"}
    assert http.post("/api/v1/lineage/batch", content=zipped, headers=headers).status_code == 204
    assert spec_batch.check(events).ok
    spec_batch.gzip = False
    answer = http.post("/api/v1/lineage/batch", content=zipped, headers=headers)
    assert answer.status_code == 415
    spec_batch.gzip_refusal = 400  # Feast's answer to a gzip body
    assert http.post("/api/v1/lineage/batch", content=zipped, headers=headers).status_code == 400
    assert spec_batch.check(events).ok


def test_a_body_that_is_no_array_of_events_is_400(
    spec_batch: SpecBatch, http: httpx.Client
) -> None:
    assert post_batch(http, event(1)).status_code == 400
    bad = http.post("/api/v1/lineage/batch", content=b"[{", headers=JSON)
    assert bad.status_code == 400
    assert spec_batch.accepted == []


def test_a_lost_answer_keeps_the_batch_and_a_blind_resend_shows_in_the_check(
    spec_batch: SpecBatch, http: httpx.Client
) -> None:
    events = [event(1), event(2)]
    spec_batch.plan(Plan(lose_answer=True))
    with pytest.raises(httpx.TransportError):
        post_batch(http, events)
    assert spec_batch.check(events).ok
    assert post_batch(http, events).status_code == 204
    assert spec_batch.check(events).twice == events


def test_plans_answer_the_next_batches_in_order_then_every_event_is_taken(
    spec_batch: SpecBatch, http: httpx.Client
) -> None:
    spec_batch.plan(Plan(status=503), Plan(failures={0: Failure()}))
    assert post_batch(http, [event(1)]).status_code == 503
    assert post_batch(http, [event(1)]).status_code == 200
    assert post_batch(http, [event(1)]).status_code == 204
    assert spec_batch.check([event(1)]).ok


def test_a_rule_fails_events_in_every_batch(spec_batch: SpecBatch, http: httpx.Client) -> None:
    tried: set[str] = set()

    def once_each(index: int, sent: Any) -> Failure | None:
        # Each event fails retriably the first time it comes, then is taken.
        key = sent["run"]["runId"]
        if key in tried:
            return None
        tried.add(key)
        return Failure("Timeout")

    spec_batch.fail = once_each
    events = [event(1), event(2)]
    first = post_batch(http, events).json()
    assert [f["index"] for f in first["failed_events"]] == [0, 1]
    assert post_batch(http, events).status_code == 204
    assert spec_batch.check(events).ok


def test_the_check_tells_missing_twice_and_unexpected_apart() -> None:
    with FakeServer() as server:
        spec = SpecBatch(server)
        with httpx.Client(base_url=spec.url, timeout=30) as http:
            post_batch(http, [event(1), event(1), event(9)])
        check = spec.check([event(1), event(2)])
    assert check.missing == [event(2)]
    assert check.twice == [event(1)]
    assert check.unexpected == [event(9)]
    assert not check.ok
