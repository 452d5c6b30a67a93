"""The demo's hub simulated: runs executed against a tiny model of the data, each line recorded
at the moment the hub records it."""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

from hubwriter.records import compact_line

from .graph import (
    CLICKSTREAM,
    ERP_STOCK,
    LEGACY_ORDERS,
    PG_ORDERS,
    PG_PRODUCTS,
    PG_STORES,
    PIPELINE_BY_ID,
)
from .shapes import CANCEL, DURATION, ENGINE, ERRORS, PARAMETERS, WRITE_SHAPE

CET = timezone(timedelta(hours=1))


def ts(moment: datetime) -> str:
    """RFC 3339 with milliseconds, ``Z`` for UTC and ``+hh:mm`` otherwise."""
    text = moment.isoformat(timespec="milliseconds")
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def sha256(*parts: object) -> str:
    """A digest in the engine's notation, derived from what went into the data."""
    return "sha256:" + hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()


def trace_uuid(n: int, *, upper: bool = False) -> str:
    """The n-th UUID trace id of the demo: version 4 shape, stable across regenerations."""
    text = str(
        uuid.UUID(bytes=hashlib.sha256(f"acme-analytics/{n}".encode()).digest()[:16], version=4)
    )
    return text.upper() if upper else text


@dataclass
class Trail:
    """Simulates the hub: executes runs against a tiny model of the data and records lines.

    A line goes to ``record_at`` with the moment the hub records it (the hub's recording order:
    ``hubwriter.RecordingOrder``), in engine 4.x's compact form."""

    record_at: Callable[[datetime, str], None]
    rng: random.Random = field(default_factory=lambda: random.Random(20261101))
    lake: dict[str, str] = field(default_factory=dict)  # dataset -> digest of current content

    # -- recording -------------------------------------------------------------------------

    def record(self, moment: datetime, line: dict[str, Any]) -> None:
        """Record one audit line at ``moment``."""
        self.record_at(moment, compact_line(line))

    def other(self, moment: datetime, kind: str, **fields: Any) -> None:
        """A line of another kind (edit, settings, export) that the exporter must skip."""
        self.record(moment, {"kind": kind, "recordedAt": ts(moment), **fields})

    # -- the data ----------------------------------------------------------------------------

    def source_version(self, dataset: str, start: datetime, ctx: dict[str, str]) -> str:
        """Which content an external source had when it was read."""
        local = start.astimezone(CET)
        if dataset in (PG_ORDERS, LEGACY_ORDERS):
            return ctx["day"]  # the extract reads one closed day
        if dataset == CLICKSTREAM:
            return ts(start)  # a stream: new events on every read
        if dataset == ERP_STOCK:
            # the ERP exports at 00:00 and 12:00 local time, only at midnight on Sundays
            half = "pm" if local.hour >= 12 and local.weekday() != 6 else "am"
            return f"{local.date()}-{half}"
        if dataset == PG_PRODUCTS:
            return "v2" if start >= datetime(2026, 11, 3, 11, 0, tzinfo=UTC) else "v1"
        if dataset == PG_STORES:
            return "v1"
        return str(local.date())  # daily snapshots: CRM, ad spend

    def read(self, dataset: str, start: datetime, ctx: dict[str, str]) -> str:
        """The digest of a dataset as a stage reads it now."""
        if dataset in self.lake:
            return self.lake[dataset]
        return sha256(dataset, self.source_version(dataset, start, ctx))

    def write(self, dataset: str, stage: str, inputs: list[str], params: Any) -> dict[str, Any]:
        """Write a dataset: its digest follows from the inputs and parameters."""
        digest = sha256(dataset, stage, *inputs, json.dumps(params, sort_keys=True))
        self.lake[dataset] = digest
        access: dict[str, Any] = {"dataset": dataset, "digest": digest}
        shape = WRITE_SHAPE.get(dataset)
        if shape:
            # a function of the digest: the same data always has the same size; small tables
            # (one row per region) keep their row count
            rows = shape["rows"]
            if rows >= 1000:
                rows = rows * (900 + int(digest[7:11], 16) % 200) // 1000
            if "row_bytes" in shape:
                access["bytes"] = rows * shape["row_bytes"] + int(digest[11:14], 16)
            access["rows"] = rows
            if "schema" in shape:
                access["schema"] = shape["schema"]
        return access

    # -- runs ----------------------------------------------------------------------------------

    def run(
        self,
        pipeline: str,
        trace_id: str,
        start: datetime,
        *,
        trigger: str | None,
        engine: dict[str, str] | None = ENGINE,
        tz: timezone = UTC,
        ctx: dict[str, str] | None = None,
        outcomes: dict[str, list[str | None]] | None = None,
        skip: Iterable[str] = (),
        no_digest: Iterable[str] = (),
        announce: bool = True,
        progress: bool = False,
    ) -> str:
        """Execute one run and record it; returns its final status.

        ``outcomes`` lists, per stage, one entry per attempt: ``None`` succeeds, an ``ERRORS``
        key fails with that error, ``CANCEL`` cancels the run. After a stage has failed for
        good, the stages after it are recorded as skipped. ``skip`` stages are skipped by
        configuration. ``announce`` records a ``running`` line when the run starts (engine 4.2
        does, the old tooling did not); ``progress`` records one whenever a stage starts.
        """
        ctx = ctx or {}
        outcomes = outcomes or {}
        skipped = set(skip)
        no_digest = set(no_digest)
        head: dict[str, Any] = {"kind": "run", "traceId": trace_id, "pipeline": pipeline}
        tail: dict[str, Any] = {}
        if engine is not None:
            tail["engine"] = engine
        if trigger is not None:
            tail["trigger"] = trigger

        def line(
            status: str,
            recorded: datetime,
            stages: list[dict[str, Any]],
            ended: datetime | None = None,
        ) -> dict[str, Any]:
            times = {"startedAt": ts(start.astimezone(tz))}
            if ended is not None:
                times["endedAt"] = ts(ended.astimezone(tz))
            times["recordedAt"] = ts(recorded.astimezone(tz))
            return {**head, "status": status, **times, **tail, "stages": stages}

        clock = start + timedelta(milliseconds=self.rng.randint(120, 380))
        stages: list[dict[str, Any]] = []
        status = "succeeded"
        for spec in PIPELINE_BY_ID[pipeline]["stages"]:
            sid = spec["id"]
            if status == "cancelled":
                break  # a cancelled run never reaches the later stages
            if status == "failed" or sid in skipped:
                stages.append({"stage": sid, "status": "skipped"})
                continue
            params = {
                k: v.format(**ctx) if isinstance(v, str) else v
                for k, v in PARAMETERS.get(sid, {}).items()
            }
            for attempt, outcome in enumerate(outcomes.get(sid, [None]), start=1):
                if attempt > 1:
                    clock += timedelta(seconds=30)  # the engine's retry back-off
                began = clock
                execution: dict[str, Any] = {"stage": sid}
                if attempt > 1 or engine == ENGINE:  # older tooling left the default out
                    execution["attempt"] = attempt
                execution["status"] = "running"
                execution["startedAt"] = ts(began.astimezone(tz))
                if params:
                    execution["parameters"] = params
                if progress or (announce and not stages):
                    noted = began + timedelta(milliseconds=40)
                    self.record(noted, line("running", noted, [*stages, execution]))
                seconds = DURATION[sid] * self.rng.uniform(0.8, 1.25)
                if outcome is not None:
                    seconds *= self.rng.uniform(0.1, 0.4)  # failures come early
                clock = began + timedelta(seconds=seconds)
                reads = []
                for dataset in spec["reads"]:
                    access = {"dataset": dataset}
                    if dataset not in no_digest:
                        access["digest"] = self.read(dataset, began, ctx)
                    reads.append(access)
                finished: dict[str, Any] = {**execution, "endedAt": ts(clock.astimezone(tz))}
                if params:  # keep the times together: parameters after endedAt
                    finished["parameters"] = finished.pop("parameters")
                finished["reads"] = reads
                if outcome is None:
                    finished["status"] = "succeeded"
                    inputs = [r.get("digest", r["dataset"]) for r in reads]
                    finished["writes"] = [
                        self.write(d, sid, inputs, params) for d in spec["writes"]
                    ]
                    if engine == ENGINE:
                        finished["error"] = None  # 4.2 writes the field out
                    stages.append(finished)
                    break
                finished["status"] = "cancelled" if outcome == CANCEL else "failed"
                finished["error"] = ERRORS["cancelled" if outcome == CANCEL else outcome]
                stages.append(finished)
            else:
                status = "cancelled" if outcomes[sid][-1] == CANCEL else "failed"
            clock += timedelta(milliseconds=self.rng.randint(150, 900))
        end = clock + timedelta(milliseconds=self.rng.randint(60, 240))
        recorded = end + timedelta(milliseconds=self.rng.randint(40, 160))
        self.record(recorded, line(status, recorded, stages, end))
        return status

    # -- output --------------------------------------------------------------------------------


def day_ctx(run_day: date, *, since: str = "") -> dict[str, str]:
    """The context stage parameters are filled from: the run's day and the day it processes."""
    return {
        "today": str(run_day),
        "day": str(run_day - timedelta(days=1)),
        "since": since or f"{run_day - timedelta(days=1)}T00:00:00Z",
        "week": f"{run_day.isocalendar()[0]}-W{run_day.isocalendar()[1]:02d}",
    }


def at(day: int, hour: int, minute: int, second: float = 0.0, tz: timezone = UTC) -> datetime:
    """A moment in November 2026."""
    return datetime(2026, 11, day, hour, minute, tzinfo=tz) + timedelta(seconds=second)
