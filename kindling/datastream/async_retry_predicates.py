"""Predicates for async retry strategies (PyFlink's ``pyflink.datastream.async_retry_predicates``)."""

from __future__ import annotations

from typing import Any, Optional


def empty_result_predicate(result: Optional[list]) -> bool:
    """Retry when the call returned nothing."""
    return result is None or len(result) == 0


def has_exception_predicate(error: Optional[BaseException]) -> bool:
    """Retry on any exception."""
    return error is not None


def exception_type_predicate(error: Optional[BaseException], expected_error_type: Any) -> bool:
    """Retry on exceptions of a type."""
    return isinstance(error, expected_error_type)
