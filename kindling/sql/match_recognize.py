"""Flink's ``MATCH_RECOGNIZE``: row patterns found in each partition's rows, in event-time order, as Flink CEP finds them.

Flink translates the clause to its CEP library: ``PATTERN (A B+ C)`` becomes an NFA of strictly contiguous states
(no row may fall between two mapped rows), each row is offered to every partial match and starts a new one, a
greedy quantifier's row may not be taken by the following variable while the quantifier's own condition holds for
it (Flink's ``greedy()``), a reluctant one (``+?``, ``*?``) completes as soon as it can. A match completes on the row
a final variable takes; matches are released in the order they started, a match waiting while an earlier-started
partial match lives (it could still complete first), and ``AFTER MATCH SKIP`` prunes the partial and waiting matches
the released match overlaps (``PAST LAST ROW``: started at or before its last row; ``TO NEXT ROW``: at or before its
first row; ``TO FIRST|LAST v``: before v's first or last row). ``WITHIN`` drops a partial match once the watermark
is that far past its first row. Rows wait, per partition key, until the watermark passes their time (a row at or
behind the watermark is late and dropped), then enter the NFA in time order: Flink's ``CepOperator`` on the keyed
core of :mod:`kindling.sql.keyed` in event-time mode. The result is append-only: ``ONE ROW PER MATCH``, the partition
columns then the measures. In batch mode the same NFA runs over each partition's sorted rows.

DEFINE and MEASURES are compiled by :mod:`kindling.sql.row_pattern`. Refused by name, as Flink refuses or does not
support them: ``ALL ROWS PER MATCH``, ``SUBSET``, alternation and groups in PATTERN, ``PERMUTE``, a greedy quantifier
on the last variable, an optional reluctant quantifier, a pattern that can match no row, ordering by anything but
the event-time attribute.

Example::

    SELECT * FROM ticker MATCH_RECOGNIZE (
        PARTITION BY symbol ORDER BY rowtime
        MEASURES FIRST(A.rowtime) AS start_ts, LAST(A.rowtime) AS end_ts, AVG(A.price) AS avg_price
        ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
        PATTERN (A+ B) DEFINE A AS AVG(A.price) < 15)
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kindling.arrow import arrow_schema
from kindling.connectors.base import INTERNAL_PREFIX
from kindling.datastream.operator import Adapter
from kindling.durations import parse_duration
from kindling.sql.errors import SqlError
from kindling.sql.row_pattern import Expression, compile_expression
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
    with_depth,
)

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment

CONSTRUCT = "MATCH_RECOGNIZE"
TIME = INTERNAL_PREFIX + "mr_time"  # a row's event time, epoch milliseconds
GROUP = INTERNAL_PREFIX + "mr_all"
FORM = ("FROM t MATCH_RECOGNIZE ([PARTITION BY k] ORDER BY rowtime [, col [DESC]] MEASURES expr AS name, ... [ONE ROW PER MATCH] "
        "[AFTER MATCH SKIP PAST LAST ROW | TO NEXT ROW | TO FIRST v | TO LAST v] PATTERN (A B+ C*? ...) "
        "[WITHIN INTERVAL '1' HOUR] DEFINE B AS ..., C AS ...) [AS alias]")
_CLAUSES = ("PARTITION", "ORDER", "MEASURES", "ONE", "ALL", "AFTER", "PATTERN", "WITHIN", "SUBSET", "DEFINE")
_ALIAS_STOP = ("WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "JOIN", "LEFT", "RIGHT",
               "FULL", "INNER", "CROSS", "ON", "WINDOW")
_INFINITE = 1 << 62


@dataclass(frozen=True)
class Quantified:
    """One pattern variable with its quantifier: ``min``..``max`` rows (``max`` None: unbounded), greedy or not."""

    variable: str
    min: int
    max: Optional[int]
    greedy: bool

    @property
    def varies(self) -> bool:
        return self.max != self.min


@dataclass
class MatchRecognize:
    """A query around one ``MATCH_RECOGNIZE`` FROM item: the item's parts and the query with the item replaced."""

    source: str  # the input: a table name or a parenthesised query
    before: str  # the query's text up to the input
    after: str  # the query's text after the clause and its alias
    alias: Optional[str]
    partition: list[str]
    order: str  # the event-time attribute
    then_by: list[tuple[str, bool]]  # further ORDER BY columns (rows of one time), descending or not
    measures: list[tuple[list[Token], str]]  # expression tokens, output name
    skip: tuple[str, Optional[str]]  # PAST_LAST, NEXT_ROW, FIRST, LAST; the variable
    pattern: list[Quantified]
    within_ms: Optional[int]
    define: dict[str, list[Token]]
    line: int

    def outer_text(self, view: str) -> str:
        """The query reading ``view`` (the matches) where it read the MATCH_RECOGNIZE item."""
        return f"{self.before} {view}" + (f" AS `{self.alias}`" if self.alias else "") + f" {self.after}"


