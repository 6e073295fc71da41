"""Process functions with Flink's names: ProcessFunction and KeyedProcessFunction, and their contexts.

Methods may be written PyFlink's way (``process_element(value, ctx)`` returning or yielding
results) or Java's way (``process_element(value, ctx, out)`` calling ``out.collect(...)``).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable, List, Optional, Tuple

from kindling.datastream.context import RuntimeContext
from kindling.datastream.side_outputs import OutputTag
from kindling.datastream.timers import TimeDomain, TimerService


class Collector:
    """Java's Collector: ``out.collect(value)`` emits a record."""

    def __init__(self, sink: List[Any]) -> None:
        self._sink = sink

    def collect(self, value: Any) -> None:
        self._sink.append(value)

    def close(self) -> None:
        pass


class RichFunction:
    """A function with a lifecycle and a RuntimeContext (set before ``open``).

    Subscriptable as PyFlink's generic functions are (``ProcessWindowFunction[IN, OUT, KEY, W]``).
    """

    def __class_getitem__(cls, parameters: Any) -> Any:
        return cls

    _runtime_context: Optional[RuntimeContext] = None

    def open(self, runtime_context: RuntimeContext) -> None:
        pass

    def close(self) -> None:
        pass

    def get_runtime_context(self) -> RuntimeContext:
        if self._runtime_context is None:
            raise RuntimeError("the runtime context is available once the function runs (in open() and later)")
        return self._runtime_context


class BaseContext:
    """What every process-function context offers: the record's timestamp, timers and side outputs."""

    def __class_getitem__(cls, parameters: Any) -> Any:
        return cls

    def __init__(self, runner: Any) -> None:
        self._runner = runner
        self._timer_service = TimerService(runner)

    def timestamp(self) -> Optional[int]:
        """The event time (epoch ms) of the record being processed, or of the firing timer."""
        return self._runner.timestamp

    def timer_service(self) -> TimerService:
        return self._timer_service

    def output(self, output_tag: OutputTag, value: Any) -> None:
        """Emit ``value`` to the side output named by ``output_tag``."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"output() takes an OutputTag, got {type(output_tag).__name__}")
        self._runner.emit_side(output_tag.tag_id, value)

    def get_current_key(self) -> Any:
        return self._runner.current_key

    def time_domain(self) -> TimeDomain:
        """In on_timer: whether an event-time or a processing-time timer fired."""
        return self._runner.time_domain


class ProcessFunction(RichFunction):
    """A function over every record of a (non-keyed) stream, with access to time and side outputs."""

    Context = BaseContext

    def process_element(self, value: Any, ctx: BaseContext) -> Optional[Iterable[Any]]:
        raise NotImplementedError


class KeyedProcessFunction(RichFunction):
    """A function over each key's records with keyed state and timers (Flink's KeyedProcessFunction)."""

    Context = BaseContext
    OnTimerContext = BaseContext

    def process_element(self, value: Any, ctx: BaseContext) -> Optional[Iterable[Any]]:
        raise NotImplementedError

    def on_timer(self, timestamp: int, ctx: BaseContext) -> Optional[Iterable[Any]]:
        return None


GENERATOR = type(x for x in ())  # what a generator function's call returns
_NO_CONTEXT = object()


def invoker(method: Callable[..., Any], arguments: int, context: Any = _NO_CONTEXT) -> Callable[..., Iterable[Any]]:
    """Call a user method the PyFlink way (results returned/yielded) or the Java way (a trailing Collector).

    With ``context``, the method's last argument is fixed and the call takes the others (a record, a timestamp); a
    generator method's results then come back as its generator, which the caller must run through before the next call.
    """
    with_collector = takes_collector(method, arguments)
    if with_collector:
        def call(*args: Any) -> List[Any]:
            out: List[Any] = []
            method(*args, Collector(out))
            return out
    else:
        def call(*args: Any) -> List[Any]:
            result = method(*args)
            return list(result) if result.__class__ is GENERATOR else as_list(result)
    if context is _NO_CONTEXT:
        return call
    if with_collector:
        return lambda value: call(value, context)

    def with_context(value: Any) -> Iterable[Any]:
        # A generator is handed back as it is, to be run through at once by the caller (the keyed operator's record
        # loop): no list of its results per record. Its side outputs then interleave with its results as it emits them.
        result = method(value, context)
        return result if result.__class__ is GENERATOR else as_list(result)
    return with_context


def takes_collector(method: Callable[..., Any], arguments: int) -> bool:
    """Whether ``method`` takes a trailing Collector after its ``arguments`` (the Java way) rather than returning or
    yielding its results (the PyFlink way)."""
    try:
        params = [
            p for p in inspect.signature(method).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return False
    return len(params) > arguments


def as_list(result: Any) -> List[Any]:
    """A user method's result as a list of records: none, one, or what it iterates."""
    if result is None:
        return []
    if isinstance(result, (str, bytes, tuple)) or not hasattr(result, "__iter__"):
        return [result]
    return list(result)


