"""What makes forking a warm Python process safe: one thread in it when it forks.

A fork copies only the thread that calls it; a lock another thread held stays locked forever in the child. The
processes that fork Spark's Python workers from a warm interpreter (:mod:`kindling.runtime.worker_forks`,
:mod:`kindling.runtime.warm_daemon`) import NumPy and PyArrow first, which start threads of their own unless told
not to, and check that none did.
"""

from __future__ import annotations

import gc
import os
from typing import MutableMapping, Sequence

# What every Spark Python worker imports (Arrow batches, pandas conversions), whatever its module.
WORKER_MODULES = ("pyarrow", "pandas", "pyspark.sql.pandas.serializers")


def one_thread_environment(env: MutableMapping[str, str]) -> None:
    """Settings under which NumPy and PyArrow start no thread on import or first use: one BLAS thread, and no
    background purge thread for PyArrow's jemalloc (it purges on allocation instead). Settings of the user's stay.

    >>> env = {}
    >>> one_thread_environment(env)
    >>> env == {"OPENBLAS_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}
    True
    """
    env["OPENBLAS_NUM_THREADS"] = env.get("OPENBLAS_NUM_THREADS") or "1"
    conf = env.get("JE_ARROW_MALLOC_CONF", "")
    if "background_thread" not in conf:
        env["JE_ARROW_MALLOC_CONF"] = ",".join(filter(None, [conf, "background_thread:false"]))


def threads() -> int:
    """This process's threads, as the kernel counts them."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:  # no procfs: Python's own threads are all this can see
        import threading

        return threading.active_count()


def warm_up(modules: Sequence[str]) -> bool:
    """Import ``modules`` (one this installation lacks is left to the child, which fails there as it would cold) and
    tell whether forking is still safe: one thread. If so, the heap is frozen, so that children share its pages
    instead of copying them when their collector walks them."""
    for module in modules:
        try:
            __import__(module)
        except Exception:  # noqa: BLE001
            pass
    if threads() > 1:
        return False
    gc.collect()
    gc.freeze()
    return True
