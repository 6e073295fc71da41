"""Lookups in an Elasticsearch / OpenSearch index: the documents of a batch of keys in one search.

Flink's Elasticsearch lookup source (connector 3.1+, FLINK-29042; not in Flink's SQL docs) runs a ``bool``
query with one ``term`` per key column for each probe row. kindling asks once per batch of distinct keys:
``terms`` on the key column (one key column) or a ``bool`` ``should`` of ``term`` filters (several), and
matches the documents' ``_source`` values to the keys. ``lookup.max-retries`` retries a failed search after
1 s, 2 s, ... as the JDBC lookup does; the cache is PARTIAL only, as in Flink.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any, Callable, Hashable, Iterator, Mapping, Optional, Sequence

import pyarrow as pa

from kindling.connectors.elasticsearch.client import make_client
from kindling.connectors.elasticsearch.index import IndexPattern
from kindling.connectors.elasticsearch.options import SinkConfig
from kindling.connectors.lookup_cache import keyed_rows, with_retries
from kindling.options import OptionError

MAX_KEYS_PER_SEARCH = 1000
MAX_HITS = 10_000  # Elasticsearch's default index.max_result_window


class ElasticsearchLookup:
    """``lookup(keys)`` -> ``{key: [row, ...]}`` of ``columns`` by ``key_columns`` from the table's index."""

    def __init__(self, config: SinkConfig, options: Mapping[str, Any], key_columns: Sequence[str], columns: Sequence[str],
                 schema: pa.Schema, sleep: Callable[[float], None] = time.sleep) -> None:
        if IndexPattern.parse(config.index).dynamic:
            raise OptionError(f"a lookup table needs a static 'index'; '{config.index}' is a dynamic index pattern")
        self.config = config
        self.options = options
        self.key_columns = list(key_columns)
        self.columns = list(columns)
        self.key_schema = pa.schema([schema.field(name) for name in key_columns])
        self.max_retries = int(options.get("lookup.max-retries", 3))
        self.sleep = sleep
        self._client: Optional[Any] = None
        self.searches = 0

    def _query(self, keys: list[Hashable]) -> dict:
        if len(self.key_columns) == 1:
            return {"terms": {self.key_columns[0]: list(keys)}}
        return {"bool": {"should": [{"bool": {"filter": [{"term": {c: v}} for c, v in zip(self.key_columns, key)]}}  # type: ignore[arg-type]
                                    for key in keys], "minimum_should_match": 1}}

    def lookup(self, keys: Sequence[Hashable]) -> dict[Hashable, list[tuple]]:
        """The rows of every key, one search per ``MAX_KEYS_PER_SEARCH`` distinct keys."""
        single = len(self.key_columns) == 1
        distinct = [k for k in dict.fromkeys(keys) if (k is not None if single else None not in k)]  # type: ignore[operator]
        result: dict[Hashable, list[tuple]] = {}
        for start in range(0, len(distinct), MAX_KEYS_PER_SEARCH):
            chunk = [_json_value(k) if single else tuple(_json_value(v) for v in k) for k in distinct[start:start + MAX_KEYS_PER_SEARCH]]  # type: ignore[union-attr]
            sources = self._search(self._query(chunk))
            for key, row in self._keyed(sources):
                result.setdefault(key, []).append(row)
        return result

    def scan(self) -> Iterator[tuple[Hashable, tuple]]:
        raise OptionError("'lookup.cache' = 'FULL' is not supported by the Elasticsearch lookup source (PARTIAL only, as in Flink)")

    def _keyed(self, sources: list[dict]) -> list[tuple[Hashable, tuple]]:
        return keyed_rows([tuple(source.get(c) for c in self.key_columns) for source in sources],
                          [tuple(source.get(c) for c in self.columns) for source in sources], self.key_schema, self.to_arrow)

    def _search(self, query: dict) -> list[dict]:
        def search() -> list[dict]:
            if self._client is None:
                self._client = make_client(self.config)
            response = self._client.search(index=self.config.index, body={"query": query, "size": MAX_HITS, "_source": self.columns})
            body = getattr(response, "body", response)
            self.searches += 1
            hits = body["hits"]["hits"]
            total = body["hits"].get("total", {})
            if isinstance(total, dict) and total.get("value", 0) > len(hits):
                raise OptionError(f"more than {MAX_HITS} documents of index '{self.config.index}' match one batch of "
                                  "lookup keys; a lookup table holds few documents per key")
            return [hit.get("_source") or {} for hit in hits]

        def failed(exc: Exception, attempts: int) -> Exception:
            return OptionError(f"lookup in index '{self.config.index}' failed after {attempts} attempt(s): "
                               f"{type(exc).__name__}: {str(exc)[:300]}")

        return with_retries(search, self.max_retries, self.sleep, self.close, failed, final=(OptionError,))

    def to_arrow(self, rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:
        return documents_to_arrow(rows, schema)

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # a broken client is gone either way
                pass


def documents_to_arrow(rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:
    """Documents' JSON values as Arrow columns of ``schema`` (times from Flink's SQL or ISO-8601 text, or epoch millis)."""
    columns = list(zip(*rows)) if rows else [()] * len(schema)
    arrays = [pa.array([_arrow_value(v, field.type) for v in values], field.type) for field, values in zip(schema, columns)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _json_value(value: Any) -> Any:
    """A key as the search's JSON takes it (times as Flink's SQL text, as the sink writes them by default)."""
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _arrow_value(value: Any, arrow_type: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_timestamp(arrow_type):
        if isinstance(value, (int, float)):
            return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=value)
        parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        return parsed.astimezone(dt.timezone.utc).replace(tzinfo=None) if parsed.tzinfo else parsed
    if pa.types.is_date(arrow_type):
        return dt.date.fromisoformat(str(value)[:10])
    if pa.types.is_string(arrow_type) and not isinstance(value, str):
        return str(value)
    if pa.types.is_decimal(arrow_type):
        from decimal import Decimal

        return Decimal(str(value))
    if pa.types.is_floating(arrow_type):
        return float(value)
    return value
