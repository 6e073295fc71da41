"""Rolling aggregations on a keyed stream: every record emits the key's updated aggregate, as in Flink.

``sum``/``min``/``max`` keep the first record's other fields and update the aggregated field;
``min_by``/``max_by`` emit the whole record holding the extreme (the first one on ties);
``reduce`` emits the running result of a ReduceFunction. Each key's running value is keyed state.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from pyspark.sql import Row

from kindling.datastream.context import RuntimeContext

ROLLING = "\x00rolling"


class RollingAdapter:
    """Runs one rolling aggregation in the keyed operator."""

    uses_watermark = False  # no timers: it runs the same whether a watermark reaches it or not

    def __init__(self, kind: str, field: Optional[str], fields: List[str], reduce: Optional[Callable[[Any, Any], Any]] = None) -> None:
        self._kind = kind
        self._field = field
        self._fields = fields
        self._function = reduce

    def open(self, runner: Any, runtime_context: RuntimeContext) -> None:
        self._runner = runner
        self._row = Row(*self._fields)
        self._index = self._fields.index(self._field) if self._field is not None else -1

    def element(self, index: int, value: Any) -> List[Any]:
        state = self._runner.state
        current = state.data.get(ROLLING)
        result = tuple(value) if current is None else self._combine(current, value)
        state.data[ROLLING] = result
        state.touch()
        return [result]

    def _combine(self, current: tuple, value: Any) -> tuple:
        i, kind = self._index, self._kind
        if kind == "reduce":
            assert self._function is not None
            reduced = self._function(self._row(*current), value)
            if isinstance(reduced, dict):
                return tuple(reduced.get(n) for n in self._fields)
            return tuple(reduced)
        new = value[i]
        old = current[i]
        if kind == "sum":
            return current[:i] + (old + new,) + current[i + 1:]
        if kind == "min":
            return current if new is None or (old is not None and old <= new) else current[:i] + (new,) + current[i + 1:]
        if kind == "max":
            return current if new is None or (old is not None and old >= new) else current[:i] + (new,) + current[i + 1:]
        if kind == "min_by":
            return tuple(value) if new is not None and (old is None or new < old) else current
        if kind == "max_by":
            return tuple(value) if new is not None and (old is None or new > old) else current
        raise ValueError(f"unknown rolling aggregation {kind!r}")

    def timer(self, timestamp: int) -> List[Any]:
        return []

    def close(self) -> None:
        pass
