"""``status``: per destination, how many runs are exported, pending and failed, and when."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .deliver.ledger import Ledger
from .export import events_fingerprint, translation_config
from .host.settings import load_settings
from .host.workspace import Workspace
from .hub.graph import read_graph
from .hub.trail import AuditTrail


@dataclass(frozen=True, slots=True)
class DestinationState:
    """One destination's standing for the workspace's current trail."""

    destination: str
    runs: int
    exported: int
    pending: int
    failed: int
    last_export_started: str | None
    last_export_finished: str | None


def export_status(workspace_path: Path | str, environ: Mapping[str, str],
                  ledger: Ledger | None = None) -> tuple[int, int, list[DestinationState]]:
    """(runs on the trail, bad entries, the state of each destination the ledger knows)."""
    workspace = Workspace.open(workspace_path)
    settings = load_settings(workspace.root, environ)
    bad = 0

    def count_bad(_entry: object) -> None:
        nonlocal bad
        bad += 1

    graph = read_graph(workspace.graph_file, workspace.display(workspace.graph_file), count_bad)
    fingerprint = events_fingerprint(translation_config(settings, graph))
    own = ledger is None
    ledger = ledger or Ledger.open(environ)
    trail = AuditTrail(workspace.audit_dir, display_root=workspace.root)
    scan = trail.scan(count_bad)
    try:
        states = []
        for known in ledger.status(str(workspace.root)):
            destination_id = ledger.destination_id(str(workspace.root), known.destination)
            pending = sum(w.pending for w in ledger.classify(scan.index, destination_id,
                                                             fingerprint))
            states.append(DestinationState(
                known.destination, scan.runs, scan.runs - pending, pending, known.failed,
                known.last_export_started, known.last_export_finished))
        return scan.runs, bad, states
    finally:
        scan.index.close()
        if own:
            ledger.close()
