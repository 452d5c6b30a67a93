"""The scripts a user runs first: each tells its usage with --help (and does nothing else), and
scripts/validate.py checks events against the official OpenLineage schemas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fakeserver import refused_port
from helpers import DEMO, ROOT, SHARED


@pytest.mark.parametrize("script", ["demo.sh", "setup.sh", "test.sh", "browser.sh", "kafka.sh",
                                    "marquez.sh", "datahub.sh", "vscode.sh",
                                    "services.sh"])
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
    # The one line, by file, line and where in the event, with jsonschema's reason (its words).
    problem, total = wrong.stdout.splitlines()
    assert wrong.returncode == 1 and total == "0 valid, 1 invalid", wrong.stdout
    assert problem.startswith(f"{bad}:1: event: ") and problem[len(f"{bad}:1: event: "):].strip()


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


def validate_offline(tmp_path: Path, *args: str, script: Path | None = None,
                     ) -> subprocess.CompletedProcess[str]:
    """scripts/validate.py with no way out: any request goes to a loopback port that refuses
    connections."""
    with refused_port() as port:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"),
               "https_proxy": f"http://127.0.0.1:{port}", "http_proxy": f"http://127.0.0.1:{port}"}
        return subprocess.run([sys.executable, str(script or ROOT / "scripts" / "validate.py"),
                               *args], capture_output=True, text=True, timeout=120, env=env)


def test_validate_py_offline_uses_the_shared_spec_copy() -> None:
    # No --spec: the copy in ../shared is found; nothing goes to the network (which fails).
    done = validate_offline(Path("/nonexistent"), str(ROOT / "tests" / "data" /
                                                      "demo-events.jsonl"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["236 valid, 0 invalid"], done.stdout


def test_validate_py_never_calls_an_event_invalid_for_a_schema_it_cannot_load(
        tmp_path: Path) -> None:
    # A copy of the script with no spec copy beside it: it would fetch, and the network fails.
    script = tmp_path / "checkout" / "scripts" / "validate.py"
    script.parent.mkdir(parents=True)
    script.write_bytes((ROOT / "scripts" / "validate.py").read_bytes())
    events = str(ROOT / "tests" / "data" / "demo-events.jsonl")
    for args in ([events], ["--spec", str(tmp_path), events]):
        done = validate_offline(tmp_path, *args, script=script)
        assert done.returncode == 2, done.stdout + done.stderr
        said = done.stdout.splitlines()
        assert len(said) == 2 and said[0].startswith("cannot load the schema "), done.stdout
        assert "point --spec DIR (or OPENLINEAGE_SPEC_DIR) at a copy" in said[0]
        assert said[1].startswith("0 valid, 0 invalid, 236 not checked whole"), done.stdout
