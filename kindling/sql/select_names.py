"""The names Flink gives a SELECT's unaliased columns: ``EXPR$<position>`` for anything but a column reference.

Flink (Calcite) names ``SELECT k, n + 1, COUNT(*) FROM t GROUP BY k, n`` columns ``k``, ``EXPR$1``, ``EXPR$2``: an item
that is a (possibly qualified) column keeps the column's name, any other expression is named after its position in
the select list, counted from 0. Spark would name them ``(n + 1)`` and ``count(1)``, which a result's schema, its
printed header, a view's columns and a query over the view (``SELECT EXPR$1 FROM v``) would show. Every SELECT in a
query's text, subqueries included, gets the alias Flink derives, before the query is planned.

After a ``*`` item an expression's position depends on how many columns the ``*`` stands for, which the text does
not say: it gets a placeholder name (``EXPR$*<item>``) that :func:`flink_column_names` replaces with ``EXPR$<position
in the expanded row>`` once Spark has analysed the query (``SELECT *, n + 1 FROM t(k, n, m)`` names it ``EXPR$3``).

>>> name_unaliased_columns("SELECT k, n + 1, COUNT(*) AS c FROM t GROUP BY k, n")
'SELECT k, n + 1 AS `EXPR$1`, COUNT(*) AS c FROM t GROUP BY k, n'
>>> flink_column_names(["k", "n", "m", "EXPR$*1"])
['k', 'n', 'm', 'EXPR$3']
"""

from __future__ import annotations

from kindling.row_layout import INTERNAL_PREFIX
from kindling.sql.tokens import QUOTED, WORD, Token, split_alias, tokenize, with_depth

# The name of an unaliased expression after a `*` item until its position in the expanded row is known
_AFTER_STAR = "EXPR$*"

# Words that end a select list at its own depth
_LIST_END = ("FROM", "WHERE", "GROUP", "HAVING", "WINDOW", "ORDER", "LIMIT", "OFFSET", "FETCH", "UNION", "INTERSECT",
             "EXCEPT", "QUALIFY")
# Single words that are values, not columns (Flink names them EXPR$n too)
_VALUE_WORDS = ("TRUE", "FALSE", "NULL", "UNKNOWN", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "CURRENT_DATE", "CURRENT_TIME",
                "LOCALTIME", "CURRENT_ROW_TIMESTAMP")


def name_unaliased_columns(text: str) -> str:
    """``text`` with ``AS `EXPR$n``` after each select item Flink would name so; the text itself otherwise."""
    tokens = tokenize(text)
    insertions: dict[int, str] = {}  # token index -> alias written after it
    depths = [depth for _, depth in with_depth(tokens)]
    for i, token in enumerate(tokens):
        if token.is_word("SELECT"):
            for position, last, after_star in _unaliased_items(tokens, depths, i):
                insertions[last] = f" AS `{_AFTER_STAR if after_star else 'EXPR$'}{position}`"
    if not insertions:
        return text
    return "".join(t.text + insertions.get(k, "") for k, t in enumerate(tokens))


def _unaliased_items(tokens: list[Token], depths: list[int], select: int) -> list[tuple[int, int, bool]]:
    """(position, index of the item's last significant token, whether a ``*`` item precedes it) of each item of the
    select list starting after ``select`` that Flink names ``EXPR$<position>``, the position in the expanded row."""
    depth = depths[select]
    items: list[list[int]] = [[]]
    for k in range(select + 1, len(tokens)):
        token = tokens[k]
        if depths[k] < depth or (depths[k] == depth and token.is_word(*_LIST_END)):
            break
        if depths[k] == depth and token.is_symbol(","):
            items.append([])
            continue
        if not token.trivia:
            items[-1].append(k)
    if items[0] and tokens[items[0][0]].is_word("DISTINCT", "ALL"):
        items[0] = items[0][1:]
    named = []
    after_star = False
    for position, item in enumerate(items):
        if not item:
            return named
        sig = [tokens[k] for k in item]
        if sig[-1].is_symbol("*"):  # the positions after it are known once Spark has expanded it
            after_star = True
            continue
        if split_alias(sig)[1] is not None or _is_column(sig):
            continue
        named.append((position, item[-1], after_star))
    return named


def flink_column_names(columns: list[str]) -> list[str]:
    """``columns`` of an analysed query with each placeholder for an expression after a ``*`` named as Flink names it,
    ``EXPR$<position>``, counting the row's columns but not kindling's internal ones."""
    names = []
    position = 0
    for column in columns:
        if column.startswith(INTERNAL_PREFIX):
            names.append(column)
            continue
        names.append(f"EXPR${position}" if column.startswith(_AFTER_STAR) else column)
        position += 1
    return names


def _is_column(sig: list[Token]) -> bool:
    """A column reference: ``k``, ``t.k``, ``r.a.b``, quoted or not."""
    if len(sig) == 1:
        return sig[0].kind == QUOTED or (sig[0].kind == WORD and not sig[0].is_word(*_VALUE_WORDS))
    names, dots = sig[0::2], sig[1::2]
    return len(sig) % 2 == 1 and all(t.kind in (WORD, QUOTED) for t in names) and all(t.is_symbol(".") for t in dots)

