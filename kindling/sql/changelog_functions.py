"""Flink's changelog functions: the built-in process table functions ``TO_CHANGELOG`` and ``FROM_CHANGELOG``.

``TO_CHANGELOG`` turns a table's changelog into an append-only table with an operation column: every change
(``+I``/``-U``/``+U``/``-D``) becomes an insert whose ``op`` column names it (``INSERT``, ``UPDATE_BEFORE``,
``UPDATE_AFTER``, ``DELETE``, or the codes an ``op_mapping`` gives; kinds the mapping leaves out are dropped).
``FROM_CHANGELOG`` reads such a column back as each row's kind (retract mode: the mapping must name
``UPDATE_BEFORE``), and the op column is dropped. Both are stateless, row by row: in kindling a changelog is its rows
with their kind in one column (:data:`kindling.row_layout.ROWKIND_COLUMN`), so each is one projection in Spark::

    SELECT * FROM TO_CHANGELOG(input => TABLE totals, op => DESCRIPTOR(op_code), op_mapping => MAP['INSERT', 'I'])
    SELECT * FROM FROM_CHANGELOG(input => TABLE cdc, op => DESCRIPTOR(__op),
                                 op_mapping => MAP['c, r', 'INSERT', 'ub', 'UPDATE_BEFORE', 'u', 'UPDATE_AFTER', 'd', 'DELETE'])

As in Flink 2.3, the input is a named table or view with row semantics (no ``PARTITION BY``), in streaming mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from kindling.common.row import RowKind
from kindling.row_layout import ROWKIND_COLUMN
from kindling.sql.errors import SqlError
from kindling.sql.tokens import (
    QUOTED,
    STRING,
    WORD,
    Token,
    matching_paren,
    next_significant,
    previous_significant,
    render,
    significant,
    split_top_level,
    tokenize,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

TO_CHANGELOG = "TO_CHANGELOG"
FROM_CHANGELOG = "FROM_CHANGELOG"
# Flink's change operations (RowKind names) and kindling's row kinds ('+I', '-U', '+U', '-D').
KINDS = {kind.name: kind.short_string() for kind in RowKind}
_ARGUMENTS = ("input", "op", "op_mapping")
_FORM = "SELECT * FROM {}(input => TABLE t [, op => DESCRIPTOR(op_column)] [, op_mapping => MAP['INSERT', 'I', ...]])"


@dataclass(frozen=True)
class ChangelogCall:
    """One call of a changelog function in a query's text, parsed."""

    function: str  # TO_CHANGELOG | FROM_CHANGELOG
    table: str  # the input table or view, as written after TABLE
    op: str  # the operation column's name
    # TO_CHANGELOG: change operation -> code written; FROM_CHANGELOG: code read -> change operation. None: Flink's default.
    mapping: Optional[dict[str, str]]
    before: str  # the query's text before the call
    after: str  # and after it
    line: int

    def with_view(self, view: str) -> str:
        """The query with the call replaced by a view of its rows."""
        return f"{self.before}{view}{self.after}"


def find_changelog_call(text: str, line: int) -> Optional[ChangelogCall]:
    """The first ``TO_CHANGELOG(...)``/``FROM_CHANGELOG(...)`` in ``text``; None when there is none.

    >>> call = find_changelog_call("SELECT * FROM TO_CHANGELOG(input => TABLE t, op => DESCRIPTOR(kind)) AS c", 1)
    >>> call.function, call.table, call.op, call.with_view("v")
    ('TO_CHANGELOG', 't', 'kind', 'SELECT * FROM v AS c')
    """
    if "_CHANGELOG" not in text.upper():  # planned for every query: most have none
        return None
    tokens = tokenize(text, line)
    for i, token in enumerate(tokens):
        if not token.is_word(TO_CHANGELOG, FROM_CHANGELOG):
            continue
        previous = previous_significant(tokens, i)
        opening = next_significant(tokens, i)
        if opening is None or not tokens[opening].is_symbol("(") or (previous is not None and tokens[previous].is_symbol(".")):
            continue
        close = matching_paren(tokens, opening)
        function = token.upper
        arguments = _arguments(function, tokens[opening + 1:close], token.line)
        if "input" not in arguments:
            raise SqlError(f"{function} takes an input table", line=token.line, construct=function, hint=_FORM.format(function))
        op = _descriptor(function, arguments["op"], token.line) if "op" in arguments else "op"
        mapping = _mapping(function, arguments["op_mapping"], token.line) if "op_mapping" in arguments else None
        return ChangelogCall(function, _input_table(function, arguments["input"], token.line), op, mapping,
                             render(tokens[:i]), render(tokens[close + 1:]), token.line)
    return None


