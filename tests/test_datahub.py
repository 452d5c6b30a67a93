"""DataHub mode (translate/datahub.py): when it is chosen, and what it changes in the events.

What DataHub's own converter makes of them is in tests/e2e/test_datahub_converter.py; here, the
choice (``openlineage.server``, or DataHub's endpoint) and the shapes, without Java.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest
from helpers import DEMO, GRAPH, WorkspaceMaker, run_record, stage_record
from support.kept_memory import kept_after

from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.opening import open_workspace
from openlineage_export.hub.model import Engine
from openlineage_export.translate import datahub, facets

ENDPOINT = "openapi/openlineage/api/v1/lineage"


def events(root: Path, **environ: str) -> list[dict[str, Any]]:
    out = io.BytesIO()
    report = run_export(ExportRequest(workspace=root, dry_run=True, output=out, environ=environ))
    assert report.exit_code in (0, 1)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def server(root: Path, **environ: str) -> str:
    return open_workspace(root, None, environ, lambda bad: None).translation.server


@pytest.mark.parametrize(
    "environ, expected",
    [
        ({}, "generic"),
        ({"OPENLINEAGE_ENDPOINT": ENDPOINT}, "datahub"),
        ({"OPENLINEAGE_ENDPOINT": "/" + ENDPOINT + "/"}, "datahub"),
        (
            {
                "OPENLINEAGE_URL": "https://gms.acme:8080/openapi",
                "OPENLINEAGE_ENDPOINT": "openlineage/api/v1/lineage",
            },
            "datahub",
        ),
        ({"OPENLINEAGE_URL": "http://proxy/", "OPENLINEAGE_ENDPOINT": "lineage"}, "generic"),
        ({"OPENLINEAGE_URL": "http://proxy/", "OPENLINEAGE_SERVER": "datahub"}, "datahub"),
        ({"OPENLINEAGE_ENDPOINT": ENDPOINT, "OPENLINEAGE_SERVER": "generic"}, "generic"),
        ({"OPENLINEAGE_ENDPOINT": ENDPOINT, "OPENLINEAGE_TRANSPORT": "file"}, "generic"),
        ({"OPENLINEAGE_TRANSPORT": "file", "OPENLINEAGE_SERVER": "datahub"}, "datahub"),
    ],
)
def test_datahub_mode_is_chosen_by_the_endpoint_or_the_setting(
    environ: dict[str, str], expected: str
) -> None:
    assert server(DEMO, **environ) == expected


def test_the_setting_is_read_from_settings_json(ws: WorkspaceMaker) -> None:
    ws.settings({"openlineage.server": "datahub"})
    assert server(ws.root) == "datahub"
    ws.settings({"openlineage.endpoint": ENDPOINT})
    assert server(ws.root) == "datahub"


def test_datahub_mode_changes_the_fingerprint_only_for_datahub() -> None:
    plain = open_workspace(DEMO, None, {}, lambda bad: None)
    generic = open_workspace(DEMO, None, {"OPENLINEAGE_SERVER": "generic"}, lambda bad: None)
    shaped = open_workspace(DEMO, None, {"OPENLINEAGE_SERVER": "datahub"}, lambda bad: None)
    assert plain.fingerprint == generic.fingerprint != shaped.fingerprint


def test_datahub_events_keep_run_ids_times_and_types() -> None:
    plain = events(DEMO)
    shaped = events(DEMO, OPENLINEAGE_SERVER="datahub")
    assert [(e["run"]["runId"], e["eventTime"], e["eventType"]) for e in plain] == [
        (e["run"]["runId"], e["eventTime"], e["eventType"]) for e in shaped
    ]
    assert shaped == events(DEMO, OPENLINEAGE_ENDPOINT=ENDPOINT)  # same bytes, whichever way
    for event in shaped:
        engine = event["run"]["facets"]["processing_engine"]
        assert engine["name"] == "lineage-hub"
        assert engine["version"] in ("hub-engine 4.2.0", "hub-engine 4.1.3", "unknown")
        parent = event["run"]["facets"].get("parent")
        if parent is not None:
            assert parent["_producer"].startswith("https://github.com/OpenLineage/OpenLineage/")


def test_dotted_pipeline_ids_are_their_own_flow_and_never_ambiguous(ws: WorkspaceMaker) -> None:
    graph = {
        **GRAPH,
        "pipelines": [
            {"id": "a.b", "name": "a.b", "stages": [{"id": "s"}]},
            {"id": "a", "name": "a", "stages": [{"id": "b"}]},
        ],
    }
    ws.graph(graph)
    ws.segment(
        "000001.jsonl",
        [
            run_record("r1", pipeline="a.b", stages=[stage_record("s")]),
            run_record("r2", pipeline="a", stages=[stage_record("b")]),
        ],
    )
    assert len(events(ws.root)) == 0  # for any other server both runs use the job name 'a.b'
    names = [e["job"]["name"] for e in events(ws.root, OPENLINEAGE_SERVER="datahub")]
    assert names == ["a%2Eb", "a%2Eb.s", "a%2Eb.s", "a%2Eb", "a", "a.b", "a.b", "a"]


@pytest.mark.parametrize(
    "namespace, name, expected",
    [
        ("workspace://acme", "data/x y.csv", ("workspace", "acme/data/x y.csv")),
        ("workspace://a/b", "c", ("workspace", "a%2Fb/c")),
        ("workspace://a", "b/c", ("workspace", "a/b/c")),
        (
            "postgres://db:5432",
            "sales.public.orders",
            ("postgres://db:5432", "sales.public.orders"),
        ),
        (
            "postgres://db:5432",
            "sales.public.order lines",
            ("postgres://db:5432", "sales.public.order%20lines"),
        ),
        ("kafka://k:9092", "clicks", ("kafka://k:9092", "clicks")),
        ("s3://bucket", "raw/a (1).parquet", ("s3", "bucket/raw/a %281%29.parquet")),
        ("gs://bucket", "k", ("gcs", "bucket/k")),
        ("abfss://raw@acme.dfs.core.windows.net", "x", ("abs", "raw@acme.dfs.core.windows.net/x")),
        ("hdfs://nn:8020", "/warehouse/t", ("hdfs", "nn:8020/warehouse/t")),
        ("file://nas-1", "/share/o.csv", ("file", "nas-1/share/o.csv")),
        ("file", "/srv/q1, q2 100%.csv", ("file", "/srv/q1%2C q2 100%25.csv")),
        ("bigquery", "p.d.t", ("bigquery", "p.d.t")),
    ],
)
def test_datasets_are_named_as_datahub_names_them(
    namespace: str, name: str, expected: tuple[str, str]
) -> None:
    assert datahub.dataset(namespace, name) == expected


def test_urn_parts_stay_distinct() -> None:
    texts = ["a,b", "a%2Cb", "a(b)", "a%28b%29", "a.b", "a%2Eb", "a b", "a\u241fb"]
    assert len({datahub.urn_part(t) for t in texts}) == len(texts)
    assert len({datahub.flow_id(t) for t in texts}) == len(texts)
    assert all(c not in datahub.flow_id(t) for t in texts for c in ",().\u241f")


def test_a_name_too_long_for_datahub_is_shortened_with_a_hash_of_it() -> None:
    long = "data/" + "日本語のデータ" * 10
    a = datahub.dataset("workspace://ws", long + ".csv")
    b = datahub.dataset("workspace://ws", long + ".tsv")
    assert a != b and a == datahub.dataset("workspace://ws", long + ".csv")
    for platform, name in (a, b):
        urn = f"urn:li:dataset:(urn:li:dataPlatform:{platform},{name},PROD)"
        assert len(quote_plus(urn, safe="*")) <= datahub.URN_LIMIT < 512
        assert name.startswith("ws/data/日本語") and name[-17] == "~"
    escaped = datahub.dataset("s3://b", "x" * 380 + ",,,,,,")[1]
    assert "~" in escaped and not escaped.split("~")[0].endswith(("%", "%2"))
    assert datahub.dataset("s3://b", "k.csv") == ("s3", "b/k.csv")  # short names stay whole


def test_long_names_and_engines_are_made_without_being_kept() -> None:
    """Before: ``dataset`` (4,096 entries) and ``processing_engine`` (256) were cached by
    count alone, keyed by what the trail wrote whole. Now a key longer than CACHED_KEY_LIMIT
    is worked out each time."""
    names = [("s3://bucket", f"{'a' * 100_000}/{i}") for i in range(40)]
    engines = [Engine(f"{'e' * 100_000}{i}", "1") for i in range(40)]
    assert kept_after(lambda: [datahub.dataset(*name) for name in names]) < 1_000_000
    assert kept_after(lambda: [datahub.processing_engine(e) for e in engines]) < 1_000_000
    assert kept_after(lambda: [facets.processing_engine(e) for e in engines]) < 1_000_000
    assert datahub.dataset("s3://b", "k") == datahub.dataset("s3://b", "k")
