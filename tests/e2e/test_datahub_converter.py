"""DataHub's own OpenLineage converter reads every event the tool sends in DataHub mode.

Each converter kept in ../shared/third_party/datahub-* is built by scripts/datahub.sh (Maven,
cached) and runs the events as DataHub's REST endpoint does (``convertRunEventToJob``, then
``DatahubJob.toMcps``), checking every aspect against its Pegasus schema and every URN as
DataHub's server checks it. The events are the CLI's own dry run in DataHub mode of the demo,
of a synthetic trail (retries, failed, cancelled and running runs, skipped stages...) and of two
workspaces holding every other shape the trail allows (every dataset scheme of the mapping,
unicode, spaces and URN-reserved characters in names, pipeline ids with dots, the same relative
paths in both). For 2025-10-04 and the newest converter: every event accepted, URNs exactly as
docs/datahub.md says, no dataset dropped or merged. For 2025-07-21: every event refused, which
is what the export explains (tests/test_deliver_http.py shows that explanation).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    DEMO,
    ROOT,
    SHARED,
    USERS_HOME,
    WorkspaceMaker,
    cli_command,
    run_record,
    stage_record,
)
from hubwriter.synth import write_workspace

ACCEPTING = ("datahub-2025-10-04", "datahub-master-0014425f")
REFUSING = "datahub-2025-07-21"
DATAHUB_ENDPOINT = "openapi/openlineage/api/v1/lineage"
DB_SCHEMES = {
    "postgres",
    "mysql",
    "redshift",
    "sqlserver",
    "oracle",
    "db2",
    "trino",
    "hive",
    "teradata",
    "cassandra",
    "crate",
    "oceanbase",
    "snowflake",
    "kafka",
}

# -- the converters ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def converters() -> dict[str, str]:
    """NAME -> classpath of each converter, built (once, cached) by scripts/datahub.sh."""
    # The user's own HOME (tests get a private one): its Maven repository and build cache.
    home = str(USERS_HOME)
    build = subprocess.run(
        ["bash", str(ROOT / "scripts" / "datahub.sh"), "build"],
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "HOME": home},
    )
    if build.returncode != 0:
        message = f"scripts/datahub.sh could not build DataHub's converters:\n{build.stderr}"
        if os.environ.get("OLX_REQUIRE_DATAHUB") == "1" or any(
            SHARED.glob("third_party/datahub-*")
        ):
            pytest.fail(message)
        pytest.skip(message)
    found = dict(line.split("\t", 1) for line in build.stdout.splitlines())
    assert {*ACCEPTING, REFUSING} <= set(found), found
    CONVERTERS.update(found)
    return found


CONVERTERS: dict[str, str] = {}
"""NAME -> classpath, once the ``converters`` fixture built them."""


def convert(events: Path, name: str, *options: str) -> list[dict[str, Any]]:
    """One result per event from converter NAME (what ``scripts/datahub.sh check`` runs)."""
    with events.open("rb") as stdin:
        done = subprocess.run(
            [
                "java",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                CONVERTERS[name],
                "local.olx.datahub.ConverterCheck",
                *options,
            ],
            stdin=stdin,
            capture_output=True,
            timeout=600,
        )
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.splitlines()]


# -- the events, from the CLI's dry run -------------------------------------------------------


def dry_run(
    workspace: Path, out: Path, *, clashes: bool = False, **env: str
) -> list[dict[str, Any]]:
    """The events ``export --dry-run`` writes for ``workspace`` (into ``out``); with
    ``clashes``, it may leave out runs whose job name is ambiguous (exit code 1)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE")}
    done = subprocess.run(
        cli_command(
            "export",
            "--dry-run",
            "-q",
            "-w",
            str(workspace),
            "-o",
            str(out),
        ),
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 or (clashes and done.returncode == 1), done.stderr
    return [json.loads(line) for line in out.read_bytes().splitlines()]


SCHEMES = [
    "postgres://db.acme.internal:5432/sales.public.orders",
    "postgres://db-2.acme.internal:5432/sales.public.orders",  # same table, another host
    "postgresql://user:pw@DB.acme.internal:6543/sales.public.orders?sslmode=require",
    "postgres://db.acme.internal/sales.public.order lines",  # a space in a table name
    "mysql://crm-db:3306/crm.customers",
    "s3://acme-lake/raw/events/a.parquet",
    "s3a://acme-lake/raw/a (copy).parquet",
    "gs://acme-warehouse/c/p.parquet",
    "bigquery:acme.crm.customer_360",
    "kafka://kafka-1.acme.internal:9092/web.clickstream",
    "kafka://broker/clicks",
    "file:///srv/exports/orders.csv",
    "file:///srv/exports/q1, q2 [final] #3 100%.csv",
    "file://nas-1/share/orders.csv",
    "/srv/exports/orders.csv",
    "hdfs://namenode:8020/warehouse/t",
    "hdfs://namenode-2:8020/warehouse/t",
    "abfss://raw@acme.dfs.core.windows.net/events/x",
    "wasbs://raw@acme.blob.core.windows.net/events/x",
    "snowflake://acme-prod/DB.SCHEMA.T",
    "sqlserver://mssql-1:1433/erp.dbo.invoices",
    "redshift://cluster.acme:5439/dev.public.sales",
    "custom://weird host/x",
    "custom://other/x",
    "dbfs:/mnt/lake/t",
    "data/raw/orders.parquet",
    "data/répertoire/données ünïcode.csv",
    "data/with,comma (and parens)/x.csv",
    "data/100%/y.csv",
    "data/" + "日本語のデータ" * 10 + ".csv",  # URNs DataHub finds too long
    "data/" + "日本語のデータ" * 10 + ".tsv",
    "s3://acme-lake/" + "deep/" * 100 + "x.parquet",
]
"""Every dataset scheme of the mapping (tests/test_datasets.py) and names a URI, a URN or
DataHub's server would not take as they are."""


PIPELINES = ["sales.daily", "sales", "etl (v2), eu", "ünï côdé 100%"]
"""Pipeline ids: one with a dot (and a pipeline with its first part as id), reserved
characters, unicode."""


def shapes_workspace(root: Path, name: str) -> Path:
    """A workspace of every shape the trail allows, named ``name`` (two share every path)."""
    ws = WorkspaceMaker(root)
    pipelines = PIPELINES
    ws.graph(
        {
            "format": "lineage-hub/graph@1",
            "workspace": {"name": name},
            "pipelines": [
                {
                    "id": p,
                    "name": p,
                    "stages": [{"id": "extract"}, {"id": "load.v2"}, {"id": "daily"}],
                }
                for p in pipelines
            ],
        }
    )
    half = len(SCHEMES) // 2
    reads = [{"dataset": d, "digest": f"sha256:{i:02x}"} for i, d in enumerate(SCHEMES[:half])]
    writes = [
        {
            "dataset": d,
            "digest": f"sha256:{i:02x}",
            "rows": 1,
            "schema": [{"name": "id", "type": "BIGINT"}, {"name": "no type"}],
        }
        for i, d in enumerate(SCHEMES[half:])
    ]
    lines: list[Any] = []
    for n, pipeline in enumerate(pipelines):
        engine = (
            {"name": "Hub Engine (beta), 2", "version": "5"}
            if n == 2
            else {"name": "hub-engine", "version": "4.2.0"}
        )
        lines += [
            run_record(
                f"{name}-ok-{n}",
                pipeline=pipeline,
                engine=engine,
                stages=[
                    stage_record("extract", reads=reads, writes=writes),
                    stage_record("load.v2", status="failed", error={"message": "boom"}),
                    stage_record(
                        "load.v2", attempt=2, reads=[{"dataset": w["dataset"]} for w in writes]
                    ),
                    stage_record("daily", status="skipped"),
                ],
            ),
            run_record(
                f"{name}-failed-{n}",
                pipeline=pipeline,
                status="failed",
                error={"message": "a stage failed"},
                stages=[stage_record("extract", status="failed", error={"message": "no"})],
            ),
            run_record(
                f"{name}-cancelled-{n}",
                pipeline=pipeline,
                status="cancelled",
                stages=[stage_record("extract", status="cancelled")],
            ),
            run_record(
                f"{name}-running-{n}",
                pipeline=pipeline,
                status="running",
                stages=[stage_record("extract", status="running")],
            ),
        ]
    ws.segment("000001.jsonl", lines)
    return root


def key(event: dict[str, Any]) -> tuple[str, str, str]:
    """What an event is, whatever server it is shaped for."""
    return event["run"]["runId"], event["eventType"], event["eventTime"]


@pytest.fixture(scope="module")
def sent(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[Any], list[Any]]]:
    """What each workspace's export sends in DataHub mode (the events' file, the events) and
    what it sends any other server, event for event."""
    tmp = tmp_path_factory.mktemp("datahub")
    synth = tmp / "synth"
    write_workspace(synth, 300, seed=20, pipelines=12, running_tail=4)
    workspaces = {
        "demo": DEMO,
        "synth": synth,
        "shapes-a": shapes_workspace(tmp / "a", "shapes-a"),
        "shapes-b": shapes_workspace(tmp / "b", "shapes-b"),
    }
    out: dict[str, tuple[Path, list[Any], list[Any]]] = {}
    for label, root in workspaces.items():
        file = tmp / f"{label}.jsonl"
        # The demo by its endpoint (openlineage.server: auto), the others by the setting.
        mode = (
            {"OPENLINEAGE_URL": "http://127.0.0.1:9", "OPENLINEAGE_ENDPOINT": DATAHUB_ENDPOINT}
            if label == "demo"
            else {"OPENLINEAGE_SERVER": "datahub"}
        )
        datahub = dry_run(root, file, **mode)
        # Any other server gets the same runs, less those whose job name is ambiguous there
        # (pipeline 'sales.daily' and stage 'daily' of 'sales'): DataHub mode has no such name.
        generic = dry_run(root, tmp / f"{label}-generic.jsonl", clashes=label.startswith("shapes"))
        assert len(datahub) >= len(generic) > 0
        out[label] = (file, datahub, generic)
    return out


