"""Flink SQL query text -> Spark SQL text, rewriting the constructs only Flink has.

Why a token rewriter feeding Spark's own parser (and not sqlglot): sqlglot has no Flink dialect
(no WATERMARK, METADATA, DESCRIPTOR, window TVFs or group-window auxiliaries), so it would need
the same rewrites plus a second grammar; and the text Spark finally parses is what has to be
right. Rewriting tokens keeps every untouched character, newline included, so Spark's line
numbers are the user's line numbers and its messages can be mapped back.

Rewrites:

* group windows ``GROUP BY TUMBLE(ts, INTERVAL '1' HOUR)`` -> ``window(ts, '1 hour')``,
  ``HOP(ts, slide, size)`` -> ``window(ts, 'size', 'slide')``, ``SESSION(ts, gap)`` ->
  ``session_window(ts, 'gap')``; ``TUMBLE_START/_END/_ROWTIME(...)`` -> ``window.start`` /
  ``window.end`` / ``window_time(window)``
* window TVFs ``TABLE(TUMBLE|HOP|CUMULATE(TABLE t, DESCRIPTOR(ts), ...))`` -> a view that adds
  ``window_start``, ``window_end``, ``window_time`` (built by :mod:`kindling.sql.session`)
* ``FLOOR/CEIL(ts TO unit)``, ``PROCTIME()``, ``TO_TIMESTAMP_LTZ(n, p)``, ``SPLIT_INDEX``, ``REGEXP_EXTRACT``,
  ``RAND_INTEGER``, ``ROW(...)``, ``COUNT(DISTINCT ...)``
  (as ``size(collect_set(...))``: Spark streams refuse distinct aggregates), and Flink's types
  inside ``CAST``/``TRY_CAST``
* collections: ``ARRAY[...]``/``MAP[...]`` constructors, ``a[i]`` counted from 1 as Flink does (Spark's ``[]``
  counts from 0) through ``try_element_at``, ``ELEMENT``, ``ARRAY_CONTAINS`` with Flink's NULL rule
* ``x SIMILAR TO 'pattern'`` as a whole-string ``RLIKE``, ``BETWEEN SYMMETRIC``, ``(s, e) OVERLAPS (s, e)``;
  ``TO_BASE64``/``FROM_BASE64``, ``SHA1``/``SHA2xx``, ``WEEK``, ``IS_ALPHA``/``IS_DIGIT`` (Flink: FALSE for NULL)
* ``JSON_VALUE``, ``JSON_QUERY`` (with Flink's default clauses) and ``IS JSON``, through Spark's VARIANT
* Flink's answers where Spark's function of the same name differs (recorded from PyFlink 2.3,
  ``tests/table/pyflink_reference/expressions.json``): ``LN``/``LOG``/``LOG2``/``LOG10`` with ``java.lang.Math``
  (NaN below zero), ``UNHEX`` of an odd length, ``INITCAP`` (ASCII words), ``ASCII`` (a signed byte), ``LTRIM``/``RTRIM``
  with characters, ``STR_TO_MAP``'s default delimiters, ``ELT`` and ``OVERLAY`` out of range, ``URL_DECODE``/
  ``PARSE_URL`` of bad text, ``REGEXP_EXTRACT_ALL`` of a missing group, ``SPLIT`` (a literal delimiter),
  ``ARRAY_AGG`` (NULLs kept), ``CURRENT_DATABASE``, ``LOCALTIMESTAMP``, ``DATE_FORMAT`` (no DATE); refused by name:
  seeded ``RAND``/``RAND_INTEGER``, ``TIMESTAMPDIFF`` in months, quarters or years, ``JSON_EXISTS``,
  ``JSON_ARRAYAGG``/``JSON_OBJECTAGG`` and the ``BITMAP_*`` functions
* constructs Spark cannot run on a stream are refused here, with the line and the nearest
  supported form: ranking functions outside the Top-N form (which :mod:`kindling.sql.ranking`
  runs), OVER aggregations, ``MATCH_RECOGNIZE`` outside a FROM clause
* ``LATERAL TABLE(f(x))`` becomes Spark's ``LATERAL f(x)`` of a Python table function (``@udtf``); a
  ``LEFT JOIN LATERAL TABLE(...) ON TRUE`` the function's outer variant in an inner lateral join
* lookup joins (``JOIN dim FOR SYSTEM_TIME AS OF o.proc_time AS d ON ...``) become a
  ``LATERAL VIEW inline(...)`` of :mod:`kindling.sql.lookup_join`, which the session registers.

Everything else (``TO_TIMESTAMP``, ``TIMESTAMPADD``, ``TIMESTAMPDIFF``,
``EXTRACT``, ``CASE``, ``IF``, ``COALESCE``, string functions, ``||``, ``INTERVAL`` literals)
has the same name and meaning in Spark and passes through unchanged.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from kindling.sql.collection_functions import array_slice, map_union
from kindling.sql.errors import SqlError
from kindling.sql.functions import OUTER_PREFIX
from kindling.sql.ip_addresses import inet_aton, inet_ntoa
from kindling.sql.json_query import NULL, SUPPORTED_PATH, Behavior, json_query, json_value
from kindling.sql.json_text import json_array, json_quote, json_string_marker, json_unquote
from kindling.sql.lookup_join import LookupJoin, LookupRetry, lookup_hints, parse_lookup_join
from kindling.sql.time_values import cast_to_time
from kindling.sql.time_zones import convert_tz, java_time_zone
from kindling.sql.tokens import (
    COMMENT,
    NUMBER,
    QUOTED,
    STRING,
    WORD,
    Token,
    matching_open,
    matching_paren,
    next_significant,
    previous_significant,
    render,
    significant,
    split_top_level,
    strip_trivia,
    tokenize,
    with_depth,
)
from kindling.sql.typeof import typeof_call
from kindling.sql.types import parse_type, spark_sql_type

_LOOKUP_IDS = itertools.count(1)
LATERAL_TABLE_FORM = ("FROM t, LATERAL TABLE(f(t.x)) AS T(a, b) | FROM t [LEFT] JOIN LATERAL TABLE(f(t.x)) AS T(a) ON TRUE, "
                      "with f a Python table function (@udtf(result_types=[...]))")
GROUP_WINDOWS = ("TUMBLE", "HOP", "SESSION")
WINDOW_TVFS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")
_AUXILIARY = re.compile(r"^(TUMBLE|HOP|SESSION)_(START|END|ROWTIME|PROCTIME)$")
_INTERVAL_UNITS = {
    "MILLISECOND": "milliseconds", "MILLISECONDS": "milliseconds",
    "SECOND": "seconds", "SECONDS": "seconds",
    "MINUTE": "minutes", "MINUTES": "minutes",
    "HOUR": "hours", "HOURS": "hours",
    "DAY": "days", "DAYS": "days",
}
UNNEST_FORM = "FROM t CROSS JOIN UNNEST(t.array_column) AS u (element)"
TVF_FORM = ("TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTES)) | TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size)) | "
            "TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size))")
GROUP_WINDOW_FORM = "GROUP BY TUMBLE(ts, INTERVAL '1' HOUR) | HOP(ts, slide, size) | SESSION(ts, gap)"


@dataclass
class WindowTvf:
    """A window table-valued function found in a query; the session turns it into a view named ``view``."""

    view: str
    kind: str  # TUMBLE | HOP | CUMULATE
    source: str  # Spark SQL text of the input: a table name or a parenthesised query
    time_column: str
    size: str  # Spark duration strings ('10 minutes')
    slide: Optional[str] = None  # HOP
    step: Optional[str] = None  # CUMULATE
    offset: Optional[str] = None
    line: int = 1


@dataclass
class Translation:
    """A query as Spark SQL, with the window TVFs it uses and the catalog names it mentions."""

    text: str
    tvfs: list[WindowTvf] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    lookups: list[LookupJoin] = field(default_factory=list)


class _Rewriter:
    def __init__(self, view_name: Callable[[], str], batch: bool = False, functions: Optional[Mapping[str, str]] = None) -> None:
        self.view_name = view_name
        self.batch = batch
        self.functions = dict(functions or {})  # user functions Spark knows under another name (lower-case -> Spark's name)
        self.tvfs: list[WindowTvf] = []
        self.lookups: list[LookupJoin] = []
        self.lookup_hints: list[tuple[str, int, Optional[LookupRetry]]] = []  # (table named by a LOOKUP hint, line, retry)
        self.names: set[str] = set()
        self.session_window = False

    # --- driver -------------------------------------------------------------------------------
    def rewrite(self, tokens: list[Token]) -> str:
        out = _Output()
        i = 0
        while i < len(tokens):
            token = tokens[i]
            out.mark(i)
            operator = self._after_a_value(tokens, i, out)
            if operator is not None:
                text, i = operator
                out.append(text)
                continue
            if token.kind == COMMENT:
                hints = lookup_hints(token.text, token.line)
                if hints is not None:
                    out.append(hints[0])
                    self.lookup_hints.extend((table, token.line, retry) for table, retry in hints[1])
                    i += 1
                    continue
            if token.kind in (WORD, QUOTED) and _may_name_a_table(tokens, i):
                self.names.add(token.identifier)
            if token.kind == WORD:
                replaced = self._at_word(tokens, i)
                if replaced is not None:
                    text, next_index = replaced
                    original = "".join(t.text for t in tokens[i:next_index])
                    out.append(_keep_lines(text, original))
                    i = next_index
                    continue
            if token.kind == STRING:
                out.append(spark_string_literal(token.text))
            elif token.kind == WORD and "$" in token.text:  # Flink's identifiers may hold '$' (EXPR$0); Spark's quoted ones
                out.append(f"`{token.text}`")
            else:
                out.append(token.text)
            i += 1
        return out.text()

    def _after_a_value(self, tokens: list[Token], i: int, out: "_Output") -> Optional[tuple[str, int]]:
        """Operators written after their (first) operand whose Spark form wraps it (``a[i]``, ``x IS JSON``,
        ``(s, e) OVERLAPS (s, e)``): the operand's rewritten text is taken back out of ``out``."""
        token = tokens[i]
        if token.is_symbol("["):
            return self._index(tokens, i, out)
        if token.is_word("IS"):
            return self._is_json(tokens, i, out)
        if token.is_word("OVERLAPS"):
            return self._overlaps(tokens, i, out)
        return None

    def _index(self, tokens: list[Token], i: int, out: "_Output") -> Optional[tuple[str, int]]:
        """``a[i]``: Flink's arrays count from 1 (Spark's ``[]`` from 0); a missing index or key is NULL in both."""
        base = _indexed_base(tokens, i)
        if base is None or not out.has(base):
            return None
        close = matching_paren(tokens, i)
        text = f"try_element_at({out.take_back(base)}, {self.rewrite(tokens[i + 1:close])})"
        return _keep_lines(text, render(tokens[i:close + 1])), close + 1

    def _call(self, tokens: list[Token], i: int) -> Optional[tuple[int, int]]:
        """If tokens[i] is followed by '(', the indexes of '(' and its ')'."""
        j = next_significant(tokens, i)
        if j is None or not tokens[j].is_symbol("("):
            return None
        return j, matching_paren(tokens, j)

    def _args(self, tokens: list[Token], open_index: int, close_index: int) -> list[list[Token]]:
        inner = tokens[open_index + 1:close_index]
        if not significant(inner):
            return []
        return [strip_trivia(part) for part in split_top_level(inner)]

    def _at_word(self, tokens: list[Token], i: int) -> Optional[tuple[str, int]]:
        token = tokens[i]
        word = token.upper
        prev = previous_significant(tokens, i)
        if prev is not None and tokens[prev].is_symbol("."):
            return None  # a qualified name such as t.window or a struct field
        if token.text.lower() in self.functions and self._call(tokens, i) is not None:
            return self.functions[token.text.lower()], i + 1
        if word == "BETWEEN":
            symmetric = self._between_symmetric(tokens, i)
            if symmetric is not None:
                return symmetric
        if word == "SIMILAR":
            similar = self._similar_to(tokens, i)
            if similar is not None:
                return similar
        if word in ("ARRAY", "MAP"):
            j = next_significant(tokens, i)
            if j is not None and tokens[j].is_symbol("["):  # ARRAY[a, b] and MAP[k1, v1, k2, v2] value constructors
                close = matching_paren(tokens, j)
                items = self._args(tokens, j, close)
                return f"{word.lower()}({', '.join(self.rewrite(a) for a in items)})", close + 1
        call = self._call(tokens, i)
        if word == "LOCALTIMESTAMP" and call is None:
            return "localtimestamp()", i + 1  # the session time zone's wall-clock time, as Flink's
        if word in _UNSUPPORTED_FUNCTIONS and call is not None:
            raise SqlError(f"{word} is not supported by kindling", line=token.line, construct=word,
                           hint=_UNSUPPORTED_FUNCTIONS[word])
        if word == "TABLE" and call is not None:
            return self._window_tvf(tokens, i, *call)
        if word == "LATERAL":
            return self._lateral_table(tokens, i, outer=False)
        if word == "CROSS" and self._sequence(tokens, i, ("CROSS", "JOIN", "UNNEST")):
            return self._cross_join_unnest(tokens, i)
        if word == "LEFT":
            left_lateral = self._left_join_lateral(tokens, i)
            if left_lateral is not None:
                return left_lateral
        if word == "MATCH_RECOGNIZE":
            raise SqlError("MATCH_RECOGNIZE is supported as a FROM item of a query (or of a subquery), not here",
                           line=token.line, construct="MATCH_RECOGNIZE",
                           hint="SELECT ... FROM t MATCH_RECOGNIZE (...) [AS alias], or that query in parentheses")
        if word in ("JOIN", "LEFT", "INNER", "RIGHT", "FULL"):
            lookup = parse_lookup_join(tokens, i, self.rewrite, f"__kindling_lookup_{next(_LOOKUP_IDS)}")
            if lookup is not None:
                join, text, end = lookup
                self.lookups.append(join)
                return text, end
        if word == "FOR" and self._sequence(tokens, i, ("FOR", "SYSTEM_TIME", "AS", "OF")):
            raise SqlError("FOR SYSTEM_TIME AS OF is supported in a join of two FROM items only (a lookup join, or an event-time "
                           "temporal join against a versioned table)", line=token.line, construct="temporal join",
                           hint="SELECT ... FROM o [LEFT] JOIN v FOR SYSTEM_TIME AS OF o.ts AS v ON o.k = v.k, in a view or "
                                "subquery of its own")
        if word == "OVER" and not self.batch:  # a bounded table's OVER is Spark's window function, with Flink's frames
            function = self._function_before_over(tokens, i)
            if function in ("ROW_NUMBER", "RANK", "DENSE_RANK"):
                from kindling.sql.ranking import TOP_N_FORM

                raise SqlError(f"{function}() OVER is supported only in Top-N form (a subquery ranked and bounded by the outer WHERE)",
                               line=token.line, construct="Top-N", hint=TOP_N_FORM)
            raise SqlError(f"OVER aggregations ({function or 'aggregate'} OVER ...) cannot run on Spark streams", line=token.line,
                           construct="OVER aggregation", hint="a window aggregation: GROUP BY TUMBLE(ts, INTERVAL ...) or a window TVF")
        if call is None:
            return None
        open_index, close_index = call
        if word in GROUP_WINDOWS:
            return self._group_window(tokens, i, open_index, close_index), close_index + 1
        auxiliary = _AUXILIARY.match(word)
        if auxiliary:
            return self._auxiliary(token, auxiliary.group(1), auxiliary.group(2)), close_index + 1
        args = self._args(tokens, open_index, close_index)
        if word in ("FLOOR", "CEIL", "CEILING"):
            return self._floor_ceil(tokens, word, open_index, close_index)
        if word in ("PROCTIME", "CURRENT_ROW_TIMESTAMP") and not args:
            return "current_timestamp()", close_index + 1
        if word == "TO_TIMESTAMP_LTZ":
            return self._to_timestamp_ltz(token, args), close_index + 1
        if word == "SPLIT_INDEX" and len(args) == 3:
            return self._split_index(args), close_index + 1
        if word == "REGEXP_EXTRACT" and len(args) in (2, 3):
            # Flink: NULL when nothing matches, and group 0 (the whole match) by default; Spark gives '' and group 1.
            s, pattern = self.rewrite(args[0]), self.rewrite(args[1])
            group = self.rewrite(args[2]) if len(args) == 3 else "0"
            return f"CASE WHEN ({s}) RLIKE ({pattern}) THEN regexp_extract({s}, {pattern}, {group}) END", close_index + 1
        if word in ("GREATEST", "LEAST") and len(args) >= 2:
            # Flink: NULL when any argument is NULL; Spark skips NULLs.
            values = [self.rewrite(a) for a in args]
            nulls = " OR ".join(f"({v}) IS NULL" for v in values)
            return f"CASE WHEN {nulls} THEN NULL ELSE {word.lower()}({', '.join(values)}) END", close_index + 1
        if word in ("GROUPING", "GROUPING_ID") and args:
            # Flink: a BIGINT bit vector over the arguments given (the first the highest bit); Spark's grouping_id takes
            # every grouping column (the window's too) and its grouping() is a TINYINT of one column.
            bits = [f"grouping({self.rewrite(a)}) * {1 << (len(args) - 1 - n)}" for n, a in enumerate(args)]
            return f"CAST({' + '.join(bits)} AS BIGINT)", close_index + 1
        if word == "LISTAGG" and len(args) == 1:
            return f"listagg({self.rewrite(args[0])}, ',')", close_index + 1  # Flink's default separator
        if word in ("LAG", "LEAD") and len(args) == 3:
            # Flink's default stands in for a NULL value as for a row out of range; Spark's only for the latter
            value, offset, default = (self.rewrite(a) for a in args)
            return f"{word.lower()}(COALESCE({value}, {default}), {offset}, {default})", close_index + 1
        if word == "ARRAY_AGG" and len(args) == 1 and significant(args[0]) and not significant(args[0])[0].is_word("DISTINCT"):
            # Flink keeps NULL values; Spark's array_agg (collect_list) drops them, so each is collected in a struct
            value = self.rewrite(args[0])
            return f"transform(collect_list(named_struct('v', {value})), __kindling_e -> __kindling_e.v)", close_index + 1
        if word in ("FIRST_VALUE", "LAST_VALUE") and len(args) == 1:
            return f"{word.lower()}({self.rewrite(args[0])}, true)", close_index + 1  # Flink skips NULLs
        if word == "SIGN" and len(args) == 1:
            # Flink keeps the argument's type; Spark's signum is a DOUBLE.
            x = self.rewrite(args[0])
            return f"(CASE WHEN ({x}) > 0 THEN ({x}) - ({x}) + 1 WHEN ({x}) < 0 THEN ({x}) - ({x}) - 1 ELSE ({x}) END)", close_index + 1
        if word == "EXTRACT" and len(args) == 1 and significant(args[0])[:1] and significant(args[0])[0].is_word("SECOND"):
            words = [k for k, t in enumerate(args[0]) if t.is_word("FROM")]
            if words:  # Flink: the whole seconds as a BIGINT; Spark: seconds with their fraction
                return f"CAST(second({self.rewrite(args[0][words[0] + 1:])}) AS BIGINT)", close_index + 1
        if word in ("JSON_VALUE", "JSON_QUERY"):
            return self._json_query(token, word, args), close_index + 1
        simple = self._collection_or_string_function(word, args)
        if simple is not None:
            return simple, close_index + 1
        if word == "TYPEOF" and len(args) == 1 and significant(args[0]):
            return typeof_call(self.rewrite(args[0])), close_index + 1  # typed by typeof.with_flink_typeof
        if word == "TYPEOF":
            raise SqlError("TYPEOF of an expression, or of a column other than a declared physical column of the one table "
                           "the SELECT reads, is not supported: Spark names types its own way ('int', Flink: 'INT')",
                           line=token.line, construct="TYPEOF",
                           hint="TYPEOF(column) in the SELECT list over one table, or DESCRIBE a view of the query")
        if word == "JSON_STRING" and len(args) == 1 and significant(args[0]):
            return json_string_marker(self.rewrite(args[0])), close_index + 1  # typed by json_text.with_flink_json_strings
        if word == "JSON_ARRAY":
            return self._json_array(token, args), close_index + 1
        if word in ("JSON_STRING", "JSON_OBJECT"):
            raise SqlError(f"{word} of an expression, or of a column of another type than a string, number, boolean, DECIMAL "
                           "or timestamp declared by the one table the SELECT reads, is not supported (Spark writes nested "
                           "values in JSON its own way)", line=token.line, construct=word,
                           hint=f"{word} over columns of the table in FROM (STRING, numbers, BOOLEAN, DECIMAL, TIMESTAMP)")
        if word in ("RAND", "RAND_INTEGER") and len(args) == (1 if word == "RAND" else 2):
            raise SqlError(f"{word} with a seed is not supported: Spark's generator gives other numbers than Flink's for the "
                           "same seed", line=token.line, construct=word, hint=f"{word}({'' if word == 'RAND' else 'bound'}) without a seed")
        if word == "TIMESTAMPDIFF" and args and significant(args[0]) and significant(args[0])[0].upper in _MONTH_UNITS:
            unit = significant(args[0])[0].upper
            raise SqlError(f"TIMESTAMPDIFF({unit}, ...) is not supported: Spark counts whole months otherwise than Flink",
                           line=token.line, construct="TIMESTAMPDIFF",
                           hint="TIMESTAMPDIFF with DAY, HOUR, MINUTE or SECOND (or WEEK)")
        if word == "RAND_INTEGER" and args:
            bound = self.rewrite(args[-1])
            return f"CAST(floor(rand() * ({bound})) AS INT)", close_index + 1
        if word == "ROW":
            return "struct(" + ", ".join(self.rewrite(a) for a in args) + ")", close_index + 1
        if word == "COUNT" and args and significant(args[0]) and significant(args[0])[0].is_word("DISTINCT"):
            return self._count_distinct(tokens, open_index, close_index)
        if word in ("CAST", "TRY_CAST"):
            return self._cast(tokens, word, open_index, close_index), close_index + 1
        return None

    def _json_array(self, token: Token, args: list[list[Token]]) -> str:
        """``JSON_ARRAY(value, ... [NULL|ABSENT ON NULL])``: each value written as Flink's JSON of its type (typed by
        json_text.with_flink_json_strings, as JSON_STRING's), a JSON_ARRAY value as the JSON array it is."""
        values = [significant(a) for a in args]
        null_on_null = False
        if values and len(values[-1]) >= 3 and [t.upper for t in values[-1][-2:]] == ["ON", "NULL"] \
                and values[-1][-3].is_word("NULL", "ABSENT"):
            null_on_null = values[-1][-3].is_word("NULL")
            values[-1] = values[-1][:-3]
        if values == [[]]:
            values = []
        elements = []
        for value in values:
            head = value[0] if value else None
            nested = head is not None and head.kind == WORD and head.upper.startswith("JSON") and len(value) > 1 \
                and value[1].is_symbol("(")
            if nested and head.upper == "JSON_ARRAY" and matching_paren(value, 1) == len(value) - 1:
                elements.append(self.rewrite(value))
            elif nested and head.upper != "JSON_VALUE":
                raise SqlError(f"JSON_ARRAY of a {head.upper} value is not supported", line=head.line, construct="JSON_ARRAY",
                               hint="JSON_ARRAY of values and of JSON_ARRAY(...) calls")
            elif not value:
                raise SqlError("JSON_ARRAY: an empty value", line=token.line, construct="JSON_ARRAY", hint="JSON_ARRAY(1, 'a')")
            else:
                elements.append(json_string_marker(self.rewrite(value)))
        return json_array(elements, null_on_null)

    def _json_query(self, token: Token, word: str, args: list[list[Token]]) -> str:
        """``JSON_VALUE(json, path [RETURNING type] [{NULL|ERROR|DEFAULT literal} ON EMPTY] [... ON ERROR])`` and
        ``JSON_QUERY(json, path [WITH [CONDITIONAL|UNCONDITIONAL] [ARRAY] WRAPPER | WITHOUT [ARRAY] WRAPPER]
        [{NULL|ERROR|EMPTY ARRAY|EMPTY OBJECT} ON EMPTY] [... ON ERROR])`` with a string literal path of members and
        indexes. The value and its text come from Spark's VARIANT (:mod:`kindling.sql.json_query`)."""
        form = (f"{word}(json, '$.path'" + (" [RETURNING type] [DEFAULT 'x' ON EMPTY]" if word == "JSON_VALUE"
                                             else " [WITH WRAPPER] [EMPTY ARRAY ON ERROR]") + ")")
        rest = significant(args[1]) if len(args) == 2 else []
        if not rest or rest[0].kind != STRING:
            raise SqlError(f"{word} is supported with a string literal path", line=token.line, construct=word, hint=form)
        path = rest[0].string_value.strip()
        mode = re.match(r"(?is)(lax|strict)\s+", path)
        lax = bool(mode) and mode.group(1).lower() == "lax"
        path = path[mode.end():].strip() if mode else path
        if not SUPPORTED_PATH.fullmatch(path):
            raise SqlError(f"{word} with the path '{path}' is not supported: kindling reads paths of members and array "
                           "indexes ($.a.b, $.a[0], $['a b']), without wildcards or filters", line=token.line, construct=word,
                           hint=form)
        k = 1
        returning = None
        if word == "JSON_VALUE" and k < len(rest) and rest[k].is_word("RETURNING"):
            end = next((j for j in range(k + 1, len(rest)) if rest[j].is_word("NULL", "ERROR", "DEFAULT")), len(rest))
            returning = spark_sql_type(parse_type(rest[k + 1:end], token.line))
            k = end
        words = [t.upper if t.kind == WORD else t.text for t in rest]
        wrapper = "WITHOUT"
        if word == "JSON_QUERY":
            for clause, kind in ((["WITHOUT", "ARRAY", "WRAPPER"], "WITHOUT"), (["WITHOUT", "WRAPPER"], "WITHOUT"),
                                 (["WITH", "UNCONDITIONAL", "ARRAY", "WRAPPER"], "UNCONDITIONAL"),
                                 (["WITH", "UNCONDITIONAL", "WRAPPER"], "UNCONDITIONAL"),
                                 (["WITH", "CONDITIONAL", "ARRAY", "WRAPPER"], "CONDITIONAL"),
                                 (["WITH", "CONDITIONAL", "WRAPPER"], "CONDITIONAL"),
                                 (["WITH", "ARRAY", "WRAPPER"], "UNCONDITIONAL"), (["WITH", "WRAPPER"], "UNCONDITIONAL")):
                if words[k:k + len(clause)] == clause:
                    wrapper, k = kind, k + len(clause)
                    break
        behaviors: dict[str, Behavior] = {}
        answers = ("NULL", "ERROR", "DEFAULT") if word == "JSON_VALUE" else ("NULL", "ERROR", "EMPTY")
        while k < len(rest) and words[k] in answers:
            if words[k] == "DEFAULT":
                literal = rest[k + 1] if k + 1 < len(rest) else None
                if literal is None or literal.kind not in (STRING, NUMBER) or returning is not None:
                    raise SqlError("JSON_VALUE's DEFAULT is supported as a string or number literal, without RETURNING (Flink "
                                   "fails the job for a DEFAULT with RETURNING)", line=token.line, construct=word, hint=form)
                behavior, k = Behavior("DEFAULT", self.rewrite([literal])), k + 2
            elif words[k] == "EMPTY" and words[k + 1:k + 2] in (["ARRAY"], ["OBJECT"]):
                behavior, k = Behavior(f"EMPTY {words[k + 1]}"), k + 2
            elif words[k] == "EMPTY":
                break
            else:
                behavior, k = Behavior(words[k]), k + 1
            if words[k:k + 2] not in (["ON", "EMPTY"], ["ON", "ERROR"]) or words[k + 1] in behaviors:
                break
            behaviors[words[k + 1]] = behavior
            k += 2
        if k != len(rest):
            clauses = " ".join(t.text for t in rest[k:])
            raise SqlError(f"{word}: '{clauses}' is not supported", line=token.line, construct=word, hint=form)
        document = self.rewrite(args[0])
        on_empty, on_error = behaviors.get("EMPTY", NULL), behaviors.get("ERROR", NULL)
        if word == "JSON_QUERY":
            return json_query(document, _quoted_literal(path), lax, wrapper, on_empty, on_error)
        return json_value(document, _quoted_literal(path), lax, returning, on_empty, on_error)

    def _is_json(self, tokens: list[Token], i: int, out: "_Output") -> Optional[tuple[str, int]]:
        """``x IS [NOT] JSON [VALUE|SCALAR|ARRAY|OBJECT]``: whether ``x`` parses as JSON (of that kind); FALSE for
        NULL. ``x`` must be a name, a call, a literal or a parenthesised expression."""
        words: list[int] = []  # the (up to) three tokens after IS: [NOT] JSON [kind]
        k: Optional[int] = i
        while len(words) < 3 and (k := next_significant(tokens, k)) is not None:  # type: ignore[arg-type]
            words.append(k)
        following = [tokens[k].upper if tokens[k].kind == WORD else "" for k in words]
        negated = following[:1] == ["NOT"]
        rest = following[1:] if negated else following
        if rest[:1] != ["JSON"]:
            return None
        kind = rest[1] if rest[1:2] and rest[1] in ("VALUE", "SCALAR", "ARRAY", "OBJECT") else None
        end = words[int(negated) + (1 if kind else 0)] + 1
        before = previous_significant(tokens, i)
        start = before if before is not None and tokens[before].kind == STRING else _indexed_base(tokens, i)
        operator = previous_significant(tokens, start) if start is not None else None
        if start is None or not out.has(start) or (operator is not None and tokens[operator].is_symbol("||", "+", "-", "*", "/", "%")):
            raise SqlError("IS JSON is supported after a column, a function call, a literal or a parenthesised expression",
                           line=tokens[i].line, construct="IS JSON", hint="(a || b) IS JSON")
        operand = out.take_back(start).strip()
        parsed = f"try_parse_json({operand})"
        test = {None: f"{parsed} IS NOT NULL", "VALUE": f"{parsed} IS NOT NULL",
                "SCALAR": f"NOT schema_of_variant({parsed}) RLIKE '^(OBJECT|ARRAY)'",
                "ARRAY": f"schema_of_variant({parsed}) RLIKE '^ARRAY'", "OBJECT": f"schema_of_variant({parsed}) RLIKE '^OBJECT'"}[kind]
        text = f"(coalesce({test}, false))"
        return (f"(NOT {text})" if negated else text), end

    def _overlaps(self, tokens: list[Token], i: int, out: "_Output") -> Optional[tuple[str, int]]:
        """``(s0, e0) OVERLAPS (s1, e1)`` (an end may be an INTERVAL after its start): each period ordered, ends
        included, NULL when any bound is NULL. Takes the left period's text back out of ``out``."""
        left_close = previous_significant(tokens, i)
        right_open = next_significant(tokens, i)
        if left_close is None or right_open is None or not tokens[left_close].is_symbol(")") or not tokens[right_open].is_symbol("("):
            return None
        left_open = matching_open(tokens, left_close)
        right_close = matching_paren(tokens, right_open)
        if left_open is None or not out.has(left_open):
            return None
        periods = [self._args(tokens, left_open, left_close), self._args(tokens, right_open, right_close)]
        if any(len(p) != 2 for p in periods):
            raise SqlError("OVERLAPS compares two periods: (start, end or INTERVAL) OVERLAPS (start, end or INTERVAL)",
                           line=tokens[i].line, construct="OVERLAPS", hint="(ts, INTERVAL '1' HOUR) OVERLAPS (t0, t1)")
        bounds = []
        for start, end in periods:
            a = self.rewrite(start)
            b = f"({a}) + ({self.rewrite(end)})" if significant(end)[0].is_word("INTERVAL") else self.rewrite(end)
            bounds.append((f"({a})", f"({b})"))
        (s0, e0), (s1, e1) = bounds
        out.take_back(left_open)
        nulls = " OR ".join(f"{v} IS NULL" for v in (s0, e0, s1, e1))
        text = (f"(CASE WHEN {nulls} THEN NULL "
                f"ELSE greatest({s0}, {e0}) >= least({s1}, {e1}) AND greatest({s1}, {e1}) >= least({s0}, {e0}) END)")
        return _keep_lines(text, render(tokens[left_open:right_close + 1])), right_close + 1

    def _lateral_table(self, tokens: list[Token], i: int, outer: bool) -> tuple[str, int]:
        """``LATERAL TABLE(f(args))`` -> Spark's ``LATERAL f(args)``: a Python table function (``@udtf``) per row."""
        token = tokens[i]
        j = next_significant(tokens, i)
        k = next_significant(tokens, j) if j is not None else None
        if j is None or not tokens[j].is_word("TABLE") or k is None or not tokens[k].is_symbol("("):
            raise SqlError("LATERAL must be followed by TABLE(function(...))", line=token.line, construct="LATERAL TABLE",
                           hint=LATERAL_TABLE_FORM)
        close = matching_paren(tokens, k)
        inner = tokens[k + 1:close]
        name_index = next_significant(inner, -1)
        call = self._call(inner, name_index) if name_index is not None else None
        if call is None or inner[name_index].kind not in (WORD, QUOTED):  # type: ignore[index]
            raise SqlError("LATERAL TABLE needs a table function call, e.g. LATERAL TABLE(split(line))", line=token.line,
                           construct="LATERAL TABLE", hint=LATERAL_TABLE_FORM)
        open_index, close_index = call
        args = self._args(inner, open_index, close_index)
        name = inner[name_index].identifier
        function = (OUTER_PREFIX + name) if outer else name
        return f"LATERAL {function}({', '.join(self.rewrite(a) for a in args)})", close + 1

    def _cross_join_unnest(self, tokens: list[Token], i: int) -> tuple[str, int]:
        """``CROSS JOIN UNNEST(a) [AS] t (x)`` -> ``LATERAL VIEW explode(a) t AS x``: a row per element of an array
        (or key and value of a map); ``t (x, y)`` over an array of rows -> ``inline``, a column per field."""
        line = tokens[i].line
        unnest = next_significant(tokens, next_significant(tokens, i))  # type: ignore[arg-type]
        assert unnest is not None
        opening = next_significant(tokens, unnest)
        if opening is None or not tokens[opening].is_symbol("("):
            raise SqlError("UNNEST needs its array in parentheses", line=line, construct="UNNEST", hint=UNNEST_FORM)
        close = matching_paren(tokens, opening)
        args = self._args(tokens, opening, close)
        if len(args) != 1:
            raise SqlError(f"UNNEST takes one array or map, got {len(args)} arguments", line=line, construct="UNNEST", hint=UNNEST_FORM)
        j = next_significant(tokens, close)
        if j is not None and tokens[j].is_word("WITH"):
            raise SqlError("UNNEST ... WITH ORDINALITY is not supported", line=line, construct="UNNEST WITH ORDINALITY", hint=UNNEST_FORM)
        if j is not None and tokens[j].is_word("AS"):
            j = next_significant(tokens, j)
        k = next_significant(tokens, j) if j is not None else None
        if j is None or tokens[j].kind not in (WORD, QUOTED) or k is None or not tokens[k].is_symbol("("):
            raise SqlError("UNNEST needs an alias naming its columns", line=line, construct="UNNEST", hint=UNNEST_FORM)
        columns_close = matching_paren(tokens, k)
        columns = [render(c).strip() for c in split_top_level(tokens[k + 1:columns_close])]
        array = self.rewrite(args[0])
        is_map = bool(significant(args[0])) and significant(args[0])[0].is_word("MAP")
        generator = "inline" if len(columns) > 1 and not is_map else "explode"
        return f"LATERAL VIEW {generator}({array}) {tokens[j].text} AS {', '.join(columns)}", columns_close + 1

    def _left_join_lateral(self, tokens: list[Token], i: int) -> Optional[tuple[str, int]]:
        """``LEFT [OUTER] JOIN LATERAL TABLE(f(x)) [AS T(c)] ON TRUE``: the function's outer variant (a row of NULLs
        where it yields nothing), joined as an inner lateral join."""
        j = next_significant(tokens, i)
        if j is not None and tokens[j].is_word("OUTER"):
            j = next_significant(tokens, j)
        if j is None or not tokens[j].is_word("JOIN"):
            return None
        k = next_significant(tokens, j)
        if k is None or not tokens[k].is_word("LATERAL"):
            return None
        lateral, end = self._lateral_table(tokens, k, outer=True)
        m = next_significant(tokens, end - 1)
        while m is not None and not tokens[m].is_word("ON"):  # the alias: [AS] T[(a, b)]
            if tokens[m].is_symbol("("):
                m = next_significant(tokens, matching_paren(tokens, m))
                continue
            if tokens[m].kind not in (WORD, QUOTED) or tokens[m].upper in ("WHERE", "GROUP", "JOIN", "LEFT", "ORDER", "HAVING"):
                break
            m = next_significant(tokens, m)
        alias = "".join(t.text for t in tokens[end:m if m is not None else len(tokens)]).strip()
        condition = next_significant(tokens, m) if m is not None and tokens[m].is_word("ON") else None
        if condition is None or not tokens[condition].is_word("TRUE"):
            raise SqlError("LEFT JOIN LATERAL TABLE(...) is supported with ON TRUE only", line=tokens[i].line,
                           construct="LATERAL TABLE", hint=LATERAL_TABLE_FORM)
        return f", {lateral} {alias}".rstrip(), condition + 1

    def _between_symmetric(self, tokens: list[Token], i: int) -> Optional[tuple[str, int]]:
        """``BETWEEN SYMMETRIC b AND c`` -> ``BETWEEN <the smaller> AND <the larger>`` (NULL bounds stay NULL);
        ``BETWEEN ASYMMETRIC`` is Spark's ``BETWEEN``."""
        mode = next_significant(tokens, i)
        if mode is None or not tokens[mode].is_word("SYMMETRIC", "ASYMMETRIC"):
            return None
        if tokens[mode].is_word("ASYMMETRIC"):
            return "BETWEEN", mode + 1
        and_index = next((k for k, (t, depth) in enumerate(with_depth(tokens[mode + 1:]), mode + 1)
                          if depth == 0 and t.is_word("AND")), None)
        if and_index is None:
            raise SqlError("BETWEEN SYMMETRIC needs AND", line=tokens[i].line, construct="BETWEEN SYMMETRIC",
                           hint="x BETWEEN SYMMETRIC a AND b")
        end = _operand_end(tokens, and_index + 1)
        while end > and_index + 1 and tokens[end - 1].trivia:  # the space before what follows stays
            end -= 1
        low, high = self.rewrite(strip_trivia(tokens[mode + 1:and_index])), self.rewrite(strip_trivia(tokens[and_index + 1:end]))
        nulls = f"({low}) IS NULL OR ({high}) IS NULL THEN NULL"
        return (f"BETWEEN (CASE WHEN {nulls} WHEN ({low}) <= ({high}) THEN ({low}) ELSE ({high}) END) "
                f"AND (CASE WHEN {nulls} WHEN ({low}) <= ({high}) THEN ({high}) ELSE ({low}) END)"), end

    def _similar_to(self, tokens: list[Token], i: int) -> Optional[tuple[str, int]]:
        """``x [NOT] SIMILAR TO 'pattern'`` -> ``x [NOT] RLIKE 'regex'`` (the whole string must match)."""
        to = next_significant(tokens, i)
        if to is None or not tokens[to].is_word("TO"):
            return None
        pattern = next_significant(tokens, to)
        after = next_significant(tokens, pattern) if pattern is not None else None
        if pattern is None or tokens[pattern].kind != STRING or (after is not None and tokens[after].is_word("ESCAPE")):
            raise SqlError("SIMILAR TO is supported with a string literal pattern and no ESCAPE clause", line=tokens[i].line,
                           construct="SIMILAR TO", hint="x SIMILAR TO 'o_[0-9]+', or REGEXP(x, '^o.[0-9]+$')")
        regex = similar_to_regex(tokens[pattern].string_value)
        return "RLIKE " + _quoted_literal(regex), pattern + 1

    def _split_index(self, args: list[list[Token]]) -> str:
        """``SPLIT_INDEX(s, sep, n)``: the n-th (from 0) of the pieces of ``s`` between whole occurrences of ``sep``,
        empty pieces kept; NULL when ``n`` is out of range or negative and when ``s`` is empty; an empty ``sep``
        splits at each whitespace character (Flink's ``splitByWholeSeparatorPreserveAllTokens``). Spark's ``split``
        takes a regex, so ``sep`` is escaped; the split is one expression for every index of one string, which
        Spark's subexpression elimination computes once per row (``split_part`` would split once per call)."""
        s, n = self.rewrite(args[0]), self.rewrite(args[2])
        if len(args[1]) == 1 and args[1][0].kind == STRING:
            value = args[1][0].string_value
            regex = "".join("\\" + ch if ch.isascii() and not ch.isalnum() else ch for ch in value) or "\\s"
            pattern = _quoted_literal(regex)
        else:
            sep = self.rewrite(args[1])
            pattern = f"CASE WHEN ({sep}) = '' THEN '\\\\s' ELSE regexp_replace({sep}, '([^a-zA-Z0-9])', '\\\\\\\\$1') END"
        return f"get(split(nullif({s}, ''), {pattern}, -1), {n})"

    def _collection_or_string_function(self, word: str, args: list[list[Token]]) -> Optional[str]:
        """Flink functions Spark has under another name or with other NULL rules; None for any other call."""
        if word not in _RENAMED_FUNCTIONS:
            return None
        values = [self.rewrite(a) for a in args]
        if word == "ELEMENT" and len(values) == 1:
            a = values[0]
            return (f"CASE WHEN size({a}) > 1 THEN raise_error('ELEMENT: the array has more than one element') "
                    f"ELSE try_element_at({a}, 1) END")
        if word == "ARRAY_CONTAINS" and len(values) == 2:
            # Flink: a NULL element is looked for like any other (Spark: NULL whenever the needle is NULL).
            return f"exists({values[0]}, __kindling_element -> __kindling_element <=> ({values[1]}))"
        if word == "ARRAY_SORT" and 1 <= len(values) <= 3:
            # Flink: ascending with NULLs first by default, descending with NULLs last, a third argument placing NULLs
            # whatever the order, and NULL when any argument is NULL (Spark's array_sort puts NULLs last).
            a, ascending = values[0], (values[1] if len(values) > 1 else "TRUE")
            first = values[2] if len(values) > 2 else ascending
            present = f"filter({a}, __kindling_element -> __kindling_element IS NOT NULL)"

            def nulls(placed: str) -> str:
                return f"filter({a}, __kindling_element -> __kindling_element IS NULL AND ({placed}))"

            return (f"(CASE WHEN ({a}) IS NULL OR ({ascending}) IS NULL OR ({first}) IS NULL THEN NULL ELSE concat("
                    f"{nulls(first)}, CASE WHEN {ascending} THEN sort_array({present}, true) "
                    f"ELSE sort_array({present}, false) END, {nulls(f'NOT ({first})')}) END)")
        if word == "ARRAY_SLICE" and len(values) in (2, 3):
            return array_slice(values[0], values[1], values[2] if len(values) == 3 else None)
        if word == "ARRAY_CONCAT" and values:
            return f"concat({', '.join(values)})"
        if word == "ARRAY_REVERSE" and len(values) == 1:
            return f"reverse({values[0]})"
        if word == "MAP_UNION" and values:
            return map_union(values)
        if word == "INET_ATON" and len(values) == 1:
            return inet_aton(values[0])
        if word == "INET_NTOA" and len(values) == 1:
            return inet_ntoa(values[0])
        if word == "CONVERT_TZ" and len(values) == 3:
            zones = [significant(a) for a in args[1:]]
            if not all(len(z) == 1 and z[0].kind == STRING for z in zones):
                raise SqlError("CONVERT_TZ is supported with string literal time zones", line=args[0][0].line if args[0] else 1,
                               construct="CONVERT_TZ", hint="CONVERT_TZ(s, 'UTC', 'Europe/Berlin')")
            return convert_tz(values[0], *(_quoted_literal(java_time_zone(z[0].string_value)) for z in zones))
        if word == "JSON_QUOTE" and len(values) == 1:
            return json_quote(values[0])
        if word == "JSON_UNQUOTE" and len(values) == 1:
            return json_unquote(values[0])
        if word == "TO_BASE64" and len(values) == 1:
            return f"base64({values[0]})"
        if word == "FROM_BASE64" and len(values) == 1:
            return f"CAST(unbase64({values[0]}) AS STRING)"
        if word in _SHA_BITS and len(values) == 1:
            return f"sha1({values[0]})" if word == "SHA1" else f"sha2({values[0]}, {_SHA_BITS[word]})"
        if word in _LOGARITHMS and 1 <= len(values) <= (2 if word == "LOG" else 1):
            # Flink computes with java.lang.Math (NaN below zero); Spark with StrictMath, NULL below zero, and its last
            # digit can differ. Math.log's result comes back through its exact decimal text (reflect fails on NULL).
            def ln(x: str, method: str = "log") -> str:
                return f"(CASE WHEN ({x}) IS NOT NULL THEN CAST(reflect('java.lang.Math', '{method}', CAST({x} AS DOUBLE)) AS DOUBLE) END)"

            if word == "LOG10":
                return ln(values[0], "log10")
            if word == "LOG2":
                return f"({ln(values[0])} / {ln('2')})"
            return ln(values[-1]) if len(values) == 1 else f"({ln(values[1])} / {ln(values[0])})"
        if word == "UNHEX" and len(values) == 1:
            # Flink: of an odd number of digits the first is dropped and a zero byte put before; Spark reads it as 0x.
            x = values[0]
            return f"(CASE WHEN length({x}) % 2 = 1 THEN concat(X'00', unhex(substring({x}, 2))) ELSE unhex({x}) END)"
        if word == "INITCAP" and len(values) == 1:
            # Flink (Calcite): only ASCII letters and digits make words; any other character (an umlaut too) ends one.
            x, chars = values[0], f"split({values[0]}, '')"
            upper = "(CASE WHEN __kindling_c RLIKE '^[a-z]$' THEN upper(__kindling_c) ELSE __kindling_c END)"
            lower = "(CASE WHEN __kindling_c RLIKE '^[A-Z]$' THEN lower(__kindling_c) ELSE __kindling_c END)"
            starts = f"__kindling_i = 0 OR NOT (element_at({chars}, __kindling_i) RLIKE '^[A-Za-z0-9]$')"
            return (f"(CASE WHEN {x} IS NOT NULL THEN array_join(transform({chars}, (__kindling_c, __kindling_i) -> "
                    f"CASE WHEN {starts} THEN {upper} ELSE {lower} END), '') END)")
        if word == "ASCII" and len(values) == 1:
            # Flink: the first UTF-8 byte as a signed byte (-61 for 'Ä'); Spark: the first character's code point.
            x = values[0]
            return (f"(CASE WHEN ascii({x}) < 128 THEN ascii({x}) "
                    f"ELSE CAST(conv(hex(substring(encode({x}, 'UTF-8'), 1, 1)), 16, 10) AS INT) - 256 END)")
        if word in ("LTRIM", "RTRIM") and len(values) == 2:
            # Spark's two-argument ltrim/rtrim take the characters first
            return f"trim({'LEADING' if word == 'LTRIM' else 'TRAILING'} {values[1]} FROM {values[0]})"
        if word == "STR_TO_MAP" and len(values) == 1:
            return f"str_to_map({values[0]}, ',', '=')"  # Flink's default delimiters (Spark's: ',' and ':')
        if word == "ELT" and len(values) >= 2:
            # Flink: NULL for an index out of range (Spark fails)
            return f"(CASE WHEN ({values[0]}) BETWEEN 1 AND {len(values) - 1} THEN elt({', '.join(values)}) END)"
        if word == "SPLIT" and len(values) == 2:
            delimiter = significant(args[1])
            if len(delimiter) != 1 or delimiter[0].kind != STRING:
                raise SqlError("SPLIT is supported with a string literal delimiter (Spark splits at a regular expression)",
                               line=args[1][0].line if args[1] else 1, construct="SPLIT", hint="SPLIT(s, ',')")
            pattern = re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", delimiter[0].string_value)
            # Flink: no pieces of an empty string, and the delimiter taken as it is
            return (f"(CASE WHEN {values[0]} = '' THEN CAST(array() AS ARRAY<STRING>) "
                    f"ELSE split({values[0]}, '{spark_string_literal(pattern).replace(chr(39), chr(39) * 2)}', -1) END)")
        if word == "OVERLAY" and len(args) == 1:
            parts = self._overlay_parts(args[0])
            if parts is not None:
                # Flink gives the string unchanged when the position is past its end; Spark appends. Not derived here.
                x, start = parts[0], parts[2]
                return (f"(CASE WHEN ({start}) > char_length({x}) + 1 THEN raise_error('OVERLAY from a position past the "
                        f"end of the string is not supported') ELSE overlay({x} PLACING {parts[1]} FROM {start}"
                        f"{'' if parts[3] is None else ' FOR ' + parts[3]}) END)")
        if word == "PARSE_URL" and len(values) in (2, 3):
            return f"try_parse_url({', '.join(values)})"  # Flink: NULL for what is no URL (Spark's parse_url fails)
        if word == "REGEXP_EXTRACT_ALL" and len(values) in (2, 3):
            # Flink: NULL for a group the regex does not have (Spark fails)
            regex, index = significant(args[1]), significant(args[2]) if len(values) == 3 else None
            if len(regex) == 1 and regex[0].kind == STRING and (index is None or (len(index) == 1 and index[0].kind == NUMBER)):
                try:
                    groups = re.compile(regex[0].string_value).groups
                except re.error:
                    return None
                if int(index[0].text if index else 1) > groups:
                    return "CAST(NULL AS ARRAY<STRING>)"
            return None
        if word == "URL_DECODE" and len(values) == 1:
            return f"try_url_decode({values[0]})"  # Flink: NULL for what does not decode (Spark's url_decode fails)
        if word == "CURRENT_DATABASE" and not values:
            return "'default_database'"  # kindling's one database, by Flink's name
        if word == "DATE_FORMAT" and len(values) == 2:
            # Flink formats a TIMESTAMP (or a timestamp string), and refuses a DATE, which Spark would format
            x = values[0]
            return (f"(CASE WHEN typeof({x}) = 'date' THEN raise_error('DATE_FORMAT of a DATE is not supported (as in Flink): "
                    f"format a TIMESTAMP, CAST(d AS TIMESTAMP)') ELSE date_format({x}, {values[1]}) END)")
        if word == "WEEK" and len(values) == 1:
            return f"CAST(weekofyear({values[0]}) AS BIGINT)"
        if word in ("IS_ALPHA", "IS_DIGIT") and len(values) == 1:
            # Flink: FALSE for NULL and for '', letters (digits) by Character.isLetter (isDigit); IS_DIGIT of an
            # integer is TRUE, of any other non-string FALSE.
            x = values[0]
            category = "L" if word == "IS_ALPHA" else "Nd"
            text = f"coalesce(CAST({x} AS STRING) RLIKE '^\\\\p{{{category}}}+\\\\z', false)"
            integers = f"WHEN typeof({x}) IN ('tinyint', 'smallint', 'int', 'bigint') THEN ({x}) IS NOT NULL " if word == "IS_DIGIT" else ""
            return f"(CASE {integers}WHEN typeof({x}) RLIKE '^(string|varchar|char)' THEN {text} ELSE false END)"
        return None

    def _overlay_parts(self, tokens: list[Token]) -> Optional[tuple[str, str, str, Optional[str]]]:
        """``s PLACING r FROM start [FOR length]`` as the rewritten texts of its four parts (None: another form)."""
        cuts = {t.upper: k for k, (t, depth) in enumerate(with_depth(tokens))
                if depth == 0 and t.kind == WORD and t.upper in ("PLACING", "FROM", "FOR")}
        if "PLACING" not in cuts or "FROM" not in cuts or not cuts["PLACING"] < cuts["FROM"] < cuts.get("FOR", len(tokens)):
            return None
        end = cuts.get("FOR", len(tokens))
        length = self.rewrite(tokens[cuts["FOR"] + 1:]) if "FOR" in cuts else None
        return (self.rewrite(tokens[:cuts["PLACING"]]), self.rewrite(tokens[cuts["PLACING"] + 1:cuts["FROM"]]),
                self.rewrite(tokens[cuts["FROM"] + 1:end]), length)

    def _sequence(self, tokens: list[Token], i: int, words: tuple[str, ...]) -> bool:
        j: Optional[int] = i
        for word in words:
            if j is None or not tokens[j].is_word(word):
                return False
            j = next_significant(tokens, j)
        return True

    def _function_before_over(self, tokens: list[Token], i: int) -> Optional[str]:
        j = previous_significant(tokens, i)
        if j is None or not tokens[j].is_symbol(")"):
            return None
        depth = 0
        for k in range(j, -1, -1):
            if tokens[k].is_symbol(")"):
                depth += 1
            elif tokens[k].is_symbol("("):
                depth -= 1
                if depth == 0:
                    name = previous_significant(tokens, k)
                    return tokens[name].upper if name is not None else None
        return None

    # --- group windows ------------------------------------------------------------------------
    def _group_window(self, tokens: list[Token], i: int, open_index: int, close_index: int) -> str:
        token = tokens[i]
        kind = token.upper
        args = self._args(tokens, open_index, close_index)
        expected = {"TUMBLE": (2, 3), "HOP": (3, 4), "SESSION": (2, 2)}[kind]
        if not expected[0] <= len(args) <= expected[1]:
            raise SqlError(f"{kind}(...) takes {expected[0]}{'' if expected[0] == expected[1] else f' or {expected[1]}'} arguments, got {len(args)}",
                           line=token.line, construct=f"group window {kind}", hint=GROUP_WINDOW_FORM)
        time_column = self.rewrite(args[0])
        durations = [self._duration(a, f"group window {kind}") for a in args[1:]]
        if kind == "TUMBLE":
            size = durations[0]
            if len(durations) == 2:
                return f"window({time_column}, {size}, {size}, {durations[1]})"
            return f"window({time_column}, {size})"
        if kind == "HOP":
            slide, size = durations[0], durations[1]
            if len(durations) == 3:
                return f"window({time_column}, {size}, {slide}, {durations[2]})"
            return f"window({time_column}, {size}, {slide})"
        self.session_window = True
        return f"session_window({time_column}, {durations[0]})"

    def _auxiliary(self, token: Token, kind: str, part: str) -> str:
        column = "session_window" if kind == "SESSION" else "window"
        if part == "START":
            return f"{column}.start"
        if part == "END":
            return f"{column}.end"
        if part == "ROWTIME":
            return f"window_time({column})"
        raise SqlError(f"{kind}_PROCTIME is not supported: kindling's group windows run on event time", line=token.line,
                       construct=f"{kind}_PROCTIME", hint=f"{kind}_ROWTIME(ts, ...) with a WATERMARK on ts")

    def _duration(self, tokens: list[Token], construct: str) -> str:
        """An INTERVAL literal as a Spark duration string literal ('1 hours'); anything else is rewritten as is."""
        value = interval_text(tokens)
        if value is not None:
            return f"'{value}'"
        return self.rewrite(tokens)

    # --- window TVFs --------------------------------------------------------------------------
    def _window_tvf(self, tokens: list[Token], i: int, open_index: int, close_index: int) -> Optional[tuple[str, int]]:
        inner = significant(tokens[open_index + 1:close_index])
        if not inner or inner[0].upper not in WINDOW_TVFS:
            if inner and inner[0].kind == WORD and len(inner) > 1 and inner[1].is_symbol("("):
                raise SqlError(f"table function {inner[0].text}(...) is not supported", line=inner[0].line, construct="table function",
                               hint=TVF_FORM)
            return None
        kind = inner[0].upper
        line = tokens[i].line
        if kind == "SESSION":
            raise SqlError("the SESSION window TVF is not supported", line=line, construct="window TVF SESSION",
                           hint="the group window GROUP BY SESSION(ts, INTERVAL '10' MINUTE)")
        function_index = tokens.index(inner[0])
        fopen, fclose = self._call(tokens, function_index) or (None, None)
        if fopen is None or fclose != previous_significant(tokens, close_index):
            raise SqlError(f"malformed window TVF {kind}", line=line, construct=f"window TVF {kind}", hint=TVF_FORM)
        args = self._args(tokens, fopen, fclose)
        named: dict[str, list[Token]] = {}
        positional: list[list[Token]] = []
        for arg in args:
            sig = significant(arg)
            if len(sig) > 2 and sig[1].is_symbol("=>"):
                named[sig[0].upper] = arg[arg.index(sig[1]) + 1:]
            else:
                positional.append(arg)
        order = {"TUMBLE": ["DATA", "TIMECOL", "SIZE", "OFFSET"], "HOP": ["DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"],
                 "CUMULATE": ["DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"]}[kind]
        for name, arg in zip(order, positional):
            named.setdefault(name, arg)
        missing = [n for n in order[:-1] if n not in named]
        if missing:
            raise SqlError(f"window TVF {kind} lacks its {missing[0]} argument", line=line, construct=f"window TVF {kind}", hint=TVF_FORM)
        data = significant(named["DATA"])
        if data and data[0].is_word("TABLE") and len(data) >= 2:
            source_tokens = named["DATA"][named["DATA"].index(data[1]):]
            source = self.rewrite(strip_trivia(source_tokens))
        elif data and data[0].is_symbol("("):
            source = self.rewrite(named["DATA"])
        else:
            raise SqlError(f"window TVF {kind}: the first argument must be TABLE name", line=line, construct=f"window TVF {kind}", hint=TVF_FORM)
        for t in significant(named["DATA"]):
            if t.kind in (WORD, QUOTED):
                self.names.add(t.identifier)
        descriptor = significant(named["TIMECOL"])
        if len(descriptor) != 4 or not descriptor[0].is_word("DESCRIPTOR") or descriptor[2].kind not in (WORD, QUOTED):
            raise SqlError(f"window TVF {kind}: the time column must be DESCRIPTOR(column)", line=line, construct=f"window TVF {kind}", hint=TVF_FORM)

        def duration(name: str) -> Optional[str]:
            if name not in named:
                return None
            value = interval_text(named[name])
            if value is None:
                raise SqlError(f"window TVF {kind}: {name} must be an INTERVAL literal such as INTERVAL '10' MINUTES", line=line,
                               construct=f"window TVF {kind}", hint=TVF_FORM)
            return value

        tvf = WindowTvf(self.view_name(), kind, source, descriptor[2].identifier, duration("SIZE"), duration("SLIDE"), duration("STEP"),
                        duration("OFFSET"), line)
        self.tvfs.append(tvf)
        return tvf.view, close_index + 1

    # --- functions ----------------------------------------------------------------------------
    def _floor_ceil(self, tokens: list[Token], word: str, open_index: int, close_index: int) -> Optional[tuple[str, int]]:
        inner = tokens[open_index + 1:close_index]
        to_index = None
        for k, (t, depth) in enumerate(with_depth(inner)):
            if depth == 0 and t.is_word("TO"):
                to_index = k
        if to_index is None:
            return None
        value = self.rewrite(strip_trivia(inner[:to_index]))
        unit_tokens = significant(inner[to_index + 1:])
        if len(unit_tokens) != 1 or unit_tokens[0].kind != WORD:
            raise SqlError(f"{word}(... TO unit): unit must be one word such as HOUR", line=tokens[open_index].line,
                           construct=f"{word} TO", hint=f"{word}(ts TO HOUR)")
        unit = unit_tokens[0].upper
        truncated = f"date_trunc('{unit}', {value})"
        if word == "FLOOR":
            return truncated, close_index + 1
        return f"CASE WHEN {truncated} = {value} THEN {truncated} ELSE {truncated} + INTERVAL 1 {unit} END", close_index + 1

    def _to_timestamp_ltz(self, token: Token, args: list[list[Token]]) -> str:
        if not args:
            raise SqlError("TO_TIMESTAMP_LTZ takes (epoch, precision)", line=token.line, construct="TO_TIMESTAMP_LTZ",
                           hint="TO_TIMESTAMP_LTZ(epoch_millis, 3)")
        first = significant(args[0])
        if len(first) == 1 and first[0].kind == STRING:
            raise SqlError("TO_TIMESTAMP_LTZ of a string is not supported", line=token.line, construct="TO_TIMESTAMP_LTZ",
                           hint="TO_TIMESTAMP_LTZ(epoch_seconds, 0) or TO_TIMESTAMP_LTZ(epoch_millis, 3); TO_TIMESTAMP(s) parses a string")
        value = self.rewrite(args[0])
        precision = "".join(t.text for t in significant(args[1])) if len(args) > 1 else "3"
        if precision == "0":
            return f"timestamp_seconds({value})"
        if precision == "3":
            return f"timestamp_millis({value})"
        raise SqlError(f"TO_TIMESTAMP_LTZ precision {precision} is not supported", line=token.line, construct="TO_TIMESTAMP_LTZ",
                       hint="TO_TIMESTAMP_LTZ(epoch_seconds, 0) or TO_TIMESTAMP_LTZ(epoch_millis, 3)")

    def _count_distinct(self, tokens: list[Token], open_index: int, close_index: int) -> tuple[str, int]:
        inner = tokens[open_index + 1:close_index]
        distinct = next(k for k, t in enumerate(inner) if not t.trivia)
        rest = strip_trivia(inner[distinct + 1:])
        parts = [self.rewrite(strip_trivia(p)) for p in split_top_level(rest)]
        value = parts[0] if len(parts) == 1 else "struct(" + ", ".join(parts) + ")"
        # COUNT(DISTINCT x) FILTER (WHERE c) -> size(collect_set(x) FILTER (WHERE c))
        j = next_significant(tokens, close_index)
        if j is not None and tokens[j].is_word("FILTER"):
            k = next_significant(tokens, j)
            if k is not None and tokens[k].is_symbol("("):
                end = matching_paren(tokens, k)
                return f"size(collect_set({value}) {self.rewrite(tokens[j:end + 1])})", end + 1
        return f"size(collect_set({value}))", close_index + 1

    def _cast(self, tokens: list[Token], word: str, open_index: int, close_index: int) -> str:
        inner = tokens[open_index + 1:close_index]
        depth = 0
        as_index = None
        for k, t in enumerate(inner):
            if t.is_symbol("(", "["):
                depth += 1
            elif t.is_symbol(")", "]"):
                depth -= 1
            elif depth == 0 and t.is_word("AS"):
                as_index = k
        if as_index is None:
            raise SqlError(f"{word} needs AS type", line=tokens[open_index].line, construct=word, hint=f"{word}(x AS BIGINT)")
        value = self.rewrite(strip_trivia(inner[:as_index]))
        flink_type = parse_type(inner[as_index + 1:], tokens[open_index].line)
        target = spark_sql_type(flink_type)
        time = re.fullmatch(r"TIME\((\d)\)( NOT NULL)?", flink_type.flink)
        if time:
            return cast_to_time(value, int(time.group(1)), word)
        if target == "STRING":
            return _with_length(_cast_to_string(word, value), flink_type.flink)
        return _with_timestamp_precision(f"{word}({value} AS {target})", flink_type.flink)


