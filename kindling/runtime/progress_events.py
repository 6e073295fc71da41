"""Wake-ups from Spark's streaming listener bus: a query reported a micro-batch, or ended.

A job waiting for its queries (``JobClient.wait``) looks at them again as soon as one of them reports
progress or ends, instead of only on a timer: a bounded job ends as its last micro-batch reports, where
polling every 50 ms saw it 25 ms later on average (at 1M Nexmark events a stateless query runs in about
1.5 s, so that was a percent and a half of it). The timer stays as the fallback for a session whose
listener could not be registered.

One listener per Spark session (its ``StreamingQueryManager``), registered when a job starts its first
query there; it counts events process-wide and reads nothing of them, so a progress report costs one
Py4J call-back and no conversion of the progress to Python.

>>> mark = current()
>>> wait_after(mark, 0.01)  # nothing reported: returns after the timeout
"""

from __future__ import annotations

import atexit
import logging
import threading
from typing import Any

log = logging.getLogger(__name__)

_changed = threading.Condition()
_events = 0
# (SparkContext, identity hash code of a JVM StreamingQueryManager) -> (that manager, its listener), removed at exit
_listeners: dict[tuple[int, int], tuple[Any, Any]] = {}


class _Listener:
    """Spark's ``PythonStreamingQueryListener`` through Py4J: counts progress and termination events."""

    def onQueryStarted(self, event: Any) -> None:  # noqa: N802 (Spark's interface)
        pass

    def onQueryProgress(self, event: Any) -> None:  # noqa: N802
        _signal()

    def onQueryIdle(self, event: Any) -> None:  # noqa: N802
        pass

    def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
        _signal()

    class Java:
        implements = ["org.apache.spark.sql.streaming.PythonStreamingQueryListener"]


def _signal() -> None:
    global _events
    with _changed:
        _events += 1
        _changed.notify_all()


def current() -> int:
    """The number of events so far: take it before looking at the queries, then ``wait_after`` it."""
    return _events


def wait_after(mark: int, timeout: float) -> None:
    """Return when an event arrived after ``mark`` was taken, or after ``timeout`` seconds."""
    with _changed:
        _changed.wait_for(lambda: _events != mark, timeout)


def listen(query: Any) -> None:
    """Have the Spark session that runs ``query`` (a PySpark StreamingQuery) report to this module, once."""
    from pyspark import SparkContext
    from pyspark.java_gateway import ensure_callback_server_started

    context = SparkContext._active_spark_context
    if context is None:
        return
    try:
        manager = query._jsq.sparkSession().streams()
        key = (id(context), context._jvm.System.identityHashCode(manager))
        if key in _listeners:
            return
        ensure_callback_server_started(context._gateway)
        wrapper = context._jvm.org.apache.spark.sql.streaming.PythonStreamingQueryListenerWrapper(_Listener())
        manager.addListener(wrapper)
        if not _listeners:
            atexit.register(_stop_listening)
        _listeners[key] = (manager, wrapper)
    except Exception as exc:  # the timer alone still sees every query end
        log.debug("no streaming listener for job wake-ups: %s", exc)


def _stop_listening() -> None:
    """At exit, before PySpark stops Spark: queries that end then must not call back into a Python that is going."""
    for manager, wrapper in _listeners.values():
        try:
            manager.removeListener(wrapper)
        except Exception:  # the JVM is already gone
            pass
    _listeners.clear()
