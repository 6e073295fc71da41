"""The interpreter Spark starts for Python workers: this one, importing PySpark from its compiled install.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` (and py4j's source zip) first on every Python
worker's path. A zip of sources holds no bytecode, so each worker process — the daemon, a Python
data source's planner and streaming runner, the ``transformWithState`` driver worker — compiles
the PySpark modules it imports afresh: about 0.6 s of CPU per process on a 2-core machine, paid
several times per query. When Spark's home is this interpreter's own PySpark wheel, the zips hold
exactly the modules installed beside them with cached bytecode, so kindling starts workers
through a small launcher that drops the two zips from ``PYTHONPATH`` and runs this interpreter.

The launcher also sends the ``transformWithState`` driver worker's progress prints (which Spark copies
to the driver's console) to /dev/null, and runs the two per-query driver processes (a streaming source's
runner, the ``transformWithState`` driver worker) as forks of the session's warm interpreter when it
listens (:mod:`kindling.runtime.worker_forks`). Only for masters on this machine (the launcher is a file
here); a remote cluster's executors run the configured interpreter as before.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import List, Optional

from kindling.runtime.worker_forks import CLIENT, FORKED_MODULES, SOCKET_VARIABLE

_TWS_DRIVER_WORKER = "pyspark.sql.streaming.transform_with_state_driver_worker"


def source_zips() -> List[Path]:
    """The source zips Spark prepends to a worker's path when its home is this interpreter's PySpark."""
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    configured = os.environ.get("SPARK_HOME")
    if configured and Path(configured).resolve() != home:
        return []  # another Spark distribution: its zips may not match the installed modules
    lib = home / "python" / "lib"
    return sorted(lib.glob("pyspark.zip")) + sorted(lib.glob("py4j-*-src.zip"))


def launcher(python: str = sys.executable, directory: Optional[Path] = None) -> Optional[str]:
    """A launcher for ``python`` that imports PySpark from its install, or None when there is nothing to drop.

    >>> launcher() is None or Path(launcher()).is_file()
    True
    """
    zips = source_zips()
    if not zips:
        return None
    patterns = " | ".join(shlex.quote(str(z)) for z in zips)
    forked = " | ".join(shlex.quote(f"-m {module}") for module in FORKED_MODULES)
    client = f"{shlex.quote(python)} -I -S -c {shlex.quote(CLIENT)}"
    script = (
        "#!/bin/sh\n"
        "# Written by kindling (kindling/runtime/python_workers.py): runs Spark's Python workers with\n"
        "# PySpark imported from its install (compiled) instead of Spark's source zip.\n"
        "set -f\n"
        "kept=\n"
        "IFS=:\n"
        'for entry in $PYTHONPATH; do\n'
        f"  case \"$entry\" in\n    {patterns}) ;;\n"
        '    *) kept="${kept:+$kept:}$entry" ;;\n'
        "  esac\n"
        "done\n"
        "unset IFS\n"
        'PYTHONPATH=$kept\nexport PYTHONPATH\n'
        # PySpark's transformWithState driver worker prints five progress lines to its stdout, which Spark copies
        # to the driver's console on every keyed query's first micro-batch; it talks to the JVM over a socket.
        # The per-query workers are forked from this session's warm interpreter when it listens (worker_forks).
        'case "$1 $2" in\n'
        f'  {forked})\n'
        f'    if [ -S "${{{SOCKET_VARIABLE}:-}}" ]; then\n'
        f'      case "$2" in {_TWS_DRIVER_WORKER}) exec {client} "$@" >/dev/null ;; esac\n'
        f'      exec {client} "$@"\n'
        '    fi ;;\n'
        'esac\n'
        'case "$*" in\n'
        f'  *{_TWS_DRIVER_WORKER}*) exec {shlex.quote(python)} "$@" >/dev/null ;;\n'
        'esac\n'
        f'exec {shlex.quote(python)} "$@"\n'
    )
    digest = hashlib.sha256(script.encode()).hexdigest()[:16]
    folder = directory or Path(tempfile.gettempdir()) / f"kindling-{os.getuid()}"
    target = folder / f"python-{digest}"
    if target.is_file() and os.access(target, os.X_OK):
        return str(target)
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".python-{digest}.{os.getpid()}"
    partial.write_text(script)
    partial.chmod(0o755)
    os.replace(partial, target)  # atomic: concurrent sessions see a whole file or none
    return str(target)
