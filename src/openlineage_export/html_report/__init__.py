"""An HTML report of an export: see before you send.

Two parts, fed in turn: a :class:`ReportCollector` (pure, bounded memory) takes each run as the
export hands it over (``ExportRequest.on_run``), and :func:`write_report` renders what it kept,
with the export's report, as one self-contained HTML file::

    collector = ReportCollector()
    report = run_export(ExportRequest(workspace, dry_run=True, output=sink, on_run=collector.add))
    written = write_report("report.html", collector, report)
    if written.warning:      # e.g. Graphviz's dot is missing: the page says so instead
        print(written.warning)
"""

from __future__ import annotations

from .collector import ReportCollector
from .page import ReportFile, check_writable, render_report, write_report

__all__ = ["ReportCollector", "ReportFile", "check_writable", "render_report", "write_report"]
