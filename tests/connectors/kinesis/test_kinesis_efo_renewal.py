"""Enhanced fan-out subscriptions are renewed without losing or repeating a record.

AWS ends every SubscribeToShard event stream after about 5 minutes, and the source subscribes again from the
last ContinuationSequenceNumber (:class:`ShardSubscription`); a dropped connection is subscribed again the same
way. kinesis-local holds a subscription open far longer than a test runs, so these tests read through
:class:`efo_proxy.SubscriptionProxy`: it relays kinesis-local unchanged and ends every subscription after its
first event, cleanly (END_STREAM, as AWS does) or by closing the connection in the middle of the next event.
Records are put before the subscriptions start and all the while they run, so they arrive across several
subscriptions of every shard (and, when connections drop, in the messages broken off).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Callable, Iterator, Optional

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from kindling.connectors.kinesis.efo import Http2Signer, ShardSubscription, consumer_arn
from kindling.connectors.kinesis.options import metadata_option, source_config

sys.path.insert(0, os.path.dirname(__file__))
from efo_proxy import SubscriptionProxy  # noqa: E402
from kinesis_helpers import Collector, new_stream, put, reader  # noqa: E402

pytestmark = pytest.mark.integration

RENEWALS = 3  # subscriptions the proxy ends per shard, at least
# Fast retries, and a budget smaller than the number of dropped connections: drops that follow delivered
# events must not add up to a failure.
RETRY = {"scan.shard.subscribetoshard.maxretries": "2", "scan.shard.subscribetoshard.backoff.base": "50",
         "scan.shard.subscribetoshard.backoff.max": "200"}
SCHEMA = StructType([StructField("id", LongType()), StructField("key", StringType()),
                     StructField("shard", StringType()), StructField("seq", StringType())])
META = {"kindling.table.metadata": metadata_option([("shard", "shard-id"), ("seq", "sequence-number")])}


def records(ids: range, keys: int = 8) -> list[tuple[str, bytes]]:
    return [(f"k{i % keys}", json.dumps({"id": i, "key": f"k{i % keys}"}).encode()) for i in ids]


@pytest.fixture
def start_proxy(kinesis) -> Iterator[Callable[..., SubscriptionProxy]]:
    """Starts subscription proxies in front of the session's kinesis-local; stops them after the test."""
    proxies: list[SubscriptionProxy] = []

    def start(messages: int, mode: str = "end") -> SubscriptionProxy:
        proxy = SubscriptionProxy(kinesis.endpoint, messages, mode).start()
        proxies.append(proxy)
        return proxy

    yield start
    for proxy in proxies:
        proxy.stop()


