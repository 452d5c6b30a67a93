"""A whole synthetic workspace: its settings, graph and trail, and a summary of what it holds."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from ..audit import AuditWriter
from ..layout import Workspace
from .graph import make_pipelines
from .shape import DELETED_RUNS, GZIP_LEVEL, MEAN_GAP_MS, OTHER_KIND, START
from .trail import Trail


def write_workspace(
    root: Path,
    runs: int,
    *,
    seed: int = 0,
    pipelines: int = 20,
    segment_lines: int = 50_000,
    gzip_closed: bool = True,
    bad_every: int = 0,
    updates: float = 0.3,
    running_tail: int = 0,
    torn_tail: bool = False,
) -> dict[str, Any]:
    """Write a complete contract workspace under ``root`` and return a summary of it.

    ``runs`` runs of ``pipelines`` graph pipelines (at least 2; the last tenth, at least one,
    never run) are written as an audit trail of segments of ``segment_lines`` lines, the closed
    ones gzip-compressed when ``gzip_closed``. ``updates`` is the share of runs also recorded
    when they start; the last ``running_tail`` runs are only recorded as ``running``.
    ``bad_every`` > 1 makes every ``bad_every``-th line malformed (0: none); ``torn_tail`` ends
    the newest segment with half a line. The same arguments give the same bytes.

    The summary: ``runs`` (distinct trace ids with a good record), ``records`` (good run
    lines), ``lines`` (complete lines of every kind, bad ones included), ``bad_lines``,
    ``other_lines`` (edit/settings/export), ``statuses`` (runs by their current status),
    ``pipelines`` (in the graph), ``never_run`` (graph pipelines without a run: the reserved
    ones, and more when ``runs`` is small), ``deleted`` (pipelines that ran, then left the
    graph), ``segments`` and ``torn_tail``.
    """
    if runs < 0 or pipelines < 2 or segment_lines < 1 or not 0 <= updates <= 1:
        raise ValueError("need runs >= 0, pipelines >= 2, segment_lines >= 1, 0 <= updates <= 1")
    if bad_every == 1 or bad_every < 0 or not 0 <= running_tail <= runs:
        raise ValueError("need bad_every 0 or >= 2 and 0 <= running_tail <= runs")
    workspace = Workspace(root)
    if any(workspace.audit.iterdir()):
        raise FileExistsError(
            f"{workspace.audit} already holds a trail; write into a new directory"
        )

    rng = random.Random(seed)
    graph = make_pipelines(rng, pipelines)
    never = graph[-max(1, pipelines // 10) :]
    deleted = make_pipelines(rng, 2, prefix="retired-")
    workspace.settings(
        {"openlineage.url": "http://localhost:5000", "editor.fontSize": 13, "git.autofetch": True},
        pretty=True,
    )
    workspace.graph(
        {
            "format": "lineage-hub/graph@1",
            "workspace": {"name": f"synthetic-{seed}"},
            "pipelines": [p.as_graph() for p in graph],
        },
        pretty=True,
    )

    active = graph[: len(graph) - len(never)]
    segments = AuditWriter(
        workspace.audit,
        lines_per_segment=segment_lines,
        gzip_closed=gzip_closed,
        gzip_level=GZIP_LEVEL,
        background=True,
    )
    trail = Trail(rng, segments, active + deleted, bad_every, updates)
    trail.emit(
        '{"kind":"settings","recordedAt":"'
        + trail.clock.format(int(START.timestamp() * 1000) - 60_000, (0, "Z"))
        + '","user":"dana.kim@acme.example","key":"openlineage.url","value":"http://localhost:5000"}\n'
    )
    trail.others += 1
    now = int(START.timestamp() * 1000)
    retire_after = runs * 3 // 10  # the deleted pipelines ran in the first 30 % of the trail
    for number in range(runs):
        now += 1_000 + int(rng.random() * 2 * (MEAN_GAP_MS - 1_000))
        trail.flush(now)
        if number == retire_after:
            for gone in deleted:
                trail.other(now, deleted=gone)
        elif rng.random() < OTHER_KIND:
            trail.other(now)
        if number < retire_after and rng.random() < DELETED_RUNS:
            pipeline = deleted[int(rng.random() * len(deleted))]
        else:
            pipeline = active[int(rng.random() * len(active))]
        trail.run(now, pipeline, running=number >= runs - running_tail)
    trail.flush()
    torn = ""
    if torn_tail:
        torn = (
            f'{{"kind":"run","traceId":"{rng.getrandbits(128):032x}",'
            f'"pipeline":{active[0].quoted},"status":"succeeded","startedAt":"2026-'
        )
    segments.close(torn)

    return {
        "runs": sum(trail.final.values()),
        "records": trail.records,
        "lines": trail.lines,
        "bad_lines": trail.bad,
        "other_lines": trail.others,
        "statuses": dict(sorted(trail.final.items())),
        "pipelines": len(graph),
        "never_run": [p.id for p in graph if p.id not in trail.ran],
        "deleted": sorted(trail.ran & {p.id for p in deleted}),
        "segments": segments.count,
        "torn_tail": torn_tail,
    }