def _arguments(function: str, tokens: list[Token], line: int) -> dict[str, list[Token]]:
    """The call's arguments by name: ``name => value`` or by position (input, op, op_mapping)."""
    arguments: dict[str, list[Token]] = {}
    for position, part in enumerate(split_top_level(tokens)):
        sig = significant(part)
        if not sig:
            raise SqlError(f"{function}: an empty argument", line=line, construct=function, hint=_FORM.format(function))
        if len(sig) > 2 and sig[1].is_symbol("=>") and sig[0].kind in (WORD, QUOTED):
            name, value = sig[0].identifier.lower(), sig[2:]
        elif position < len(_ARGUMENTS):
            name, value = _ARGUMENTS[position], sig
        else:
            raise SqlError(f"{function} takes at most {len(_ARGUMENTS)} arguments ({', '.join(_ARGUMENTS)})", line=line,
                           construct=function, hint=_FORM.format(function))
        if name not in _ARGUMENTS:
            raise SqlError(f"{function} has no argument '{name}' (its arguments: {', '.join(_ARGUMENTS)})", line=line,
                           construct=function, hint=_FORM.format(function))
        if name in arguments:
            raise SqlError(f"{function}: argument '{name}' is given twice", line=line, construct=function)
        arguments[name] = value
    return arguments


def _input_table(function: str, sig: list[Token], line: int) -> str:
    if not sig[0].is_word("TABLE") or len(sig) < 2:
        raise SqlError(f"the input of {function} is TABLE followed by a table or view name", line=line, construct=function,
                       hint=_FORM.format(function))
    if any(t.is_word("PARTITION") for t in sig):
        # Flink's message: both functions take their input with row semantics.
        raise SqlError(f"Only tables with set semantics may be partitioned. Invalid PARTITION BY clause in the 0-th operand of "
                       f"table function '{function}'", line=line, construct=f"{function} with PARTITION BY",
                       hint=_FORM.format(function))
    if not all(t.kind in (WORD, QUOTED) or t.is_symbol(".") for t in sig[1:]):
        raise SqlError(f"the input of {function} is a table or view name, not a query: register the query as a view",
                       line=line, construct=f"{function} over a subquery", hint=_FORM.format(function))
    return "".join(t.text for t in sig[1:])


def _descriptor(function: str, sig: list[Token], line: int) -> str:
    if not (sig[0].is_word("DESCRIPTOR") and len(sig) >= 3 and sig[1].is_symbol("(") and sig[-1].is_symbol(")")):
        raise SqlError(f"{function}'s argument 'op' is DESCRIPTOR(column name)", line=line, construct=function,
                       hint=_FORM.format(function))
    names = [significant(part) for part in split_top_level(sig[2:-1])]
    if len(names) != 1 or len(names[0]) != 1 or names[0][0].kind not in (WORD, QUOTED):
        raise SqlError("The descriptor for argument 'op' must contain exactly one column name.", line=line, construct=function)
    return names[0][0].identifier


