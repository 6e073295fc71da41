"""Lookup caches for lookup joins (FLIP-221): PARTIAL (size and TTL bounded) and FULL (whole table, reloaded).

A planner's lookup join asks a cache for the rows of a batch of keys; the cache answers what it
holds and fetches the rest in ONE call of the connector's ``lookup(keys)`` (a batch of distinct keys,
one database query), as Flink's ``LookupFunction`` with a cache does per key. One cache lives per
Python worker process (Spark reuses workers), which approximates Flink's cache per TaskManager.

* :class:`PartialCache` (``lookup.cache = PARTIAL``; Flink's ``DefaultLookupCache``):
  ``lookup.partial-cache.max-rows`` evicts the least recently used keys beyond the bound,
  ``expire-after-write`` drops an entry that long after it was loaded, ``expire-after-access``
  that long after it was last read, ``cache-missing-key`` keeps empty results too. At least one of
  the three bounds is required, as in newer Flink ("Missing ... The cache will not have evictions").
* :class:`FullCache` (``lookup.cache = FULL``; Flink's ``LookupFullCache``; a kindling extension for
  JDBC, whose Flink connector silently ignores FULL): the first lookup blocks until the whole table
  is loaded; every lookup is served from memory (a miss never queries the source); reloads run in a
  background thread and swap in the new map -- PERIODIC every interval (FIXED_DELAY from the end of
  the last load, FIXED_RATE from its start) or TIMED at a time of day every N days. A failed reload
  is stored and fails the next lookup.

Both count hits, misses, loads and the size, for the job's metrics. Clocks are injectable for tests.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from datetime import time as dt_time
from typing import Any, Callable, Hashable, Iterable, Mapping, Optional, Sequence, TypeVar

from kindling.options import ConfigOption, OptionError, bool_option, duration_option, enum_option, int_option, string_option

Rows = list[Any]
# The connector's batched lookup: distinct keys -> {key: rows}; keys without rows may be absent.
LookupFunction = Callable[[Sequence[Hashable]], Mapping[Hashable, Rows]]
# The connector's full scan for the FULL cache: every row's key and the row.
ScanFunction = Callable[[], Iterable[tuple[Hashable, Any]]]


T = TypeVar("T")


def with_retries(call: Callable[[], T], max_retries: int, sleep: Callable[[float], None], reset: Callable[[], None],
                 failed: Callable[[Exception, int], Exception], final: tuple[type[BaseException], ...] = ()) -> T:
    """``call()`` retried ``max_retries`` times after a failure, as Flink's lookup functions do: ``reset()`` (drop the
    connection), wait 1 s, 2 s, ... and call again; the last failure becomes ``failed(error, attempts)``. Errors of
    the ``final`` types are not retried."""
    attempts = max_retries + 1
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except final:
            raise
        except Exception as exc:
            reset()
            if attempt >= attempts:
                raise failed(exc, attempts) from None
            sleep(attempt)
    raise AssertionError("unreachable")


def keyed_rows(keys: list[tuple], rows: list[tuple], key_schema: Optional[Any],
               to_arrow: Callable[[list[tuple], Any], Any]) -> list[tuple[Hashable, tuple]]:
    """``(key, row)`` pairs of a lookup source's answer, each key's values passed through Arrow as ``key_schema``
    types them (so a probe key read from an Arrow batch finds it: a driver's ``Decimal`` in a BIGINT column becomes
    an int); a key is a bare value for one key column, a tuple for several."""
    if key_schema is not None and keys:
        keys = [tuple(k.values()) for k in to_arrow(keys, key_schema).to_pylist()]
    if keys and len(keys[0]) == 1:
        return [(key[0], row) for key, row in zip(keys, rows)]
    return [(tuple(key), row) for key, row in zip(keys, rows)]


def lookup_options(caches: Sequence[str] = ("NONE", "PARTIAL", "FULL")) -> list[ConfigOption[Any]]:
    """A lookup table's options with Flink's names and defaults (``LookupOptions``): the cache kinds a connector
    offers, the PARTIAL cache's bounds, ``lookup.max-retries``, and, when it offers FULL, kindling's FULL reloads."""
    options: list[ConfigOption[Any]] = [
        enum_option("lookup.cache", tuple(caches), "NONE", "The caching strategy for this lookup table."),
        int_option("lookup.partial-cache.max-rows", None, "The maximum number of rows to store in the cache."),
        duration_option("lookup.partial-cache.expire-after-write", None, "Duration to expire an entry after writing."),
        duration_option("lookup.partial-cache.expire-after-access", None, "Duration to expire an entry after access."),
        bool_option("lookup.partial-cache.cache-missing-key", True, "Whether to store an empty value into the cache "
                    "if the lookup key doesn't match any rows in the table."),
        int_option("lookup.max-retries", 3, "The max retry times if lookup database failed."),
    ]
    if "FULL" in caches:
        options += [
            enum_option("lookup.full-cache.reload-strategy", ("PERIODIC", "TIMED"), "PERIODIC",
                        "kindling extension: how the FULL cache reloads."),
            duration_option("lookup.full-cache.periodic-reload.interval", None, "kindling extension: reload interval (PERIODIC)."),
            enum_option("lookup.full-cache.periodic-reload.schedule-mode", ("FIXED_DELAY", "FIXED_RATE"), "FIXED_DELAY",
                        "kindling extension: interval measured from the end or the start of the previous reload."),
            string_option("lookup.full-cache.timed-reload.iso-time", None, "kindling extension: ISO-8601 time of day (TIMED)."),
            int_option("lookup.full-cache.timed-reload.interval-in-days", 1, "kindling extension: days between TIMED reloads."),
        ]
    return options


@dataclass
class CacheMetrics:
    """Flink's lookup cache metrics: hits, misses, loads (source calls), load failures; size is asked of the cache."""

    hits: int = 0
    misses: int = 0
    loads: int = 0
    load_failures: int = 0


