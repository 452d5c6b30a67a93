"""One measurement, in its own process: ``python -m bench.measure KIND 'JSON ARGS'``.

``python -m bench.run`` starts one child per measurement and reads the JSON object this prints last.
Times are taken around the measured work only (interpreter start and imports excluded):
``wall_s`` with ``perf_counter``, ``cpu_s`` with ``process_time`` (every thread of the child).
What each kind includes is in its docstring; run.py repeats it in the results.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MEASUREMENTS: dict[str, Callable[..., dict[str, Any]]] = {}


def measurement(function: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Register a measurement under its function name."""
    MEASUREMENTS[function.__name__] = function
    return function


class NullSink:
    """A binary stream that keeps nothing and counts the bytes written to it."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: bytes) -> int:
        self.bytes += len(data)
        return len(data)

    def flush(self) -> None:
        pass


class Timer:
    """Wall and CPU seconds of a block."""

    def __enter__(self) -> Timer:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall_s = time.perf_counter() - self._wall
        self.cpu_s = time.process_time() - self._cpu


def _read_runs(ws: Path) -> tuple[Any, list[Any], str]:
    """Graph, every current run (our reader, both passes) and the namespace of a workspace."""
    from openlineage_export.hub.graph import read_graph
    from openlineage_export.hub.trail import AuditTrail
    from openlineage_export.translate.datasets import namespace_safe

    lineage = ws / ".workspace" / "lineage"
    graph = read_graph(lineage / "graph.json", "graph.json", lambda entry: None)
    trail = AuditTrail(lineage / "audit")
    scan = trail.scan(lambda entry: None)
    try:
        runs = [run for run, _ in trail.runs(scan, scan.index.in_trail_order())]
    finally:
        scan.index.close()
    return graph, runs, namespace_safe(graph.workspace_name)


def _plain_events(ws: Path) -> list[Any]:
    """The same events as openlineage-python objects (tests/support/ol_plain.py), built untimed."""
    from tests.support.ol_plain import build_events

    graph, runs, namespace = _read_runs(ws)
    return [event for run in runs for event in build_events(run, graph, namespace)]


def _settings(ws: Path, environ: dict[str, str], concurrency: int) -> Any:
    from openlineage_export.deliver.registry import CATALOGUE
    from openlineage_export.host.settings import load_settings

    return load_settings(ws, CATALOGUE, environ).with_values(
        {"openlineage.concurrency": concurrency}
    )


def _environ(
    url: str | None, state_dir: str | None, namespace: str | None = None
) -> dict[str, str]:
    """OPENLINEAGE_* overrides for run_export: the server, the ledger's folder, no keyring."""
    scratch = tempfile.mkdtemp(prefix="olx-bench-")
    atexit.register(shutil.rmtree, scratch, True)
    environ = {
        "OPENLINEAGE_EXPORT_STATE_DIR": state_dir or scratch,
        "OPENLINEAGE_EXPORT_CONFIG_DIR": scratch,
        "OPENLINEAGE_EXPORT_SECRETS": "file",
    }
    if url:
        environ["OPENLINEAGE_URL"] = url.removesuffix("/api/v1/lineage")
    if namespace:
        environ["OPENLINEAGE_NAMESPACE"] = namespace
    return environ


# --------------------------------------------------------------------------- translation


@measurement
def translate_ours(ws: str) -> dict[str, Any]:
    """Our dry run into a null sink: read the trail (both passes) + translate + encode."""
    from openlineage_export.export import ExportRequest, run_export

    sink = NullSink()
    with Timer() as timer:
        report = run_export(ExportRequest(Path(ws), dry_run=True, output=sink))  # type: ignore[arg-type]
    return {
        "events": report.events_sent,
        "runs": report.runs_total,
        "bytes": sink.bytes,
        "wall_s": timer.wall_s,
        "cpu_s": timer.cpu_s,
    }


@measurement
def translate_plain(ws: str) -> dict[str, Any]:
    """openlineage-python the plain way: our reader (both passes) + build_events + Serde.to_json."""
    from openlineage.client.serde import Serde
    from tests.support.ol_plain import build_events

    chars = events = 0
    with Timer() as timer:
        graph, runs, namespace = _read_runs(Path(ws))
        for run in runs:
            for event in build_events(run, graph, namespace):
                chars += len(Serde.to_json(event))
                events += 1
    return {
        "events": events,
        "runs": len(runs),
        "chars": chars,
        "wall_s": timer.wall_s,
        "cpu_s": timer.cpu_s,
    }


