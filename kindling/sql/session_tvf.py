"""Flink's SESSION window TVF, aggregated: the session group window over the same rows.

A session window cannot be assigned to a row on its own (sessions merge as rows arrive), so the SESSION TVF has no
per-row view as TUMBLE, HOP and CUMULATE have; Flink only allows it under a window aggregation. Spark's
``session_window`` is that aggregation, and kindling's group window ``GROUP BY SESSION(ts, gap)`` runs on it. So::

    SELECT window_start, window_end, customer, SUM(amount) FROM TABLE(SESSION(TABLE orders PARTITION BY customer,
      DESCRIPTOR(ts), INTERVAL '3' SECONDS)) GROUP BY window_start, window_end, customer

is planned as ``SELECT SESSION_START(ts, INTERVAL '3' SECONDS) AS window_start, SESSION_END(..) AS window_end, customer,
SUM(amount) FROM orders GROUP BY SESSION(ts, INTERVAL '3' SECONDS), customer``. Sessions are per PARTITION BY key, so
the GROUP BY must name exactly those keys besides the window (Spark's session would otherwise be per grouping key,
another answer); anything else is refused by name.
"""

from __future__ import annotations

from typing import Callable, Optional

from kindling.sql.errors import SqlError
from kindling.sql.tokens import (
    QUOTED,
    WORD,
    Token,
    matching_paren,
    next_significant,
    render,
    significant,
    split_top_level,
    tokenize,
    top_level_clauses,
    with_depth,
)

CONSTRUCT = "window TVF SESSION"
FORM = ("SELECT window_start, window_end, k, AGG(x) FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '10' "
        "MINUTE)) GROUP BY window_start, window_end, k")
_PROPERTIES = {"WINDOW_START": "SESSION_START", "WINDOW_END": "SESSION_END", "WINDOW_TIME": "SESSION_ROWTIME"}


def rewrite_session_tvfs(text: str, line: int) -> Optional[str]:
    """``text`` with each query over a SESSION TVF written as the session group window; None when there is none."""
    tokens = tokenize(text, line)
    at = _session_tvf(tokens)
    if at is None:
        return None
    start, end = _enclosing_query(tokens, at)
    rewritten = _rewrite_query(tokens[start:end], line)
    text = render(tokens[:start]) + rewritten + render(tokens[end:])
    return rewrite_session_tvfs(text, line) or text


def _session_tvf(tokens: list[Token]) -> Optional[int]:
    """The index of ``TABLE`` in the first ``TABLE(SESSION(...))``."""
    for i, t in enumerate(tokens):
        if t.is_word("TABLE"):
            j = next_significant(tokens, i)
            k = next_significant(tokens, j) if j is not None and tokens[j].is_symbol("(") else None
            if k is not None and tokens[k].is_word("SESSION"):
                m = next_significant(tokens, k)
                if m is not None and tokens[m].is_symbol("("):
                    return i
    return None


def _enclosing_query(tokens: list[Token], at: int) -> tuple[int, int]:
    """The token span of the innermost SELECT whose FROM holds the token at ``at``."""
    depths = [d for _, d in with_depth(tokens)]
    level = depths[at]
    while level > 0:
        open_index = max(i for i in range(at) if tokens[i].is_symbol("(") and depths[i] == level)
        first = next_significant(tokens, open_index)
        if first is not None and tokens[first].is_word("SELECT"):
            return open_index + 1, matching_paren(tokens, open_index)
        at, level = open_index, level - 1
    return 0, len(tokens)


def _rewrite_query(tokens: list[Token], line: int) -> str:
    top, positions = top_level_clauses(tokens, ("SELECT", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "WINDOW"))
    at = _session_tvf(tokens)
    first_line = tokens[at].line if at is not None else line

    def refuse(message: str) -> SqlError:
        return SqlError(f"the SESSION window TVF: {message}", line=first_line, construct=CONSTRUCT, hint=FORM)

    if "GROUP" not in positions or "FROM" not in positions:
        raise refuse("a SESSION window is only read by a window aggregation (GROUP BY window_start, window_end, ...)")
    table_open = next_significant(tokens, at)
    table_close = matching_paren(tokens, table_open)
    session_open = next_significant(tokens, next_significant(tokens, table_open))
    session_close = matching_paren(tokens, session_open)
    from_end = min([positions[c] for c in ("WHERE", "GROUP") if c in positions])
    alias = significant(tokens[table_close + 1:from_end])
    if significant(tokens[positions["FROM"] + 1:at]) or (alias and not (len(alias) in (1, 2) and alias[-1].kind in (WORD, QUOTED))):
        raise refuse("it must be the query's only FROM item")
    data, time_column, gap = _arguments(tokens[session_open + 1:session_close], refuse)
    source, partition = _partitioned(data, refuse)
    group_at = positions["GROUP"]
    by = next_significant(tokens, group_at)
    group_end = min([positions[c] for c in ("HAVING", "ORDER", "LIMIT", "WINDOW") if c in positions and positions[c] > group_at]
                    + [len(tokens)])
    parts = [significant(p) for p in split_top_level(tokens[by + 1:group_end])]
    names = [p[-1].identifier.lower() if len(p) in (1, 3) and p[-1].kind in (WORD, QUOTED) else None for p in parts]
    if "window_start" not in names or "window_end" not in names:
        raise refuse("its aggregation groups by window_start and window_end")
    keys = [n for n in names if n not in ("window_start", "window_end")]
    if None in keys or sorted(keys) != sorted(p.lower() for p in partition):
        raise refuse(f"besides the window it groups by exactly the PARTITION BY keys ({', '.join(partition) or 'none'}): "
                     "sessions are per partition key")
    window = f"{time_column}, {gap}"
    # Spark's streaming session window needs a key besides the window (and drops a literal one): sessions over all rows
    # also group by whether the row has a time, true for every row a session holds.
    keys_text = [render(p) for p, n in zip(parts, names) if n not in ("window_start", "window_end")]
    group = ", ".join([f"SESSION({window})"] + (keys_text or [f"{time_column} IS NOT NULL"]))
    select = _properties(tokens[top[0][0] + 1:positions["FROM"]], window, alias_items=True)
    where = render(tokens[positions["WHERE"]:group_at]) if "WHERE" in positions else " "
    rest = _properties(tokens[group_end:], window, alias_items=False)
    alias_text = f" {render(alias)}" if alias else ""
    return f"SELECT {select} FROM {source}{alias_text} {where.strip()} GROUP BY {group} {rest}"