# -- what docs/datahub.md says DataHub makes of them ------------------------------------------


def dataset_urn(namespace: str, name: str) -> str:
    """docs/datahub.md: a ``scheme://host`` namespace gives the scheme's platform (sqlserver:
    mssql) and the name; any other namespace is the platform itself."""
    scheme, sep, _ = namespace.partition("://")
    platform = {"sqlserver": "mssql"}.get(scheme, scheme) if sep else namespace
    return f"urn:li:dataset:(urn:li:dataPlatform:{platform},{name},PROD)"


def expected(event: dict[str, Any]) -> dict[str, Any]:
    """The DataFlow, DataJob, DataProcessInstance and dataset URNs docs/datahub.md promises."""
    job = event["job"]
    engine = event["run"]["facets"]["processing_engine"]["name"].lower()
    flow = f"urn:li:dataFlow:({engine},{job['name'].split('.')[0]},{job['namespace']})"
    return {
        "dataFlow": flow,
        "dataJob": f"urn:li:dataJob:({flow},{job['name']})",
        "dataProcessInstance": f"urn:li:dataProcessInstance:{event['run']['runId']}",
        "inputs": sorted({dataset_urn(d["namespace"], d["name"]) for d in event["inputs"]}),
        "outputs": sorted({dataset_urn(d["namespace"], d["name"]) for d in event["outputs"]}),
    }


