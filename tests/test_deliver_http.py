"""HTTP delivery, end to end through run_export, against the scripted fake server.

What a real Marquez cannot be made to do (refuse, stall, reset, redirect, echo the key back)
is scripted here; tests/e2e/ covers what a real server does with the events.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import orjson
import pytest
from fakeserver import (
    Answer,
    FakeServer,
    Recorded,
    fake_server_fixture,  # noqa: F401 - registers fake_server
    make_fake_server_fixture,  # noqa: F401
    refused_port_fixture,  # noqa: F401 - registers refused_port
)
from helpers import WorkspaceMaker, run_record

from openlineage_export.errors import ConfigError, MissingSecret
from openlineage_export.export import ExportRequest, run_export, run_export_async
from openlineage_export.export.report import ExportReport
from openlineage_export.host.secret_files import FileStore
from openlineage_export.translate.datahub import REFUSAL as DATAHUB_REFUSAL
from openlineage_export.translate.encoded import TranslatedRun, encode

KEY = "olx-SECRET-0123456789abcdef"
TERMINAL = {"COMPLETE", "FAIL", "ABORT"}


# -- helpers --------------------------------------------------------------------------------


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def environ(config_dir: Path, tmp_path: Path) -> dict[str, str]:
    """A clean environment: secrets in a private file under tmp, never the real keyring, and
    the ledger under tmp too (without it, the user's own: shared by every run of the suite,
    it would remember the runs a test sent the last time its tmp path was the same)."""
    return {
        "OPENLINEAGE_EXPORT_CONFIG_DIR": str(config_dir),
        "OPENLINEAGE_EXPORT_SECRETS": "file",
        "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
    }


@pytest.fixture
def three_runs(ws: WorkspaceMaker) -> Path:
    """A workspace with three editor runs of four events each."""
    ws.segment("000001.jsonl", [run_record("run-1"), run_record("run-2"), run_record("run-3")])
    return ws.root


def configure(root: Path, **values: Any) -> None:
    """Write the workspace's settings.json, keeping the keys of other extensions."""
    file = root / ".workspace" / "settings.json"
    current = json.loads(file.read_text()) if file.exists() else {}
    current = {k: v for k, v in current.items() if not k.startswith("openlineage.")}
    current.update({f"openlineage.{k}": v for k, v in values.items()})
    file.write_text(json.dumps(current))


def dry_run(root: Path) -> list[TranslatedRun]:
    """The runs (with their events, in order) a dry run builds."""
    runs: list[TranslatedRun] = []
    out = io.BytesIO()
    report = run_export(
        ExportRequest(workspace=root, dry_run=True, output=out, on_run=lambda r: runs.append(r.run))
    )
    assert report.exit_code == 0
    assert out.getvalue() == b"".join(encode(e) + b"\n" for r in runs for e in r.events)
    return runs


def dry_lines(root: Path) -> list[bytes]:
    """Every line of the dry run, without its newline."""
    out = io.BytesIO()
    run_export(ExportRequest(workspace=root, dry_run=True, output=out))
    return out.getvalue().splitlines()


def export(root: Path, environ: dict[str, str], client: str = "curl", **kw: Any) -> ExportReport:
    """run_export through ``client``: ours, or a host's session made (and closed) for it."""
    if client == "curl":
        return run_export(ExportRequest(workspace=root, environ=environ, **kw))
    if client == "httpx":
        with httpx.Client(timeout=None, trust_env=False) as http:
            return run_export(ExportRequest(workspace=root, environ=environ, http=http, **kw))
    assert client == "aiohttp", client

    async def host() -> ExportReport:
        async with aiohttp.ClientSession() as session:
            return await run_export_async(
                ExportRequest(workspace=root, environ=environ, http=session, **kw)
            )

    return asyncio.run(host())


def export_bounded(
    root: Path, environ: dict[str, str], limit: float = 60.0, **kw: Any
) -> ExportReport:
    """run_export in a thread: the test fails (instead of hanging) if it does not return."""
    result: list[ExportReport | BaseException] = []

    def target() -> None:
        try:
            result.append(export(root, environ, **kw))
        except BaseException as exc:  # re-raised below
            result.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(limit)
    assert not thread.is_alive(), f"the export did not return within {limit} s"
    if isinstance(result[0], BaseException):
        raise result[0]
    return result[0]


