"""Connectors by their Flink names; each is a Spark Python Data Source registered with the session."""

from __future__ import annotations

import importlib
from typing import Type

from pyspark.sql import SparkSession

from kindling.connectors.base import Connector, Sink, Source, spark_format
from kindling.options import OptionError, nearest

# Flink connector name -> module that defines ``CONNECTOR``; imported lazily.
_MODULES = {
    "datagen": "kindling.connectors.datagen",
    "kafka": "kindling.connectors.kafka",
    "upsert-kafka": "kindling.connectors.kafka.upsert",
    "print": "kindling.connectors.print",
    "blackhole": "kindling.connectors.blackhole",
    "collection": "kindling.connectors.collection",
    "filesystem": "kindling.connectors.filesystem",
    "nexmark": "kindling.connectors.nexmark",
    # module:attribute when one module defines several connectors
    "elasticsearch-6": "kindling.connectors.elasticsearch:ELASTICSEARCH_6",
    "elasticsearch-7": "kindling.connectors.elasticsearch:ELASTICSEARCH_7",
    "elasticsearch-8": "kindling.connectors.elasticsearch:ELASTICSEARCH_8",
    "opensearch": "kindling.connectors.elasticsearch:OPENSEARCH",
    "jdbc": "kindling.connectors.jdbc",
    "kinesis": "kindling.connectors.kinesis",
    "kinesis-legacy": "kindling.connectors.kinesis.legacy",
}


# Connectors whose clients come with an extra of kindling's package (``pip install 'kindling[jdbc]'``).
_EXTRAS = {
    "kindling.connectors.jdbc": "jdbc",
    "kindling.connectors.elasticsearch": "elasticsearch",
    "kindling.connectors.kinesis": "kinesis",
}


class MissingExtraError(OptionError):
    """A connector whose client library is not installed."""


def available() -> list[str]:
    """Names of every connector kindling has."""
    return sorted(_MODULES)


def get_connector(name: str) -> Type[Connector]:
    """The connector registered under a Flink name; an unknown name is an error naming the nearest one."""
    module = _MODULES.get(name) or _MODULES.get(str(name).lower())
    if module is None:
        hint = nearest(str(name).lower(), _MODULES)
        message = f"unknown connector '{name}'"
        if hint:
            message += f"; did you mean '{hint}'?"
        raise OptionError(message + " Available connectors: " + ", ".join(available()))
    module, _, attribute = module.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute or "CONNECTOR")
    except ModuleNotFoundError as exc:
        extra = next((e for prefix, e in _EXTRAS.items() if module.startswith(prefix)), None)
        if extra is None or (exc.name or "").startswith("kindling"):
            raise
        raise MissingExtraError(f"connector '{name}' needs the Python package '{exc.name}', which is not installed: "
                                f"pip install 'kindling[{extra}]'") from None


def register_all(spark: SparkSession) -> None:
    """Register every connector's Data Source with a session."""
    for name in available():
        try:
            connector = get_connector(name)
        except MissingExtraError:
            continue  # named in a job, it fails there saying which extra to install
        _register(spark, connector.data_source)


def _register(spark: SparkSession, data_source: type) -> None:
    """``spark.dataSource.register``, with the data source's environment in a thread-safe map.

    Spark gives every Python function it derives from a registered data source (the reader of each
    micro-batch, the writer, the streaming source's driver-side runner) the registration's own
    environment map, and the driver-side runners add entries to it as they start. Two streaming
    queries over one source (two sinks of one stream) start those runners in two threads while the
    other query's tasks are being serialized: a plain HashMap is then written inconsistently and
    every later task fails to deserialize (``java.io.OptionalDataException`` in ``HashMap.readObject``)
    until the job runs out of restarts. A ConcurrentHashMap is safe to change while it is read.
    """
    from pyspark.core.rdd import _prepare_for_python_RDD

    context = spark.sparkContext
    jvm = context._jvm
    assert jvm is not None
    pickled, broadcast_vars, environment, includes = _prepare_for_python_RDD(context, data_source)
    shared_environment = jvm.java.util.concurrent.ConcurrentHashMap()
    for key, value in environment.items():
        shared_environment.put(key, value)
    function = jvm.org.apache.spark.api.python.SimplePythonFunction(
        bytearray(pickled), shared_environment, includes, context.pythonExec, context.pythonVer, broadcast_vars,
        context._javaAccumulator)
    registered = jvm.org.apache.spark.sql.execution.datasources.v2.python.UserDefinedPythonDataSource(function)
    spark._jsparkSession.dataSource().registerPython(data_source.name(), registered)


__all__ = ["Connector", "MissingExtraError", "Sink", "Source", "available", "get_connector", "register_all", "spark_format"]
