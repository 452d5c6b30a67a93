"""Translation rules: ids, event types and times, parents, datasets, facets."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
import pytest
from helpers import GRAPH, run_record, stage_record

from openlineage_export import __version__
from openlineage_export.hub.graph import read_graph
from openlineage_export.hub.model import Graph, Pipeline, Stage
from openlineage_export.hub.records import parse_run
from openlineage_export.translate import facets
from openlineage_export.translate.encoded import encode, facts
from openlineage_export.translate.events import TranslationConfig, Translator
from openlineage_export.translate.ids import canonical_uuid, pipeline_run_id, stage_run_id
from openlineage_export.translate.modes import translator_for

TRACE = "3F2C5A1E-9B7D-4C8E-A1F0-2D6B9E8C7A54"


@pytest.fixture
def graph(tmp_path: Any) -> Graph:
    path = tmp_path / "graph.json"
    import json

    path.write_text(json.dumps(GRAPH))
    return read_graph(path, "graph.json", lambda e: None)


def translate(graph: Graph, record: dict[str, Any], **config: Any) -> list[dict[str, Any]]:
    cfg = TranslationConfig(namespace=config.pop("namespace", "test-ws"), **config)
    return Translator(graph, cfg).translate(parse_run(record)).events


def test_uuid_trace_id_is_the_pipeline_run_id_in_lower_case(graph: Graph) -> None:
    events = translate(graph, run_record(TRACE))
    assert events[0]["run"]["runId"] == TRACE.lower()
    assert events[-1]["run"]["runId"] == TRACE.lower()


def test_other_trace_ids_get_a_derived_time_ordered_uuidv7(graph: Graph) -> None:
    early = pipeline_run_id("ns", "p", "run-1", "2026-11-02T02:00:00Z")
    late = pipeline_run_id("ns", "p", "run-0", "2026-11-03T02:00:00Z")
    assert uuid.UUID(early).version == 7 and early < late
    assert early == pipeline_run_id("ns", "p", "run-1", "2026-11-02T02:00:00Z")
    assert early != pipeline_run_id("ns", "p", "run-2", "2026-11-02T02:00:00Z")
    assert early != pipeline_run_id("other-ns", "p", "run-1", "2026-11-02T02:00:00Z")
    # the time part is the start time, in milliseconds since the epoch
    assert int(early.replace("-", "")[:12], 16) == 1793584800000


def test_derived_ids_are_stable_across_versions_of_this_code() -> None:
    # Pinned: changing the derivation would duplicate every non-UUID run in users' servers.
    assert (
        pipeline_run_id("acme", "daily", "run-20240301-0007", "2024-03-01T02:00:00Z")
        == "018df7bd-6100-736a-be80-eea9d289e483"
    )
    assert (
        stage_run_id("018df7bd-6100-736a-be80-eea9d289e483", "extract", 2, "2024-03-01T02:00:01Z")
        == "018df7bd-64e8-7f77-9bde-99bd470992f4"
    )


@pytest.mark.parametrize(
    ("trace_id", "expected"),
    [
        (TRACE, TRACE.lower()),
        (TRACE.lower(), TRACE.lower()),
        ("3f2c5a1e9b7d4c8ea1f02d6b9e8c7a54", None),
        ("{" + TRACE + "}", None),
        ("run-20240301-0007", None),
        (TRACE + " ", None),
    ],
)
def test_only_the_8_4_4_4_12_form_counts_as_a_uuid(trace_id: str, expected: str | None) -> None:
    assert canonical_uuid(trace_id) == expected


def test_one_pipeline_run_plus_one_run_per_stage_attempt(graph: Graph) -> None:
    record = run_record(
        TRACE,
        status="failed",
        stages=[
            stage_record("extract", status="failed", attempt=1, error={"message": "boom"}),
            stage_record("extract", status="succeeded", attempt=2),
            stage_record(
                "load",
                status="failed",
                error={"message": "disk full", "type": "IOError", "stackTrace": "trace..."},
            ),
            stage_record("report", status="skipped", startedAt=None),
        ],
    )
    events = translate(graph, record)
    shape = [(e["job"]["name"], e["eventType"]) for e in events]
    assert shape == [
        ("daily-sales", "START"),
        ("daily-sales.extract", "START"),
        ("daily-sales.extract", "FAIL"),
        ("daily-sales.extract", "START"),
        ("daily-sales.extract", "COMPLETE"),
        ("daily-sales.load", "START"),
        ("daily-sales.load", "FAIL"),
        ("daily-sales", "FAIL"),
    ]
    stage_ids = {e["run"]["runId"] for e in events[1:-1]}
    assert len(stage_ids) == 3 and TRACE.lower() not in stage_ids
    for event in events[1:-1]:
        parent = event["run"]["facets"]["parent"]
        assert parent["run"]["runId"] == TRACE.lower()
        assert parent["job"] == {"namespace": "test-ws", "name": "daily-sales"}
        assert parent["root"]["run"]["runId"] == TRACE.lower()
    assert events[4]["run"]["facets"]["tags"]["tags"] == [
        {"key": "attempt", "value": "2", "source": "LINEAGE_HUB"}
    ]


def test_event_types_and_times_come_from_the_trail(graph: Graph) -> None:
    for status, end in (("succeeded", "COMPLETE"), ("failed", "FAIL"), ("cancelled", "ABORT")):
        events = translate(graph, run_record(status=status, stages=[]))
        assert [(e["eventType"], e["eventTime"]) for e in events] == [
            ("START", "2026-11-02T02:00:00.120Z"),
            (end, "2026-11-02T02:07:31.904Z"),
        ]


def test_a_running_run_and_stage_get_their_start_only(graph: Graph) -> None:
    events = translate(graph, run_record(status="running", stages=[stage_record(status="running")]))
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("daily-sales", "START"),
        ("daily-sales.extract", "START"),
    ]


def test_reads_are_inputs_writes_are_outputs_with_digest_as_version(graph: Graph) -> None:
    events = translate(
        graph,
        run_record(
            stages=[
                stage_record(
                    reads=[
                        {"dataset": "s3://lake/raw/a.parquet", "digest": "sha256:11"},
                        {"dataset": "kafka://broker:9092/clicks"},
                    ]
                )
            ]
        ),
    )
    start, end = events[1], events[2]
    assert start["inputs"] == end["inputs"]
    (s3, kafka) = start["inputs"]
    assert (s3["namespace"], s3["name"]) == ("s3://lake", "raw/a.parquet")
    assert s3["facets"]["version"]["datasetVersion"] == "sha256:11"
    assert kafka["facets"] == {}  # no digest, no facet
    (out,) = end["outputs"]
    assert (out["namespace"], out["name"]) == ("workspace://test-ws", "data/raw/o.parquet")
    assert out["facets"]["version"]["datasetVersion"] == "sha256:bb"
    assert out["facets"]["schema"]["fields"] == [{"name": "id", "type": "BIGINT"}]
    assert out["outputFacets"]["outputStatistics"] | {} == {
        "_producer": facets.PRODUCER,
        "_schemaURL": out["outputFacets"]["outputStatistics"]["_schemaURL"],
        "rowCount": 3,
        "size": 10,
    }
    assert events[0]["inputs"] == [] and events[0]["outputs"] == []


def test_job_facets_type_documentation_and_source_location(graph: Graph) -> None:
    events = translate(
        graph,
        run_record(),
        source_repository_url="https://git.acme/etl.git",
        source_repository_version="main",
    )
    pipeline_job, stage_job = events[0]["job"], events[1]["job"]
    assert pipeline_job["facets"]["jobType"]["jobType"] == "DAG"
    assert stage_job["facets"]["jobType"] | {} == {
        **stage_job["facets"]["jobType"],
        "processingType": "BATCH",
        "integration": "LINEAGE_HUB",
        "jobType": "TASK",
    }
    assert pipeline_job["facets"]["documentation"]["description"] == "Builds the sales mart."
    assert stage_job["facets"]["documentation"]["description"] == "Pull orders"
    location = stage_job["facets"]["sourceCodeLocation"]
    assert (location["type"], location["url"], location["path"], location["version"]) == (
        "git",
        "https://git.acme/etl.git",
        "pipelines/extract.py",
        "main",
    )


def test_no_source_location_without_a_repository(graph: Graph) -> None:
    events = translate(graph, run_record())
    assert "sourceCodeLocation" not in events[1]["job"]["facets"]


def test_processing_engine_from_trail_else_this_package(graph: Graph) -> None:
    with_engine = translate(graph, run_record())
    assert with_engine[0]["run"]["facets"]["processing_engine"]["name"] == "hub-engine"
    without = translate(graph, run_record(engine=None))
    for event in without:
        engine = event["run"]["facets"]["processing_engine"]
        assert (engine["name"], engine["version"]) == ("openlineage-export", __version__)


def test_error_message_language_from_trail_else_from_source_else_placeholder(graph: Graph) -> None:
    events = translate(
        graph,
        run_record(
            status="failed",
            stages=[
                stage_record("extract", status="failed", error={"message": "a"}),
                stage_record(
                    "load", status="failed", error={"message": "b", "programmingLanguage": "R"}
                ),
                stage_record("gone", status="failed", error={"message": "c"}),
            ],
        ),
    )
    languages = {
        e["job"]["name"]: e["run"]["facets"]["errorMessage"]["programmingLanguage"]
        for e in events
        if e["eventType"] == "FAIL"
    }
    assert languages == {
        "daily-sales.extract": "python",
        "daily-sales.load": "R",
        "daily-sales.gone": "unknown",
        "daily-sales": "unknown",
    }
    pipeline_error = events[-1]["run"]["facets"]["errorMessage"]
    assert pipeline_error["message"] == "c"  # the run has no error of its own: last failed stage's


def test_run_level_error_wins_for_the_pipeline_run(graph: Graph) -> None:
    events = translate(
        graph,
        run_record(
            status="failed",
            error={"message": "run-level"},
            stages=[stage_record(status="failed", error={"message": "stage"})],
        ),
    )
    assert events[-1]["run"]["facets"]["errorMessage"]["message"] == "run-level"
    assert "errorMessage" not in events[0]["run"]["facets"]


def test_non_uuid_trace_id_and_trigger_ride_as_tags(graph: Graph) -> None:
    events = translate(graph, run_record("run-20240301-0007", trigger="schedule"))
    assert events[0]["run"]["facets"]["tags"]["tags"] == [
        {"key": "traceId", "value": "run-20240301-0007", "source": "LINEAGE_HUB"},
        {"key": "trigger", "value": "schedule", "source": "LINEAGE_HUB"},
    ]
    uuid_events = translate(graph, run_record(TRACE))
    assert "tags" not in uuid_events[0]["run"]["facets"]


def test_parameters_become_execution_parameters_as_strings(graph: Graph) -> None:
    events = translate(
        graph,
        run_record(
            stages=[
                stage_record(parameters={"day": "2026-11-01", "limit": 5, "regions": ["eu", "us"]})
            ]
        ),
    )
    assert events[1]["run"]["facets"]["executionParameters"]["parameters"] == [
        {"key": "day", "value": "2026-11-01"},
        {"key": "limit", "value": "5"},
        {"key": "regions", "value": '["eu","us"]'},
    ]


def test_no_credential_reaches_the_parameters_nor_the_error(graph: Graph) -> None:
    """attack F, F6: a secret-named parameter's value is ***, a credential the location rule
    knows is masked in any value and in the error's message and stack trace."""
    dsn = "postgresql://etl:PW3@db.internal/sales"
    record = run_record(
        status="failed",
        stages=[
            stage_record(
                status="failed",
                parameters={
                    "db_password": "PW1",
                    "apiKey": "PW2",
                    "dsn": dsn,
                    "odbc": "Driver={PG};Server=db; Pwd = two PW4;",
                    "nested": {"client_secret": "PW5", "day": "2026-11-01"},
                    "day": "2026-11-01",
                },
                error={
                    "message": f"OperationalError: connection to {dsn} failed",
                    "stackTrace": "  create_engine('oracle://scott/PW6@db/svc', password=\"PW7\")",
                },
            )
        ],
    )
    events = translate(graph, record)
    sent = orjson.dumps(events).decode()
    assert not [f"PW{n}" for n in range(1, 8) if f"PW{n}" in sent]
    assert events[1]["run"]["facets"]["executionParameters"]["parameters"] == [
        {"key": "db_password", "value": "***"},
        {"key": "apiKey", "value": "***"},
        {"key": "dsn", "value": "postgresql://***@db.internal/sales"},
        {"key": "odbc", "value": "Driver={PG};Server=db; Pwd = ***;"},
        {"key": "nested", "value": '{"client_secret":"***","day":"2026-11-01"}'},
        {"key": "day", "value": "2026-11-01"},
    ]
    error = events[-1]["run"]["facets"]["errorMessage"]
    assert error["message"] == (
        "OperationalError: connection to postgresql://***@db.internal/sales failed"
    )
    assert error["stackTrace"] == "  create_engine('oracle://***@db/svc', password=***)"
    assert translate(graph, record) == events  # same trail, same events


