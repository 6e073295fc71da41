"""A lossless tokenizer for Flink SQL: every character of the text belongs to exactly one token.

Statement splitting, the DDL parser and the query rewriter all work on these tokens, so quoted
strings, back-quoted identifiers and comments are never mistaken for syntax, and every token
knows its line (errors name the user's line, not a position in rewritten text).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

from kindling.sql.errors import SqlError

WORD = "word"  # identifiers and keywords
QUOTED = "quoted"  # `back-quoted identifier`
STRING = "string"  # 'string literal'
DQSTRING = "dqstring"  # "double-quoted" (Spark reads it as a string; Flink as an identifier)
NUMBER = "number"
SYMBOL = "symbol"
SPACE = "space"
COMMENT = "comment"

_TWO_CHAR = ("<=", ">=", "<>", "!=", "||", "=>", "::", "==")


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    start: int
    line: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == WORD else self.text

    @property
    def trivia(self) -> bool:
        """Whitespace and comments: ignored by the parser, kept in rewritten text."""
        return self.kind in (SPACE, COMMENT)

    def is_word(self, *words: str) -> bool:
        return self.kind == WORD and self.text.upper() in words

    def is_symbol(self, *symbols: str) -> bool:
        return self.kind == SYMBOL and self.text in symbols

    @property
    def identifier(self) -> str:
        """The identifier this token names (back-quotes removed)."""
        if self.kind == QUOTED:
            return self.text[1:-1].replace("``", "`")
        return self.text

    @property
    def string_value(self) -> str:
        """The value of a string literal."""
        return self.text[1:-1].replace("''", "'")


def tokenize(text: str, first_line: int = 1) -> list[Token]:
    """Split SQL text into tokens; an unterminated string, identifier or comment is an error with its line.

    Planning one statement looks for each construct in the same text (a dozen ``find_*`` calls), so the
    tokens of recent texts are kept; each caller gets a list of its own (tokens are immutable)."""
    return list(_tokenize(text, first_line))


@functools.lru_cache(maxsize=256)
def _tokenize(text: str, first_line: int) -> tuple[Token, ...]:
    tokens: list[Token] = []
    i, n, line = 0, len(text), first_line
    while i < n:
        c = text[i]
        start, start_line = i, line
        if c.isspace():
            while i < n and text[i].isspace():
                i += 1
            kind = SPACE
        elif text.startswith("--", i):
            while i < n and text[i] != "\n":
                i += 1
            kind = COMMENT
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise SqlError("unterminated comment: '/*' has no closing '*/'", line=start_line, construct="comment")
            i = end + 2
            kind = COMMENT
        elif c in ("'", "`", '"'):
            i = _quoted_end(text, i, c)
            if i < 0:
                what = {"'": "string literal", "`": "back-quoted identifier", '"': "double-quoted identifier"}[c]
                raise SqlError(f"unterminated {what}: {text[start:start + 30]!r}... has no closing {c}", line=start_line, construct=what)
            kind = {"'": STRING, "`": QUOTED, '"': DQSTRING}[c]
        elif c.isalpha() or c == "_" or c == "$":
            while i < n and (text[i].isalnum() or text[i] in "_$"):
                i += 1
            kind = WORD
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            while i < n and (text[i].isdigit() or text[i] == "."):
                i += 1
            if i < n and text[i] in "eE" and i + 1 < n and (text[i + 1].isdigit() or text[i + 1] in "+-"):
                i += 2
                while i < n and text[i].isdigit():
                    i += 1
            while i < n and text[i] in "lLdDfF" and not (i + 1 < n and text[i + 1].isalnum()):
                i += 1
            kind = NUMBER
        else:
            i += 2 if text[i:i + 2] in _TWO_CHAR else 1
            kind = SYMBOL
        piece = text[start:i]
        tokens.append(Token(kind, piece, start, start_line))
        line += piece.count("\n")
    return tuple(tokens)


def _quoted_end(text: str, i: int, quote: str) -> int:
    """Index just after the closing quote (a doubled quote is an escaped one), or -1."""
    j = i + 1
    while True:
        k = text.find(quote, j)
        if k < 0:
            return -1
        if k + 1 < len(text) and text[k + 1] == quote:
            j = k + 2
            continue
        return k + 1


class TokenCursor:
    """A position in a list of significant tokens, for the recursive-descent parsers (DDL, types, row patterns)."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self, offset: int = 0) -> Optional[Token]:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise self.ended()
        self.i += 1
        return token

    def ended(self) -> SqlError:
        """The error when the tokens end where one more was needed."""
        last = self.tokens[-1] if self.tokens else None
        return SqlError("the text ends too early", line=last.line if last else None)


