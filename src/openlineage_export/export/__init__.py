"""The export, as a library: what a host (the editor, our CLI) calls.

- :func:`run_export` (and :func:`run_export_async`) with an :class:`ExportRequest`: the pipe,
  read top to bottom in ``pipe.py``, one module per step: ``opening`` (open), ``scanning``
  (scan), ``recalling`` (did the server forget what the ledger says it took), ``holding``
  (what the server already holds), ``classifying`` (classify), ``translating`` (check
  names, translate), the engine of ``deliver/`` (deliver) and ``recording`` (record);
- :func:`run_watch` with a :class:`WatchRequest` (``export --watch``): the same steps, then
  the trail followed as runs end;
- :func:`export_status` and :func:`runs_standing`: the same steps up to classify, read-only;
- the values they take and give: :class:`Selection` (a part of the trail), the
  :class:`ExportReport` with its :class:`Progress` and :class:`RunResult`.

Nothing here prints or exits: the hosts do.
"""

from __future__ import annotations

from .pipe import run_export, run_export_async
from .report import ExportReport, FailedRun, Progress, RunResult
from .request import ExportRequest
from .selection import Selection, parse_when
from .status import RunsStanding, WorkspaceStatus, export_status, runs_standing
from .watch import WatchRequest, run_watch, run_watch_async

__all__ = [
    "ExportReport",
    "ExportRequest",
    "FailedRun",
    "Progress",
    "RunResult",
    "RunsStanding",
    "Selection",
    "WatchRequest",
    "WorkspaceStatus",
    "export_status",
    "parse_when",
    "run_export",
    "run_export_async",
    "run_watch",
    "run_watch_async",
    "runs_standing",
]
