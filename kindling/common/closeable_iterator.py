"""Collected records as PyFlink hands them out: a ``CloseableIterator`` (``with ds.execute_and_collect() as rows``)."""

from __future__ import annotations

from typing import Any


class CollectedRows(list):
    """A job's collected records; also usable as PyFlink's ``CloseableIterator`` (``with ... as rows: for r in rows``).

    >>> with CollectedRows([1, 2]) as rows:
    ...     list(rows)
    [1, 2]
    """

    def __enter__(self) -> "CollectedRows":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release: the rows are already here (PyFlink's iterator frees its job's result)."""
