"""The shape of a synthetic trail: how often each thing happens, and the words it is made of."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

START = datetime(2026, 11, 1, tzinfo=UTC)
"""When the first synthetic run starts."""

MEAN_GAP_MS = 20_000
"""Mean time between two run starts: one million runs span about seven months."""

GZIP_LEVEL = 1
"""Compression of closed segments; it runs on its own thread, alongside generation."""

# The shape of the trail, as shares (0..1) of runs, stages or attempts.
FAIL_ATTEMPT = 0.04  # an attempt of a stage fails
RETRY = 0.6  # a failed attempt is retried (up to MAX_ATTEMPTS)
MAX_ATTEMPTS = 3
CANCEL = 0.015  # a run is cancelled during one of its stages
SKIP_BY_CONFIG = 0.02  # a stage after the first is skipped by configuration
LIST_SKIPPED = 0.7  # a failed run lists the stages it did not reach as skipped
SOURCE_CHANGED = 0.35  # an external source has new content when read
SAME_OUTPUT = 0.1  # a write reproduces the dataset's previous content
NO_DIGEST = 0.03  # a read without a digest
OTHER_KIND = 0.02  # before a run, a line of another kind is recorded
DELETED_RUNS = 0.01  # a run of a pipeline that is later deleted from the graph

# Weighted choices (weights in percent): the run's engine (and whether that engine writes
# ``attempt`` when it is 1), its trigger, and a pipeline host's UTC offset.
ENGINES = (
    ((',"engine":{"name":"hub-engine","version":"4.2.0"}', True), 85),
    ((',"engine":{"name":"hub-engine","version":"4.1.3"}', False), 10),
    (("", False), 5),
)
TRIGGERS = (
    (',"trigger":"schedule"', 70),
    (',"trigger":"manual"', 15),
    (',"trigger":"push"', 10),
    (',"trigger":"api"', 3),
    ("", 2),
)
OFFSETS = (
    ((0, "Z"), 70),
    ((3_600_000, "+01:00"), 20),
    ((-18_000_000, "-05:00"), 7),
    ((19_800_000, "+05:30"), 3),
)
ERRORS = tuple(
    ',"error":' + json.dumps(e, ensure_ascii=False, separators=(",", ":"))
    for e in (
        {
            "message": "could not connect to server: Connection timed out",
            "type": "psycopg2.OperationalError",
            "stackTrace": "Traceback (most recent call last):\n"
            '  File "extract.py", line 41, in main\n'
            "    conn = psycopg2.connect(dsn)\npsycopg2.OperationalError: timed out",
        },
        {
            "message": "403 Quota exceeded: Your project exceeded quota for concurrent queries.",
            "type": "google.api_core.exceptions.Forbidden",
        },
        {
            "message": "KafkaTimeoutError: Failed to update metadata after 60.0 secs.",
            "type": "kafka.errors.KafkaTimeoutError",
            "stackTrace": "kafka.errors.KafkaTimeoutError: "
            "Failed to update metadata after 60.0 secs.",
        },
        {"message": "Worker lost: container killed (OOMKilled, exit code 137)"},
        {"message": 'Colonne « montant » introuvable dans la table "ventes"', "type": "KeyError"},
        {
            "message": "An error occurred (SlowDown) when calling the PutObject operation",
            "type": "botocore.exceptions.ClientError",
        },
    )
)
CANCELLED_ERROR = ',"error":{"message":"Run cancelled by a user from the editor."}'

DOMAINS = (
    "sales",
    "orders",
    "customers",
    "inventory",
    "marketing",
    "finance",
    "billing",
    "shipping",
    "payments",
    "support",
    "web",
    "ads",
    "products",
    "returns",
    "pricing",
    "fraud",
    "churn",
    "supply",
    "hr",
    "risk",
)
CADENCES = ("daily", "hourly", "sync", "mart", "etl", "report", "backfill", "snapshot")
TABLES = (
    "events",
    "orders",
    "customers",
    "accounts",
    "items",
    "invoices",
    "sessions",
    "payments",
    "stock",
    "prices",
    "tickets",
    "campaigns",
    "shipments",
    "refunds",
)
FIRST_STAGES = ("extract", "ingest", "pull", "read_source")
MIDDLE_STAGES = ("clean", "validate", "transform", "enrich", "join", "aggregate", "dedupe")
LAST_STAGES = ("build_mart", "load", "publish", "export", "score")
PARAMETERS = (
    "",
    ',"parameters":{"day":"%s"}',
    ',"parameters":{"batch_size":50000}',
    ',"parameters":{"model":"last_touch","window_days":7}',
    ',"parameters":{"from":"%sT00:00:00Z","dry_run":false}',
)
SCHEMAS = (
    [{"name": "id", "type": "BIGINT"}, {"name": "amount", "type": "DECIMAL(12,2)"}],
    [
        {"name": "customer_id", "type": "BIGINT"},
        {"name": "country", "type": "CHAR(2)"},
        {"name": "created_at", "type": "TIMESTAMP"},
    ],
    [{"name": "sku", "type": "VARCHAR"}, {"name": "on_hand", "type": "INTEGER"}],
)


def percent(table: tuple[tuple[Any, int], ...]) -> list[Any]:
    """A weighted table as a list of 100 values: a uniform pick from it picks by weight."""
    assert sum(weight for _, weight in table) == 100
    return [value for value, weight in table for _ in range(weight)]


ENGINE_CHOICE = percent(ENGINES)
TRIGGER_CHOICE = percent(TRIGGERS)
OFFSET_CHOICE = percent(OFFSETS)

# A UUID's version (4) and variant (RFC 4122) bits, set on 128 random bits.
UUID_CLEAR = ~((0xF << 76) | (0x3 << 62))
UUID_SET = (0x4 << 76) | (0x2 << 62)
