"""The spec's batches (deliver/http/batches.py, batching.py), against a loopback server that
answers every way the spec allows (tests/support/batch_server.py): every event accepted exactly
once, whatever the answers."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakeserver import FakeServer
from helpers import DEMO
from support.batch_server import Failure, Plan, SpecBatch, identity, spec_batch_fixture

from openlineage_export.deliver.http.batches import Failed, Gatherer, Outcome, read_answer
from openlineage_export.deliver.http.config import HttpConfig
from openlineage_export.deliver.http.destination import HttpDestination
from openlineage_export.export import ExportReport, ExportRequest, run_export
from openlineage_export.translate import feast

__all__ = ["spec_batch_fixture"]  # the fixture ``spec_batch``


@pytest.fixture(scope="module")
def expected() -> list[dict[str, Any]]:
    out = io.BytesIO()
    report = run_export(ExportRequest(workspace=DEMO, dry_run=True, output=out, environ={}))
    assert report.exit_code == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def export(
    server: SpecBatch, state: Path, said: list[str] | None = None, **environ: str
) -> ExportReport:
    """An export of the demo to ``server``; what it said (warnings at once, then the summary's
    notes) into ``said``."""
    report = run_export(
        ExportRequest(
            workspace=DEMO,
            environ={
                "OPENLINEAGE_URL": server.url,
                "OPENLINEAGE_EXPORT_STATE_DIR": str(state),
                **environ,
            },
            on_warning=None if said is None else said.append,
        )
    )
    if said is not None:
        said += report.notes
    return report


def batches(server: SpecBatch) -> list[tuple[str, int, int]]:
    return [a for a in server.answered if a[0] == server.batch_path]


def test_every_event_goes_in_batches_exactly_once(
    spec_batch: SpecBatch, tmp_path: Path, expected: list[dict[str, Any]]
) -> None:
    report = export(spec_batch, tmp_path / "state")
    assert report.exit_code == 0 and report.events_sent == len(expected)
    assert spec_batch.check(expected).ok
    sent = batches(spec_batch)
    assert sent and all(status == 204 for _, _, status in sent)
    assert len(spec_batch.answered) == len(sent)  # no single event
    assert len(sent) < len(expected)  # the premise: events shared requests


def test_no_two_events_of_one_run_share_a_batch(
    spec_batch: SpecBatch, tmp_path: Path, expected: list[dict[str, Any]]
) -> None:
    """The spec promises no order within a batch: a run's events go one batch after another."""
    export(spec_batch, tmp_path / "state")
    requests = [r for r in spec_batch.server.requests if r.path.endswith("/batch")]
    for request in requests:
        runs = [e["run"]["runId"] for e in json.loads(request.body)]
        assert len(runs) == len(set(runs)), runs


def test_retriable_failures_are_sent_again_the_others_refuse_their_run(
    spec_batch: SpecBatch, tmp_path: Path, expected: list[dict[str, Any]]
) -> None:
    retried, refused = expected[0], expected[-1]
    assert editor_run(retried) != editor_run(refused)  # the premise: two runs
    tried: list[str] = []

    def fail(index: int, event: Any) -> Failure | None:
        if identity(event) == identity(refused):
            return Failure("Unsupported facets", retriable=False)
        if identity(event) == identity(retried) and not tried:
            tried.append("once")
            return Failure("Timeout", retriable=True)
        return None

    spec_batch.fail = fail
    report = export(spec_batch, tmp_path / "state", OPENLINEAGE__TRANSPORT__RETRY__MAX_TIME="60")
    assert tried  # the premise: the retriable failure was met
    assert report.runs_failed == 1
    [failed] = report.failed
    assert "Unsupported facets" in failed.reason
    check = spec_batch.check(expected)
    assert not check.twice and not check.unexpected  # the retriable one taken once, again
    assert check.missing and {editor_run(e) for e in check.missing} == {failed.run_id}
    assert failed.run_id == editor_run(refused)


def editor_run(event: dict[str, Any]) -> str:
    """The pipeline run an event belongs to (a stage run's parent)."""
    parent = event["run"]["facets"].get("parent", {}).get("run", {}).get("runId")
    return str(parent or event["run"]["runId"])


@pytest.mark.parametrize("status", [404, 405, 415, 501, 400, 422])
def test_a_server_without_batches_gets_single_events_said_once_and_remembered(
    tmp_path: Path, expected: list[dict[str, Any]], status: int
) -> None:
    with spec_batch_server(batches=False, no_batch_status=status) as server:
        said: list[str] = []
        report = export(server, tmp_path / "state", said)
        assert report.exit_code == 0 and server.check(expected).ok
        assert len(batches(server)) == 1  # the first batch only
        assert [m for m in said if "takes no batches" in m] == [m for m in said if "batch" in m]
        assert len([m for m in said if "takes no batches" in m]) == 1
        # The next export (a grown trail, or --full): single events, without asking again.
        again: list[str] = []
        before = len(server.answered)
        report = run_export(
            ExportRequest(
                workspace=DEMO,
                full=True,
                environ={
                    "OPENLINEAGE_URL": server.url,
                    "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
                },
                on_warning=again.append,
            )
        )
        assert report.events_sent == len(expected)
        again += report.notes
        assert all(path != server.batch_path for path, _, _ in server.answered[before:])
        assert not [m for m in again if "batch" in m]


