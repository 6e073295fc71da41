"""Async I/O (PyFlink 2.2's AsyncDataStream): concurrent calls per batch, input order, timeouts, retries, checks."""

from __future__ import annotations

import asyncio

import pytest

from kindling.common import Time, Types
from kindling.datastream import AsyncDataStream, AsyncFunction
from kindling.datastream.async_retry_predicates import empty_result_predicate
from kindling.datastream.async_retry_strategies import ExponentialBackoffDelayRetryStrategy, FixedDelayRetryStrategy

pytestmark = pytest.mark.integration


class InFlight(AsyncFunction):
    """Returns (value, calls in flight when it started): the concurrency the operator allowed."""

    def open(self, runtime_context):
        self.running = 0

    async def async_invoke(self, value):
        self.running += 1
        seen = self.running
        await asyncio.sleep(0.05 if value % 2 else 0.01)  # odd records finish later than the even ones after them
        self.running -= 1
        return [(value, seen)]


class Slow(AsyncFunction):
    async def async_invoke(self, value):
        await asyncio.sleep(30 if value == 2 else 0)
        return [(value, "done")]

    def timeout(self, value):
        return [(value, "timed out")]


class EmptyTwice(AsyncFunction):
    """Answers nothing for a record's first two calls (each call is counted per record)."""

    def open(self, runtime_context):
        self.calls = {}

    async def async_invoke(self, value):
        self.calls[value] = self.calls.get(value, 0) + 1
        return [] if self.calls[value] <= 2 else [(value, self.calls[value])]


PAIR = Types.TUPLE([Types.INT(), Types.INT()])


def test_calls_run_concurrently_up_to_capacity_and_results_keep_input_order(env):
    stream = env.from_collection(list(range(20)), type_info=Types.INT())
    rows = AsyncDataStream.ordered_wait(stream, InFlight(), Time.seconds(10), 5, PAIR).execute_and_collect()
    values = [r[0] for r in rows]
    assert values == list(range(20))  # odd records finish after the even ones that follow them, and still come first
    assert max(r[1] for r in rows) == 5  # five calls at a time: the capacity, not one by one
    unordered = AsyncDataStream.unordered_wait(stream, InFlight(), Time.seconds(10), 100, PAIR).execute_and_collect()
    assert sorted(r[0] for r in unordered) == list(range(20)) and max(r[1] for r in unordered) > 5


def test_a_call_past_its_timeout_gives_the_functions_fallback_or_fails_the_job(env):
    stream = env.from_collection([1, 2, 3], type_info=Types.INT())
    rows = AsyncDataStream.ordered_wait(stream, Slow(), Time.milliseconds(300), 10,
                                        Types.TUPLE([Types.INT(), Types.STRING()])).execute_and_collect()
    assert sorted(tuple(r) for r in rows) == [(1, "done"), (2, "timed out"), (3, "done")]

    class NoFallback(Slow):
        timeout = AsyncFunction.timeout

    with pytest.raises(Exception, match="timed out for input: 2"):
        AsyncDataStream.unordered_wait(stream, NoFallback(), Time.milliseconds(300), 10,
                                       Types.TUPLE([Types.INT(), Types.STRING()])).execute_and_collect()


def test_retries_follow_the_strategy(env):
    stream = env.from_collection([1, 2], type_info=Types.INT())
    retried = AsyncDataStream.ordered_wait_with_retry(
        stream, EmptyTwice(), Time.seconds(10), FixedDelayRetryStrategy(3, 10, empty_result_predicate, None), 10, PAIR)
    assert sorted(tuple(r) for r in retried.execute_and_collect()) == [(1, 3), (2, 3)]
    too_few = AsyncDataStream.unordered_wait_with_retry(
        stream, EmptyTwice(), Time.seconds(10), FixedDelayRetryStrategy(1, 10, empty_result_predicate, None), 10, PAIR)
    assert too_few.execute_and_collect() == []  # the last result stands once the attempts are used up
    backoff = ExponentialBackoffDelayRetryStrategy(5, 100, 350, 2.0, empty_result_predicate, None)
    assert [backoff.get_backoff_time_millis(n) for n in (1, 2, 3, 4)] == [100, 200, 350, 350]


def test_pyflinks_checks(env):
    stream = env.from_collection([1], type_info=Types.INT())

    class NotAsync(AsyncFunction):
        def async_invoke(self, value):  # not 'async def'
            return [value]

    with pytest.raises(Exception, match="should be declared as 'async def'"):
        AsyncDataStream.unordered_wait(stream, NotAsync(), Time.seconds(1))
    with pytest.raises(Exception, match="Timeout should be configured when do async with retry"):
        AsyncDataStream.ordered_wait_with_retry(stream, EmptyTwice(), Time.milliseconds(0),
                                                FixedDelayRetryStrategy(1, 10, empty_result_predicate, None))
    with pytest.raises(Exception, match="Async retry strategy should not be None"):
        AsyncDataStream.ordered_wait_with_retry(stream, EmptyTwice(), Time.seconds(1), None)
    with pytest.raises(ValueError, match="max_attempts should be greater than zero"):
        FixedDelayRetryStrategy(0, 10)
