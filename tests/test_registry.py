"""The registry of destination kinds: one row a kind, and everything else follows from it."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import WorkspaceMaker

from openlineage_export.deliver.destination import Opening
from openlineage_export.deliver.file import FileDestination
from openlineage_export.deliver.http.destination import HttpDestination
from openlineage_export.deliver.kafka.destination import KafkaDestination
from openlineage_export.deliver.registry import CATALOGUE, KINDS, open_destination
from openlineage_export.host.secret_files import FileStore
from openlineage_export.host.settings import describe


def opening(tmp_path: Path, **values: object) -> Opening:
    return Opening(
        CATALOGUE.settings(values, base=tmp_path), FileStore(tmp_path / "secrets"), {}, tmp_path
    )


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ({"openlineage.url": "http://127.0.0.1:5000"}, HttpDestination),
        (
            {
                "openlineage.transport": "kafka",
                "openlineage.kafka.bootstrapServers": "127.0.0.1:1",
                "openlineage.kafka.topic": "t",
            },
            KafkaDestination,
        ),
        (
            {"openlineage.transport": "file", "openlineage.file.path": "out/events.jsonl"},
            FileDestination,
        ),
    ],
)
def test_the_transport_setting_picks_the_kinds_destination(
    tmp_path: Path, values: dict[str, object], kind: type
) -> None:
    destination = open_destination(opening(tmp_path, **values))
    try:
        assert isinstance(destination, kind)
        assert destination.name and destination.concurrency >= 1
    finally:
        if isinstance(destination, KafkaDestination):
            destination.close_now()


def test_every_kind_is_one_row_whose_settings_the_cli_lists(ws: WorkspaceMaker) -> None:
    rows = describe(CATALOGUE, ws.root)
    groups = {row["group"] for row in rows}
    for kind in KINDS.values():
        assert kind.settings.title in groups
        assert {row.key for row in kind.settings.rows()} <= {row["key"] for row in rows}
    transport = next(row for row in rows if row["key"] == "openlineage.transport")
    assert transport["choices"] == tuple(KINDS)
    assert all(kind.description in str(transport["description"]) for kind in KINDS.values())