def _with_length(text: str, flink_type: str) -> str:
    """A cast to ``CHAR(n)`` or ``VARCHAR(n)`` cut to n characters, a CHAR's padded with spaces to n, as Flink's are
    (Spark's cast to a string keeps every character)."""
    match = re.match(r"(VAR)?CHAR\((\d+)\)", flink_type)
    if match is None or int(match.group(2)) >= 2147483647:
        return text
    length = int(match.group(2))
    return f"substr({text}, 1, {length})" if match.group(1) else f"rpad({text}, {length}, ' ')"


def _with_timestamp_precision(text: str, flink_type: str) -> str:
    """A cast to ``TIMESTAMP(p)``/``TIMESTAMP_LTZ(p)`` with p < 6 cut to p fraction digits, as Flink's is (Spark's
    timestamps keep microseconds)."""
    match = re.match(r"TIMESTAMP(?:_LTZ)?\((\d)\)", flink_type)
    if match is None or int(match.group(1)) >= 6:
        return text
    unit = 10 ** (6 - int(match.group(1)))
    return f"timestamp_micros(CAST(floor(unix_micros({text}) / {unit}) AS BIGINT) * {unit})"


def _cast_to_string(word: str, value: str) -> str:
    """Flink's CAST(x AS STRING): booleans as TRUE/FALSE, timestamps with at least 3 fraction digits
    ('08:00:01.000', '08:00:04.910'); Spark writes 'true' and drops trailing zeros. The source type is only
    known to Spark, so the choice is made there on typeof(x), which Spark folds at planning."""
    text = f"{word}({value} AS STRING)"
    dot = f"instr({text}, '.')"
    timestamp = (f"CASE WHEN {dot} = 0 THEN concat({text}, '.000') "
                 f"ELSE rpad({text}, greatest(length({text}), {dot} + 3), '0') END")
    return (f"CASE WHEN typeof({value}) = 'boolean' THEN upper({text}) "
            f"WHEN typeof({value}) LIKE 'timestamp%' THEN {timestamp} ELSE {text} END")


