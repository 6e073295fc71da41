"""Row-pattern expressions of ``MATCH_RECOGNIZE``: DEFINE conditions and MEASURES over the rows of a (partial) match.

A pattern variable's expressions are evaluated while the match is being found, over rows the Spark plan cannot see
together, so they are compiled here to Python closures (the NFA of :mod:`kindling.sql.match_recognize` calls them
per candidate row). Flink's navigation semantics:

- ``A.price`` is the last row mapped to ``A`` (in A's own DEFINE: the row being tested); ``price`` alone is the last
  row of the match (in a DEFINE: the row being tested);
- ``FIRST(A.price [, n])`` / ``LAST(A.price [, n])``: the n-th row from the first / last row mapped to ``A``;
- ``SUM``, ``AVG``, ``COUNT``, ``MIN``, ``MAX`` over the rows mapped to one variable (or to any, without one);
- ``MATCH_ROWTIME()``: the event time of the match's last row.

Values follow Flink's SQL: three-valued logic, integer division and AVG truncated toward zero, NULL propagated.
Each expression also renders as plain SQL over the input's columns (navigation removed), from which Spark's
analysis gives the measure's type. Other functions and constructs are refused by name.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Optional, Sequence

from kindling.sql.errors import SqlError
from kindling.sql.tokens import DQSTRING, NUMBER, QUOTED, STRING, SYMBOL, WORD, Token, TokenCursor

Rows = Callable[[Optional[str]], Sequence[tuple]]  # a variable's rows (None: every row), oldest first
Value = Callable[[Rows, Optional[tuple]], Any]  # evaluated over a match's rows, at a given row (None: the last)

AGGREGATES = ("SUM", "AVG", "COUNT", "MIN", "MAX")
_NAVIGATION = ("FIRST", "LAST")
_UNITS = {"MILLISECOND": 0.001, "SECOND": 1, "MINUTE": 60, "HOUR": 3600, "DAY": 86400}
_COMPARISONS = ("=", "<>", "!=", "<", "<=", ">", ">=")
HINT = ("DEFINE and MEASURES take columns (A.col or col), literals, + - * / %, comparisons, AND/OR/NOT, IS [NOT] NULL, "
        "BETWEEN, IN (...), CASE, FIRST/LAST(A.col [, n]), SUM/AVG/COUNT/MIN/MAX(A.col) and MATCH_ROWTIME()")


@dataclass
class Expression:
    """A compiled row-pattern expression: its value, its SQL without navigation, and the variables it reads."""

    value: Value
    sql: str
    variables: frozenset  # pattern variables referenced (None for an unqualified column)
    aggregate: bool = False


class _Parser(TokenCursor):
    """A precedence-climbing parser over the significant tokens of one expression."""

    def __init__(self, tokens: list[Token], columns: dict[str, int], variables: set[str], rowtime: str,
                 construct: str) -> None:
        super().__init__(tokens)
        self.columns = columns  # lower-case column name -> index in a row
        self.variables = variables  # upper-case pattern variable names
        self.rowtime = rowtime
        self.construct = construct
        self.inside: Optional[str] = None  # the navigation or aggregate function being parsed

    def refuse(self, message: str, token: Optional[Token] = None) -> SqlError:
        token = token or (self.tokens[min(self.i, len(self.tokens) - 1)] if self.tokens else None)
        return SqlError(f"MATCH_RECOGNIZE: {message}", line=token.line if token else None, construct=self.construct,
                        hint=HINT)

    def ended(self) -> SqlError:
        return self.refuse("the expression ends too early")

    def expect_symbol(self, symbol: str) -> None:
        token = self.take()
        if not token.is_symbol(symbol):
            raise self.refuse(f"expected '{symbol}', found '{token.text}'", token)

    def parse(self) -> Expression:
        expression = self.disjunction()
        if self.peek() is not None:
            raise self.refuse(f"unexpected '{self.peek().text}'", self.peek())
        return expression

    def _chain(self, operand: Callable[[], Expression], operators: Callable[[Token], bool],
               combine: Callable[[Expression, Expression, str], Expression]) -> Expression:
        """Operands joined left to right by the operators ``operators`` accepts."""
        left = operand()
        while self.peek() is not None and operators(self.peek()):
            operator = self.take().text.upper()
            left = combine(left, operand(), operator)
        return left

    def disjunction(self) -> Expression:
        return self._chain(self.conjunction, lambda t: t.is_word("OR"), _logical)

    def conjunction(self) -> Expression:
        return self._chain(self.negation, lambda t: t.is_word("AND"), _logical)

    def negation(self) -> Expression:
        if self.peek() is not None and self.peek().is_word("NOT"):
            self.take()
            return _negated(self.negation())
        return self.comparison()

    def comparison(self) -> Expression:
        left = self.additive()
        token = self.peek()
        if token is None:
            return left
        if token.kind == SYMBOL and token.text in _COMPARISONS:
            self.take()
            right = self.additive()
            return _binary(left, right, "<>" if token.text == "!=" else token.text)
        negated = False
        if token.is_word("IS"):
            self.take()
            if self.peek() is not None and self.peek().is_word("NOT"):
                self.take()
                negated = True
            word = self.take()
            if not word.is_word("NULL"):
                raise self.refuse(f"IS {'NOT ' if negated else ''}{word.text} is not supported here", word)
            f = left.value
            test = (lambda v: v is not None) if negated else (lambda v: v is None)
            return Expression(lambda rows, at: test(f(rows, at)), f"({left.sql} IS {'NOT ' if negated else ''}NULL)",
                              left.variables, left.aggregate)
        if token.is_word("NOT") and self.peek(1) is not None and self.peek(1).is_word("BETWEEN", "IN"):
            self.take()
            negated = True
            token = self.peek()
        if token.is_word("BETWEEN"):
            self.take()
            low = self.additive()
            and_token = self.take()
            if not and_token.is_word("AND"):
                raise self.refuse("BETWEEN needs AND", and_token)
            high = self.additive()
            inside = _logical(_binary(left, low, ">="), _binary(left, high, "<="), "AND")
            return _negated(inside) if negated else inside
        if token.is_word("IN"):
            self.take()
            self.expect_symbol("(")
            options = [self.additive()]
            while self.peek() is not None and self.peek().is_symbol(","):
                self.take()
                options.append(self.additive())
            self.expect_symbol(")")
            member = _binary(left, options[0], "=")
            for option in options[1:]:
                member = _logical(member, _binary(left, option, "="), "OR")
            return _negated(member) if negated else member
        return left

    def additive(self) -> Expression:
        return self._chain(self.multiplicative, lambda t: t.is_symbol("+", "-", "||"), _binary)

    def multiplicative(self) -> Expression:
        return self._chain(self.unary, lambda t: t.is_symbol("*", "/", "%"), _binary)

    def unary(self) -> Expression:
        if self.peek() is not None and self.peek().is_symbol("-", "+"):
            sign = self.take().text
            inner = self.unary()
            if sign == "+":
                return inner
            f = inner.value
            return Expression(lambda rows, at: None if (v := f(rows, at)) is None else -v, f"(-{inner.sql})",
                              inner.variables, inner.aggregate)
        return self.primary()

    def primary(self) -> Expression:
        token = self.take()
        if token.is_symbol("("):
            inner = self.disjunction()
            self.expect_symbol(")")
            return Expression(inner.value, f"({inner.sql})", inner.variables, inner.aggregate)
        if token.kind == NUMBER:
            text = token.text
            number: Any = float(text) if "e" in text.lower() else Decimal(text) if "." in text else int(text)
            return _constant(number, text)
        if token.kind == STRING:
            return _constant(token.string_value, token.text)
        if token.kind == DQSTRING:
            raise self.refuse(f"{token.text}: a double-quoted name is not a column here; use back-quotes", token)
        if token.is_word("TRUE", "FALSE"):
            return _constant(token.is_word("TRUE"), token.text.upper())
        if token.is_word("NULL"):
            return _constant(None, "NULL")
        if token.is_word("INTERVAL"):
            return self.interval(token)
        if token.is_word("CASE"):
            return self.case()
        if token.kind in (WORD, QUOTED):
            following = self.peek()
            if following is not None and following.is_symbol("(") and token.kind == WORD:
                return self.call(token)
            if following is not None and following.is_symbol("."):
                self.take()
                column = self.take()
                if column.kind not in (WORD, QUOTED):
                    raise self.refuse(f"expected a column after '{token.text}.'", column)
                variable = token.identifier.upper()
                if variable not in self.variables:
                    raise self.refuse(f"'{token.identifier}' is not a pattern variable of PATTERN (...)", token)
                return self.column(column, variable)
            return self.column(token, None)
        raise self.refuse(f"'{token.text}' is not supported here", token)

    def column(self, token: Token, variable: Optional[str]) -> Expression:
        name = token.identifier
        index = self.columns.get(name.lower())
        if index is None:
            raise SqlError(f"MATCH_RECOGNIZE: column '{name}' not found in the input (its columns: "
                           f"{', '.join(sorted(self.columns))})", line=token.line, construct=self.construct)

        def value(rows: Rows, at: Optional[tuple]) -> Any:
            if at is None:
                chosen = rows(variable)
                if not chosen:
                    return None
                at = chosen[-1]
            return at[index]

        return Expression(value, "`" + name.replace("`", "``") + "`", frozenset([variable]))

    def interval(self, token: Token) -> Expression:
        amount, unit = self.take(), self.take()
        if amount.kind != STRING or not unit.is_word(*_UNITS):
            raise self.refuse("an interval is INTERVAL 'n' SECOND|MINUTE|HOUR|DAY|MILLISECOND", token)
        try:
            seconds = float(amount.string_value) * _UNITS[unit.upper]
        except ValueError:
            raise self.refuse(f"INTERVAL {amount.text} {unit.text}: not a number", amount) from None
        return _constant(dt.timedelta(seconds=seconds), f"INTERVAL {amount.text} {unit.upper}")

    def case(self) -> Expression:
        branches: list[tuple[Expression, Expression]] = []
        otherwise: Optional[Expression] = None
        while True:
            word = self.take()
            if word.is_word("WHEN"):
                condition = self.disjunction()
                then = self.take()
                if not then.is_word("THEN"):
                    raise self.refuse("CASE WHEN .. needs THEN", then)
                branches.append((condition, self.disjunction()))
            elif word.is_word("ELSE"):
                otherwise = self.disjunction()
            elif word.is_word("END"):
                break
            else:
                raise self.refuse(f"unexpected '{word.text}' in CASE (only the searched CASE WHEN form)", word)
        parts = [e for b in branches for e in b] + ([otherwise] if otherwise else [])

        def value(rows: Rows, at: Optional[tuple]) -> Any:
            for condition, result in branches:
                if condition.value(rows, at) is True:
                    return result.value(rows, at)
            return otherwise.value(rows, at) if otherwise else None

        sql = "CASE " + " ".join(f"WHEN {c.sql} THEN {r.sql}" for c, r in branches)
        sql += (f" ELSE {otherwise.sql}" if otherwise else "") + " END"
        return Expression(value, sql, frozenset().union(*[p.variables for p in parts]), any(p.aggregate for p in parts))

    def call(self, name_token: Token) -> Expression:
        name = name_token.upper
        self.expect_symbol("(")
        if name == "MATCH_ROWTIME":
            self.expect_symbol(")")
            index = self.columns[self.rowtime.lower()]
            return Expression(lambda rows, at: rows(None)[-1][index] if rows(None) else None,
                              "`" + self.rowtime + "`", frozenset([None]))
        if name in ("PREV", "NEXT"):
            raise self.refuse(f"{name}: Flink does not support physical offsets within partition; use LAST(A.col, n) (a "
                              "logical offset: the n-th row before among those mapped to A)", name_token)
        if name not in _NAVIGATION + AGGREGATES + ("ABS",):
            raise self.refuse(f"function {name} is not supported", name_token)
        if self.inside is not None and name in _NAVIGATION + AGGREGATES:
            raise self.refuse(f"{name} inside {self.inside} is not supported", name_token)
        if name == "COUNT" and self.peek() is not None and self.peek().is_symbol("*"):
            self.take()
            self.expect_symbol(")")
            return Expression(lambda rows, at: len(rows(None)), "COUNT(*)", frozenset([None]), aggregate=True)
        if name == "ABS":
            inner = self.disjunction()
            self.expect_symbol(")")
            f = inner.value
            return Expression(lambda rows, at: None if (v := f(rows, at)) is None else abs(v), f"ABS({inner.sql})",
                              inner.variables, inner.aggregate)
        if self.peek() is not None and self.peek().is_word("DISTINCT"):
            raise self.refuse(f"{name}(DISTINCT ...) is not supported (as in Flink: no DISTINCT aggregations)", self.peek())
        self.inside = name
        argument = self.disjunction()
        self.inside = None
        offset = 0
        if self.peek() is not None and self.peek().is_symbol(",") and name in _NAVIGATION:
            self.take()
            count = self.take()
            if count.kind != NUMBER or not count.text.isdigit():
                raise self.refuse(f"{name}'s offset must be a non-negative integer literal", count)
            offset = int(count.text)
        self.expect_symbol(")")
        named = {v for v in argument.variables if v is not None}
        if len(named) > 1 or (named and None in argument.variables):
            raise self.refuse(f"{name}(...) must reference one pattern variable (its columns as A.col), not "
                              f"{', '.join(sorted(v or '(none)' for v in argument.variables))}", name_token)
        variable = next(iter(named)) if named else None
        f = argument.value
        if name in _NAVIGATION:
            first = name == "FIRST"

            def navigate(rows: Rows, at: Optional[tuple]) -> Any:
                chosen = rows(variable)
                if offset >= len(chosen):
                    return None
                return f(rows, chosen[offset] if first else chosen[-1 - offset])

            return Expression(navigate, argument.sql, frozenset([variable]))
        return Expression(_aggregate(name, f, variable), f"{name}({argument.sql})", frozenset([variable]), aggregate=True)


def compile_expression(tokens: list[Token], columns: dict[str, int], variables: set[str], rowtime: str,
                       construct: str = "MATCH_RECOGNIZE") -> Expression:
    """``tokens`` (significant ones) compiled over rows whose columns are at ``columns``' indexes."""
    return _Parser(tokens, columns, variables, rowtime, construct).parse()


