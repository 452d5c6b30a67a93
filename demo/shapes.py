"""How the demo's stages behave: engines, durations, parameters, what a write looks like,
the errors that happen."""

from __future__ import annotations

from typing import Any

from .graph import (
    ATTRIBUTION,
    CLEAN_ORDERS,
    CUSTOMER_360,
    LAKE_CUSTOMERS,
    LAKE_EVENTS,
    PG_INVENTORY,
    PROFILES,
    RAW_ORDERS,
    RAW_STOCK,
    SALES_MART,
    SALES_REPORT,
    SESSIONS,
)

ENGINE_OLD = {"name": "hub-engine", "version": "4.1.3"}
ENGINE = {"name": "hub-engine", "version": "4.2.0"}

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
