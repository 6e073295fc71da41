"""The JDBC connector (``'connector' = 'jdbc'``) for MySQL/MariaDB and PostgreSQL, with Flink's options.

* ``options``: Flink's option names, defaults and cross-option rules (``JdbcDynamicTableFactory``);
* ``dialects``: connecting (PyMySQL, psycopg 3), quoting, type checks, upsert/delete/insert statements;
* ``sink``: exactly-once micro-batches: rows and batch id committed in one database transaction;
* ``source``: the bounded scan, in parallel splits by ``scan.partition.*``, streamed from the server;
* ``filters``: the filters a batch read pushes into the scan's ``WHERE``.

When the table is used (a Source or Sink is made, an INSERT planned) the driver logs in and finds the
table; when the query starts it checks the columns: the login works (``username``/``password``),
the ``table-name`` exists and every DDL column exists there with a type that fits; each failure names
the option or the column, never the password.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from kindling.connectors.base import TABLE_PRIMARY_KEY, Connector, spark_format
from kindling.connectors.bounded_read import BoundedReads
from kindling.connectors.jdbc.dialects import check_reachable
from kindling.connectors.jdbc.options import OPTIONS, jdbc_config
from kindling.options import OptionError, ParsedOptions


class JdbcDataSource(BoundedReads, DataSource):
    """``format("kindling_jdbc")`` with Flink's jdbc options."""

    @classmethod
    def name(cls) -> str:
        return spark_format("jdbc")

    def schema(self) -> StructType:
        raise OptionError("the jdbc source needs the table's columns (a CREATE TABLE with its columns)")

    def streamReader(self, schema: StructType):
        from kindling.connectors.jdbc.source import JdbcStreamReader

        return JdbcStreamReader(schema, dict(self.options))

    def streamWriter(self, schema: StructType, overwrite: bool):
        from kindling.connectors.jdbc.sink import JdbcStreamWriter

        return JdbcStreamWriter(dict(self.options), schema)

    @classmethod
    def push_filters(cls, options: dict[str, str], schema: StructType, filters: Sequence[Any]) -> dict[str, str]:
        """A batch read's options with the filters the database applies first (``kindling.connectors.jdbc.filters``);
        none with ``'filter.handling.policy' = 'never'`` (Spark alone filters, as Flink then pushes nothing)."""
        from kindling.connectors.jdbc.filters import PUSHED_FILTERS_OPTION, encode_conditions, pushed_conditions

        policy = next((v for k, v in options.items() if k.lower() == "filter.handling.policy"), "always")
        if str(policy).strip().lower() == "never":
            return options
        conditions = pushed_conditions(schema, filters)
        return {**options, PUSHED_FILTERS_OPTION: encode_conditions(conditions)} if conditions else options


class JdbcConnector(Connector):
    name = "jdbc"
    data_source = JdbcDataSource
    reads_scan_needs = True
    source_options = OPTIONS
    sink_options = OPTIONS

    @classmethod
    def validate_source(cls, options: Mapping[str, Any]) -> ParsedOptions:
        check_reachable(jdbc_config(options))
        return OPTIONS.validate(options)

    @classmethod
    def validate_sink(cls, options: Mapping[str, Any]) -> ParsedOptions:
        check_reachable(jdbc_config(options))
        return OPTIONS.validate(options)

    @classmethod
    def is_bounded(cls, options: ParsedOptions) -> bool:
        return True  # a scan reads one snapshot and finishes, as in Flink

    supports_lookup = True

    @classmethod
    def lookup_source(cls, options: Mapping[str, str], key_columns: Sequence[str], columns: Sequence[str],
                      schema: pa.Schema) -> Any:
        from kindling.connectors.jdbc.lookup import JdbcLookup

        key_schema = pa.schema([schema.field(name) for name in key_columns])
        return JdbcLookup(jdbc_config(options), key_columns, columns, key_schema)

    @classmethod
    def prepare_sink(cls, options: Mapping[str, Any], schema: StructType, updating: bool) -> None:
        if updating and not options.get(TABLE_PRIMARY_KEY):
            raise OptionError("please declare primary key for sink table when query contains update/delete record "
                              "(PRIMARY KEY (...) NOT ENFORCED makes the jdbc sink upsert)")
        from kindling.connectors.base import INTERNAL_PREFIX
        from kindling.connectors.jdbc.sink import check_table

        # the table's columns against the query's: a missing column or a type that does not fit fails here
        check_table(jdbc_config(options), StructType([f for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)]))


CONNECTOR = JdbcConnector

__all__ = ["CONNECTOR", "JdbcConnector", "JdbcDataSource"]