def test_413_halves_the_batch(tmp_path: Path, expected: list[dict[str, Any]]) -> None:
    with spec_batch_server(max_events=3) as server:
        report = export(server, tmp_path / "state")
        assert report.exit_code == 0 and server.check(expected).ok
        sizes = [(n, status) for _, n, status in batches(server)]
        assert any(status == 413 for _, status in sizes)
        assert all(n <= 3 for n, status in sizes if status == 204)


def test_gzip_refused_then_not_sent(tmp_path: Path, expected: list[dict[str, Any]]) -> None:
    with spec_batch_server(gzip=False, gzip_refusal=400) as server:
        said: list[str] = []
        report = export(
            server, tmp_path / "state", said, OPENLINEAGE__TRANSPORT__COMPRESSION="gzip"
        )
        assert report.exit_code == 0 and server.check(expected).ok
        assert len([m for m in said if "gzipped batch" in m]) == 1
        refused = [a for a in batches(server) if a[2] == 400]
        assert len(refused) >= 1
        gzipped = [r for r in server.server.requests if r.headers.get("content-encoding") == "gzip"]
        assert len(gzipped) == len(refused)  # once refused, never gzipped again


def test_a_summary_without_indexes_never_resends_to_a_server_keeping_duplicates(
    tmp_path: Path, expected: list[dict[str, Any]]
) -> None:
    """Feast's answer (partial_success, a summary only), an event stored all the same: its
    batch is not sent again blind; its runs fail saying why."""
    with spec_batch_server() as server:
        server.plan(Plan(failures={0: Failure("Server error", stored=True)}, indexes=False))
        report = export(server, tmp_path / "state", OPENLINEAGE_SERVER="feast")
        check = server.check(expected)
        assert not check.twice and not check.unexpected
        assert report.runs_failed >= 1
        assert all("none is sent again blind" in f.reason for f in report.failed)


def test_the_answers_are_read_exactly() -> None:
    assert read_answer(204, b"", 3).failed == ()
    assert read_answer(200, b'{"status":"success","summary":{}}', 3).failed == ()
    assert read_answer(200, b'{"status":"partial_success","summary":{}}', 3).failed is None
    body = (
        b'{"status":"partial_success","failed_events":[{"index":2,"reason":"x",'
        b'"retriable":true},{"index":0,"reason":"y\\u202e","retriable":false}]}'
    )
    assert read_answer(200, body, 3).failed == (
        Failed(0, "y\u202e", False),
        Failed(2, "x", True),
    )
    # an index out of the batch, or twice: no index we can use
    out = b'{"status":"partial_success","failed_events":[{"index":3}]}'
    assert read_answer(200, out, 3).failed is None
    twice = b'{"status":"partial_success","failed_events":[{"index":1},{"index":1}]}'
    assert read_answer(200, twice, 3).failed is None


@contextlib.contextmanager
def spec_batch_server(**options: Any) -> Iterator[SpecBatch]:
    """A :class:`SpecBatch` of its own, set up with ``options``, stopped on leaving."""
    server = FakeServer(batches=True)
    try:
        yield SpecBatch(server, **options)
    finally:
        server.stop()


def test_batches_in_flight_are_bounded_and_what_waits_fills_the_next() -> None:
    """One batch in flight (a server that keeps duplicates, Feast: it answers one request at a
    time): the events handed over meanwhile wait and go together in the next batch, up to its
    bound, once the first is answered; two in flight when two are allowed."""

    async def scenario(in_flight: int) -> list[int]:
        started: list[int] = []
        release = asyncio.Event()

        async def post(bodies: list[bytes]) -> list[Outcome]:
            started.append(len(bodies))
            await release.wait()
            return [None] * len(bodies)

        gatherer = Gatherer(post, 100, 1 << 20, lambda: in_flight)
        first = asyncio.ensure_future(gatherer.submit(b"{}"))
        while not started:  # the first batch goes alone, in the next turn of the loop
            await asyncio.sleep(0)
        rest = [asyncio.ensure_future(gatherer.submit(b"{}")) for _ in range(250)]
        for _ in range(10):  # turns of the loop: nothing more may start beyond the bound
            await asyncio.sleep(0)
        seen = list(started)
        release.set()
        assert await asyncio.gather(first, *rest) == [None] * 251
        return [*seen, -1, *started[len(seen) :]]

    assert asyncio.run(scenario(1)) == [1, -1, 100, 100, 50]
    assert asyncio.run(scenario(2)) == [1, 100, -1, 100, 50]


def test_the_destination_allows_one_batch_in_flight_to_a_server_that_keeps_duplicates() -> None:
    """The wiring of the bound above: the destination's batches read whether the server keeps
    duplicates when a batch is to go, so that a Feast found only by asking it (``auto``) or
    remembered by the ledger gets one batch at a time too."""
    url = "http://127.0.0.1:9/api/v1/lineage"
    elsewhere = HttpDestination(HttpConfig(url, concurrency=64))
    assert elsewhere._batches._in_flight() == 4  # one for every 16 of concurrency
    assert HttpDestination(HttpConfig(url, concurrency=8))._batches._in_flight() == 1
    found = HttpDestination(HttpConfig(url, concurrency=64))
    found.keeps_duplicates = True  # as holdings() or export/holding.py tell it, before sending
    assert found._batches._in_flight() == 1
    configured = HttpDestination(HttpConfig(url, concurrency=64, asking=(feast.ASKING,)))
    assert configured._batches._in_flight() == 1
