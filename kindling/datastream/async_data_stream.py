"""Async I/O (PyFlink 2.2's ``AsyncDataStream`` and ``AsyncFunction``): many requests in flight per task.

``AsyncDataStream.unordered_wait(stream, function, timeout, capacity)`` calls ``await
function.async_invoke(record)`` for every record, up to ``capacity`` calls at a time, on one asyncio
event loop per Python worker; each call returns a list of output records. A call that takes longer than
``timeout`` (its retries included) gives ``function.timeout(record)`` (by default a ``TimeoutError``,
which fails the job). ``*_with_retry`` re-invokes a call when the strategy's predicate says so
(an empty result, an exception), after the strategy's backoff.

Records of a micro-batch are processed together and emitted in input order in both modes (the
unordered mode allows any order; input order is one of them). A replayed micro-batch calls the
function again for its records, as Flink re-issues the in-flight requests it restores: side effects
of ``async_invoke`` may repeat.

>>> import asyncio
>>> class Double(AsyncFunction):
...     async def async_invoke(self, value):
...         await asyncio.sleep(0.01)
...         return [value * 2]
>>> # AsyncDataStream.ordered_wait(env.from_collection([1, 2, 3]), Double(), Time.seconds(5), 100, Types.INT())
"""

from __future__ import annotations

import asyncio
import inspect
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Iterator

import pyarrow as pa
from pyspark.sql.types import StructType

from kindling.datastream.async_retry_strategies import NO_RETRY_STRATEGY, AsyncRetryStrategy

if TYPE_CHECKING:
    from kindling.datastream.stream import DataStream


class AsyncFunction:
    """A function whose ``async def async_invoke(value) -> list`` runs concurrently with others of its task."""

    def open(self, runtime_context: Any) -> None:
        pass

    def close(self) -> None:
        pass

    async def async_invoke(self, value: Any) -> list:
        raise NotImplementedError("AsyncFunction.async_invoke(value) must be implemented (as 'async def')")

    def timeout(self, value: Any) -> list:
        """The records for a call that timed out; by default the job fails."""
        raise TimeoutError("Async function call has timed out for input: " + str(value))


def _millis(timeout: Any) -> int:
    if hasattr(timeout, "to_milliseconds"):
        return int(timeout.to_milliseconds())
    if isinstance(timeout, timedelta):
        return int(timeout.total_seconds() * 1000)
    if isinstance(timeout, (int, float)):
        return int(timeout)
    raise TypeError(f"timeout must be a Time, Duration or timedelta, got {type(timeout).__name__}")


class AsyncDataStream:
    """Adds an :class:`AsyncFunction` to a stream (PyFlink's ``AsyncDataStream``)."""

    @staticmethod
    def unordered_wait(data_stream: "DataStream", async_function: AsyncFunction, timeout: Any, capacity: int = 100,
                       output_type: Any = None) -> "DataStream":
        return AsyncDataStream.unordered_wait_with_retry(data_stream, async_function, timeout, NO_RETRY_STRATEGY, capacity,
                                                         output_type)

    @staticmethod
    def unordered_wait_with_retry(data_stream: "DataStream", async_function: AsyncFunction, timeout: Any,
                                  async_retry_strategy: AsyncRetryStrategy, capacity: int = 100,
                                  output_type: Any = None) -> "DataStream":
        return _wait(data_stream, async_function, timeout, async_retry_strategy, capacity, output_type, ordered=False)

    @staticmethod
    def ordered_wait(data_stream: "DataStream", async_function: AsyncFunction, timeout: Any, capacity: int = 100,
                     output_type: Any = None) -> "DataStream":
        return AsyncDataStream.ordered_wait_with_retry(data_stream, async_function, timeout, NO_RETRY_STRATEGY, capacity,
                                                       output_type)

    @staticmethod
    def ordered_wait_with_retry(data_stream: "DataStream", async_function: AsyncFunction, timeout: Any,
                                async_retry_strategy: AsyncRetryStrategy, capacity: int = 100,
                                output_type: Any = None) -> "DataStream":
        return _wait(data_stream, async_function, timeout, async_retry_strategy, capacity, output_type, ordered=True)


def _validate(async_function: Any, timeout_ms: int, strategy: Any, capacity: int) -> None:
    """PyFlink's checks, with its messages."""
    if not inspect.iscoroutinefunction(getattr(async_function, "async_invoke", None)):
        raise Exception(f"Method 'async_invoke' of class '{type(async_function)}' should be declared as 'async def'.")
    if strategy is None:
        raise Exception("Async retry strategy should not be None.")
    if strategy is not NO_RETRY_STRATEGY and timeout_ms <= 0:
        raise Exception("Timeout should be configured when do async with retry.")
    if strategy.get_retry_predicate() is None:
        raise Exception(f"Retry predicate of the async retry strategy '{type(strategy)}' is None.")
    if capacity <= 0:
        raise ValueError(f"capacity must be positive, got {capacity}")


