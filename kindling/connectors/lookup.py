"""Lookup joins at run time: the rows a dimension table holds for a batch of probe keys.

A lookup join (``JOIN dim FOR SYSTEM_TIME AS OF o.proc_time AS d ON o.k = d.id``) runs inside the
probe side's Spark stage as an Arrow UDF: for every Arrow batch of probe rows (up to
``spark.sql.execution.arrow.maxRecordsPerBatch``) the distinct keys go to the connector in one call
(one database query), through the table's cache when ``lookup.cache`` asks for one. The answer is a
list of dimension rows per probe row, which the planner's ``inline`` turns into joined rows.

One :class:`LookupTable` (the connector's client and its cache) lives per join per Python worker
process: Spark reuses its Python workers, so a cache outlives a micro-batch as Flink's cache
outlives a record, and every worker process holds its own, as every Flink TaskManager does.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable, Mapping, Optional, Protocol, Sequence

import pyarrow as pa

from kindling.arrow import arrow_schema
from kindling.connectors.lookup_cache import CacheMetrics, FullCache, PartialCache, cache_from_options


class LookupSource(Protocol):
    """What a connector that can be looked up gives the lookup join (Flink's ``LookupTableSource``)."""

    #: the table's parsed options (``lookup.cache`` and the cache's bounds among them)
    options: Mapping[str, Any]

    def lookup(self, keys: Sequence[Hashable]) -> Mapping[Hashable, list[tuple]]:
        """The rows of each key (a tuple of the key columns' values, a bare value for one key column), with the
        key values as Arrow gives them (``to_pylist``) so that probe keys find them; failures retried by the source."""

    def scan(self) -> Iterable[tuple[Hashable, tuple]]:
        """Every row with its key, for the FULL cache."""

    def to_arrow(self, rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:
        """Rows as the connector returns them, as Arrow columns of ``schema``."""

    def close(self) -> None:
        """Release the client."""


@dataclass(frozen=True)
class LookupSpec:
    """One lookup join as the workers need it; picklable, sent with the UDF."""

    id: str  # unique per planned join: one client and cache per join per worker process
    connector: str
    table: str
    options: dict[str, str] = field(repr=False)  # holds credentials: never printed
    key_columns: tuple[str, ...]
    columns: tuple[str, ...]
    schema_json: str  # the Spark schema of ``columns`` (StructType JSON)
    # The LOOKUP hint's retry: keys that found no row are looked up again after the delay, up to this many more times.
    retry_delay_s: float = 0.0
    retry_attempts: int = 0


_TABLES: dict[str, "LookupTable"] = {}
_TABLES_LOCK = threading.Lock()


def lookup_table(spec: LookupSpec) -> "LookupTable":
    """This worker process's client and cache for the join ``spec`` (made on first use)."""
    with _TABLES_LOCK:
        table = _TABLES.get(spec.id)
        if table is None:
            table = _TABLES[spec.id] = LookupTable(spec)
        return table


class LookupTable:
    """A dimension table seen through its connector's lookups and its cache."""

    def __init__(self, spec: LookupSpec) -> None:
        from pyspark.sql.types import StructType

        from kindling.connectors import get_connector

        self.spec = spec
        schema = StructType.fromJson(json.loads(spec.schema_json))
        self.schema = arrow_schema(schema)
        self.key_types = [self.schema.field(name).type for name in spec.key_columns]
        self.source: LookupSource = get_connector(spec.connector).lookup_source(
            spec.options, spec.key_columns, spec.columns, self.schema)
        # the source retries a failed lookup itself (``lookup.max-retries``), so the cache does not again
        self.cache: Optional[PartialCache | FullCache] = cache_from_options(
            self.source.options, self.source.lookup, self.source.scan, max_retries=0)
        self._reported = CacheMetrics()
        if self.cache is not None:
            from kindling.runtime.metrics import metric_group

            # Flink's CacheMetricGroup names, under the join's table; summed over the worker processes by the job manager
            group = metric_group(f"LookupJoin[{spec.table}]").add_group("cache")
            self._counters = {name: group.counter(name) for name in ("hitCount", "missCount", "loadCount", "numLoadFailures")}
            cache = self.cache
            group.gauge("numCachedRecords", lambda: cache.size)

    def rows(self, keys: Sequence[pa.Array]) -> pa.ListArray:
        """For each probe row (the key columns' values, one array per key column), the matching rows."""
        columns = [key.cast(target) if key.type != target else key for key, target in zip(keys, self.key_types)]
        values = [column.to_pylist() for column in columns]
        probes: list[Optional[Hashable]]
        if len(values) == 1:
            probes = values[0]
        else:
            probes = [None if None in row else tuple(row) for row in zip(*values)]
        wanted = [k for k in dict.fromkeys(probes) if k is not None]
        found = dict(self._lookup(wanted)) if wanted else {}
        missing = [k for k in wanted if not found.get(k)]
        for _ in range(self.spec.retry_attempts):  # 'retry-predicate' = 'lookup_miss', 'retry-strategy' = 'fixed_delay'
            if not missing:
                break
            time.sleep(self.spec.retry_delay_s)
            found.update(self._lookup(missing))
            missing = [k for k in missing if not found.get(k)]
        offsets = [0]
        matched: list[tuple] = []
        for probe in probes:
            if probe is not None:
                matched.extend(found.get(probe, ()))
            offsets.append(len(matched))
        self._report()
        batch = self.source.to_arrow(matched, self.schema)
        struct = pa.StructArray.from_arrays(batch.columns, fields=list(self.schema))
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), struct)

    def _lookup(self, keys: list[Hashable]) -> Mapping[Hashable, list[tuple]]:
        return self.cache.get_all(keys) if self.cache is not None else self.source.lookup(keys)

    def _report(self) -> None:
        """The cache's counts since the last report, added to the job's metrics."""
        if self.cache is None:
            return
        now, before = self.cache.metrics, self._reported
        for name, current, previous in (("hitCount", now.hits, before.hits), ("missCount", now.misses, before.misses),
                                        ("loadCount", now.loads, before.loads),
                                        ("numLoadFailures", now.load_failures, before.load_failures)):
            if current > previous:
                self._counters[name].inc(current - previous)
        self._reported = CacheMetrics(now.hits, now.misses, now.loads, now.load_failures)
