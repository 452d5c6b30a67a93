"""Translation and the dry run: ours, openlineage-python's plain way, each stage alone; peak memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import NullSink, Timer, measurement, overrides, read_runs


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

    from bench.ol_plain import build_events

    chars = events = 0
    with Timer() as timer:
        graph, runs, namespace = read_runs(Path(ws))
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

    from bench.ol_plain import build_events
    from openlineage_export.translate.events import TranslationConfig, Translator

    parts: dict[str, Any] = {}
    with Timer() as timer:
        graph, runs, namespace = read_runs(Path(ws))
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


@measurement
def dry_run_to_file(ws: str, output: str, namespace: str | None = None) -> dict[str, Any]:
    """Our dry run into a JSON Lines file (what the load generator posts); not a figure."""
    from openlineage_export.export import ExportRequest, run_export

    environ = overrides(None, None, namespace)
    with open(output, "wb") as stream, Timer() as timer:
        report = run_export(ExportRequest(Path(ws), dry_run=True, output=stream, environ=environ))
    return {"events": report.events_sent, "wall_s": timer.wall_s, "cpu_s": timer.cpu_s}


@measurement
def dry_run_memory(ws: str) -> dict[str, Any]:
    """A dry run into a null sink; the parent reads this process's peak RSS from wait4."""
    return translate_ours(ws)


@measurement
def imports_only() -> dict[str, Any]:
    """The interpreter with the export imported: the floor under every RSS figure."""
    import openlineage_export.export  # noqa: F401

    return {}
