"""PySpark's worker daemon, with the modules its workers import loaded once before it forks them.

Spark starts one ``pyspark.daemon`` per Python worker module it runs (``pyspark.worker`` for UDFs and Python data
sources' reads and writes, ``pyspark.sql.worker.plan_data_source_read`` for planning a source's read, ...) and forks
a worker from it for each connection. PySpark's daemon imports nothing of the worker's before the fork, because
a module that starts a thread on import (NumPy's BLAS pool, PyArrow's jemalloc purge thread) would make the fork
unsafe. So every forked worker imports its module, PySpark's SQL layer, PyArrow and pandas anew: ~0.5 s of CPU,
paid by each worker a query's micro-batches and plannings start.

This daemon (``spark.python.daemon.module``, set by kindling's local session) imports them once, with the
environment that keeps those libraries from starting threads, checks that the process still has one thread, and
then runs PySpark's own daemon, whose forks find the modules loaded. If an import started a thread anyway, it
starts again as PySpark's daemon without the warm-up (an ``exec`` before it has spoken to the JVM), so forking
stays safe. Either way each forked worker installs kindling's input step for the keyed operator
(:mod:`kindling.runtime.keyed_arrow_input`) before it runs.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from kindling.runtime.fork_safety import WORKER_MODULES, one_thread_environment, warm_up

MODULE = "kindling.runtime.warm_daemon"
# The daemon started again without its warm-up, when forking the warmed-up one would not be safe.
_COLD = "--cold"


def main() -> None:
    if sys.argv[1:2] == [_COLD]:
        del sys.argv[1]
        serve()
        return
    worker_module = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1].startswith("pyspark") else "pyspark.worker"
    one_thread_environment(os.environ)
    if not warm_up((*WORKER_MODULES, "pyspark.worker", worker_module)):
        os.execv(sys.executable, [sys.executable, "-m", MODULE, _COLD, *sys.argv[1:]])
    serve()


def serve() -> None:
    """PySpark's daemon, whose forked workers first install kindling's keyed operator's input step
    (:mod:`kindling.runtime.keyed_arrow_input`): with or without the warm-up, every worker of the session has it,
    as the driver planned the operator's input for."""
    import pyspark.daemon

    run = pyspark.daemon.worker

    def worker(sock: Any, authenticated: bool) -> int:
        from kindling.runtime import keyed_arrow_input

        keyed_arrow_input.install()
        return run(sock, authenticated)

    pyspark.daemon.worker = worker
    pyspark.daemon.manager()


if __name__ == "__main__":
    main()
