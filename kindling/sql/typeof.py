"""Flink's ``TYPEOF`` of an expression: the type kindling derives for it, as Flink prints it.

A declared column's type is answered from the catalog before translation (:mod:`kindling.sql.declared_types`). Any
other argument is translated as a pending call (:func:`kindling.sql.analysis.pending_call`); once Spark has analysed
the query, the argument's Flink type is derived from the analyzed plan by :mod:`kindling.sql.column_types` (the types
columns carry from their declarations, and the computations whose Flink type follows from their inputs') and the
call becomes that type's name as a string literal (``TYPEOF(amount * 2)`` over an ``INT`` column: ``'INT'``). An
argument whose type kindling does not derive is refused, naming TYPEOF.
"""

from __future__ import annotations

from typing import Any, Optional

from kindling.sql.analysis import analysed_pending, pending_call
from kindling.sql.column_types import expression_types, without_markers
from kindling.sql.errors import SqlError
from kindling.sql.tokens import splice

_MARKER = "__kindling_typeof"
_MARKER_BASE = 529_118_604_000


def typeof_call(argument: str) -> str:
    """The translated ``TYPEOF(argument)``, written out by :func:`with_flink_typeof`."""
    return pending_call(_MARKER, argument)


def with_flink_typeof(spark: Any, text: str) -> Optional[str]:
    """``text`` with each pending ``TYPEOF`` replaced by the Flink type of its argument; None when there is none."""
    if _MARKER not in text:
        return None
    tokens, calls, plan, found = analysed_pending(spark, text, _MARKER, _MARKER_BASE)
    values = {n: expression.children().apply(1) for n, expression in found.items()}  # CASE WHEN m = m THEN value END
    found_types = dict(zip(values, expression_types(plan, list(values.values()))))
    replacements = []
    for n, (name, close, _) in enumerate(calls):
        flink_type = found_types.get(n)
        if flink_type is None:
            raise SqlError("TYPEOF of this expression is not supported: kindling does not derive its Flink type (it derives "
                           "declared columns, casts to numbers, integer and floating-point + - *, integer and boolean "
                           "literals and the built-in aggregates)", line=tokens[name].line, construct="TYPEOF",
                           hint="TYPEOF(column), or of an arithmetic expression over numeric columns")
        replacements.append((name, close + 1, "'" + without_markers(flink_type) + "'"))
    return splice(tokens, replacements)


def left_pending(text: str) -> bool:
    """Whether a TYPEOF was not written out (nested in another pending call's argument): refused by the caller."""
    return _MARKER in text