def _wait(data_stream: "DataStream", function: AsyncFunction, timeout: Any, strategy: AsyncRetryStrategy, capacity: int,
          output_type: Any, ordered: bool) -> "DataStream":
    from kindling.datastream.functions import ship_by_value

    timeout_ms = _millis(timeout)
    _validate(function, timeout_ms, strategy, capacity)
    ship_by_value(function)
    name = "AsyncWaitOperator" if ordered else "UnorderedAsyncWaitOperator"
    out, out_type = data_stream._output(output_type)
    full = StructType(list(out.fields) + [data_stream._df.schema[c] for c in data_stream._internal()])
    run = async_batches(function, data_stream._df.schema, full, data_stream._type_info, out_type, timeout_ms, capacity,
                        strategy, name)
    result = data_stream._transform(lambda df: df.mapInArrow(run, full), name)
    result._type_info = out_type
    return result


# --- execution (Python workers) ---------------------------------------------------------------------

async def _call(function: AsyncFunction, value: Any, strategy: AsyncRetryStrategy) -> list:
    """One record's call with its retries: the last result, or the last exception raised."""
    predicate = strategy.get_retry_predicate()
    result_retry = predicate.result_predicate() if predicate is not None else None
    error_retry = predicate.exception_predicate() if predicate is not None else None
    attempt = 1
    while True:
        try:
            produced = await function.async_invoke(value)
            result, error = (list(produced) if produced is not None else []), None
        except Exception as exc:
            result, error = None, exc
        retry = (error is None and result_retry is not None and result_retry(result)) or \
                (error is not None and error_retry is not None and error_retry(error))
        if retry and strategy.can_retry(attempt):
            await asyncio.sleep(max(0, strategy.get_backoff_time_millis(attempt)) / 1000)
            attempt += 1
            continue
        if error is not None:
            raise error
        return result  # type: ignore[return-value]


class _RecordFailure(Exception):
    """A record's call failed (after its retries): the record and the error, to name both in the job's failure."""

    def __init__(self, value: Any, error: BaseException) -> None:
        super().__init__(str(error))
        self.value, self.error = value, error


async def _batch(function: AsyncFunction, values: list, timeout_ms: int, capacity: int, strategy: AsyncRetryStrategy) -> list:
    gate = asyncio.Semaphore(capacity)

    async def one(value: Any) -> list:
        async with gate:
            try:
                if timeout_ms > 0:
                    try:
                        return await asyncio.wait_for(_call(function, value, strategy), timeout_ms / 1000)
                    except asyncio.TimeoutError:
                        return list(function.timeout(value) or [])
                return await _call(function, value, strategy)
            except Exception as exc:
                raise _RecordFailure(value, exc) from exc

    return await asyncio.gather(*(one(v) for v in values))


def async_batches(function: AsyncFunction, in_schema: StructType, out_schema: StructType, in_type: Any, out_type: Any,
                  timeout_ms: int, capacity: int, strategy: AsyncRetryStrategy,
                  operator: str) -> Any:
    """A mapInArrow function running the async function over each Arrow batch's records concurrently."""
    from kindling.datastream import records

    names, internal, out_user, arrow_out, arrow_user = records._layout(in_schema, out_schema)
    decoder, encoder = records.codec(in_schema, in_type), records.Codec(out_user, out_type)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from kindling.datastream.context import RuntimeContext
        from kindling.datastream.errors import calling

        loop = asyncio.new_event_loop()
        function.open(RuntimeContext(operator, None, 0, 1))
        try:
            for batch in batches:
                values = records.to_rows(batch, names, decoder)
                try:
                    produced = loop.run_until_complete(_batch(function, values, timeout_ms, capacity, strategy)) if values else []
                except _RecordFailure as failure:
                    with calling(function.async_invoke, operator, failure.value):
                        raise failure.error from None
                results: list[tuple] = []
                origin: list[int] = []
                for index, outputs in enumerate(produced):
                    for item in outputs:
                        results.append(encoder.encode(item, f"{operator} result"))
                        origin.append(index)
                mapped = records.to_batch(results, out_user, arrow_user)
                taken = pa.array(origin, type=pa.int64())
                yield pa.RecordBatch.from_arrays(list(mapped.columns) + [batch.column(c).take(taken) for c in internal],
                                                 schema=arrow_out)
        finally:
            function.close()
            loop.close()

    return run