def _refuse(message: str, token: Optional[Token], line: int) -> SqlError:
    return SqlError(f"MATCH_RECOGNIZE: {message}", line=token.line if token else line, construct=CONSTRUCT, hint=FORM)


def find_match_recognize(text: str, line: int) -> Optional[MatchRecognize]:
    """``text``'s first MATCH_RECOGNIZE item outside parentheses, parsed; None when it has none."""
    if "MATCH_RECOGNIZE" not in text.upper():
        return None  # most queries: not tokenized again
    tokens = tokenize(text, line)
    at, last_from = None, None
    for index, (token, depth) in enumerate(with_depth(tokens)):
        if depth == 0 and token.is_word("FROM"):
            last_from = index
        if depth == 0 and token.is_word("MATCH_RECOGNIZE"):
            at = index
            break
    if at is None:
        return None
    if last_from is None:
        raise _refuse("MATCH_RECOGNIZE follows the input in a FROM clause", tokens[at], line)
    open_at = next_significant(tokens, at)
    if open_at is None or not tokens[open_at].is_symbol("("):
        raise _refuse("MATCH_RECOGNIZE needs its clauses in parentheses", tokens[at], line)
    close = matching_paren(tokens, open_at)
    alias, after_at = None, close + 1
    following = next_significant(tokens, close)
    if following is not None and tokens[following].is_word("AS"):
        name_at = next_significant(tokens, following)
        if name_at is None:
            raise _refuse("AS needs a name", tokens[following], line)
        alias, after_at = tokens[name_at].identifier, name_at + 1
    elif following is not None and tokens[following].kind in (WORD, QUOTED) and not tokens[following].is_word(*_ALIAS_STOP):
        alias, after_at = tokens[following].identifier, following + 1
    source = render(tokens[last_from + 1:at]).strip()
    if not source:
        raise _refuse("MATCH_RECOGNIZE needs an input table before it", tokens[at], line)
    body = _parse_body(tokens[open_at + 1:close], tokens[at], line)
    return MatchRecognize(source, render(tokens[:last_from + 1]), render(tokens[after_at:]), alias, line=line, **body)


def find_nested_match_recognize(text: str, line: int) -> Optional[tuple[str, str, str]]:
    """A subquery of ``text`` (at any depth) whose own FROM clause holds a MATCH_RECOGNIZE: the text before the
    subquery's parentheses, the subquery, and the text after them; None when there is none."""
    if "MATCH_RECOGNIZE" not in text.upper():
        return None
    tokens = tokenize(text, line)
    for index, (token, depth) in enumerate(with_depth(tokens)):
        if depth == 0 or not token.is_word("MATCH_RECOGNIZE"):
            continue
        level, open_at = 0, None
        for i in range(index - 1, -1, -1):  # the parenthesis around the query the clause belongs to
            if tokens[i].is_symbol(")", "]"):
                level += 1
            elif tokens[i].is_symbol("(", "["):
                if level == 0:
                    open_at = i
                    break
                level -= 1
        first = next_significant(tokens, open_at) if open_at is not None else None
        if first is None or not tokens[first].is_word("SELECT", "WITH"):
            raise _refuse("MATCH_RECOGNIZE belongs in a query's FROM clause", token, line)
        close = matching_paren(tokens, open_at)
        return render(tokens[:open_at]), render(tokens[open_at + 1:close]), render(tokens[close + 1:])
    return None


