"""Session fixtures: one SparkSession and the local servers for the whole test run (of each pytest worker, in a
parallel run: ``make test`` runs two)."""

from __future__ import annotations

import gc
import os
import sys
import uuid
from pathlib import Path
from typing import Iterator

import pytest

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

# The JVMs of the programs tests start in processes of their own (kill tests, the CLI, the job manager, the wheel's
# examples) live seconds to a minute: compiled with C1 only they start and finish sooner (two kill tests: 98 s -> 85 s).
# This process's own JVM lives for the whole suite and keeps both compilers: with C1 only, its hundreds of queries ran
# ~20 % slower (the differential's setup took 495 s against 403 s). But each of those queries runs Spark's code
# generated for it over a few rows, which the JIT compiled as soon as it was warm and never ran again: with the
# compile thresholds ten times higher, only code that stays hot is compiled (25 streaming queries of the differential
# corpus: 131 CPU-s instead of 159; 40 batch queries: 70 instead of 86, and sooner). So the subprocesses inherit the
# one option and PySpark starts this process's JVM with the other. A SPARK_SUBMIT_OPTS of the user's stays.
SHORT_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"
SESSION_JVM_OPTIONS = "-XX:CompileThresholdScaling=10"


def _own_jvm_with_its_own_compilation() -> None:
    import pyspark.core.context as spark_context

    launch = spark_context.launch_gateway

    def launch_gateway(*args, **kwargs):
        options = os.environ.get("SPARK_SUBMIT_OPTS")
        os.environ["SPARK_SUBMIT_OPTS"] = SESSION_JVM_OPTIONS
        try:
            return launch(*args, **kwargs)
        finally:
            os.environ["SPARK_SUBMIT_OPTS"] = options

    spark_context.launch_gateway = launch_gateway


if "SPARK_SUBMIT_OPTS" not in os.environ:
    os.environ["SPARK_SUBMIT_OPTS"] = SHORT_LIVED_JVM_OPTIONS
    _own_jvm_with_its_own_compilation()


