"""SQL errors a user can act on: the construct, the line, what is wrong and the nearest supported form."""

from __future__ import annotations

import re
from typing import Optional


class SqlError(ValueError):
    """A statement kindling cannot parse, validate or run; never carries a raw Spark trace."""

    def __init__(self, message: str, *, line: Optional[int] = None, construct: Optional[str] = None, hint: Optional[str] = None) -> None:
        self.reason = message
        self.line = line
        self.construct = construct
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        text = f"SQL {where}{self.reason}"
        if self.hint:
            text += f". Supported form: {self.hint}"
        return text

    def at_line(self, line: int) -> "SqlError":
        """The same error placed at a line (when it was raised without one)."""
        if self.line is None:
            self.line = line
            self.args = (self._render(),)
        return self


# Spark's analysis messages: "[ERROR_CLASS] message text. SQLSTATE: ...; line 1 pos 7;\n'Project ..."
_SPARK_LINE = re.compile(r"line (\d+),? pos(?:ition)? (\d+)")
_ERROR_CLASS = re.compile(r"^\[([A-Z_.]+)\]\s*")


def from_spark(error: BaseException, *, statement_line: int, construct: str, hint: Optional[str] = None) -> SqlError:
    """A Spark analysis/parse error as a SqlError: first sentence only, line mapped onto the user's script."""
    text = str(getattr(error, "desc", None) or error)
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    first = re.sub(r"\s*SQLSTATE: \w+", "", first)
    match = _SPARK_LINE.search(text)
    line = statement_line
    if match:
        line = statement_line + int(match.group(1)) - 1
    first = _SPARK_LINE.sub("", first).rstrip(" ;.")
    error_class = _ERROR_CLASS.match(first)
    if error_class:
        first = first[error_class.end():]
    first = first.replace("__kindling_", "")
    return SqlError(f"{construct}: {first}", line=line, construct=construct, hint=hint)