def _parse_body(body: list[Token], keyword: Token, line: int) -> dict[str, Any]:
    sig = significant(body)
    starts = [i for i, (t, depth) in enumerate(with_depth(sig)) if depth == 0 and t.is_word(*_CLAUSES)
              and not (t.is_word("ORDER") and i > 0 and sig[i - 1].is_word("TO", "FIRST", "LAST"))]
    clauses: dict[str, list[Token]] = {}
    for n, start in enumerate(starts):
        word = sig[start].upper
        if word in clauses:
            raise _refuse(f"{word} appears twice", sig[start], line)
        clauses[word] = sig[start:starts[n + 1] if n + 1 < len(starts) else len(sig)]
    if sig and (not starts or starts[0] != 0):
        raise _refuse(f"unexpected '{sig[0].text}'", sig[0], line)
    if "SUBSET" in clauses:
        raise _refuse("SUBSET is not supported (as in Flink)", clauses["SUBSET"][0], line)
    if "ALL" in clauses:
        raise _refuse("ALL ROWS PER MATCH is not supported (as in Flink: ONE ROW PER MATCH only)", clauses["ALL"][0], line)
    if "ONE" in clauses and [t.upper for t in clauses["ONE"]] != ["ONE", "ROW", "PER", "MATCH"]:
        raise _refuse("expected ONE ROW PER MATCH", clauses["ONE"][0], line)
    for required in ("ORDER", "PATTERN"):
        if required not in clauses:
            raise _refuse(f"{required} {'BY' if required == 'ORDER' else '(...)'} is required", keyword, line)
    partition = []
    if "PARTITION" in clauses:
        part = clauses["PARTITION"]
        if len(part) < 3 or not part[1].is_word("BY"):
            raise _refuse("expected PARTITION BY columns", part[0], line)
        for item in split_top_level(part[2:]):
            if len(item) != 1 or item[0].kind not in (WORD, QUOTED):
                raise _refuse(f"PARTITION BY takes columns, not '{render(item)}'", item[0] if item else part[0], line)
            partition.append(item[0].identifier)
    order_part = clauses["ORDER"]
    if len(order_part) < 3 or not order_part[1].is_word("BY"):
        raise _refuse("expected ORDER BY the event-time attribute", order_part[0], line)
    keys = split_top_level(order_part[2:])
    order: list[tuple[str, bool]] = []
    for key in keys:
        descending = bool(key) and key[-1].is_word("DESC")
        if key and key[-1].is_word("ASC", "DESC"):
            key = key[:-1]
        if len(key) != 1 or key[0].kind not in (WORD, QUOTED):
            raise _refuse(f"ORDER BY {render(order_part[2:]).strip()}: ORDER BY takes columns", order_part[0], line)
        order.append((key[0].identifier, descending))
    if order[0][1]:
        raise _refuse(f"ORDER BY {order[0][0]} DESC: the first ORDER BY key is the event-time attribute, ascending",
                      order_part[0], line)
    measures = []
    if "MEASURES" in clauses:
        for item in split_top_level(clauses["MEASURES"][1:]):
            if len(item) < 3 or not item[-2].is_word("AS") or item[-1].kind not in (WORD, QUOTED):
                raise _refuse(f"a measure is 'expression AS name', not '{render(item).strip()}'",
                              item[0] if item else clauses["MEASURES"][0], line)
            measures.append((item[:-2], item[-1].identifier))
    return {
        "partition": partition, "order": order[0][0], "then_by": order[1:], "measures": measures,
        "skip": _skip(clauses.get("AFTER"), line), "pattern": _pattern(clauses["PATTERN"], line),
        "within_ms": _within(clauses.get("WITHIN"), line), "define": _define(clauses.get("DEFINE"), line),
    }


