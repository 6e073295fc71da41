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
        spark.dataSource.register(connector.data_source)


__all__ = ["Connector", "MissingExtraError", "Sink", "Source", "available", "get_connector", "register_all", "spark_format"]
