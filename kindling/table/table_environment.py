"""PyFlink's ``TableEnvironment`` and ``StreamTableEnvironment`` on kindling's SQL session.

``TableEnvironment.create(EnvironmentSettings.in_streaming_mode())`` works on the program's execution
environment (one SparkSession); ``StreamTableEnvironment.create(env)`` on a given one. SQL statements,
Table API operations and DataStreams share its catalog.

>>> from kindling.table import EnvironmentSettings, TableEnvironment
>>> t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())   # doctest: +SKIP
>>> t_env.execute_sql("CREATE TABLE numbers (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3')")  # doctest: +SKIP
>>> t_env.from_path("numbers").execute().print()   # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Union

from kindling.table.descriptors import Schema, TableDescriptor
from kindling.table.table import Table
from kindling.table.types import DataType, _quote

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment
    from kindling.sql.result import TableResult
    from kindling.table.table_pipeline import TablePipeline

_SOURCE_IDS = itertools.count()
_ANONYMOUS_IDS = itertools.count(1)


class EnvironmentSettings:
    """Streaming or batch mode (``EnvironmentSettings.in_streaming_mode()``)."""

    def __init__(self, streaming: bool = True, configuration: Optional[dict[str, str]] = None) -> None:
        self._streaming = streaming
        self._configuration = dict(configuration or {})

    @staticmethod
    def in_streaming_mode() -> "EnvironmentSettings":
        return EnvironmentSettings(True)

    @staticmethod
    def in_batch_mode() -> "EnvironmentSettings":
        return EnvironmentSettings(False)

    @staticmethod
    def new_instance() -> "EnvironmentSettings.Builder":
        return EnvironmentSettings.Builder()

    def is_streaming_mode(self) -> bool:
        return self._streaming

    class Builder:
        def __init__(self) -> None:
            self._streaming = True
            self._configuration: dict[str, str] = {}

        def in_streaming_mode(self) -> "EnvironmentSettings.Builder":
            self._streaming = True
            return self

        def in_batch_mode(self) -> "EnvironmentSettings.Builder":
            self._streaming = False
            return self

        def with_configuration(self, config: Any) -> "EnvironmentSettings.Builder":
            self._configuration.update(dict(config.to_dict() if hasattr(config, "to_dict") else config))
            return self

        def build(self) -> "EnvironmentSettings":
            return EnvironmentSettings(self._streaming, self._configuration)


class TableConfig:
    """``t_env.get_config()``: options set here are the session's (``SET 'key' = 'value'``)."""

    def __init__(self, t_env: "TableEnvironment") -> None:
        self._t_env = t_env

    def set(self, key: str, value: str) -> "TableConfig":
        self._t_env._session.execute_sql(f"SET '{key}' = '{value}'")
        return self

    def get(self, key: str, default_value: Optional[str] = None) -> Optional[str]:
        session = self._t_env._session
        return session.session_options.get(key, session.env.config.to_dict().get(key, default_value))

    def get_configuration(self) -> Any:
        return self._t_env._env.config

    def set_local_timezone(self, timezone_id: str) -> None:
        self.set("table.local-time-zone", timezone_id)


class StatementSet:
    """INSERTs run together as one job (``t_env.create_statement_set()``)."""

    def __init__(self, t_env: "TableEnvironment") -> None:
        self._t_env = t_env
        self._inserts: list[Any] = []

    def add_insert_sql(self, stmt: str) -> "StatementSet":
        from kindling.sql import ddl
        from kindling.sql.statements import split_statements

        for statement in split_statements(stmt):
            parsed = ddl.parse_statement(statement)
            if not isinstance(parsed, ddl.Insert):
                raise ValueError(f"add_insert_sql takes INSERT statements, not: {statement.text.strip()[:60]}")
            self._inserts.append(parsed)
        return self

    def add_insert(self, target_path_or_descriptor: Any, table: Table, overwrite: bool = False) -> "StatementSet":
        """Add the INSERT of ``table``'s rows into a catalog table or a table a ``TableDescriptor`` describes."""
        return self.add(table.insert_into(target_path_or_descriptor, overwrite))

    def add(self, table_pipeline: "TablePipeline") -> "StatementSet":
        """Add a table pipeline (``table.insert_into(...)``): it runs in this set's job."""
        self._inserts.append(table_pipeline._insert)
        return self

    def explain(self, *extra_details: Any) -> str:
        return "\n".join(self._t_env.execute_sql(f"EXPLAIN INSERT INTO {i.table} {i.query}").collect()[0][0] for i in self._inserts)

    def execute(self) -> "TableResult":
        if not self._inserts:
            raise ValueError("the statement set is empty: add_insert / add_insert_sql first")
        inserts, self._inserts = self._inserts, []
        return self._t_env._session._run_inserts(inserts, 1)