@pytest.fixture(scope="session", autouse=True)
def programs_in_background(request, tmp_path_factory) -> Iterator[None]:
    """Test modules that run example programs in a subprocess of their own (``start_in_background``) start it when the
    session starts, at the lowest CPU priority: it runs on the CPU the other tests leave idle (they mostly wait for
    micro-batches), instead of 3-4 minutes of its own at the end. A runner still going at the end is killed.

    Only in a run in one process: a worker of a parallel run (``make test``) does not know which modules it will be
    handed, and the other worker fills the CPU meanwhile, so a module runs its programs in the foreground."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    modules = {item.module for item in request.session.items if getattr(item, "module", None) is not None}
    for module in sorted(modules, key=lambda m: m.__name__):
        start = getattr(module, "start_in_background", None)
        if start is not None:
            start(tmp_path_factory)
    yield
    runner = sys.modules.get("example_runner")
    if runner is not None:
        runner.stop_programs()


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the run, with kindling's connectors registered.

    Its JVM runs every test's queries for the whole run: with Spark's default 1 GB heap, a clean run of 1,049 tests ran
    out of heap in its last minutes ("Java heap space", then every later test failed), so it gets 2 GB. Most of that
    heap was ended queries' sessions, since released (kindling.runtime.job's running jobs, worker_monitors); the 2 GB
    stay as margin for the parser cache and the queries a run keeps alive."""
    from kindling.config import Configuration
    from kindling.runtime.session import get_or_create_session

    session = get_or_create_session(
        Configuration({"parallelism.default": 2, "kindling.log.level": "ERROR", "spark.driver.memory": "2g"})
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka(tmp_path_factory) -> Iterator[object]:
    """A local Kafka-protocol broker on a free loopback port, stopped at the end of the run."""
    from kindling.local.kafka import LocalKafka

    broker = LocalKafka(data_dir=tmp_path_factory.mktemp("kafka"))
    broker.start()
    yield broker
    # Kafka clients still alive when the broker stops (unreferenced ones not yet collected, and ones a finished job or
    # test still holds) would reconnect to it and log each refusal until the process ends: in a parallel run that is
    # the last seconds of a worker, between the tests' dots and the summary. So they are dropped or closed first,
    # their unsent messages purged (a close would wait for them).
    gc.collect()
    _close_kafka_clients()
    broker.stop()


def _close_kafka_clients() -> None:
    from confluent_kafka import Consumer, Producer

    for client in [o for o in gc.get_objects() if isinstance(o, (Producer, Consumer))]:
        try:
            if isinstance(client, Producer):
                client.purge(in_queue=True, in_flight=True, blocking=False)
            client.close()
        except Exception:  # already closed, or closing failed: nothing to keep alive for
            pass


@pytest.fixture(scope="session")
def s3(tmp_path_factory) -> Iterator[object]:
    """A local S3 server (SeaweedFS) on a free loopback port with credentials, stopped at the end of the run."""
    from kindling.local.s3 import LocalS3

    server = LocalS3(data_dir=tmp_path_factory.mktemp("s3"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def kinesis(tmp_path_factory) -> Iterator[object]:
    """A local Kinesis API server (kinesis-local) on a free loopback port, stopped at the end of the run."""
    from kindling.local.kinesis import LocalKinesis

    server = LocalKinesis(data_dir=tmp_path_factory.mktemp("kinesis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def schema_registry(tmp_path_factory) -> Iterator[object]:
    """A local Confluent-compatible schema registry on a free loopback port (no auth), stopped at the end of the run."""
    from kindling.local.schema_registry import LocalSchemaRegistry

    server = LocalSchemaRegistry(data_dir=tmp_path_factory.mktemp("schema-registry"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def elasticsearch(tmp_path_factory) -> Iterator[object]:
    """A local Elasticsearch 8 REST API (noida-db) on a free loopback port, stopped at the end of the run."""
    from kindling.local.elasticsearch import LocalElasticsearch

    server = LocalElasticsearch(data_dir=tmp_path_factory.mktemp("elasticsearch"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def opensearch(tmp_path_factory) -> Iterator[object]:
    """A local OpenSearch REST API (osmem-server) on a free loopback port, stopped at the end of the run."""
    from kindling.local.opensearch import LocalOpenSearch

    server = LocalOpenSearch(data_dir=tmp_path_factory.mktemp("opensearch"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[object]:
    """A local PostgreSQL server (login and database 'kindling', generated password), stopped at the end of the run.

    Its data directory is a temporary one under /tmp: as root the server runs as the postgres user,
    which cannot enter pytest's private temporary directories."""
    from kindling.local.postgres import LocalPostgres

    server = LocalPostgres()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def mysql() -> Iterator[object]:
    """A local MariaDB server (MySQL protocol; login and database 'kindling'), stopped at the end of the run."""
    from kindling.local.mysql import LocalMySQL

    server = LocalMySQL()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory) -> Iterator[object]:
    """A local Spark standalone cluster: a master and 2 workers of 1 core and 1g each, on 127.0.0.1.
    Tests that kill a worker start it again (``start_worker``) before they end."""
    from kindling.local.spark import LocalSparkCluster

    cluster = LocalSparkCluster(workers=2, cores=1, memory="1g", work_dir=tmp_path_factory.mktemp("spark-cluster"))
    cluster.start(timeout=300)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def jobmanager() -> Iterator[dict]:
    """A job manager on a free loopback port, started as a user starts it (``kindling cluster start``), with its records
    in a temp dir; stopped (with its drivers) at the end."""
    import shutil
    import subprocess
    import sys
    import tempfile

    from kindling.local.ports import free_port

    root = Path(__file__).resolve().parents[1]
    # Not under pytest's temp root: pytest runs started meanwhile may prune it while drivers still write there.
    home = Path(tempfile.mkdtemp(prefix="kindling-jobmanager-"))
    port = free_port()
    started = subprocess.run([sys.executable, "-m", "kindling.cli", "cluster", "start", "--port", str(port), "--home", str(home)],
                             capture_output=True, text=True, timeout=120, cwd=root)
    assert started.returncode == 0, f"kindling cluster start failed:\n{started.stdout}\n{started.stderr}"
    try:
        yield {"url": f"http://127.0.0.1:{port}", "address": f"127.0.0.1:{port}", "home": home, "port": port}
    finally:
        subprocess.run([sys.executable, "-m", "kindling.cli", "cluster", "stop", "--home", str(home)], capture_output=True, timeout=120, cwd=root)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def topic(kafka) -> Iterator[str]:
    """A fresh 4-partition topic name for one test, deleted afterwards."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    kafka.create_topic(name, partitions=4)
    yield name
    kafka.delete_topic(name)


@pytest.fixture
def checkpoint_dir(tmp_path) -> str:
    return str(tmp_path / "checkpoints")


# Modules whose tests take minutes in all: collected first, so that in a parallel run (whole modules handed to the
# worker that is free) the run does not end with one worker on them and the other idle. The differential corpus takes
# 7-11 minutes, its neighbours in collection order seconds to two.
FIRST_MODULES = ("tests/sql/differential/test_differential.py",)


def pytest_collection_modifyitems(session, config, items) -> None:
    root = Path(__file__).resolve().parents[1]
    first = {root / module for module in FIRST_MODULES}
    items.sort(key=lambda item: item.path not in first)  # stable: every other test keeps its order


def pytest_configure(config) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    ARTIFACTS.mkdir(exist_ok=True)


@pytest.fixture
def env(spark, tmp_path):
    """A StreamEnvironment on the session's SparkSession with short checkpoints in a temp dir."""
    from kindling.env import StreamEnvironment

    return StreamEnvironment(
        {"execution.checkpointing.interval": "100 ms", "state.checkpoints.dir": str(tmp_path / "checkpoints")},
        spark=spark,
    )
