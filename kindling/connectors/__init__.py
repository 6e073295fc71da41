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
    return getattr(importlib.import_module(module), attribute or "CONNECTOR")


def register_all(spark: SparkSession) -> None:
    """Register every connector's Data Source with a session."""
    for name in available():
        spark.dataSource.register(get_connector(name).data_source)


__all__ = ["Connector", "Sink", "Source", "available", "get_connector", "register_all", "spark_format"]