class KeyedProcessAdapter:
    """Runs a KeyedProcessFunction inside the keyed operator."""

    def __init__(self, function: KeyedProcessFunction) -> None:
        self._function = function

    def open(self, runner: Any, runtime_context: RuntimeContext) -> None:
        self._function._runtime_context = runtime_context
        self._function.open(runtime_context)
        self._ctx = BaseContext(runner)
        self._element = invoker(self._function.process_element, 2)
        self._timer = invoker(self._function.on_timer, 2)

    def element(self, index: int, value: Any) -> List[Any]:
        return self._element(value, self._ctx)

    def element_function(self, index: int) -> Callable[[Any], Iterable[Any]]:
        return invoker(self._function.process_element, 2, self._ctx)

    def element_call(self, index: int) -> Optional[Tuple[Callable[[Any, Any], Any], Any]]:
        """``process_element`` and its context, for the runner to call as ``method(value, ctx)`` itself, taking a
        result other than a generator with :func:`as_list` (one Python call less per record than
        :meth:`element_function`'s); None when the function takes a Collector."""
        method = self._function.process_element
        return None if takes_collector(method, 2) else (method, self._ctx)

    def timer(self, timestamp: int) -> List[Any]:
        return self._timer(timestamp, self._ctx)

    def close(self) -> None:
        self._function.close()


class _StatelessRunner:
    """What a ProcessFunction on a non-keyed stream sees: time and side outputs, no keyed state or timers."""

    def __init__(self) -> None:
        self.timestamp: Optional[int] = None
        self.current_key = None
        self.time_domain = None
        self.watermark = -(2**63)
        self.side: List[tuple] = []

    @property
    def processing_time(self) -> int:
        import time

        return int(time.time() * 1000)

    @property
    def state(self) -> Any:
        raise RuntimeError("timers and keyed state need a keyed stream: call key_by(...) before process(...)")

    def emit_side(self, tag_id: str, value: Any) -> None:
        from kindling.datastream.side_outputs import encode

        self.side.append((self.timestamp, tag_id, encode(value)))


def process_batches(function: ProcessFunction, in_schema: Any, out_user: Any, out_arrow: Any, in_type: Any = None,
                    out_type: Any = None) -> Callable[..., Any]:
    """A mapInArrow function running a ProcessFunction per record; output rows are tagged like the keyed operator's."""
    import pyarrow as pa

    from kindling.datastream import records

    names = records.user_columns(in_schema)
    decoder, encoder = records.codec(in_schema, in_type), records.Codec(out_user, out_type)
    internal = records.internal_columns(in_schema)
    rowtime = [n for n in internal if n.endswith("rowtime")][0]
    # Whether a keyed operator's timer emitted the record: carried on for the keyed operators after this one.
    from_timer = [n for n in internal if n.endswith("from_timer")]

    def run(batches: Any) -> Any:
        from kindling.datastream.errors import RecordCalls

        runner = _StatelessRunner()
        runtime_context = RuntimeContext("Process", None, 0, 1)
        function._runtime_context = runtime_context
        function.open(runtime_context)
        ctx = BaseContext(runner)
        call = invoker(function.process_element, 2)
        width = len(out_user.fields)
        for batch in batches:
            times = batch.column(rowtime).to_pylist()
            flags = batch.column(from_timer[0]).to_pylist() if from_timer else [None] * batch.num_rows
            out: List[tuple] = []
            with RecordCalls(function.process_element, "Process") as calls:
                for row, moment, flag in zip(records.to_rows(batch, names, decoder), times, flags):
                    runner.timestamp = int(moment.timestamp() * 1000) if moment is not None else None
                    carried = (moment, flag) if from_timer else (moment,)
                    calls.record = row
                    for value in call(row, ctx):
                        out.append(encoder.encode(value, "Process result") + carried + (None, None))
                    for _timestamp, tag, blob in runner.side:
                        out.append((None,) * width + carried + (tag, blob))
                    runner.side.clear()
            columns = list(zip(*out)) if out else [() for _ in out_arrow]
            arrays = [pa.array(list(c), type=f.type) for c, f in zip(columns, out_arrow)]
            yield pa.RecordBatch.from_arrays(arrays, schema=out_arrow)
        function.close()

    return run
