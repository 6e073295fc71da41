"""Splitting a SQL script into statements, as Flink's SQL client does.

Statements end at ``;`` outside strings, identifiers and comments. ``EXECUTE STATEMENT SET
BEGIN ... END;`` is one statement however many ``;`` it holds. Each statement remembers the
line it starts on, so errors point into the user's file.
"""

from __future__ import annotations

from dataclasses import dataclass

from kindling.sql.errors import SqlError
from kindling.sql.tokens import SYMBOL, Token, significant, tokenize


@dataclass(frozen=True)
class Statement:
    text: str  # without the terminating ';'
    line: int  # line of its first significant token in the script

    def __str__(self) -> str:
        return self.text


def split_statements(script: str, *, require_terminator: bool = False) -> list[Statement]:
    """The statements of a script. A final statement without ';' is accepted unless ``require_terminator``."""
    tokens = tokenize(script)
    statements: list[Statement] = []
    current: list[Token] = []
    in_set = False  # inside EXECUTE STATEMENT SET BEGIN ... END
    for token in tokens:
        if token.kind == SYMBOL and token.text == ";":
            words = [t.upper for t in significant(current)]
            if not in_set and _opens_statement_set(words):
                in_set = True
            if in_set:
                if words and words[-1] == "END" and _opens_statement_set(words):
                    in_set = False
                else:
                    current.append(token)
                    continue
            _emit(statements, current)
            current = []
            continue
        current.append(token)
        if not in_set and token.kind != SYMBOL:
            words = [t.upper for t in significant(current)]
            if _opens_statement_set(words):
                in_set = True
    rest = significant(current)
    if rest:
        if in_set and rest[-1].is_word("END") and not require_terminator:  # execute_sql("... END"), as Flink's accepts
            in_set = False
        if in_set:
            raise SqlError(
                "EXECUTE STATEMENT SET BEGIN ... has no matching END;",
                line=rest[0].line,
                construct="EXECUTE STATEMENT SET",
                hint="EXECUTE STATEMENT SET BEGIN INSERT INTO a ...; INSERT INTO b ...; END;",
            )
        if require_terminator:
            raise SqlError("the statement does not end with ';'", line=rest[0].line, construct="statement")
        _emit(statements, current)
    return statements


def _opens_statement_set(words: list[str]) -> bool:
    return words[:4] == ["EXECUTE", "STATEMENT", "SET", "BEGIN"]


def _emit(statements: list[Statement], tokens: list[Token]) -> None:
    body = significant(tokens)
    if not body:
        return
    start, end = tokens.index(body[0]), tokens.index(body[-1])
    text = "".join(t.text for t in tokens[start:end + 1])
    statements.append(Statement(text, body[0].line))


def is_complete(buffer: str) -> bool:
    """Whether interactive input holds at least one finished statement (for multi-line entry)."""
    try:
        tokens = tokenize(buffer)
    except SqlError:
        return False  # an open string or comment: keep reading
    words: list[str] = []
    in_set = False
    last_terminated = False
    for token in tokens:
        if token.trivia:
            continue
        if token.kind == SYMBOL and token.text == ";":
            if in_set and words and words[-1] == "END":
                in_set = False
            if not in_set:
                last_terminated = True
                words = []
            continue
        last_terminated = False
        words.append(token.upper)
        if _opens_statement_set(words):
            in_set = True
    return last_terminated