def _skip(part: Optional[list[Token]], line: int) -> tuple[str, Optional[str]]:
    if part is None:
        return ("NEXT_ROW", None)  # Flink's default (Calcite's): AFTER MATCH SKIP TO NEXT ROW
    words = [t.upper for t in part]
    if words == ["AFTER", "MATCH", "SKIP", "PAST", "LAST", "ROW"]:
        return ("PAST_LAST", None)
    if words == ["AFTER", "MATCH", "SKIP", "TO", "NEXT", "ROW"]:
        return ("NEXT_ROW", None)
    if len(part) == 6 and words[:4] == ["AFTER", "MATCH", "SKIP", "TO"] and words[4] in ("FIRST", "LAST") \
            and part[5].kind in (WORD, QUOTED):
        return (words[4], part[5].identifier.upper())
    if len(part) == 5 and words[:4] == ["AFTER", "MATCH", "SKIP", "TO"] and part[4].kind in (WORD, QUOTED):
        return ("LAST", part[4].identifier.upper())  # SKIP TO v is SKIP TO LAST v
    raise _refuse(f"'{render(part)}': expected AFTER MATCH SKIP PAST LAST ROW, TO NEXT ROW, TO FIRST v or TO LAST v",
                  part[0], line)


def _pattern(part: list[Token], line: int) -> list[Quantified]:
    if len(part) < 3 or not part[1].is_symbol("("):
        raise _refuse("expected PATTERN (variables ...)", part[0], line)
    close = matching_paren(part, 1)
    if close != len(part) - 1:
        raise _refuse(f"unexpected '{part[close + 1].text}' after PATTERN (...)", part[close + 1], line)
    inner = part[2:close]
    elements: list[Quantified] = []
    i = 0
    while i < len(inner):
        token = inner[i]
        if token.kind not in (WORD, QUOTED):
            what = {"|": "alternation (|)", "(": "a group of variables", "^": "an anchor (^)", "$": "an anchor ($)",
                    "{-": "an exclusion ({- -})"}.get(token.text, f"'{token.text}'")
            raise _refuse(f"{what} in PATTERN is not supported (as in Flink)", token, line)
        if token.is_word("PERMUTE"):
            raise _refuse("PERMUTE in PATTERN is not supported (as in Flink)", token, line)
        variable = token.identifier.upper()
        if any(e.variable == variable for e in elements):
            raise _refuse(f"pattern variable {token.identifier} appears twice in PATTERN", token, line)
        i += 1
        low, high = 1, 1
        quantified = False
        if i < len(inner) and inner[i].is_symbol("*", "+", "?"):
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[inner[i].text]
            quantified = True
            i += 1
        elif i < len(inner) and inner[i].is_symbol("{"):
            end = next((j for j in range(i, len(inner)) if inner[j].is_symbol("}")), None)
            if end is None:
                raise _refuse("a quantifier { n, m } is not closed", inner[i], line)
            low, high = _bounds(inner[i + 1:end], inner[i], line)
            quantified = True
            i = end + 1
        greedy = True
        if quantified and i < len(inner) and inner[i].is_symbol("?"):
            greedy = False
            i += 1
            if (low, high) == (0, 1):
                raise _refuse(f"{token.text}?? : an optional reluctant quantifier is not supported (as in Flink)", token, line)
        elements.append(Quantified(variable, low, high, greedy))
    if not elements:
        raise _refuse("PATTERN needs at least one variable", part[0], line)
    if all(e.min == 0 for e in elements):
        raise _refuse("a pattern that can match no row is not supported (as in Flink)", part[0], line)
    last = elements[-1]
    if last.greedy and last.varies:
        raise _refuse(f"Greedy quantifiers are not allowed as the last element of a Pattern yet ({last.variable}, as in "
                      "Flink). Finish your pattern with either a simple variable or reluctant quantifier (+?, *?)", part[0], line)
    return elements


