"""The demo's dry run, byte for byte, against the reviewed golden file.

Any change to what we emit shows up here as a diff to review. After an intended change:
``OLX_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`` and review ``git diff``.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import orjson
from helpers import DEMO

from openlineage_export.export import ExportRequest, run_export

GOLDEN = Path(__file__).parent / "data" / "demo-events.jsonl"


def test_demo_dry_run_matches_the_golden_file() -> None:
    out = io.BytesIO()
    report = run_export(ExportRequest(workspace=DEMO, dry_run=True, output=out))
    assert report.exit_code == 0
    if os.environ.get("OLX_UPDATE_GOLDEN") == "1":
        GOLDEN.write_bytes(out.getvalue())
    expected = GOLDEN.read_bytes().splitlines()
    actual = out.getvalue().splitlines()
    assert len(actual) == len(expected) == 236
    for number, (mine, golden) in enumerate(zip(actual, expected, strict=True), start=1):
        assert orjson.loads(mine) == orjson.loads(golden), f"event {number} differs"
    assert out.getvalue() == GOLDEN.read_bytes()
