"""The ``jdbc`` scan source (bounded): one snapshot of the table, in parallel splits, then the end of input.

As in Flink, a jdbc table read by a streaming job is read once and finishes (it is not CDC). The
first micro-batch holds the whole scan: with ``scan.partition.column/num/lower-bound/upper-bound``
it is split into Flink's ranges (``JdbcNumericBetweenParametersProvider``), each one Spark
partition running ``SELECT … FROM t WHERE col BETWEEN lo AND hi`` (rows outside the bounds are
never read, as in Flink); without them one partition reads ``SELECT … FROM t``. The last partition
also emits the end-of-input marker. A batch read adds the filters Spark pushed down
(:mod:`kindling.connectors.jdbc.filters`) to every split's ``WHERE``. In either mode the SQL planner declares
what the scan's query needs (:mod:`kindling.connectors.scan_pushdown`): only the columns it reads are selected
(the others come back as nulls nobody reads), and in a streaming read, where Spark pushes no filter, the
conditions on the scan's rows go into the ``WHERE`` by the same rules.

Rows stream from the server: PostgreSQL through a named (server-side) cursor fetching
``scan.fetch-size`` rows per round trip (10,000 when the option is 0), MySQL through PyMySQL's
unbuffered cursor; each chunk becomes one Arrow record batch, so a split never sits in memory whole.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit
from pyspark.sql.types import StructType

from kindling.arrow import arrow_schema
from kindling.connectors import scan_pushdown
from kindling.connectors.base import EOS_COLUMN, EOS_OFFSET_KEY, TABLE_SCAN, end_of_input_batch
from kindling.connectors.jdbc.dialects import JdbcError, dialect_for, to_arrow
from kindling.connectors.jdbc.filters import PUSHED_FILTERS_OPTION, encode_conditions, pushed_conditions, where_clause
from kindling.connectors.jdbc.options import jdbc_config, partition_ranges


class ScanSplit(InputPartition):
    """One split: an inclusive range of the partition column (or the whole table), whether it ends the input, the
    columns to read (None: all) and the conditions the database applies first (encoded, or None)."""

    def __init__(self, index: int, low: Any, high: Any, emit_eos: bool, columns: Optional[list[str]] = None,
                 conditions: Optional[str] = None) -> None:
        super().__init__((index, low, high, emit_eos, columns, conditions))
        self.index, self.low, self.high, self.emit_eos = index, low, high, emit_eos


def scan_query(dialect, columns: Sequence[str], partition_column: str | None, pushed: Sequence[str] = ()) -> str:
    """``SELECT <columns> FROM <table> [WHERE <column> BETWEEN ? AND ? [AND <pushed filter> ...]]``."""
    query = f"SELECT {', '.join(dialect.quote(c) for c in columns)} FROM {dialect.table}"
    conditions = [f"{dialect.quote(partition_column)} BETWEEN %s AND %s"] if partition_column is not None else []
    conditions += pushed
    if conditions:
        query += " WHERE " + " AND ".join(conditions)
    return query


def splits(config) -> list[tuple[Any, Any]]:
    """The ranges of the partitioned scan, or one unbounded split."""
    if not config.partitioned:
        return [(None, None)]
    return partition_ranges(config.lower_bound, config.upper_bound, config.partition_num)


class JdbcStreamReader(DataSourceStreamReader):
    """Reads the table once (first micro-batch), then reports the end of input."""

    def __init__(self, schema: StructType, options: dict[str, str]) -> None:
        from kindling.connectors.jdbc.sink import check_table

        self.config = jdbc_config(options)
        self.pushed_filters = options.get(PUSHED_FILTERS_OPTION)  # set by a batch read's filter pushdown
        self.scan_id = options.get(TABLE_SCAN)
        self.filter_policy = str(next((v for k, v in options.items() if k.lower() == "filter.handling.policy"), "always"))
        self.schema = schema
        self.columns = [f.name for f in schema.fields if f.name != EOS_COLUMN]
        if self.config.partitioned and self.config.partition_column not in self.columns:
            raise JdbcError(f"jdbc: option 'scan.partition.column' names '{self.config.partition_column}', which is not "
                            f"a column of the table ({', '.join(self.columns)})")
        check_table(self.config, StructType([f for f in schema.fields if f.name != EOS_COLUMN]), writing=False)

    def initialOffset(self) -> dict:
        return {"read": False}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        return {"read": True, EOS_OFFSET_KEY: True}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        if start.get("read"):
            return []
        columns, conditions = self._pushdown()
        ranges = splits(self.config)
        return [ScanSplit(i, low, high, i == len(ranges) - 1, columns, conditions) for i, (low, high) in enumerate(ranges)]

    def _pushdown(self) -> tuple[Optional[list[str]], Optional[str]]:
        """The columns this scan's query reads and the conditions the database applies first: a batch read's pushed
        filters, or what the SQL planner declared for the scan (kindling.connectors.scan_pushdown); never a filter
        with 'filter.handling.policy' = 'never'."""
        declared = scan_pushdown.needs(self.scan_id)
        columns = None
        if declared.columns is not None:
            wanted = set(declared.columns)
            columns = [c for c in self.columns if c in wanted] or self.columns[:1]  # COUNT(*) still needs the rows
        conditions = self.pushed_filters
        if conditions is None and declared.filters and self.filter_policy.strip().lower() != "never":
            found = pushed_conditions(StructType([f for f in self.schema.fields if f.name != EOS_COLUMN]), declared.spark_filters())
            conditions = encode_conditions(found) if found else None
        return columns, conditions

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        index, low, high, emit_eos, *pushdown = partition.value
        columns, conditions = (pushdown + [None, None])[:2]
        if conditions is None:
            conditions = self.pushed_filters
        target = arrow_schema(self.schema)
        read = columns if columns is not None else self.columns
        data_schema = pa.schema([target.field(c) for c in read])
        dialect = dialect_for(self.config)
        pushed, pushed_params = where_clause(dialect.quote, conditions)
        query = scan_query(dialect, read, self.config.partition_column if low is not None else None, pushed)
        params = ([low, high] if low is not None else []) + pushed_params
        connection = dialect.connect_checked(autocommit=self.config.auto_commit and self.config.dialect != "postgresql")
        try:
            for rows in dialect.scan(connection, query, params):
                batch = to_arrow(rows, data_schema)
                eos = pa.array([False] * batch.num_rows, pa.bool_())
                # columns the query does not read (declared by the planner) as nulls, in the table's order
                arrays = [batch.column(f.name) if f.name in read else pa.nulls(batch.num_rows, f.type)
                          for f in target if f.name != EOS_COLUMN]
                yield pa.RecordBatch.from_arrays([*arrays, eos], schema=target)
        finally:
            connection.close()
        if emit_eos:
            yield end_of_input_batch(target)

    def commit(self, end: dict) -> None:
        """Nothing to release: every split opened and closed its own connection."""
