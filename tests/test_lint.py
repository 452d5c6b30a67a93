"""The linters the project keeps are kept in CI: ``ruff check`` and ``ruff format --check``
over the tree, and ``mypy`` in strict mode over ``src`` (pyproject.toml configures them). A finding fails the run and
the test prints it whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    done = run(str(BIN / "ruff"), "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_would_change_nothing() -> None:
    done = run(str(BIN / "ruff"), "format", "--check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_finds_nothing() -> None:
    done = run(str(BIN / "mypy"), "--cache-dir=/dev/null")
    assert done.returncode == 0, done.stdout + done.stderr
