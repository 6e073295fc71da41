"""The session's in-memory catalog: tables (with their connector facts), views and functions.

Names are case-sensitive, as in Flink's default catalog. ``CREATE TABLE ... LIKE`` is resolved
here with Flink's merging rules: physical columns always come along; constraints, computed
(GENERATED) and metadata columns, options, partitions and watermarks are INCLUDING by default
and options OVERWRITING (the new table's options win).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Union

from pyspark.sql.types import StructType

from kindling.connectors.base import (
    TABLE_COLUMN_TYPES,
    TABLE_INSTANT_COLUMNS,
    TABLE_METADATA,
    TABLE_PARTITION_KEYS,
    TABLE_PRIMARY_KEY,
    rowtime_options,
)
from kindling.options import nearest
from kindling.sql.ddl import ColumnDef, CreateTable, CreateView, WatermarkDef
from kindling.sql.errors import SqlError
from kindling.sql.object_identifier import ObjectIdentifier
from kindling.sql.rowtime_source import StoredRowtime, stored_rowtime

_TIME_ATTRIBUTE_TYPE = re.compile(r"TIMESTAMP(_LTZ)?\([0-3]\)( NOT NULL)?")


def check_rowtime_type(flink_type: str, line: int) -> None:
    """Refuse a watermark on a column of another type than TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p from 0 to 3, with
    Flink's message (recorded from PyFlink 2.3): a BIGINT of epoch milliseconds or a TIMESTAMP(6) is no time field."""
    from kindling.sql.column_types import without_markers

    plain = without_markers(flink_type)
    if not _TIME_ATTRIBUTE_TYPE.fullmatch(plain):
        raise SqlError("Invalid data type of time field for watermark definition. The field must be of type TIMESTAMP(p) or "
                       f"TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to 3, but the time field type is {plain}",
                       line=line, construct="WATERMARK",
                       hint="a TIMESTAMP(3) column, or a computed one: ts AS TO_TIMESTAMP_LTZ(epoch_millis, 3)")


@dataclass
class CatalogTable:
    """A table as Flink's catalog keeps it: columns, watermark, keys and connector options."""

    name: str
    columns: list[ColumnDef]
    options: dict[str, str]
    watermark: Optional[WatermarkDef] = None
    primary_key: list[str] = field(default_factory=list)
    partition_keys: list[str] = field(default_factory=list)
    comment: Optional[str] = None
    line: int = 1
    temporary: bool = False  # CREATE TEMPORARY TABLE, create_temporary_table

    @property
    def connector(self) -> str:
        connector = self.options.get("connector")
        if not connector:
            raise SqlError(f"table '{self.name}' has no 'connector' option", line=self.line, construct="CREATE TABLE",
                           hint="WITH ('connector' = 'datagen' | 'kafka' | 'print' | 'blackhole' | ...)")
        return connector

    def connector_options(self) -> dict[str, str]:
        """The WITH options minus 'connector', plus the table facts connectors read."""
        options = {k: v for k, v in self.options.items() if k != "connector"}
        if self.primary_key:
            options[TABLE_PRIMARY_KEY] = ";".join(self.primary_key)
        if self.partition_keys:
            options[TABLE_PARTITION_KEYS] = ";".join(self.partition_keys)
        metadata = [[c.name, c.metadata_key or c.name, c.virtual] for c in self.columns if c.kind == "metadata"]
        if metadata:
            options[TABLE_METADATA] = json.dumps(metadata)
        instants = [c.name for c in self.columns if c.type is not None and c.type.flink.upper().startswith(("TIMESTAMP_LTZ", "TIMESTAMP WITH LOCAL"))]
        if instants:
            options[TABLE_INSTANT_COLUMNS] = ";".join(instants)
        typed = {c.name: c.type.flink for c in self.columns if c.kind == "physical" and c.type is not None}
        if typed:
            options[TABLE_COLUMN_TYPES] = json.dumps(typed)
        rowtime = self.event_time_source()
        if rowtime is not None:  # sources keeping a watermark per split read event time from it
            options.update(rowtime_options(rowtime.column, rowtime.conversion))
        return options

    def event_time_source(self) -> Optional[StoredRowtime]:
        """The stored column a source can read the rowtime from, and how (see ``rowtime_source``); None
        without a watermark or when the rowtime's expression cannot be traced to one column."""
        if self.watermark is None:
            return None
        return stored_rowtime(self.watermark.column, self.columns)

    def flink_types(self, streaming: bool) -> dict[str, Optional[str]]:
        """Each column's type as Flink's schemas print it (``kindling.sql.column_types``); None for a computed column
        whose type kindling does not derive. A primary key's columns are NOT NULL; the rowtime is marked on streams."""
        from kindling.sql.column_types import computed_type, declared_type

        types: dict[str, Optional[str]] = {}
        for column in self.columns:
            if column.kind != "computed":
                assert column.type is not None
                types[column.name] = declared_type(column.type.flink, column.type.nullable and column.name not in self.primary_key)
        for column in self.columns:
            if column.kind == "computed":
                types[column.name] = computed_type(column.expression or "", types)
        rowtime = self.watermark.column if self.watermark is not None else None
        if streaming and rowtime is not None and types.get(rowtime) is not None:
            types[rowtime] = f"{types[rowtime]} *ROWTIME*"
        return {c.name: types[c.name] for c in self.columns}

    def physical_columns(self) -> list[ColumnDef]:
        return [c for c in self.columns if c.kind == "physical"]

    def source_schema(self) -> StructType:
        """What the connector produces: physical columns then metadata columns."""
        columns = self.physical_columns() + [c for c in self.columns if c.kind == "metadata"]
        return StructType([c.type.field(c.name) for c in columns])  # type: ignore[union-attr]

    def sink_columns(self) -> list[ColumnDef]:
        """What an INSERT writes: physical and writable (non-virtual) metadata columns, in declaration order."""
        return [c for c in self.columns if c.kind == "physical" or (c.kind == "metadata" and not c.virtual)]

    def sink_schema(self) -> StructType:
        return StructType([c.type.field(c.name) for c in self.sink_columns()])  # type: ignore[union-attr]


