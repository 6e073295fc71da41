"""Lookup joins: ``[LEFT] JOIN dim FOR SYSTEM_TIME AS OF o.proc_time [AS] d ON o.k = d.id [AND ...]``.

Flink joins each probe row with the rows the dimension table holds when the row is processed, asking
the table's connector by the join's equality keys (Flink's ``LookupTableSource``; here the jdbc
connector). kindling plans the join as a Spark ``LATERAL VIEW [OUTER] inline(...)`` over the probe
side: an Arrow UDF (:mod:`kindling.connectors.lookup`) returns, per probe row, the list of matching
dimension rows, fetched once per Arrow batch for all its distinct keys (through the table's cache);
``inline`` makes one joined row per match, and ``OUTER`` keeps an unmatched row with NULLs for a
LEFT join. The rest of the ON clause filters that list (a Spark lambda over the dimension's row),
so a LEFT join keeps its probe row when no dimension row passes it, as in Flink. Nothing is kept
in state: the probe side's columns, watermark and time attributes pass through unchanged.

Every equality between a dimension column and an expression of the probe side (a constant included)
is a lookup key, as Flink's JDBC lookup makes it; at least one is required.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

import pyarrow as pa

from kindling.durations import parse_duration
from kindling.options import OptionError, nearest
from kindling.sql.errors import SqlError
from kindling.sql.tokens import QUOTED, WORD, Token, matching_paren, next_significant, significant

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kindling.sql.catalog import Catalog

FORM = "[LEFT] JOIN dim FOR SYSTEM_TIME AS OF o.proc_time AS d ON o.key = d.id"
# Words that end a join's ON condition at its own nesting level.
_CLAUSE_ENDS = ("WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "JOIN", "LEFT",
                "RIGHT", "INNER", "FULL", "CROSS", "NATURAL", "LATERAL")
_JOIN_STARTS = ("JOIN", "LEFT", "INNER", "RIGHT", "FULL")


@dataclass
class LookupJoin:
    """One lookup join of a query, as the session registers it."""

    function: str  # the Spark function (an Arrow UDF) that returns the matching rows
    table: str  # the dimension table's catalog name
    alias: str
    outer: bool  # LEFT JOIN
    key_columns: list[str]  # dimension columns looked up, in the UDF's argument order
    time_attribute: str  # the FOR SYSTEM_TIME AS OF expression, as written
    left: Optional[str]  # Spark SQL text of the FROM clause before the lookup joins (to check the time attribute)
    line: int = 1
    key_texts: list[str] = field(default_factory=list)
    retry: Optional["LookupRetry"] = None  # the LOOKUP hint's retry of keys that found nothing


@dataclass(frozen=True)
class LookupRetry:
    """The LOOKUP hint's ``'retry-predicate'='lookup_miss'``, ``'retry-strategy'='fixed_delay'``: a key whose lookup found
    no row is looked up again after ``delay_s``, up to ``max_attempts`` more times (Flink's ``canRetry(n)``: n <= max)."""

    delay_s: float
    max_attempts: int


def _join_kind(tokens: list[Token], i: int) -> Optional[tuple[str, int]]:
    """``(kind, index of JOIN)`` when a join starts at ``i`` (``JOIN``, ``LEFT [OUTER] JOIN``, ``INNER JOIN``, ...)."""
    word = tokens[i].upper if tokens[i].kind == WORD else ""
    if word == "JOIN":
        return "INNER", i
    if word not in ("LEFT", "INNER", "RIGHT", "FULL"):
        return None
    j = next_significant(tokens, i)
    if j is not None and tokens[j].is_word("OUTER"):
        j = next_significant(tokens, j)
    if j is None or not tokens[j].is_word("JOIN"):
        return None
    return word, j


def _name_end(tokens: list[Token], i: Optional[int]) -> Optional[tuple[str, int]]:
    """A (possibly dotted) name at ``i``: its last part and the index after it."""
    if i is None or tokens[i].kind not in (WORD, QUOTED):
        return None
    name, end = tokens[i].identifier, i + 1
    j = next_significant(tokens, i)
    while j is not None and tokens[j].is_symbol("."):
        k = next_significant(tokens, j)
        if k is None or tokens[k].kind not in (WORD, QUOTED):
            break
        name, end = tokens[k].identifier, k + 1
        j = next_significant(tokens, k)
    return name, end


def is_lookup_join(tokens: list[Token], i: int) -> bool:
    """Whether a join at ``i`` is a lookup join (its table is followed by ``FOR SYSTEM_TIME AS OF``)."""
    kind = _join_kind(tokens, i)
    if kind is None:
        return False
    named = _name_end(tokens, next_significant(tokens, kind[1]))
    if named is None:
        return False
    words = []
    j = named[1] - 1
    for _ in range(4):
        j = next_significant(tokens, j)
        if j is None:
            return False
        words.append(tokens[j].upper if tokens[j].kind == WORD else "")
    return words == ["FOR", "SYSTEM_TIME", "AS", "OF"]


def parse_lookup_join(tokens: list[Token], i: int, rewrite: Callable[[list[Token]], str],
                      function: str) -> Optional[tuple[LookupJoin, str, int]]:
    """The lookup join starting at ``i``: its record, its Spark text and the index after its ON condition;
    None when no lookup join starts there."""
    if not is_lookup_join(tokens, i):
        return None
    line = tokens[i].line
    kind, join_index = _join_kind(tokens, i)  # type: ignore[misc]
    if kind in ("RIGHT", "FULL"):
        raise SqlError(f"a lookup join is an inner or LEFT join; {kind} JOIN ... FOR SYSTEM_TIME AS OF is not supported",
                       line=line, construct="lookup join", hint=FORM)
    table, after_table = _name_end(tokens, next_significant(tokens, join_index))  # type: ignore[misc]
    j = after_table - 1
    for _ in range(4):  # FOR SYSTEM_TIME AS OF
        j = next_significant(tokens, j)  # type: ignore[arg-type]
    start = next_significant(tokens, j)  # type: ignore[arg-type]
    attribute = _name_end(tokens, start)
    if attribute is None:
        raise SqlError("FOR SYSTEM_TIME AS OF needs the probe side's processing-time attribute (o.proc_time)", line=line,
                       construct="lookup join", hint=FORM)
    time_attribute = "".join(t.text for t in tokens[start:attribute[1]] if not t.trivia)  # type: ignore[index]
    k = next_significant(tokens, attribute[1] - 1)
    alias = table
    if k is not None and tokens[k].is_word("AS"):
        k = next_significant(tokens, k)
    if k is not None and tokens[k].kind in (WORD, QUOTED) and not tokens[k].is_word("ON"):
        alias = tokens[k].identifier
        k = next_significant(tokens, k)
    if k is None or not tokens[k].is_word("ON"):
        raise SqlError(f"the lookup join of '{table}' needs an ON clause with an equality on its columns", line=line,
                       construct="lookup join", hint=FORM)
    end = _condition_end(tokens, k + 1)
    while end > k + 1 and tokens[end - 1].trivia:  # the space before the next clause stays in the text
        end -= 1
    following = next_significant(tokens, end - 1)
    if following is not None and tokens[following].kind == WORD and tokens[following].upper in _JOIN_STARTS + ("CROSS", "NATURAL"):
        if not is_lookup_join(tokens, following):
            raise SqlError("a join after a lookup join is not supported: Spark applies lookups after the FROM clause's joins",
                           line=tokens[following].line, construct="lookup join",
                           hint="write the regular joins first and the lookup joins (FOR SYSTEM_TIME AS OF) last")
    elif following is not None and tokens[following].is_symbol(","):
        raise SqlError("a table after a lookup join is not supported", line=tokens[following].line, construct="lookup join",
                       hint="write the lookup joins (FOR SYSTEM_TIME AS OF) last in the FROM clause")
    keys: list[tuple[str, str]] = []
    residual: list[str] = []
    for conjunct in _conjuncts(tokens[k + 1:end]):
        key = _key(conjunct, alias, rewrite)
        if key is not None and key[0] not in (c for c, _ in keys):
            keys.append(key)
        else:
            residual.append(rewrite(conjunct).strip())
    if not keys:
        raise SqlError(f"Temporal table join requires an equality condition on fields of table [{table}].", line=line,
                       construct="lookup join", hint=f"ON o.key = {alias}.column (a column of '{table}')")
    call = f"{function}({', '.join(text for _, text in keys)})"
    if residual:
        call = f"filter({call}, {_quote(alias)} -> ({' AND '.join(residual)}))"
    text = f"LATERAL VIEW {'OUTER ' if kind == 'LEFT' else ''}inline({call}) {_quote(alias)}"
    join = LookupJoin(function, table, alias, kind == "LEFT", [c for c, _ in keys], time_attribute,
                      _left_text(tokens, i, rewrite), line, [t for _, t in keys])
    return join, text, end


_HINT = re.compile(r"(\w+)\s*\(([^)]*)\)")
_HINT_OPTION = re.compile(r"^\s*'([^']*)'\s*=\s*'([^']*)'\s*$")
_LOOKUP_HINT_OPTIONS = {
    "table": None, "async": ("true", "false"), "output-mode": ("ordered", "allow_unordered"), "capacity": None, "timeout": None,
    "retry-predicate": None, "retry-strategy": ("fixed_delay",), "fixed-delay": None, "max-attempts": None,
}
_RETRY_OPTIONS = ("retry-predicate", "retry-strategy", "fixed-delay", "max-attempts")


def lookup_hints(comment: str, line: int) -> Optional[tuple[str, list[tuple[str, Optional[LookupRetry]]]]]:
    """For a ``/*+ ... */`` hint comment holding LOOKUP hints: the comment without them (``''`` when nothing else is
    left) and, per hint, the table it names with its retry (None without retry options); None for other comments.

    kindling's lookups are batched per Arrow batch and synchronous, which gives the rows Flink's async lookups give:
    ``async``, ``output-mode``, ``capacity`` and ``timeout`` are checked and have no further effect. The retry
    options, all four or none, retry the keys of a batch whose lookup found nothing (:class:`LookupRetry`)."""
    if not comment.startswith("/*+") or "LOOKUP" not in comment.upper():
        return None
    body = comment[3:-2]
    hints: list[tuple[str, Optional[LookupRetry]]] = []
    kept: list[str] = []
    for hint in _HINT.finditer(body):
        if hint.group(1).upper() != "LOOKUP":
            kept.append(hint.group(0))
            continue
        options: dict[str, str] = {}
        for part in hint.group(2).split(","):
            matched = _HINT_OPTION.match(part)
            if matched is None:
                raise SqlError(f"LOOKUP hint option {part.strip()!r} is not 'key'='value'", line=line, construct="LOOKUP hint")
            key, value = matched.group(1), matched.group(2)
            if key not in _LOOKUP_HINT_OPTIONS:
                raise SqlError(f"unknown LOOKUP hint option '{key}'", line=line, construct="LOOKUP hint",
                               hint="'table', 'async', 'output-mode', 'capacity', 'timeout' and the retry options")
            allowed = _LOOKUP_HINT_OPTIONS[key]
            if key == "retry-predicate" and value.lower() != "lookup_miss":  # Flink's own message for this key
                raise SqlError(f"Invalid LOOKUP hint option: unsupported retry-predicate '{value}', only 'lookup_miss' is "
                               "supported currently", line=line, construct="LOOKUP hint")
            if allowed is not None and value.lower() not in allowed:
                raise SqlError(f"Invalid LOOKUP hint options: Could not parse value '{value}' for key '{key}'", line=line,
                               construct="LOOKUP hint", hint=f"'{key}' is one of: {', '.join(allowed)}")
            options[key] = value
        if "table" not in options:
            raise SqlError("a LOOKUP hint needs 'table' (the lookup table's name or alias)", line=line, construct="LOOKUP hint")
        hints.append((options["table"], _retry(options, line)))
    rest = ", ".join(kept)
    return (f"/*+ {rest} */" if rest else ""), hints


def _retry(options: dict[str, str], line: int) -> Optional[LookupRetry]:
    """The hint's retry, with Flink's checks and messages."""
    given = [k for k in _RETRY_OPTIONS if k in options]
    if not given:
        return None
    if len(given) != len(_RETRY_OPTIONS):
        raise SqlError("Invalid LOOKUP hint: retry options can be both null or all not null", line=line, construct="LOOKUP hint",
                       hint="all of 'retry-predicate', 'retry-strategy', 'fixed-delay' and 'max-attempts', or none")
    try:
        delay = parse_duration(options["fixed-delay"], name="fixed-delay")  # refuses negative durations too
    except ValueError:
        raise SqlError(f"Invalid LOOKUP hint options: Could not parse value '{options['fixed-delay']}' for key 'fixed-delay'",
                       line=line, construct="LOOKUP hint") from None
    text = options["max-attempts"].strip()
    if not text.lstrip("-").isdigit():
        raise SqlError(f"Invalid LOOKUP hint options: Could not parse value '{text}' for key 'max-attempts'", line=line,
                       construct="LOOKUP hint")
    if int(text) <= 0:
        raise SqlError(f"Invalid LOOKUP hint option: max-attempts value should be positive integer but was {text}", line=line,
                       construct="LOOKUP hint")
    return LookupRetry(delay.total_seconds(), int(text))


def _quote(name: str) -> str:
    return name if name.replace("_", "a").isalnum() and not name[0].isdigit() else "`" + name.replace("`", "``") + "`"


def _condition_end(tokens: list[Token], start: int) -> int:
    """The index where an ON condition starting at ``start`` ends (a clause word or ``)`` at its level, or the end)."""
    i = start
    while i < len(tokens):
        token = tokens[i]
        if token.is_symbol("("):
            i = matching_paren(tokens, i) + 1
            continue
        if token.is_symbol(")", ",", ";") or (token.kind == WORD and token.upper in _CLAUSE_ENDS):
            return i
        i += 1
    return i


def _conjuncts(tokens: list[Token]) -> list[list[Token]]:
    """A condition split at its top-level ANDs (the AND of a BETWEEN stays inside its conjunct)."""
    parts: list[list[Token]] = [[]]
    between = 0
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.is_symbol("("):
            close = matching_paren(tokens, i)
            parts[-1].extend(tokens[i:close + 1])
            i = close + 1
            continue
        if token.is_word("BETWEEN"):
            between += 1
        if token.is_word("AND"):
            if between:
                between -= 1
            else:
                parts.append([])
                i += 1
                continue
        parts[-1].append(token)
        i += 1
    return [p for p in parts if significant(p)]


def _refers_to(tokens: list[Token], alias: str) -> bool:
    sig = significant(tokens)
    return any(t.kind in (WORD, QUOTED) and t.identifier == alias and n.is_symbol(".") for t, n in zip(sig, sig[1:]))


def _key(conjunct: list[Token], alias: str, rewrite: Callable[[list[Token]], str]) -> Optional[tuple[str, str]]:
    """``(dimension column, probe expression)`` when the conjunct is ``alias.col = <probe side>`` (either way round)."""
    equals = [n for n, t in enumerate(conjunct) if t.is_symbol("=")]
    if len(equals) != 1:
        return None
    sides = conjunct[:equals[0]], conjunct[equals[0] + 1:]
    for column_side, other in (sides, sides[::-1]):
        sig = significant(column_side)
        if (len(sig) == 3 and sig[0].kind in (WORD, QUOTED) and sig[0].identifier == alias and sig[1].is_symbol(".")
                and sig[2].kind in (WORD, QUOTED) and significant(other) and not _refers_to(other, alias)):
            return sig[2].identifier, rewrite(other).strip()
    return None


def _left_text(tokens: list[Token], join_start: int, rewrite: Callable[[list[Token]], str]) -> Optional[str]:
    """Spark SQL text of the relations between this FROM and its first lookup join; None when not found."""
    depth = 0
    i = join_start - 1
    while i >= 0:
        token = tokens[i]
        if token.is_symbol(")"):
            depth += 1
        elif token.is_symbol("("):
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and token.is_word("FROM"):
            break
        i -= 1
    if i < 0:
        return None
    end = i + 1
    while end < join_start:
        if tokens[end].is_symbol("("):
            end = matching_paren(tokens, end) + 1
            continue
        if is_lookup_join(tokens, end):
            break
        end += 1
    return rewrite(tokens[i + 1:end]).strip() or None


# --- planning -------------------------------------------------------------------------------------

def register_lookup_join(spark: "SparkSession", catalog: "Catalog", join: LookupJoin) -> None:
    """Check a lookup join against the catalog and register its UDF under ``join.function``."""
    from pyspark.sql.functions import arrow_udf
    from pyspark.sql.types import ArrayType, StructType, TimestampType

    from kindling.connectors import get_connector
    from kindling.connectors.lookup import LookupSpec, lookup_table
    from kindling.connectors.lookup_cache import cache_from_options
    from kindling.sql.catalog import CatalogTable

    dim = catalog.get(join.table, line=join.line, construct="lookup join")
    if not isinstance(dim, CatalogTable):
        raise SqlError(f"'{join.table}' is a view; a lookup join (FOR SYSTEM_TIME AS OF a processing-time attribute) needs "
                       "a table whose connector can look rows up", line=join.line, construct="lookup join",
                       hint="CREATE TABLE ... WITH ('connector' = 'jdbc', ...)")
    connector = get_connector(dim.connector)
    if not connector.supports_lookup and dim.watermark is not None:
        raise SqlError(f"table '{join.table}' (connector '{dim.connector}') cannot be looked up: a processing-time temporal join "
                       f"needs a lookup source; with its event time ({dim.watermark.column}) it is a versioned table, joined "
                       "FOR SYSTEM_TIME AS OF the probe side's event-time attribute in streaming mode (an event-time temporal "
                       "join, which Flink's batch planner rejects)", line=join.line, construct="lookup join",
                       hint="in streaming mode: JOIN versioned FOR SYSTEM_TIME AS OF o.rowtime AS v ON o.key = v.primary_key")
    if not connector.supports_lookup:
        raise SqlError(f"table '{join.table}' (connector '{dim.connector}') cannot be looked up: processing-time temporal "
                       "joins need a lookup source", line=join.line, construct="lookup join",
                       hint="a dimension table with 'connector' = 'jdbc' or 'elasticsearch-7' (6, 8, 'opensearch')")
    if join.left is not None:
        try:
            attribute = spark.sql(f"SELECT {join.time_attribute} FROM {join.left}").schema.fields[0]
        except Exception as exc:
            raise SqlError(f"FOR SYSTEM_TIME AS OF {join.time_attribute}: {str(exc).splitlines()[0]}", line=join.line,
                           construct="lookup join", hint=FORM) from None
        if "spark.watermarkDelayMs" in (attribute.metadata or {}):
            raise SqlError(f"FOR SYSTEM_TIME AS OF {join.time_attribute} is an event-time attribute: Event-Time Temporal Table "
                           "Join requires both primary key and row time attribute in versioned table, but no row time attribute "
                           f"can be found in '{join.table}'", line=join.line, construct="event-time temporal join",
                           hint="a processing-time attribute (proc_time AS PROCTIME()) for a lookup join, or a versioned table "
                                "(PRIMARY KEY and WATERMARK) for an event-time temporal join")
        if not isinstance(attribute.dataType, TimestampType):
            raise SqlError(f"FOR SYSTEM_TIME AS OF {join.time_attribute} must be a processing-time attribute, not "
                           f"{attribute.dataType.simpleString()}", line=join.line, construct="lookup join", hint=FORM)
    if any(c.kind != "physical" for c in dim.columns):
        raise SqlError(f"table '{join.table}': a lookup table's computed and metadata columns are not supported",
                       line=join.line, construct="lookup join", hint="declare only the table's physical columns")
    columns = [c.name for c in dim.columns]
    for key in join.key_columns:
        if key not in columns:
            hint = nearest(key, columns)
            raise SqlError(f"the lookup join's ON clause names {join.alias}.{key}, which is not a column of '{join.table}'"
                           + (f"; did you mean '{hint}'?" if hint else f" ({', '.join(columns)})"), line=join.line,
                           construct="lookup join")
    try:
        parsed = connector.validate_lookup(dim.connector_options())
        cache_from_options(parsed.values, lambda keys: {}, lambda: [])  # the cache options' own checks, on the driver
    except (ValueError, OptionError) as exc:
        raise SqlError(f"table '{join.table}': {exc}", line=dim.line, construct="WITH options of the lookup table") from None
    schema = StructType([c.type.field(c.name) for c in dim.columns])  # type: ignore[union-attr]
    spec = LookupSpec(uuid.uuid4().hex, dim.connector, join.table, dict(dim.connector_options()), tuple(join.key_columns),
                      tuple(columns), json.dumps(schema.jsonValue()),
                      retry_delay_s=join.retry.delay_s if join.retry else 0.0, retry_attempts=join.retry.max_attempts if join.retry else 0)

    def matching_rows(*keys: pa.Array) -> pa.Array:
        return lookup_table(spec).rows(keys)

    spark.udf.register(join.function, arrow_udf(matching_rows, ArrayType(schema)))

