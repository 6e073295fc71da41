"""PyFlink's ``Table``: a query of the SQL planner, registered as a view, that operations build on.

Every Table is a view in the session's catalog (named ``UnnamedTable_N``, Flink's ``UnnamedTable$N`` with a name Spark accepts, which is what
``str(table)`` gives, so ``"SELECT * FROM %s" % table`` works) over a Flink SQL query; ``select``,
``where``, ``group_by``, ``window`` ... make a new Table whose query reads the previous one. The SQL
planner plans the whole chain when the Table runs: one planner for SQL and the Table API.

>>> from kindling.table import EnvironmentSettings, TableEnvironment
>>> from kindling.table.expressions import col
>>> t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())   # doctest: +SKIP
>>> orders = t_env.from_elements([(1, "apple", 3), (2, "pear", 5)], ["id", "fruit", "amount"])   # doctest: +SKIP
>>> orders.where(col("amount") > 4).select(col("fruit")).execute().print()   # doctest: +SKIP
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from kindling.sql.aggregate_functions import FLAT_AGGREGATE_RESULT
from kindling.sql.group_aggregate import AGGREGATE_FUNCTIONS
from kindling.sql.tokens import function_calls, significant, tokenize
from kindling.table.column_functions import expand_call, expand_fields
from kindling.table.expressions import WINDOW_PROPERTY, Expression, _quote, col, function_name
from kindling.table.window import GroupWindow, OverWindow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from kindling.sql.result import TableResult
    from kindling.sql.session import PlannedQuery
    from kindling.table.table_environment import TableEnvironment
    from kindling.table.table_pipeline import TablePipeline
    from kindling.table.table_schema import ResolvedSchema, TableSchema

_TABLE_IDS = itertools.count()


_RESULT = "_kindling_row_result"  # not internal: the schema of a Table shows it
_WINDOW_COLUMN = "_kindling_window_"  # a window aggregate's window properties, for the select after it


def _row_input_call(table: "Table", func: Any) -> Expression:
    """A row-based operation's function call: ``func`` as called (an expression), or, not called, with the table's
    columns as one Row (PyFlink's ``with_columns(col('*'))``), keeping the aliases given to the function."""
    if isinstance(func, Expression):
        return expand_call(func, lambda: table.get_schema().fieldNames())  # f(with_columns(col('*')))
    if not hasattr(func, "taking_row"):
        raise TypeError(f"a row-based operation takes a udf/udaf or a call of one, got {type(func).__name__}")
    names = table.get_schema().fieldNames()
    call = func.taking_row(names)(*[col(n) for n in names])
    aliases = getattr(func, "alias_names", None)
    return call.alias(*aliases) if aliases else call


def _fields(fields: tuple[Any, ...], named: bool = False, start: int = 0) -> tuple[str, dict[str, Any]]:
    """The SQL of a list of fields (expressions, or SQL text) and the Python functions they call; with ``named``
    (a projection), an expression that is neither a column nor aliased is named ``_c<position>`` as the Table API
    names it, its position in the resulting row counted from ``start`` (the columns before the fields); a column's
    CAST is named ``<column>-<type>`` (recorded from PyFlink 2.3: ``col('n').cast(DataTypes.STRING())`` is
    ``n-STRING``)."""
    functions: dict[str, Any] = {}
    texts = []
    for position, field in enumerate(fields, start=start):
        if isinstance(field, Expression):
            functions.update(field._functions)
            name = field._projection_name or f"_c{position}"
            texts.append(field._sql if field._output_name is not None or not named else f"{field._sql} AS {_quote(name)}")
        else:
            texts.append(str(field))
    return ", ".join(texts), functions


def _unique_names(fields: tuple[Any, ...], columns: Callable[[], list[str]], start: int = 0, before: Sequence[str] = ()) -> None:
    """Refuse a projection whose columns would repeat a name, as Flink's Table API does ("Ambiguous column name: a");
    the names are those ``_fields`` gives, after the ``before`` columns (``add_columns``); ``col('*')`` is the input's
    ``columns``. (kindling's SQL would number a repeated name, as Flink SQL's views do.)"""
    if len(fields) + len(before) < 2:
        return
    names = list(before)
    for position, field in enumerate(fields, start=start):
        if isinstance(field, Expression):
            star = field._output_name == "*"
            names += columns() if star else [field._output_name or field._projection_name or f"_c{position}"]
    repeated = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if repeated is not None:
        raise ValueError(f"Ambiguous column name: {repeated}")


def _aggregates_named(fields: tuple[Any, ...]) -> tuple[Any, ...]:
    """A grouped select's fields with Flink's names for its unaliased aggregate calls: ``EXPR$<n>``, n the number of
    aggregate calls before it in the select (other expressions are ``_c<position>``, as in any projection).

    Recorded from PyFlink 2.3: ``group_by(col('k')).select(col('k').upper_case, col('n').sum + 1,
    col('n').max.alias('m'), col('n').min)`` names its columns ``_c0``, ``_c1``, ``m``, ``EXPR$2``."""
    seen = 0
    named = []
    for field in fields:
        if isinstance(field, Expression):
            tokens = significant(tokenize(field._call_sql))
            calls = function_calls(tokens, AGGREGATE_FUNCTIONS)
            if field._output_name is None and len(calls) == 1 and calls[0][0] == 0 and calls[0][3] == len(tokens) - 1:
                field = field.alias(f"EXPR${seen}")
            seen += len(calls)
        named.append(field)
    return tuple(named)


class Table:
    """A table of the Table API (a query over other tables), run with ``execute()`` or ``execute_insert(...)``."""

    def __init__(self, t_env: "TableEnvironment", query: str, functions: Optional[dict[str, Any]] = None,
                 catalog_table: Optional[str] = None) -> None:
        self._t_env = t_env
        self._name = f"UnnamedTable_{next(_TABLE_IDS)}"
        self._query = query
        # The catalog table this Table reads as it is (from_path, then filters): its schema prints the declaration.
        self._catalog_table = catalog_table
        t_env._register_query(self._name, query, functions or {})

    def _derive(self, query: str, *function_maps: dict[str, Any]) -> "Table":
        functions: dict[str, Any] = {}
        for mapping in function_maps:
            functions.update(mapping)
        return Table(self._t_env, query, functions)

    def __str__(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"Table({self._name}: {self._query})"

    def __getattr__(self, name: str) -> Expression:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self.get_schema().fieldNames():
            return col(name)
        raise AttributeError(f"table {self._name} has no column or method '{name}' (columns: {', '.join(self.get_schema().fieldNames())})")

    # --- planning -------------------------------------------------------------------------------
    @property
    def planned(self) -> "PlannedQuery":
        """The planned query (its Spark DataFrame and changelog mode)."""
        return self._t_env._session._plan(f"SELECT * FROM {self._name}", 1, "Table API")

    def get_schema(self) -> "TableSchema":
        """The table's columns: PyFlink's ``get_field_names()``/``get_field_data_types()``, and a Spark StructType;
        ``str()`` of it is Flink's print of the schema."""
        from kindling.connectors.base import INTERNAL_PREFIX
        from kindling.sql.catalog import CatalogTable
        from kindling.sql.column_types import known_types
        from kindling.table.table_schema import TableSchema, declaration_of

        df = self.planned.df
        visible = [not f.name.startswith(INTERNAL_PREFIX) for f in df.schema.fields]
        declaration = None
        if self._catalog_table is not None:
            table = self._t_env._session.catalog.objects.get(self._catalog_table)
            declaration = declaration_of(table) if isinstance(table, CatalogTable) else None

        def flink_types() -> list[Optional[str]]:
            return [t for t, shown in zip(known_types(df), visible) if shown]

        return TableSchema([f for f, shown in zip(df.schema.fields, visible) if shown], flink_types, declaration)

    def get_resolved_schema(self) -> "ResolvedSchema":
        """The same columns (``get_column_names()``, ``get_column_data_types()``), printed as ``print_schema()`` does."""
        return self.get_schema().resolved()

    def print_schema(self) -> None:
        """Print the columns with their Flink types (and a catalog table's computed columns, watermark and key), as
        Flink does; refused, naming the column, where kindling does not derive a column's Flink type."""
        print(self.get_resolved_schema())

    def to_dataframe(self) -> "DataFrame":
        """The Spark DataFrame (an escape hatch to Spark)."""
        return self.planned.df

    def explain(self, *extra_details: Any) -> str:
        return self._t_env.execute_sql(f"EXPLAIN SELECT * FROM {self._name}").collect()[0][0]

    # --- relational operations --------------------------------------------------------------------
    def _expand(self, fields: tuple[Any, ...], *others: "Table") -> tuple[Any, ...]:
        """``fields`` with PyFlink's column functions (``with_columns(range_(2, 4))``, ...) expanded against this
        table's columns (followed by ``others``', for a join's condition)."""
        return expand_fields(fields, lambda: [c for t in (self, *others) for c in t.get_schema().fieldNames()])

    def _column_names(self) -> list[str]:
        return self.get_schema().fieldNames()

    def select(self, *fields: Any) -> "Table":
        fields = self._expand(fields)
        _unique_names(fields, self._column_names)
        text, functions = _fields(fields, named=True)
        return self._derive(f"SELECT {text} FROM {self._name}", functions)

    def where(self, predicate: Any) -> "Table":
        text, functions = _fields(self._expand((predicate,)))
        filtered = self._derive(f"SELECT * FROM {self._name} WHERE {text}", functions)
        filtered._catalog_table = self._catalog_table  # Flink's filter keeps its input's schema
        return filtered

    filter = where

    def alias(self, field: str, *fields: str) -> "Table":
        names = [field, *fields]
        columns = self.get_schema().fieldNames()
        if len(names) != len(columns):
            raise ValueError(f"alias: {len(names)} names for the {len(columns)} columns of {self._name} ({', '.join(columns)})")
        return self._derive(f"SELECT {', '.join(f'{_quote(c)} AS {_quote(n)}' for c, n in zip(columns, names))} FROM {self._name}")

    def add_columns(self, *fields: Any) -> "Table":
        fields, existing = self._expand(fields), self._column_names()
        _unique_names(fields, lambda: existing, start=len(existing), before=existing)
        text, functions = _fields(fields, named=True, start=len(existing))
        return self._derive(f"SELECT *, {text} FROM {self._name}", functions)

    def add_or_replace_columns(self, *fields: Any) -> "Table":
        """Columns added as ``add_columns`` does, except that one named as an existing column replaces it in its place
        (of two added with one name, the last)."""
        existing = self.get_schema().fieldNames()
        named: dict[str, str] = {}
        functions: dict[str, Any] = {}
        for position, field in enumerate(self._expand(fields)):
            if not isinstance(field, Expression):
                raise TypeError(f"add_or_replace_columns takes expressions (col('a') + 1).alias('b'), got {field!r}")
            functions.update(field._functions)
            name = field._output_name or field._projection_name or f"_c{len(existing) + position}"
            named[name] = f"{field._call_sql} AS {_quote(name)}"
        items = [named.pop(c) if c in named else _quote(c) for c in existing] + list(named.values())
        return self._derive(f"SELECT {', '.join(items)} FROM {self._name}", functions)

    def drop_columns(self, *fields: Any) -> "Table":
        dropped = {f._output_name if isinstance(f, Expression) else str(f) for f in self._expand(fields)}
        kept = [c for c in self.get_schema().fieldNames() if c not in dropped]
        return self._derive(f"SELECT {', '.join(_quote(c) for c in kept)} FROM {self._name}")

    def rename_columns(self, *fields: Any) -> "Table":
        renames = {}
        for field in self._expand(fields):
            if not isinstance(field, Expression) or " AS " not in field._sql or field._output_name is None:
                raise ValueError("rename_columns takes col('old').alias('new') expressions")
            renames[field._sql.split(" AS ")[0].strip("`")] = field._output_name
        columns = self.get_schema().fieldNames()
        _unique_names((), lambda: columns, before=[renames.get(c, c) for c in columns])
        return self._derive("SELECT " + ", ".join(f"{_quote(c)} AS {_quote(renames.get(c, c))}" for c in columns) + f" FROM {self._name}")

    def distinct(self) -> "Table":
        return self._derive(f"SELECT DISTINCT * FROM {self._name}")

    def union_all(self, right: "Table") -> "Table":
        return self._derive(f"SELECT * FROM {self._name} UNION ALL SELECT * FROM {right._name}")

    def union(self, right: "Table") -> "Table":
        return self._derive(f"SELECT * FROM {self._name} UNION SELECT * FROM {right._name}")

    def intersect(self, right: "Table") -> "Table":
        return self._derive(f"SELECT * FROM {self._name} INTERSECT SELECT * FROM {right._name}")

    def intersect_all(self, right: "Table") -> "Table":
        return self._derive(f"SELECT * FROM {self._name} INTERSECT ALL SELECT * FROM {right._name}")

    def minus(self, right: "Table") -> "Table":
        return self._derive(f"SELECT * FROM {self._name} EXCEPT SELECT * FROM {right._name}")

    def minus_all(self, right: "Table") -> "Table":
        return self._derive(f"SELECT * FROM {self._name} EXCEPT ALL SELECT * FROM {right._name}")

    def to_changelog(self, *arguments: Expression) -> "Table":
        """This table's changelog as an append-only table: each change an insert, with an ``op`` column first naming it
        (Flink's ``TO_CHANGELOG``; the arguments are ``descriptor(...).as_argument("op")`` and
        ``map_(...).as_argument("op_mapping")``).

        >>> totals.to_changelog(descriptor("op_code").as_argument("op"),
        ...                     map_("INSERT", "I", "UPDATE_AFTER", "U").as_argument("op_mapping"))
        """
        return self._changelog_function("TO_CHANGELOG", arguments)

    def from_changelog(self, *arguments: Expression) -> "Table":
        """This append-only table read as a changelog: each row's kind from its ``op`` column, which is dropped
        (Flink's ``FROM_CHANGELOG``; arguments as for :meth:`to_changelog`).

        >>> cdc.from_changelog(descriptor("__op").as_argument("op"), map_("c, r", "INSERT", "ub", "UPDATE_BEFORE",
        ...                    "u", "UPDATE_AFTER", "d", "DELETE").as_argument("op_mapping"))
        """
        return self._changelog_function("FROM_CHANGELOG", arguments)

    def _changelog_function(self, function: str, arguments: tuple[Expression, ...]) -> "Table":
        texts, functions = _fields(arguments)
        return self._derive(f"SELECT * FROM {function}(input => TABLE {self._name}{', ' + texts if texts else ''})", functions)

    def join(self, right: "Table", join_predicate: Any = None) -> "Table":
        if join_predicate is None:
            return self._derive(f"SELECT * FROM {self._name}, {right._name}")
        text, functions = _fields(self._expand((join_predicate,), right))
        return self._derive(f"SELECT * FROM {self._name} JOIN {right._name} ON {text}", functions)

    def left_outer_join(self, right: "Table", join_predicate: Any = None) -> "Table":
        text, functions = _fields(self._expand((join_predicate,), right)) if join_predicate is not None else ("TRUE", {})
        return self._derive(f"SELECT * FROM {self._name} LEFT JOIN {right._name} ON {text}", functions)

    def right_outer_join(self, right: "Table", join_predicate: Any) -> "Table":
        text, functions = _fields(self._expand((join_predicate,), right))
        return self._derive(f"SELECT * FROM {self._name} RIGHT JOIN {right._name} ON {text}", functions)

    def full_outer_join(self, right: "Table", join_predicate: Any) -> "Table":
        text, functions = _fields(self._expand((join_predicate,), right))
        return self._derive(f"SELECT * FROM {self._name} FULL OUTER JOIN {right._name} ON {text}", functions)

    def map(self, func: Any) -> "Table":
        """PyFlink's row-based map: a scalar function whose result is a ROW, its fields as the new table's columns.

        ``func`` is called (``f(col('a'))``) or not (``f``: it takes each row as a Row of all columns, a pandas
        function a DataFrame); ``.alias(...)`` on the result renames the columns, as in PyFlink.
        """
        call = _row_input_call(self, func)
        inner = self._derive(f"SELECT {call._call_sql or call._sql} AS `{_RESULT}` FROM {self._name}", call._functions)
        return inner._expanded([], call._alias_names, "map", "a scalar function whose result_type is a ROW")

    def aggregate(self, func: Any) -> "AggregatedTable":
        """PyFlink's row-based global aggregate: an aggregate function whose result is a ROW; close it with ``select``."""
        return AggregatedTable(self, (), func)

    def flat_aggregate(self, func: Any) -> "FlatAggregateTable":
        """PyFlink's global flat_aggregate: a table aggregate function (``udtaf``) over all rows, whose emitted rows
        are the result; close it with ``select`` (``t.flat_aggregate(top2(col('v'))).select(col('*'))``)."""
        return FlatAggregateTable(self, (), func)

    def _expanded(self, keys: list[str], alias_names: Optional[list[str]], operation: str, needs: str,
                  default_name: str = "{}", result_column: str = _RESULT) -> "Table":
        """This table's ROW column ``result_column`` as one column per field (named ``alias_names``, or
        ``default_name`` of the field's name), after the ``keys`` columns."""
        from pyspark.sql.types import StructType

        result = self.get_schema()[result_column].dataType
        if not isinstance(result, StructType):
            raise ValueError(f"{operation} takes {needs} (its fields become the table's columns); this one gives "
                             f"{result.simpleString().upper()}")
        fields = result.fieldNames()
        names = list(alias_names) if alias_names else [default_name.format(f) for f in fields]
        if len(names) != len(fields):
            raise ValueError(f"{operation}: {len(names)} aliases {names} for a ROW of {len(fields)} fields {fields}")
        items = keys + [f"`{result_column}`.{_quote(f)} AS {_quote(n)}" for f, n in zip(fields, names)]
        return self._derive(f"SELECT {', '.join(items)} FROM {self._name}")

    def flat_map(self, func: Any) -> "Table":
        """Rows of a table function (``@udtf``) called with each row (as a Row of its columns): the function's
        columns only, named ``f0``, ``f1``, ... (rename them with ``.alias``)."""
        name = function_name(func)
        columns = ", ".join(_quote(c) for c in self.get_schema().fieldNames())
        return self._derive(f"SELECT `T`.* FROM {self._name}, LATERAL TABLE({name}(ROW({columns}))) AS `T`", {name: func})

    def join_lateral(self, table_function_call: Any, join_predicate: Any = None) -> "Table":
        """Each row joined with the rows a table function call gives for it (``split(col('line')).alias('word')``)."""
        return self._lateral(table_function_call, join_predicate, outer=False)

    def left_outer_join_lateral(self, table_function_call: Any, join_predicate: Any = None) -> "Table":
        """As ``join_lateral``, keeping a row for which the function gives nothing (with NULLs)."""
        return self._lateral(table_function_call, join_predicate, outer=True)

    def _lateral(self, call: Any, join_predicate: Any, outer: bool) -> "Table":
        if not isinstance(call, Expression):
            raise TypeError("join_lateral takes a table function call, e.g. split(col('line')).alias('word')")
        call = expand_call(call, lambda: self.get_schema().fieldNames())
        names = call._alias_names
        alias = "`T`" + (f"({', '.join(_quote(n) for n in names)})" if names else "")
        functions = dict(call._functions)
        if outer:
            if join_predicate is not None:
                raise ValueError("left_outer_join_lateral takes no join predicate (Flink: only a literal TRUE)")
            return self._derive(f"SELECT * FROM {self._name} LEFT JOIN LATERAL TABLE({call._call_sql}) AS {alias} ON TRUE", functions)
        query = f"SELECT * FROM {self._name}, LATERAL TABLE({call._call_sql}) AS {alias}"
        if join_predicate is not None:
            predicate, more = _fields(self._expand((join_predicate,)))
            query += f" WHERE {predicate}"
            functions.update(more)
        return self._derive(query, functions)

    def group_by(self, *fields: Any) -> "GroupedTable":
        return GroupedTable(self, fields)

    def window(self, window: GroupWindow) -> "GroupWindowedTable":
        if not isinstance(window, GroupWindow):
            raise TypeError("window() takes Tumble/Slide/Session ... .alias('w'); an Over window goes to over_window(...)")
        return GroupWindowedTable(self, window)

    def over_window(self, *over_windows: OverWindow) -> "OverWindowedTable":
        """OVER windows over this table's rows, for aggregates in ``select`` (``col('v').sum.over(col('w'))``)."""
        if not over_windows or not all(isinstance(w, OverWindow) for w in over_windows):
            raise TypeError("over_window() takes Over...alias('w') windows")
        return OverWindowedTable(self, over_windows)

    def order_by(self, *fields: Any) -> "Table":
        text, functions = _fields(self._expand(fields))
        return self._derive(f"SELECT * FROM {self._name} ORDER BY {text}", functions)

    def limit(self, fetch: int, offset: int = 0) -> "Table":
        """The first ``fetch`` rows after skipping ``offset`` (of a table sorted by ``order_by``)."""
        return self._derive(f"SELECT * FROM {self._name} LIMIT {fetch}" + (f" OFFSET {offset}" if offset else ""))

    def fetch(self, fetch: int) -> "Table":
        return self._derive(f"SELECT * FROM {self._name} LIMIT {fetch}")

    def offset(self, offset: int) -> "Table":
        return self._derive(f"SELECT * FROM {self._name} OFFSET {offset}")

    # --- running ------------------------------------------------------------------------------------
    def execute(self) -> "TableResult":
        """Run the query; its rows arrive in the returned TableResult (``collect()``, ``print()``)."""
        session = self._t_env._session
        return session._collect(self.planned)

    def execute_insert(self, table_path_or_descriptor: Any, overwrite: bool = False) -> "TableResult":
        """Write the table's rows into a catalog table, or a table a ``TableDescriptor`` describes (a job; ``.wait()``
        for it to end)."""
        return self.insert_into(table_path_or_descriptor, overwrite).execute()

    def insert_into(self, table_path_or_descriptor: Any, overwrite: bool = False) -> "TablePipeline":
        """The pipeline writing this table's rows into a catalog table, or into a table a ``TableDescriptor`` describes
        (without a schema, it takes this table's columns); run it with ``execute()`` or in a statement set's ``add``."""
        from kindling.sql.ddl import Insert
        from kindling.table.table_pipeline import TablePipeline

        target = self._t_env._sink_path(table_path_or_descriptor, self)
        return TablePipeline(self._t_env, Insert(target, f"SELECT * FROM {self._name}", 1, overwrite=overwrite))

    def print_explain(self, *extra_details: Any) -> None:
        print(self.explain(*extra_details))

    def to_pandas(self) -> Any:
        """The table's final rows as a pandas DataFrame (a bounded table)."""
        import pandas as pd

        rows = self.execute().final_rows()
        return pd.DataFrame([r.asDict() for r in rows], columns=self.get_schema().fieldNames())


class GroupedTable:
    """A table grouped by keys (``table.group_by(...)``), aggregated by ``select``."""

    def __init__(self, table: Table, keys: tuple[Any, ...]) -> None:
        self._table, self._keys = table, table._expand(keys)

    def select(self, *fields: Any) -> Table:
        keys, key_functions = _fields(self._keys)
        fields = _aggregates_named(self._table._expand(fields))
        _unique_names(fields, self._table._column_names)
        text, functions = _fields(fields, named=True)
        return self._table._derive(f"SELECT {text} FROM {self._table._name} GROUP BY {keys}", key_functions, functions)

    def aggregate(self, func: Any) -> AggregatedTable:
        """PyFlink's row-based aggregate: an aggregate function whose result is a ROW, per group; close it with
        ``select`` (``group_by(col('k')).aggregate(f.alias('cnt', 'sum')).select(col('k'), col('cnt'))``)."""
        return AggregatedTable(self._table, self._keys, func)

    def flat_aggregate(self, func: Any) -> "FlatAggregateTable":
        """PyFlink's flat_aggregate per group: a table aggregate function (``udtaf``) whose emitted rows follow each
        group's keys; close it with ``select`` (``group_by(col('k')).flat_aggregate(top2(col('v'))).select(col('*'))``)."""
        return FlatAggregateTable(self._table, self._keys, func)


class AggregatedTable:
    """A table aggregated by a ROW-valued aggregate function (``group_by(...).aggregate(f)``), closed by ``select``."""

    _operation, _needs = "aggregate", "an aggregate function whose result_type is a ROW"
    _result_column = _RESULT
    _default_name = "TMP_0${}"  # without aliases Flink names the fields TMP_0$<field>, as the planner's temporary result

    def __init__(self, table: Table, keys: tuple[Any, ...], func: Any) -> None:
        self._table, self._keys, self._func = table, keys, func

    def _check(self, call: Expression) -> None:
        """Refuse a function of the wrong kind for this operation (nothing to refuse for ``aggregate``)."""

    def select(self, *fields: Any) -> Table:
        table, column = self._table, self._result_column
        call = _row_input_call(table, self._func)
        self._check(call)
        keys, key_functions = _fields(self._keys)
        group = f" GROUP BY {keys}" if keys else ""
        inner = table._derive(f"SELECT {keys + ', ' if keys else ''}{call._call_sql or call._sql} AS `{column}` FROM {table._name}{group}",
                              key_functions, call._functions)
        key_names = [f for f in inner.get_schema().fieldNames() if f != column]
        expanded = inner._expanded([_quote(k) for k in key_names], call._alias_names, self._operation, self._needs,
                                   default_name=self._default_name, result_column=column)
        return expanded.select(*fields)


class FlatAggregateTable(AggregatedTable):
    """A table aggregated by a table aggregate function (``flat_aggregate(f)``), closed by ``select``.

    Each group's rows are the keys followed by the fields of each row the function emits; while the group changes,
    its previous rows are retracted and the new ones emitted, as in Flink."""

    _operation, _needs = "flat_aggregate", "a table aggregate function"
    _result_column = FLAT_AGGREGATE_RESULT
    _default_name = "{}"

    def _check(self, call: Expression) -> None:
        if not any(getattr(f, "table_aggregate", False) for f in call._functions.values()):
            raise TypeError("flat_aggregate takes a table aggregate function (udtaf) or a call of one; "
                            "an aggregate function (udaf) goes in aggregate")


class GroupWindowedTable:
    """A table with a group window (``table.window(Tumble...alias('w'))``), to be grouped by the window's alias."""

    def __init__(self, table: Table, window: GroupWindow) -> None:
        self._table, self._window = table, window

    def group_by(self, *fields: Any) -> "WindowGroupedTable":
        return WindowGroupedTable(self._table, self._window, fields)


class WindowGroupedTable:
    """A table grouped by a group window and keys, aggregated by ``select`` (or a ROW-valued ``aggregate``)."""

    def __init__(self, table: Table, window: GroupWindow, keys: tuple[Any, ...]) -> None:
        self._table, self._window, self._keys = table, window, table._expand(keys)

    def _group(self) -> tuple[list[bool], str, dict[str, Any]]:
        """Which keys are the window, and the GROUP BY text (the window as its SQL group function) with its functions."""
        window = self._window
        is_window = [isinstance(k, Expression) and k._output_name == window.alias_name for k in self._keys]
        if not any(is_window):
            raise ValueError(f"group_by of a windowed table must name the window's alias col('{window.alias_name}')")
        keys, key_functions = _fields(tuple(window.group_sql() if w else k for w, k in zip(is_window, self._keys)))
        return is_window, keys, key_functions

    def select(self, *fields: Any) -> Table:
        window = self._window
        _, keys, key_functions = self._group()
        text, functions = _fields(self._table._expand(fields), named=True)
        text = window.resolve(text)
        if WINDOW_PROPERTY.split("{")[0] in text:
            raise ValueError(f"a window property of a window other than '{window.alias_name}' is selected")
        return self._table._derive(f"SELECT {text} FROM {self._table._name} GROUP BY {keys}", key_functions, functions)

    def aggregate(self, func: Any) -> "WindowAggregatedTable":
        """PyFlink's row-based aggregate per window and keys: an aggregate function whose result is a ROW (a pandas
        one, as Flink runs Python aggregates in group windows); close it with ``select``, which may name the window's
        properties (``col('w').start``, ``.end``, ``.rowtime``)."""
        return WindowAggregatedTable(self, func)


class WindowAggregatedTable:
    """A group window's aggregation by a ROW-valued aggregate function (``window(...).group_by(...).aggregate(f)``)."""

    def __init__(self, grouped: WindowGroupedTable, func: Any) -> None:
        self._grouped, self._func = grouped, func

    def select(self, *fields: Any) -> Table:
        grouped, window = self._grouped, self._grouped._window
        table = grouped._table
        is_window, keys, key_functions = grouped._group()
        call = _row_input_call(table, self._func)
        plain_keys, plain_functions = _fields(tuple(k for w, k in zip(is_window, grouped._keys) if not w))
        properties = {name: f"{_WINDOW_COLUMN}{name.lower()}" for name in ("START", "END", "ROWTIME")}
        items = ([plain_keys] if plain_keys else []) + [f"{window.property_sql(name)} AS `{column}`" for name, column in properties.items()]
        inner = table._derive(f"SELECT {', '.join(items)}, {call._call_sql or call._sql} AS `{_RESULT}` FROM {table._name} "
                              f"GROUP BY {keys}", key_functions, plain_functions, call._functions)
        key_names = [f for f in inner.get_schema().fieldNames() if f != _RESULT]
        expanded = inner._expanded([_quote(k) for k in key_names], call._alias_names, "aggregate",
                                   "an aggregate function whose result_type is a ROW", default_name="TMP_0${}")
        if any(isinstance(f, Expression) and f._sql == "*" for f in fields):
            raise ValueError("Can not use * for window aggregate!")  # Flink's ValidationException
        unnamed = itertools.count()  # Flink names the unaliased expressions after a window aggregate EXPR$0, EXPR$1, ...
        fields = tuple(f.alias(f"EXPR${next(unnamed)}") if isinstance(f, Expression) and f._output_name is None else f for f in fields)
        text, functions = _fields(fields, named=True)
        for name, column in properties.items():
            text = text.replace(WINDOW_PROPERTY.format(alias=window.alias_name, property=name), f"`{column}`")
        if WINDOW_PROPERTY.split("{")[0] in text:
            raise ValueError(f"a window property of a window other than '{window.alias_name}' is selected")
        return expanded._derive(f"SELECT {text} FROM {expanded._name}", functions)


class OverWindowedTable:
    """A table with OVER windows (``table.over_window(Over...alias('w'))``), whose ``select`` aggregates over them."""

    def __init__(self, table: Table, windows: tuple[OverWindow, ...]) -> None:
        self._table, self._windows = table, windows

    def select(self, *fields: Any) -> Table:
        fields = self._table._expand(fields)
        _unique_names(fields, self._table._column_names)
        text, functions = _fields(fields, named=True)
        clauses = ", ".join(w.clause_sql() for w in self._windows)
        return self._table._derive(f"SELECT {text} FROM {self._table._name} WINDOW {clauses}", functions)
