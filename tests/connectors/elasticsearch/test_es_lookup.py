"""The Elasticsearch / OpenSearch lookup source against the real local servers: batched searches, the PARTIAL cache,
and a SQL lookup join."""

from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from es_helpers import client_for, connector_for, fresh_index  # noqa: E402

pytestmark = pytest.mark.integration

CUSTOMERS = [{"id": 10, "name": "ann", "country": "US"}, {"id": 20, "name": "bob", "country": "DE"},
             {"id": 30, "name": "cid", "country": "US"}, {"id": 30, "name": "cy", "country": "CA"}]


@pytest.fixture(params=["elasticsearch", "opensearch"])
def server(request):
    return request.getfixturevalue(request.param)


@pytest.fixture
def customers(server):
    index = fresh_index("customers")
    client = client_for(server)
    client.indices.create(index=index, body={"mappings": {"properties": {
        "id": {"type": "long"}, "name": {"type": "keyword"}, "country": {"type": "keyword"}}}})
    for number, document in enumerate(CUSTOMERS):
        client.index(index=index, id=str(number), body=document)
    client.indices.refresh(index=index)
    return index


def _table(server, index, **options):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from kindling.connectors.lookup import LookupSpec, LookupTable

    schema = StructType([StructField("id", LongType()), StructField("name", StringType()), StructField("country", StringType())])
    raw = {"hosts": server.url, "index": index, **options}
    spec = LookupSpec("es-test", connector_for(server), index, raw, ("id",), ("id", "name", "country"), json.dumps(schema.jsonValue()))
    return LookupTable(spec)


def test_a_batch_of_keys_is_one_search_and_the_partial_cache_serves_repeats(server, customers):
    import pyarrow as pa

    table = _table(server, customers)
    rows = table.rows([pa.array([10, 20, None, 99, 30, 10], pa.int32())]).to_pylist()
    assert table.source.searches == 1
    assert [sorted(m["name"] for m in matches) for matches in rows] == [["ann"], ["bob"], [], [], ["cid", "cy"], ["ann"]]
    cached = _table(server, customers, **{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "10"})
    cached.rows([pa.array([10, 30], pa.int64())])
    cached.rows([pa.array([30, 20], pa.int64())])
    assert cached.source.searches == 2 and cached.cache.metrics.hits == 1 and cached.cache.metrics.misses == 3


def test_sql_lookup_join_against_an_index(env, server, customers):
    from kindling.sql import SqlError

    env.execute_sql("CREATE TABLE orders (order_id INT, customer BIGINT, proc_time AS PROCTIME()) "
                    "WITH ('connector' = 'collection', 'data' = '[[1, 10], [2, 20], [3, 99], [4, 30]]')")
    env.execute_sql(f"CREATE TABLE customers (id BIGINT, name STRING, country STRING) WITH ('connector' = '{connector_for(server)}', "
                    f"'hosts' = '{server.url}', 'index' = '{customers}', 'lookup.cache' = 'PARTIAL', "
                    "'lookup.partial-cache.max-rows' = '100')")
    rows = env.execute_sql("SELECT o.order_id, c.name FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c "
                           "ON o.customer = c.id AND c.country <> 'CA'").final_rows(timeout=600)
    assert sorted((r[0], r[1]) for r in rows) == [(1, "ann"), (2, "bob"), (3, None), (4, "cid")]
    env.execute_sql(f"CREATE TABLE full_cached (id BIGINT, name STRING) WITH ('connector' = '{connector_for(server)}', "
                    f"'hosts' = '{server.url}', 'index' = '{customers}', 'lookup.cache' = 'FULL')")
    with pytest.raises(SqlError, match="lookup.cache"):
        env.execute_sql("SELECT * FROM orders AS o JOIN full_cached FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.id")
