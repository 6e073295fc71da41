"""One readable failure for a user function that raises or returns a value its declared type cannot hold.

Python workers raise ``UserFunctionError`` with a one-line message naming the function, the
operator, what went wrong (the offending value and expected type, or the function's own error)
and the record being processed; the driver's ``describe_failure`` picks that line out of Spark's
failure, so the job fails with it instead of a JVM stack trace.
"""

from __future__ import annotations

from typing import Any

MAX_RECORD_TEXT = 300


class UserFunctionError(RuntimeError):
    """A user function failed on a record (its message is one line, meant for the user)."""


def function_name(function: Any) -> str:
    """``MyMapFunction.map`` or ``update_tel`` or ``<lambda> at job.py:12``."""
    owner = getattr(function, "__self__", None)
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", None) or type(function).__name__
    if owner is not None and not name.startswith(type(owner).__name__):
        name = f"{type(owner).__name__}.{getattr(function, '__name__', name)}"
    code = getattr(function, "__code__", None)
    if "<lambda>" in name and code is not None:
        name = f"<lambda> at {code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
    return name


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_RECORD_TEXT else text[:MAX_RECORD_TEXT] + "..."


def _one_line(text: str) -> str:
    return " ".join(text.split())


def failure(function: Any, operator: str, exc: BaseException, record: Any = None, has_record: bool = True) -> UserFunctionError:
    """The one-line error for a user function's failure ``exc`` (raise it ``from exc``)."""
    from kindling.common.typeinfo import TypeMismatchError

    where = f" on record {_short(record)}" if has_record else ""
    if isinstance(exc, TypeMismatchError):
        what = f"returned a value that does not fit its output type: {exc}"
    else:
        what = f"raised {type(exc).__name__}: {exc}"
    return UserFunctionError(_one_line(f"user function {function_name(function)} in operator '{operator}' {what}{where}"))


_OUTPUT_CHOSEN: list = []


def _choose_output() -> None:
    """Once per process, before a user function first runs: in a Spark Python worker, what the function prints goes to
    the program's standard output, as under PyFlink (PySpark's daemon gives a worker the JVM's standard error)."""
    from pyspark import TaskContext

    from kindling.runtime.program_output import user_prints_to_program_stdout

    _OUTPUT_CHOSEN.append(True)
    if TaskContext.get() is not None:  # a task in a Python worker (not the driver program)
        user_prints_to_program_stdout()


class RecordCalls:
    """A user function's calls: any error leaves as one UserFunctionError naming the function, the operator and
    ``record``, which a loop over a batch sets before each call (one context per batch: a context per record costs
    about a microsecond). ``has_record`` False: the call has no record (a timer, the end of a key's records).

    >>> with RecordCalls(len, "Map") as calls:
    ...     for record in ["ab", "c"]:
    ...         calls.record = record
    ...         size = len(record)
    """

    __slots__ = ("function", "operator", "record", "has_record")

    def __init__(self, function: Any, operator: str, record: Any = None, has_record: bool = True) -> None:
        self.function = function
        self.operator = operator
        self.record = record
        self.has_record = has_record

    def __enter__(self) -> "RecordCalls":
        if not _OUTPUT_CHOSEN:
            _choose_output()
        return self

    def __exit__(self, kind: Any, exc: Any, traceback: Any) -> None:
        if isinstance(exc, Exception) and not isinstance(exc, UserFunctionError):
            raise failure(self.function, self.operator, exc, self.record, self.has_record) from exc


def calling(function: Any, operator: str, record: Any = None, has_record: bool = True) -> RecordCalls:
    """Run one user function call (``with calling(...):``); any error leaves as one UserFunctionError naming
    function, operator and record."""
    return RecordCalls(function, operator, record, has_record)
