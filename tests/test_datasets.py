"""Dataset naming per the OpenLineage conventions, and the workspace-relative namespace."""

from __future__ import annotations

import pytest

from openlineage_export.translate.datasets import DatasetNamer, namespace_safe

NAMER = DatasetNamer("acme-analytics")


@pytest.mark.parametrize(("location", "namespace", "name"), [
    ("postgres://db.acme.internal:5432/sales.public.orders", "postgres://db.acme.internal:5432",
     "sales.public.orders"),
    ("postgres://db.acme.internal/sales.public.orders", "postgres://db.acme.internal:5432",
     "sales.public.orders"),
    ("postgresql://user:pw@DB.acme.internal:6543/sales.public.orders?sslmode=require",
     "postgres://db.acme.internal:6543", "sales.public.orders"),
    ("mysql://crm-db:3306/crm.customers", "mysql://crm-db:3306", "crm.customers"),
    ("mysql://crm-db/crm.customers", "mysql://crm-db:3306", "crm.customers"),
    ("s3://acme-lake/raw/events/a.parquet", "s3://acme-lake", "raw/events/a.parquet"),
    ("s3a://acme-lake/raw/a.parquet", "s3://acme-lake", "raw/a.parquet"),
    ("gs://acme-warehouse/c/p.parquet", "gs://acme-warehouse", "c/p.parquet"),
    ("bigquery:acme.crm.customer_360", "bigquery", "acme.crm.customer_360"),
    ("kafka://kafka-1.acme.internal:9092/web.clickstream", "kafka://kafka-1.acme.internal:9092",
     "web.clickstream"),
    ("kafka://broker/clicks", "kafka://broker:9092", "clicks"),
    ("file:///srv/exports/orders.csv", "file", "/srv/exports/orders.csv"),
    ("file://nas-1/share/orders.csv", "file://nas-1", "/share/orders.csv"),
    ("/srv/exports/orders.csv", "file", "/srv/exports/orders.csv"),
    ("hdfs://namenode:8020/warehouse/t", "hdfs://namenode:8020", "/warehouse/t"),
    ("abfss://raw@acme.dfs.core.windows.net/events/x", "abfss://raw@acme.dfs.core.windows.net",
     "events/x"),
    ("snowflake://acme-prod/DB.SCHEMA.T", "snowflake://acme-prod", "DB.SCHEMA.T"),
    ("data/raw/orders.parquet", "workspace://acme-analytics", "data/raw/orders.parquet"),
    ("./data/../data/raw/orders.parquet", "workspace://acme-analytics", "data/raw/orders.parquet"),
    ("data\\raw\\orders.parquet", "workspace://acme-analytics", "data/raw/orders.parquet"),
    ("C:/data/x.csv", "workspace://acme-analytics", "C:/data/x.csv"),
    ("custom://weird host/x", "custom://weird_host", "x"),
])
def test_locations_are_named_per_the_conventions(location: str, namespace: str,
                                                 name: str) -> None:
    assert NAMER.name(location) == (namespace, name)


def test_credentials_never_reach_a_name() -> None:
    for location in ("postgres://admin:hunter2@db:5432/a.b.c", "s3://key:hunter2@bucket/x",
                     "custom://u:hunter2@h/p?token=hunter2#hunter2"):
        assert "hunter2" not in "".join(NAMER.name(location))


def test_workspace_names_a_server_would_refuse_are_made_safe() -> None:
    assert DatasetNamer("Acme Analytics (EU)").name("data/x") == (
        "workspace://Acme_Analytics__EU_", "data/x")
    assert namespace_safe("ünï;x=y") == "_n__x_y"