def spark_string_literal(text: str) -> str:
    """A Flink string literal as Spark SQL text: Flink keeps a backslash as it is ('o_(\\d+)' is a regex), Spark's
    parser reads it as an escape, so each backslash is doubled."""
    return text.replace("\\", "\\\\")


def _quoted_literal(text: str) -> str:
    """A string (a regex, a JSON path) as a quoted Spark SQL literal: backslashes doubled, quotes escaped."""
    return "'" + spark_string_literal(text).replace("'", "\\'") + "'"


def similar_to_regex(pattern: str) -> str:
    """A SQL ``SIMILAR TO`` pattern as a Java regex matching whole strings: ``%`` and ``_`` are ``.*`` and ``.``,
    ``| * + ? { } ( ) [ ]`` keep their regex meaning, every other character (``.``, ``^``, ``$``, ``\\``) is itself."""
    out = []
    in_brackets = False
    for ch in pattern:
        if in_brackets:
            out.append("\\" + ch if ch in "\\[" else ch)
            in_brackets = ch != "]"
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        elif ch == "[":
            out.append(ch)
            in_brackets = True
        elif ch in "|*+?{}()":
            out.append(ch)
        elif ch.isalnum() or ch == " ":
            out.append(ch)
        else:
            out.append("\\" + ch)
    return "(?s)^(?:" + "".join(out) + ")\\z"


