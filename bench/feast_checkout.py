"""This checkout's Feast, as ``scripts/feast.sh`` starts it: where it lives, the key its
consumer takes, its process. Shared by the bench (part 9) and the end-to-end tests
(``tests/e2e/feast_api.py``)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def feast_home() -> Path:
    """Where scripts/feast.sh keeps this checkout's Feast (its FEAST_HOME)."""
    return Path(os.environ.get("FEAST_HOME") or REPO / ".cache" / "feast")


def feast_key() -> str | None:
    """The key Feast's consumer requires: FEAST_API_KEY, else the one scripts/feast.sh made
    (None: neither)."""
    given = os.environ.get("FEAST_API_KEY")
    if given:
        return given
    try:
        return (feast_home() / "api.key").read_text().strip()
    except OSError:
        return None


def feast_pid() -> int | None:
    """The pid scripts/feast.sh wrote for the Feast it started (None: none, or unreadable)."""
    try:
        return int((feast_home() / "feast.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
