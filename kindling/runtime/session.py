"""The SparkSession kindling runs on: local[N] by default, any master by configuration."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
import zipfile
from pathlib import Path
from typing import Optional

from pyspark.sql import SparkSession

from kindling import config as cfg
from kindling.config import Configuration
from kindling.options import OptionError
from kindling.runtime import interrupts, jvm_classes, jvm_native, warm_daemon, worker_forks
from kindling.runtime.program_output import append_program_output
from kindling.runtime.python_workers import launcher

_JAVA_HINT = (
    "kindling runs on Apache Spark, which needs Java 17. Install it with "
    "'apt-get install -y openjdk-17-jre-headless' (Debian/Ubuntu) or set JAVA_HOME to a Java 17 installation."
)


def check_java() -> None:
    """Fail early with an actionable message when no Java runtime is reachable."""
    if os.environ.get("JAVA_HOME") and Path(os.environ["JAVA_HOME"], "bin", "java").exists():
        return
    if shutil.which("java") is None:
        raise RuntimeError(_JAVA_HINT)


def _master(conf: Configuration) -> str:
    master = conf.get(cfg.SPARK_MASTER)
    if master:
        return master
    parallelism = conf.get(cfg.PARALLELISM)
    return f"local[{parallelism}]" if parallelism else "local[*]"


def _shuffle_partitions(conf: Configuration) -> int:
    parallelism = conf.get(cfg.PARALLELISM)
    if parallelism:
        return parallelism
    return max(2, os.cpu_count() or 2)


def get_or_create_session(conf: Optional[Configuration] = None) -> SparkSession:
    """Create (or reuse) the session, register kindling's connectors and apply the configuration."""
    from kindling.connectors import register_all

    conf = conf or Configuration()
    check_java()
    # Python workers must run the interpreter that has kindling and its dependencies installed.
    os.environ["PYSPARK_PYTHON"] = _worker_python(conf)
    os.environ["PYSPARK_DRIVER_PYTHON"] = _driver_python(os.environ["PYSPARK_PYTHON"])
    # Scopes driver-side state that Python workers share by file (watermark alignment groups) to this
    # application; the JVM and its workers inherit it from here.
    os.environ.setdefault("KINDLING_SESSION_ID", uuid.uuid4().hex)
    master = conf.get(cfg.SPARK_MASTER)
    if master and master.lower().startswith("sc://"):
        raise OptionError(
            f"configuration option 'kindling.spark.master' = {master!r}: Spark Connect is not supported. Python data "
            "sources, transformWithState and foreachBatch work over Spark Connect, but kindling's SQL planner, "
            "savepoint fingerprints and connector registration read Spark's analyzed plans through the JVM "
            "(DataFrame._jdf, SparkContext), which a Connect client does not have. Use spark://, yarn, k8s:// or local[N]."
        )
    if not master or _loopback_master(master):
        # Local mode or a cluster on this machine: the driver talks to it over loopback only.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    active = SparkSession.getActiveSession()
    builder = SparkSession.builder.appName(conf.get(cfg.PIPELINE_NAME) or "kindling")
    if active is None:
        jvm_native.use_extracted_library()  # RocksDB's library loaded in place, not copied to /tmp by each JVM
        local_workers = os.environ["PYSPARK_PYTHON"] == launcher(sys.executable)
        if local_workers:
            # Through the launcher, as the workers; before the JVM starts, whose workers inherit the socket's path
            worker_forks.start(os.environ["PYSPARK_PYTHON"])
        if master or "PYSPARK_GATEWAY_PORT" not in os.environ:
            # Under spark-submit (which starts the JVM and names it in PYSPARK_GATEWAY_PORT) its --master
            # stands unless kindling.spark.master says otherwise.
            builder = builder.master(_master(conf))
        defaults = {
            "spark.sql.shuffle.partitions": str(_shuffle_partitions(conf)),
            "spark.ui.enabled": "true" if conf.get(cfg.WEB_UI) else "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            # Arrow batches to Python workers end at 256 MiB as well as at 10,000 rows: a keyed operator's packed
            # key groups (kindling.datastream.key_group_batches) are cells of up to 16 MiB, and 10,000 of them would
            # pass the 2 GiB one Arrow binary column holds.
            "spark.sql.execution.arrow.maxBytesPerBatch": str(256 << 20),
            "spark.sql.streaming.stateStore.providerClass": _state_store_provider(conf),
            "spark.python.worker.reuse": "true",
            "spark.sql.streaming.metricsEnabled": "true",
            # PySpark's DataFrame debugging records the Python call site of every Column and DataFrame call in the JVM
            # (six or more Py4J round trips each): a SQL INSERT's planning made ~900 calls, most of them that. The
            # sites it records are kindling's own code, not the user's, so it buys a user nothing.
            "spark.python.sql.dataFrameDebugging.enabled": "false",
            # An idle query reports progress (with its current watermark) every second rather than every 10 s:
            # a bounded job whose last batch needs no follow-up batch is seen to be done within a second.
            "spark.sql.streaming.noDataProgressEventInterval": "1000ms",
            # Plans (EXPLAIN, the UI) show data source options: hide credentials, not only URLs.
            "spark.sql.redaction.options.regex": "(?i)url|user-info|user\\.info|token|password|secret|access-key|secret-key|jaas",
        }
        if local_workers:  # workers forked with their modules loaded (kindling must be importable where they run)
            defaults["spark.python.daemon.module"] = warm_daemon.MODULE
        if master and not master.startswith("local"):
            # Executors do not inherit the driver's environment: pass on what kindling's Python workers read.
            for name in ("KINDLING_SESSION_ID", "KINDLING_JOB_DIR"):
                if os.environ.get(name):
                    defaults[f"spark.executorEnv.{name}"] = os.environ[name]
        settings = {**defaults, **conf.spark_conf()}
        settings["spark.driver.extraJavaOptions"] = _driver_java_options(settings.get("spark.driver.extraJavaOptions", ""))
        for key, value in settings.items():
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    append_program_output()  # the print sink's lines, appended by Python workers, are not overwritten
    interrupts.install()  # PySpark's own handler calls into the JVM from inside the signal handler
    spark.sparkContext.setLogLevel(conf.get(cfg.LOG_LEVEL))
    if active is not None:
        for key, value in conf.spark_conf().items():
            if key.startswith("spark.sql."):
                spark.conf.set(key, value)
    # Batch reads hand their filters to the sources that can apply them first (the jdbc scan's WHERE).
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    if not spark.sparkContext.master.startswith("local"):
        _ship_package(spark)
    register_all(spark)
    return spark


