"""Delivery over HTTP: ours (run_export), openlineage-python's transports, the causal order's
longest chain, a backfill into files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import Timer, export_to, measurement, overrides, plain_events, read_runs, settings_for


@measurement
def causal_chain(ws: str) -> dict[str, Any]:
    """The longest chain of round trips the causal order allows (``deliver/order.py``, event
    legs, as HTTP sends them): each event after the one before it in its run and after the
    earlier events it waits for. Whatever the concurrency, an export takes at least that many
    answers one after the other: with answers taking ``t`` seconds, at most events / (chain x
    t) events per second."""
    from openlineage_export.deliver.order import CausalOrder, Ticket
    from openlineage_export.translate.events import TranslationConfig, Translator

    graph, runs, namespace = read_runs(Path(ws))
    translator = Translator(graph, TranslationConfig(namespace=namespace))
    order = CausalOrder()  # nothing finishes: every dependency stays known
    ends: dict[Ticket, int] = {}  # a leg's ticket -> the round trip its last event ends
    events = longest = 0
    for run in runs:
        translated = translator.translate(run)
        events += len(translated)
        ended = 0
        for leg in order.legs(translated, split=True):
            start = max([ended, *(ends[ticket] for ticket in leg.ticket.after)])
            ended = start + leg.end - leg.start
            ends[leg.ticket] = ended
        longest = max(longest, ended)
    return {"events": events, "runs": len(runs), "chain": longest}


@measurement
def deliver_ours(
    ws: str,
    url: str,
    concurrency: int,
    state_dir: str | None = None,
    namespace: str | None = None,
    unordered: bool = False,
    full: bool = False,
    batch_events: int | None = None,
    api_key: str | None = None,
) -> dict[str, Any]:
    """run_export to ``url``: read + translate + encode + POST + ledger (in ``state_dir``).

    ``unordered`` removes the causal order (every run may go at once), to measure its cost;
    ``full`` sends every run (``--full``: no question asked of the server); ``batch_events``
    sets ``openlineage.batch.maxEvents`` (1: one event a request, to the batch endpoint);
    ``api_key`` is the server's key (Feast's).
    """
    from openlineage_export.export import ExportRequest, run_export

    from .unordered import EveryRunAtOnce

    environ = overrides(url, state_dir, namespace)
    if api_key:
        environ["OPENLINEAGE_API_KEY"] = api_key
    settings = settings_for(Path(ws), environ, concurrency)
    if batch_events is not None:
        settings = settings.with_values({"openlineage.batch.maxEvents": batch_events})
    request = ExportRequest(
        Path(ws),
        settings=settings,
        environ=environ,
        full=full,
        order=EveryRunAtOnce if unordered else None,
    )
    with Timer() as timer:
        report = run_export(request)
    return {
        "events": report.events_sent,
        "runs": report.runs_total,
        "runs_sent": report.runs_sent,
        "runs_unchanged": report.runs_unchanged,
        "runs_held": report.runs_held,
        "warnings": report.warnings,
        "runs_failed": report.runs_failed,
        "batches": report.batches,
        "outage": report.outage,
        "first_failure": report.failed[0].reason if report.failed else None,
        "wall_s": timer.wall_s,
        "cpu_s": timer.cpu_s,
    }


@measurement
def deliver_ol_http(ws: str, url: str) -> dict[str, Any]:
    """openlineage-python's HttpTransport, ``client.emit(event)`` one by one. The events are
    built before the clock starts (in their favour); emit serialises (Serde) and POSTs."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.http import HttpConfig, HttpTransport

    events = plain_events(Path(ws))
    client = OpenLineageClient(
        transport=HttpTransport(HttpConfig(url=url.removesuffix("/api/v1/lineage")))
    )
    with Timer() as timer:
        for event in events:
            client.emit(event)
    return {"events": len(events), "wall_s": timer.wall_s, "cpu_s": timer.cpu_s}


@measurement
def deliver_ol_async(ws: str, url: str) -> dict[str, Any]:
    """openlineage-python's AsyncHttpTransport (its defaults: 100 concurrent requests): emit
    every event, then ``wait_for_completion()``; the events are built before the clock starts."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.async_http import AsyncHttpConfig, AsyncHttpTransport

    events = plain_events(Path(ws))
    config = AsyncHttpConfig(url=url.removesuffix("/api/v1/lineage"))
    transport = AsyncHttpTransport(config)
    client = OpenLineageClient(transport=transport)
    with Timer() as timer:
        for event in events:
            client.emit(event)
        completed = transport.wait_for_completion()
    stats = dict(transport.get_stats())
    client.close()
    return {
        "events": stats["success"],
        "built": len(events),
        "failed": stats["failed"],
        "completed": completed,
        "max_concurrent_requests": config.max_concurrent_requests,
        "wall_s": timer.wall_s,
        "cpu_s": timer.cpu_s,
    }


@measurement
def backfill_file(ws: str, output: str) -> dict[str, Any]:
    """run_export with the file transport (a JSON line an event into ``output``): read +
    translate + encode + write + ledger, as a backfill into files does it."""
    done = export_to(ws, OPENLINEAGE_TRANSPORT="file", OPENLINEAGE_FILE_PATH=output)
    return {**done, "bytes": Path(output).stat().st_size}