def _bounds(tokens: list[Token], at: Token, line: int) -> tuple[int, Optional[int]]:
    text = "".join(t.text for t in tokens)
    low_text, comma, high_text = text.partition(",")
    if not all(s.isdigit() or s == "" for s in (low_text, high_text)) or (not comma and not low_text):
        raise _refuse(f"{{{text}}}: a quantifier is {{n}}, {{n,}}, {{n,m}} or {{,m}}", at, line)
    low = int(low_text) if low_text else 0
    high = None if comma and not high_text else int(high_text) if comma else low
    if (high is not None and (high < low or high == 0)) or (not comma and low == 0):
        raise _refuse(f"{{{text}}}: the bounds need 0 <= n <= m and m > 0", at, line)
    return low, high


def _within(part: Optional[list[Token]], line: int) -> Optional[int]:
    if part is None:
        return None
    if len(part) != 4 or not part[1].is_word("INTERVAL"):
        raise _refuse("expected WITHIN INTERVAL 'n' unit", part[0], line)
    try:
        return int(parse_duration(f"{part[2].text.strip(chr(39))} {part[3].text.lower()}").total_seconds() * 1000)
    except ValueError:
        raise _refuse(f"unknown interval INTERVAL {part[2].text} {part[3].text}", part[2], line) from None


def _define(part: Optional[list[Token]], line: int) -> dict[str, list[Token]]:
    if part is None:
        return {}
    define = {}
    for item in split_top_level(part[1:]):
        if len(item) < 3 or item[0].kind not in (WORD, QUOTED) or not item[1].is_word("AS"):
            raise _refuse(f"a definition is 'variable AS condition', not '{render(item).strip()}'",
                          item[0] if item else part[0], line)
        define[item[0].identifier.upper()] = item[2:]
    return define


# --- the pattern's NFA ---------------------------------------------------------------------------------


@dataclass
class _Partial:
    start: int  # the sequence number of the partial match's first row
    start_ms: int
    element: int  # the pattern element it is at
    count: int  # rows mapped to that element
    mapped: tuple  # ((element, sequence number, row), ...)


@dataclass
class MatcherState:
    """One partition's matching: rows numbered in time order, live partial matches, matches waiting to be released."""

    sequence: int = 0
    partials: list = field(default_factory=list)
    waiting: list = field(default_factory=list)  # completed matches (start, mapped), in start order


