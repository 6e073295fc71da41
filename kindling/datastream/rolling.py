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

    def __init__(self, kind: str, field: Optional[str], fields: List[str], reduce: Optional[Callable[[Any, Any], Any]] = None,
                 typed: bool = False, position: Any = None, batch: bool = False) -> None:
        self._kind = kind
        self._field = field
        self._fields = fields
        self._function = reduce
        # PyFlink-typed records (a tuple, a Row, any object): kept and combined as the user's values;
        # ``position`` indexes the aggregated field in them.
        self._typed = typed
        self._position = position
        # Batch execution (execution.runtime-mode: batch): only each key's final result, at the end of input.
        self._batch = batch
        if batch:
            self.uses_watermark = True

    def open(self, runner: Any, runtime_context: RuntimeContext) -> None:
        self._runner = runner
        self._row = Row(*self._fields)
        self._index = self._fields.index(self._field) if self._field is not None else -1

    def element(self, index: int, value: Any) -> List[Any]:
        state = self._runner.state
        current = state.data.get(ROLLING)
        if self._typed:
            result = value if current is None else self._combine_typed(current, value)
            state.data[ROLLING] = result
            state.touch()
            return self._emitted(result)
        result = tuple(value) if current is None else self._combine(current, value)
        state.data[ROLLING] = result
        state.touch()
        return self._emitted(result)

    def _emitted(self, result: Any) -> List[Any]:
        if not self._batch:
            return [result]
        from kindling.datastream.timers import TimerService
        from kindling.runtime.progress import END_OF_TIME_THRESHOLD

        # The end of a bounded input moves the watermark past this: the timer fires then.
        TimerService(self._runner).register_event_time_timer(int(END_OF_TIME_THRESHOLD.timestamp() * 1000))
        return []

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

    def _combine_typed(self, current: Any, value: Any) -> Any:
        kind = self._kind
        if kind == "reduce":
            assert self._function is not None
            return self._function(current, value)
        i = self._position
        new, old = value[i], current[i]

        def replaced(record: Any, field_value: Any) -> Any:
            if isinstance(record, tuple):
                return record[:i] + (field_value,) + record[i + 1:]
            copy = type(record)(*record) if not isinstance(record, list) else list(record)
            if hasattr(record, "_fields") and getattr(record, "_fields", None) is not None and not isinstance(record, tuple):
                copy.set_field_names(record._fields)
            copy[i] = field_value
            return copy

        if kind == "sum":
            return replaced(current, old + new)
        if kind == "min":
            return current if new is None or (old is not None and old <= new) else replaced(current, new)
        if kind == "max":
            return current if new is None or (old is not None and old >= new) else replaced(current, new)
        if kind == "min_by":
            return value if new is not None and (old is None or new < old) else current
        if kind == "max_by":
            return value if new is not None and (old is None or new > old) else current
        raise ValueError(f"unknown rolling aggregation {kind!r}")

    def timer(self, timestamp: int) -> List[Any]:
        if not self._batch:
            return []
        state = self._runner.state
        result = state.data.pop(ROLLING, None)
        state.touch()
        return [] if result is None else [result]

    def close(self) -> None:
        pass
