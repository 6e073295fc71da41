"""Flink's INTERSECT and EXCEPT on streams, planned on kindling's retracting aggregation.

Spark runs neither on a stream ("Intersect/Except between two streaming DataFrames is not supported"). Flink keeps,
per distinct row, whether each side has produced it, and updates the result as rows arrive: an ``EXCEPT`` row is
emitted while the right side has not produced it and retracted (``-D``) when it does. For set operations without
``ALL`` every operator is a test of membership on distinct rows (INTERSECT is AND, EXCEPT is AND NOT, UNION is OR),
so a whole tree of them is one counting aggregation: every operand's rows in one ``UNION ALL``, each marked with its
operand, grouped by all columns (NULLs group together, as set operations compare them); a second aggregation over
that changelog keeps the rows whose counts pass the tree's condition, inserting a row when it starts to hold and
deleting it when it stops. Both run on kindling's retracting aggregation.

Example: ``SELECT customer FROM orders EXCEPT SELECT customer FROM customers`` becomes, with the marker columns
named internally, ``SELECT customer FROM (SELECT customer, SUM(m0) AS m0, SUM(m1) AS m1 FROM (SELECT *, 1 AS m0, 0 AS
m1 FROM (SELECT customer FROM orders) UNION ALL SELECT *, 0, 1 FROM (SELECT customer FROM customers)) GROUP BY
customer) WHERE (m0 > 0 AND NOT (m1 > 0)) GROUP BY customer``.

``INTERSECT ALL`` and ``EXCEPT ALL`` (multiset semantics) are refused by name, as are a set operation's ``ORDER BY``
and ``LIMIT`` on a stream and a ``UNION ALL`` over an INTERSECT/EXCEPT result (a multiset over a set operation).
Batch mode leaves set operations to Spark, which runs them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from kindling.connectors.base import INTERNAL_PREFIX
from kindling.sql.errors import SqlError
from kindling.sql.tokens import Token, first_line, render, strip_trivia, tokenize, with_depth

MARKER = INTERNAL_PREFIX + "set_m"
_OPERATORS = ("UNION", "INTERSECT", "EXCEPT")
_SORTING = ("ORDER", "LIMIT", "OFFSET", "FETCH")


@dataclass(frozen=True)
class _Node:
    operator: str  # UNION, INTERSECT or EXCEPT
    all: bool
    left: "_Tree"
    right: "_Tree"


_Tree = Union[int, _Node]  # an int is an operand's index in SetOperation.operands


@dataclass
class SetOperation:
    """A query that is a tree of set operations with an INTERSECT or EXCEPT or a distinct UNION at its top, over its operand
    queries."""

    operands: list[str]
    tree: _Tree
    line: int

    @property
    def unions_only(self) -> bool:
        """True for a tree of UNIONs alone (Spark runs it over append-only operands)."""
        return not _has_intersect_or_except(self.tree)

    def union_text(self) -> str:
        """Every operand's rows, marked with the operand they come from (column ``MARKER<k>`` is 1 in operand k's rows)."""
        n = len(self.operands)
        branches = []
        for k, operand in enumerate(self.operands):
            markers = ", ".join(f"{int(j == k)} AS `{MARKER}{j}`" for j in range(n))
            branches.append(f"SELECT *, {markers} FROM ({operand}) AS `{MARKER}_in{k}`")
        return " UNION ALL ".join(branches)

    def aggregation_text(self, union_view: str, columns: list[str]) -> str:
        """The set operation over ``union_view`` (the rows of ``union_text()``, planned once), whose first
        ``len(columns)`` columns are named ``columns``.

        Rows per operand are counted by one aggregation; a second, over its changelog, keeps the rows whose counts
        pass the operation's condition: it inserts a row when the condition starts to hold and deletes it when it
        stops (Flink's +I and -D), where a HAVING would send the count's updates (-U/+U) on."""
        keys = ", ".join(f"`{c}`" for c in columns)
        counts = ", ".join(f"SUM(`{MARKER}{k}`) AS `{MARKER}{k}`" for k in range(len(self.operands)))
        counted = f"SELECT {keys}, {counts} FROM {union_view} GROUP BY {keys}"
        return f"SELECT {keys} FROM ({counted}) AS `{MARKER}_counted` WHERE {self._condition(self.tree)} GROUP BY {keys}"

    def _condition(self, tree: _Tree) -> str:
        if isinstance(tree, int):
            return f"`{MARKER}{tree}` > 0"
        left, right = self._condition(tree.left), self._condition(tree.right)
        joined = {"UNION": f"{left} OR {right}", "INTERSECT": f"{left} AND {right}", "EXCEPT": f"{left} AND NOT ({right})"}
        return f"({joined[tree.operator]})"


def find_set_operation(text: str, line: int, distinct_unions: bool = False) -> SetOperation | None:
    """``text`` as a tree of set operations holding an INTERSECT or EXCEPT (with ``distinct_unions``, also one whose
    top is a UNION without ALL); None for any other query.

    Raises SqlError for the forms Flink answers with multisets or a sort, which this plan cannot give."""
    operands: list[str] = []
    tree = _parse(strip_trivia(tokenize(text, line)), operands)
    if isinstance(tree, int):
        return None
    if not _has_intersect_or_except(tree) and not (distinct_unions and not tree.all):
        return None
    _check(tree, top=True, line=line)
    check_no_sort(operands[-1], line)
    return SetOperation(operands, tree, line)


def find_union_all(text: str, line: int) -> list[str] | None:
    """The operand queries of ``text`` when it is a chain of ``UNION ALL`` (no other set operation at its top level and
    no sort of the whole result); None for any other query. A parenthesised operand is given without its parentheses.

    >>> find_union_all("SELECT a FROM t UNION ALL (SELECT b FROM u)", 1)
    ['SELECT a FROM t', 'SELECT b FROM u']
    """
    parts, operators = _split(strip_trivia(tokenize(text, line)))
    if not operators or any(operator != ("UNION", True) for operator in operators):
        return None
    if any(depth == 0 and token.is_word(*_SORTING) for token, depth in with_depth(parts[-1])):
        return None  # ORDER BY/LIMIT of the whole union: planned (or refused by name) where a single query's are
    return [render(_parenthesised(part) or part).strip() for part in parts]


def _parse(tokens: list[Token], operands: list[str]) -> _Tree:
    """The set-operation tree of ``tokens``: INTERSECT binds tighter than UNION and EXCEPT, all left-associative; a
    parenthesised operand holding set operations is a subtree."""
    parts, operators = _split(tokens)
    if not operators:
        inner = _parenthesised(tokens)
        if inner is not None and _split(inner)[1]:
            return _parse(inner, operands)
        operands.append(render(tokens).strip())
        return len(operands) - 1
    trees = [_parse(part, operands) for part in parts]
    # INTERSECT first: fold each run of INTERSECTs, then UNION/EXCEPT left to right
    folded, pending = [trees[0]], []
    for (operator, all_), tree in zip(operators, trees[1:]):
        if operator == "INTERSECT":
            folded[-1] = _Node("INTERSECT", all_, folded[-1], tree)
        else:
            pending.append((operator, all_))
            folded.append(tree)
    result = folded[0]
    for (operator, all_), tree in zip(pending, folded[1:]):
        result = _Node(operator, all_, result, tree)
    return result


def _split(tokens: list[Token]) -> tuple[list[list[Token]], list[tuple[str, bool]]]:
    """Operands and (operator, ALL) pairs at the top level of ``tokens``."""
    parts: list[list[Token]] = [[]]
    operators: list[tuple[str, bool]] = []
    skip_quantifier = False
    previous: Token | None = None
    for token, depth in with_depth(tokens):
        star_except = previous is not None and previous.is_symbol("*")  # SELECT * EXCEPT (columns): not a set operation
        if not token.trivia:
            previous = token
        if skip_quantifier and not token.trivia:
            skip_quantifier = False
            if token.is_word("ALL", "DISTINCT"):
                operators[-1] = (operators[-1][0], token.is_word("ALL"))
                continue
        if depth == 0 and token.is_word(*_OPERATORS) and not star_except:
            operators.append((token.upper, False))
            parts.append([])
            skip_quantifier = True
            continue
        parts[-1].append(token)
    return [strip_trivia(p) for p in parts], operators


def _parenthesised(tokens: list[Token]) -> list[Token] | None:
    """The tokens inside one pair of parentheses enclosing all of ``tokens``; None if they are not so enclosed."""
    if len(tokens) < 2 or not tokens[0].is_symbol("(") or not tokens[-1].is_symbol(")"):
        return None
    for k, (_, depth) in enumerate(with_depth(tokens)):
        if depth == 0 and k < len(tokens) - 1:
            return None
    return strip_trivia(tokens[1:-1])


def _has_intersect_or_except(tree: _Tree) -> bool:
    if isinstance(tree, int):
        return False
    return tree.operator != "UNION" or _has_intersect_or_except(tree.left) or _has_intersect_or_except(tree.right)


def _check(tree: _Tree, top: bool, line: int) -> None:
    if isinstance(tree, int):
        return
    if tree.all and tree.operator != "UNION":
        raise SqlError(f"{tree.operator} ALL (multiset semantics) is not supported on streams", line=line,
                       construct=f"{tree.operator} ALL", hint=f"{tree.operator} without ALL, or batch mode "
                       "(SET 'execution.runtime-mode' = 'batch')")
    if tree.all and top:
        raise SqlError("UNION ALL over an INTERSECT or EXCEPT result is not supported on streams", line=line,
                       construct="UNION ALL", hint="UNION (distinct), or the INTERSECT/EXCEPT in a view unioned separately")
    multiset = top and tree.all  # a UNION ALL's operands are multisets too
    _check(tree.left, top=multiset, line=line)
    _check(tree.right, top=multiset, line=line)


def check_no_sort(operand: str, line: int) -> None:
    """Refuse an ORDER BY/LIMIT at the top level of the last operand: on a set operation it sorts the whole result."""
    tokens = tokenize(operand, line)
    for token, depth in with_depth(tokens):
        if depth == 0 and token.is_word(*_SORTING):
            clause = "ORDER BY" if token.upper == "ORDER" else token.upper
            raise SqlError(f"{clause} over INTERSECT/EXCEPT is not supported on streams", line=first_line([token], line),
                           construct=f"{clause} over a set operation",
                           hint="batch mode (SET 'execution.runtime-mode' = 'batch'), or sort where the result is read")