class PatternMatcher:
    """The NFA of one pattern, its conditions and its after-match strategy; state lives in a :class:`MatcherState`."""

    def __init__(self, pattern: list[Quantified], conditions: dict[str, Expression], skip: tuple[str, Optional[str]],
                 within_ms: Optional[int]) -> None:
        self.pattern = pattern
        self.names = [e.variable for e in pattern]
        self.conditions = [conditions.get(name) for name in self.names]
        self.skip = skip
        self.within_ms = within_ms

    def condition(self, element: int, mapped: tuple, row: tuple) -> bool:
        expression = self.conditions[element]
        if expression is None:
            return True
        name = self.names[element]

        def rows(variable: Optional[str]) -> list:
            if variable is None:
                return [r for _, _, r in mapped] + [row]
            chosen = [r for k, _, r in mapped if self.names[k] == variable]
            if variable == name:
                chosen.append(row)
            return chosen

        return expression.value(rows, None) is True

    def _blocked(self, element: int, mapped: tuple, row: tuple) -> bool:
        """Whether leaving ``element`` on ``row`` is barred: a greedy quantifier keeps a row its condition takes."""
        quantified = self.pattern[element]
        # Flink compiles an optional variable (v?) to a single state whose greediness bars nothing
        looping = quantified.varies and (quantified.min, quantified.max) != (0, 1)
        return quantified.greedy and looping and self.condition(element, mapped, row)

    def _completes(self, element: int, count: int, mapped: tuple, row: tuple) -> bool:
        """Whether the state after taking ``row`` reaches the end through optional elements (Flink's proceed edges)."""
        while True:
            if count < self.pattern[element].min:
                return False
            if element + 1 == len(self.pattern):
                return True
            if self._blocked(element, mapped, row):
                return False
            element, count = element + 1, 0

    def _advance(self, partial: Optional[_Partial], sequence: int, time_ms: int, row: tuple) -> Iterator[tuple[bool, Any]]:
        """The partial matches (False, partial) and completed matches (True, (start, mapped)) ``row`` leads to."""
        if partial is None:
            element, count, mapped, start, start_ms = 0, 0, (), sequence, time_ms
        else:
            element, count, mapped, start, start_ms = (partial.element, partial.count, partial.mapped, partial.start,
                                                       partial.start_ms)
        while True:
            quantified = self.pattern[element]
            if (quantified.max is None or count < quantified.max) and self.condition(element, mapped, row):
                taken = mapped + ((element, sequence, row),)
                yield False, _Partial(start, start_ms, element, count + 1, taken)
                if self._completes(element, count + 1, mapped, row):
                    yield True, (start, taken)
            if count < quantified.min or element + 1 == len(self.pattern) or self._blocked(element, mapped, row):
                return
            element, count = element + 1, 0

    def process(self, state: MatcherState, time_ms: int, row: tuple) -> list[tuple]:
        """``row`` (the next in time order) offered to every partial match and to a new one; the matches released."""
        state.sequence += 1
        partials, completed = [], []
        for partial in [*state.partials, None]:
            for done, result in self._advance(partial, state.sequence, time_ms, row):
                (completed if done else partials).append(result)
        state.partials = partials
        for match in completed:
            bisect.insort(state.waiting, match, key=lambda m: m[0])
        return self._release(state)

    def advance_time(self, state: MatcherState, watermark_ms: int) -> list[tuple]:
        """Partial matches older than WITHIN dropped at ``watermark_ms``; the matches that no longer wait released."""
        if self.within_ms is None:
            return []
        kept = [p for p in state.partials if watermark_ms - p.start_ms < self.within_ms]
        if len(kept) == len(state.partials):
            return []
        state.partials = kept
        return self._release(state)

    def next_timeout(self, state: MatcherState) -> Optional[int]:
        """When the earliest partial match times out (WITHIN), if any does."""
        if self.within_ms is None or not state.partials:
            return None
        return min(p.start_ms for p in state.partials) + self.within_ms

    def _release(self, state: MatcherState) -> list[tuple]:
        released = []
        while state.waiting:
            start, mapped = state.waiting[0]
            earliest = min((p.start for p in state.partials), default=_INFINITE)
            if start > earliest:
                break  # an earlier-started partial match may still complete first
            state.waiting.pop(0)
            released.append(mapped)
            self._prune(state, mapped)
        return released

    def _prune(self, state: MatcherState, mapped: tuple) -> None:
        kind, variable = self.skip
        if kind == "PAST_LAST":
            bound, inclusive = mapped[-1][1], True
        elif kind == "NEXT_ROW":
            bound, inclusive = mapped[0][1], True
        else:
            rows = [sequence for k, sequence, _ in mapped if self.names[k] == variable]
            if not rows:
                raise SqlError(f"Could not skip to {variable}. No such element in the found match (AFTER MATCH SKIP TO "
                               f"{kind} {variable})", construct=CONSTRUCT)
            bound, inclusive = (rows[0] if kind == "FIRST" else rows[-1]), False
            if bound == mapped[0][1]:  # Flink's guard: the next match would start where this one did, forever
                raise SqlError(f"Could not skip to first element of a match. (AFTER MATCH SKIP TO {kind} {variable} "
                               "names the match's first row)", construct=CONSTRUCT)

        def pruned(start: int) -> bool:
            return start <= bound if inclusive else start < bound

        state.partials = [p for p in state.partials if not pruned(p.start)]
        state.waiting = [m for m in state.waiting if not pruned(m[0])]


# --- compiling a MATCH_RECOGNIZE item against its input --------------------------------------------------


