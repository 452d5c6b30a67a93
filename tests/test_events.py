"""translate/events.py's bounds: what one trail line may make us build (attacker B's F02)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers import GRAPH, WorkspaceMaker, run_record, stage_record

from openlineage_export.export import ExportRequest, run_export
from openlineage_export.hub.model import BadEntry, BadRecord, Graph
from openlineage_export.hub.records import parse_run
from openlineage_export.translate import events as events_module
from openlineage_export.translate.events import TranslationConfig, Translator

LONG_NAME = "w" * 1000
"""A workspace name as long as graph.json lets it be: every relative path's namespace repeats
it (``workspace://www...``)."""


def reading(trace_id: str, reads: list[dict[str, Any]]) -> dict[str, Any]:
    return run_record(trace_id, stages=[stage_record("extract", reads=reads)])


def test_a_dataset_read_alike_twice_by_one_stage_is_one_input() -> None:
    """Before: 100,000 reads of ``{"dataset":"a"}`` (a 1.8 MB line) became 100,000 inputs in
    each of two events: 210 MB of events, 728 MB of memory."""
    reads = [{"dataset": "a"}, {"dataset": "b"}, {"dataset": "a"}]
    reads += [{"dataset": "a", "digest": "sha256:1"}] * 2 + [{"dataset": "a"}] * 5000
    translator = Translator(Graph(LONG_NAME), TranslationConfig(namespace="ns"))
    run = translator.translate(parse_run(reading("r", reads)))
    stage_events = [e for e in run.events if e["job"]["name"] == "daily-sales.extract"]
    assert len(stage_events) == 2
    for event in stage_events:
        inputs = [(d["name"], "version" in d["facets"]) for d in event["inputs"]]
        assert inputs == [("a", False), ("b", False), ("a", True)]
    assert [n for _, n in run.facts[1].inputs] == ["a", "b", "a"]
    assert sum(map(len, run.bodies)) < 20_000


def test_events_over_the_bound_are_refused_before_they_are_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Distinct reads are not alike: the run's events would grow without end (a 32 MiB line of
    them: ~12 GB). The translator counts each dataset as it makes it and stops at the bound,
    having made no more than fit in it."""
    monkeypatch.setattr(events_module, "MAX_RUN_BYTES", 1024 * 1024)
    translator = Translator(Graph(LONG_NAME), TranslationConfig(namespace="ns"))
    named = []
    name = translator.dataset_name

    def counted(location: str) -> tuple[str, str]:
        named.append(location)
        return name(location)

    monkeypatch.setattr(translator, "dataset_name", counted)
    reads = [{"dataset": f"data/{i}.csv"} for i in range(20_000)]
    with pytest.raises(BadRecord) as refused:
        translator.translate(parse_run(reading("big", reads)))
    assert str(refused.value) == (
        "run 'big': its events would take more than 1 MiB (at the reads of stage 'extract'); "
        "not exported"
    )
    # Each dataset takes over 1 KB in two events: about 500 fit in 1 MiB.
    assert 400 < len(named) < 600


def test_a_run_too_large_is_one_bad_entry_and_the_runs_around_it_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(events_module, "MAX_RUN_BYTES", 1024 * 1024)
    ws = WorkspaceMaker(tmp_path / "ws")
    ws.graph({**GRAPH, "workspace": {"name": LONG_NAME}})
    big = [{"dataset": f"data/{i}.csv"} for i in range(5_000)]
    ws.segment(
        "000001.jsonl",
        [
            reading("before", [{"dataset": "data/x.csv"}]),
            reading("big", big),
            reading("after", [{"dataset": "data/y.csv"}]),
        ],
    )
    out = io.BytesIO()
    bad: list[BadEntry] = []
    report = run_export(ExportRequest(ws.root, dry_run=True, output=out, on_bad_entry=bad.append))
    assert [str(b) for b in bad] == [
        ".workspace/lineage/audit/000001.jsonl:2: run 'big': its events would take more than "
        "1 MiB (at the reads of stage 'extract'); not exported"
    ]
    assert report.exit_code == 1 and report.runs_sent == 2
    tags = {
        tag["value"]
        for line in out.getvalue().splitlines()
        for tag in orjson.loads(line)["run"]["facets"].get("tags", {}).get("tags", [])
        if tag["key"] == "traceId"
    }
    assert tags == {"before", "after"}


def test_what_a_refused_run_held_is_what_the_bound_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound is of bytes made, not only of bytes counted: each dataset's JSON is kept at its
    size (orjson leaves a small result in a buffer of ~16 KiB: 500 of them held 8 MB)."""
    import tracemalloc

    monkeypatch.setattr(events_module, "MAX_RUN_BYTES", 1024 * 1024)
    translator = Translator(Graph(LONG_NAME), TranslationConfig(namespace="ns"))
    run = parse_run(reading("big", [{"dataset": f"data/{i}.csv"} for i in range(2_000)]))
    tracemalloc.start()
    try:
        with pytest.raises(BadRecord):
            translator.translate(run)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * 1024 * 1024


def distinct_stages(runs: int, stages: int, stage_id_length: int = 0) -> list[Any]:
    """Runs of one pipeline whose stage ids are never the same twice (attack E, E3)."""
    pad = "s" * stage_id_length
    return [
        parse_run(
            run_record(f"r{i}", stages=[stage_record(f"{pad}{i}-{j}") for j in range(stages)])
        )
        for i in range(runs)
    ]


def test_the_jobs_a_translator_keeps_are_bounded_by_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before: one job (name and JSON, ~4.4 KB) kept for every distinct stage of the export,
    never dropped: 200,000 distinct stage ids took 945 MB. Now the least recently used go."""
    monkeypatch.setattr(events_module, "JOBS_KEPT", 50)
    translator = Translator(Graph("w"), TranslationConfig(namespace="ns"))
    for run in distinct_stages(40, 10):
        translator.translate(run)
    assert len(translator._jobs) == 50


def test_the_jobs_a_translator_keeps_are_bounded_by_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A trail decides how long a stage id is (up to a line's 32 MiB): the jobs kept are
    bounded by what they take together too, and one larger than the bound is never kept."""
    monkeypatch.setattr(events_module, "JOBS_KEPT_SIZE", 1024 * 1024)
    translator = Translator(Graph("w"), TranslationConfig(namespace="ns"))
    for run in distinct_stages(40, 3, stage_id_length=20_000):
        translator.translate(run)
    assert 0 < len(translator._jobs) < 40
    assert translator._jobs.size <= 1024 * 1024
    huge = distinct_stages(1, 1, stage_id_length=2 * 1024 * 1024)[0]
    kept = len(translator._jobs)
    translator.translate(huge)
    assert len(translator._jobs) == kept
    assert translator._jobs.get(("daily-sales", huge.stages[0].stage)) is None


def test_a_job_made_again_is_the_job_kept() -> None:
    """Dropping a job changes nothing but the time to make it again: the events are alike."""
    runs = distinct_stages(3, 2)
    kept = Translator(Graph("w"), TranslationConfig(namespace="ns"))
    first = [kept.translate(run).bodies for run in runs + runs]
    remade = Translator(Graph("w"), TranslationConfig(namespace="ns"))
    remade._jobs.max_entries = 0
    assert [remade.translate(run).bodies for run in runs + runs] == first