def trace_of(event: dict[str, Any]) -> str | None:
    tags = event["run"]["facets"].get("tags", {}).get("tags", [])
    return next((t["value"] for t in tags if t["key"] == "traceId"), None)


def parent_of(event: dict[str, Any]) -> str | None:
    parent = event["run"]["facets"].get("parent")
    return parent["run"]["runId"] if parent else None


def everything_said(report: ExportReport) -> str:
    """All the text a host could show from a report."""
    return json.dumps(report.to_dict()) + "".join(f.reason for f in report.failed)


# -- where and what ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url_tail, endpoint, path",
    [
        ("/proxy/", None, "/proxy/api/v1/lineage"),
        ("/proxy", None, "/proxy/api/v1/lineage"),
        ("", "openapi/openlineage/api/v1/lineage", "/openapi/openlineage/api/v1/lineage"),
        ("/", "/openapi/openlineage/api/v1/lineage", "/openapi/openlineage/api/v1/lineage"),
    ],
)
def test_posts_each_event_as_json_to_url_plus_endpoint(
    fake_server: FakeServer,
    three_runs: Path,
    environ: dict[str, str],
    url_tail: str,
    endpoint: str | None,
    path: str,
    client_kind: str,
) -> None:
    settings: dict[str, Any] = {"url": fake_server.url + url_tail, "concurrency": 1}
    if endpoint is not None:
        settings["endpoint"] = endpoint
    configure(three_runs, **settings)
    report = export(three_runs, environ, client=client_kind)
    assert report.exit_code == 0, report.to_dict()
    assert report.destination.endswith(path)
    requests = fake_server.requests
    assert [r.method for r in requests] == ["POST"] * 12
    assert {r.path for r in requests} == {path}
    assert {r.headers["content-type"] for r in requests} == {"application/json"}
    assert all("content-encoding" not in r.headers for r in requests)
    # Byte for byte the dry run's lines, in the dry run's order (one run at a time).
    assert [r.raw for r in requests] == dry_lines(three_runs)
    assert report.events_sent == 12 and report.runs_sent == 3 and report.runs_total == 3
    assert requests[0].headers["user-agent"].startswith("openlineage-export/"), client_kind


def test_gzip_setting_compresses_each_body(
    fake_server: FakeServer, three_runs: Path, environ: dict[str, str], client_kind: str
) -> None:
    configure(three_runs, url=fake_server.url, compression="gzip", concurrency=1)
    report = export(three_runs, environ, client=client_kind)
    assert report.exit_code == 0, report.to_dict()
    requests = fake_server.requests
    assert {r.headers.get("content-encoding") for r in requests} == {"gzip"}
    assert {r.headers["content-type"] for r in requests} == {"application/json"}
    assert all(r.raw[:2] == b"\x1f\x8b" for r in requests)
    assert [gzip.decompress(r.raw) for r in requests] == dry_lines(three_runs)


# -- the key ----------------------------------------------------------------------------------


def test_bearer_key_from_the_store_named_in_settings(
    fake_server: FakeServer,
    three_runs: Path,
    environ: dict[str, str],
    config_dir: Path,
    client_kind: str,
) -> None:
    FileStore(config_dir).set("prod", KEY)
    FileStore(config_dir).allow("prod", fake_server.url.rstrip("/"))
    configure(three_runs, url=fake_server.url, **{"apiKey.secretRef": "prod"})
    report = export(three_runs, environ, client=client_kind)
    assert report.exit_code == 0, report.to_dict()
    assert len(fake_server.requests) == 12
    assert {r.headers.get("authorization") for r in fake_server.requests} == {f"Bearer {KEY}"}
    assert KEY not in everything_said(report)


def test_bearer_key_from_a_host_store(
    fake_server: FakeServer, three_runs: Path, tmp_path: Path
) -> None:
    store = FileStore(tmp_path / "host-secrets")
    store.set("prod", KEY)
    store.allow("prod", fake_server.url.rstrip("/"))
    configure(three_runs, url=fake_server.url, **{"apiKey.secretRef": "prod"})
    report = run_export(
        ExportRequest(
            workspace=three_runs,
            secrets=store,
            environ={"OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state")},
        )
    )
    assert report.exit_code == 0, report.to_dict()
    assert {r.headers.get("authorization") for r in fake_server.requests} == {f"Bearer {KEY}"}