def significant(tokens: Iterable[Token]) -> list[Token]:
    """Tokens without whitespace and comments."""
    return [t for t in tokens if not t.trivia]


def render(tokens: Iterable[Token]) -> str:
    return "".join(t.text for t in tokens)


def splice(tokens: list[Token], replacements: list[tuple[int, int, str]]) -> Optional[str]:
    """The text of ``tokens`` with each span ``[start, end)`` replaced by its text (spans in order, apart);
    None when there is no replacement."""
    if not replacements:
        return None
    out: list[str] = []
    position = 0
    for start, end, text in replacements:
        out.append(render(tokens[position:start]))
        out.append(text)
        position = end
    out.append(render(tokens[position:]))
    return "".join(out)


def matching_paren(tokens: list[Token], open_index: int) -> int:
    """Index of the ')' matching the '(' at ``open_index`` (in a list that may include trivia)."""
    depth = 0
    for i in range(open_index, len(tokens)):
        t = tokens[i]
        if t.kind == SYMBOL:
            if t.text in ("(", "["):
                depth += 1
            elif t.text in (")", "]"):
                depth -= 1
                if depth == 0:
                    return i
    opener = tokens[open_index]
    raise SqlError("unbalanced parentheses: this '(' is never closed", line=opener.line, construct="parentheses")


def matching_open(tokens: list[Token], close_index: int) -> Optional[int]:
    """Index of the '(' or '[' matching the ')' or ']' at ``close_index``; None when there is none."""
    depth = 0
    for i in range(close_index, -1, -1):
        t = tokens[i]
        if t.kind == SYMBOL:
            if t.text in (")", "]"):
                depth += 1
            elif t.text in ("(", "["):
                depth -= 1
                if depth == 0:
                    return i
    return None


def with_depth(tokens: Iterable[Token]) -> Iterator[tuple[Token, int]]:
    """Each token with its bracket nesting depth (0: outside every parenthesis/bracket; an opening bracket
    counts as inside, a closing one as outside)."""
    depth = 0
    for t in tokens:
        if t.kind == SYMBOL and t.text in ("(", "["):
            depth += 1
        elif t.kind == SYMBOL and t.text in (")", "]"):
            depth -= 1
        yield t, depth


def split_top_level(tokens: list[Token], separator: str = ",") -> list[list[Token]]:
    """Split tokens at separators outside parentheses/brackets."""
    parts: list[list[Token]] = [[]]
    for t, depth in with_depth(tokens):
        if depth == 0 and t.kind == SYMBOL and t.text == separator:
            parts.append([])
            continue
        parts[-1].append(t)
    return parts


def strip_trivia(tokens: list[Token]) -> list[Token]:
    """Tokens without leading and trailing whitespace/comments."""
    a, b = 0, len(tokens)
    while a < b and tokens[a].trivia:
        a += 1
    while b > a and tokens[b - 1].trivia:
        b -= 1
    return tokens[a:b]


def first_line(tokens: list[Token], default: int = 1) -> int:
    for t in tokens:
        if not t.trivia:
            return t.line
    return default


def next_significant(tokens: list[Token], index: int) -> Optional[int]:
    """Index of the first non-trivia token after ``index``, or None."""
    for j in range(index + 1, len(tokens)):
        if not tokens[j].trivia:
            return j
    return None


def previous_significant(tokens: list[Token], index: int) -> Optional[int]:
    for j in range(index - 1, -1, -1):
        if not tokens[j].trivia:
            return j
    return None