def test_runs_of_deleted_pipelines_are_still_exported(graph: Graph) -> None:
    events = translate(graph, run_record(pipeline="deleted-one", stages=[stage_record("s")]))
    assert [e["job"]["name"] for e in events] == [
        "deleted-one",
        "deleted-one.s",
        "deleted-one.s",
        "deleted-one",
    ]
    assert "documentation" not in events[0]["job"]["facets"]


def test_every_event_and_facet_carries_our_producer(graph: Graph) -> None:
    def producers(obj: Any) -> list[str]:
        if isinstance(obj, dict):
            found = [v for k, v in obj.items() if k in ("producer", "_producer")]
            return found + [p for v in obj.values() for p in producers(v)]
        if isinstance(obj, list):
            return [p for v in obj for p in producers(v)]
        return []

    events = translate(graph, run_record(status="failed", error={"message": "x"}))
    found = producers(events)
    assert len(found) > 10 and set(found) == {facets.PRODUCER}
    assert "openlineage-export" in facets.PRODUCER and __version__ in facets.PRODUCER


def test_translation_is_deterministic_byte_for_byte(graph: Graph) -> None:
    record = run_record(
        "run-x", status="failed", stages=[stage_record(status="failed", error={"message": "m"})]
    )
    first = b"".join(encode(e) for e in translate(graph, record))
    second = b"".join(encode(e) for e in translate(graph, record))
    assert first == second


