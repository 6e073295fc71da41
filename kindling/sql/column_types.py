"""A query's columns' Flink types, for the schemas the Table API prints (``print_schema()``, ``get_schema()``).

Kindling's planner rewrites Flink SQL into Spark's, which derives its own types (``TIMESTAMP`` without precision, no
``VARCHAR(n)``, other ``DECIMAL`` arithmetic, nullability unaware of Flink's ``NOT NULL`` declarations). Flink's type of
a column is known where a declaration gives it: a table's column (``CREATE TABLE``, a ``TableDescriptor``,
``from_elements``/``from_pandas``) with its time attribute's marker, a window TVF's ``window_start``/``window_end``/
``window_time``, the columns kindling's keyed operators pass on or compute (a Top-N's rank, an aggregate). The Spark
column that holds it carries the type as Flink prints it (``TIMESTAMP(3) *ROWTIME*``, ``STRING NOT NULL``) in its
metadata, and :func:`known_types` follows the types through Spark's analyzed plan, deriving those of the computations
whose Flink type follows from their inputs' the way Flink's does. Any other computed value's type is unknown, and a
schema that shows it is refused, naming the column, rather than printed with Spark's type.

>>> declared_type("VARCHAR(2147483647)", nullable=False)
'STRING NOT NULL'
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

from kindling.sql.time_values import holds_time_cast, time_type

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import StructField, StructType

FLINK_TYPE = "kindling.flink.type"  # the metadata key: the type as Flink's schemas print it
PROCTIME_TYPE = "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*"
_NOT_NULL = " NOT NULL"
_MARKERS = (" *ROWTIME*", " *PROCTIME*")


def declared_type(flink: str, nullable: bool) -> str:
    """A declared column's type as Flink prints it: ``flink`` with ``NOT NULL`` as ``nullable`` says."""
    from kindling.sql.types import printed

    base = printed(flink.removesuffix(_NOT_NULL))
    return base if nullable else base + _NOT_NULL


def with_type(column: "Column", name: str, flink_type: Optional[str], metadata: Optional[dict[str, Any]] = None) -> "Column":
    """``column`` named ``name``, carrying ``flink_type`` (None: carrying no type) beside its other ``metadata``."""
    carried = dict(metadata or {})
    if flink_type is not None:
        carried[FLINK_TYPE] = flink_type
    return column.alias(name, metadata=carried) if carried else column.alias(name)


def carried_type(field: "StructField") -> Optional[str]:
    """The Flink type a Spark field carries; None when it carries none (a computed value)."""
    return (field.metadata or {}).get(FLINK_TYPE)


