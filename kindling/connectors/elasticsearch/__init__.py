"""The Elasticsearch / OpenSearch sink and lookup source (``'connector' = 'elasticsearch-6' | 'elasticsearch-7' |
'elasticsearch-8' | 'opensearch'``): one implementation, the differences between the names as data (:class:`options.Flavor`).

* ``options``: Flink's option keys, defaults and messages (the union of the 3.x and 4.x sets);
* ``index``: the dynamic index grammar;
* ``actions``: Arrow batches -> bulk actions (upsert by primary key, deletes, appends);
* ``bulk``: the bulk processor (size/interval triggers, backoff on rejected items, failure handler);
* ``client``: the elasticsearch 8.x / opensearch-py client and the start-up connection check;
* ``sink``: the Spark Arrow stream writer;
* ``lookup``: the documents of a batch of keys, for lookup joins;
* ``contents``: the index read back as it stands (reconciliation, the dashboard).
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping, Optional, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from kindling.connectors.base import Connector, SinkContents, spark_format
from kindling.connectors.elasticsearch.options import FLAVORS, option_set, sink_config
from kindling.options import OptionError, ParsedOptions


class ElasticsearchDataSource(DataSource):
    """``writeStream.format("kindling_elasticsearch_7")`` (and the other names) with Flink's options."""

    flavor: ClassVar[str] = "elasticsearch-7"

    @classmethod
    def name(cls) -> str:
        return spark_format(cls.flavor)

    def schema(self) -> StructType:
        raise OptionError(f"'{self.flavor}' is a sink, or the dimension of a lookup join (JOIN ... FOR SYSTEM_TIME AS OF); "
                          "it cannot be scanned as a source")

    def streamWriter(self, schema: StructType, overwrite: bool):
        from kindling.connectors.elasticsearch.sink import ElasticsearchStreamWriter

        return ElasticsearchStreamWriter(self.flavor, dict(self.options), schema)


class Elasticsearch6DataSource(ElasticsearchDataSource):
    flavor = "elasticsearch-6"


class Elasticsearch7DataSource(ElasticsearchDataSource):
    flavor = "elasticsearch-7"


class Elasticsearch8DataSource(ElasticsearchDataSource):
    flavor = "elasticsearch-8"


class OpenSearchDataSource(ElasticsearchDataSource):
    flavor = "opensearch"


class ElasticsearchConnector(Connector):
    """The sink connector of one flavor; ``prepare_sink`` runs Flink's planning checks and a first request."""

    flavor: ClassVar[str] = "elasticsearch-7"

    @classmethod
    def validate_sink(cls, options: Mapping[str, Any]) -> ParsedOptions:
        sink_config(FLAVORS[cls.flavor], options)
        return option_set(FLAVORS[cls.flavor]).validate(options)

    supports_lookup = True

    @classmethod
    def validate_lookup(cls, options: Mapping[str, Any]) -> ParsedOptions:
        return cls.validate_sink(options)

    @classmethod
    def lookup_source(cls, options: Mapping[str, str], key_columns: Sequence[str], columns: Sequence[str],
                      schema: pa.Schema) -> Any:
        from kindling.connectors.elasticsearch.lookup import ElasticsearchLookup

        parsed = option_set(FLAVORS[cls.flavor]).validate(options)
        return ElasticsearchLookup(sink_config(FLAVORS[cls.flavor], options), parsed.values, key_columns, columns, schema)

    @classmethod
    def prepare_sink(cls, options: Mapping[str, Any], schema: StructType, updating: bool) -> None:
        from kindling.connectors.elasticsearch.actions import check_input
        from kindling.connectors.elasticsearch.client import check_connection

        config = sink_config(FLAVORS[cls.flavor], options)
        check_input(config, schema, updating)
        check_connection(config)

    @classmethod
    def sink_contents(cls, options: Mapping[str, str], columns: Sequence[str], limit: int) -> Optional[SinkContents]:
        from kindling.connectors.elasticsearch.contents import index_documents

        config = sink_config(FLAVORS[cls.flavor], options)
        rows, total = index_documents(config, columns, limit)
        hosts = ",".join(h.url for h in config.hosts)
        return SinkContents(f"{cls.name} {hosts} index '{config.index}'", list(columns), list(config.key_fields),
                            [list(r) for r in rows], total)


def _connector(flavor: str, source: type) -> type:
    return type(f"{source.__name__[:-len('DataSource')]}Connector", (ElasticsearchConnector,), {
        "name": flavor, "flavor": flavor, "data_source": source, "sink_options": option_set(FLAVORS[flavor]),
        "__module__": __name__})


ELASTICSEARCH_6 = _connector("elasticsearch-6", Elasticsearch6DataSource)
ELASTICSEARCH_7 = _connector("elasticsearch-7", Elasticsearch7DataSource)
ELASTICSEARCH_8 = _connector("elasticsearch-8", Elasticsearch8DataSource)
OPENSEARCH = _connector("opensearch", OpenSearchDataSource)
CONNECTOR = ELASTICSEARCH_7

__all__ = ["CONNECTOR", "ELASTICSEARCH_6", "ELASTICSEARCH_7", "ELASTICSEARCH_8", "OPENSEARCH", "ElasticsearchConnector"]