class PartialCache:
    """A size- and time-bounded cache in front of a batched lookup function."""

    def __init__(self, lookup: LookupFunction, max_rows: Optional[int] = None,
                 expire_after_write: Optional[timedelta] = None, expire_after_access: Optional[timedelta] = None,
                 cache_missing_key: bool = True, max_retries: int = 3,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        if max_rows is None and expire_after_write is None and expire_after_access is None:
            raise OptionError(
                "Missing 'lookup.partial-cache.expire-after-access', 'lookup.partial-cache.expire-after-write' or "
                "'lookup.partial-cache.max-rows' in the options. The cache will not have evictions under this "
                "configuration and could lead to potential memory issues as the cache size may grow indefinitely."
            )
        if max_rows is not None and max_rows < 1:
            raise OptionError(f"option 'lookup.partial-cache.max-rows' must be at least 1, but is {max_rows}")
        self.lookup_function = lookup
        self.max_rows = max_rows
        self.write_ttl = expire_after_write.total_seconds() if expire_after_write is not None else None
        self.access_ttl = expire_after_access.total_seconds() if expire_after_access is not None else None
        self.cache_missing_key = cache_missing_key
        self.max_retries = max_retries
        self.clock, self.sleep = clock, sleep
        self.metrics = CacheMetrics()
        # key -> (rows, written at, last read at); order = least recently used first
        self._entries: OrderedDict[Hashable, tuple[Rows, float, float]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        return len(self._entries)

    def _fresh(self, entry: tuple[Rows, float, float], now: float) -> bool:
        _, written, read = entry
        if self.write_ttl is not None and now - written >= self.write_ttl:
            return False
        return not (self.access_ttl is not None and now - read >= self.access_ttl)

    def get_all(self, keys: Iterable[Hashable]) -> dict[Hashable, Rows]:
        """Rows for every key (an empty list for a key without rows); missing keys fetched in one lookup."""
        wanted = list(dict.fromkeys(keys))
        result: dict[Hashable, Rows] = {}
        missing: list[Hashable] = []
        now = self.clock()
        with self._lock:
            for key in wanted:
                entry = self._entries.get(key)
                if entry is not None and self._fresh(entry, now):
                    self._entries[key] = (entry[0], entry[1], now)
                    self._entries.move_to_end(key)
                    result[key] = entry[0]
                    self.metrics.hits += 1
                else:
                    if entry is not None:
                        del self._entries[key]
                    missing.append(key)
                    self.metrics.misses += 1
        if missing:
            loaded = self._load(missing)
            now = self.clock()
            with self._lock:
                for key in missing:
                    rows = list(loaded.get(key) or [])
                    result[key] = rows
                    if rows or self.cache_missing_key:
                        self._entries[key] = (rows, now, now)
                        self._entries.move_to_end(key)
                self._evict()
        return result

    def get(self, key: Hashable) -> Rows:
        return self.get_all([key])[key]

    def _load(self, keys: list[Hashable]) -> Mapping[Hashable, Rows]:
        """One batched lookup, retried ``max_retries`` times (sleeping 1 s, 2 s, ... as Flink's JDBC lookup)."""
        for attempt in range(self.max_retries + 1):
            try:
                self.metrics.loads += 1
                return self.lookup_function(keys)
            except Exception:
                self.metrics.load_failures += 1
                if attempt >= self.max_retries:
                    raise
                self.sleep(attempt + 1)
        raise AssertionError("unreachable")

    def _evict(self) -> None:
        if self.max_rows is not None:
            while len(self._entries) > self.max_rows:
                self._entries.popitem(last=False)

    def invalidate(self, key: Hashable) -> None:
        with self._lock:
            self._entries.pop(key, None)


@dataclass(frozen=True)
class PeriodicReload:
    """PERIODIC: reload every ``interval``; FIXED_DELAY from the end of the last load, FIXED_RATE from its start."""

    interval: timedelta
    fixed_rate: bool = False

    def next_after(self, load_started: float, load_ended: float, wall: datetime) -> float:
        return (load_started if self.fixed_rate else load_ended) + self.interval.total_seconds()


@dataclass(frozen=True)
class TimedReload:
    """TIMED: reload at ``at`` (a time of day, with its zone; local when naive) every ``days`` days."""

    at: dt_time
    days: int = 1

    @staticmethod
    def parse(iso_time: str, days: int = 1) -> "TimedReload":
        """Flink's ``lookup.full-cache.timed-reload.iso-time``: '10:15', '10:15:30', '10:15Z', '10:15+07:00'."""
        text = iso_time.strip()
        try:
            if text.endswith("Z"):
                at = dt_time.fromisoformat(text[:-1]).replace(tzinfo=timezone.utc)
            else:
                at = dt_time.fromisoformat(text)
        except ValueError:
            raise OptionError(f"option 'lookup.full-cache.timed-reload.iso-time' has value {iso_time!r}: expected an "
                              "ISO-8601 time such as '10:15', '10:15Z' or '10:15+07:00'") from None
        if days < 1:
            raise OptionError(f"option 'lookup.full-cache.timed-reload.interval-in-days' must be at least 1, but is {days}")
        return TimedReload(at, days)

    def next_after(self, load_started: float, load_ended: float, wall: datetime) -> float:
        """Seconds on the monotonic clock of the next reload: the next ``at`` that is ``days`` days on."""
        zone = self.at.tzinfo or wall.astimezone().tzinfo
        now = wall.astimezone(zone)
        target = now.replace(hour=self.at.hour, minute=self.at.minute, second=self.at.second,
                             microsecond=self.at.microsecond)
        if target <= now:
            target += timedelta(days=1)
        target += timedelta(days=self.days - 1)
        return load_ended + (target - now).total_seconds()


class FullCache:
    """The whole table in memory, loaded before the first lookup and reloaded in the background."""

    def __init__(self, scan: ScanFunction, reload: PeriodicReload | TimedReload,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> None:
        self.scan = scan
        self.reload = reload
        self.clock, self.wall = clock, wall
        self.metrics = CacheMetrics()
        self._table: Optional[dict[Hashable, Rows]] = None
        self._failure: Optional[BaseException] = None
        self._next_reload: Optional[float] = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    @property
    def size(self) -> int:
        return sum(len(rows) for rows in (self._table or {}).values())

    def load(self) -> None:
        """Load the whole table now and schedule the next reload; a failure is kept for the next lookup."""
        started = self.clock()
        try:
            self.metrics.loads += 1
            table: dict[Hashable, Rows] = {}
            for key, row in self.scan():
                table.setdefault(key, []).append(row)
        except Exception as exc:  # kept: Flink fails the next lookup with it
            self.metrics.load_failures += 1
            with self._lock:
                self._failure = exc
                self._next_reload = self.reload.next_after(started, self.clock(), self.wall())
            return
        with self._lock:
            self._table, self._failure = table, None
            self._next_reload = self.reload.next_after(started, self.clock(), self.wall())

    def reload_due(self) -> bool:
        return self._next_reload is not None and self.clock() >= self._next_reload

    def open(self, background: bool = True) -> None:
        """Block until the first load completed; with ``background`` reload in a daemon thread when due."""
        if self._table is None:
            self.load()
        if background and self._thread is None:
            self._thread = threading.Thread(target=self._reloader, daemon=True, name="kindling-full-cache-reload")
            self._thread.start()

    def _reloader(self) -> None:
        while not self._stop.is_set():
            wait = max(0.0, (self._next_reload or self.clock()) - self.clock())
            if self._stop.wait(min(wait, 1.0)):
                return
            if self.reload_due():
                self.load()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def get_all(self, keys: Iterable[Hashable]) -> dict[Hashable, Rows]:
        """Rows per key from memory; a miss is an empty result and never queries the source."""
        if self._table is None and self._failure is None:
            self.open(background=False)
        with self._lock:
            if self._failure is not None:
                failure = self._failure
                raise RuntimeError(f"the FULL lookup cache failed to reload: {failure}") from failure
            table = self._table or {}
        result = {}
        for key in dict.fromkeys(keys):
            rows = table.get(key)
            if rows is None:
                result[key] = []
            else:
                self.metrics.hits += 1
                result[key] = rows
        return result

    def get(self, key: Hashable) -> Rows:
        return self.get_all([key])[key]


def cache_from_options(options: Mapping[str, Any], lookup: LookupFunction, scan: Optional[ScanFunction] = None,
                       max_retries: int = 3) -> Optional[PartialCache | FullCache]:
    """The cache a table's parsed ``lookup.*`` options ask for (None for ``NONE``), with the deprecated
    ``lookup.cache.max-rows``/``ttl`` honoured when ``lookup.cache`` is not set (a legacy cache only if both > 0)."""
    kind = str(options.get("lookup.cache") or "NONE").upper()
    if kind == "PARTIAL":
        return PartialCache(lookup, options.get("lookup.partial-cache.max-rows"),
                            options.get("lookup.partial-cache.expire-after-write"),
                            options.get("lookup.partial-cache.expire-after-access"),
                            bool(options.get("lookup.partial-cache.cache-missing-key", True)), max_retries)
    if kind == "FULL":
        if scan is None:
            raise OptionError("option 'lookup.cache' = 'FULL' needs a connector that can scan the whole table")
        strategy = str(options.get("lookup.full-cache.reload-strategy") or "PERIODIC").upper()
        if strategy == "TIMED":
            iso = options.get("lookup.full-cache.timed-reload.iso-time")
            if not iso:
                raise OptionError("option 'lookup.full-cache.timed-reload.iso-time' is required for the TIMED reload strategy")
            reload: PeriodicReload | TimedReload = TimedReload.parse(iso, int(options.get("lookup.full-cache.timed-reload.interval-in-days") or 1))
        else:
            interval = options.get("lookup.full-cache.periodic-reload.interval")
            if interval is None:
                raise OptionError("option 'lookup.full-cache.periodic-reload.interval' is required for the PERIODIC reload strategy")
            mode = str(options.get("lookup.full-cache.periodic-reload.schedule-mode") or "FIXED_DELAY").upper()
            reload = PeriodicReload(interval, fixed_rate=mode == "FIXED_RATE")
        return FullCache(scan, reload)
    max_rows, ttl = options.get("lookup.cache.max-rows"), options.get("lookup.cache.ttl")
    if max_rows is not None and ttl is not None and max_rows > 0 and ttl.total_seconds() > 0:
        return PartialCache(lookup, max_rows, ttl, None, bool(options.get("lookup.cache.caching-missing-key", True)), max_retries)
    return None
