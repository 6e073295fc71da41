"""Ctrl-C in the driver: taken between two calls into the JVM, never in the middle of one.

PySpark's own SIGINT handler cancels every Spark job through py4j from inside the handler. The
handler runs on the main thread, and with pinned threads (PySpark's default) it reuses the main
thread's py4j connection, which is usually in the middle of a call (a query's ``awaitTermination``):
the nested call fails ("reentrant call inside BufferedReader"), breaks that connection, and the
KeyboardInterrupt then surfaces wherever the main thread happens to be, sometimes outside the code
that would stop the job cleanly (the job then dies of SIGINT instead of ending CANCELED).

kindling's handler does not call into the JVM from the signal handler. While a job is being
waited on (``deferred()``), Ctrl-C only records the request and the waiting loop raises
KeyboardInterrupt at its next safe point, within a quarter of a second; a second Ctrl-C stops
waiting at once. Anywhere else Ctrl-C raises KeyboardInterrupt as plain Python does, and running
Spark jobs (a long batch query, say) are cancelled from another thread, which has its own
connection.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator

from pyspark import SparkContext

_requested = threading.Event()
_depth = 0


def install() -> None:
    """Replace PySpark's SIGINT handler with kindling's (only the main thread can set one)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_interrupt)


def _on_interrupt(signum: int, frame: Any) -> None:
    if _depth > 0 and not _requested.is_set():
        _requested.set()
        return
    threading.Thread(target=_cancel_spark_jobs, name="kindling-ctrl-c", daemon=True).start()
    raise KeyboardInterrupt


def _cancel_spark_jobs() -> None:
    context = SparkContext._active_spark_context
    if context is not None:
        try:
            context.cancelAllJobs()
        except Exception:  # the JVM is gone or going: nothing left to cancel
            pass


@contextmanager
def deferred() -> Iterator[None]:
    """While inside, Ctrl-C waits for ``raise_if_requested`` instead of interrupting a JVM call."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            _requested.clear()


def raise_if_requested() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed since the outermost ``deferred()`` began."""
    if _requested.is_set():
        raise KeyboardInterrupt
