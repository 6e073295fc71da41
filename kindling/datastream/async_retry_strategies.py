"""Retry strategies for async I/O (PyFlink's ``pyflink.datastream.async_retry_strategies``).

A strategy says whether attempt ``n`` may be retried (``can_retry(n)``: ``n <= max_attempts``), how long
to wait first, and on which results or exceptions (its retry predicate).

>>> from kindling.datastream.async_retry_predicates import empty_result_predicate
>>> strategy = FixedDelayRetryStrategy(3, 100, empty_result_predicate, None)
>>> strategy.can_retry(3), strategy.can_retry(4), strategy.get_backoff_time_millis(1)
(True, False, 100)
"""

from __future__ import annotations

from typing import Any, Callable, Optional

ResultPredicate = Optional[Callable[[list], bool]]
ExceptionPredicate = Optional[Callable[[BaseException], bool]]


class AsyncRetryPredicate:
    """When to retry: on a result (``result_predicate``) or on an exception (``exception_predicate``)."""

    def __init__(self, result_predicate: ResultPredicate = None, exception_predicate: ExceptionPredicate = None) -> None:
        self._result_predicate = result_predicate
        self._exception_predicate = exception_predicate

    def result_predicate(self) -> ResultPredicate:
        return self._result_predicate

    def exception_predicate(self) -> ExceptionPredicate:
        return self._exception_predicate


RetryPredicate = AsyncRetryPredicate


class AsyncRetryStrategy:
    """A retry strategy: ``can_retry``, ``get_backoff_time_millis``, ``get_retry_predicate``."""

    def can_retry(self, current_attempts: int) -> bool:
        raise NotImplementedError

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        raise NotImplementedError

    def get_retry_predicate(self) -> Optional[AsyncRetryPredicate]:
        raise NotImplementedError


class NoRetryStrategy(AsyncRetryStrategy):
    def can_retry(self, current_attempts: int) -> bool:
        return False

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return -1

    def get_retry_predicate(self) -> AsyncRetryPredicate:
        return AsyncRetryPredicate()


NO_RETRY_STRATEGY = NoRetryStrategy()


def _positive(name: str, value: Any) -> None:
    if not value > 0:
        raise ValueError(f"{name} should be greater than zero.")


class FixedDelayRetryStrategy(AsyncRetryStrategy):
    """Up to ``max_attempts`` retries, ``backoff_time_millis`` apart."""

    def __init__(self, max_attempts: int, backoff_time_millis: int, result_predicate: ResultPredicate = None,
                 exception_predicate: ExceptionPredicate = None) -> None:
        _positive("max_attempts", max_attempts)
        _positive("backoff_time_millis", backoff_time_millis)
        self._max_attempts, self._backoff = max_attempts, backoff_time_millis
        self._predicate = AsyncRetryPredicate(result_predicate, exception_predicate)

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self._max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return self._backoff

    def get_retry_predicate(self) -> AsyncRetryPredicate:
        return self._predicate


class ExponentialBackoffDelayRetryStrategy(AsyncRetryStrategy):
    """Up to ``max_attempts`` retries; the first after ``initial_delay`` ms, each next one ``multiplier`` times longer,
    at most ``max_retry_delay`` ms."""

    def __init__(self, max_attempts: int, initial_delay: int, max_retry_delay: int, multiplier: float,
                 result_predicate: ResultPredicate = None, exception_predicate: ExceptionPredicate = None) -> None:
        for name, value in (("max_attempts", max_attempts), ("initial_delay", initial_delay),
                            ("max_retry_delay", max_retry_delay), ("multiplier", multiplier)):
            _positive(name, value)
        self._max_attempts, self._initial, self._max_delay, self._multiplier = max_attempts, initial_delay, max_retry_delay, multiplier
        self._predicate = AsyncRetryPredicate(result_predicate, exception_predicate)

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self._max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        """The wait before retry ``current_attempts`` (1 for the first retry)."""
        delay = int(self._initial)
        for _ in range(max(0, current_attempts - 1)):
            delay = int(min(delay * self._multiplier, self._max_delay))
        return delay

    def get_retry_predicate(self) -> AsyncRetryPredicate:
        return self._predicate
