"""Writes a Lineage hub workspace as the hub writes it: the demo's, the tests' and the benchmark's.

The workspace is the one ``../shared/lineage-hub/CONTRACT.md`` fixes: ``.workspace/settings.json``,
``.workspace/lineage/graph.json`` and the audit trail's numbered segments, plain or gzip (no time
stamp in the header, so the same input gives the same bytes), lines recorded as runs progress and
written in the order they were recorded, the newest segment sometimes ending in half a line.

- :class:`Workspace` (``layout.py``): the files of one workspace, each written whole (a test's
  settings, graph and segments); :func:`append` (lines to a segment) and :func:`gzip_segment`
  (a closed one compressed), as the hub does them while an export reads;
- :class:`AuditWriter` and :class:`RecordingOrder` (``audit.py``): a trail streamed line by line
  into segments that rotate, closed ones compressed, lines queued at the moment the hub records
  them; :func:`gzip_bytes`, one segment's gzip form;
- ``records.py``: a small valid graph and run records (what a test starts from), and the hub's
  compact line;
- ``synth``: large synthetic trails (``python -m hubwriter.synth DIR --runs N``).

``demo/make_demo.py`` writes the demo with it. It is not the product: the exporter only ever reads
a hub, so this package lives beside ``src/`` and is not shipped (setuptools finds packages under
``src/`` only); the tests import it through pytest's ``pythonpath``, the demo and the benchmark
run as ``python -m ...`` from the repository. Only the standard library is used.
"""

from __future__ import annotations

from .audit import AuditWriter, RecordingOrder, gzip_bytes
from .layout import Workspace, append, gzip_segment

__all__ = ["AuditWriter", "RecordingOrder", "Workspace", "append", "gzip_bytes", "gzip_segment"]
