"""Regenerate the demo workspace ``demo/acme-analytics/`` (run: ``python demo/make_demo.py``).

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

Everything is derived from this script, so the demo can be reviewed here and regenerated
byte for byte: no clock, a fixed random seed, and gzip headers without a time stamp.
Digests are hashes of what a stage read and how it was configured, so unchanged data keeps its
digest and changed data gets a new one.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import random
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

WORKSPACE = Path(__file__).resolve().parent / "acme-analytics"

CET = timezone(timedelta(hours=1))

ENGINE_OLD = {"name": "hub-engine", "version": "4.1.3"}
ENGINE = {"name": "hub-engine", "version": "4.2.0"}

SETTINGS = {
    "editor.fontSize": 13,
    "git.autofetch": True,
    "openlineage.url": "http://localhost:5000",
}

# Datasets, named once so the graph and the trail cannot disagree.
PG_ORDERS = "postgres://db.acme.internal:5432/sales.public.orders"
PG_STORES = "postgres://db.acme.internal:5432/sales.public.stores"
PG_PRODUCTS = "postgres://db.acme.internal:5432/sales.public.products"
PG_INVENTORY = "postgres://db.acme.internal:5432/sales.public.inventory"
RAW_ORDERS = "data/raw/orders.parquet"
CLEAN_ORDERS = "data/staged/orders_clean.parquet"
SALES_MART = "bigquery:acme-analytics.sales_mart.daily_sales"
SALES_REPORT = "s3://acme-reports/sales/daily_sales.csv"
CRM_CUSTOMERS = "mysql://crm-db.acme.internal:3306/crm.customers"
CLICKSTREAM = "kafka://kafka-1.acme.internal:9092/web.clickstream"
LAKE_CUSTOMERS = "s3://acme-lake/raw/crm/customers.parquet"
LAKE_EVENTS = "s3://acme-lake/raw/events/clickstream.parquet"
PROFILES = "gs://acme-warehouse/customer_360/profiles.parquet"
CUSTOMER_360 = "bigquery:acme-analytics.crm.customer_360"
ERP_STOCK = "file:///mnt/erp-exports/inventory/stock_levels.csv"
RAW_STOCK = "data/raw/stock_levels.parquet"
SESSIONS = "data/staged/sessions.parquet"
AD_SPEND = "bigquery:acme-analytics.ads.spend"
ATTRIBUTION = "bigquery:acme-analytics.marketing.attribution"
ATTRIBUTION_REPORT = "s3://acme-reports/marketing/attribution_weekly.csv"
CHURN_FEATURES = "gs://acme-ml/churn/features.parquet"
CHURN_MODEL = "gs://acme-ml/churn/model.joblib"
CHURN_SCORES = "bigquery:acme-analytics.ml.churn_scores"
LEGACY_ORDERS = "mysql://legacy-db.acme.internal:3306/shop.orders"
LEGACY_EXPORT = "file:///srv/exports/legacy/orders.csv"


def _stage(
    sid: str,
    name: str | None,
    reads: list[str],
    writes: list[str],
    *,
    source: str | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    """A graph stage; optional fields are left out when not given, as the contract allows."""
    stage: dict[str, Any] = {"id": sid}
    if name is not None:
        stage["name"] = name
    if description is not None:
        stage["description"] = description
    if source is not None:
        stage["source"] = source
    stage["reads"] = reads
    stage["writes"] = writes
    return stage


PIPELINES: list[dict[str, Any]] = [
    {
        "id": "daily-sales",
        "name": "Daily sales",
        "description": "Loads yesterday's orders and builds the sales mart (revenue in €).",
        "stages": [
            _stage(
                "extract",
                "Extract orders",
                [PG_ORDERS],
                [RAW_ORDERS],
                source="pipelines/daily_sales/extract.py",
                description="Pulls one day of orders from the shop database.",
            ),
            _stage(
                "clean",
                "Clean and enrich",
                [RAW_ORDERS, PG_STORES],
                [CLEAN_ORDERS],
                source="pipelines/daily_sales/clean.py",
                description="Drops test orders, converts currencies, adds the store's region.",
            ),
            _stage(
                "build_mart",
                "Build sales mart",
                [CLEAN_ORDERS],
                [SALES_MART],
                source="pipelines/daily_sales/sales_mart.sql",
            ),
            _stage("publish", "Publish report", [SALES_MART], [SALES_REPORT]),
        ],
    },
    {
        "id": "customer-360",
        "name": "Customer 360",
        "description": "Joins CRM records with the web clickstream into one profile per customer.",
        "stages": [
            _stage(
                "ingest_crm",
                "Ingest CRM",
                [CRM_CUSTOMERS],
                [LAKE_CUSTOMERS],
                source="pipelines/customer_360/ingest_crm.py",
            ),
            _stage(
                "ingest_events",
                "Ingest clickstream",
                [CLICKSTREAM],
                [LAKE_EVENTS],
                source="pipelines/customer_360/ingest_events.py",
                description="Reads the last day of web events from Kafka.",
            ),
            _stage(
                "join",
                "Build profiles",
                [LAKE_CUSTOMERS, LAKE_EVENTS],
                [PROFILES],
                source="pipelines/customer_360/profiles.sql",
            ),
            _stage(
                "load",
                "Load to BigQuery",
                [PROFILES],
                [CUSTOMER_360],
                source="pipelines/customer_360/load.py",
            ),
        ],
    },
    {
        "id": "inventory-sync",
        "name": "Inventory sync",
        "description": "Reconciles the ERP's stock export with the product catalogue, twice a day.",
        "stages": [
            _stage(
                "pull",
                "Pull ERP export",
                [ERP_STOCK],
                [RAW_STOCK],
                source="pipelines/inventory_sync/pull.py",
            ),
            _stage(
                "reconcile",
                "Reconcile stock",
                [RAW_STOCK, PG_PRODUCTS],
                [PG_INVENTORY],
                source="pipelines/inventory_sync/reconcile.sql",
                description="Upserts on-hand quantities per SKU and warehouse.",
            ),
        ],
    },
    {
        "id": "marketing-attribution",
        "name": "Marketing attribution",
        "description": "Attributes orders to ad campaigns from the sessionised clickstream.",
        "stages": [
            _stage(
                "sessions",
                "Sessionise clickstream",
                [CLICKSTREAM],
                [SESSIONS],
                source="pipelines/marketing/sessions.py",
            ),
            _stage(
                "attribute",
                "Attribute orders",
                [SESSIONS, AD_SPEND, SALES_MART],
                [ATTRIBUTION],
                source="pipelines/marketing/attribution.sql",
                description="Last-touch attribution over a rolling window.",
            ),
            _stage(
                "report",
                "Weekly report",
                [ATTRIBUTION],
                [ATTRIBUTION_REPORT],
                source="pipelines/marketing/report.py",
            ),
        ],
    },
    {
        "id": "churn-model",
        "name": "Churn model",
        "description": "Scores every customer's likelihood to churn. New; not scheduled yet.",
        "stages": [
            _stage(
                "features",
                "Build features",
                [CUSTOMER_360, SALES_MART],
                [CHURN_FEATURES],
                source="pipelines/churn/features.sql",
            ),
            _stage(
                "train",
                "Train model",
                [CHURN_FEATURES],
                [CHURN_MODEL],
                source="pipelines/churn/train.py",
            ),
            _stage(
                "score",
                "Score customers",
                [CHURN_MODEL, CHURN_FEATURES],
                [CHURN_SCORES],
                source="pipelines/churn/score.py",
            ),
        ],
    },
]

# Deleted from the graph on 2 November; its runs stay on the trail.
LEGACY_PIPELINE: dict[str, Any] = {
    "id": "legacy-orders-export",
    "stages": [
        _stage("dump", None, [LEGACY_ORDERS], [LEGACY_EXPORT], source="scripts/legacy_export.py")
    ],
}

GRAPH = {
    "format": "lineage-hub/graph@1",
    "workspace": {"name": "acme-analytics"},
    "pipelines": PIPELINES,
}

PIPELINE_BY_ID = {p["id"]: p for p in [*PIPELINES, LEGACY_PIPELINE]}

# Typical stage durations in seconds; each execution varies around it.
DURATION = {
    "extract": 190,
    "clean": 95,
    "build_mart": 120,
    "publish": 25,
    "ingest_crm": 240,
    "ingest_events": 610,
    "join": 380,
    "load": 140,
    "pull": 35,
    "reconcile": 70,
    "sessions": 420,
    "attribute": 900,
    "report": 60,
    "dump": 300,
}

# Stage parameters; "{day}" and friends are filled from the run's context.
PARAMETERS: dict[str, dict[str, Any]] = {
    "extract": {"day": "{day}", "batch_size": 50000},
    "clean": {"currency": "EUR", "drop_test_orders": True},
    "build_mart": {"day": "{day}"},
    "publish": {"day": "{day}", "format": "csv"},
    "ingest_crm": {"snapshot": "{today}"},
    "ingest_events": {"from": "{since}", "consumer_group": "customer-360"},
    "join": {"as_of": "{today}"},
    "pull": {"warehouses": ["BER-1", "HAM-2", "MUC-1"]},
    "sessions": {"gap_minutes": 30},
    "attribute": {"model": "last_touch", "window_days": 7},
    "report": {"week": "{week}"},
    "dump": {"day": "{day}"},
}

COLUMNS_ORDERS = [
    {"name": "order_id", "type": "BIGINT"},
    {"name": "customer_id", "type": "BIGINT"},
    {"name": "store_id", "type": "INTEGER"},
    {"name": "ordered_at", "type": "TIMESTAMP"},
    {"name": "amount", "type": "DECIMAL(12,2)"},
    {"name": "currency", "type": "CHAR(3)"},
]

# What a write looks like, per dataset: schema (optional), typical rows, bytes per row.
WRITE_SHAPE: dict[str, dict[str, Any]] = {
    RAW_ORDERS: {"schema": COLUMNS_ORDERS, "rows": 120000, "row_bytes": 151},
    CLEAN_ORDERS: {
        "schema": [
            *COLUMNS_ORDERS,
            {"name": "region", "type": "VARCHAR"},
            {"name": "amount_eur", "type": "DECIMAL(12,2)"},
        ],
        "rows": 118000,
        "row_bytes": 163,
    },
    SALES_MART: {
        "schema": [
            {"name": "day", "type": "DATE"},
            {"name": "region", "type": "STRING"},
            {"name": "orders", "type": "INT64"},
            {"name": "revenue_eur", "type": "NUMERIC"},
        ],
        "rows": 14,
    },
    SALES_REPORT: {"rows": 14, "row_bytes": 48},
    LAKE_CUSTOMERS: {
        "schema": [
            {"name": "customer_id", "type": "BIGINT"},
            {"name": "email_sha256", "type": "VARCHAR"},
            {"name": "country", "type": "CHAR(2)"},
            {"name": "created_at", "type": "TIMESTAMP"},
        ],
        "rows": 482000,
        "row_bytes": 96,
    },
    LAKE_EVENTS: {"rows": 3100000, "row_bytes": 212},
    PROFILES: {"rows": 479000, "row_bytes": 310},
    CUSTOMER_360: {"rows": 479000},
    RAW_STOCK: {
        "schema": [
            {"name": "sku", "type": "VARCHAR"},
            {"name": "warehouse", "type": "VARCHAR"},
            {"name": "on_hand", "type": "INTEGER"},
            {"name": "as_of", "type": "TIMESTAMP"},
        ],
        "rows": 23800,
        "row_bytes": 61,
    },
    PG_INVENTORY: {"rows": 23800},
    SESSIONS: {"rows": 640000, "row_bytes": 118},
    ATTRIBUTION: {"rows": 11800},
}

ERRORS: dict[str, dict[str, str]] = {
    "pg_timeout": {
        "message": "could not connect to server: Connection timed out\n\tIs the server running on "
        'host "db.acme.internal" and accepting TCP/IP connections on port 5432?',
        "type": "psycopg2.OperationalError",
        "stackTrace": "Traceback (most recent call last):\n"
        '  File "pipelines/daily_sales/extract.py", line 41, in main\n'
        "    conn = psycopg2.connect(dsn, connect_timeout=30)\n"
        '  File "/opt/hub/lib/python3.11/site-packages/psycopg2/__init__.py", '
        "line 122, in connect\n"
        "    conn = _connect(dsn, connection_factory=connection_factory, **kwasync)\n"
        "psycopg2.OperationalError: could not connect to server: "
        "Connection timed out",
    },
    "bq_quota": {
        "message": "403 Quota exceeded: Your project exceeded quota for concurrent queries. "
        "For more information, see https://cloud.google.com/bigquery/troubleshooting-errors",
        "type": "google.api_core.exceptions.Forbidden",
        "stackTrace": "Traceback (most recent call last):\n"
        '  File "/opt/hub/lib/python3.11/site-packages/hub_engine/sql.py", '
        "line 212, in run_query\n"
        "    job.result(timeout=600)\n"
        '  File "/opt/hub/lib/python3.11/site-packages/google/cloud/bigquery/job/'
        'query.py", line 1590, in result\n'
        "    raise self._exception\n"
        "google.api_core.exceptions.Forbidden: 403 Quota exceeded",
    },
    "kafka_timeout": {
        "message": "KafkaTimeoutError: Failed to update metadata after 60.0 secs.",
        "type": "kafka.errors.KafkaTimeoutError",
        "stackTrace": "Traceback (most recent call last):\n"
        '  File "pipelines/customer_360/ingest_events.py", line 58, in consume\n'
        "    batch = consumer.poll(timeout_ms=60000)\n"
        '  File "/opt/hub/lib/python3.11/site-packages/kafka/consumer/group.py", '
        "line 684, in poll\n"
        "    records = self._poll_once(timer, max_records, update_offsets)\n"
        "kafka.errors.KafkaTimeoutError: KafkaTimeoutError: "
        "Failed to update metadata after 60.0 secs.",
    },
    "cancelled": {"message": "Run cancelled by maria.lopez@acme.example from the editor."},
}

CANCEL = "cancel"  # an outcome: the user cancelled the run during this stage


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
    """Simulates the hub: executes runs against a tiny model of the data and records lines."""

    rng: random.Random = field(default_factory=lambda: random.Random(20261101))
    lake: dict[str, str] = field(default_factory=dict)  # dataset -> digest of current content
    entries: list[tuple[datetime, int, str]] = field(default_factory=list)

    # -- recording -------------------------------------------------------------------------

    def record(self, moment: datetime, line: dict[str, Any]) -> None:
        """Queue one audit line; lines are written in the order they were recorded."""
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
        self.entries.append((moment, len(self.entries), text))

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

    def segments(self, rotations: list[datetime], torn_after: datetime) -> list[list[str]]:
        """The lines on disk when the trail is read, split at the hub's segment rotations.

        Lines are in recording order. The trail is read while the hub writes the first line
        recorded after ``torn_after``: only the first part of that line is there (no newline),
        and nothing after it.
        """
        result: list[list[str]] = [[] for _ in range(len(rotations) + 1)]
        for moment, _, text in sorted(self.entries):
            index = sum(moment >= r for r in rotations)
            if moment > torn_after:
                result[index].append(text[: len(text) * 3 // 5])
                break
            result[index].append(text + "\n")
        return result


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


# The trail is read while the hub writes its first line after this moment.
TORN_AFTER = datetime(2026, 11, 5, 3, 9, tzinfo=UTC)


def build() -> tuple[Trail, list[datetime]]:
    """The five days of the demo, in the order things happened."""
    t = Trail()
    u = iter(range(1, 100))  # UUID trace ids in order of appearance

    def nov(d: int) -> date:
        return date(2026, 11, d)

    def inventory(day: int, hour: int, second: float, **options: Any) -> None:
        """inventory-sync, scheduled at hh:30 on a host that logs Central European Time."""
        t.run(
            "inventory-sync",
            trace_uuid(next(u)),
            at(day, hour, 30, second, CET),
            trigger="schedule",
            tz=CET,
            **options,
        )

    # 1 November (a Sunday): still engine 4.1.3 with old-style trace ids
    t.run(
        "inventory-sync",
        "run-20261101-0001",
        at(1, 1, 30, 0.412, CET),
        trigger="schedule",
        engine=ENGINE_OLD,
        tz=CET,
        announce=False,
    )
    t.run(
        "daily-sales",
        "run-20261101-0002",
        at(1, 2, 0, 0.118),
        trigger="schedule",
        engine=ENGINE_OLD,
        ctx=day_ctx(nov(1)),
        skip=["publish"],
        announce=False,
    )
    t.run(
        "customer-360",
        "run-20261101-0003",
        at(1, 3, 0, 0.231),
        trigger="schedule",
        engine=ENGINE_OLD,
        ctx=day_ctx(nov(1)),
        announce=False,
    )
    t.run(
        "legacy-orders-export",
        "run-20261101-0007",
        at(1, 5, 0, 2.0),
        trigger=None,
        engine=None,
        ctx=day_ctx(nov(1)),
        announce=False,
    )
    t.other(
        at(1, 9, 41, 7.25),
        "edit",
        user="tomasz.nowak@acme.example",
        change="engine-upgraded",
        detail={"engine": "hub-engine", "from": "4.1.3", "to": "4.2.0"},
    )
    t.other(
        at(1, 10, 5, 12.5),
        "settings",
        user="dana.kim@acme.example",
        key="openlineage.url",
        value="http://localhost:5000",
    )
    inventory(1, 13, 0.388)
    t.run(
        "marketing-attribution",
        trace_uuid(next(u), upper=True),
        at(1, 15, 20, 41.6),
        trigger="manual",
        ctx=day_ctx(nov(1)),
    )

    # 2 November
    inventory(2, 1, 0.402)
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(2, 2, 0, 0.121),
        trigger="schedule",
        ctx=day_ctx(nov(2)),
    )
    t.run(
        "customer-360",
        trace_uuid(next(u)),
        at(2, 3, 0, 0.219),
        trigger="schedule",
        ctx=day_ctx(nov(2)),
        announce=False,
    )
    t.run(
        "legacy-orders-export",
        "run-20261102-0006",
        at(2, 5, 0, 1.0),
        trigger=None,
        engine=None,
        ctx=day_ctx(nov(2)),
        announce=False,
    )
    t.run(
        "marketing-attribution",
        trace_uuid(next(u)),
        at(2, 10, 14, 3.9),
        trigger="push",
        ctx=day_ctx(nov(2)),
    )
    # the ERP share was being rewritten: the engine could not digest the export it read
    inventory(2, 13, 0.377, no_digest=[ERP_STOCK])
    t.other(
        at(2, 16, 2, 33.0),
        "edit",
        user="dana.kim@acme.example",
        change="pipeline-deleted",
        pipeline="legacy-orders-export",
    )
    # a late push: starts in segment 1, ends in segment 2
    t.run(
        "marketing-attribution",
        trace_uuid(next(u)),
        at(2, 23, 41, 18.2),
        trigger="push",
        ctx=day_ctx(nov(2)),
    )

    # 3 November: a failed nightly and its manual re-run, a cancelled run
    inventory(3, 1, 0.395)
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(3, 2, 0, 0.117),
        trigger="schedule",
        ctx=day_ctx(nov(3)),
        outcomes={"extract": ["pg_timeout", None], "build_mart": ["bq_quota"]},
    )
    t.run(
        "customer-360",
        trace_uuid(next(u)),
        at(3, 3, 0, 0.244),
        trigger="schedule",
        ctx=day_ctx(nov(3)),
    )
    t.other(
        at(3, 9, 12, 4.0),
        "export",
        user="dana.kim@acme.example",
        destination="http://localhost:5000",
        dryRun=True,
    )
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(3, 9, 31, 55.0),
        trigger="manual",
        ctx=day_ctx(nov(3)),
    )
    inventory(3, 13, 0.381)
    t.run(
        "marketing-attribution",
        trace_uuid(next(u), upper=True),
        at(3, 14, 2, 10.0),
        trigger="manual",
        ctx=day_ctx(nov(3)),
        outcomes={"attribute": [CANCEL]},
    )
    t.other(
        at(3, 14, 19, 30.0),
        "edit",
        user="maria.lopez@acme.example",
        change="stage-updated",
        pipeline="marketing-attribution",
        stage="attribute",
    )
    t.run(
        "marketing-attribution",
        trace_uuid(next(u)),
        at(3, 14, 21, 2.5),
        trigger="manual",
        ctx=day_ctx(nov(3)),
    )
    t.other(
        at(3, 17, 45, 0.0),
        "export",
        user="dana.kim@acme.example",
        destination="http://localhost:5000",
        dryRun=False,
    )

    # 4 November: Kafka is down at 3 am; a backfill; the churn model is drafted
    inventory(4, 1, 0.399)
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(4, 2, 0, 0.125),
        trigger="schedule",
        ctx=day_ctx(nov(4)),
    )
    t.run(
        "customer-360",
        trace_uuid(next(u)),
        at(4, 3, 0, 0.236),
        trigger="schedule",
        ctx=day_ctx(nov(4)),
        outcomes={"ingest_events": ["kafka_timeout", "kafka_timeout"]},
    )
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(4, 8, 2, 13.0),
        trigger="manual",
        ctx=day_ctx(date(2026, 10, 31)),
    )  # a backfill of 30 October
    t.run(
        "customer-360",
        trace_uuid(next(u)),
        at(4, 8, 45, 9.7),
        trigger="manual",
        ctx=day_ctx(nov(4)),
    )
    for minute, change, extra in [
        (2, "pipeline-added", {}),
        (9, "stage-added", {"stage": "features"}),
        (16, "stage-added", {"stage": "train"}),
        (21, "stage-added", {"stage": "score"}),
    ]:
        t.other(
            at(4, 10, minute, 5.0),
            "edit",
            user="priya.shah@acme.example",
            change=change,
            pipeline="churn-model",
            **extra,
        )
    # starts in segment 2, ends in segment 3
    t.run(
        "marketing-attribution",
        trace_uuid(next(u)),
        at(4, 11, 48, 27.1),
        trigger="push",
        ctx=day_ctx(nov(4)),
    )
    inventory(4, 13, 0.402)
    t.run(
        "marketing-attribution",
        trace_uuid(next(u)),
        at(4, 16, 5, 40.3),
        trigger="push",
        ctx=day_ctx(nov(4)),
        announce=False,
    )

    # 5 November: the trail is read while customer-360 is running
    inventory(5, 1, 0.391)
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(5, 2, 0, 0.119),
        trigger="schedule",
        ctx=day_ctx(nov(5)),
    )
    # records its progress at every stage; the trail is read while ingest_events runs
    t.run(
        "customer-360",
        trace_uuid(next(u)),
        at(5, 3, 0, 0.228),
        trigger="schedule",
        ctx=day_ctx(nov(5)),
        progress=True,
    )

    rotations = [at(3, 0, 0), at(4, 12, 0)]
    return t, rotations


def write_workspace(root: Path = WORKSPACE) -> None:
    """Write settings, graph and the three audit segments under ``root``."""
    lineage = root / ".workspace" / "lineage"
    audit = lineage / "audit"
    audit.mkdir(parents=True, exist_ok=True)
    (root / ".workspace" / "settings.json").write_text(
        json.dumps(SETTINGS, indent=2) + "\n", encoding="utf-8"
    )
    (lineage / "graph.json").write_text(
        json.dumps(GRAPH, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )

    trail, rotations = build()
    segments = trail.segments(rotations, TORN_AFTER)
    for path in audit.iterdir():
        path.unlink()  # the demo owns this folder: no stale segments
    for number, lines in enumerate(segments, start=1):
        data = "".join(lines).encode("utf-8")
        name = f"{number:06d}.jsonl"
        if number == 1:  # the hub compressed the oldest closed segment, not yet the second
            buffer = io.BytesIO()
            with gzip.GzipFile(filename=name, mode="wb", fileobj=buffer, mtime=0) as gz:
                gz.write(data)
            (audit / f"{name}.gz").write_bytes(buffer.getvalue())
        else:
            (audit / name).write_bytes(data)


if __name__ == "__main__":
    write_workspace()
