"""Elasticsearch sink throughput: kindling's sink vs the client's ``streaming_bulk`` helper, same server, same run.

N documents ``{"id": BIGINT, "payload": 32 hex chars, "amount": DOUBLE}`` are indexed into a local
Elasticsearch API (noida-db) two ways:

(a) Spark's ``rate-micro-batch`` source (JVM, N rows in one micro-batch, 2 partitions) ->
    ``writeStream.format("kindling_elasticsearch_7")`` in append mode (generated ids), the sink's defaults
    (1000 actions / 2 MB per bulk request); Trigger.AvailableNow. Timed: the micro-batch itself (reading,
    encoding, the bulk requests and their checks), and end to end with the query's start-up;
(b) ``elasticsearch.helpers.streaming_bulk`` over the same documents as Python dicts built beforehand
    (not timed), chunk_size 1000 and max_chunk_bytes 2 MB: once with one client, and once with as many
    clients as the sink has tasks (2), each in its own process over its half of the documents -- the sink's
    tasks are two Python processes, so this is the same parallelism. The ratio is taken against the faster of
    the two (a server that cannot use a second client makes one client the fair reference). Every measured run
    indexes into a fresh local server: the local server slows down as it holds more documents.

(c) the sink's writer alone, without Spark: one task's ``write()`` over Arrow batches of the same rows
    (``--writer-only`` runs (c) and (b) only, for a machine too loaded to start Spark in reasonable time).

Each index is counted afterwards (it must hold exactly N documents). The last line is
``ratio=<kindling/plain>`` (documents per second, the micro-batch time for kindling, the faster plain run).

    python benchmarks/elasticsearch_sink.py [--documents 500000]
"""

from __future__ import annotations

import argparse
import tempfile
import time

PAYLOAD_LENGTH = 32
TASKS = 2  # the kindling run's partitions: two sink tasks, two Python worker processes


def count(url: str, index: str) -> int:
    from elasticsearch import Elasticsearch

    client = Elasticsearch(url, request_timeout=300)
    client.indices.refresh(index=index)
    return int(client.count(index=index)["count"])


def run_kindling(spark, url: str, index: str, n: int) -> tuple[float, float]:
    from pyspark.sql import functions as F

    from kindling.connectors.base import spark_format

    rows = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", n).option("numPartitions", TASKS).load()
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


def _plain_client(url: str, index: str, ids: range, barrier) -> tuple[float, float]:
    """One client's ``streaming_bulk`` over ``ids`` (documents built before the barrier); its start and end on the
    system's monotonic clock (comparable across processes)."""
    from elasticsearch import Elasticsearch
    from elasticsearch.helpers import streaming_bulk

    actions = [{"_index": index, "_source": {"id": i, "payload": format(i * 7919, "X").rjust(PAYLOAD_LENGTH, "0"), "amount": i / 4}}
               for i in ids]
    client = Elasticsearch(url, request_timeout=300)
    if barrier is not None:
        barrier.wait()
    start = time.monotonic()
    for ok, item in streaming_bulk(client, actions, chunk_size=1000, max_chunk_bytes=2 * 1024 * 1024):
        if not ok:
            raise RuntimeError(f"streaming_bulk: {item}")
    return start, time.monotonic()


def run_plain(url: str, index: str, n: int, clients: int = 1) -> float:
    """``streaming_bulk`` with ``clients`` clients, each in its own process over an equal share of the documents
    (one client: in this process); the time from the first start to the last end."""
    if clients == 1:
        start, end = _plain_client(url, index, range(n), None)
        return end - start
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # no fork of a process that ran a JVM gateway
    barrier = context.Manager().Barrier(clients)
    shares = [range(n * c // clients, n * (c + 1) // clients) for c in range(clients)]
    with context.Pool(clients) as pool:
        spans = pool.starmap(_plain_client, [(url, index, share, barrier) for share in shares])
    return max(end for _, end in spans) - min(start for start, _ in spans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=500_000)
    parser.add_argument("--writer-only", action="store_true", help="measure (c) and (b) only, without Spark")
    args = parser.parse_args()
    n = args.documents
    from kindling.local.elasticsearch import LocalElasticsearch

    if args.writer_only:
        with LocalElasticsearch() as server:
            elapsed = run_writer(server.url, "bench-writer", n)
            indexed = count(server.url, "bench-writer")
        print(f"kindling elasticsearch-7 writer alone (1 task, no Spark): {n / elapsed:,.0f} docs/s ({elapsed:.1f} s); "
              f"indexed {indexed}", flush=True)
        plain = run_reference(n, 1)
        if indexed != n:
            raise SystemExit(f"kindling indexed {indexed} documents, expected {n}")
        print(f"ratio={plain / elapsed:.2f}")
        return
    from kindling.config import Configuration
    from kindling.runtime.session import get_or_create_session

    spark = get_or_create_session(Configuration({"parallelism.default": TASKS, "kindling.log.level": "ERROR"}))
    try:
        with LocalElasticsearch() as server:
            run_kindling(spark, server.url, "bench-warmup", 20_000)  # untimed: Python workers, JIT
        with LocalElasticsearch() as server:  # every measured run indexes into a fresh server
            elapsed, batches = run_kindling(spark, server.url, "bench-kindling", n)
            indexed = count(server.url, "bench-kindling")
    finally:
        spark.stop()
    kindling_rate = n / batches if batches else n / elapsed
    print(f"kindling rate-micro-batch -> elasticsearch-7 sink (append, {TASKS} tasks): {kindling_rate:,.0f} docs/s in the "
          f"micro-batch ({batches:.1f} s); {n / elapsed:,.0f} docs/s with query start-up ({elapsed:.1f} s); "
          f"indexed {indexed}", flush=True)
    if indexed != n:
        raise SystemExit(f"kindling indexed {indexed} documents, expected {n}")
    best = max(n / run_reference(n, clients) for clients in (1, TASKS))
    print(f"ratio={kindling_rate / best:.2f}")


def run_reference(n: int, clients: int) -> float:
    """``streaming_bulk`` with ``clients`` clients into a fresh server; prints its rate, returns its time."""
    from kindling.local.elasticsearch import LocalElasticsearch

    with LocalElasticsearch() as server:
        plain = run_plain(server.url, "bench-plain", n, clients)
        indexed = count(server.url, "bench-plain")
    label = "1 client" if clients == 1 else f"{clients} clients in {clients} processes, as the sink's {TASKS} tasks"
    print(f"elasticsearch.helpers.streaming_bulk ({label}, chunk 1000): {n / plain:,.0f} docs/s ({plain:.1f} s); "
          f"indexed {indexed}", flush=True)
    if indexed != n:
        raise SystemExit(f"streaming_bulk indexed {indexed} documents, expected {n}")
    return plain


if __name__ == "__main__":
    main()
