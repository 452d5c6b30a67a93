"""The export, as one library call a host makes: hub -> translate -> deliver.

A host (the editor, or our CLI) hands in what it owns: the workspace, its settings, a secrets
store, its HTTP client, a progress callback and a cancel flag. Nothing here prints or exits.
The pipe reads top to bottom in :func:`run_export`; each step is a function ``status`` reuses.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .deliver.destination import Retry
from .deliver.engine import blocking, deliver_async
from .deliver.held import Holdings
from .errors import DestinationUnreachable, StateError
from .forgot_step import server_forgot
from .held_step import server_holds
from .host.secrets import SecretStore
from .host.settings import Settings
from .hub.model import BadEntry, Graph, Run
from .hub.times import ends_before_start
from .hub.trail import TrailScan
from .opening import Opened, begin, ledger_keys, opened_destination, take_ledger
from .record import Recorder
from .report import ExportReport, Progress, RunResult
from .selection import Selection, check_pipelines, selecting
from .state.answers import Classified
from .state.index import EVERY_RUN, RunFilter, Winner
from .state.ledger import Ledger
from .translate import shapes
from .translate.encoded import TranslatedRun
from .translate.names import JobNames, graph_claims, may_clash


@dataclass(frozen=True)
class ExportRequest:
    """Everything a host hands to :func:`run_export`; only ``workspace`` is required."""

    workspace: Path | str
    dry_run: bool = False
    output: BinaryIO | None = None
    """Where a dry run writes its JSON Lines (required for a dry run)."""
    settings: Settings | None = None
    """Resolved settings; default: read from the workspace (and ``environ``)."""
    environ: Mapping[str, str] | None = None
    """Environment for OPENLINEAGE_* overrides; None means no overrides."""
    secrets: SecretStore | None = None
    http: Any = None
    """The host's HTTP surface for the ``http`` destination (see ``deliver/http.py``)."""
    on_bad_entry: Callable[[BadEntry], None] | None = None
    on_progress: Callable[[Progress], None] | None = None
    """Called as the export moves: each phase (reading the trail, then building or sending),
    with bytes read while reading and runs done after (see :class:`~.report.Progress`)."""
    on_retry: Callable[[Retry], None] | None = None
    """Called when the destination will try an event again (the server refuses connections,
    answers 503...), with the reason, the attempt and the seconds left before it gives up; may
    be called from the sending threads."""
    on_warning: Callable[[str], None] | None = None
    """Called with each warning as it arises, e.g. before sending, that the namespace changed
    since the last export to this destination (all are also in the report)."""
    on_run: Callable[[RunResult], None] | None = None
    """Called once per editor run with its events and what became of it (for reports)."""
    cancel: threading.Event | None = None
    full: bool = False
    """Send every run again, even those the destination already accepted."""
    ledger: Ledger | None = None
    """The export ledger; default: the user's (see ``state.ledger``). Never used by a dry run."""
    selection: Selection | None = None
    """Export only these runs (some pipelines, a window of start times); default: every run.
    The others are neither built, nor sent, nor recorded; with ``full``, the selected runs are
    all sent again."""


def run_export(request: ExportRequest) -> ExportReport:
    """Export the workspace's runs; returns the report.

    Raises (an :class:`~.errors.ExportError`) only when nothing was sent: a configuration,
    workspace or state problem, or another export of the same workspace to the same
    destination running (:class:`~.errors.ExportBusy`). A state problem met once runs went is
    in the report (``state_error``), with what was sent and kept. Blocking: it runs
    :func:`run_export_async` on an event loop of its own (in a thread of its own when this
    thread already runs one).
    """
    return blocking(run_export_async(request))


async def run_export_async(request: ExportRequest) -> ExportReport:
    """The export on the caller's event loop; an asyncio host hands in its own aiohttp session
    as ``request.http``. Reading the trail runs in a worker thread, so the loop stays free."""
    begun = begin(request, request.on_progress, request.on_retry)
    report, cancel, recorder, opened = begun.report, begun.cancel, begun.recorder, begun.opened
    report.selection = selection = selecting(request.selection)
    ledger: Ledger | None = None
    async with contextlib.AsyncExitStack() as stack:
        destination = opened_destination(stack, request, begun)
        if not request.dry_run:
            ledger = take_ledger(stack, request, opened, destination, recorder)
        only = EVERY_RUN if selection is None else selection.run_filter()
        try:
            scan = await asyncio.to_thread(
                scan_trail,
                opened,
                recorder.bad_entry,
                recorder.reading,
                fingerprints=not request.dry_run,
                starts=only.timed,
            )
            stack.callback(scan.index.close)
            check_pipelines(selection, opened.graph, scan.index.pipelines)
            if ledger is not None:  # once the selection holds: one refused leaves no trace
                recorder.use_ledger(ledger, *ledger_keys(opened))
            selected = scan.runs if selection is None else scan.index.count(only)
            recorder.scanned(selected, never_run(opened.graph, scan, selection), scan.runs)
            names = check_names(opened, scan, recorder)
            full = request.full or await server_forgot(
                destination, recorder, scan, opened, cancel, only
            )
            held = None
            if not full:
                held = await server_holds(
                    destination, recorder, scan, opened.graph, opened.translation, cancel
                )
            ledger_id = recorder.destination_id
            plan = classify(scan, ledger, ledger_id, opened.fingerprint, full=full, only=only)
            runs = translate(
                opened,
                scan,
                plan,
                recorder,
                names,
                keep_unchanged=request.on_run is not None,
                held=held,
            )
            try:
                await deliver_async(runs, destination, recorder.outcome, cancel)
            except DestinationUnreachable as exc:
                recorder.outage(str(exc), explained=exc.explained)
            recorder.finish(cancelled=cancel.is_set())
        except StateError as exc:
            if not recorder.sent_anything:
                recorder.abandon()
                raise
            recorder.state_failure(str(exc), cancelled=cancel.is_set())
    return report


