"""What an export did: counts, the runs left behind and why, as a value the host can show."""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..hub.model import BadEntry
from ..translate.encoded import TranslatedRun
from .selection import Selection

MAX_LISTED = 200
"""How many bad entries and failed runs a report keeps by name (all are counted)."""


@dataclass(frozen=True, slots=True)
class FailedRun:
    """An editor run the destination did not take whole, with the destination's reason."""

    trace_id: str
    run_id: str
    pipeline: str
    reason: str
    events_accepted: int


@dataclass(frozen=True, slots=True)
class RunResult:
    """One editor run's events and what became of them, for a host's own report."""

    run: TranslatedRun
    state: str
    """``built`` (dry run), ``sent``, ``unchanged`` (already accepted), ``failed``,
    ``interrupted``.
    """
    reason: str | None = None
    """The destination's reason when ``failed``."""


PHASES = ("reading", "building", "sending")
"""The phases of an export, in order: ``reading`` the trail (its first pass), then ``building``
the events (a dry run) or ``sending`` them (translation and delivery go hand in hand)."""


@dataclass(frozen=True, slots=True)
class Progress:
    """Where an export is, for a progress bar: editor runs done out of the total.

    While ``phase`` is ``reading``, the runs are not counted yet (``runs_total`` is 0) and
    ``bytes_done`` of ``bytes_total`` (the segments' sizes on disk) tell how far the first pass
    over the trail is.
    """

    runs_done: int
    runs_total: int
    events_sent: int
    runs_failed: int
    phase: str = "sending"
    """One of :data:`PHASES`."""
    bytes_done: int = 0
    bytes_total: int = 0