_SHA_BITS = {"SHA1": 160, "SHA224": 224, "SHA256": 256, "SHA384": 384, "SHA512": 512}
_LOGARITHMS = ("LN", "LOG", "LOG10", "LOG2")
# Flink functions kindling refuses by name (Spark has none, or one of the same name that answers otherwise): -> advice.
_UNSUPPORTED_FUNCTIONS = {
    "JSON_EXISTS": "JSON_VALUE(json, '$.path') IS NOT NULL",
    "JSON_ARRAYAGG": "ARRAY_AGG or LISTAGG",
    "JSON_OBJECTAGG": "MAP of the keys and values, or LISTAGG",
    **{f"BITMAP_{name}": "kindling has no BITMAP type" for name in (
        "AND", "ANDNOT", "AND_AGG", "AND_CARDINALITY_AGG", "BUILD", "BUILD_AGG", "BUILD_CARDINALITY_AGG", "CARDINALITY",
        "FROM_BYTES", "OR", "OR_AGG", "OR_CARDINALITY_AGG", "TO_ARRAY", "TO_BYTES", "TO_STRING", "XOR", "XOR_AGG",
        "XOR_CARDINALITY_AGG")},
}
_MONTH_UNITS = ("MONTH", "QUARTER", "YEAR")
_RENAMED_FUNCTIONS = ("ELEMENT", "ARRAY_CONTAINS", "ARRAY_SORT", "ARRAY_SLICE", "ARRAY_CONCAT", "ARRAY_REVERSE", "MAP_UNION",
                      "INET_ATON", "INET_NTOA", "JSON_QUOTE", "JSON_UNQUOTE", "CONVERT_TZ", "TO_BASE64", "FROM_BASE64", "WEEK",
                      "IS_ALPHA", "IS_DIGIT", *_SHA_BITS, *_LOGARITHMS,
                      "UNHEX", "INITCAP", "ASCII", "LTRIM", "RTRIM", "STR_TO_MAP", "ELT", "SPLIT", "CURRENT_DATABASE", "DATE_FORMAT",
                      "OVERLAY", "URL_DECODE", "PARSE_URL", "REGEXP_EXTRACT_ALL")
