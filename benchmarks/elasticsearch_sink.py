"""Elasticsearch sink throughput: kindling's sink vs the client's ``streaming_bulk`` helper, same server, same run.

N documents ``{"id": BIGINT, "payload": 32 hex chars, "amount": DOUBLE}`` are indexed into a local
Elasticsearch API (noida-db) two ways:

(a) Spark's ``rate-micro-batch`` source (JVM, N rows in one micro-batch, 2 partitions) ->
    ``writeStream.format("kindling_elasticsearch_7")`` in append mode (generated ids), the sink's defaults
    (1000 actions / 2 MB per bulk request); Trigger.AvailableNow. Timed: the micro-batch itself (reading,
    encoding, the bulk requests and their checks), and end to end with the query's start-up;
(b) ``elasticsearch.helpers.streaming_bulk`` over the same documents as Python dicts built beforehand
    (not timed), chunk_size 1000 and max_chunk_bytes 2 MB, one client.

(c) the sink's writer alone, without Spark: one task's ``write()`` over Arrow batches of the same rows
    (``--writer-only`` runs (c) and (b) only, for a machine too loaded to start Spark in reasonable time).

Each index is counted afterwards (it must hold exactly N documents). The last line is
``ratio=<kindling/plain>`` (documents per second, the micro-batch time for kindling).

    python benchmarks/elasticsearch_sink.py [--documents 500000]
"""

from __future__ import annotations

import argparse
import tempfile
import time

PAYLOAD_LENGTH = 32


def count(url: str, index: str) -> int:
    from elasticsearch import Elasticsearch

    client = Elasticsearch(url, request_timeout=300)
    client.indices.refresh(index=index)
    return int(client.count(index=index)["count"])


def run_kindling(spark, url: str, index: str, n: int) -> tuple[float, float]:
    from pyspark.sql import functions as F

    from kindling.connectors.base import spark_format

    rows = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", n).option("numPartitions", 2).load()
            .select(F.col("value").alias("id"), F.lpad(F.hex(F.col("value") * 7919), PAYLOAD_LENGTH, "0").alias("payload"),
                    (F.col("value") / 4).alias("amount")))
    start = time.perf_counter()
    query = (rows.writeStream.format(spark_format("elasticsearch-7")).options(hosts=url, index=index)
             .option("checkpointLocation", tempfile.mkdtemp(prefix="kindling-bench-"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    elapsed = time.perf_counter() - start
    if query.exception() is not None:
        raise RuntimeError(f"the kindling query failed: {query.exception()}")
    batches = sum(p["durationMs"].get("triggerExecution", 0) for p in query.recentProgress if p["numInputRows"]) / 1000
    return elapsed, batches


def run_writer(url: str, index: str, n: int) -> float:
    """One task's ``write()`` (no Spark): Arrow batches of 10,000 rows -> bulk requests, flushed and checked."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    from kindling.connectors.elasticsearch.sink import ElasticsearchStreamWriter

    schema = StructType([StructField("id", LongType()), StructField("payload", StringType()), StructField("amount", DoubleType())])
    batches = []
    for start in range(0, n, 10_000):
        ids = pa.array(range(start, min(n, start + 10_000)), pa.int64())
        payload = pa.array([format(i * 7919, "X").rjust(PAYLOAD_LENGTH, "0") for i in ids.to_pylist()], pa.string())
        batches.append(pa.RecordBatch.from_arrays([ids, payload, pc.divide(ids.cast(pa.float64()), 4.0)], names=schema.names))
    writer = ElasticsearchStreamWriter("elasticsearch-7", {"hosts": url, "index": index}, schema)
    begin = time.perf_counter()
    writer.write(iter(batches))
    return time.perf_counter() - begin


def run_plain(url: str, index: str, n: int) -> float:
    from elasticsearch import Elasticsearch
    from elasticsearch.helpers import streaming_bulk

    actions = [{"_index": index, "_source": {"id": i, "payload": format(i * 7919, "X").rjust(PAYLOAD_LENGTH, "0"), "amount": i / 4}}
               for i in range(n)]
    client = Elasticsearch(url, request_timeout=300)
    start = time.perf_counter()
    for ok, item in streaming_bulk(client, actions, chunk_size=1000, max_chunk_bytes=2 * 1024 * 1024):
        if not ok:
            raise RuntimeError(f"streaming_bulk: {item}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=500_000)
    parser.add_argument("--writer-only", action="store_true", help="measure (c) and (b) only, without Spark")
    args = parser.parse_args()
    n = args.documents
    if args.writer_only:
        from kindling.local.elasticsearch import LocalElasticsearch

        with LocalElasticsearch() as server:
            elapsed = run_writer(server.url, "bench-writer", n)
            indexed = count(server.url, "bench-writer")
            print(f"kindling elasticsearch-7 writer alone (1 task, no Spark): {n / elapsed:,.0f} docs/s ({elapsed:.1f} s); "
                  f"indexed {indexed}", flush=True)
            plain = run_plain(server.url, "bench-plain", n)
            plain_indexed = count(server.url, "bench-plain")
            print(f"elasticsearch.helpers.streaming_bulk (1 client, chunk 1000): {n / plain:,.0f} docs/s ({plain:.1f} s); "
                  f"indexed {plain_indexed}", flush=True)
            if indexed != n or plain_indexed != n:
                raise SystemExit(f"indexed {indexed} (kindling) and {plain_indexed} (plain) documents, expected {n}")
        print(f"ratio={plain / elapsed:.2f}")
        return
    from kindling.config import Configuration
    from kindling.local.elasticsearch import LocalElasticsearch
    from kindling.runtime.session import get_or_create_session

    with LocalElasticsearch() as server:
        spark = get_or_create_session(Configuration({"parallelism.default": 2, "kindling.log.level": "ERROR"}))
        try:
            run_kindling(spark, server.url, "bench-warmup", 20_000)  # untimed: Python workers, JIT
            elapsed, batches = run_kindling(spark, server.url, "bench-kindling", n)
        finally:
            spark.stop()
        indexed = count(server.url, "bench-kindling")
        kindling_rate = n / batches if batches else n / elapsed
        print(f"kindling rate-micro-batch -> elasticsearch-7 sink (append, 2 tasks): {kindling_rate:,.0f} docs/s in the "
              f"micro-batch ({batches:.1f} s); {n / elapsed:,.0f} docs/s with query start-up ({elapsed:.1f} s); "
              f"indexed {indexed}", flush=True)
        if indexed != n:
            raise SystemExit(f"kindling indexed {indexed} documents, expected {n}")
        plain = run_plain(server.url, "bench-plain", n)
        plain_indexed = count(server.url, "bench-plain")
        print(f"elasticsearch.helpers.streaming_bulk (1 client, chunk 1000): {n / plain:,.0f} docs/s ({plain:.1f} s); "
              f"indexed {plain_indexed}", flush=True)
        if plain_indexed != n:
            raise SystemExit(f"streaming_bulk indexed {plain_indexed} documents, expected {n}")
    print(f"ratio={kindling_rate / (n / plain):.2f}")


if __name__ == "__main__":
    main()