def _constant(value: Any, sql: str) -> Expression:
    return Expression(lambda rows, at: value, sql, frozenset())


def _aggregate(name: str, f: Value, variable: Optional[str]) -> Value:
    def value(rows: Rows, at: Optional[tuple]) -> Any:
        values = [v for v in (f(rows, row) for row in rows(variable)) if v is not None]
        if name == "COUNT":
            return len(values)
        if not values:
            return None
        if name == "MIN":
            return min(values)
        if name == "MAX":
            return max(values)
        if any(isinstance(v, float) for v in values):
            values = [float(v) for v in values]
        total = sum(values)
        if name == "SUM":
            return total
        if isinstance(total, int) and not isinstance(total, bool):
            return _divide(total, len(values))  # Flink's AVG of an integer type is that type: truncated
        return total / len(values)

    return value


def _not(v: Any) -> Any:
    return None if v is None else not v


def _negated(inner: Expression) -> Expression:
    f = inner.value
    return Expression(lambda rows, at: _not(f(rows, at)), f"(NOT {inner.sql})", inner.variables, inner.aggregate)


def _logical(left: Expression, right: Expression, operator: str) -> Expression:
    f, g = left.value, right.value
    decisive = operator == "OR"  # the value that decides alone: TRUE for OR, FALSE for AND

    def value(rows: Rows, at: Optional[tuple]) -> Any:
        a = f(rows, at)
        if a is decisive:
            return decisive
        b = g(rows, at)
        return decisive if b is decisive else None if a is None or b is None else not decisive

    return Expression(value, f"({left.sql} {operator} {right.sql})", left.variables | right.variables,
                      left.aggregate or right.aggregate)


def _divide(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError("/ by zero")
        quotient = abs(a) // abs(b)
        return quotient if (a >= 0) == (b > 0) else -quotient  # Java's division truncates toward zero
    return a / b


def _remainder(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError("/ by zero")
        r = abs(a) % abs(b)
        return r if a >= 0 else -r  # Java's remainder takes the dividend's sign
    return a - b * int(a / b)


_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": _divide, "%": _remainder,
    "||": lambda a, b: str(a) + str(b),
    "=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def _binary(left: Expression, right: Expression, operator: str) -> Expression:
    f, g, apply = left.value, right.value, _ARITHMETIC[operator]

    def value(rows: Rows, at: Optional[tuple]) -> Any:
        a, b = f(rows, at), g(rows, at)
        if a is None or b is None:
            return None
        if isinstance(a, float) and isinstance(b, Decimal) or isinstance(a, Decimal) and isinstance(b, float):
            a, b = float(a), float(b)
        return apply(a, b)

    return Expression(value, f"({left.sql} {operator} {right.sql})", left.variables | right.variables,
                      left.aggregate or right.aggregate)
