"""The demo's graph: its datasets, named once so the graph and the trail cannot disagree, and
its pipelines (one since deleted); and its settings."""

from __future__ import annotations

from typing import Any

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
