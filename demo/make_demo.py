"""Regenerate the demo workspace ``demo/acme-analytics/``: ``python -m demo.make_demo`` (from the
repository).

The workspace follows ``shared/lineage-hub/CONTRACT.md``: settings, the Lineage hub's graph and
five days (1-5 November 2026) of its audit trail in three segments. The story it tells:

- ``daily-sales``, ``customer-360`` and ``inventory-sync`` run on a schedule;
  ``marketing-attribution`` runs on push or by hand; ``churn-model`` was added on 4 November
  and has never run.
- ``legacy-orders-export`` ran on 1 and 2 November from an old cron script (no ``engine``, no
  ``trigger``, old-style trace ids) and was then deleted from the graph.
- The engine was upgraded from 4.1.3 to 4.2.0 on the morning of 1 November: from then on trace
  ids are UUIDs (two in upper case) and most runs are recorded when they start and again when
  they end, two of them across a segment boundary.
- 3 November: ``daily-sales`` fails (extract retried, then the mart build hits a quota) and is
  re-run by hand; a marketing run is cancelled. 4 November: ``customer-360`` fails twice on
  Kafka and is re-run. 5 November: ``customer-360`` is still running when the trail is read,
  and the hub is half-way through writing its next line.

Everything is derived from this package, so the demo can be reviewed here and regenerated
byte for byte: no clock, a fixed random seed, and gzip headers without a time stamp.
Digests are hashes of what a stage read and how it was configured, so unchanged data keeps its
digest and changed data gets a new one. ``graph.py`` holds the graph and the settings,
``shapes.py`` how stages behave, ``simulate.py`` the hub that runs them, ``story.py`` the five
days; the files are written by ``hubwriter``, as the tests' and the benchmark's are.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from hubwriter import AuditWriter, RecordingOrder, Workspace

from .graph import GRAPH, SETTINGS
from .simulate import Trail
from .story import ROTATIONS, TORN_AFTER, build

WORKSPACE = Path(__file__).resolve().parent / "acme-analytics"


def write_workspace(root: Path = WORKSPACE) -> None:
    """Write settings, graph and the three audit segments under ``root``."""
    workspace = Workspace(root)
    workspace.settings(SETTINGS, pretty=True)
    workspace.graph(GRAPH, pretty=True)
    for path in workspace.audit.iterdir():
        path.unlink()  # the demo owns this folder: no stale segments
    writer = AuditWriter(workspace.audit)

    def reach(moment: datetime) -> None:
        """Start the segments the hub had started by ``moment``."""
        while writer.count <= sum(moment >= rotation for rotation in ROTATIONS):
            # the hub compressed the oldest closed segment, not yet the second
            writer.rotate(compress=writer.count == 1)

    def write(moment: datetime, line: str) -> None:
        reach(moment)
        writer.write(line + "\n")

    recorded = RecordingOrder(write)
    build(Trail(recorded.later))
    recorded.flush(TORN_AFTER)
    torn = recorded.next()
    if torn is not None:  # the hub was writing it when the trail was read: its first part
        moment, line = torn
        reach(moment)
        writer.write(line[: len(line) * 3 // 5])
    reach(ROTATIONS[-1])
    writer.close()


if __name__ == "__main__":
    write_workspace()
