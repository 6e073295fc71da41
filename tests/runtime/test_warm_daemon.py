"""The warm worker daemon: PySpark's daemon with its workers' modules loaded, or PySpark's own when forking would
not be safe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kindling.runtime import warm_daemon


def _daemon(env: dict[str, str]) -> tuple[subprocess.Popen, str, str]:
    """A daemon started as Spark starts it; its command line and memory map once it has announced its port."""
    process = subprocess.Popen([sys.executable, "-m", warm_daemon.MODULE, "pyspark.worker"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, env=env)
    port = process.stdout.read(4)
    assert len(port) == 4, "the daemon did not announce its port"
    proc = Path(f"/proc/{process.pid}")
    return process, (proc / "cmdline").read_bytes().decode().replace("\0", " "), (proc / "maps").read_text()


def _stop(process: subprocess.Popen) -> None:
    process.stdin.close()  # as the JVM going away: the daemon shuts down (PySpark's daemon then exits with 1)
    process.wait(timeout=30)


def test_the_daemon_forks_from_an_interpreter_with_pyarrow_loaded():
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "JE_ARROW_MALLOC_CONF")}
    process, cmdline, maps = _daemon(env)
    try:
        assert warm_daemon.MODULE in cmdline
        assert "libarrow" in maps
        assert len(os.listdir(f"/proc/{process.pid}/task")) == 1
    finally:
        _stop(process)


def test_a_thread_started_by_an_import_leaves_pysparks_own_daemon():
    # Four BLAS threads: NumPy starts three when pandas imports it, and forking that process would not be safe.
    process, cmdline, maps = _daemon({**os.environ, "OPENBLAS_NUM_THREADS": "4"})
    try:
        # started again without the warm-up (its workers still install the keyed operator's input step)
        assert f"-m {warm_daemon.MODULE} --cold pyspark.worker" in cmdline
        assert "libarrow" not in maps
    finally:
        _stop(process)


@pytest.mark.integration
def test_a_sessions_python_workers_are_forked_warm(spark):
    from pyspark.sql.functions import udf

    @udf(returnType="string", useArrow=False)
    def parent_and_modules(_):
        import os
        import sys

        parent = open(f"/proc/{os.getppid()}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        return f"{'warm_daemon' in parent} {'pyarrow' in sys.modules}"

    assert {r[0] for r in spark.range(2).select(parent_and_modules("id")).collect()} == {"True True"}
