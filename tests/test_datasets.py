"""Dataset naming per the OpenLineage conventions, and the workspace-relative namespace."""

from __future__ import annotations

import io
import json
import re

import pytest
from helpers import GRAPH, WorkspaceMaker, run_record
from hypothesis import given, settings
from hypothesis import strategies as st
from support.kept_memory import kept_after

from openlineage_export.export import ExportRequest, run_export
from openlineage_export.translate.datasets import DatasetNamer, namespace_safe

NAMER = DatasetNamer("acme-analytics")


@pytest.mark.parametrize(
    ("location", "namespace", "name"),
    [
        (
            "postgres://db.acme.internal:5432/sales.public.orders",
            "postgres://db.acme.internal:5432",
            "sales.public.orders",
        ),
        (
            "postgres://db.acme.internal/sales.public.orders",
            "postgres://db.acme.internal:5432",
            "sales.public.orders",
        ),
        (
            "postgresql://user:pw@DB.acme.internal:6543/sales.public.orders?sslmode=require",
            "postgres://db.acme.internal:6543",
            "sales.public.orders",
        ),
        ("mysql://crm-db:3306/crm.customers", "mysql://crm-db:3306", "crm.customers"),
        ("mysql://crm-db/crm.customers", "mysql://crm-db:3306", "crm.customers"),
        ("s3://acme-lake/raw/events/a.parquet", "s3://acme-lake", "raw/events/a.parquet"),
        ("s3a://acme-lake/raw/a.parquet", "s3://acme-lake", "raw/a.parquet"),
        ("gs://acme-warehouse/c/p.parquet", "gs://acme-warehouse", "c/p.parquet"),
        ("bigquery:acme.crm.customer_360", "bigquery", "acme.crm.customer_360"),
        (
            "kafka://kafka-1.acme.internal:9092/web.clickstream",
            "kafka://kafka-1.acme.internal:9092",
            "web.clickstream",
        ),
        ("kafka://broker/clicks", "kafka://broker:9092", "clicks"),
        ("file:///srv/exports/orders.csv", "file", "/srv/exports/orders.csv"),
        ("file://nas-1/share/orders.csv", "file://nas-1", "/share/orders.csv"),
        ("/srv/exports/orders.csv", "file", "/srv/exports/orders.csv"),
        ("hdfs://namenode:8020/warehouse/t", "hdfs://namenode:8020", "/warehouse/t"),
        (
            "abfss://raw@acme.dfs.core.windows.net/events/x",
            "abfss://raw@acme.dfs.core.windows.net",
            "events/x",
        ),
        ("snowflake://acme-prod/DB.SCHEMA.T", "snowflake://acme-prod", "DB.SCHEMA.T"),
        ("data/raw/orders.parquet", "workspace://acme-analytics", "data/raw/orders.parquet"),
        (
            "./data/../data/raw/orders.parquet",
            "workspace://acme-analytics",
            "data/raw/orders.parquet",
        ),
        ("data\\raw\\orders.parquet", "workspace://acme-analytics", "data/raw/orders.parquet"),
        ("C:/data/x.csv", "workspace://acme-analytics", "C:/data/x.csv"),
        ("custom://weird host/x", "custom://weird-host", "x"),
    ],
)
def test_locations_are_named_per_the_conventions(location: str, namespace: str, name: str) -> None:
    assert NAMER.name(location) == (namespace, name)


def test_credentials_never_reach_a_name() -> None:
    for location in (
        "postgres://admin:hunter2@db:5432/a.b.c",
        "s3://key:hunter2@bucket/x",
        "custom://u:hunter2@h/p?token=hunter2#hunter2",
    ):
        assert "hunter2" not in "".join(NAMER.name(location))


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("S3://\f/0", ("s3://", "0")),
        ("gs:// /key", ("gs://", "key")),
        ("bigquery: . . ", ("bigquery", " . . ")),
        ("kafka://broker:9092/ ", ("kafka://broker:9092", " ")),
        ("postgres://db/ . . ", ("postgres://db:5432", " . . ")),
    ],
)
def test_a_blank_part_the_naming_helpers_refuse_is_still_named(
    location: str, expected: tuple[str, str]
) -> None:
    # openlineage-python's helpers raise ValueError for a blank bucket, table or topic: found
    # by test_fuzz, it was a traceback.
    assert NAMER.name(location) == expected


def test_workspace_names_a_server_would_refuse_are_made_safe() -> None:
    assert DatasetNamer("Acme Analytics (EU)").name("data/x") == (
        "workspace://Acme-Analytics--EU-",
        "data/x",
    )
    assert namespace_safe("ünï;x=y") == "-n--x-y"
    # "-", as the README says: two workspaces Marquez's own "_" would merge stay two.
    assert namespace_safe("acme analytics") != namespace_safe("acme_analytics")


# Marquez 0.51.1: NamespaceName.PATTERN, and what OpenLineageDao.formatNamespaceName rewrites.
MARQUEZ_NAMESPACE = re.compile(r"[a-zA-Z:;=/0-9_\-.@+]{1,1024}")
MARQUEZ_REWRITES = re.compile(r"[^a-z:/A-Z0-9\-_.@+]")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=1100), st.text(max_size=40))
def test_every_namespace_we_emit_is_one_marquez_keeps_as_it_is(
    workspace: str, location: str
) -> None:
    for namespace in (
        namespace_safe(workspace),
        DatasetNamer(workspace).name(location)[0],
        DatasetNamer(workspace).name(f"custom://{location}/x")[0],
    ):
        assert MARQUEZ_NAMESPACE.fullmatch(namespace), namespace
        assert not MARQUEZ_REWRITES.search(namespace), namespace


@pytest.mark.parametrize(
    ("name", "setting", "namespace", "namespace_from"),
    [
        ("acme analytics", None, "acme-analytics", "acme analytics"),
        ("acme-analytics", None, "acme-analytics", None),
        ("acme analytics", "chosen", "chosen", None),
    ],
)
def test_the_report_says_when_the_namespace_is_not_the_workspace_name(
    ws: WorkspaceMaker, name: str, setting: str | None, namespace: str, namespace_from: str | None
) -> None:
    ws.graph({**GRAPH, "workspace": {"name": name}})
    ws.segment("000001.jsonl", [run_record("r1")])
    if setting is not None:
        ws.settings({"openlineage.namespace": setting})
    out = io.BytesIO()
    report = run_export(ExportRequest(ws.root, dry_run=True, output=out))
    assert (report.namespace, report.namespace_from) == (namespace, namespace_from)
    assert report.to_dict()["namespaceFrom"] == namespace_from
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert {e["job"]["namespace"] for e in events} == {namespace}
    relative = {d["namespace"] for e in events for d in e["outputs"]}
    assert relative == {f"workspace://{namespace_safe(name)}"}


def test_long_locations_are_named_without_being_kept() -> None:
    """Before: the namer's cache (4,096 entries) and urllib's ``urlsplit`` cache (128) kept
    each location whole, and its name: 60 lines with a 4 MiB location each took 1.08 GB.
    Now a location longer than CACHED_KEY_LIMIT is named afresh and split uncached."""
    namer = DatasetNamer("w")
    long = [f"s3://bucket/{'a' * 100_000}/{i}" for i in range(40)]
    named = [namer.name(location) for location in long[:2]]
    assert named[0] == ("s3://bucket", f"{'a' * 100_000}/0")
    assert kept_after(lambda: [namer.name(location) for location in long]) < 1_000_000
    assert namer.name("s3://bucket/a") == namer.name("s3://bucket/a") == ("s3://bucket", "a")
