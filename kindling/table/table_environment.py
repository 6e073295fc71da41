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
from typing import TYPE_CHECKING, Any, Iterable, NoReturn, Optional, Sequence, Union

from kindling.sql.catalog import CatalogTable
from kindling.table.catalog import ObjectIdentifier
from kindling.table.descriptors import Schema, TableDescriptor
from kindling.table.module import CORE, ModuleEntry
from kindling.table.table import Table
from kindling.table.types import DataType, _quote

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment
    from kindling.sql.result import TableResult
    from kindling.table.table_pipeline import TablePipeline

_SOURCE_IDS = itertools.count()
_NO_COMPILED_PLANS = ("a kindling job is Spark streaming queries, not a Flink plan to persist; running the same INSERT "
                      "again (execute_sql) resumes it from its checkpoint")
_ONE_CATALOG = "kindling has one in-memory catalog, 'default_catalog' (get_current_catalog())"
_NO_JAVA = "kindling runs no Java functions; register a Python one with create_temporary_function(name, udf)"
ANONYMOUS_PREFIX = "__kindling_anonymous_"  # a table only a TableDescriptor describes (a sink, from_descriptor): unlisted
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

    def get_local_timezone(self) -> str:
        """The session time zone's id (kindling's default is UTC)."""
        return self.get("table.local-time-zone") or "UTC"

    def set_idle_state_retention(self, duration: dt.timedelta) -> None:
        """Keep a key's state this long after its last access (``table.exec.state.ttl``; zero: forever)."""
        self.set("table.exec.state.ttl", f"{int(duration.total_seconds() * 1000)} ms")

    def get_idle_state_retention(self) -> dt.timedelta:
        from kindling.durations import to_millis

        return dt.timedelta(milliseconds=to_millis(self.get("table.exec.state.ttl") or "0", name="table.exec.state.ttl"))

    def add_configuration(self, configuration: Any) -> None:
        """Set every option of a ``Configuration`` (or a dict) in this session."""
        items = configuration.to_dict() if hasattr(configuration, "to_dict") else dict(configuration)
        for key, value in items.items():
            self.set(key, str(value))

    def to_map(self) -> dict[str, str]:
        """The options set in this session and its environment's configuration."""
        session = self._t_env._session
        return {**{k: str(v) for k, v in session.env.config.to_dict().items()}, **session.session_options}


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

    def print_explain(self, *extra_details: Any) -> None:
        print(self.explain(*extra_details))

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
        found = self._session.catalog.get(path, construct="from_path")
        return Table(self, f"SELECT * FROM {_quote(path)}", catalog_table=found.name if isinstance(found, CatalogTable) else None)

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
        path = f"{ANONYMOUS_PREFIX}{target.connector}_{next(_ANONYMOUS_IDS)}"
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
        """Drop a temporary view; False if there is none of that name (a permanent view is left alone, as in Flink)."""
        return self._session.catalog.drop("VIEW", view_path, True, 1, temporary=True)

    def drop_temporary_table(self, table_path: str) -> bool:
        """Drop a temporary table; False if there is none of that name."""
        return self._session.catalog.drop("TABLE", table_path, True, 1, temporary=True)

    def drop_table(self, table_path: str, ignore_if_not_exists: bool = True) -> bool:
        """Drop a permanent table; True if it existed. A temporary one is dropped with ``drop_temporary_table``
        (Flink fails here with "Temporary table ... exists", as kindling does)."""
        return self._session.catalog.drop("TABLE", table_path, ignore_if_not_exists, 1)

    def drop_view(self, view_path: str, ignore_if_not_exists: bool = True) -> bool:
        """Drop a permanent view; True if it existed (a temporary one: ``drop_temporary_view``)."""
        return self._session.catalog.drop("VIEW", view_path, ignore_if_not_exists, 1)

    def create_view(self, view_path: str, table: Table, ignore_if_exists: bool = False) -> None:
        """Register ``table`` as a permanent view of kindling's in-memory catalog."""
        if ignore_if_exists and view_path in self._session.catalog.objects:
            return
        if view_path in self._session.catalog.objects:
            raise ValueError(f"Could not execute CreateView in path {ObjectIdentifier.in_default_database(view_path)}: "
                             f"a table or view '{view_path}' already exists")
        self._session.catalog.put_query_view(view_path, f"SELECT * FROM {table}", temporary=False)

    def drop_temporary_function(self, path: str) -> bool:
        """Drop a function registered with ``create_temporary_function`` (or its system and permanent variants, one
        kind in kindling); True if it existed."""
        existed = path in self._session.catalog.functions
        if existed:
            self._session.execute_sql(f"DROP TEMPORARY FUNCTION {_quote(path)}")
        return existed

    drop_function = drop_temporary_function
    drop_temporary_system_function = drop_temporary_function

    # --- Python dependencies (the environment's) --------------------------------------------------
    def add_python_file(self, file_path: str) -> None:
        """Make a Python file or directory importable by the program and its user functions."""
        self._env.add_python_file(file_path)

    def set_python_requirements(self, requirements_file_path: str, requirements_cache_dir: Optional[str] = None) -> None:
        """Check that the interpreter running Python functions meets a requirements file (PyFlink installs it)."""
        self._env.set_python_requirements(requirements_file_path, requirements_cache_dir)

    def add_python_archive(self, archive_path: str, target_dir: Optional[str] = None) -> None:
        self._env.add_python_archive(archive_path, target_dir)

    def list_user_defined_functions(self) -> list[str]:
        """The names of the functions registered here (``create_temporary_function``, ``CREATE FUNCTION``) in lower
        case, as Flink's catalog keeps function names; not those kindling registers for a ``@udf`` called inline in a
        Table API expression (Flink registers none)."""
        return self._session.user_function_names()

    def list_functions(self) -> list[str]:
        """The names of the functions usable here: Flink's built-in functions (as Flink's ``list_functions()`` names
        them: ``plus``, ``charLength``, ``ARRAY_APPEND``, ...) that kindling supports, and the user-defined functions,
        sorted as Flink sorts them. Flink's functions kindling does not support are left out, with the reason in
        ``kindling.sql.builtin_functions.NOT_LISTED``, rather than listed and refused when called."""
        from kindling.sql.builtin_functions import listed_functions

        return listed_functions(self.list_user_defined_functions())

    def list_modules(self) -> list[str]:
        """The modules in use: Flink's ``core``, the only one kindling has."""
        return [CORE]

    def list_full_modules(self) -> list[ModuleEntry]:
        """The modules loaded, with whether each is used: ``core``, used."""
        return [ModuleEntry(CORE, True)]

    def load_module(self, module_name: str, module: Any) -> None:
        _unsupported("load_module", "kindling's functions are Flink's core module's (list_functions()) and "
                                    "user-defined functions (create_temporary_function)")

    def unload_module(self, module_name: str) -> None:
        _unsupported("unload_module", "kindling's one module, core, holds the built-in functions")

    def use_modules(self, *module_names: str) -> None:
        """Use the given modules: only ``core``, which is in use already (kindling has no other)."""
        if list(module_names) != [CORE]:
            _unsupported("use_modules", f"kindling has one module, '{CORE}', not {', '.join(map(repr, module_names))}")

    # --- objects kindling does not have: Flink's answer for an environment without any ------------------
    def list_materialized_tables(self) -> list[str]:
        """None: kindling has no materialized tables (Flink's answer for an environment without any)."""
        return []

    def list_models(self) -> list[str]:
        """None: kindling has no models (``create_model`` is refused)."""
        return []

    def list_temporary_models(self) -> list[str]:
        """None: kindling has no models."""
        return []

    def drop_model(self, model_path: str, ignore_if_not_exists: bool = True) -> bool:
        """False (there is no model to drop); with ``ignore_if_not_exists=False`` Flink's error that it does not exist."""
        if not ignore_if_not_exists:
            raise ValueError(f"Model with identifier '{ObjectIdentifier.in_default_database(model_path).as_summary_string()}' "
                             "does not exist.")
        return False

    def drop_temporary_model(self, model_path: str) -> bool:
        """False: there is no temporary model to drop."""
        return False

    def create_model(self, model_path: str, model_descriptor: Any, ignore_if_exists: bool = False) -> None:
        _unsupported("create_model", "kindling has no models (ML_PREDICT); call a Python function with @udf instead")

    def create_temporary_model(self, model_path: str, model_descriptor: Any, ignore_if_exists: bool = False) -> None:
        _unsupported("create_temporary_model", "kindling has no models (ML_PREDICT); call a Python function with @udf instead")

    def compile_plan_sql(self, stmt: str) -> Any:
        _unsupported("compile_plan_sql", _NO_COMPILED_PLANS)

    def load_plan(self, plan_reference: Any) -> Any:
        _unsupported("load_plan", _NO_COMPILED_PLANS)

    def execute_plan(self, plan_reference: Any) -> Any:
        _unsupported("execute_plan", _NO_COMPILED_PLANS)

    def create_catalog(self, catalog_name: str, catalog_descriptor: Any) -> None:
        _unsupported("create_catalog", _ONE_CATALOG)

    def register_catalog(self, catalog_name: str, catalog: Any) -> None:
        _unsupported("register_catalog", _ONE_CATALOG)

    def get_catalog(self, catalog_name: str) -> Any:
        _unsupported("get_catalog", _ONE_CATALOG)

    def create_java_function(self, path: str, function_class_name: str, ignore_if_exists: Optional[bool] = None) -> None:
        _unsupported("create_java_function", _NO_JAVA)

    def create_java_temporary_function(self, path: str, function_class_name: str) -> None:
        _unsupported("create_java_temporary_function", _NO_JAVA)

    def create_java_temporary_system_function(self, name: str, function_class_name: str) -> None:
        _unsupported("create_java_temporary_system_function", _NO_JAVA)

    def explain_sql(self, stmt: str, *extra_details: Any) -> str:
        """The plan of a query or INSERT statement (``EXPLAIN stmt``)."""
        return self._session.execute_sql(f"EXPLAIN {stmt}").collect()[0][0]

    def from_descriptor(self, descriptor: TableDescriptor) -> Table:
        """A table read through a ``TableDescriptor`` without registering it under a name of the user's."""
        path = f"{ANONYMOUS_PREFIX}{descriptor.connector}_{next(_ANONYMOUS_IDS)}"
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

    def list_temporary_tables(self) -> list[str]:
        """The temporary tables and views, sorted (``CREATE TEMPORARY ...``, ``create_temporary_table/view``)."""
        return [n for n in self._session.catalog.temporary_tables() if not _internal(n)]

    def list_temporary_views(self) -> list[str]:
        return [n for n in self._session.catalog.temporary_views() if not _internal(n)]

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

    def from_changelog_stream(self, data_stream: Any, schema: Any = None, changelog_mode: Any = None) -> Table:
        """A table of a changelog stream: each Row is a change of its kind (``+I``, ``-U``/``+U``, ``-D``), which queries
        over the table apply as Flink's ``fromChangelogStream`` does (ChangelogMode.all()).

        The stream's Rows must still carry their kinds: a stream of ``to_changelog_stream``, or ``from_collection`` of
        ``Row.of_kind(...)`` records typed ``Types.ROW``/``ROW_NAMED`` (also filtered). kindling's other operators give
        Rows without kinds, so such a stream is refused rather than read as inserts.

        >>> ds = env.from_collection([Row.of_kind(RowKind.INSERT, "Alice", 12), Row.of_kind(RowKind.UPDATE_BEFORE, "Alice", 12),
        ...                           Row.of_kind(RowKind.UPDATE_AFTER, "Alice", 100)], Types.ROW([Types.STRING(), Types.INT()]))   # doctest: +SKIP
        >>> t_env.from_changelog_stream(ds).execute().print()   # doctest: +SKIP
        """
        from kindling.common.typeinfo import ChangelogRowTypeInfo
        from kindling.connectors.base import ROWKIND_COLUMN

        if schema is not None or changelog_mode is not None:
            raise ValueError("from_changelog_stream(data_stream) takes no schema or changelog_mode here: the table has the "
                             "stream's fields and applies every change kind (Flink's default, ChangelogMode.all())")
        info = data_stream.get_type()
        if not isinstance(info, ChangelogRowTypeInfo):
            raise ValueError(f"from_changelog_stream needs Rows that keep their row kinds, and this stream's records are "
                             f"{info!r}: in kindling a stream of to_changelog_stream, or from_collection of Row.of_kind(...) "
                             "records typed Types.ROW/ROW_NAMED, keeps them; a function's output (map, process, ...) does not")
        kind = ChangelogRowTypeInfo.KIND_FIELD
        changes = data_stream._transform(lambda df: df.withColumnRenamed(kind, ROWKIND_COLUMN), "from_changelog_stream")
        changes._type_info = None  # kindling's rows: the fields as columns, the kind internal
        name = f"__kindling_stream_{next(_SOURCE_IDS)}"
        self._session.create_temporary_view(name, changes)
        return Table(self, f"SELECT * FROM {name}")

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
        from pyspark.sql.types import StructType

        from kindling.common.typeinfo import from_spark
        from kindling.connectors.base import INTERNAL_PREFIX

        df, planned = self._insert_only_frame(
            table, "to_data_stream takes an insert-only table; this one is updating (use to_changelog_stream)")
        type_info = from_spark(StructType([f for f in df.schema.fields if not f.name.startswith(INTERNAL_PREFIX)]))
        return self._stream(df, table, planned, type_info)

    def to_changelog_stream(self, table: Table, target_schema: Any = None, changelog_mode: Any = None) -> Any:
        """The table's changelog as a DataStream of PyFlink Rows, each of its kind (``row.get_row_kind()``: ``+I``, and
        for an updating table ``-U``/``+U`` pairs and ``-D``), as Flink's ``toChangelogStream`` gives them."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StructType

        from kindling.common.typeinfo import ChangelogRowTypeInfo, from_spark
        from kindling.connectors.base import ROWKIND_COLUMN

        if target_schema is not None or changelog_mode is not None:
            raise ValueError("to_changelog_stream(table) takes no target_schema or changelog_mode here: the rows keep the "
                             "table's columns and every change (Flink's default, ChangelogMode.all())")
        df, fields, planned = self._changelog_frame(table, "to_changelog_stream")
        row = from_spark(StructType(fields))
        type_info = ChangelogRowTypeInfo(row.get_field_types(), row.get_field_names())  # type: ignore[union-attr]
        df = df.select(*[F.col(f"`{f.name}`") for f in fields], F.col(ROWKIND_COLUMN).alias(ChangelogRowTypeInfo.KIND_FIELD),
                       *self._internal_columns(df))
        return self._stream(df, table, planned, type_info)

    def to_append_stream(self, table: Table, type_info: Any) -> Any:
        """An insert-only table's rows as a DataStream of ``type_info`` (``Types.ROW``, ``Types.ROW_NAMED`` or
        ``Types.TUPLE``), its fields taken by position, as PyFlink's ``to_append_stream``.

        >>> t_env.to_append_stream(table, Types.ROW([Types.STRING(), Types.LONG()])).print()   # doctest: +SKIP
        """
        df, planned = self._insert_only_frame(
            table, "toAppendStream doesn't support consuming update changes, which this table's query produces "
                   "(use to_retract_stream or to_changelog_stream)")
        columns = self._positional(df, type_info, "to_append_stream")
        return self._stream(df.select(*columns, *self._internal_columns(df)), table, planned, type_info)

    def to_retract_stream(self, table: Table, type_info: Any) -> Any:
        """The table's changes as a DataStream of ``(flag, row)`` tuples: True with each row added (``+I``, ``+U``),
        False with each row retracted (``-U``, ``-D``); the row is of ``type_info`` (fields by position) and keeps its
        kind, as PyFlink's ``to_retract_stream``.

        >>> t_env.to_retract_stream(totals, Types.ROW([Types.STRING(), Types.LONG()])).print()   # doctest: +SKIP
        """
        from pyspark.sql import functions as F

        from kindling.common.typeinfo import ChangelogRowTypeInfo, RetractTypeInfo
        from kindling.connectors.base import ROWKIND_COLUMN

        df, _, planned = self._changelog_frame(table, "to_retract_stream")
        retract = RetractTypeInfo(type_info)
        fields = self._positional(df, type_info, "to_retract_stream")
        if isinstance(retract.field_types[1], ChangelogRowTypeInfo):
            fields.append(F.col(ROWKIND_COLUMN).alias(ChangelogRowTypeInfo.KIND_FIELD))
        df = df.select(F.col(ROWKIND_COLUMN).isin("+I", "+U").alias("f0"), F.struct(*fields).alias("f1"), *self._internal_columns(df))
        return self._stream(df, table, planned, retract)

    def _changelog_frame(self, table: Table, method: str) -> tuple[Any, list[Any], Any]:
        """The table's changes (its row kind in ``ROWKIND_COLUMN``, an event time column), its visible fields, its plan."""
        from pyspark.sql import functions as F

        from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN

        planned = self._session._plan(f"SELECT * FROM {table}", 1, method, retractions=True)
        df = self._with_event_time(planned.df)
        if ROWKIND_COLUMN not in df.columns:
            df = df.withColumn(ROWKIND_COLUMN, F.lit("+I"))
        return df, [f for f in df.schema.fields if not f.name.startswith(INTERNAL_PREFIX)], planned

    def _insert_only_frame(self, table: Table, updating_refusal: str) -> tuple[Any, Any]:
        """An insert-only table's rows with an event time column, and its plan; an updating table is refused."""
        planned = table.planned
        if planned.updating:
            raise ValueError(updating_refusal)
        return self._with_event_time(planned.df), planned

    @staticmethod
    def _with_event_time(df: Any) -> Any:
        """``df`` with the records' event time column: NULL where the table has none (as a source's without
        watermarks)."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import TimestampType

        from kindling.datastream.stream import ROWTIME

        return df if ROWTIME in df.columns else df.withColumn(ROWTIME, F.lit(None).cast(TimestampType()))

    @staticmethod
    def _positional(df: Any, type_info: Any, method: str) -> list[Any]:
        """The table's visible columns as ``type_info``'s fields, by position (cast to the fields' types)."""
        from pyspark.sql import functions as F

        from kindling.common.typeinfo import RowTypeInfo
        from kindling.connectors.base import INTERNAL_PREFIX

        if not isinstance(type_info, RowTypeInfo):
            raise ValueError(f"{method}: the type information must be Types.ROW, Types.ROW_NAMED or Types.TUPLE, got {type_info!r}")
        visible = [c for c in df.columns if not c.startswith(INTERNAL_PREFIX)]
        fields = type_info.record_schema().fields
        if len(fields) != len(visible):
            raise ValueError(f"{method}: the table has {len(visible)} columns ({', '.join(visible)}) but {type_info!r} has "
                             f"{len(fields)} fields; they are matched by position")
        types = {f.name: f.dataType for f in df.schema.fields}
        for column, field in zip(visible, fields):
            if not _widens_to(types[column], field.dataType):
                raise ValueError(f"{method}: column '{column}' is {types[column].simpleString()} but field {field.name} of "
                                 f"{type_info!r} is {field.dataType.simpleString()}; the types must match (Flink's rule)")
        return [F.col(f"`{c}`").cast(f.dataType).alias(f.name) for c, f in zip(visible, fields)]

    @staticmethod
    def _internal_columns(df: Any) -> list[Any]:
        from pyspark.sql import functions as F

        from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN

        return [F.col(f"`{c}`") for c in df.columns if c.startswith(INTERNAL_PREFIX) and c != ROWKIND_COLUMN]

    def _stream(self, df: Any, table: Table, planned: Any, type_info: Any) -> Any:
        from kindling.datastream.stream import DataStream

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


_INTEGRAL_WIDTHS = {"tinyint": 1, "smallint": 2, "int": 4, "bigint": 8}


def _widens_to(source: Any, target: Any) -> bool:
    """Whether a column of Spark type ``source`` is a field of ``target`` without loss: the same type, a wider integer,
    FLOAT to DOUBLE, or one of Spark's two timestamp types for the other (PyFlink's type information has one)."""
    if source == target:
        return True
    a, b = source.simpleString(), target.simpleString()
    if a in _INTEGRAL_WIDTHS and b in _INTEGRAL_WIDTHS:
        return _INTEGRAL_WIDTHS[a] <= _INTEGRAL_WIDTHS[b]
    return (a, b) == ("float", "double") or {a, b} == {"timestamp", "timestamp_ntz"}


def _unsupported(method: str, reason: str) -> NoReturn:
    """Refuse a TableEnvironment method of PyFlink's that kindling does not have, naming it and what to do instead."""
    raise NotImplementedError(f"TableEnvironment.{method} is a PyFlink API that kindling does not support: {reason}")


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