def _mapping(function: str, sig: list[Token], line: int) -> dict[str, str]:
    """An ``op_mapping`` MAP of string literals, validated as Flink does; a key may list several entries, comma-separated."""
    if not (sig[0].is_word("MAP") and len(sig) >= 3 and sig[1].is_symbol("[") and sig[-1].is_symbol("]")):
        raise SqlError(f"{function}'s argument 'op_mapping' is a MAP['key', 'value', ...] of string literals", line=line,
                       construct=function, hint=_FORM.format(function))
    items = [significant(part) for part in split_top_level(sig[2:-1])]
    if len(items) % 2 or not all(len(item) == 1 and item[0].kind == STRING for item in items):
        raise SqlError(f"{function}'s argument 'op_mapping' is a MAP['key', 'value', ...] of string literals", line=line,
                       construct=function, hint=_FORM.format(function))
    pairs: dict[str, str] = {}
    for key, value in zip(items[::2], items[1::2]):
        pairs[key[0].string_value] = value[0].string_value  # a MAP's later entry for the same key wins, as in Flink
    mapping: dict[str, str] = {}
    for key, value in pairs.items():
        for entry in (part.strip() for part in key.split(",")):
            kind = entry if function == TO_CHANGELOG else value
            if kind not in KINDS:
                raise SqlError(f"Invalid target mapping for argument 'op_mapping'. Unknown change operation: '{kind}'. "
                               f"Valid values are: [{', '.join(KINDS)}].", line=line, construct=function)
            if entry in mapping:
                duplicate = "change operation" if function == TO_CHANGELOG else "op code"
                raise SqlError(f"Invalid target mapping for argument 'op_mapping'. Duplicate {duplicate}: '{entry}'.",
                               line=line, construct=function)
            mapping[entry] = value
    if function == FROM_CHANGELOG and "UPDATE_BEFORE" not in mapping.values():
        raise SqlError("The 'op_mapping' must include UPDATE_BEFORE for retract mode. Upsert mode (without UPDATE_BEFORE) is "
                       "not supported in this version.", line=line, construct=function)
    return mapping


def to_changelog(changes: "DataFrame", call: ChangelogCall) -> "DataFrame":
    """``changes`` (a changelog: its rows with their kind) as inserts: the op column first, then the input's columns."""
    from pyspark.sql import functions as F

    from kindling.sql.column_types import with_type

    columns = [c for c in changes.columns if c != ROWKIND_COLUMN]
    if call.op in columns:
        raise SqlError(f"Field names must be unique. Found duplicates: [{call.op}]", line=call.line, construct=call.function)
    mapping = call.mapping if call.mapping is not None else {name: name for name in KINDS}
    kind = F.col(ROWKIND_COLUMN)
    code = None
    for name, written in mapping.items():
        code = (F.when if code is None else code.when)(kind == KINDS[name], F.lit(written))
    assert code is not None
    kept = changes.where(kind.isin([KINDS[name] for name in mapping]))
    return kept.select(with_type(code, call.op, "STRING"), *[F.col(f"`{c}`") for c in columns])


def from_changelog(rows: "DataFrame", call: ChangelogCall) -> "DataFrame":
    """``rows`` (append-only, with an op column) as a changelog: each row's kind read from the op column, which is dropped;
    a NULL or unknown code fails the job with Flink's message."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    if ROWKIND_COLUMN in rows.columns:
        raise SqlError(f"{call.function} reads an append-only table; '{call.table}' is updating (its rows carry updates and "
                       "deletes)", line=call.line, construct=f"{call.function} over an updating table",
                       hint=_FORM.format(call.function))
    if call.op not in rows.columns:
        raise SqlError(f"The op column '{call.op}' does not exist in the input schema.", line=call.line, construct=call.function)
    if not isinstance(rows.schema[call.op].dataType, StringType):
        raise SqlError(f"The op column '{call.op}' must be of type STRING, not {rows.schema[call.op].dataType.simpleString()}",
                       line=call.line, construct=call.function)
    mapping = call.mapping if call.mapping is not None else {name: name for name in KINDS}
    op = F.col(f"`{call.op}`")
    codes = ", ".join(mapping)
    kind = F.when(op.isNull(), F.raise_error(F.lit("Received NULL op code. Every changelog row must carry an operation code.")))
    for code, name in mapping.items():
        kind = kind.when(op == F.lit(code), F.lit(KINDS[name]))
    kind = kind.otherwise(F.raise_error(F.concat(F.lit("Received invalid op code '"), op,
                                                 F.lit(f"'. Defined op codes are: [{codes}]."))))
    return rows.select(*[F.col(f"`{c}`") for c in rows.columns if c != call.op], kind.alias(ROWKIND_COLUMN))