@dataclass
class ExportReport:
    """The summary of one export (or dry run)."""

    destination: str
    dry_run: bool
    namespace: str = ""
    runs_total: int = 0
    """The runs this export took: every run on the trail, or those its selection took."""
    runs_on_trail: int = 0
    """Every run on the trail, selected or not."""
    selection: Selection | None = None
    """Which runs it took, when not every run (``runs_on_trail - runs_total`` were left out:
    neither built, nor sent, nor recorded)."""
    runs_sent: int = 0
    events_sent: int = 0
    runs_unchanged: int = 0
    runs_held: int = 0
    """Of the unchanged runs, those the server was found to hold (asked before a first
    export: ``deliver/http/held.py``), recorded as accepted without being sent."""
    runs_failed: int = 0
    failed: list[FailedRun] = field(default_factory=list)
    never_run: list[str] = field(default_factory=list)
    bad_entries: int = 0
    bad: list[BadEntry] = field(default_factory=list)
    cancelled: bool = False
    outage: str | None = None
    outage_explained: bool = False
    """The outage's message names its cause and fix (a server that speaks no TLS): no hint to
    check the address follows it."""
    state_error: str | None = None
    """Why the export stopped when the ledger (or the run index) could no longer be written,
    naming the file and what to do; what was recorded before is kept."""
    namespace_from: str | None = None
    """The workspace's name when the namespace had to be changed from it to be one a server
    accepts (``acme analytics`` -> ``acme-analytics``); None when it was used as it is."""
    dataset_namespaces: set[str] = field(default_factory=set)
    """The namespaces of the datasets in the events sent (or built): a lineage server lists
    datasets under these, not under the jobs' ``namespace``. The first :data:`MAX_LISTED` in
    sorted order (the same ones whatever order the runs ended in); see
    :attr:`dataset_namespaces_more`."""
    dataset_namespaces_more: bool = False
    """Other namespaces were seen beyond those kept (their number is not kept: counting
    distinct names would keep them all)."""
    _namespaces_sorted: list[str] = field(default_factory=list, repr=False, compare=False)
    warnings: list[str] = field(default_factory=list)
    """Things worth telling that left nothing behind (e.g. a run that ends before it starts)."""

    batches: int = 0
    """Requests that carried a batch of events the server took (the spec's ``/batch``)."""
    notes: list[str] = field(default_factory=list)
    """What this export learnt of the server, said once (e.g. it takes no batches of events)."""

    def note(self, message: str) -> None:
        """Keep a note for the summary (a destination's few; the first ones)."""
        if len(self.notes) < MAX_LISTED and message not in self.notes:
            self.notes.append(message)

    def warn(self, message: str) -> None:
        """Keep a warning for the summary (the first ones by text; all are worth a look)."""
        if len(self.warnings) < MAX_LISTED:
            self.warnings.append(message)

    def add_bad(self, entry: BadEntry) -> None:
        """Count a bad entry, keeping the first ones by name."""
        self.bad_entries += 1
        if len(self.bad) < MAX_LISTED:
            self.bad.append(entry)

    def add_dataset_namespaces(self, namespaces: Iterable[str]) -> None:
        """Keep the first :data:`MAX_LISTED` dataset namespaces in sorted order, noting that
        there were more: a trail of a million namespaces must not keep a million names."""
        kept, ordered = self.dataset_namespaces, self._namespaces_sorted
        for namespace in namespaces:
            if namespace in kept:
                continue
            if len(ordered) >= MAX_LISTED:
                self.dataset_namespaces_more = True
                if namespace > ordered[-1]:
                    continue
                kept.discard(ordered.pop())
            insort(ordered, namespace)
            kept.add(namespace)

    def add_failed(self, failure: FailedRun) -> None:
        """Count a run the destination did not take, keeping the first ones by name."""
        self.runs_failed += 1
        if len(self.failed) < MAX_LISTED:
            self.failed.append(failure)

    def failed_in_order(self) -> list[FailedRun]:
        """The runs left behind in a stable order (by pipeline, reason, trace id), whatever
        order the destination answered in."""
        return sorted(self.failed, key=lambda f: (f.pipeline, f.reason, f.trace_id))

    @property
    def exit_code(self) -> int:
        """0 all done; 1 something left behind; 2 the state folder failed; 4 server
        unreachable; 130 cancelled."""
        if self.cancelled:
            return 130
        if self.outage is not None:
            return 4
        if self.state_error is not None:
            return 2
        if self.bad_entries or self.runs_failed:
            return 1
        return 0

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (``--json``)."""
        # A dry run sends nothing: its counts are of runs and events *built*; "sent" stays
        # (0) so that a host reading it finds the same keys in both.
        runs: dict[str, int] = {
            "total": self.runs_total,
            "sent": self.runs_sent,
            "unchanged": self.runs_unchanged,
            "held": self.runs_held,
            "failed": self.runs_failed,
        }
        events = {"sent": self.events_sent}
        if self.dry_run:
            runs.update(sent=0, built=self.runs_sent)
            events = {"sent": 0, "built": self.events_sent}
        return {
            "destination": self.destination,
            "dryRun": self.dry_run,
            "namespace": self.namespace,
            "runs": runs,
            "events": events,
            "batches": self.batches,
            "selection": None
            if self.selection is None
            else {
                **self.selection.to_dict(),
                "runsSelected": self.runs_total,
                "runsOnTrail": self.runs_on_trail,
            },
            "neverRun": list(self.never_run),
            "badEntries": {
                "count": self.bad_entries,
                "listed": [{"file": b.file, "line": b.line, "reason": b.reason} for b in self.bad],
            },
            "failedRuns": [
                {
                    "traceId": f.trace_id,
                    "runId": f.run_id,
                    "pipeline": f.pipeline,
                    "reason": f.reason,
                    "eventsAccepted": f.events_accepted,
                }
                for f in self.failed_in_order()
            ],
            "cancelled": self.cancelled,
            "outage": self.outage,
            "stateError": self.state_error,
            "namespaceFrom": self.namespace_from,
            "datasetNamespaces": sorted(self.dataset_namespaces),
            "datasetNamespacesMore": self.dataset_namespaces_more,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "exitCode": self.exit_code,
        }