def until(condition: Callable[[], bool], proxy: SubscriptionProxy, step: Callable[[], None], what: str, timeout: float = 60) -> None:
    """Run ``step`` (which takes what the reader received, and raises when it failed) until ``condition`` holds,
    again whenever the proxy's counts move and at least every 50 ms; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        step()
        if condition():
            return
        assert time.monotonic() < deadline, (f"{what} within {timeout} s: subscriptions {dict(proxy.subscriptions)}, "
                                             f"cut {dict(proxy.cut)}, refused {dict(proxy.refused)}, proxy errors {proxy.errors}")
        proxy.wait_changed(0.05)


def shard_ids(client, stream: str) -> list[str]:
    return [shard["ShardId"] for shard in client.list_shards(StreamName=stream)["Shards"]]


class Producer(threading.Thread):
    """Puts ``batch`` records at a time, ``pause`` seconds apart, until stopped, so that records arrive while
    subscriptions run and end; ``stop`` returns where each went, in the order put."""

    def __init__(self, client, stream: str, first: int, batch: int, pause: float) -> None:
        super().__init__(name="kinesis-producer", daemon=True)
        self.client, self.stream, self.next, self.batch, self.pause = client, stream, first, batch, pause
        self.placed: list[tuple[str, str]] = []
        self.error: Optional[BaseException] = None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            while not self._halt.is_set():
                self.placed += put(self.client, self.stream, records(range(self.next, self.next + self.batch)))
                self.next += self.batch
                self._halt.wait(self.pause)
        except BaseException as exc:
            self.error = exc

    def stop(self) -> list[tuple[str, str]]:
        self._halt.set()
        self.join(60)
        if self.error is not None:
            raise self.error
        return self.placed


def test_dropped_shard_subscriptions_take_every_record_once_in_sequence_order(kinesis, start_proxy):
    """ShardSubscription alone (no Spark), two shards: each subscription's connection drops in the middle of its
    second event; with 'maxretries' 2, at least three drops in a row each follow an event. (Subscriptions that end
    cleanly, as AWS ends them after 5 minutes, are the Spark test's below.)"""
    mode = "drop"
    proxy = start_proxy(messages=1, mode=mode)
    stream = new_stream(kinesis, 2)
    client = kinesis.client()
    config = source_config({"stream": stream, "format": "json", "aws.region": "us-east-1", "aws.endpoint": proxy.endpoint,
                            "aws.credentials.provider": "BASIC", "aws.credentials.basic.accesskeyid": "kindling-local",
                            "aws.credentials.basic.secretkey": "kindling-local-secret", "scan.stream.recordpublisher": "EFO",
                            "scan.stream.efo.consumername": f"renewed-{mode}", **RETRY}, "kinesis")
    consumer = consumer_arn(config, client, "test")
    shards = shard_ids(client, stream)
    placed = put(client, stream, records(range(20)))  # before subscribing: the first subscriptions read them
    signer = Http2Signer(config.aws, proxy.endpoint, "test")
    subscriptions = {shard: ShardSubscription(signer, consumer, shard, "TRIM_HORIZON", config.subscribe_retry) for shard in shards}
    taken: dict[str, list[tuple[str, bytes, int]]] = {shard: [] for shard in shards}

    def take() -> None:
        for shard, subscription in subscriptions.items():
            received, ended, _ = subscription.take()
            assert not ended, f"open shard {shard} reported as ended"
            taken[shard].extend(received)

    producer = Producer(client, stream, first=len(placed), batch=4, pause=0.1)
    producer.start()
    try:
        until(lambda: all(proxy.cut[s] >= RENEWALS for s in shards), proxy, take, f"{RENEWALS} ended subscriptions of every shard")
        placed += producer.stop()
        until(lambda: sum(map(len, taken.values())) >= len(placed), proxy, take, f"all {len(placed)} records")
    finally:
        producer.stop()
        for subscription in subscriptions.values():
            subscription.close()

    for shard in shards:
        assert [r[0] for r in taken[shard]] == [seq for s, seq in placed if s == shard], f"shard {shard}: lost, repeated or reordered"
    assert sorted(json.loads(r[1])["id"] for rs in taken.values() for r in rs) == list(range(len(placed)))
    # Records were in the messages broken off mid-way: the next subscriptions delivered them (once, above).
    assert sum(proxy.withheld.values()) > 0
    assert not proxy.errors


def test_efo_source_reads_every_record_once_across_renewed_subscriptions(spark, kinesis, start_proxy, tmp_path):
    """The Spark source's EFO subscriptions, and its API calls (HTTP/1.1), all go through the proxy's endpoint."""
    proxy = start_proxy(messages=1)
    stream = new_stream(kinesis, 3)
    client = kinesis.client()
    shards = shard_ids(client, stream)
    placed = put(client, stream, records(range(100)))
    df = reader(spark, kinesis, stream, SCHEMA, **META, **RETRY, **{
        "aws.endpoint": proxy.endpoint, "scan.stream.recordpublisher": "EFO", "scan.stream.efo.consumername": "renewed",
        "scan.shard.getrecords.intervalmillis": "20"})
    collector = Collector(df, str(tmp_path / "cp"))
    producer = Producer(client, stream, first=len(placed), batch=10, pause=0.25)
    producer.start()
    try:
        until(lambda: all(proxy.cut[s] >= RENEWALS for s in shards), proxy, collector.check, f"{RENEWALS} ended subscriptions of every shard")
        placed += producer.stop()
    finally:
        producer.stop()
    collector.wait_for(len(placed), timeout=60)
    rows = collector.settle()

    assert sorted(r["id"] for r in rows) == list(range(len(placed)))
    assert [(r["shard"], r["seq"]) for r in sorted(rows, key=lambda r: r["id"])] == placed
    by_key: dict[str, list[int]] = {}
    for row in rows:  # in micro-batch order, and within a batch in each shard's order
        by_key.setdefault(row["key"], []).append(row["id"])
    assert all(ids == sorted(ids) for ids in by_key.values())
    assert not proxy.errors