_NOT_A_VALUE = ("ARRAY", "MAP", "AND", "OR", "NOT", "SELECT", "WHERE", "WHEN", "THEN", "ELSE", "ON", "IN", "BY", "AS",
                "FROM", "HAVING", "CASE", "IS", "LIKE", "BETWEEN", "RETURN", "VALUES")


_ENDS_AN_OPERAND = ("AND", "OR", "AS", "FROM", "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "WHEN", "THEN", "ELSE", "END",
                    "UNION", "EXCEPT", "INTERSECT", "IS", "NOT", "IN", "LIKE", "BETWEEN", "SIMILAR", "RLIKE", "WINDOW", "ON",
                    "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "ESCAPE")


def _may_name_a_table(tokens: list[Token], i: int) -> bool:
    """Whether the name at ``i`` may be a table or view the query reads: one after FROM, JOIN or TABLE, or after a comma
    or an opening parenthesis where a value cannot be all that stands there (:func:`_in_value_position`; still
    over-approximate, since a view Spark holds from an earlier statement must not be read in its place), not a column,
    qualifier or field (``SELECT auction``, ``bid.auction``)."""
    before, after = previous_significant(tokens, i), next_significant(tokens, i)
    if before is None or (after is not None and tokens[after].is_symbol(".")):
        return False
    if tokens[before].is_word("FROM", "JOIN", "TABLE"):
        return True
    return tokens[before].is_symbol(",", "(") and not _in_value_position(tokens, i)


_TABLE_CLAUSES = ("FROM", "JOIN", "TABLE", "LATERAL")
# the clauses whose lists are of values (a comma after a join's ON condition starts another FROM item: ON is neither)
_VALUE_CLAUSES = ("SELECT", "DISTINCT", "WHERE", "BY", "HAVING")


def _in_value_position(tokens: list[Token], i: int) -> bool:
    """Whether the name at ``i`` (after a comma or an opening parenthesis) stands where only a value can: in a select
    list or a grouping (``SELECT *, auction AS k``), or directly inside the parentheses of a function call,
    ``OVER``, ``IN`` or a column list (``MOD(auction, 123)``). Only FROM, JOIN, TABLE and LATERAL open a list or
    parentheses a table's name may stand in; False where that cannot be told."""
    depth = 0
    for k in range(i - 1, -1, -1):
        token = tokens[k]
        if token.is_symbol(")"):
            depth += 1
        elif token.is_symbol("("):
            if depth == 0:
                before = previous_significant(tokens, k)
                return before is not None and tokens[before].kind in (WORD, QUOTED) and not tokens[before].is_word(*_TABLE_CLAUSES)
            depth -= 1
        elif depth == 0 and token.is_word(*_TABLE_CLAUSES):
            return False
        elif depth == 0 and token.is_word(*_VALUE_CLAUSES):
            return True
    return False


def _operand_end(tokens: list[Token], start: int) -> int:
    """Index after the operand starting at ``start`` that binds tighter than comparisons and AND/OR
    (arithmetic and ``||`` continue it; a comparison, a keyword, ',' or a closing bracket end it)."""
    depth = 0
    for k in range(start, len(tokens)):
        t = tokens[k]
        if t.is_symbol("(", "["):
            depth += 1
        elif t.is_symbol(")", "]"):
            if depth == 0:
                return k
            depth -= 1
        elif depth == 0 and (t.is_symbol(",", ";", "=", "<", ">", "<=", ">=", "<>", "!=") or
                             (t.kind == WORD and t.upper in _ENDS_AN_OPERAND)):
            return k
    return len(tokens)


def _indexed_base(tokens: list[Token], bracket: int) -> Optional[int]:
    """For a '[' that indexes a value (``a[1]``, ``m['k']``, ``f(x)[1]``, ``(e)[1]``, ``ARRAY[...][1]``, ``a[1][2]``),
    the index of the value's first token; None for any other '['."""
    j = previous_significant(tokens, bracket)
    if j is None:
        return None
    token = tokens[j]
    if token.is_symbol(")"):
        opening = matching_open(tokens, j)
        if opening is None:
            return None
        name = previous_significant(tokens, opening)
        if name is not None and tokens[name].kind in (WORD, QUOTED) and tokens[name].upper not in _NOT_A_VALUE:
            return _qualified_start(tokens, name)
        return opening
    if token.is_symbol("]"):
        opening = matching_open(tokens, j)
        if opening is None:
            return None
        before = previous_significant(tokens, opening)
        if before is not None and tokens[before].is_word("ARRAY", "MAP"):
            return before
        return _indexed_base(tokens, opening)
    if token.kind == QUOTED or (token.kind == WORD and token.upper not in _NOT_A_VALUE):
        return _qualified_start(tokens, j)
    return None


def _qualified_start(tokens: list[Token], name: int) -> int:
    """The first token of a dotted name ending at ``name`` (``t.col`` -> ``t``)."""
    while True:
        dot = previous_significant(tokens, name)
        if dot is None or not tokens[dot].is_symbol("."):
            return name
        before = previous_significant(tokens, dot)
        if before is None or tokens[before].kind not in (WORD, QUOTED):
            return name
        name = before


class _Output:
    """A rewrite's text so far, with where each token's text began, so that an operator written after its
    operand can take the operand's text back and wrap it."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._starts: dict[int, int] = {}

    def mark(self, token_index: int) -> None:
        self._starts[token_index] = len(self._pieces)

    def append(self, text: str) -> None:
        self._pieces.append(text)

    def has(self, token_index: int) -> bool:
        """Whether the text from that token on is this rewrite's own (and so can be taken back)."""
        return token_index in self._starts

    def take_back(self, token_index: int) -> str:
        """The text written from that token on, removed."""
        at = self._starts[token_index]
        text = "".join(self._pieces[at:])
        del self._pieces[at:]
        return text

    def text(self) -> str:
        return "".join(self._pieces)


def _keep_lines(replacement: str, original: str) -> str:
    """Pad a replacement with the newlines of the text it replaces, so later lines keep their numbers."""
    missing = original.count("\n") - replacement.count("\n")
    return replacement + "\n" * missing if missing > 0 else replacement


def interval_text(tokens: list[Token]) -> Optional[str]:
    """``INTERVAL '5' SECOND`` -> ``'5 seconds'``; None when the tokens are not such a literal."""
    sig = significant(tokens)
    if len(sig) != 3 or not sig[0].is_word("INTERVAL") or sig[1].kind not in (STRING, NUMBER) or sig[2].kind != WORD:
        return None
    unit = _INTERVAL_UNITS.get(sig[2].upper)
    if unit is None:
        return None
    amount = sig[1].string_value if sig[1].kind == STRING else sig[1].text
    return f"{amount.strip()} {unit}"


def translate_query(text: str, line: int, view_name: Callable[[], str], batch: bool = False,
                    functions: Optional[Mapping[str, str]] = None) -> Translation:
    """Rewrite a Flink query (or expression) for Spark; ``line`` is the line its text starts on.

    ``batch``: the query runs in Flink's batch mode over bounded tables, where Spark runs what its streams cannot
    (OVER windows over any ordering). ``functions``: user functions registered in Spark under another name than
    the one the query calls (a Spark built-in of that name would be called instead)."""
    tokens = tokenize(text, line)
    rewriter = _Rewriter(view_name, batch, functions)
    rewritten = rewriter.rewrite(tokens)
    hinted: set[int] = set()
    for table, hint_line, retry in rewriter.lookup_hints:
        joins = [join for join in rewriter.lookups if table in (join.alias, join.table)]
        if not joins:
            raise SqlError(f"the LOOKUP hint names '{table}', which is no lookup table of the query", line=hint_line,
                           construct="LOOKUP hint", hint="'table' = the alias of a JOIN ... FOR SYSTEM_TIME AS OF table")
        for join in joins:
            if id(join) not in hinted:  # as in Flink, the first hint for a table takes effect
                hinted.add(id(join))
                join.retry = retry
    return Translation(rewritten, rewriter.tvfs, rewriter.names, rewriter.lookups)


def translate_expression(text: str, line: int, functions: Optional[Mapping[str, str]] = None) -> str:
    """Rewrite a scalar expression (computed columns, watermark bounds)."""
    def no_views() -> str:
        raise SqlError("a window TVF cannot appear in an expression", line=line, construct="expression")

    return translate_query(text, line, no_views, functions=functions).text


def watermark_delay(expression: str, column: str, line: int) -> str:
    """The out-of-orderness of ``WATERMARK FOR col AS col [- INTERVAL 'n' UNIT]`` as a duration string ('5 seconds')."""
    tokens = significant(tokenize(expression, line))
    form = f"WATERMARK FOR {column} AS {column} - INTERVAL '5' SECOND (or AS {column} for ascending timestamps)"
    if len(tokens) == 1 and tokens[0].kind in (WORD, QUOTED) and tokens[0].identifier == column:
        return "0 seconds"
    if len(tokens) >= 2 and tokens[0].kind in (WORD, QUOTED) and tokens[0].identifier == column and tokens[1].is_symbol("-"):
        value = interval_text(tokens[2:])
        if value is not None:
            return value
    raise SqlError(f"watermark expression '{expression}' is not supported: kindling's watermarks trail the column by a fixed interval",
                   line=line, construct="WATERMARK", hint=form)
