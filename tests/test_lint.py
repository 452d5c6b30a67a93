"""The linters the project keeps are kept in CI: ``ruff check`` and ``ruff format --check``
over the tree, and ``mypy`` in strict mode over ``src``, ``hubwriter`` and ``demo`` (pyproject.toml
configures them). A finding fails the run and the test prints it whole. And two rules no linter
knows: no module edits ``sys.path``, and the benchmark imports nothing of the tests' support."""

from __future__ import annotations

import re
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


def _sources() -> list[Path]:
    """Every Python file of the repository (git's view: tracked, or untracked and not ignored)."""
    listed = run("git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py")
    return [ROOT / name for name in listed.stdout.splitlines() if (ROOT / name).exists()]


PATH_EDIT = re.compile(r"\bsys\.path\s*(\.\s*(insert|append|extend)\s*\(|\[|\+?=)")
"""An edit of the import path: an insert, an append, an item or the whole list set."""


def test_no_module_changes_the_import_path() -> None:
    """Tests import their support through pytest's pythonpath, scripts and the benchmark the
    installed package or the repository's packages with ``python -m``: none edits sys.path."""
    edits = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _sources()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if PATH_EDIT.search(line)
    ]
    assert not edits, f"sys.path edited at {edits}"


def test_the_benchmark_imports_nothing_of_the_tests_support() -> None:
    """The trails the benchmark measures come from hubwriter, its reference from bench/."""
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _sources()
        if path.relative_to(ROOT).parts[0] == "bench"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "tests.support" in line or "from support" in line or "from helpers" in line
    ]
    assert not found, f"bench/ imports the tests' support at {found}"