def function_calls(tokens: list[Token], names: tuple[str, ...]) -> list[tuple[int, int, int, int]]:
    """(name, '(', ')', end) indexes of each outermost call of a function in ``names`` (upper case); ``end`` is the
    closing parenthesis of an aggregate's ``FILTER (WHERE ...)`` when one follows, else the call's own ')'."""
    calls: list[tuple[int, int, int, int]] = []
    for i, token in enumerate(tokens):
        if token.kind != WORD or token.upper not in names or (calls and i <= calls[-1][3]):
            continue
        prev = previous_significant(tokens, i)
        if prev is not None and tokens[prev].is_symbol("."):
            continue
        j = next_significant(tokens, i)
        if j is None or not tokens[j].is_symbol("("):
            continue
        close = matching_paren(tokens, j)
        end = close
        k = next_significant(tokens, close)
        if k is not None and tokens[k].is_word("FILTER"):
            m = next_significant(tokens, k)
            if m is not None and tokens[m].is_symbol("("):
                end = matching_paren(tokens, m)
        calls.append((i, j, close, end))
    return calls


def split_alias(part: list[Token]) -> tuple[str, Optional[str]]:
    """A SELECT item's expression text and its alias (``expr AS a``, ``expr a``), or None when it has none."""
    sig = [t for t in part if not t.trivia]
    if len(sig) >= 3 and sig[-2].is_word("AS") and sig[-1].kind in (WORD, QUOTED):
        end = part.index(sig[-2])
        return render(part[:end]).strip(), sig[-1].identifier
    if len(sig) >= 2 and sig[-1].kind in (WORD, QUOTED) and (sig[-2].kind in (WORD, QUOTED) or sig[-2].is_symbol(")")) \
            and not sig[-2].is_symbol(".") and not sig[-1].is_word("END"):
        end = part.index(sig[-1])
        return render(part[:end]).strip(), sig[-1].identifier
    return render(part).strip(), None


def split_conjuncts(tokens: list[Token]) -> list[list[Token]]:
    """A condition's top-level AND operands (the AND of BETWEEN x AND y is not one)."""
    parts: list[list[Token]] = [[]]
    between = False
    for t, depth in with_depth(tokens):
        if depth == 0 and t.is_word("BETWEEN"):
            between = True
        elif depth == 0 and t.is_word("AND"):
            if between:
                between = False
            else:
                parts.append([])
                continue
        parts[-1].append(t)
    return [p for p in parts if p]


def from_item_qualifier(sig: list[Token]) -> Optional[str]:
    """The name the columns of a single FROM item are qualified by (its alias, the table's own name, or "" for a
    subquery without an alias); None for a join, a list of tables or a table function."""
    if not sig:
        return None
    if sig[0].is_symbol("("):
        end = next((k for k, (_, depth) in enumerate(with_depth(sig)) if depth == 0 and sig[k].is_symbol(")")), None)
        if end is None:
            return None
        rest = sig[end + 1:]
        if not rest:
            return ""  # a subquery without an alias: its columns are named unqualified
    else:
        k = 0
        while k + 2 < len(sig) and sig[k].kind in (WORD, QUOTED) and sig[k + 1].is_symbol("."):
            k += 2
        if sig[k].kind not in (WORD, QUOTED) or sig[k].is_word("TABLE", "LATERAL", "UNNEST"):
            return None
        rest = sig[k + 1:]
        if not rest:
            return sig[k].text
    if rest and rest[0].is_word("AS"):
        rest = rest[1:]
    if len(rest) == 1 and rest[0].kind in (WORD, QUOTED) and not rest[0].is_word("JOIN", "LEFT", "RIGHT", "FULL", "INNER", "CROSS"):
        return rest[0].text
    return None


def top_level_clauses(tokens: list[Token], words: Iterable[str]) -> tuple[list[tuple[int, Token]], dict[str, int]]:
    """A query's significant tokens outside every parenthesis (with their indexes), and the index of the first such
    occurrence of each keyword of ``words`` (``FROM``, ``WHERE``, ``ORDER``, ...) that the query has."""
    wanted = set(words)
    top = [(i, t) for i, (t, depth) in enumerate(with_depth(tokens)) if not t.trivia and depth == 0]
    positions: dict[str, int] = {}
    for i, t in top:
        if t.kind == WORD and t.upper in wanted and t.upper not in positions:
            positions[t.upper] = i
    return top, positions
