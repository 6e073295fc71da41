"""A legacy group window aggregation that calls Python aggregate functions, planned as the window TVF aggregation.

Spark runs a group window (``GROUP BY k, TUMBLE(ts, INTERVAL '5' SECOND)``, what the Table API's
``window(Tumble...)`` writes) with its own aggregate functions only. When the SELECT list calls a Python aggregate
function (udaf), the query is rewritten as the same aggregation over the window TVF, which kindling's keyed
window aggregation runs::

    SELECT k, TUMBLE_START(ts, INTERVAL '5' SECOND) AS s, f(v) FROM t GROUP BY k, TUMBLE(ts, INTERVAL '5' SECOND)
    SELECT k, window_start AS s, f(v) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))
        GROUP BY k, window_start, window_end

``TUMBLE_START``/``_END``/``_ROWTIME`` (and HOP's) become ``window_start``/``window_end``/``window_time``, which
have the same values and types. A SESSION group window is refused: its windows merge, which the keyed window
aggregation does not do for a Python aggregate function.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from kindling.sql.errors import SqlError
from kindling.sql.group_aggregate import outer_select, single_from_item
from kindling.sql.tokens import WORD, Token, function_calls, matching_paren, render, significant, split_top_level, tokenize

_WINDOWS = ("TUMBLE", "HOP", "SESSION")
_PROPERTIES = {"START": "window_start", "END": "window_end", "ROWTIME": "window_time"}


def group_window_as_tvf(text: str, line: int, user_aggregates: Mapping[str, Any]) -> Optional[str]:
    """``text`` as a window TVF aggregation when it is a group window aggregation calling a Python aggregate function
    (a name of ``user_aggregates``) over one table or view; None for any other query."""
    if not user_aggregates:
        return None
    tokens = tokenize(text, line)
    if not function_calls(tokens, tuple(user_aggregates)):
        return None
    parts = outer_select(text, line)
    if parts is None or parts.group is None:
        return None
    group = [part for part in split_top_level(parts.group) if render(part).strip()]
    windows = [n for n, part in enumerate(group) if _window_call(part) is not None]
    if len(windows) != 1:
        return None
    kind, arguments = _window_call(group[windows[0]])  # type: ignore[misc]
    if kind == "SESSION":
        called = {tokens[n].upper for n, _, _, _ in function_calls(tokens, tuple(user_aggregates))}
        pandas = any(user_aggregates[name].func_type == "pandas" for name in called)
        reason = ("Session Group Window is currently not supported for Pandas UDAF." if pandas else
                  "a Python aggregate function in a SESSION group window is not supported (session windows merge)")
        raise SqlError(reason, line=line, construct="SESSION group window with a Python aggregate function",
                       hint="a TUMBLE or HOP group window, or the built-in aggregates")
    source = single_from_item(parts.from_tokens)
    if source is None or source[1] is None:
        return None  # a subquery or a join: refused where Spark would be given the call
    _, name, alias = source
    time_column, sizes = arguments[0], arguments[1:]
    tvf = f"TABLE({kind}(TABLE {name}, DESCRIPTOR({time_column}), {', '.join(sizes)}))" + (f" AS {alias}" if alias else "")
    keys = [render(part).strip() for n, part in enumerate(group) if n != windows[0]] + ["window_start", "window_end"]
    select = _properties(parts.select_tokens).strip()
    if any(t.kind == WORD and t.upper == "WINDOW_TIME" for t in tokenize(select)):
        keys.append("window_time")  # the window TVF aggregation selects it only as a grouping key
    query = f"SELECT {select} FROM {tvf}"
    if parts.where is not None:
        query += f" WHERE {render(parts.where).strip()}"
    query += f" GROUP BY {', '.join(keys)}"
    if parts.having is not None:
        query += f" HAVING {_properties(parts.having).strip()}"
    return query


def _window_call(part: list[Token]) -> Optional[tuple[str, list[str]]]:
    """(TUMBLE|HOP|SESSION, argument texts) of a GROUP BY item that is a group window call."""
    sig = significant(part)
    if len(sig) < 3 or sig[0].kind != WORD or sig[0].upper not in _WINDOWS or not sig[1].is_symbol("("):
        return None
    open_index = part.index(sig[1])
    close = matching_paren(part, open_index)
    if significant(part[close + 1:]):
        return None
    return sig[0].upper, [render(a).strip() for a in split_top_level(part[open_index + 1:close])]


def _properties(tokens: list[Token]) -> str:
    """``tokens`` with each group window property call (``TUMBLE_START(ts, ...)``) as the TVF's window column."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        kind, _, prop = token.upper.partition("_") if token.kind == WORD else ("", "", "")
        if kind in _WINDOWS and prop in _PROPERTIES:
            sig_after = [j for j in range(i + 1, len(tokens)) if not tokens[j].trivia]
            if sig_after and tokens[sig_after[0]].is_symbol("("):
                out.append(_PROPERTIES[prop])
                i = matching_paren(tokens, sig_after[0]) + 1
                continue
        out.append(token.text)
        i += 1
    return "".join(out)
