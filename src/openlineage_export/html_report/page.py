"""The report's writer: what the collector kept and the export's report, as one HTML file.

The page is self-contained (inline style, script and SVG; nothing to fetch) and deterministic:
no clock, every list in a fixed order, so the same trail gives the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from .. import DISTRIBUTION, __version__
from ..errors import ConfigError, ExportError
from ..export.report import ExportReport
from ..files import named
from ..files.whose import NOWHERE, Checkouts
from ..terminal.text import shown
from .chart import bucket_name, chart, duration, when
from .collector import (
    MAX_EDGES,
    MAX_KEPT_BYTES,
    MAX_KEPT_RUNS,
    MAX_NODES,
    RECENT_FAILURES,
    RECENT_RUNS,
    RUN_STATES,
    PipelineHistory,
    ReportCollector,
)
from .details import RunDetail
from .drawing import REFUSED_COLOUR, Drawing, anchor, draw
from .lineage import LineageViews, views
from .template import JOBNAME, PAGE, RUN, SCRIPT, STYLE

MAX_PIPELINES_SHOWN = 300
"""Pipelines listed with their history, those with the most runs; the rest are counted."""

MAX_DETAILED_RUNS = 600
"""Runs shown in full across all pipelines; with many pipelines each shows fewer."""

EXPORT_STATES = ("built", "sent", "unchanged", "failed", "interrupted")
EXPORT_LABELS = {
    "built": "built",
    "sent": "sent",
    "unchanged": "unchanged",
    "failed": "refused by the server",
    "interrupted": "interrupted",
}


def _as_shown(value: object) -> object:
    """Every string the page shows, as the terminal shows it (``terminal/text.py``): a pipeline
    id, a file name or a server's words holding ESC, C1, a bidi override or a lone surrogate
    (which no UTF-8 page could hold) is written escaped; autoescape then makes it HTML."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return shown(value)


_USES_JOBNAME = "{% from 'jobname' import jobname with context %}"
_ENV = jinja2.Environment(
    loader=jinja2.DictLoader(
        {
            "jobname": JOBNAME,
            "run": _USES_JOBNAME + RUN,
            "page": _USES_JOBNAME + "{% from 'run' import run_block with context %}" + PAGE,
        }
    ),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    finalize=_as_shown,
)
_ENV.filters["num"] = "{:,}".format
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
CSP = (
    f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_SCRIPT_HASH}'; "
    "img-src data:"
)
"""Nothing may be fetched; only our own script may run."""


@dataclass(frozen=True, slots=True)
class ReportFile:
    """A written report: where, how big, and a warning to show (the graph could not be drawn)."""

    path: Path
    size: int
    warning: str | None


def check_writable(path: Path | str, checkouts: Checkouts = NOWHERE) -> None:
    """Fail early (before an export sends anything) when the report cannot be written there
    (a missing or read-only folder, a folder, a link a checkout holds on the way)."""
    try:
        named.check_writable(path, checkouts)
    except OSError as exc:
        raise ConfigError(f"cannot write the report {path}: {_said(exc, path)}") from None


def _said(exc: OSError, path: Path | str) -> str:
    return exc.what(path) if isinstance(exc, named.Refused) else str(exc.strerror or exc)


def write_report(
    path: Path | str,
    collector: ReportCollector,
    report: ExportReport,
    checkouts: Checkouts = NOWHERE,
) -> ReportFile:
    """Render the report and write it atomically at that very name (a reader never sees half
    a file; a link a checkout holds there is replaced, never written through: ``checkouts``
    says where checkouts are, seen from the workspace exported)."""
    drawing = draw(views(collector.graph), report.namespace, checkouts)
    data = render_report(collector, report, drawing).encode("utf-8")
    try:
        with named.replacing(path, checkouts) as new:
            new.stream.write(data)
            new.keep = True
    except OSError as exc:
        raise ExportError(f"cannot write the report {path}: {_said(exc, path)}") from exc
    return ReportFile(Path(path), len(data), drawing.warning)


