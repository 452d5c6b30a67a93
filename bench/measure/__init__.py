"""One measurement, in its own process: ``python -m bench.measure KIND 'JSON ARGS'``.

``python -m bench.run`` starts one child per measurement and reads the JSON object this prints last.
Times are taken around the measured work only (interpreter start and imports excluded):
``wall_s`` with ``perf_counter``, ``cpu_s`` with ``process_time`` (every thread of the child).
What each kind includes is in its docstring; run.py repeats it in the results. The kinds, by
what they measure: ``translation.py``, ``delivery.py`` (HTTP), ``kafka.py``, ``clients.py``
(the HTTP clients alone); this module holds what they share.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MEASUREMENTS: dict[str, Callable[..., dict[str, Any]]] = {}
"""Every kind of measurement, by name (filled as the modules of this package are imported)."""


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


def read_runs(ws: Path) -> tuple[Any, list[Any], str]:
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


def plain_events(ws: Path) -> list[Any]:
    """The same events as openlineage-python objects (bench/ol_plain.py), built untimed."""
    from bench.ol_plain import build_events

    graph, runs, namespace = read_runs(ws)
    return [event for run in runs for event in build_events(run, graph, namespace)]


def settings_for(ws: Path, environ: dict[str, str], concurrency: int) -> Any:
    from openlineage_export.deliver.registry import CATALOGUE
    from openlineage_export.host.settings import load_settings

    return load_settings(ws, CATALOGUE, environ).with_values(
        {"openlineage.concurrency": concurrency}
    )


def export_environ(
    scratch: Path,
    *,
    state_dir: str | None = None,
    url: str | None = None,
    namespace: str | None = None,
) -> dict[str, str]:
    """OPENLINEAGE_* settings for an export of the benchmark: the ledger's folder
    (``state_dir``, else ``scratch``), secrets in a file under ``scratch`` (no keyring), and
    the server and namespace when given."""
    environ = {
        "OPENLINEAGE_EXPORT_STATE_DIR": state_dir or str(scratch),
        "OPENLINEAGE_EXPORT_CONFIG_DIR": str(scratch),
        "OPENLINEAGE_EXPORT_SECRETS": "file",
    }
    if url:
        environ["OPENLINEAGE_URL"] = url.removesuffix("/api/v1/lineage")
    if namespace:
        environ["OPENLINEAGE_NAMESPACE"] = namespace
    return environ


def overrides(
    url: str | None, state_dir: str | None, namespace: str | None = None
) -> dict[str, str]:
    """OPENLINEAGE_* overrides for run_export: the server, the ledger's folder, no keyring."""
    scratch = tempfile.mkdtemp(prefix="olx-bench-")
    atexit.register(shutil.rmtree, scratch, True)
    return export_environ(Path(scratch), state_dir=state_dir, url=url, namespace=namespace)


def export_to(ws: str, **settings: str) -> dict[str, Any]:
    """run_export with these OPENLINEAGE_* settings (a fresh ledger): what it sent, timed."""
    from openlineage_export.export import ExportRequest, run_export

    environ = {**overrides(None, None), **settings}
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
