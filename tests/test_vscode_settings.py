"""The VS Code extension's settings are the tool's: one source of truth (the catalogue).

editor/vscode/package.json's ``contributes.configuration`` is written by
scripts/vscode_settings.py from the settings declarations; these tests fail when the two drift
apart (a setting added, a default or a description changed, without regenerating it).
"""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import ROOT

from openlineage_export.deliver.registry import CATALOGUE

PACKAGE_JSON = ROOT / "editor" / "vscode" / "package.json"


def test_package_json_holds_the_settings_the_generator_writes() -> None:
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "vscode_settings.py"),
                            "--check"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr


def test_every_setting_with_its_default_choices_and_bounds() -> None:
    configuration = json.loads(PACKAGE_JSON.read_text())["contributes"]["configuration"]
    assert configuration["title"] == "OpenLineage Export"
    properties = configuration["properties"]
    assert list(properties) == [row.key for row in CATALOGUE]
    for row in CATALOGUE:
        prop = properties[row.key]
        assert prop["default"] == ("" if row.default is None else row.default), row.key
        assert prop["description"].startswith(row.description), row.key
        assert prop.get("enum") == (list(row.choices) if row.choices else None), row.key
        assert prop.get("minimum") == row.minimum and prop.get("maximum") == row.maximum
        if row.env:
            assert row.env in prop["description"]