def test_no_key_no_authorization_header(
    fake_server: FakeServer, three_runs: Path, environ: dict[str, str]
) -> None:
    configure(three_runs, url=fake_server.url)
    report = export(three_runs, environ)
    assert report.exit_code == 0
    assert len(fake_server.requests) == 12
    assert all("authorization" not in r.headers for r in fake_server.requests)


def test_environment_key_wins_over_the_store(
    fake_server: FakeServer, three_runs: Path, environ: dict[str, str], config_dir: Path
) -> None:
    FileStore(config_dir).set("prod", "stored-key-1234")
    configure(three_runs, **{"apiKey.secretRef": "prod"})
    report = export(
        three_runs, {**environ, "OPENLINEAGE_API_KEY": KEY, "OPENLINEAGE_URL": fake_server.url}
    )
    assert report.exit_code == 0
    assert {r.headers.get("authorization") for r in fake_server.requests} == {f"Bearer {KEY}"}


def test_missing_secret_stops_before_any_request(
    fake_server: FakeServer, three_runs: Path, environ: dict[str, str]
) -> None:
    configure(three_runs, url=fake_server.url, **{"apiKey.secretRef": "not-stored"})
    with pytest.raises(MissingSecret, match="not-stored"):
        export(three_runs, environ)
    assert fake_server.requests == []