def same_data(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Whether two datasets as any server gets them are one DataHub dataset by design: a
    database table (or topic) of two hosts, as DataHub's own connectors name it."""
    (ns_a, name_a), (ns_b, name_b) = a, b
    scheme = ns_a.partition("://")[0]
    return (
        scheme in DB_SCHEMES
        and "://" in ns_a
        and scheme == ns_b.partition("://")[0]
        and "://" in ns_b
        and name_a == name_b
    )


# -- the tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ACCEPTING)
def test_every_event_is_accepted_whole_with_urns_as_documented(
    converters: dict[str, str], sent: dict[str, tuple[Path, list[Any], list[Any]]], name: str
) -> None:
    dataset_of: dict[tuple[str, str], str] = {}  # every dataset as any server gets it -> its URN
    for label, (file, events, generic) in sent.items():
        results = convert(file, name)
        assert len(results) == len(events), label
        refused = [r for r in results if not r["ok"]]
        assert not refused, f"{name} refused {len(refused)} of {label}'s events: {refused[:3]}"
        as_generic = {key(e): e for e in generic}
        for event, result in zip(events, results, strict=True):
            assert result["runId"] == event["run"]["runId"]
            want = expected(event)
            got = {k: result[k] for k in want}
            got["inputs"], got["outputs"] = sorted(got["inputs"]), sorted(got["outputs"])
            assert got == want, (label, event["job"]["name"])
            plain = as_generic.get(key(event))
            if plain is None:
                continue
            for side in ("inputs", "outputs"):
                for ours, theirs in zip(event[side], plain[side], strict=True):
                    urn = dataset_urn(ours["namespace"], ours["name"])
                    assert urn in result[side]
                    previous = dataset_of.setdefault((theirs["namespace"], theirs["name"]), urn)
                    assert previous == urn
    # None dropped (every dataset has its URN, checked above), none merged but by design.
    datasets = sorted(dataset_of)
    assert len(datasets) > len(SCHEMES) * 2
    for i, a in enumerate(datasets):
        for b in datasets[i + 1 :]:
            merged = dataset_of[a] == dataset_of[b]
            assert merged == same_data(a, b), (a, b, dataset_of[a], dataset_of[b])
    # Two workspaces writing the same relative path keep two datasets.
    relative = {urn for (ns, _), urn in dataset_of.items() if ns.startswith("workspace://")}
    assert any("shapes-a/data/raw/orders.parquet" in u for u in relative)
    assert any("shapes-b/data/raw/orders.parquet" in u for u in relative)
    assert len(relative) == sum(1 for ns, _ in dataset_of if ns.startswith("workspace://"))


def test_every_pipeline_is_its_own_dataflow(
    converters: dict[str, str], sent: dict[str, tuple[Path, list[Any], list[Any]]]
) -> None:
    file, events, _ = sent["shapes-a"]
    results = convert(file, ACCEPTING[-1])
    pipeline_of: dict[str, str] = {}  # pipeline run id -> pipeline id, from the trace id
    for event in events:
        tags = event["run"]["facets"].get("tags", {}).get("tags", [])
        trace = next((t["value"] for t in tags if t["key"] == "traceId"), None)
        if trace is not None and "parent" not in event["run"]["facets"]:
            pipeline_of[event["run"]["runId"]] = PIPELINES[int(trace.rsplit("-", 1)[1])]
    flows: dict[str, set[str]] = {}
    for event, result in zip(events, results, strict=True):
        parent = event["run"]["facets"].get("parent")
        run = parent["run"]["runId"] if parent else event["run"]["runId"]
        flows.setdefault(pipeline_of[run], set()).add(result["dataFlow"])
    assert sorted(flows) == sorted(PIPELINES)
    assert all(len(found) == 1 for found in flows.values()), flows
    assert len({next(iter(found)) for found in flows.values()}) == len(PIPELINES)
    assert flows["sales.daily"] == {"urn:li:dataFlow:(lineage-hub,sales%2Edaily,shapes-a)"}
    assert flows["sales"] == {"urn:li:dataFlow:(lineage-hub,sales,shapes-a)"}
    assert flows["etl (v2), eu"] == {"urn:li:dataFlow:(lineage-hub,etl %28v2%29%2C eu,shapes-a)"}
    assert flows["ünï côdé 100%"] == {"urn:li:dataFlow:(lineage-hub,ünï côdé 100%25,shapes-a)"}


def test_a_platform_instance_per_connection_tells_database_hosts_apart(
    converters: dict[str, str], sent: dict[str, tuple[Path, list[Any], list[Any]]]
) -> None:
    """The newest converter maps a connection (the namespace the events keep for a database) to
    the platform instance DataHub's own connector gives that server's tables."""
    file, _, _ = sent["shapes-a"]
    results = convert(
        file,
        ACCEPTING[-1],
        "--connection",
        "postgres://db.acme.internal:5432=pg-main",
        "--connection",
        "postgres://db-2.acme.internal:5432=pg-two",
    )
    assert all(r["ok"] for r in results)
    tables = {
        u for r in results for u in r["inputs"] + r["outputs"] if "dataPlatform:postgres" in u
    }
    assert {
        "urn:li:dataset:(urn:li:dataPlatform:postgres,pg-main.sales.public.orders,PROD)",
        "urn:li:dataset:(urn:li:dataPlatform:postgres,pg-two.sales.public.orders,PROD)",
        "urn:li:dataset:(urn:li:dataPlatform:postgres,sales.public.orders,PROD)",  # not mapped
    } <= tables


def test_datahub_of_2025_07_refuses_every_event_from_an_unknown_producer(
    converters: dict[str, str], sent: dict[str, tuple[Path, list[Any], list[Any]]]
) -> None:
    """What its endpoint turns into an empty 500, and the export explains
    (tests/test_deliver_http.py::test_datahub_empty_500_is_explained_and_kept_pending)."""
    from openlineage_export.translate.datahub import REFUSAL as DATAHUB_REFUSAL

    file, events, _ = sent["demo"]
    results = convert(file, REFUSING)
    assert len(results) == len(events) == 236
    assert not any(r["ok"] for r in results)
    # One reason for every event, the one our explanation quotes: taken from the converter's
    # exception (Java's "class: message"), not written here in its words.
    (error,) = {r["error"] for r in results}
    reason = error.split(": ", 1)[-1]
    assert reason.strip() and reason in DATAHUB_REFUSAL, (error, DATAHUB_REFUSAL)


def test_generic_events_lose_runs_and_datasets_in_datahub(
    converters: dict[str, str], sent: dict[str, tuple[Path, list[Any], list[Any]]]
) -> None:
    """Why DataHub mode exists: the same workspace shaped for any other server loses every stage
    run on 2025-10-04, and on the newest datasets whose name a URI cannot hold, or events."""
    file, _, generic = sent["shapes-a"]
    plain = file.with_name("shapes-a-generic.jsonl")
    old = convert(plain, ACCEPTING[0])
    stages = [r for e, r in zip(generic, old, strict=True) if "parent" in e["run"]["facets"]]
    # (An output whose schema has a field without a type fails it even before its parent.)
    assert stages and not any(r["ok"] for r in stages)
    # Some for the reason DataHub mode answers (the one DATAHUB_REFUSAL quotes), in whatever
    # words the converter's exception has.
    from openlineage_export.translate.datahub import REFUSAL as DATAHUB_REFUSAL

    assert any(r["error"].split(": ", 1)[-1] in DATAHUB_REFUSAL for r in stages), stages[:3]
    new = convert(plain, ACCEPTING[1])
    dropped = [
        e
        for e, r in zip(generic, new, strict=True)
        if "outputs" in r
        and len(r["outputs"]) < len({(d["namespace"], d["name"]) for d in e["outputs"]})
    ]
    assert dropped and not all(r["ok"] for r in new)