def _arguments(tokens: list[Token], refuse: Callable[[str], SqlError]) -> tuple[list[Token], str, str]:
    """The SESSION call's data, time column and gap (positional or named)."""
    named: dict[str, list[Token]] = {}
    positional: list[list[Token]] = []
    for arg in split_top_level(tokens):
        sig = significant(arg)
        if len(sig) > 2 and sig[1].is_symbol("=>"):
            named[sig[0].upper] = arg[arg.index(sig[1]) + 1:]
        else:
            positional.append(arg)
    for name, arg in zip(("DATA", "TIMECOL", "GAP"), positional):
        named.setdefault(name, arg)
    if any(n not in named for n in ("DATA", "TIMECOL", "GAP")):
        raise refuse("it takes TABLE t [PARTITION BY k], DESCRIPTOR(ts) and a gap INTERVAL")
    descriptor = significant(named["TIMECOL"])
    if len(descriptor) != 4 or not descriptor[0].is_word("DESCRIPTOR") or descriptor[2].kind not in (WORD, QUOTED):
        raise refuse("the time column must be DESCRIPTOR(column)")
    return named["DATA"], render([descriptor[2]]), render(named["GAP"]).strip()


def _partitioned(data: list[Token], refuse: Callable[[str], SqlError]) -> tuple[str, list[str]]:
    """``TABLE t [PARTITION BY a, b]`` (or a parenthesised query) as the FROM source and the partition columns."""
    sig = significant(data)
    if sig and sig[0].is_word("TABLE"):
        sig = sig[1:]
    cut = next((k for k, t in enumerate(sig) if t.is_word("PARTITION")), len(sig))
    if not sig[:cut]:
        raise refuse("its first argument is TABLE name [PARTITION BY columns]")
    source_tokens = data[data.index(sig[0]):data.index(sig[cut - 1]) + 1]
    partition: list[str] = []
    if cut < len(sig):
        if cut + 1 >= len(sig) or not sig[cut + 1].is_word("BY"):
            raise refuse("PARTITION needs BY: PARTITION BY column")
        columns = [significant(p) for p in split_top_level(sig[cut + 2:])]
        if any(len(c) != 1 or c[0].kind not in (WORD, QUOTED) for c in columns):
            raise refuse("PARTITION BY takes column names")
        partition = [c[0].identifier for c in columns]
    return render(source_tokens), partition


def _properties(tokens: list[Token], window: str, alias_items: bool) -> str:
    """``window_start``/``window_end``/``window_time`` as the session's SESSION_START/END/ROWTIME(ts, gap); a SELECT
    item that is one of them alone keeps its name."""
    if alias_items:
        items = []
        for part in split_top_level(tokens):
            sig = significant(part)
            if len(sig) == 1 and sig[0].kind in (WORD, QUOTED) and sig[0].identifier.upper() in _PROPERTIES:
                items.append(f"{_PROPERTIES[sig[0].identifier.upper()]}({window}) AS {sig[0].identifier}")
            else:
                items.append(_properties(part, window, alias_items=False))
        return ", ".join(i.strip() for i in items)
    out = []
    for i, t in enumerate(tokens):
        before = next((tokens[j] for j in range(i - 1, -1, -1) if not tokens[j].trivia), None)
        if t.kind in (WORD, QUOTED) and t.identifier.upper() in _PROPERTIES and not (before is not None and before.is_symbol(".")):
            out.append(f"{_PROPERTIES[t.identifier.upper()]}({window})")
        else:
            out.append(t.text)
    return "".join(out)