class TableEnvironment:
    """Flink SQL and the Table API over one catalog (PyFlink's ``TableEnvironment``)."""

    def __init__(self, env: "StreamEnvironment") -> None:
        self._env = env
        self._session = env.sql_session()

    @staticmethod
    def create(environment_settings: Union[EnvironmentSettings, Any, None] = None) -> "TableEnvironment":
        from kindling.env import StreamEnvironment

        settings = environment_settings if isinstance(environment_settings, EnvironmentSettings) else EnvironmentSettings()
        env = StreamEnvironment.get_execution_environment(settings._configuration or None)
        if not settings.is_streaming_mode():
            env.config.set("execution.runtime-mode", "batch")
        return TableEnvironment(env)

    # --- SQL ------------------------------------------------------------------------------------
    def execute_sql(self, stmt: str) -> "TableResult":
        return self._session.execute_sql(stmt)

    def sql_query(self, query: str) -> Table:
        return Table(self, query)

    def get_config(self) -> TableConfig:
        return TableConfig(self)

    def create_statement_set(self) -> StatementSet:
        return StatementSet(self)

    # --- catalog --------------------------------------------------------------------------------
    def _register_query(self, name: str, query: str, functions: dict[str, Any]) -> None:
        for function_name, function in functions.items():
            if function_name not in self._session.catalog.functions:
                self._session.create_temporary_function(function_name, function)
        self._session.catalog.put_query_view(name, query)

    def from_path(self, path: str) -> Table:
        self._session.catalog.get(path, construct="from_path")
        return Table(self, f"SELECT * FROM {_quote(path)}")

    def _sink_path(self, target: Any, table: Table) -> str:
        """The catalog path of an INSERT's target: the path given, or an anonymous temporary table made from a
        ``TableDescriptor`` (with ``table``'s columns when the descriptor has no schema)."""
        if isinstance(target, str):
            return target
        if not isinstance(target, TableDescriptor):
            raise TypeError(f"a sink is a table path or a TableDescriptor, got {type(target).__name__}")
        if target.get_schema() is None:
            from kindling.sql.types import flink_type_name

            builder = Schema.new_builder()
            for field in table.get_schema().fields:
                builder.column(field.name, flink_type_name(field.dataType))
            target = TableDescriptor(target.connector, builder.build(), target.options, target.partition_keys, target.comment)
        path = f"__kindling_anonymous_{target.connector}_{next(_ANONYMOUS_IDS)}"
        self.create_temporary_table(path, target)
        return path

    def create_temporary_table(self, path: str, descriptor: TableDescriptor) -> None:
        self._session.execute_sql(descriptor.ddl(path, temporary=True))

    def create_table(self, path: str, descriptor: TableDescriptor) -> None:
        self._session.execute_sql(descriptor.ddl(path))

    def create_temporary_view(self, view_path: str, table_or_data_stream: Any, *fields: Any) -> None:
        if isinstance(table_or_data_stream, Table):
            self._session.catalog.put_query_view(view_path, f"SELECT * FROM {table_or_data_stream}")
        else:
            table = self.from_data_stream(table_or_data_stream, *fields)
            self._session.catalog.put_query_view(view_path, f"SELECT * FROM {table}")

    def create_temporary_function(self, path: str, function: Any) -> None:
        self._session.create_temporary_function(path, function)

    create_temporary_system_function = create_temporary_function
    create_function = create_temporary_function

    def drop_temporary_view(self, view_path: str) -> bool:
        return self._session.catalog.drop("VIEW", view_path, True, 1)

    def drop_temporary_table(self, table_path: str) -> bool:
        return self._session.catalog.drop("TABLE", table_path, True, 1)

    def drop_table(self, table_path: str, ignore_if_not_exists: bool = True) -> bool:
        """Drop a table; True if it existed. kindling's one catalog is in memory: permanent and temporary are one."""
        return self._session.catalog.drop("TABLE", table_path, ignore_if_not_exists, 1)

    def drop_view(self, view_path: str, ignore_if_not_exists: bool = True) -> bool:
        """Drop a view; True if it existed."""
        return self._session.catalog.drop("VIEW", view_path, ignore_if_not_exists, 1)

    def create_view(self, view_path: str, table: Table, ignore_if_exists: bool = False) -> None:
        """Register ``table`` as a view (in kindling's in-memory catalog, as ``create_temporary_view``)."""
        if ignore_if_exists and view_path in self._session.catalog.objects:
            return
        self.create_temporary_view(view_path, table)

    def drop_temporary_function(self, path: str) -> bool:
        """Drop a function registered with ``create_temporary_function`` (or its system and permanent variants, one
        kind in kindling); True if it existed."""
        existed = path in self._session.catalog.functions
        if existed:
            self._session.execute_sql(f"DROP TEMPORARY FUNCTION {_quote(path)}")
        return existed

    drop_function = drop_temporary_function
    drop_temporary_system_function = drop_temporary_function

    def list_user_defined_functions(self) -> list[str]:
        """The names of the functions registered here (``create_temporary_function``, ``CREATE FUNCTION``)."""
        return sorted(self._session.catalog.functions)

    def explain_sql(self, stmt: str, *extra_details: Any) -> str:
        """The plan of a query or INSERT statement (``EXPLAIN stmt``)."""
        return self._session.execute_sql(f"EXPLAIN {stmt}").collect()[0][0]

    def from_descriptor(self, descriptor: TableDescriptor) -> Table:
        """A table read through a ``TableDescriptor`` without registering it under a name of the user's."""
        path = f"__kindling_anonymous_{descriptor.connector}_{next(_ANONYMOUS_IDS)}"
        self.create_temporary_table(path, descriptor)
        return self.from_path(path)

    def get_current_catalog(self) -> str:
        return "default_catalog"

    def get_current_database(self) -> str:
        return "default_database"

    def list_catalogs(self) -> list[str]:
        return ["default_catalog"]

    def list_databases(self) -> list[str]:
        return ["default_database"]

    def use_catalog(self, catalog_name: str) -> None:
        """kindling has one in-memory catalog, Flink's default one: only its name is accepted."""
        if catalog_name != "default_catalog":
            raise ValueError(f"catalog '{catalog_name}' does not exist: kindling has one in-memory catalog, 'default_catalog'")

    def use_database(self, database_name: str) -> None:
        if database_name != "default_database":
            raise ValueError(f"database '{database_name}' does not exist in catalog 'default_catalog': it has one "
                             "database, 'default_database'")

    def list_tables(self) -> list[str]:
        return [n for n in self._session.catalog.tables() if not _internal(n)]

    def list_views(self) -> list[str]:
        return [n for n in self._session.catalog.views() if not _internal(n)]

    # --- tables from Python -----------------------------------------------------------------------
    def from_elements(self, elements: Iterable[Any], schema: Union[Sequence[str], DataType, None] = None,
                      verify_schema: bool = True) -> Table:
        """A bounded table of the given rows; column types are inferred from the values unless ``schema`` is a ROW type."""
        from kindling.connectors.collection import collection_source
        from kindling.sql.types import parse_type

        rows = [tuple(e) if isinstance(e, (list, tuple)) else (e,) for e in elements]
        width = max((len(r) for r in rows), default=0)
        if isinstance(schema, DataType) and schema.startswith("ROW<"):
            fields = getattr(schema, "fields", None)
            if fields is None:
                raise ValueError("from_elements: give the schema as DataTypes.ROW([DataTypes.FIELD(name, type), ...])")
            names, types = [f.name for f in fields], [str(f.data_type) for f in fields]
        else:
            names = list(schema) if schema is not None else [f"_{i + 1}" for i in range(width)]
            if len(names) != width:
                raise ValueError(f"from_elements: {len(names)} column names for rows of {width} values")
            types = [_infer_type([r[i] for r in rows], names[i]) for i in range(width)]
        spark_schema = parse_type("ROW<" + ", ".join(f"{_quote(n)} {t}" for n, t in zip(names, types)) + ">").spark
        data = collection_source(rows, spark_schema).options["data"]
        source = f"__kindling_elements_{next(_SOURCE_IDS)}"
        columns = ", ".join(f"{_quote(n)} {t}" for n, t in zip(names, types))
        self._session.execute_sql(f"CREATE TEMPORARY TABLE {source} ({columns}) WITH ('connector' = 'collection', "
                                  f"'data' = {_sql_string(data)})")
        return Table(self, f"SELECT * FROM {source}")

    def from_pandas(self, pdf: Any, schema: Union[Sequence[str], DataType, None] = None, splits_num: int = 1) -> Table:
        """A bounded table of a pandas DataFrame's rows (column names from ``schema`` or the DataFrame)."""
        names = schema if schema is not None else [str(c) for c in pdf.columns]
        rows = [tuple(None if _missing(v) else _python(v) for v in row) for row in pdf.itertuples(index=False, name=None)]
        return self.from_elements(rows, names)

    def from_data_stream(self, data_stream: Any, *fields_or_schema: Any) -> Table:
        """A table of a DataStream's records (its fields as columns).

        With a :class:`Schema`, the table has the schema's columns in its order: physical columns name the
        stream's fields, computed columns are Flink SQL expressions over them, a metadata column ``rowtime``
        is the stream's event time, and a watermark (``ts - INTERVAL '3' SECOND``, or ``SOURCE_WATERMARK()``
        for the stream's own) makes a column the table's time attribute."""
        if not fields_or_schema:
            name = f"__kindling_stream_{next(_SOURCE_IDS)}"
            self._session.create_temporary_view(name, data_stream)
            return Table(self, f"SELECT * FROM {name}")
        if len(fields_or_schema) == 1 and isinstance(fields_or_schema[0], Schema):
            return self._from_data_stream_with_schema(data_stream, fields_or_schema[0])
        raise ValueError("from_data_stream takes a DataStream and optionally a Schema (Schema.new_builder()...build()); "
                         "field expressions are not supported by kindling")

    def _from_data_stream_with_schema(self, data_stream: Any, schema: Schema) -> Table:
        from pyspark.sql import functions as F

        from kindling.datastream.watermarks import WatermarkStrategy
        from kindling.sql.translate import translate_expression, watermark_delay

        fields = data_stream.schema.fieldNames()
        for kind, name, text in schema.columns:
            if kind == "physical" and name not in fields:
                raise ValueError(f"from_data_stream: column '{name}' of the Schema is not a field of the stream ({', '.join(fields)})")
            if kind == "metadata" and (name != "rowtime" or "METADATA" not in text):
                raise ValueError(f"from_data_stream: metadata column '{name}': only the stream's event time "
                                 "(column_by_metadata('rowtime', DataTypes.TIMESTAMP_LTZ(3))) is supported")
        computed = {name: text for kind, name, text in schema.columns if kind == "computed"}
        rowtime: Optional[str] = None
        if schema.watermark is not None:
            rowtime, expression = schema.watermark
            if expression.strip().upper().replace(" ", "") == "SOURCE_WATERMARK()":
                if not data_stream._event_time:
                    raise ValueError("from_data_stream: SOURCE_WATERMARK() needs a stream with event time "
                                     "(assign_timestamps_and_watermarks before from_data_stream)")
            else:
                delay = watermark_delay(expression, rowtime, 1)
                assigner = F.expr(translate_expression(computed[rowtime], 1)) if rowtime in computed else F.col(f"`{rowtime}`")
                strategy = WatermarkStrategy.for_bounded_out_of_orderness(delay).with_timestamp_assigner(assigner)
                data_stream = data_stream.assign_timestamps_and_watermarks(strategy)
        name = f"__kindling_stream_{next(_SOURCE_IDS)}"
        self._session.create_temporary_view(name, data_stream)
        columns = []
        for kind, column, text in schema.columns:
            if column == rowtime and kind == "computed":
                columns.append(f"`rowtime` AS {_quote(column)}")  # the event time the watermark strategy assigned
            elif kind == "computed":
                columns.append(f"{text} AS {_quote(column)}")
            elif kind == "metadata":
                columns.append(f"`rowtime` AS {_quote(column)}")
            else:
                columns.append(_quote(column))
        return Table(self, f"SELECT {', '.join(columns)} FROM {name}")

    def to_data_stream(self, table: Table) -> Any:
        """The table's rows as a DataStream (an insert-only table) of PyFlink Rows named by the table's columns, as
        PyFlink gives them (``Types.ROW_NAMED``): a function on them without ``output_type`` returns untyped records."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StructType, TimestampType

        from kindling.common.typeinfo import from_spark
        from kindling.connectors.base import INTERNAL_PREFIX
        from kindling.datastream.stream import ROWTIME, DataStream

        planned = table.planned
        if planned.updating:
            raise ValueError("to_data_stream takes an insert-only table; this one is updating (use to_changelog_stream)")
        df = planned.df
        if ROWTIME not in df.columns:  # no event time: records carry none, as a source's without watermarks
            df = df.withColumn(ROWTIME, F.lit(None).cast(TimestampType()))
        type_info = from_spark(StructType([f for f in df.schema.fields if not f.name.startswith(INTERNAL_PREFIX)]))
        return DataStream(self._env, df, name=str(table), event_time=planned.event_time, bounded=planned.bounded,
                          type_info=type_info)

    def to_changelog_stream(self, table: Table, target_schema: Any = None, changelog_mode: Any = None) -> Any:
        """The table's changelog as a DataStream of PyFlink Rows, each of its kind (``row.get_row_kind()``: ``+I``, and
        for an updating table ``-U``/``+U`` pairs and ``-D``), as Flink's ``toChangelogStream`` gives them."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StructType, TimestampType

        from kindling.common.typeinfo import ChangelogRowTypeInfo, from_spark
        from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN
        from kindling.datastream.stream import ROWTIME, DataStream

        if target_schema is not None or changelog_mode is not None:
            raise ValueError("to_changelog_stream(table) takes no target_schema or changelog_mode here: the rows keep the "
                             "table's columns and every change (Flink's default, ChangelogMode.all())")
        planned = self._session._plan(f"SELECT * FROM {table}", 1, "to_changelog_stream", retractions=True)
        df = planned.df
        if ROWKIND_COLUMN not in df.columns:
            df = df.withColumn(ROWKIND_COLUMN, F.lit("+I"))
        if ROWTIME not in df.columns:
            df = df.withColumn(ROWTIME, F.lit(None).cast(TimestampType()))
        fields = [f for f in df.schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
        row = from_spark(StructType(fields))
        type_info = ChangelogRowTypeInfo(row.get_field_types(), row.get_field_names())  # type: ignore[union-attr]
        df = df.select(*[F.col(f"`{f.name}`") for f in fields], F.col(ROWKIND_COLUMN).alias(ChangelogRowTypeInfo.KIND_FIELD),
                       *[F.col(f"`{c}`") for c in df.columns if c.startswith(INTERNAL_PREFIX) and c != ROWKIND_COLUMN])
        return DataStream(self._env, df, name=str(table), event_time=planned.event_time, bounded=planned.bounded,
                          type_info=type_info)


class StreamTableEnvironment(TableEnvironment):
    """A TableEnvironment on a given StreamExecutionEnvironment (``StreamTableEnvironment.create(env)``)."""

    @staticmethod
    def create(stream_execution_environment: Optional["StreamEnvironment"] = None,  # type: ignore[override]
               environment_settings: Optional[EnvironmentSettings] = None) -> "StreamTableEnvironment":
        from kindling.env import StreamEnvironment

        env = stream_execution_environment or StreamEnvironment.get_execution_environment()
        if environment_settings is not None and not environment_settings.is_streaming_mode():
            env.config.set("execution.runtime-mode", "batch")
        return StreamTableEnvironment(env)


def _missing(value: Any) -> bool:
    try:
        return bool(value != value)  # NaN and NaT
    except (TypeError, ValueError):
        return False


def _python(value: Any) -> Any:
    """A numpy or pandas scalar as the Python value from_elements infers a type from."""
    if hasattr(value, "to_pydatetime"):
        return value.to_pydatetime()
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value


def _internal(name: str) -> bool:
    """Catalog objects the Table API makes for itself (a Table's view, from_elements' and from_data_stream's tables)."""
    return name.startswith(("UnnamedTable_", "__kindling_"))


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _infer_type(values: list[Any], name: str) -> str:
    """Flink's type for a column of Python values (``from_elements`` without types)."""
    present = [v for v in values if v is not None]
    if not present:
        return "STRING"
    value = present[0]
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, Decimal):
        return "DECIMAL(38, 18)"
    if isinstance(value, dt.datetime):
        return "TIMESTAMP(6)"
    if isinstance(value, dt.date):
        return "DATE"
    if isinstance(value, (bytes, bytearray)):
        return "BYTES"
    if isinstance(value, (list, tuple)):
        inner = [v for seq in present for v in seq]
        return f"ARRAY<{_infer_type(inner, name)}>"
    raise TypeError(f"from_elements: cannot infer a Flink type for column '{name}' from {type(value).__name__} values; "
                    "give schema=DataTypes.ROW([DataTypes.FIELD(...), ...])")