@pytest.mark.parametrize("server", ["generic", "datahub", "data-rentgen"])
def test_each_event_is_written_as_orjson_writes_it_as_a_dict_and_its_facts_are_its_own(
    graph: Graph, server: str
) -> None:
    """Events are built straight as bytes (translate/encoded.py): each must be exactly the
    compact JSON of the event it decodes to, control characters escaped, and the facts the
    engine and the ledger read of it must be what it says."""
    record = run_record(
        "run-\x7fx",
        status="failed",
        trigger="push\u009b",
        parameters={"big": 2**70, "text": "a\x1bb"},
        stages=[
            stage_record(status="failed", error={"message": "m\u009d"}, parameters={"n": 1}),
            stage_record("load", status="succeeded", attempt=2),
        ],
    )
    config = TranslationConfig(namespace="test-ws", server=server)
    translated = translator_for(config)(graph, config).translate(parse_run(record))
    assert len(translated) == len(translated.facts) == 6
    for body, told in zip(translated.bodies, translated.facts, strict=True):
        event = orjson.loads(body)
        assert body == encode(event)
        assert told == facts(event)
        assert b"\x7f" not in body and "\u009b".encode() not in body
    assert translated.events == [orjson.loads(b) for b in translated.bodies]


# -- one run of many stages: work linear in them (issue 43, finding 8) ---------------------------


