"""translate/bounded.py: a cache bounded by count and by size (attack E, E2 and E3)."""

from __future__ import annotations

from openlineage_export.translate.bounded import BoundedCache


def test_the_least_recently_used_entry_goes_first_past_the_count() -> None:
    cache: BoundedCache[str, int] = BoundedCache(2, 100)
    cache.put("a", 1, 1)
    cache.put("b", 2, 1)
    assert cache.get("a") == 1
    cache.put("c", 3, 1)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2


def test_entries_go_until_their_sizes_fit() -> None:
    cache: BoundedCache[str, int] = BoundedCache(100, 10)
    for i in range(5):
        cache.put(str(i), i, 4)
    assert len(cache) == 2 and cache.size == 8
    assert cache.get("4") == 4 and cache.get("0") is None


def test_an_entry_larger_than_the_bound_is_given_back_but_never_kept() -> None:
    cache: BoundedCache[str, int] = BoundedCache(100, 10)
    cache.put("small", 1, 3)
    assert cache.put("large", 2, 11) == 2
    assert cache.get("large") is None and cache.get("small") == 1 and cache.size == 3


def test_putting_a_key_again_counts_it_once() -> None:
    cache: BoundedCache[str, int] = BoundedCache(100, 10)
    cache.put("a", 1, 6)
    cache.put("a", 2, 6)
    assert cache.size == 6 and cache.get("a") == 2