@dataclass
class CatalogView:
    name: str
    query: str
    query_line: int
    column_names: list[str] = field(default_factory=list)
    # Views registered from the API (a DataFrame or DataStream) rather than SQL text.
    frame: Any = None
    temporary: bool = False  # CREATE TEMPORARY VIEW, create_temporary_view


CatalogObject = Union[CatalogTable, CatalogView]


class Catalog:
    """Tables, views and Python functions of one SQL session."""

    def __init__(self) -> None:
        self.objects: dict[str, CatalogObject] = {}
        self.functions: dict[str, Any] = {}

    # --- lookup -------------------------------------------------------------------------------
    def get(self, name: str, *, line: Optional[int] = None, construct: str = "query") -> CatalogObject:
        found = self.objects.get(name)
        if found is None:
            hint = nearest(name, self.objects) or next((n for n in self.objects if n.lower() == name.lower()), None)
            message = f"table or view '{name}' does not exist"
            if hint:
                message += f"; did you mean '{hint}'? (names are case-sensitive)"
            elif self.objects:
                message += f" (known: {', '.join(sorted(self.objects))})"
            raise SqlError(message, line=line, construct=construct, hint="CREATE TABLE name (...) WITH (...) before using it")
        return found

    def table(self, name: str, *, line: Optional[int] = None, construct: str = "INSERT") -> CatalogTable:
        found = self.get(name, line=line, construct=construct)
        if not isinstance(found, CatalogTable):
            raise SqlError(f"'{name}' is a view; only tables can be written", line=line, construct=construct,
                           hint="INSERT INTO <table created with CREATE TABLE ... WITH ('connector' = ...)>")
        return found

    def __contains__(self, name: str) -> bool:
        return name in self.objects

    def tables(self) -> list[str]:
        return sorted(self.objects)

    def views(self) -> list[str]:
        return sorted(n for n, o in self.objects.items() if isinstance(o, CatalogView))

    def temporary_tables(self) -> list[str]:
        """The temporary tables and views (Flink's ``listTemporaryTables`` lists both)."""
        return sorted(n for n, o in self.objects.items() if o.temporary)

    def temporary_views(self) -> list[str]:
        return sorted(n for n, o in self.objects.items() if isinstance(o, CatalogView) and o.temporary)

    # --- changes ------------------------------------------------------------------------------
    def create_table(self, statement: CreateTable) -> bool:
        """Add a table; False when it exists and IF NOT EXISTS was given."""
        if statement.name in self.objects:
            if statement.if_not_exists:
                return False
            self._check_shadowing(statement.name, statement.temporary, statement.line, "CREATE TABLE")
            raise SqlError(f"table or view '{statement.name}' already exists", line=statement.line, construct="CREATE TABLE",
                           hint="CREATE TABLE IF NOT EXISTS ..., or DROP TABLE first")
        table = CatalogTable(statement.name, list(statement.columns), dict(statement.options), statement.watermark,
                             list(statement.primary_key), list(statement.partition_keys), statement.comment, statement.line)
        if statement.like is not None:
            table = self._merge_like(table, statement)
        table.temporary = statement.temporary
        self._check_table(table)
        self.objects[table.name] = table
        return True

    def create_view(self, statement: CreateView) -> bool:
        if statement.name in self.objects:
            if statement.if_not_exists:
                return False
            self._check_shadowing(statement.name, statement.temporary, statement.line, "CREATE VIEW")
            raise SqlError(f"table or view '{statement.name}' already exists", line=statement.line, construct="CREATE VIEW",
                           hint="CREATE VIEW IF NOT EXISTS ..., or DROP VIEW first")
        self.objects[statement.name] = CatalogView(statement.name, statement.query, statement.query_line, statement.column_names,
                                                   temporary=statement.temporary)
        return True

    def _check_shadowing(self, name: str, temporary: bool, line: int, construct: str) -> None:
        """Flink lets a temporary object hide a permanent one of the same name; kindling's one namespace refuses it."""
        existing = self.objects[name]
        if temporary and not existing.temporary:
            raise SqlError(f"a temporary table or view cannot hide the permanent {_kind(existing)} '{name}' in kindling: "
                           "temporary and permanent objects share one namespace", line=line, construct=construct,
                           hint=f"give the temporary object another name, or DROP {_kind(existing).upper()} {name} first")

    def put_view(self, name: str, frame: Any) -> None:
        """A temporary view over a DataFrame or DataStream registered from Python (replaces one of the same name)."""
        self.objects[name] = CatalogView(name, "", 1, [], frame, temporary=True)

    def put_query_view(self, name: str, query: str, temporary: bool = True) -> None:
        """A view over a Flink SQL query registered from Python, e.g. a Table API table (replaces one of the same name)."""
        self.objects[name] = CatalogView(name, query, 1, [], temporary=temporary)

    def drop(self, kind: str, name: str, if_exists: bool, line: int, temporary: bool = False) -> bool:
        """Drop a table, view or function; False when it did not exist and ``if_exists``.

        As Flink: ``DROP TEMPORARY TABLE|VIEW`` drops only a temporary object of that kind, and a plain ``DROP`` of a
        temporary object fails (Flink would look for a permanent one under it)."""
        if kind == "FUNCTION":
            if name not in self.functions:
                if if_exists:
                    return False
                raise SqlError(f"function '{name}' does not exist", line=line, construct="DROP FUNCTION")
            del self.functions[name]
            return True
        found = self.objects.get(name)
        expected = CatalogTable if kind == "TABLE" else CatalogView
        construct = f"DROP {'TEMPORARY ' if temporary else ''}{kind}"
        if temporary and (found is None or not found.temporary or not isinstance(found, expected)):
            if if_exists:
                return False
            hint = f"DROP {_kind(found).upper()} {name}" if found is not None else None
            raise SqlError(f"Temporary table or view with identifier '{_identifier(name, quoted=False)}' does not exist.",
                           line=line, construct=construct, hint=hint)
        if found is not None and found.temporary and not temporary:
            raise SqlError(f"Temporary {_kind(found)} with identifier '{_identifier(name)}' exists. Drop it first before "
                           f"removing the permanent {kind.lower()}.", line=line, construct=construct,
                           hint=f"DROP TEMPORARY {_kind(found).upper()} {name}")
        if found is None:
            if if_exists:
                return False
            self.get(name, line=line, construct=construct)
        if not isinstance(found, expected):
            other = "VIEW" if kind == "TABLE" else "TABLE"
            raise SqlError(f"'{name}' is a {other.lower()}, not a {kind.lower()}", line=line, construct=f"DROP {kind}",
                           hint=f"DROP {other} {name}")
        del self.objects[name]
        return True

    # --- checks -------------------------------------------------------------------------------
    def _check_table(self, table: CatalogTable) -> None:
        names = [c.name for c in table.columns]
        if not names:
            raise SqlError(f"table '{table.name}' has no columns", line=table.line, construct="CREATE TABLE")
        for key in table.primary_key:
            if key not in names:
                raise SqlError(f"primary key column '{key}' is not a column of '{table.name}'", line=table.line,
                               construct="PRIMARY KEY", hint=f"one of {', '.join(names)}")
            column = next(c for c in table.columns if c.name == key)
            if column.kind != "physical":
                raise SqlError(f"primary key column '{key}' must be a physical column", line=column.line, construct="PRIMARY KEY")
        for key in table.partition_keys:
            if key not in names:
                raise SqlError(f"partition column '{key}' is not a column of '{table.name}'", line=table.line,
                               construct="PARTITIONED BY", hint=f"one of {', '.join(names)}")
        if table.watermark is not None and table.watermark.column not in names:
            hint = nearest(table.watermark.column, names)
            raise SqlError(f"WATERMARK FOR '{table.watermark.column}': no such column in '{table.name}'"
                           + (f"; did you mean '{hint}'?" if hint else ""), line=table.watermark.line, construct="WATERMARK",
                           hint="WATERMARK FOR <a TIMESTAMP(3) or TIMESTAMP_LTZ(3) column> AS col - INTERVAL '5' SECOND")
        if table.watermark is not None:
            rowtime_type = table.flink_types(streaming=False)[table.watermark.column]
            if rowtime_type is not None:  # None: a computed column typed once its query is planned
                check_rowtime_type(rowtime_type, table.watermark.line)

    def _merge_like(self, table: CatalogTable, statement: CreateTable) -> CatalogTable:
        like = statement.like
        assert like is not None
        source = self.get(like.table, line=like.line, construct="LIKE")
        if not isinstance(source, CatalogTable):
            raise SqlError(f"LIKE '{like.table}': a view cannot be the source of LIKE", line=like.line, construct="LIKE")
        strategy = {feature: "INCLUDING" for feature in ("CONSTRAINTS", "GENERATED", "METADATA", "PARTITIONS", "WATERMARKS")}
        strategy["OPTIONS"] = "OVERWRITING"
        for how, feature in like.options:
            if feature == "ALL":
                for key in strategy:
                    strategy[key] = how if not (key == "OPTIONS" and how == "INCLUDING") else "INCLUDING"
            else:
                strategy[feature] = how
        kinds = {"computed": "GENERATED", "metadata": "METADATA"}
        inherited: list[ColumnDef] = []
        own = {c.name: c for c in table.columns}
        for column in source.columns:
            feature = kinds.get(column.kind)
            if feature is not None and strategy[feature] == "EXCLUDING":
                continue
            if column.name in own:
                if column.kind == "physical" or strategy.get(feature or "", "INCLUDING") != "OVERWRITING":
                    raise SqlError(f"column '{column.name}' is defined both in '{table.name}' and in LIKE '{source.name}'",
                                   line=own[column.name].line, construct="LIKE",
                                   hint=f"LIKE {source.name} (OVERWRITING GENERATED) or rename the column")
                continue
            inherited.append(replace(column))
        merged = replace(table, columns=inherited + list(table.columns))
        if strategy["WATERMARKS"] != "EXCLUDING" and source.watermark is not None:
            if table.watermark is not None and strategy["WATERMARKS"] == "INCLUDING":
                raise SqlError(f"both '{table.name}' and LIKE '{source.name}' define a watermark", line=table.watermark.line,
                               construct="LIKE", hint=f"LIKE {source.name} (OVERWRITING WATERMARKS)")
            if table.watermark is None:
                merged.watermark = source.watermark
        if strategy["CONSTRAINTS"] != "EXCLUDING" and source.primary_key and not table.primary_key:
            merged.primary_key = list(source.primary_key)
        if strategy["PARTITIONS"] != "EXCLUDING" and source.partition_keys and not table.partition_keys:
            merged.partition_keys = list(source.partition_keys)
        if strategy["OPTIONS"] == "EXCLUDING":
            merged.options = dict(table.options)
        else:
            duplicate = [k for k in table.options if k in source.options]
            if strategy["OPTIONS"] == "INCLUDING" and duplicate:
                raise SqlError(f"option '{duplicate[0]}' is set both in '{table.name}' and in LIKE '{source.name}'", line=table.line,
                               construct="LIKE", hint=f"LIKE {source.name} (OVERWRITING OPTIONS)")
            merged.options = {**source.options, **table.options}
        return merged