def render_report(
    collector: ReportCollector, report: ExportReport, drawing: Drawing | None = None
) -> str:
    """The whole page as a string (``drawing`` defaults to laying out the collected graph)."""
    lineage = views(collector.graph)
    drawing = drawing or draw(lineage, report.namespace)
    every = collector.pipelines()
    busiest = sorted(every, key=lambda h: -h.runs)[:MAX_PIPELINES_SHOWN]
    histories = sorted(busiest, key=lambda h: h.job)
    more = len(every) - len(histories)
    if more or collector.runs_left_out:
        runs = collector.runs_left_out + sum(h.runs for h in every) - sum(h.runs for h in histories)
        pipelines_cut = f"{runs:,} runs of more pipeline jobs are counted in the totals only."
    else:
        pipelines_cut = ""
    limit = RECENT_RUNS
    if histories and limit * len(histories) > MAX_DETAILED_RUNS:
        limit = max(3, MAX_DETAILED_RUNS // len(histories))
    graph = collector.graph
    graph_cut = ""
    if graph.nodes_left_out or graph.edges_left_out:
        graph_cut = (
            f"The graph is capped at {MAX_NODES:,} jobs and datasets and "
            f"{MAX_EDGES:,} reads and writes: more were seen, and are not drawn."
        )
    kept_cut = ""
    if collector.kept.left_out:
        kept_cut = (
            f"At most {MAX_KEPT_RUNS:,} runs, with {MAX_KEPT_BYTES // (1024 * 1024)} MiB of "
            f"events, are kept in full across pipelines: {collector.kept.left_out:,} more "
            "were counted, and are not shown in full."
        )
    sent_events = sum(h.exported_events["sent"] for h in histories)
    bucket = bucket_name(histories)
    return _ENV.get_template("page").render(
        csp=Markup(CSP),
        style=Markup(STYLE),
        script=Markup(SCRIPT),
        program=DISTRIBUTION,
        version=__version__,
        namespace=report.namespace,
        dry_run=report.dry_run,
        headline=headline(collector, report),
        tiles=tiles(collector, report),
        drawing={
            "overview": Markup(drawing.overview) if drawing.overview else None,
            "note": drawing.note,
        },
        panels=panels(lineage, drawing),
        shared=len(lineage.overview.datasets),
        alone=len(lineage.overview.alone),
        show_refused=lineage.refused,
        refused_colour=REFUSED_COLOUR,
        graph_cut=graph_cut,
        kept_cut=kept_cut,
        pipelines_cut=pipelines_cut,
        job_rows=job_rows(collector),
        never_run=report.never_run,
        bad=report.bad,
        bad_count=report.bad_entries,
        refused=collector.refused,
        refused_count=collector.exports["failed"],
        outage=report.outage,
        cancelled=report.cancelled,
        not_tried=max(0, report.runs_total - collector.runs)
        if (report.cancelled or report.outage)
        else 0,
        bucket=bucket,
        recent_limit=limit,
        pipelines=[_pipeline(h, limit, bucket) for h in histories],
        export_states=[s for s in EXPORT_STATES if collector.exports[s]] or ["built"],
        export_labels=EXPORT_LABELS,
        exports=collector.exports,
        runs=collector.runs,
        events_total=collector.events if report.dry_run else report.events_sent,
        events_partial=0 if report.dry_run else max(0, report.events_sent - sent_events),
    )


def panels(lineage: LineageViews, drawing: Drawing) -> list[dict[str, Any]]:
    """One entry per pipeline drawing: its anchor, its job, what it holds, its SVG."""
    if not drawing.pipelines:
        return []
    out = []
    for index, (view, svg) in enumerate(
        zip(lineage.pipelines, drawing.pipelines, strict=True), start=1
    ):
        stages, datasets = len(view.stages), len(view.datasets)
        out.append(
            {
                "anchor": anchor(index),
                "job": view.pipeline,
                "svg": Markup(svg),
                "summary": (
                    f"{stages} stage job{'s' if stages != 1 else ''}, "
                    f"{datasets} dataset{'s' if datasets != 1 else ''}"
                    + (f", {len(view.shared)} shared with other pipelines" if view.shared else "")
                ),
            }
        )
    return out


def headline(collector: ReportCollector, report: ExportReport) -> str:
    """One sentence: what this export did."""
    runs = f"{report.runs_total:,} run{'s' if report.runs_total != 1 else ''}"
    runs += (
        " on the trail"
        if report.selection is None
        else f" selected of {report.runs_on_trail:,} on the trail ({report.selection.describe()})"
    )
    if report.dry_run:
        return f"Dry run: {runs} would be sent as {collector.events:,} events. Nothing was sent."
    parts = [f"{collector.exports['sent']:,} sent"]
    for state in ("unchanged", "failed", "interrupted"):
        if collector.exports[state]:
            parts.append(f"{collector.exports[state]:,} {EXPORT_LABELS[state]}")
    return f"Export to {report.destination}: {runs}; " + ", ".join(parts) + "."


def tiles(collector: ReportCollector, report: ExportReport) -> list[dict[str, Any]]:
    """The numbers at the top of the page."""
    label = (
        "runs on the trail"
        if report.selection is None
        else f"runs selected (of {report.runs_on_trail:,} on the trail)"
    )
    out = [{"label": label, "value": f"{report.runs_total:,}", "kind": "info"}]
    if report.dry_run:
        out.append(
            {
                "label": "runs built (would be sent)",
                "value": f"{collector.exports['built']:,}",
                "kind": "ok",
            }
        )
        out.append({"label": "events built", "value": f"{collector.events:,}", "kind": "info"})
    else:
        out.append({"label": "runs sent", "value": f"{collector.exports['sent']:,}", "kind": "ok"})
        out.append(
            {
                "label": "unchanged (already on the server)",
                "value": f"{collector.exports['unchanged']:,}",
                "kind": "info",
            }
        )
        out.append(
            {
                "label": "refused by the server",
                "value": f"{collector.exports['failed']:,}",
                "kind": "refused" if collector.exports["failed"] else "ok",
            }
        )
        out.append({"label": "events sent", "value": f"{report.events_sent:,}", "kind": "info"})
    failed = collector.states["failed"]
    out.append(
        {
            "label": "runs failed in the editor",
            "value": f"{failed:,}",
            "kind": "fail" if failed else "ok",
        }
    )
    out.append(
        {
            "label": "pipelines never run",
            "value": str(len(report.never_run)),
            "kind": "warn" if report.never_run else "ok",
        }
    )
    out.append(
        {
            "label": "bad entries",
            "value": f"{report.bad_entries:,}",
            "kind": "fail" if report.bad_entries else "ok",
        }
    )
    return out


def job_rows(collector: ReportCollector) -> list[dict[str, Any]]:
    """The graph as a table: one row per stage job, with what it reads and writes."""
    graph = collector.graph
    reads: dict[Any, list[Any]] = {}
    writes: dict[Any, list[Any]] = {}
    for dataset, job in graph.reads:
        reads.setdefault(job, []).append(dataset)
    for job, dataset in graph.writes:
        writes.setdefault(job, []).append(dataset)
    return [
        {
            "pipeline": pipeline,
            "job": job,
            "reads": sorted(reads.get(job, ())),
            "writes": sorted(writes.get(job, ())),
        }
        for job, pipeline in sorted(graph.stages.items(), key=lambda kv: (kv[1], kv[0]))
    ]


def _pipeline(history: PipelineHistory, limit: int, bucket: str) -> dict[str, Any]:
    recent = history.recent[:limit]
    shown = {id(run) for run in recent}
    failures = [run for run in history.recent[limit:] if _problem(run)]
    failures += [run for run in history.earlier_failures if id(run) not in shown]
    failures = sorted(failures, key=lambda run: run.order, reverse=True)[
        : max(1, min(RECENT_FAILURES, limit // 4))
    ]
    return {
        "job": history.job,
        "runs": history.runs,
        "events": history.events,
        "events_sent": history.exported_events["sent"],
        "runs_text": f"{history.runs:,} run{'s' if history.runs != 1 else ''}",
        "states": [(s, history.states[s]) for s in RUN_STATES if history.states[s]],
        "exports": dict(history.exports),
        "chart": chart(history, bucket),
        "recent": [_run(run) for run in recent],
        "hidden": history.runs - len(recent),
        "failures": [_run(run) for run in failures],
    }


def _problem(run: RunDetail) -> bool:
    return run.state in ("failed", "aborted") or run.export_state == "failed"


def _run(run: RunDetail) -> dict[str, Any]:
    attempts: dict[str, int] = {}
    for stage in run.stages:
        attempts[stage.job[1]] = attempts.get(stage.job[1], 0) + 1
    return {
        "state": run.state,
        "problem": _problem(run),
        "started": when(run.started),
        "duration": duration(run.seconds),
        "run_id": run.run_id,
        "trace_id": run.trace_id,
        "retried": run.retried,
        "export_state": run.export_state,
        "export_reason": run.export_reason,
        "error": run.error,
        "stages": [
            {
                "job": s.job,
                "attempt": s.attempt,
                "retry": attempts[s.job[1]] > 1,
                "state": s.state,
                "started": when(s.started),
                "duration": duration(s.seconds),
                "inputs": s.inputs,
                "outputs": s.outputs,
                "error": s.error,
            }
            for s in run.stages
        ],
    }
