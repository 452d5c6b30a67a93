"""Step *scan*: the first pass over the trail, and the pipelines that never ran."""

from __future__ import annotations

from collections.abc import Callable

from ..hub.model import BadEntry, Graph
from ..hub.trail import TrailScan
from .opening import Opened
from .selection import Selection


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


def never_run(graph: Graph, scan: TrailScan, selection: Selection | None = None) -> list[str]:
    """Pipelines of the graph (those a selection names) with no run on the trail: OpenLineage
    is a log of runs."""
    ran = scan.pipelines
    named = selection.pipelines if selection is not None else ()
    return [p for p in named or [p.id for p in graph.pipelines] if p not in ran]
