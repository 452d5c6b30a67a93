"""Our events against the field's own references: openlineage-python's classes and the spec.

1. Every event of the demo equals ``Serde.to_dict`` of the same event built with
   openlineage-python's classes (bench/ol_plain.py): same fields, same schema URLs.
2. Every event of the demo is valid against the official JSON schemas (ol-validate).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench.ol_plain import build_events
from helpers import DEMO, SHARED, cli_command
from openlineage.client.serde import Serde

from openlineage_export.hub.graph import read_graph
from openlineage_export.hub.trail import AuditTrail
from openlineage_export.translate.events import TranslationConfig, Translator


def _normalise(obj: Any) -> Any:
    """Serde keeps empty collections of optional fields we leave out; drop both sides' empties."""
    if isinstance(obj, dict):
        return {
            k: _normalise(v)
            for k, v in obj.items()
            if v not in ([], {}, None) or k in ("inputs", "outputs")
        }
    if isinstance(obj, list):
        return [_normalise(v) for v in obj]
    return obj


def demo_runs() -> tuple[Any, list[Any]]:
    graph = read_graph(DEMO / ".workspace/lineage/graph.json", "graph.json", lambda e: None)
    trail = AuditTrail(DEMO / ".workspace/lineage/audit")
    scan = trail.scan(lambda e: None)
    return graph, [run for run, _ in trail.runs(scan, scan.index.in_trail_order())]


def test_events_equal_openlineage_python_classes_serialised_by_serde() -> None:
    graph, runs = demo_runs()
    translator = Translator(graph, TranslationConfig(namespace=graph.workspace_name))
    compared = 0
    for run in runs:
        ours = translator.translate(run).events
        theirs = [Serde.to_dict(e) for e in build_events(run, graph, graph.workspace_name)]
        assert len(ours) == len(theirs)
        for mine, reference in zip(ours, theirs, strict=True):
            assert _normalise(mine) == _normalise(reference)
            compared += 1
    assert compared > 100


def test_demo_dry_run_is_valid_against_the_official_schemas(tmp_path: Path) -> None:
    validator = SHARED / "tools" / "ol-validate"
    if not validator.exists():
        pytest.skip(f"{validator} is absent: the official schemas live in ../shared (CI has it)")
    out = tmp_path / "events.jsonl"
    subprocess.run(
        cli_command(
            "export",
            "--dry-run",
            "--workspace",
            str(DEMO),
            "--output",
            str(out),
            "--quiet",
        ),
        check=True,
    )
    result = subprocess.run(
        [sys.executable, str(validator), str(out)], capture_output=True, text=True
    )
    lines = out.read_text().splitlines()
    assert result.returncode == 0, result.stdout[-3000:]
    assert result.stdout.strip().splitlines()[-1].startswith(f"{len(lines)} valid, 0 invalid")
