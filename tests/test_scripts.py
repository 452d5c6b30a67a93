"""The scripts a user runs first: each tells its usage with --help (and does nothing else), and
scripts/validate.py checks events against the official OpenLineage schemas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DEMO, ROOT, SHARED


@pytest.mark.parametrize("script", ["demo.sh", "setup.sh", "test.sh", "browser.sh", "kafka.sh",
                                    "marquez.sh"])
def test_every_script_prints_its_usage_with_help(script: str, tmp_path: Path) -> None:
    result = subprocess.run(["bash", str(ROOT / "scripts" / script), "--help"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert "Usage: scripts/" in result.stdout
    assert list(tmp_path.iterdir()) == [] or script == "marquez.sh"  # no file named --help
    if script in ("demo.sh", "setup.sh", "test.sh"):
        assert "Environment" in result.stdout and "PYTHON" in result.stdout


def test_validate_py_checks_events_against_the_schemas(tmp_path: Path) -> None:
    spec = SHARED / "openlineage-spec"
    if not spec.is_dir():
        pytest.skip(f"{spec} is absent: a local copy of the schemas lives in ../shared")
    good = tmp_path / "events.jsonl"
    subprocess.run([sys.executable, "-m", "openlineage_export", "export", "--dry-run", "-q",
                    "-w", str(DEMO), "-o", str(good)], check=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text().splitlines()[0].replace('"eventType":"START"',
                                                            '"eventType":"BEGIN"') + "\n")
    command = [sys.executable, str(ROOT / "scripts" / "validate.py"), "--spec", str(spec)]
    ok = subprocess.run([*command, str(good)], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.splitlines()[-1] == "236 valid, 0 invalid", ok.stdout
    wrong = subprocess.run([*command, str(bad)], capture_output=True, text=True)
    assert wrong.returncode == 1 and "'BEGIN' is not one of" in wrong.stdout, wrong.stdout


def test_demo_sh_says_what_it_does_on_first_run(tmp_path: Path) -> None:
    # A checkout with no .venv yet; the Python that would make it fails at once, so the test
    # sees what a newcomer sees before the (long) setup, without installing anything.
    (tmp_path / "scripts").mkdir()
    for script in ("demo.sh", "setup.sh"):
        (tmp_path / "scripts" / script).write_bytes((ROOT / "scripts" / script).read_bytes())
    result = subprocess.run(["bash", str(tmp_path / "scripts" / "demo.sh")], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                 "PYTHON": "false"})
    assert result.returncode != 0
    assert result.stderr.splitlines()[0].startswith(
        "demo.sh: first run: creating .venv and installing openlineage-export"), result.stderr
