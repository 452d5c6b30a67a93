"""docs/settings.md is the tool's settings: written by scripts/settings_doc.py from the
catalogue, as editor/vscode/package.json is (tests/test_vscode_settings.py); these tests fail
when the two drift apart (a setting added or changed without writing the page again)."""

from __future__ import annotations

import subprocess
import sys

from helpers import ROOT

from openlineage_export.deliver.registry import CATALOGUE

PAGE = ROOT / "docs" / "settings.md"


def test_the_page_is_what_the_generator_writes() -> None:
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "settings_doc.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stderr


def test_every_setting_has_its_row_with_its_environment_variable() -> None:
    text = PAGE.read_text()
    for row in CATALOGUE:
        line = next(
            (line for line in text.splitlines() if line.startswith(f"| `{row.key}` |")), None
        )
        assert line is not None, row.key
        if row.env:
            assert f"`{row.env}`" in line, row.key
    assert "| `openlineage.server` |" in text
