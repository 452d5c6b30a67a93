"""What a piece of work leaves behind in Python's memory (for the bounds on caches and buffers:
the trail decides how long each entry is, so a test counts the bytes kept, not the entries)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any


def kept_after(work: Callable[[], Any]) -> int:
    """The bytes Python holds after ``work`` (its result dropped) that it did not before."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        work()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