class _CountedId(str):
    """A stage or pipeline id that counts each time it is compared for equality."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _CountedId.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


@pytest.mark.parametrize("server", ["generic", "datahub", "data-rentgen"])
def test_one_run_of_many_stages_looks_each_stage_up_once_not_by_a_scan(server: str) -> None:
    """Each stage of a run finds its declaration in the graph (its description, its source)
    by an index: the ids the graph declares are compared a few times per stage, never once per
    stage declared (a run of 214,000 stages was 6 to 15 minutes of CPU)."""
    count = 3000
    declared = tuple(
        Stage(_CountedId(f"s{n}"), description=f"stage {n}", source=f"s{n}.py")
        for n in range(count)
    )
    graph = Graph("ws", (Pipeline(_CountedId("p"), stages=declared),))
    failed = {"status": "failed", "endedAt": "2026-11-02T02:00:01Z", "error": {"message": "x"}}
    record = run_record(
        pipeline="p",
        status="failed",
        stages=[stage_record(f"s{n}", **(failed if n % 2 else {})) for n in range(count)],
    )
    config = TranslationConfig(
        namespace="ns", source_repository_url="https://git.example.com/r", server=server
    )
    translator = translator_for(config)(graph, config)
    _CountedId.compared = 0
    run = translator.translate(parse_run(record))
    assert len(run) == 2 + 2 * count
    assert _CountedId.compared <= 4 * count, _CountedId.compared
