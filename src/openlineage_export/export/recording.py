"""Step *record* of the pipe: what became of each run, kept in one place.

The :class:`Recorder` is the only writer of the export's report and of the ledger, and the
only caller of the host's callbacks (bad entries, runs, progress). Every text a destination
hands back passes its destination's redaction here, once, before it is stored or shown.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from .. import DISTRIBUTION
from ..deliver.destination import Retry, RunOutcome
from ..errors import StateError
from ..guards.secrecy import Redactor
from ..hub.model import BadEntry
from ..state.index import Winner
from ..state.ledger import Ledger
from ..translate.encoded import TranslatedRun
from .report import ExportReport, FailedRun, Progress, RunResult


class Recorder:
    """Keeps the report, the ledger and the host informed as the export goes."""

    def __init__(
        self,
        report: ExportReport,
        cancel: threading.Event,
        *,
        on_bad_entry: Callable[[BadEntry], None] | None = None,
        on_run: Callable[[RunResult], None] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        on_retry: Callable[[Retry], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.report = report
        self._cancel = cancel
        self._on_bad_entry = on_bad_entry
        self._on_run = on_run
        self._on_progress = on_progress
        self._on_retry = on_retry
        self._on_warning = on_warning
        self._redact = Redactor()
        self.ledger: Ledger | None = None
        self.destination_id: int | None = None
        self._fingerprint = b""
        self._phase = "reading"

    def bad_entry(self, entry: BadEntry) -> None:
        """A line of the trail (or an entry of the graph) we could not use."""
        self.report.add_bad(entry)
        if self._on_bad_entry is not None:
            self._on_bad_entry(entry)

    def add_warning(self, message: str) -> None:
        """Something worth telling that leaves nothing behind: kept for the summary only (the
        host reads it there)."""
        self.report.warn(message)

    def destination(self, name: str, redact: Redactor) -> None:
        """Where the events go, and what to mask in what it says."""
        self._redact = redact
        if not self.report.dry_run:
            self.report.destination = name

    def use_ledger(
        self, ledger: Ledger, workspace: str, fingerprint: bytes, namespace: str | None = None
    ) -> None:
        """Record each run's fate in ``ledger``, under (workspace, this destination).

        With ``namespace``, warn (before anything is sent) when this destination got the
        workspace's runs under another job namespace last time, and remember this one.
        """
        self.ledger = ledger
        self._fingerprint = fingerprint
        self.destination_id = ledger.destination_id(workspace, self.report.destination)
        if namespace is not None:
            before = ledger.remembered(self.destination_id, "namespace")
            if before is not None and before != namespace:
                self.warn_host(
                    f"openlineage.namespace is now '{namespace}', but the runs already at "
                    f"{self.report.destination} were sent under '{before}'. Marquez keys runs "
                    f"by run id across namespaces: runs whose trace id is a UUID stay filed "
                    f"under '{before}' while their stage runs go to '{namespace}'. To keep one "
                    f"namespace: {DISTRIBUTION} settings set openlineage.namespace {before}"
                )
            ledger.remember(self.destination_id, "namespace", namespace)
        ledger.started(self.destination_id)

    def reading(self, bytes_done: int, bytes_total: int) -> None:
        """The first pass over the trail has read ``bytes_done`` of its ``bytes_total``."""
        if self._on_progress is not None:
            r = self.report
            self._on_progress(
                Progress(0, 0, r.events_sent, r.runs_failed, "reading", bytes_done, bytes_total)
            )

    def scanned(
        self, runs_total: int, never_run: list[str], runs_on_trail: int | None = None
    ) -> None:
        """The first pass is done: how many runs there are (taken by the selection, of those
        on the trail), which pipelines never ran."""
        self.report.runs_total = runs_total
        self.report.runs_on_trail = runs_total if runs_on_trail is None else runs_on_trail
        self.report.never_run = never_run
        self._phase = "building" if self.report.dry_run else "sending"
        self._progress()

    def retry(self, notice: Retry) -> None:
        """The destination will try an event again: tell the host, secrets redacted."""
        if self._on_retry is not None and not self._cancel.is_set():
            self._on_retry(
                Retry(
                    self._redact(notice.destination),
                    self._redact(notice.reason),
                    notice.attempt,
                    max(0.0, notice.seconds_left),
                )
            )

    def warn_host(self, message: str) -> None:
        """Something worth telling now that leaves nothing behind: kept for the summary and
        handed to the host at once."""
        self.report.warn(message)
        if self._on_warning is not None:
            self._on_warning(message)

    def notice(self, message: str) -> None:
        """Something worth telling now that may not hold by the end (nothing listens at the
        address, yet): handed to the host at once, not kept for the summary."""
        if self._on_warning is not None and not self._cancel.is_set():
            self._on_warning(message)

    def unchanged(self, run: TranslatedRun | None) -> None:
        """A run the destination already holds as it is (its events, when they were built)."""
        self.report.runs_unchanged += 1
        if run is not None and self._on_run is not None:
            self._on_run(RunResult(run, "unchanged"))
        self._progress()

    def held(self, run: TranslatedRun, winner: Winner) -> None:
        """A run the server was found to hold as its events would leave it: unchanged, and
        recorded as accepted (nothing sent)."""
        self.report.runs_held += 1
        if self.ledger is not None and self.destination_id is not None:
            self.ledger.record(
                self.destination_id,
                winner,
                run.run_id,
                self._fingerprint,
                delivered=True,
                events=len(run),
            )
        self.unchanged(run if self._on_run is not None else None)

    def outcome(self, run: TranslatedRun, winner: Winner, outcome: RunOutcome) -> None:
        """What the destination did with one run."""
        report = self.report
        report.events_sent += outcome.accepted
        error = self._redact(outcome.error) if outcome.error is not None else None
        if outcome.delivered:
            report.runs_sent += 1
            state = "built" if report.dry_run else "sent"
            report.add_dataset_namespaces(
                namespace
                for event in run.facts
                for side in (event.inputs, event.outputs)
                for namespace, _ in side
            )
        elif error is not None and not self._cancel.is_set():
            report.add_failed(
                FailedRun(run.trace_id, run.run_id, run.pipeline, error, outcome.accepted)
            )
            state = "failed"
        else:
            state = "interrupted"
        if self.ledger is not None and self.destination_id is not None and state != "interrupted":
            self.ledger.record(
                self.destination_id,
                winner,
                run.run_id,
                self._fingerprint,
                delivered=state == "sent",
                events=outcome.accepted,
                reason=error,
            )
        if self._on_run is not None:
            self._on_run(RunResult(run, state, error))
        self._progress()

    def refused(self, run: TranslatedRun, winner: Winner, reason: str) -> None:
        """A run this export will not send (its events were built, none went): failed."""
        self.outcome(run, winner, RunOutcome(0, reason))

    @property
    def sent_anything(self) -> bool:
        """Whether any event reached the destination (or was recorded as refused)."""
        report = self.report
        return bool(report.events_sent or report.runs_sent or report.runs_failed)

    def outage(self, message: str, *, explained: bool = False) -> None:
        """The destination could not be reached at all: the export stopped (``explained``: the
        message names the cause and its fix)."""
        self.report.outage = self._redact(message)
        self.report.outage_explained = explained

    def state_failure(self, message: str, *, cancelled: bool) -> None:
        """The ledger (or the run index) could not be written any more: the export stopped.

        What the ledger held before stays; the runs sent since are sent again next time.
        """
        self.report.state_error = (
            f"{message} (the runs sent since it was last written "
            "were not recorded: the next export sends them again)"
        )
        self.report.cancelled = cancelled

    def abandon(self) -> None:
        """The export ends before sending anything: note it, if the ledger still can."""
        if self.ledger is not None and self.destination_id is not None:
            with contextlib.suppress(StateError):
                self.ledger.finished(self.destination_id, "stopped")

    def finish(self, *, cancelled: bool) -> None:
        """The export is over: note how it ended."""
        self.report.cancelled = cancelled
        if self.ledger is not None and self.destination_id is not None:
            how = "interrupted" if cancelled else "stopped" if self.report.outage else "finished"
            self.ledger.finished(self.destination_id, how)

    def _progress(self) -> None:
        if self._on_progress is not None:
            r = self.report
            self._on_progress(
                Progress(
                    r.runs_sent + r.runs_failed + r.runs_unchanged,
                    r.runs_total,
                    r.events_sent,
                    r.runs_failed,
                    self._phase,
                )
            )
