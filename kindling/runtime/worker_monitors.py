"""Let an ended streaming query's session go: Spark's idle-worker monitor threads hold it.

Every streaming query that reads a Python data source (every kindling connector is one) starts a
``PythonStreamingSourceRunner`` on its query thread, and that runner a ``PythonWorkerFactory`` of its
own, whose constructor starts an "Idle Worker Monitor" thread. The thread loops forever (Spark 4.3
never ends it, even after the factory is stopped), and a Java thread inherits its creator's
``InheritableThreadLocal`` values: here the query thread's active ``SparkSession``, the clone of the
session each query runs on, with its catalog, its temporary views and their analysed plans. So each
query that ever ran kept about a megabyte of the driver's heap after it ended: a test session of
a thousand queries filled a 1 GB heap, and a long-lived driver (the job manager's) would in time.

The monitor's own work (stopping idle Python workers) reads no thread-local value, so kindling drops
the inherited values of every such thread when a job ends. The threads themselves stay (a few KB of
stack each, asleep); only Spark can end them.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

log = logging.getLogger(__name__)

_MONITOR_PREFIX = "Idle Worker Monitor"
# A sweep looks at every JVM thread (a Py4J call or two each): it runs once the JVM has this many more threads
# than after the last one, not at every job's end.
_SWEEP_AFTER_NEW_THREADS = 32
_lock = threading.Lock()
_threads_after_last_sweep = 0


def release_inherited_sessions(jvm: Any) -> int:
    """Clear the inherited thread-local values of Spark's idle-worker monitor threads; return how many.

    Needs the JVM's ``java.lang`` opened to reflection (Spark's launcher opens it: ``--add-opens
    java.base/java.lang=ALL-UNNAMED``); where it is not, nothing is released and nothing fails.
    """
    try:
        inherited = jvm.java.lang.Class.forName("java.lang.Thread").getDeclaredField("inheritableThreadLocals")
        inherited.setAccessible(True)
        released = 0
        for thread in jvm.java.lang.Thread.getAllStackTraces().keySet().toArray():
            if thread.getName().startswith(_MONITOR_PREFIX) and inherited.get(thread) is not None:
                inherited.set(thread, None)
                released += 1
        return released
    except Exception as exc:  # reflection refused (another JVM, closed modules): the memory stays held, as before
        log.debug("could not release the sessions held by Spark's idle worker monitors: %s", exc)
        return 0


def after_job(jvm: Any) -> None:
    """Release what ended queries' monitor threads hold, when enough new threads have appeared to be worth a sweep."""
    global _threads_after_last_sweep
    try:
        count = jvm.java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount()
    except Exception:  # the JVM is gone or going: nothing to release
        return
    with _lock:
        if count - _threads_after_last_sweep < _SWEEP_AFTER_NEW_THREADS:
            _threads_after_last_sweep = min(_threads_after_last_sweep, count)
            return
        release_inherited_sessions(jvm)
        _threads_after_last_sweep = count