def recording_transport() -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A host's transport that records the requests posted (the spec's batches, taken whole:
    204); what an export asks before it sends (a GET: deliver/http/held.py) is answered as a
    server that is not Marquez answers, unrecorded."""
    seen: list[httpx.Request] = []
    lock = threading.Lock()

    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        if request.method == "GET":
            return httpx.Response(404, text="<html>not here</html>")
        with lock:
            seen.append(request)
        return httpx.Response(204 if request.url.path.endswith("/batch") else 201)

    return httpx.MockTransport(handler), seen


def carried(seen: list[httpx.Request]) -> list[bytes]:
    """The events the requests carried, in the order they were posted (a batch's in its
    order), each as the dry run writes it."""
    events: list[bytes] = []
    for request in seen:
        got = orjson.loads(request.content)
        events += [orjson.dumps(e) for e in got] if isinstance(got, list) else [request.content]
    return events


def test_key_refused_over_plain_http_to_another_host(
    three_runs: Path, environ: dict[str, str]
) -> None:
    transport, seen = recording_transport()
    configure(three_runs, url="http://lineage.example.invalid")
    with pytest.raises(ConfigError, match="plain http") as refused:
        export(
            three_runs,
            {
                **environ,
                "OPENLINEAGE_API_KEY": KEY,
                "OPENLINEAGE_URL": "http://lineage.example.invalid",
            },
            http=transport,
        )
    assert KEY not in str(refused.value)
    assert seen == []
    # Without a key there is nothing to protect: the events go.
    assert export(three_runs, environ, http=transport).exit_code == 0
    assert len(carried(seen)) == 12 and all("authorization" not in r.headers for r in seen)


def test_key_over_plain_http_when_the_user_allowed_it(
    three_runs: Path, environ: dict[str, str]
) -> None:
    transport, seen = recording_transport()
    report = export(
        three_runs,
        {
            **environ,
            "OPENLINEAGE_API_KEY": KEY,
            "OPENLINEAGE_URL": "http://lineage.example.invalid",
            "OPENLINEAGE_ALLOW_INSECURE_KEY": "true",
        },
        http=transport,
    )
    assert report.exit_code == 0
    assert len(carried(seen)) == 12
    assert {r.headers["authorization"] for r in seen} == {f"Bearer {KEY}"}
    assert {str(r.url) for r in seen} == {"http://lineage.example.invalid/api/v1/lineage/batch"}


def test_key_over_https_to_another_host_is_fine(three_runs: Path, environ: dict[str, str]) -> None:
    transport, seen = recording_transport()
    report = export(
        three_runs,
        {
            **environ,
            "OPENLINEAGE_API_KEY": KEY,
            "OPENLINEAGE_URL": "https://lineage.example.invalid",
        },
        http=transport,
    )
    assert report.exit_code == 0
    assert {r.headers["authorization"] for r in seen} == {f"Bearer {KEY}"}


# -- the host's HTTP surface ------------------------------------------------------------------


def test_host_client_carries_every_event(three_runs: Path, environ: dict[str, str]) -> None:
    transport, seen = recording_transport()
    configure(three_runs, url="http://lineage.example.invalid/ol", concurrency=1)
    with httpx.Client(transport=transport) as client:
        report = export(three_runs, environ, http=client)
        assert not client.is_closed  # the host's client stays the host's
    assert report.exit_code == 0, report.to_dict()
    assert carried(seen) == dry_lines(three_runs)
    assert {str(r.url) for r in seen} == {"http://lineage.example.invalid/ol/api/v1/lineage/batch"}
    assert {r.method for r in seen} == {"POST"}


def test_host_transport_carries_every_event(three_runs: Path, environ: dict[str, str]) -> None:
    transport, seen = recording_transport()
    configure(three_runs, url="http://lineage.example.invalid", concurrency=1)
    report = export(three_runs, environ, http=transport)
    assert report.exit_code == 0, report.to_dict()
    assert carried(seen) == dry_lines(three_runs)
    assert seen[0].headers["user-agent"].startswith("openlineage-export/")


# -- order ------------------------------------------------------------------------------------


def test_each_runs_events_arrive_in_order_with_concurrency(
    fake_server: FakeServer, demo: Path, environ: dict[str, str]
) -> None:
    runs = dry_run(demo)
    assert len(runs) == 31 and sum(len(r.events) for r in runs) == 236
    # The runs interleave for certain: the first event is answered only once a second one has
    # come (another run's: a run's next event waits for the answer to the one before); then
    # small, varying delays.
    second = threading.Event()

    def answer(req: Recorded) -> Answer:
        if len(fake_server.requests) >= 2:
            second.set()
        return Answer(
            201, delay=(len(req.raw) % 7) / 1000, hold=None if second.is_set() else second
        )

    fake_server.script(answer)
    configure(demo, url=fake_server.url, concurrency=8)
    report = export(demo, environ)
    assert report.exit_code == 0, report.to_dict()
    assert (report.runs_sent, report.events_sent) == (31, 236)
    requests = fake_server.requests
    assert len(requests) == 236
    assert fake_server.max_in_flight > 1, "the runs were not delivered concurrently"

    position = {r.raw: i for i, r in enumerate(requests)}
    assert len(position) == 236  # every event once
    events = [r.json() for r in requests]
    for run in runs:
        sent = [position[encode(e)] for e in run.events]
        assert sent == sorted(sent), f"run {run.trace_id}: events out of order"
        # The same, said as the README says it, from what the server saw.
        start = next(
            i
            for i, e in enumerate(events)
            if e["run"]["runId"] == run.run_id and e["eventType"] == "START"
        )
        for i, e in enumerate(events):
            if parent_of(e) == run.run_id:
                assert i > start, f"a stage of {run.trace_id} came before its pipeline's START"
    for run_id in {e["run"]["runId"] for e in events}:
        mine = [(i, e["eventType"]) for i, e in enumerate(events) if e["run"]["runId"] == run_id]
        start = next(i for i, t in mine if t == "START")
        assert all(i > start for i, t in mine if t in TERMINAL), run_id
    # Runs did interleave: some run's events are not contiguous at the server.
    assert any(
        max(s := [position[encode(e)] for e in r.events]) - min(s) >= len(r.events) for r in runs
    )


# -- retries and refusals ---------------------------------------------------------------------


def test_503_then_accepted_is_delivered_once(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], client_kind: str
) -> None:
    fake_server.script([Answer(503, body="busy"), Answer(201)])
    configure(one_run, url=fake_server.url)
    report = export(one_run, environ, client=client_kind)
    assert report.exit_code == 0, report.to_dict()
    assert (report.runs_sent, report.events_sent, report.runs_failed) == (1, 4, 0)
    raws = [r.raw for r in fake_server.requests]
    assert len(raws) == 5 and raws[0] == raws[1]
    assert raws[1:] == dry_lines(one_run)


def test_connection_reset_is_retried(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], client_kind: str
) -> None:
    fake_server.script([Answer(reset=True), Answer(201), Answer(reset=True)])
    configure(one_run, url=fake_server.url)
    report = export(one_run, environ, client=client_kind)
    assert report.exit_code == 0, report.to_dict()
    assert (report.runs_sent, report.events_sent) == (1, 4)
    lines = dry_lines(one_run)
    assert [r.raw for r in fake_server.requests] == [lines[0], *lines[:2], *lines[1:]]


def test_429_retry_after_is_honoured(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], client_kind: str
) -> None:
    fake_server.script([Answer(429, headers={"Retry-After": "1"}, body="slow down")])
    configure(one_run, url=fake_server.url)
    report = export(one_run, environ, client=client_kind)
    assert report.exit_code == 0, report.to_dict()
    first, second = fake_server.requests[:2]
    assert first.raw == second.raw
    waited = second.at - first.at
    # Not before the server said (however slow the machine, a retry cannot come early).
    assert waited >= 0.9, f"retried after {waited:.2f} s, Retry-After said 1"
    assert report.events_sent == 4 and len(fake_server.requests) == 5


def test_marquez_500_saying_400_is_a_refusal(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str]
) -> None:
    fake_server.script(
        lambda req: Answer(500, body={"code": 400, "message": "Unable to process JSON"})
    )
    configure(one_run, url=fake_server.url)
    report = export(one_run, environ)
    assert len(fake_server.requests) == 1  # not retried
    assert report.runs_failed == 1 and report.exit_code == 1 and report.outage is None
    assert "Unable to process JSON" in report.failed[0].reason
    assert report.failed[0].trace_id == "only-run" and report.failed[0].events_accepted == 0


def test_plain_500_is_retried(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str]
) -> None:
    fake_server.script([Answer(500, body={"code": 500, "message": "boom"}), Answer(201)])
    configure(one_run, url=fake_server.url)
    report = export(one_run, environ)
    assert report.exit_code == 0 and len(fake_server.requests) == 5


def test_datahub_empty_500_is_explained_and_kept_pending(
    fake_server: FakeServer, three_runs: Path, environ: dict[str, str]
) -> None:
    """DataHub of 2025-07 (1.2) answers every event of a producer it does not know with an empty
    500 (its converter: "Unable to determine orchestrator"): each run is refused by the server
    (not retried, not an outage), with one line saying what to do, and stays pending."""
    endpoint = "openapi/openlineage/api/v1/lineage"
    fake_server.script(lambda req: Answer(500) if req.path == "/" + endpoint else Answer(201))
    configure(three_runs, url=fake_server.url, endpoint=endpoint)
    report = export(three_runs, environ)
    assert len(fake_server.requests) == 3  # one event per run: refused, not retried
    assert report.runs_failed == 3 and report.runs_sent == 0 and report.outage is None
    assert report.exit_code == 1
    assert {f.reason for f in report.failed} == {DATAHUB_REFUSAL}
    assert "\n" not in DATAHUB_REFUSAL and "DATAHUB_OPENLINEAGE_ORCHESTRATOR" in DATAHUB_REFUSAL
    assert "upgrade DataHub" in DATAHUB_REFUSAL
    # Kept pending: the next export sends them again.
    again = export(three_runs, environ)
    assert again.runs_failed == 3 and len(fake_server.requests) == 6
    # Once DataHub takes them (upgraded), they go.
    fake_server.script(lambda req: Answer(201))
    done = export(three_runs, environ)
    assert done.exit_code == 0 and done.runs_sent == 3


def test_empty_500_elsewhere_is_retried(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str]
) -> None:
    fake_server.script([Answer(500), Answer(201)])
    configure(one_run, url=fake_server.url)
    report = export(one_run, environ)
    assert report.exit_code == 0 and len(fake_server.requests) == 5


@pytest.mark.parametrize("status", [400, 422])
def test_client_error_refuses_that_run_only(
    fake_server: FakeServer,
    three_runs: Path,
    environ: dict[str, str],
    status: int,
    client_kind: str,
) -> None:
    refused_run = next(r for r in dry_run(three_runs) if r.trace_id == "run-2")

    def answer(req: Recorded) -> Answer:
        if trace_of(req.json()) == "run-2":
            return Answer(status, body={"error": "facet runId is malformed (run-2)"})
        return Answer(201)

    fake_server.script(answer)
    configure(three_runs, url=fake_server.url, concurrency=2)
    report = export(three_runs, environ, client=client_kind)
    assert report.runs_failed == 1 and report.exit_code == 1
    assert report.runs_sent == 2 and report.events_sent == 8
    failed = report.failed[0]
    assert failed.trace_id == "run-2" and failed.run_id == refused_run.run_id
    assert str(status) in failed.reason and "facet runId is malformed (run-2)" in failed.reason
    assert report.to_dict()["failedRuns"][0]["reason"] == failed.reason
    # Refused once, not retried, and the rest of that run was not sent.
    events = fake_server.events()
    assert sum(1 for e in events if trace_of(e) == "run-2") == 1
    assert not any(
        e["run"]["runId"] == refused_run.run_id or parent_of(e) == refused_run.run_id
        for e in events
        if trace_of(e) != "run-2"
    )
    others = [encode(e) for r in dry_run(three_runs) if r.trace_id != "run-2" for e in r.events]
    assert sorted(others) == sorted(
        r.raw for r in fake_server.requests if trace_of(r.json()) != "run-2"
    )


@pytest.mark.parametrize("host_follows", [False, True])
def test_redirect_is_not_followed(
    make_fake_server: Callable[[], FakeServer],
    one_run: Path,
    environ: dict[str, str],
    host_follows: bool,
) -> None:
    server, elsewhere = make_fake_server(), make_fake_server()
    server.script(lambda req: Answer(301, headers={"Location": elsewhere.url + req.path}))
    configure(one_run, url=server.url)
    if host_follows:
        # Even a host client that follows redirects must not take the event (and key) away.
        with httpx.Client(follow_redirects=True) as client:
            report = export(
                one_run,
                {**environ, "OPENLINEAGE_API_KEY": KEY, "OPENLINEAGE_URL": server.url},
                http=client,
            )
    else:
        report = export(
            one_run, {**environ, "OPENLINEAGE_API_KEY": KEY, "OPENLINEAGE_URL": server.url}
        )
    assert elsewhere.requests == []
    assert len(server.requests) == 1
    assert report.runs_failed == 1 and report.exit_code == 1 and report.runs_sent == 0
    assert "301" in report.failed[0].reason and elsewhere.url in report.failed[0].reason


# -- outages, slowness, cancellation ----------------------------------------------------------


def test_server_refusing_connections_is_an_outage(
    demo: Path, environ: dict[str, str], client_kind: str, refused_port: int
) -> None:
    port = refused_port
    configure(demo, url=f"http://127.0.0.1:{port}", **{"retry.maxTime": 1})
    report = export_bounded(demo, environ, client=client_kind)
    assert report.outage is not None and report.exit_code == 4
    assert "\n" not in report.outage and str(port) in report.outage
    assert report.outage.count(". ") == 0  # one sentence
    assert report.runs_sent == 0 and report.events_sent == 0
    assert report.cancelled is False
    # Runs cut short by the outage were not refused by the server: not listed as failed.
    assert report.runs_failed == 0, report.to_dict()["failedRuns"]


def test_outage_with_one_sender(
    three_runs: Path, environ: dict[str, str], refused_port: int
) -> None:
    configure(
        three_runs, url=f"http://127.0.0.1:{refused_port}", concurrency=1, **{"retry.maxTime": 1}
    )
    report = export_bounded(three_runs, environ)
    assert report.outage is not None and report.exit_code == 4 and report.runs_failed == 0


def test_slow_server_is_retried_then_failed_not_an_outage(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], client_kind: str
) -> None:
    never = threading.Event()  # no answer comes before the test ends (the server stops)
    fake_server.script(lambda req: Answer(201, hold=never))
    configure(one_run, url=fake_server.url, timeout=0.2, **{"retry.maxTime": 3})
    report = export_bounded(one_run, environ, client=client_kind)
    assert report.outage is None
    assert report.runs_failed == 1 and report.exit_code == 1
    assert "timeout" in report.failed[0].reason
    assert len(fake_server.requests) >= 2  # retried
    assert {r.raw for r in fake_server.requests} == {dry_lines(one_run)[0]}


def test_cancel_mid_export_stops_soon(
    fake_server: FakeServer, demo: Path, environ: dict[str, str], client_kind: str
) -> None:
    """Past the 12th event every request is held unanswered: the export, cancelled then,
    returns all the same (the requests in flight are abandoned after their grace)."""
    unheld = threading.Event()
    fake_server.script(
        lambda req: Answer(201, hold=None if len(fake_server.requests) <= 12 else unheld)
    )
    configure(demo, url=fake_server.url, concurrency=4)
    cancel = threading.Event()
    threading.Thread(target=lambda: fake_server.wait_for(13) and cancel.set(), daemon=True).start()
    try:
        report = export_bounded(demo, environ, cancel=cancel, limit=120, client=client_kind)
        count = len(fake_server.requests)
    finally:
        unheld.set()
    assert cancel.is_set(), "the export finished before it could be cancelled"
    assert report.cancelled is True and report.exit_code == 130
    assert 12 <= report.events_sent < 236 and report.runs_failed == 0
    fake_server.stop()
    assert len(fake_server.requests) == count, "requests went on after the export returned"


# -- redaction --------------------------------------------------------------------------------


@pytest.mark.parametrize("padding", [0, 470, 2000])
def test_key_echoed_by_the_server_never_reported(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], padding: int, client_kind: str
) -> None:
    # padding 470: the key straddles the point where a long error body is cut.
    fake_server.script(
        lambda req: Answer(
            400, body="x" * padding + " you sent: " + req.headers.get("authorization", "")
        )
    )
    configure(one_run, url=fake_server.url)
    report = export(
        one_run,
        {**environ, "OPENLINEAGE_API_KEY": KEY, "OPENLINEAGE_URL": fake_server.url},
        client=client_kind,
    )
    assert fake_server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert report.runs_failed == 1
    said = everything_said(report)
    for i in range(len(KEY) - 5):
        assert KEY[i : i + 6] not in said, f"part of the key leaked: {KEY[i : i + 6]!r}"
    if padding == 0:
        assert "***" in report.failed[0].reason


def test_key_echoed_in_a_retried_answer_never_reported(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str]
) -> None:
    fake_server.script(lambda req: Answer(503, body="busy; " + req.headers["authorization"]))
    configure(one_run, url=fake_server.url, **{"retry.maxTime": 0.5})
    report = export_bounded(
        one_run, {**environ, "OPENLINEAGE_API_KEY": KEY, "OPENLINEAGE_URL": fake_server.url}
    )
    assert report.runs_failed == 1 and "503" in report.failed[0].reason
    assert KEY not in everything_said(report)


def test_an_answer_that_cannot_be_decoded_is_retried(
    fake_server: FakeServer, one_run: Path, environ: dict[str, str], client_kind: str
) -> None:
    # Content-Encoding gzip over a body that is not gzip: httpx cannot read the answer.
    fake_server.script([Answer(502, headers={"Content-Encoding": "gzip"}, body=b"not gzip")])
    configure(one_run, url=fake_server.url)
    report = export_bounded(one_run, environ, client=client_kind)
    assert report.exit_code == 0, report.to_dict()
    assert (report.runs_sent, report.events_sent) == (1, 4) and len(fake_server.requests) == 5


def test_an_error_inside_the_hosts_client_is_a_failed_run_and_exit_1(
    three_runs: Path, environ: dict[str, str]
) -> None:
    """Issue 30 (4): any error in a send, not only ours, is a failed run in the summary and
    the exit code (was: "0 of 3 runs sent", exit 0, "Task exception was never retrieved")."""

    def handler(request: httpx.Request) -> httpx.Response:
        raise OverflowError("timeout value is too large")

    configure(three_runs, url="http://lineage.test")
    report = export(three_runs, environ, http=httpx.MockTransport(handler))
    assert (report.runs_sent, report.runs_failed, report.exit_code) == (0, 3, 1)
    assert {f.reason for f in report.failed} == {
        "failed inside the exporter (OverflowError: timeout value is too large)"
    }


@pytest.mark.parametrize("value", ["1e16", "1e308", "9" * 400, "-1"])
def test_a_timeout_no_client_can_take_is_refused_by_the_cli_in_one_line(
    three_runs: Path, tmp_path: Path, value: str
) -> None:
    """Issue 30 (4): openlineage.timeout 1e16 in settings.json: exit 0 with nothing sent;
    1e308: a traceback. Now: one line naming the key, its file and the range; exit 2."""
    import subprocess

    from helpers import cli_command, cli_env

    settings = three_runs / ".workspace" / "settings.json"
    settings.write_text(
        '{"openlineage.url": "http://127.0.0.1:9", "openlineage.timeout": ' + value + "}"
    )
    proc = subprocess.run(
        cli_command("export", "-w", str(three_runs)),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr == (
        f"error: openlineage.timeout in {settings} must be a number from 0.1 to 900\n"
    )
