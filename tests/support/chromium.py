"""Debian's Chromium, headless, driven by Playwright: where the browser tests open pages (the
HTML report, Marquez's web UI, VS Code in code-server)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


_PLAYWRIGHT: Any = None
"""Playwright, while a browser is open (started by the first, stopped by the last)."""
_OPEN = 0


def require(variable: str, why: str) -> None:
    """Fail where scripts/test.sh made the thing available (``variable`` is 1), else skip."""
    if os.environ.get(variable) == "1":
        pytest.fail(why)
    pytest.skip(why)


@contextmanager
def chromium(profile: Path, viewport: dict[str, int], **options: Any) -> Iterator[Any]:
    """A browser context with a fresh profile in ``profile``; fails or skips, saying why, where
    Chromium or Playwright is missing (``require``)."""
    if not CHROMIUM.exists():
        require(
            "OLX_REQUIRE_BROWSER",
            f"Chromium is not installed ({CHROMIUM}); scripts/browser.sh installs it",
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(
            "OLX_REQUIRE_BROWSER",
            "Playwright for Python is not installed (pip install -e '.[test]')",
        )
    global _PLAYWRIGHT, _OPEN
    if _PLAYWRIGHT is None:
        # One Playwright for the browsers open at once: a second sync_playwright() while one
        # is open (the editor's browser lives for the session) fails ("Sync API inside the
        # asyncio loop"), whichever module the random order puts after the editor's. Stopped
        # with the last browser: while it runs, asyncio.run() cannot.
        _PLAYWRIGHT = sync_playwright().start()
    _OPEN += 1
    try:
        context = _PLAYWRIGHT.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=FLAGS,
            viewport=viewport,
            **options,
        )
        try:
            yield context
        finally:
            context.close()
    finally:
        _OPEN -= 1
        if _OPEN == 0:
            _PLAYWRIGHT.stop()
            _PLAYWRIGHT = None
