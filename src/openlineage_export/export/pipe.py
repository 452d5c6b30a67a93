"""The export, as one library call a host makes: hub -> translate -> deliver.

A host (the editor, or our CLI) hands in what it owns: the workspace, its settings, a secrets
store, its HTTP client, a progress callback and a cancel flag. Nothing here prints or exits.
The pipe reads top to bottom in :func:`run_export`; each step is a function ``status`` reuses.
"""

from __future__ import annotations

import asyncio
import contextlib

from ..deliver.engine import blocking, deliver_async
from ..errors import DestinationUnreachable, StateError
from ..state.index import EVERY_RUN
from ..state.ledger import Ledger
from .batching import recall_batches, remember_batches
from .classifying import classify
from .holding import keeps_duplicates, server_holds
from .opening import begin, ledger_keys, opened_destination, take_ledger
from .recalling import server_forgot
from .report import ExportReport
from .request import ExportRequest
from .scanning import never_run, scan_trail
from .selection import check_pipelines, selecting
from .translating import check_names, translate


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
            keeps_duplicates(destination, recorder, opened)
            full = request.full or await server_forgot(
                destination, recorder, scan, opened, cancel, only
            )
            held = None
            if not full:
                held = await server_holds(destination, recorder, scan, opened, only, cancel)
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
            recall_batches(destination, recorder)
            try:
                order = request.order() if request.order is not None else None
                await deliver_async(runs, destination, recorder.outcome, cancel, order)
            except DestinationUnreachable as exc:
                recorder.outage(str(exc), explained=exc.explained)
            finally:
                remember_batches(destination, recorder)
            recorder.finish(cancelled=cancel.is_set())
        except StateError as exc:
            if not recorder.sent_anything:
                recorder.abandon()
                raise
            recorder.state_failure(str(exc), cancelled=cancel.is_set())
    return report