def _kind(obj: Optional[CatalogObject]) -> str:
    return "view" if isinstance(obj, CatalogView) else "table"


def _identifier(name: str, quoted: bool = True) -> str:
    """The object's full name in Flink's default catalog, as Flink's messages print it."""
    identifier = ObjectIdentifier.in_default_database(name)
    return identifier.as_serializable_string() if quoted else identifier.as_summary_string()


def describe_rows(obj: CatalogObject, types: Optional[dict[str, Optional[str]]] = None, streaming: bool = True) -> list[tuple]:
    """DESCRIBE's rows as Flink prints them: name, type (with a time attribute's marker), null, key, extras (a computed
    column's expression, a metadata column's key), watermark. ``types``: the columns' Flink types as the planned query
    or table gives them (``column_types.known_types``); a table's declared ones are used without. A type or expression
    kindling does not know as Flink prints it is refused, naming the column."""
    from kindling.sql.column_types import expression_text, nullable, without_markers

    def row_type(name: str, flink_type: Optional[str], what: str) -> tuple[str, bool]:
        if flink_type is None:
            raise SqlError(f"DESCRIBE {obj.name}: kindling does not derive Flink's type of {what} '{name}'", construct="DESCRIBE",
                           hint="DESCRIBE a table's or view's columns that read columns as they are, or SELECT the column to see its values")
        return nullable(flink_type), not without_markers(flink_type).endswith(" NOT NULL")

    if isinstance(obj, CatalogView):
        assert types is not None
        return [(name, *row_type(name, flink_type, "column"), None, None, None) for name, flink_type in types.items()]
    declared = obj.flink_types(streaming)
    watermark = None
    if obj.watermark is not None:
        watermark = expression_text(obj.watermark.expression)
        if watermark is None:
            raise SqlError(f"DESCRIBE {obj.name}: kindling does not print the watermark expression '{obj.watermark.expression}' "
                           "as Flink does", construct="DESCRIBE")
    rows = []
    for column in obj.columns:
        flink_type = declared[column.name] if declared[column.name] is not None else (types or {}).get(column.name)
        type_name, is_nullable = row_type(column.name, flink_type, f"{column.kind} column")
        extras = None
        if column.kind == "computed":
            text = expression_text(column.expression or "")
            if text is None:
                raise SqlError(f"DESCRIBE {obj.name}: kindling does not print the expression of computed column '{column.name}' "
                               f"(AS {column.expression}) as Flink does", construct="DESCRIBE")
            extras = f"AS {text}"
        elif column.kind == "metadata":
            extras = "METADATA" + (f" FROM '{column.metadata_key}'" if column.metadata_key else "") + (" VIRTUAL" if column.virtual else "")
        key = f"PRI({', '.join(obj.primary_key)})" if column.name in obj.primary_key else None
        rows.append((column.name, type_name, is_nullable, key, extras,
                     watermark if obj.watermark is not None and obj.watermark.column == column.name else None))
    return rows


DESCRIBE_COLUMNS = ["name", "type", "null", "key", "extras", "watermark"]