@dataclass
class CompiledMatch:
    """A MATCH_RECOGNIZE item compiled over its input's columns: the matcher, and each match's output row."""

    matcher: PatternMatcher
    partition: list[int]  # the partition columns' indexes in a row
    measures: list[Expression]
    time_index: int
    then_by: list[tuple[int, bool]] = field(default_factory=list)  # further sort columns' indexes, descending or not
    converters: list[Callable[[Any], Any]] = field(default_factory=list)  # each measure's value to its column's type

    def measure_sql(self) -> list[str]:
        """Each measure as plain SQL over the input's columns (navigation removed), for Spark to type."""
        return [m.sql for m in self.measures]

    def typed(self, types: list[T.DataType]) -> "CompiledMatch":
        """The measures converted to ``types`` (their columns' types) on output."""
        self.converters = [converter(t) for t in types]
        return self

    def sort(self, rows: list[tuple]) -> list[tuple]:
        """Rows in ORDER BY order: by time, then the further keys (NULL the smallest value, as Flink sorts), else as
        they came."""
        rows = list(rows)
        for index, descending in reversed(self.then_by):
            rows.sort(key=lambda r, i=index: (r[i] is not None, r[i]) if r[i] is not None else (False, 0), reverse=descending)
        rows.sort(key=lambda r: r[self.time_index])
        return rows

    def output(self, mapped: tuple) -> tuple:
        """The row a match leaves: its partition columns, then its measures."""
        names = self.matcher.names
        last = mapped[-1][2]

        def rows(variable: Optional[str]) -> list:
            if variable is None:
                return [r for _, _, r in mapped]
            return [r for k, _, r in mapped if names[k] == variable]

        return tuple([last[i] for i in self.partition] + [convert(m.value(rows, None)) for m, convert in zip(self.measures, self.converters)])

    def run(self, state: MatcherState, rows: list[tuple]) -> list[tuple]:
        """Rows (already in time order) through the matcher; the output rows of the matches released."""
        out = []
        moment = None
        for row in rows:
            time_ms = row[self.time_index]
            if time_ms != moment:
                out.extend(self.output(m) for m in self.matcher.advance_time(state, time_ms))
                moment = time_ms
            out.extend(self.output(m) for m in self.matcher.process(state, time_ms, row))
        return out


def compile_match(match: MatchRecognize, columns: list[str]) -> CompiledMatch:
    """``match`` over rows of ``columns`` (plus the event time in epoch ms last); :meth:`CompiledMatch.typed` then gives
    the measures their column types."""
    index = {c.lower(): n for n, c in enumerate(columns)}
    variables = {e.variable for e in match.pattern}
    for name, tokens in match.define.items():
        if name not in variables:
            raise _refuse(f"DEFINE {name}: {name} is not a variable of PATTERN (...)", tokens[0] if tokens else None, match.line)
    conditions = {name: compile_expression(tokens, index, variables, match.order) for name, tokens in match.define.items()}
    kind, variable = match.skip
    if variable is not None and variable not in variables:
        raise _refuse(f"AFTER MATCH SKIP TO {kind} {variable}: {variable} is not a variable of PATTERN (...)", None, match.line)
    measures = [compile_expression(tokens, index, variables, match.order) for tokens, _ in match.measures]
    partition = []
    for column in match.partition:
        if column.lower() not in index:
            raise _refuse(f"PARTITION BY {column}: no such column in the input", None, match.line)
        partition.append(index[column.lower()])
    then_by = []
    for column, descending in match.then_by:
        if column.lower() not in index:
            raise _refuse(f"ORDER BY {column}: no such column in the input", None, match.line)
        then_by.append((index[column.lower()], descending))
    matcher = PatternMatcher(match.pattern, conditions, match.skip, match.within_ms)
    return CompiledMatch(matcher, partition, measures, len(columns), then_by)


def converter(data_type: T.DataType) -> Callable[[Any], Any]:
    """A Python value as the value of a ``data_type`` column."""
    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return lambda v: None if v is None else int(v)
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return lambda v: None if v is None else float(v)
    if isinstance(data_type, T.DecimalType):
        quantum = Decimal(1).scaleb(-data_type.scale)
        return lambda v: None if v is None else Decimal(str(v) if isinstance(v, float) else v).quantize(quantum)
    if isinstance(data_type, T.StringType):
        return lambda v: None if v is None else str(v)
    if isinstance(data_type, T.BooleanType):
        return lambda v: None if v is None else bool(v)
    return lambda v: v