def scan_trail(
    opened: Opened,
    on_bad: Callable[[BadEntry], None],
    on_read: Callable[[int, int], None] | None = None,
    *,
    fingerprints: bool = True,
    starts: bool = False,
) -> TrailScan:
    """Step *scan*: the first pass over the trail, indexing each trace id's current record
    (and its fingerprint, which only the ledger needs: a dry run goes without; its start,
    which only a selection by time needs); ``on_read(bytes_done, bytes_total)`` now and then
    as it goes."""
    return opened.trail.scan(on_bad, on_read=on_read, fingerprints=fingerprints, starts=starts)


def classify(
    scan: TrailScan,
    ledger: Ledger | None,
    destination_id: int | None,
    fingerprint: bytes,
    *,
    full: bool = False,
    only: RunFilter = EVERY_RUN,
) -> Iterator[Classified]:
    """Step *classify*: each run of the trail (that ``only`` takes), pending unless the ledger
    says it was accepted."""
    if ledger is None or full:
        return (Classified(winner, True) for winner in scan.index.in_trail_order(only))
    return ledger.classify(scan.index, destination_id, fingerprint, only)


def check_names(opened: Opened, scan: TrailScan, recorder: Recorder) -> JobNames:
    """Step *check names*: the job names that would stand for two different jobs.

    Pipelines and stages of the graph and of the trail (a pipeline deleted from the graph
    still has runs) are all counted; each ambiguous name is one warning, and the runs that
    would use one are refused in :func:`translate`.
    """
    pipelines = scan.pipelines
    if opened.translation.server == "datahub":
        return JobNames(())  # its job names encode the pipeline id's dots (translate/datahub.py)
    if not may_clash([*pipelines, *(p.id for p in opened.graph.pipelines)]):
        return JobNames(())
    names = JobNames(
        [
            *graph_claims(opened.graph),
            *((p, None) for p in sorted(pipelines)),
            *scan.index.stages_run(),
        ]
    )
    for clash in names.clashes.values():
        recorder.add_warning(
            f"{clash}: the runs that would use it are not exported, so that the "
            "server does not merge two jobs into one; give one of them another id"
        )
    return names


def translate(
    opened: Opened,
    scan: TrailScan,
    plan: Iterable[Classified],
    recorder: Recorder,
    names: JobNames,
    *,
    keep_unchanged: bool,
    held: Holdings | None = None,
) -> Iterator[tuple[TranslatedRun, Winner]]:
    """Step *translate*: the events of each pending run, read from the trail a second time.

    Unchanged runs are counted without being read, unless ``keep_unchanged`` (a report wants
    their events too). A run the server already ``held`` as its events would leave it is
    recorded as accepted, not sent. The others are sent if they :func:`goes`.
    """
    translator = shapes.translator_for(opened.translation.server)(opened.graph, opened.translation)
    for run, item in opened.trail.runs(
        scan, _to_read(plan, recorder, keep_unchanged), recorder.bad_entry
    ):
        events = translator.translate(run)
        if not item.pending:
            recorder.unchanged(events)
            continue
        if held is not None and names.clash(run) is None and held.holds(events.facts):
            recorder.held(events, item.winner)
            continue
        if goes(opened, scan, recorder, names, run, events, item.winner):
            yield events, item.winner


def goes(
    opened: Opened,
    scan: TrailScan,
    recorder: Recorder,
    names: JobNames,
    run: Run,
    events: TranslatedRun,
    winner: Winner,
) -> bool:
    """Whether a pending run's ``events`` go to the destination: not when its job name is
    ambiguous (refused: a failed run, nothing sent); one that ends before it starts goes as
    recorded, with a warning."""
    for problem in ends_before_start(run):
        recorder.add_warning(
            f"{opened.trail.where(scan, winner)}: run {run.trace_id!r} "
            f"{problem}; exported as recorded"
        )
    clash = names.clash(run)
    if clash is not None:
        recorder.refused(events, winner, f"{clash}; not exported")
        return False
    return True


def _to_read(
    plan: Iterable[Classified], recorder: Recorder, keep_unchanged: bool
) -> Iterator[Classified]:
    for item in plan:
        if item.pending or keep_unchanged:
            yield item
        else:
            recorder.unchanged(None)


def never_run(graph: Graph, scan: TrailScan, selection: Selection | None = None) -> list[str]:
    """Pipelines of the graph (those a selection names) with no run on the trail: OpenLineage
    is a log of runs."""
    ran = scan.pipelines
    named = selection.pipelines if selection is not None else ()
    return [p for p in named or [p.id for p in graph.pipelines] if p not in ran]
