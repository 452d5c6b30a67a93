"""``status``: per destination, how many runs are exported, pending and failed, and when.

Reads the trail and the ledger with the export's own steps (open, scan, classify); writes
nothing, so it never waits for, nor holds up, an export running beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..files.whose import Checkouts
from ..host.settings import Settings
from ..hub.model import BadEntry
from ..hub.trail import TrailScan
from ..state.answers import DestinationStatus
from ..state.ledger import Ledger
from ..state.run_states import RunState, run_states
from .classifying import classify
from .opening import Opened, open_workspace
from .scanning import scan_trail


@dataclass(frozen=True, slots=True)
class DestinationState:
    """One destination's standing for the workspace's current trail."""

    destination: str
    runs: int
    exported: int
    pending: int
    """Runs to send: new, changed, or refused last time (``failed`` is a part of these)."""
    failed: int
    last_export_started: str | None
    last_export_finished: str | None
    last_export_outcome: str | None
    """``finished``, ``interrupted``, ``stopped`` (an outage); None while one runs or after a
    crash."""


@dataclass(frozen=True, slots=True)
class WorkspaceStatus:
    """The trail's runs and bad entries, and the state of each destination exported to."""

    runs: int
    bad_entries: int
    destinations: list[DestinationState]


def export_status(
    workspace_path: Path | str,
    environ: Mapping[str, str],
    *,
    settings: Settings | None = None,
) -> WorkspaceStatus:
    """The standing of each destination the ledger knows for this workspace (``settings``:
    those in force, when a host overrides some; default: read from the workspace)."""
    bad = _Counter()
    opened = open_workspace(workspace_path, settings, environ, bad)
    ledger = Ledger.open_read_only(environ, Checkouts.around(opened.workspace.root, environ))
    scan = scan_trail(opened, bad)
    try:
        states = (
            []
            if ledger is None
            else [
                _standing(ledger, scan, opened, entry)
                for entry in ledger.status(opened.workspace.key)
            ]
        )
        return WorkspaceStatus(scan.runs, bad.count, states)
    finally:
        scan.index.close()
        if ledger is not None:
            ledger.close()


def _standing(
    ledger: Ledger, scan: TrailScan, opened: Opened, entry: DestinationStatus
) -> DestinationState:
    destination_id = ledger.find_destination(opened.workspace.key, entry.destination)
    pending = sum(
        item.pending for item in classify(scan, ledger, destination_id, opened.fingerprint)
    )
    return DestinationState(
        entry.destination,
        scan.runs,
        scan.runs - pending,
        pending,
        entry.failed,
        entry.last_export_started,
        entry.last_export_finished,
        entry.last_export_outcome,
    )


@dataclass(frozen=True, slots=True)
class RunsStanding:
    """Each run of the trail as one destination has it (``status --runs``)."""

    destination: str
    namespace: str
    runs: list[RunState]


def runs_standing(
    workspace_path: Path | str,
    environ: Mapping[str, str],
    destination: str,
    *,
    settings: Settings | None = None,
) -> RunsStanding:
    """Every run of the trail, in trail order, with where it stands at ``destination`` (as
    the ledger names it): exported, pending, or refused with the server's reason."""
    opened = open_workspace(workspace_path, settings, environ, _Counter())
    ledger = Ledger.open_read_only(environ, Checkouts.around(opened.workspace.root, environ))
    scan = scan_trail(opened, _Counter())
    try:
        found = (
            None if ledger is None else ledger.find_destination(opened.workspace.key, destination)
        )
        runs = list(run_states(scan.index, ledger, found, opened.fingerprint))
        return RunsStanding(destination, opened.translation.namespace, runs)
    finally:
        scan.index.close()
        if ledger is not None:
            ledger.close()


class _Counter:
    """Counts bad entries (status shows how many; the export names them)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, _entry: BadEntry) -> None:
        self.count += 1
