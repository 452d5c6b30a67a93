"""Feast's mode (``openlineage.server = feast``): Feast's OpenLineage consumer (docs/feast.md).

Feast 0.67 (``feast serve_lineage``, its consumer enabled) takes the events every server gets,
at ``/api/v1/lineage`` and at the spec's batch endpoint ``/api/v1/lineage/batch``, and keeps them
as they were sent: its events are the generic ones (:class:`~.events.Translator`). What sets it
apart is what it keeps, not the shape it wants:

- every event it is given is a new row (an id of its own; nothing compared with what is
  there): an event sent twice is held twice. An event is known only by what it says: its run
  id, ``eventType`` and ``eventTime``, which an export gives once per event;
- its read API gives those events back, by namespace and job, newest first
  (``GET /api/v1/lineage/openlineage/events``);
- it answers one request at a time, server-wide, and processes a batch's events in order.

Pure, like the rest of ``translate/``.
"""

from __future__ import annotations

SERVER = "feast"
"""The ``openlineage.server`` value of this mode."""

SERVER_NAME = "Feast"
"""Its own name, as a person writes it."""

DESCRIPTION = "Feast's, which keeps every event it is given (docs/feast.md)"
"""What the mode is for, for a person (``openlineage.server``'s help)."""