def _driver_java_options(configured: str) -> str:
    """kindling's log configuration and the class-sharing archive (when trained), then the user's own options."""
    own = [f"-Dlog4j2.configurationFile={Path(__file__).with_name('log4j2.properties')}",
           jvm_classes.driver_java_options(configured)]
    return " ".join(option for option in [*own, configured] if option)


def _driver_python(worker_python: str) -> str:
    """The interpreter the driver's JVM runs Python with on its own: Spark's lookup of installed Python data sources.

    That lookup runs PYSPARK_DRIVER_PYTHON with PySpark's source zips first on its path: through the workers'
    launcher it imports the compiled PySpark instead (0.3 s of CPU rather than 1.3 s, once per driver). A
    PYSPARK_DRIVER_PYTHON of the user's stands; this interpreter or its launcher (inherited from a kindling parent
    process) is replaced.
    """
    configured, launched = os.environ.get("PYSPARK_DRIVER_PYTHON"), launcher(sys.executable)
    if configured and configured not in (sys.executable, launched):
        return configured
    return worker_python if worker_python == launched else sys.executable


def _worker_python(conf: Configuration) -> str:
    """This interpreter for Python workers, through the faster-starting launcher where the workers run on this machine.

    A PYSPARK_PYTHON naming another interpreter stands.
    """
    configured = os.environ.get("PYSPARK_PYTHON")
    if configured and configured != sys.executable:
        return configured
    master = conf.get(cfg.SPARK_MASTER)
    if master is None and "PYSPARK_GATEWAY_PORT" in os.environ:
        return sys.executable  # under spark-submit, whose master may be anywhere
    if master and not master.startswith("local") and not _loopback_master(master):
        return sys.executable
    return launcher(sys.executable) or sys.executable


def _loopback_master(master: str) -> bool:
    """Whether ``master`` is a standalone master on this machine (``kindling local spark``)."""
    host = master.split("://", 1)[-1].split(",")[0].rsplit(":", 1)[0]
    return master.startswith("spark://") and host in ("127.0.0.1", "localhost")


def _state_store_provider(conf: Configuration) -> str:
    if conf.get(cfg.STATE_BACKEND) == "rocksdb":
        return "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    return "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"


def _ship_package(spark: SparkSession) -> None:
    """On a cluster, executors need the driver's kindling and the job's own modules: ship both as zips
    on the executors' Python path (ahead of any kindling installed there, so driver and executors run
    the same code). The job's modules are the ``.py`` files beside its main script."""
    package_dir = Path(__file__).resolve().parents[1]
    staging = Path(tempfile.mkdtemp(prefix="kindling-pkg-"))
    target = staging / "kindling.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in package_dir.rglob("*.py"):
            archive.write(path, path.relative_to(package_dir.parent))
    spark.sparkContext.addPyFile(str(target))
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    if main and Path(main).is_file() and Path(main).resolve().parent != package_dir.parent:
        modules = [p for p in Path(main).resolve().parent.glob("*.py")]
        if modules:
            job_zip = staging / "job-modules.zip"
            with zipfile.ZipFile(job_zip, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in modules:
                    archive.write(path, path.name)
            spark.sparkContext.addPyFile(str(job_zip))