# --- running it ------------------------------------------------------------------------------------------


class MatchFunction(Adapter):
    """One partition key's rows waiting for the watermark, and its NFA; timers feed due rows in time order."""

    tuple_values = True

    def __init__(self, compiled: CompiledMatch) -> None:
        self.compiled = compiled

    def open(self, runner: Any, runtime_context: Any) -> None:
        from kindling.datastream.state import ValueStateDescriptor, state_handle
        from kindling.datastream.timers import TimerService

        self._rows = state_handle(ValueStateDescriptor("rows"), lambda: runner.state)
        self._nfa = state_handle(ValueStateDescriptor("nfa"), lambda: runner.state)
        self._timers = TimerService(runner)

    def element(self, index: int, value: Any) -> list:
        time_ms = value[-1]
        if time_ms is None or time_ms <= self._timers.current_watermark():
            return []  # late (or without a time): Flink's CEP operator drops it
        waiting = self._rows.value() or []
        waiting.append(tuple(value))
        self._rows.update(waiting)
        self._timers.register_event_time_timer(time_ms)
        return []

    def timer(self, timestamp: int) -> list:
        # As Flink's CepOperator on a watermark: every row the watermark passed, in time order, then the watermark's
        # timeouts (the timers of later rows up to the watermark find nothing left to do).
        watermark = max(self._timers.current_watermark(), timestamp)
        waiting = self._rows.value() or []
        due = self.compiled.sort([r for r in waiting if r[-1] <= watermark])
        rest = [r for r in waiting if r[-1] > watermark]
        if len(rest) != len(waiting):
            self._rows.update(rest) if rest else self._rows.clear()
        state = self._nfa.value() or MatcherState()
        out = self.compiled.run(state, due)
        out.extend(self.compiled.output(m) for m in self.compiled.matcher.advance_time(state, watermark))
        timeout = self.compiled.matcher.next_timeout(state)
        if timeout is not None:
            self._timers.register_event_time_timer(timeout)
        if state.partials or state.waiting:
            self._nfa.update(state)
        else:
            self._nfa.clear()
        return out


def match_frame(env: "StreamEnvironment", rows: DataFrame, match: MatchRecognize, compiled: CompiledMatch,
                output: T.StructType) -> DataFrame:
    """``rows`` (the input, append-only, with its event time) matched per partition key; one row per match."""
    from kindling.sql.keyed import keyed_frame

    columns = [f.name for f in rows.schema.fields]
    timed = rows.withColumn(TIME, F.unix_millis(F.col(_quote(match.order)))).withColumn(GROUP, F.lit(0))
    keys = match.partition or [GROUP]
    return keyed_frame(env, timed, keys, columns + [TIME], MatchFunction(compiled), output, "MatchRecognize",
                       event_time=True, rowtime=F.col(_quote(match.order)))


def batch_match_frame(rows: DataFrame, match: MatchRecognize, compiled: CompiledMatch, output: T.StructType) -> DataFrame:
    """Batch mode: each partition's rows sorted by time through the same NFA, then the end of input."""
    import pyarrow as pa

    columns = [f.name for f in rows.schema.fields]
    timed = rows.withColumn(TIME, F.unix_millis(F.col(_quote(match.order)))).withColumn(GROUP, F.lit(0))
    keys = match.partition or [GROUP]
    names = [f.name for f in output.fields]

    def matches(table: pa.Table) -> pa.Table:
        values = [tuple(row[c] for c in columns + [TIME]) for row in table.to_pylist()]
        state = MatcherState()
        out = compiled.run(state, compiled.sort([r for r in values if r[-1] is not None]))
        out.extend(compiled.output(m) for m in compiled.matcher.advance_time(state, _INFINITE))
        return pa.Table.from_pylist([dict(zip(names, r)) for r in out], schema=arrow_schema(output))

    return timed.groupBy(*[F.col(_quote(k)) for k in keys]).applyInArrow(matches, output)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"