@measurement
def translate_parts(ws: str) -> dict[str, Any]:
    """Each stage alone: reading, our translate, orjson over prebuilt dicts (the floor), and
    openlineage-python's build and Serde.to_json. Built events are dropped as they come while
    timing a build (a heap of every event would make the collector's passes the figure)."""
    import orjson
    from openlineage.client.serde import Serde
    from tests.support.ol_plain import build_events

    from openlineage_export.translate.events import TranslationConfig, Translator

    parts: dict[str, Any] = {}
    with Timer() as timer:
        graph, runs, namespace = _read_runs(Path(ws))
    parts["read"] = {"wall_s": timer.wall_s, "cpu_s": timer.cpu_s, "runs": len(runs)}

    translator = Translator(graph, TranslationConfig(namespace=namespace))
    events = 0
    with Timer() as timer:
        for run in runs:
            events += len(translator.translate(run))
    parts["translate"] = {"wall_s": timer.wall_s, "cpu_s": timer.cpu_s, "events": events}

    dicts = [event for run in runs for event in translator.translate(run).events]
    dumps, size = orjson.dumps, 0
    with Timer() as timer:
        for event in dicts:
            size += len(dumps(event))
    parts["floor"] = {
        "wall_s": timer.wall_s,
        "cpu_s": timer.cpu_s,
        "events": len(dicts),
        "bytes": size,
    }
    del dicts

    events = 0
    with Timer() as timer:
        for run in runs:
            events += len(build_events(run, graph, namespace))
    parts["plain_build"] = {"wall_s": timer.wall_s, "cpu_s": timer.cpu_s, "events": events}
    objects = [event for run in runs for event in build_events(run, graph, namespace)]
    with Timer() as timer:
        for event in objects:
            Serde.to_json(event)
    parts["plain_serde"] = {"wall_s": timer.wall_s, "cpu_s": timer.cpu_s, "events": len(objects)}
    return parts


# --------------------------------------------------------------------------- delivery


