"""Feast's mode (translate/feast.py): the events every server gets, chosen by openlineage.server.

What the real Feast makes of an export is in tests/e2e/test_feast.py (this file is named apart
from it: pytest imports test modules by their base name).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from helpers import DEMO

from openlineage_export.deliver.registry import CATALOGUE
from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.opening import open_workspace
from openlineage_export.translate import feast, modes
from openlineage_export.translate.events import Translator

MODE = {"OPENLINEAGE_SERVER": "feast"}


def dry_run(root: Path, **environ: str) -> bytes:
    out = io.BytesIO()
    report = run_export(ExportRequest(workspace=root, dry_run=True, output=out, environ=environ))
    assert report.exit_code == 0
    return out.getvalue()


def test_the_mode_is_a_choice_of_the_setting() -> None:
    row = CATALOGUE.get("openlineage.server")
    assert row is not None and row.choices is not None
    assert feast.SERVER in row.choices
    assert feast.DESCRIPTION in row.description


def test_its_events_are_every_servers_byte_for_byte() -> None:
    assert modes.MODES[feast.SERVER].translator is Translator
    shaped = dry_run(DEMO, **MODE)
    assert shaped == dry_run(DEMO)
    assert shaped.count(b"\n") == 236


@pytest.mark.parametrize("transport", ["http", "kafka", "file"])
def test_the_mode_holds_whatever_the_transport(transport: str) -> None:
    opened = open_workspace(
        DEMO, None, {**MODE, "OPENLINEAGE_TRANSPORT": transport}, lambda bad: None
    )
    assert opened.translation.server == feast.SERVER


def test_no_endpoint_picks_it() -> None:
    # Feast's endpoint is the one every server has (/api/v1/lineage): it is told apart by
    # asking, never by its address.
    assert not modes.MODES[feast.SERVER].recognises("http://127.0.0.1:56580/api/v1/lineage")
    opened = open_workspace(
        DEMO, None, {"OPENLINEAGE_URL": "http://127.0.0.1:56580"}, lambda bad: None
    )
    assert opened.translation.server == modes.GENERIC.name
