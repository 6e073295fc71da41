"""Lookup caches (PARTIAL and FULL) with fake clocks: hits, misses, both TTLs, size bound, missing keys, reloads."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from kindling.connectors.lookup_cache import FullCache, PartialCache, PeriodicReload, TimedReload, cache_from_options
from kindling.options import OptionError


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Table:
    """A dimension table behind a batched lookup function; counts the calls."""

    def __init__(self, rows: dict) -> None:
        self.rows = dict(rows)
        self.calls: list[list] = []

    def lookup(self, keys):
        self.calls.append(list(keys))
        return {k: [self.rows[k]] for k in keys if k in self.rows}


def test_partial_cache_needs_a_bound():
    with pytest.raises(OptionError, match="The cache will not have evictions"):
        PartialCache(Table({}).lookup)


def test_hits_misses_and_one_lookup_per_batch_of_keys():
    table = Table({1: "a", 2: "b", 3: "c"})
    cache = PartialCache(table.lookup, max_rows=10)
    assert cache.get_all([1, 2, 1, 9]) == {1: ["a"], 2: ["b"], 9: []}
    assert table.calls == [[1, 2, 9]]
    assert (cache.metrics.hits, cache.metrics.misses) == (0, 3)
    assert cache.get_all([1, 2, 9]) == {1: ["a"], 2: ["b"], 9: []}
    assert len(table.calls) == 1 and cache.metrics.hits == 3 and cache.size == 3


def test_missing_keys_not_cached_without_cache_missing_key():
    table = Table({1: "a"})
    cache = PartialCache(table.lookup, max_rows=10, cache_missing_key=False)
    assert cache.get(9) == [] and cache.get(9) == []
    assert table.calls == [[9], [9]]
    table.rows[9] = "late"
    assert cache.get(9) == ["late"]


def test_expire_after_write_and_after_access():
    clock = Clock()
    table = Table({1: "a"})
    cache = PartialCache(table.lookup, expire_after_write=timedelta(seconds=10), clock=clock)
    cache.get(1)
    clock.now = 9
    table.rows[1] = "a2"
    assert cache.get(1) == ["a"]  # still fresh although read at 9 s
    clock.now = 10
    assert cache.get(1) == ["a2"]  # written 10 s ago: reloaded
    assert len(table.calls) == 2

    clock2 = Clock()
    table2 = Table({1: "x"})
    accessed = PartialCache(table2.lookup, expire_after_access=timedelta(seconds=5), clock=clock2)
    accessed.get(1)
    for moment in (4, 8, 12):  # each read within 5 s of the last keeps it
        clock2.now = moment
        assert accessed.get(1) == ["x"]
    assert len(table2.calls) == 1
    clock2.now = 17.5
    accessed.get(1)
    assert len(table2.calls) == 2


def test_max_rows_evicts_least_recently_used():
    table = Table({k: str(k) for k in range(10)})
    cache = PartialCache(table.lookup, max_rows=2)
    cache.get(1)
    cache.get(2)
    cache.get(1)  # 2 is now the least recently used
    cache.get(3)
    assert cache.size == 2
    cache.get(1)
    assert table.calls[-1] == [3]
    cache.get(2)
    assert table.calls[-1] == [2]


def test_lookup_retries_then_fails():
    attempts = []

    def flaky(keys):
        attempts.append(keys)
        if len(attempts) < 3:
            raise ConnectionError("database restarting")
        return {k: ["ok"] for k in keys}

    slept = []
    cache = PartialCache(flaky, max_rows=5, max_retries=3, sleep=slept.append)
    assert cache.get(1) == ["ok"] and slept == [1, 2] and cache.metrics.load_failures == 2
    failing = PartialCache(lambda keys: (_ for _ in ()).throw(ConnectionError("down")), max_rows=5, max_retries=1,
                           sleep=lambda s: None)
    with pytest.raises(ConnectionError):
        failing.get(1)


def test_full_cache_serves_from_memory_and_reloads_periodically():
    clock = Clock()
    rows = {1: "a", 2: "b"}
    scans = []

    def scan():
        scans.append(clock.now)
        return list(rows.items())

    cache = FullCache(scan, PeriodicReload(timedelta(seconds=30)), clock=clock)
    cache.open(background=False)
    assert cache.get_all([1, 3]) == {1: ["a"], 3: []}
    assert scans == [0.0] and cache.metrics.misses == 0 and cache.size == 2
    rows[3] = "c"
    clock.now = 29
    assert not cache.reload_due()
    clock.now = 30
    assert cache.reload_due()
    cache.load()
    assert cache.get(3) == ["c"] and scans == [0.0, 30]


def test_full_cache_failed_reload_fails_the_next_lookup():
    calls = []

    def scan():
        calls.append(1)
        if len(calls) > 1:
            raise ConnectionError("gone")
        return [(1, "a")]

    cache = FullCache(scan, PeriodicReload(timedelta(seconds=1)))
    cache.open(background=False)
    cache.load()
    with pytest.raises(RuntimeError, match="failed to reload: gone"):
        cache.get(1)


def test_fixed_rate_and_timed_reload_schedules():
    wall = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
    assert PeriodicReload(timedelta(seconds=10)).next_after(100, 104, wall) == 114
    assert PeriodicReload(timedelta(seconds=10), fixed_rate=True).next_after(100, 104, wall) == 110
    timed = TimedReload.parse("10:15Z")
    assert timed.next_after(0, 0, wall) == 75 * 60
    assert TimedReload.parse("08:00Z", days=2).next_after(0, 0, wall) == (23 + 24) * 3600
    assert TimedReload.parse("10:15+01:00").next_after(0, 0, wall) == 15 * 60
    with pytest.raises(OptionError, match="iso-time"):
        TimedReload.parse("quarter past ten")


def test_cache_from_options():
    table = Table({})
    assert cache_from_options({"lookup.cache": "NONE"}, table.lookup) is None
    partial = cache_from_options({"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": 5}, table.lookup)
    assert isinstance(partial, PartialCache) and partial.max_rows == 5
    legacy = cache_from_options({"lookup.cache.max-rows": 7, "lookup.cache.ttl": timedelta(seconds=10)}, table.lookup)
    assert isinstance(legacy, PartialCache) and legacy.write_ttl == 10
    assert cache_from_options({"lookup.cache.max-rows": -1, "lookup.cache.ttl": timedelta(seconds=10)}, table.lookup) is None
    with pytest.raises(OptionError, match="periodic-reload.interval' is required"):
        cache_from_options({"lookup.cache": "FULL"}, table.lookup, scan=lambda: [])
    full = cache_from_options({"lookup.cache": "FULL", "lookup.full-cache.periodic-reload.interval": timedelta(minutes=1)},
                              table.lookup, scan=lambda: [])
    assert isinstance(full, FullCache)