@measurement
def causal_chain(ws: str) -> dict[str, Any]:
    """The longest chain of round trips the causal order allows (``deliver/order.py``, event
    legs, as HTTP sends them): each event after the one before it in its run and after the
    earlier events it waits for. Whatever the concurrency, an export takes at least that many
    answers one after the other: with answers taking ``t`` seconds, at most events / (chain x
    t) events per second."""
    from openlineage_export.deliver.order import CausalOrder, Ticket
    from openlineage_export.translate.events import TranslationConfig, Translator

    graph, runs, namespace = _read_runs(Path(ws))
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
) -> dict[str, Any]:
    """run_export to ``url``: read + translate + encode + POST + ledger (in ``state_dir``).

    ``unordered`` removes the causal order (every run may go at once), to measure its cost;
    ``full`` sends every run (``--full``: no question asked of the server).
    """
    from openlineage_export.export import ExportRequest, run_export

    if unordered:
        from openlineage_export.deliver import order

        def legs(self: Any, run: Any, *, split: bool = True) -> list[Any]:
            return [order.Leg(0, len(run), order.Ticket([]))]  # one leg, waiting for nothing

        order.CausalOrder.legs = legs  # type: ignore[method-assign]

    environ = _environ(url, state_dir, namespace)
    settings = _settings(Path(ws), environ, concurrency)
    with Timer() as timer:
        report = run_export(ExportRequest(Path(ws), settings=settings, environ=environ, full=full))
    return {
        "events": report.events_sent,
        "runs": report.runs_total,
        "runs_sent": report.runs_sent,
        "runs_unchanged": report.runs_unchanged,
        "runs_held": report.runs_held,
        "warnings": report.warnings,
        "runs_failed": report.runs_failed,
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

    events = _plain_events(Path(ws))
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

    events = _plain_events(Path(ws))
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
def dry_run_to_file(ws: str, output: str, namespace: str | None = None) -> dict[str, Any]:
    """Our dry run into a JSON Lines file (what the load generator posts); not a figure."""
    from openlineage_export.export import ExportRequest, run_export

    environ = _environ(None, None, namespace)
    with open(output, "wb") as stream, Timer() as timer:
        report = run_export(ExportRequest(Path(ws), dry_run=True, output=stream, environ=environ))
    return {"events": report.events_sent, "wall_s": timer.wall_s, "cpu_s": timer.cpu_s}


def _export_to(ws: str, **settings: str) -> dict[str, Any]:
    """run_export with these OPENLINEAGE_* settings (a fresh ledger): what it sent, timed."""
    from openlineage_export.export import ExportRequest, run_export

    environ = {**_environ(None, None), **settings}
    with Timer() as timer:
        report = run_export(ExportRequest(Path(ws), environ=environ))
    return {
        "events": report.events_sent,
        "runs": report.runs_total,
        "runs_failed": report.runs_failed,
        "outage": report.outage,
        "wall_s": timer.wall_s,
        "cpu_s": timer.cpu_s,
    }


@measurement
def backfill_file(ws: str, output: str) -> dict[str, Any]:
    """run_export with the file transport (a JSON line an event into ``output``): read +
    translate + encode + write + ledger, as a backfill into files does it."""
    done = _export_to(ws, OPENLINEAGE_TRANSPORT="file", OPENLINEAGE_FILE_PATH=output)
    return {**done, "bytes": Path(output).stat().st_size}


# --------------------------------------------------------------------------- Kafka


def _fresh_topic(bootstrap: str, prefix: str) -> str:
    """A new topic of 3 partitions, named ``prefix`` and this process's id (one per repeat)."""
    import os

    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"{prefix}-{os.getpid()}"

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    for future in admin.create_topics(
        [NewTopic(name, num_partitions=3, replication_factor=1)]
    ).values():
        future.result(30)
    return name


@measurement
def kafka_ours(ws: str, bootstrap: str, topic: str) -> dict[str, Any]:
    """run_export to a fresh Kafka topic: read + translate + encode + produce + ledger."""
    return _export_to(
        ws,
        OPENLINEAGE_TRANSPORT="kafka",
        OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS=bootstrap,
        OPENLINEAGE_KAFKA_TOPIC=_fresh_topic(bootstrap, topic),
    )


@measurement
def kafka_ol(ws: str, bootstrap: str, topic: str, flush: bool) -> dict[str, Any]:
    """openlineage-python's KafkaTransport: ``client.emit`` each event (prebuilt, untimed), then
    ``close`` (which flushes); ``flush`` true is its default (a flush after every event)."""
    from openlineage.client import OpenLineageClient
    from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

    topic = _fresh_topic(bootstrap, topic)
    events = _plain_events(Path(ws))
    transport = KafkaTransport(
        KafkaConfig(config={"bootstrap.servers": bootstrap}, topic=topic, flush=flush)
    )
    client = OpenLineageClient(transport=transport)
    with Timer() as timer:
        for event in events:
            client.emit(event)
        transport.close(timeout=60)
    return {"events": len(events), "wall_s": timer.wall_s, "cpu_s": timer.cpu_s}


# --------------------------------------------------------------------------- HTTP clients


def _bodies(events: str, count: int) -> list[bytes]:
    lines = [line for line in Path(events).read_bytes().splitlines() if line]
    return [lines[i % len(lines)] for i in range(count)]


@measurement
def bare_posts(
    client: str, url: str, events: str, requests: int, concurrency: int
) -> dict[str, Any]:
    """One HTTP client alone: ``requests`` POSTs of our dry run's events (prebuilt), at most
    ``concurrency`` in flight, nothing else (no reading, no engine, no ledger).

    ``curl``, ``aiohttp``, ``httpx``: our posters (deliver/), each from ``concurrency`` asyncio
    workers; ``curl-loop``: pycurl's multi interface in a plain loop (no asyncio: libcurl's
    floor); ``pyreqwest``: pyreqwest's async client (if installed)."""
    import asyncio

    bodies = _bodies(events, requests)
    headers = {"Content-Type": "application/json"}
    if client == "curl-loop":
        return _curl_loop(url, bodies, concurrency)

    async def main() -> dict[str, Any]:
        post: Any
        closing: Any = None
        if client == "pyreqwest":
            from pyreqwest.client import ClientBuilder

            http = ClientBuilder().max_connections(concurrency).build()

            async def post(body: bytes) -> int:
                response = (
                    await http.post(url)
                    .body_bytes(body)
                    .header("Content-Type", "application/json")
                    .build()
                    .send()
                )
                return int(response.status)

            closing = http.close
        else:
            from openlineage_export.deliver.http.aiohttp_client import AiohttpPoster
            from openlineage_export.deliver.http.httpx_client import HttpxPoster

            poster: Any
            if client == "curl":
                from openlineage_export.deliver.http.curl_client import CurlPoster

                poster = CurlPoster(
                    verify=True, concurrency=concurrency, timeout=30, user_agent="bench/1"
                )
            elif client == "aiohttp":
                poster = AiohttpPoster(
                    None, verify=True, concurrency=concurrency, timeout=30, user_agent="bench/1"
                )
            else:
                import httpx

                limits = httpx.Limits(max_connections=concurrency)
                poster = HttpxPoster(
                    httpx.AsyncClient(limits=limits, timeout=30),
                    verify=True,
                    concurrency=concurrency,
                    timeout=30,
                    user_agent="bench/1",
                )
            await poster.start()

            async def post(body: bytes) -> int:
                return int((await poster.post(url, body, headers)).status)

            closing = poster.close
        queue = iter(bodies)
        failed = 0

        async def worker() -> None:
            nonlocal failed
            for body in queue:
                if not 200 <= await post(body) < 300:
                    failed += 1

        with Timer() as timer:
            await asyncio.gather(*(worker() for _ in range(concurrency)))
        result = closing()
        if asyncio.iscoroutine(result):
            await result
        return {
            "events": len(bodies),
            "failed": failed,
            "wall_s": timer.wall_s,
            "cpu_s": timer.cpu_s,
        }

    return asyncio.run(main())


def _curl_loop(url: str, bodies: list[bytes], concurrency: int) -> dict[str, Any]:
    import pycurl

    multi = pycurl.CurlMulti()
    idle = []
    for _ in range(concurrency):
        curl = pycurl.Curl()
        curl.setopt(pycurl.URL, url)
        curl.setopt(pycurl.POST, 1)
        curl.setopt(pycurl.HTTPHEADER, ["Content-Type: application/json", "Expect:"])
        curl.setopt(pycurl.WRITEFUNCTION, lambda chunk: None)
        idle.append(curl)
    queue = iter(bodies)
    done = failed = 0
    with Timer() as timer:
        for curl, body in zip(idle, queue, strict=False):
            curl.setopt(pycurl.POSTFIELDS, body)
            multi.add_handle(curl)
        while done < len(bodies):
            multi.select(1.0)
            while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
                pass
            while True:
                queued, ok, errors = multi.info_read()
                for curl in [*ok, *(e[0] for e in errors)]:
                    multi.remove_handle(curl)
                    done += 1
                    failed += curl.getinfo(pycurl.RESPONSE_CODE) // 100 != 2
                    body = next(queue, None)
                    if body is not None:
                        curl.setopt(pycurl.POSTFIELDS, body)
                        multi.add_handle(curl)
                if not queued:
                    break
    return {"events": len(bodies), "failed": failed, "wall_s": timer.wall_s, "cpu_s": timer.cpu_s}


# --------------------------------------------------------------------------- memory


@measurement
def dry_run_memory(ws: str) -> dict[str, Any]:
    """A dry run into a null sink; the parent reads this process's peak RSS from wait4."""
    return translate_ours(ws)


@measurement
def imports_only() -> dict[str, Any]:
    """The interpreter with the export imported: the floor under every RSS figure."""
    import openlineage_export.export  # noqa: F401

    return {}


def main() -> int:
    kind, args = sys.argv[1], json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    print(json.dumps(MEASUREMENTS[kind](**args)), flush=True)
    if kind == "bare_posts" and args.get("client") == "pyreqwest":
        # pyreqwest 0.15's runtime aborts the interpreter's finalization (PyGILState_Release:
        # "thread state must be current"); the figure is out, nothing is left to clean up.
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