def window_property_types(time_type: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """A window TVF's ``window_start``/``window_end`` type and ``window_time``'s, from its time attribute's type.

    Flink's window bounds are ``TIMESTAMP(3) NOT NULL`` and ``window_time`` is the time attribute's type, not null,
    with its marker (over a time attribute of another precision they are not derived here).

    >>> window_property_types("TIMESTAMP_LTZ(3) *ROWTIME*")
    ('TIMESTAMP(3) NOT NULL', 'TIMESTAMP_LTZ(3) NOT NULL *ROWTIME*')
    """
    if time_type is None:
        return None, None
    plain = without_markers(time_type)
    marker = time_type[len(plain):]
    plain = plain.removesuffix(_NOT_NULL)
    if plain not in ("TIMESTAMP(3)", "TIMESTAMP_LTZ(3)"):
        return None, None
    return "TIMESTAMP(3) NOT NULL", plain + _NOT_NULL + marker


def computed_type(expression: str, columns: dict[str, Optional[str]]) -> Optional[str]:
    """The Flink type of a computed column's expression over ``columns`` (their types), for the forms kindling derives
    from the text: ``PROCTIME()``, ``TO_TIMESTAMP_LTZ(n, 0 | 3)`` and ``CAST(column AS type)`` (nullable as the column
    is). (A computed column's other computations are typed from the plan, by :func:`known_types`.)"""
    parsed = _Expression(expression).parse()
    if parsed is None or parsed.function is None:
        return None
    if parsed.function == "PROCTIME":
        return PROCTIME_TYPE
    if parsed.function == "TO_TIMESTAMP_LTZ":
        return "TIMESTAMP_LTZ(3)"  # whatever its argument's nullability and precision
    argument_type = columns.get(parsed.argument) if parsed.argument is not None else None
    if argument_type is None or parsed.cast_type is None:
        return None
    return declared_type(parsed.cast_type, not without_markers(argument_type).endswith(_NOT_NULL))


def result_columns(expression: str) -> Optional[list[tuple[str, ...]]]:
    """The columns (each a path of names: ``("bid", "dateTime")``) an expression's value is always one of: the
    expression itself when it names a column or a row's field, or every result of a ``CASE`` whose results all do
    (Nexmark's ``CASE WHEN event_type = 0 THEN person.dateTime ... ELSE bid.dateTime END``); None for any other form.
    A type those columns share is the expression's, with no planning of it.

    >>> result_columns("CASE WHEN k = 0 THEN a.`t` ELSE b.t END"), result_columns("CASE WHEN k = 0 THEN t + 1 END")
    ([('a', 't'), ('b', 't')], None)
    """
    from kindling.sql.tokens import QUOTED, WORD, significant, tokenize

    def path(tokens: list[Any]) -> Optional[tuple[str, ...]]:
        names = tokens[0::2]
        if not tokens or len(tokens) % 2 == 0 or any(t.kind not in (WORD, QUOTED) for t in names) \
                or any(not t.is_symbol(".") for t in tokens[1::2]):
            return None
        return tuple(t.identifier for t in names)

    try:
        tokens = significant(tokenize(expression))
    except Exception:
        return None
    if not tokens:
        return None
    if not tokens[0].is_word("CASE"):
        single = path(tokens)
        return [single] if single is not None else None
    if not tokens[-1].is_word("END"):
        return None
    results: list[list[Any]] = []
    depth = 0
    for token in tokens[1:-1]:
        if token.is_symbol("("):
            depth += 1
        elif token.is_symbol(")"):
            depth -= 1
        if depth == 0 and token.is_word("CASE", "END"):
            return None  # a nested CASE: not a form read here
        if depth == 0 and token.is_word("WHEN"):
            results.append([])  # the condition: not a result
        elif depth == 0 and token.is_word("THEN", "ELSE"):
            results.append([])
        elif results:
            results[-1].append(token)
    paths = [path(result) for result in results[1::2]]  # WHEN c THEN r ... [ELSE r]: every other part is a result
    if len(results) % 2 == 1:  # ELSE r
        paths.append(path(results[-1]))
    return None if not paths or any(p is None for p in paths) else paths  # type: ignore[return-value]


def shared_type(schema: "StructType", paths: Optional[list[tuple[str, ...]]]) -> Optional[Any]:
    """The Spark type every one of ``paths`` (columns of ``schema``, or fields of their rows: :func:`result_columns`)
    has; None when one is not found or their types differ."""
    from pyspark.sql.types import StructType

    found = set()
    for path in paths or ():
        data_type: Any = schema
        for name in path:
            field = next((f for f in data_type.fields if f.name == name), None) if isinstance(data_type, StructType) else None
            if field is None:
                return None
            data_type = field.dataType
        found.add(data_type)
    return found.pop() if len(found) == 1 else None


def expression_text(expression: str) -> Optional[str]:
    """A computed column's or watermark's expression as Flink's schemas and DESCRIBE print it (names quoted); None for
    a form this does not know how Flink prints.

    >>> expression_text("ts - INTERVAL '5' SECOND"), expression_text("TO_TIMESTAMP_LTZ(id * 1000, 3)")
    ("`ts` - INTERVAL '5' SECOND", '`TO_TIMESTAMP_LTZ`(`id` * 1000, 3)')
    """
    parsed = _Expression(expression).parse()
    return parsed.text if parsed is not None else None


class _Parsed:
    """An expression as Flink prints it, and, when it is one call, the call (function, its column argument, CAST's type)."""

    def __init__(self, text: str, function: Optional[str] = None, argument: Optional[str] = None, cast_type: Optional[str] = None) -> None:
        self.text, self.function, self.argument, self.cast_type = text, function, argument, cast_type


class _Expression:
    """The expression forms of computed columns and watermarks whose printing kindling knows: names, numbers,
    ``INTERVAL 'n' unit``, ``PROCTIME()``, ``CAST(e AS type)``, ``TO_TIMESTAMP_LTZ(e, n)``, joined by ``+ - * /``."""

    def __init__(self, expression: str) -> None:
        from kindling.sql.tokens import significant, tokenize

        self.tokens = significant(tokenize(expression))
        self.at = 0

    def _peek(self, offset: int = 0) -> Any:
        index = self.at + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def _take(self) -> Any:
        token = self._peek()
        self.at += 1
        return token

    def _symbol(self, symbol: str) -> bool:
        token = self._take()
        return token is not None and token.is_symbol(symbol)

    def parse(self) -> Optional[_Parsed]:
        parsed = self._expression()
        return parsed if parsed is not None and self._peek() is None else None

    def _expression(self) -> Optional[_Parsed]:
        first = self._term()
        if first is None:
            return None
        parts = [first.text]
        while self._peek() is not None and self._peek().is_symbol("+", "-", "*", "/"):
            parts.append(self._take().text)
            term = self._term()
            if term is None:
                return None
            parts.append(term.text)
        return first if len(parts) == 1 else _Parsed(" ".join(parts))

    def _term(self) -> Optional[_Parsed]:
        from kindling.sql.tokens import NUMBER, QUOTED, STRING, WORD

        token = self._peek()
        if token is None:
            return None
        following = self._peek(1)
        if token.kind == NUMBER:
            self.at += 1
            return _Parsed(token.text)
        if token.kind == WORD and token.upper == "INTERVAL":
            unit = self._peek(2)
            if following is None or following.kind != STRING or unit is None or unit.upper not in _UNITS:
                return None
            self.at += 3
            return _Parsed(f"INTERVAL {following.text} {unit.upper}")
        if token.kind == WORD and following is not None and following.is_symbol("("):
            return self._call(token.upper)
        if token.kind not in (WORD, QUOTED) or (token.kind == WORD and token.upper in _KEYWORDS):
            return None
        self.at += 1
        return _Parsed(_quote(token.identifier), argument=token.identifier)

    def _call(self, function: str) -> Optional[_Parsed]:
        from kindling.sql.tokens import NUMBER

        self.at += 2
        if function == "PROCTIME":
            return _Parsed("PROCTIME()", "PROCTIME") if self._symbol(")") else None
        if function == "CAST":
            return self._cast()
        if function == "TO_TIMESTAMP_LTZ":
            argument = self._expression()
            comma, precision = self._take(), self._take()
            if (argument is None or comma is None or not comma.is_symbol(",") or precision is None or precision.kind != NUMBER
                    or precision.text not in ("0", "3") or not self._symbol(")")):
                return None
            return _Parsed(f"`TO_TIMESTAMP_LTZ`({argument.text}, {precision.text})", "TO_TIMESTAMP_LTZ")
        return None

    def _cast(self) -> Optional[_Parsed]:
        from kindling.sql.types import parse_type, printed

        argument = self._expression()
        token = self._take()
        if argument is None or token is None or not token.is_word("AS"):
            return None
        depth, start = 0, self.at
        while self._peek() is not None and not (depth == 0 and self._peek().is_symbol(")")):
            depth += {"(": 1, ")": -1}.get(self._take().text, 0)
        if self._peek() is None or self.at == start:
            return None
        type_text = " ".join(t.text for t in self.tokens[start:self.at])
        self.at += 1
        try:
            flink = parse_type(type_text).flink
        except ValueError:
            return None
        if "STRING" in printed(flink) or "BYTES" in printed(flink):
            return None  # how Flink spells the unbounded VARCHAR in a CAST is not known here
        # (the argument is a column when its text is one name)
        column = argument.argument if argument.function is None and argument.text.startswith("`") else None
        return _Parsed(f"CAST({argument.text} AS {printed(flink)})", "CAST", column, flink)


_KEYWORDS = {"AS", "INTERVAL", "CAST", "NULL", "TRUE", "FALSE", "AND", "OR", "NOT", "CASE"}
_UNITS = {"SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR"}


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def passing(field: "StructField", name: Optional[str] = None) -> "StructField":
    """A keyed operator's output field for an input ``field`` it passes on unchanged: nullable, as every operator output
    is, carrying the Flink type alone (Spark's event-time marker stays with the input)."""
    from pyspark.sql.types import StructField

    flink_type = carried_type(field)
    return StructField(name or field.name, field.dataType, True, {FLINK_TYPE: flink_type} if flink_type is not None else None)


def typed_field(name: str, data_type: Any, flink_type: Optional[str]) -> "StructField":
    """A keyed operator's output field carrying ``flink_type`` (None: none)."""
    from pyspark.sql.types import StructField

    return StructField(name, data_type, True, {FLINK_TYPE: flink_type} if flink_type is not None else None)


_NUMBERS = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE")


def aggregate_type(function: str, argument: Optional[str], grouped: Optional[bool]) -> Optional[str]:
    """Flink's type of a built-in aggregate call over an argument of Flink type ``argument`` (None: unknown, or no
    argument); ``grouped``: in a GROUP BY with keys (True), without (False: the result of no rows is NULL), or over a
    window (None). None for a call whose type kindling does not derive.

    >>> aggregate_type("SUM", "INT NOT NULL", grouped=True), aggregate_type("MAX", "TIMESTAMP(3) *ROWTIME*", grouped=True)
    ('INT NOT NULL', 'TIMESTAMP(3) *ROWTIME*')
    """
    function = function.upper()
    if function == "COUNT":
        return "BIGINT NOT NULL"
    if argument is None or function not in ("SUM", "MIN", "MAX", "AVG"):
        return None
    plain = without_markers(argument)
    marker = argument[len(plain):]
    not_null = plain.endswith(_NOT_NULL)
    base = plain.removesuffix(_NOT_NULL)
    if function in ("SUM", "AVG"):
        if base.startswith("DECIMAL(") and function == "SUM":
            base = "DECIMAL(38, " + base[len("DECIMAL("):].split(",")[1].strip()
        elif base not in _NUMBERS:
            return None
        marker = ""
    if not_null and grouped is None:
        return None  # over a window: not derived here
    return base + (_NOT_NULL if not_null and grouped else "") + marker


def known_types(df: "DataFrame") -> list[Optional[str]]:
    """The Flink types kindling knows of ``df``'s columns, in order (None for the others).

    Spark's analyzed plan is walked from its leaves: a column's type is what its source declares (the metadata a
    table's reading and kindling's operators put on it), passed on through projections, filters, views, joins (an outer
    join's padded side made nullable), unions (the inputs' common type) and grouping keys, and derived for the
    computations whose Flink type follows from their inputs': the built-in aggregates, casts to a number, boolean or
    date, integer and floating-point ``+ - *``, integer and boolean literals, ranking numbers.
    """
    plan = df._jdf.queryExecution().analyzed()
    types = _PlanTypes()
    types.walk(plan)
    output = plan.output()
    return [types.of(output.apply(i)) for i in range(output.size())]


def time_columns(df: "DataFrame", columns: list[str]) -> list[str]:
    """Which of ``columns`` hold Flink TIME values (kindling holds them as their text, :mod:`kindling.sql.time_values`),
    for results to hand them out as ``datetime.time`` as PyFlink does. Only a query whose string columns carry a declared
    TIME or whose plan casts to TIME has its plan walked."""
    from pyspark.sql.types import StringType

    fields = {f.name: f for f in df.schema.fields}
    texts = [c for c in columns if c in fields and isinstance(fields[c].dataType, StringType)]
    if not texts:
        return []
    declared = any(str(fields[c].metadata.get(FLINK_TYPE, "")).startswith("TIME(") for c in texts)
    if not declared and not holds_time_cast(df._jdf.queryExecution().analyzed().toString()):
        return []
    types = dict(zip(df.columns, known_types(df)))
    return [c for c in texts if (types.get(c) or "").startswith("TIME(")]


def expression_types(plan: Any, expressions: list[Any]) -> list[Optional[str]]:
    """The Flink types kindling derives for ``expressions`` of the analyzed ``plan`` (None where it derives none), by
    the rules :func:`known_types` follows for columns."""
    types = _PlanTypes()
    types.walk(plan)
    return [types._derived(expression, None) for expression in expressions]


# Spark's names of the types whose Flink name is the same whatever the declaration (no length, precision or zone).
_SPARK_NAMES = {"byte": "TINYINT", "short": "SMALLINT", "integer": "INT", "long": "BIGINT", "float": "FLOAT", "double": "DOUBLE",
                "boolean": "BOOLEAN", "date": "DATE"}
_AGGREGATES = {"Count": "COUNT", "Sum": "SUM", "Min": "MIN", "Max": "MAX", "Average": "AVG"}
_RANKINGS = ("RowNumber", "Rank", "DenseRank")

class _PlanTypes:
    """The Flink type of each attribute (by expression id) of an analyzed Spark plan, as :func:`known_types` says."""

    def __init__(self) -> None:
        self.types: dict[int, Optional[str]] = {}

    def of(self, attribute: Any) -> Optional[str]:
        key = attribute.exprId().id()
        if key not in self.types:
            self.types[key] = _metadata_type(attribute.metadata())
        return self.types[key]

    def walk(self, node: Any) -> None:
        children = node.children()
        for i in range(children.size()):
            self.walk(children.apply(i))
        kind = node.nodeName()
        if kind == "Project":
            self._named(node.projectList(), None)
        elif kind == "Aggregate":
            self._named(node.aggregateExpressions(), not node.groupingExpressions().isEmpty())
        elif kind == "Window":
            self._named(node.windowExpressions(), None)
        elif kind == "Join":
            padded = {"LeftOuter": ("right",), "RightOuter": ("left",), "FullOuter": ("left", "right")}.get(node.joinType().toString(), ())
            for side in padded:
                output = (node.left() if side == "left" else node.right()).output()
                for i in range(output.size()):
                    attribute = output.apply(i)
                    flink_type = self.of(attribute)
                    self.types[attribute.exprId().id()] = nullable(flink_type) if flink_type is not None else None
        elif kind == "Union":
            self._union(node)
        elif kind == "Expand":  # grouping sets: a key column is a new one, NULL where the set leaves it out
            known = {children.apply(0).output().apply(i).exprId().id() for i in range(children.apply(0).output().size())}
            output = node.output()
            for i in range(output.size()):
                attribute = output.apply(i)
                if attribute.exprId().id() not in known:
                    flink_type = _metadata_type(attribute.metadata())
                    self.types[attribute.exprId().id()] = nullable(flink_type) if flink_type is not None else None

    def _named(self, expressions: Any, grouped: Optional[bool]) -> None:
        for i in range(expressions.size()):
            expression = expressions.apply(i)
            if expression.nodeName() != "Alias":
                continue  # an attribute passed on keeps its type
            key = expression.exprId().id()
            explicit = expression.explicitMetadata()
            if explicit.isDefined() and explicit.get().contains(FLINK_TYPE):
                self.types[key] = explicit.get().getString(FLINK_TYPE)
            else:
                self.types[key] = self._derived(expression.child(), grouped)

    def _derived(self, expression: Any, grouped: Optional[bool]) -> Optional[str]:
        kind = expression.nodeName()
        if kind == "AttributeReference":
            return self.of(expression)
        if kind == "Alias":
            return self._derived(expression.child(), grouped)
        if kind == "AggregateExpression":
            function = expression.aggregateFunction()
            name = _AGGREGATES.get(function.nodeName())
            if name is None:
                return None
            arguments = function.children()
            argument = self._derived(arguments.apply(0), grouped) if arguments.size() == 1 and name != "COUNT" else None
            return aggregate_type(name, argument, grouped)
        if kind == "WindowExpression":
            function = expression.windowFunction()
            if function.nodeName() in _RANKINGS:
                return "BIGINT NOT NULL"
            return self._derived(function, None) if function.nodeName() == "AggregateExpression" else None
        if kind == "Cast":
            target = _SPARK_NAMES.get(expression.dataType().typeName())
            source = self._derived(expression.child(), grouped)
            if target is None or source is None:
                return None
            return target + (_NOT_NULL if without_markers(source).endswith(_NOT_NULL) else "")
        if kind in ("Add", "Subtract", "Multiply"):
            target = _SPARK_NAMES.get(expression.dataType().typeName())
            operands = [self._derived(expression.left(), grouped), self._derived(expression.right(), grouped)]
            if target not in _NUMBERS or any(o is None or without_markers(o).removesuffix(_NOT_NULL) not in _NUMBERS for o in operands):
                return None
            return target + (_NOT_NULL if all(without_markers(o).endswith(_NOT_NULL) for o in operands) else "")  # type: ignore[union-attr]
        if kind == "ElementAt" and expression.left().nodeName() == "transform":  # bound_once: a transform of array(value)
            return self._time_cast(expression.left(), grouped)
        if kind == "Literal" and expression.dataType().typeName().startswith("time") and expression.value() is not None:
            fraction = re.search(r"\.(\d+)'", expression.sql())  # TIME '10:11:12.5': Flink's precision is the digits written
            return f"TIME({len(fraction.group(1)) if fraction else 0}) NOT NULL"
        if kind == "Literal":
            target = _SPARK_NAMES.get(expression.dataType().typeName())
            if target not in ("INT", "BIGINT", "BOOLEAN") or expression.value() is None:
                return None
            return target + _NOT_NULL
        return None

    def _time_cast(self, transform: Any, grouped: Optional[bool]) -> Optional[str]:
        """A CAST to TIME (:func:`kindling.sql.time_values.cast_to_time`: its argument bound by a named lambda)."""
        variables = transform.function().arguments()
        array = transform.argument()
        if variables.size() != 1 or array.nodeName() != "CreateArray" or array.children().size() != 1:
            return None
        argument = array.children().apply(0)
        argument_type = self._derived(argument, grouped)
        if argument_type is not None:
            not_null = without_markers(argument_type).endswith(_NOT_NULL)
        else:  # Spark's nullability: for its functions as for Flink's, NULL in gives NULL out
            not_null = not argument.nullable()
        return time_type(variables.apply(0).name(), not_null)

    def _union(self, node: Any) -> None:
        children = node.children()
        outputs = [children.apply(c).output() for c in range(children.size())]
        for i in range(outputs[0].size()):
            inputs = [self.of(output.apply(i)) for output in outputs]
            merged: Optional[str] = None
            if all(t is not None for t in inputs):
                plain = {without_markers(t).removesuffix(_NOT_NULL) for t in inputs}  # type: ignore[union-attr]
                markers = {t[len(without_markers(t)):] for t in inputs}  # type: ignore[union-attr]
                if len(plain) == 1 and len(markers) == 1:
                    base, marker = plain.pop(), markers.pop()
                    not_null = all(without_markers(t).endswith(_NOT_NULL) for t in inputs)  # type: ignore[union-attr]
                    merged = base + (_NOT_NULL if not_null else "") + marker
            self.types[node.output().apply(i).exprId().id()] = merged


def _metadata_type(metadata: Any) -> Optional[str]:
    return metadata.getString(FLINK_TYPE) if metadata.contains(FLINK_TYPE) else None


def nullable(flink_type: str) -> str:
    """The type without its NOT NULL (keeping its time attribute marker)."""
    plain = without_markers(flink_type)
    return plain.removesuffix(_NOT_NULL) + flink_type[len(plain):]


def without_markers(flink_type: str) -> str:
    """The type without its time attribute marker (``*ROWTIME*``, ``*PROCTIME*``)."""
    for marker in _MARKERS:
        flink_type = flink_type.removesuffix(marker)
    return flink_type


__all__ = ["FLINK_TYPE", "PROCTIME_TYPE", "aggregate_type", "carried_type", "computed_type", "declared_type", "expression_text", "known_types",
           "nullable", "passing", "time_columns", "typed_field", "window_property_types", "with_type", "without_markers"]
