"""A cache bounded by the number of its entries and by their size together.

A trail names its pipelines, stages and datasets over and over, so translation caches what it
made of each; but the trail also decides how many distinct ones there are and how long each
is (up to a line's 32 MiB), so a cache bounded only by its count holds what the trail says.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Generic, ParamSpec, TypeVar

_Key = TypeVar("_Key")
_Value = TypeVar("_Value")
_Args = ParamSpec("_Args")


class BoundedCache(Generic[_Key, _Value]):
    """Least recently used entries go first, once there are more than ``max_entries`` of them
    or their sizes (as the caller counts them) add up to more than ``max_size``; an entry
    larger than ``max_size`` alone is never kept."""

    __slots__ = ("_entries", "max_entries", "max_size", "size")

    def __init__(self, max_entries: int, max_size: int) -> None:
        self._entries: OrderedDict[_Key, tuple[_Value, int]] = OrderedDict()
        self.max_entries = max_entries
        self.max_size = max_size
        self.size = 0
        """The sizes of the entries kept, added up."""

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: _Key) -> _Value | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        kept = self._entries.get(key)
        if kept is None:
            return None
        self._entries.move_to_end(key)
        return kept[0]

    def put(self, key: _Key, value: _Value, size: int) -> _Value:
        """Keeps ``value`` for ``key`` when it fits, dropping the least recently used entries
        it needs room from; returns ``value`` either way."""
        if size > self.max_size:
            return value
        old = self._entries.pop(key, None)
        if old is not None:
            self.size -= old[1]
        self._entries[key] = (value, size)
        self.size += size
        while len(self._entries) > self.max_entries or self.size > self.max_size:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.size -= dropped
        return value


CACHED_KEY_LIMIT = 1024
"""The longest key (in characters: a dataset's location, an engine's name and version) a
count-bounded cache of translation keeps an entry for; a longer one is worked out each time.
Such a cache of 4,096 entries then holds a few MiB, however long the trail makes its keys."""


def cached_when_short(
    work: Callable[_Args, _Value], size: Callable[_Args, int], max_entries: int
) -> Callable[_Args, _Value]:
    """``work``, its results cached (the ``max_entries`` least recently used) for arguments
    whose ``size`` is at most :data:`CACHED_KEY_LIMIT`; longer ones worked out each time."""
    cached: Callable[..., _Value] = lru_cache(maxsize=max_entries)(work)

    def call(*args: _Args.args, **kwargs: _Args.kwargs) -> _Value:
        if size(*args, **kwargs) > CACHED_KEY_LIMIT:
            return work(*args, **kwargs)
        return cached(*args, **kwargs)

    call.__doc__ = work.__doc__
    return call
