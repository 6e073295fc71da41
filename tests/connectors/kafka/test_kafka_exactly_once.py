"""The exactly-once Kafka sink: one transaction per micro-batch, fenced by batch id, against a real broker.

The first tests drive the writer directly (no Spark): ``write()`` as an executor would, ``commit()``
as the driver would -- twice for one batch id, after a failure, after a zombie producer, with one
publisher and with two (``sink.parallelism``). The last one kills a running job
(``examples/kafka_copy.py``, two publishers) three times mid-stream and checks that a
``read_committed`` consumer of the output sees every input record exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from pyspark.sql.types import LongType, StringType, StructField, StructType

from kindling.connectors.kafka import publishers, transactions
from kindling.connectors.kafka.sink import KafkaCommitMessage, KafkaStreamWriter
from kindling.connectors.kafka.tail import TopicTail
from kindling.connectors.kafka.transactions import CommitFenceError, OutputCut, last_committed_batch

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = StructType([StructField("id", LongType()), StructField("payload", StringType())])


class TopicReader:
    """Every record of a topic as a consumer with the given isolation level sees it, polled incrementally."""

    def __init__(self, servers: str, topic: str, isolation: str = "read_committed") -> None:
        self.tail = TopicTail({"bootstrap.servers": servers, "isolation.level": isolation}, [topic])
        self.values: list[bytes] = []

    def poll(self, seconds: float = 0.5) -> int:
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            for message in self.tail.poll(remaining, max_messages=5000):
                if message.error() is None:
                    self.values.append(message.value())
        return len(self.values)

    def wait_for(self, count: int, timeout: float, alive=None) -> int:
        deadline = time.monotonic() + timeout
        while len(self.values) < count:
            assert time.monotonic() < deadline, f"only {len(self.values)} of {count} records within {timeout} s"
            if alive is not None:
                alive()
            self.poll(0.5)
        return len(self.values)

    def settles_on(self, ids) -> None:
        """Wait for as many records as ``ids``, give duplicates a second to show up, compare as a multiset."""
        expected = Counter(ids)
        self.wait_for(sum(expected.values()), timeout=30)
        self.poll(1.0)
        assert ids_of(self.values) == expected

    def close(self) -> None:
        self.tail.close()


def writer(kafka, topic: str, prefix: str, **options) -> KafkaStreamWriter:
    return KafkaStreamWriter({"properties.bootstrap.servers": kafka.bootstrap_servers, "topic": topic,
                              "format": "json", "sink.delivery-guarantee": "exactly-once",
                              "sink.transactional-id-prefix": prefix, **options}, SCHEMA)


def encoded(sink: KafkaStreamWriter, ids) -> list[KafkaCommitMessage]:
    """What two executor tasks return for these ids (nothing is produced by write())."""
    ids = list(ids)
    half = len(ids) // 2
    return [sink.write(iter([pa.RecordBatch.from_pydict({"id": part, "payload": [f"p{i}" for i in part]})]))
            for part in (ids[:half], ids[half:])]


def ids_of(values) -> Counter:
    return Counter(json.loads(v)["id"] for v in values)


def test_replayed_commit_publishes_once(kafka, topic):
    prefix = f"eo-{uuid.uuid4().hex[:8]}"
    sink = writer(kafka, topic, prefix)
    batch7 = encoded(sink, range(0, 100))
    assert [m.records for m in batch7] == [50, 50] and batch7[0].values.type == pa.binary()
    assert last_committed_batch(sink.config) is None
    reader = TopicReader(kafka.bootstrap_servers, topic)
    try:
        assert reader.poll(1.0) == 0  # write() produced nothing
        sink.commit(batch7, 7)
        sink.commit(batch7, 7)  # the driver crashed after publishing: Spark commits the batch again
        transactions._producers.clear()  # ... from a new driver process
        sink.commit(batch7, 7)
        assert last_committed_batch(sink.config) == 7
        sink.commit(encoded(sink, range(100, 150)), 8)
        reader.settles_on(range(150))
        # A batch id below the marker is not a replay: the prefix belongs to another job (or checkpoint).
        with pytest.raises(CommitFenceError, match="sink.transactional-id-prefix"):
            sink.commit(encoded(sink, range(900, 910)), 3)
        assert writer(kafka, topic, prefix).config.commit_group == f"{prefix}-commits"
        # Batches without records publish nothing and leave the marker alone.
        sink.commit(encoded(sink, []), 9)
        assert last_committed_batch(sink.config) == 8
        reader.poll(1.0)
        assert ids_of(reader.values) == Counter(range(150))
    finally:
        reader.close()


def test_parallel_publishers_complete_a_partly_published_batch_once(kafka, topic):
    """sink.parallelism = 2: the tasks' shares go to two transactional publishers (one a child process)."""
    prefix = f"eo-{uuid.uuid4().hex[:8]}"
    sink = writer(kafka, topic, prefix, **{"sink.parallelism": "2"})
    assert sink.config.publisher_ids(1) == (f"{prefix}-{topic}#1", f"{prefix}-commits#1")
    reader = TopicReader(kafka.bootstrap_servers, topic)
    try:
        batch0 = encoded(sink, range(0, 100))
        assert transactions.publish_batch(sink.config, batch0, 0) is True
        assert transactions.read_marker(sink.config, 0) == (0, 2)
        assert transactions.read_marker(sink.config, 1) == (0, 2)
        # The driver died after publisher 1 committed batch 1 but before publisher 0 did.
        batch1 = encoded(sink, range(100, 200))
        assert transactions.publish_shard(sink.config, 1, [batch1[1]], 1, 2) is True
        assert last_committed_batch(sink.config) == 0
        transactions._producers.clear()  # the restarted driver, with new publisher processes
        publishers.pool().close()
        assert transactions.publish_batch(sink.config, batch1, 1) is True  # publisher 1 skips its share
        assert transactions.publish_batch(sink.config, batch1, 1) is False  # a replay of a complete batch
        assert transactions.read_marker(sink.config, 1) == (1, 2)
        reader.settles_on(range(200))
        # The publisher count is fixed by the prefix's first commit: a later sink.parallelism is ignored.
        wider = writer(kafka, topic, prefix, **{"sink.parallelism": "3"})
        batch2 = [wider.write(iter([pa.RecordBatch.from_pydict({"id": [i], "payload": ["p"]})])) for i in (200, 201, 202)]
        assert transactions.publish_batch(wider.config, batch2, 2) is True
        assert transactions.read_marker(wider.config, 0) == (2, 2)
        assert transactions.read_marker(wider.config, 2) == (None, None)
        reader.settles_on(range(203))
    finally:
        reader.close()


def test_a_failing_publisher_fails_the_batch_and_leaves_it_unpublished(kafka, topic):
    prefix = f"eo-{uuid.uuid4().hex[:8]}"
    sink = writer(kafka, topic, prefix, **{"sink.parallelism": "2"})
    good = encoded(sink, range(10))[0]
    bad = KafkaCommitMessage(topic, 1, 0, values=pa.array([b'{"id": 1000}'], pa.binary()),
                             partitions=pa.array([99], pa.int32()))  # no such partition: publisher 1 fails
    with pytest.raises(RuntimeError, match="publisher 1"):
        transactions.publish_batch(sink.config, [good, bad], 0)
    assert last_committed_batch(sink.config) is None
    assert transactions.publish_batch(sink.config, [good, encoded(sink, range(10, 20))[1]], 0) is True
    reader = TopicReader(kafka.bootstrap_servers, topic)
    try:
        reader.settles_on(list(range(5)) + list(range(15, 20)))
    finally:
        reader.close()


def test_failed_and_zombie_transactions_stay_invisible(kafka, topic):
    prefix = f"eo-{uuid.uuid4().hex[:8]}"
    sink = writer(kafka, topic, prefix)
    sink.commit(encoded(sink, range(10)), 0)
    # A commit that fails mid-way (its last record goes to a partition that does not exist) is aborted.
    good = encoded(sink, range(10, 20))
    bad = KafkaCommitMessage(topic, 2, 0, values=pa.array([b'{"id": 1000}', b'{"id": 1001}'], pa.binary()),
                             partitions=pa.array([0, 99], pa.int32()))
    with pytest.raises(KafkaException):
        sink.commit(good + [bad], 1)
    assert last_committed_batch(sink.config) == 0
    # A killed driver's producer left a transaction open ("zombie") under the same transactional id.
    zombie = Producer({"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": sink.config.transactional_id})
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(topic, b'{"id": 2000}', partition=1)
    assert zombie.flush(30) == 0
    transactions._producers.clear()  # the restarted driver: its init_transactions fences the zombie
    sink.commit(good, 1)  # the same batch again, now successfully
    with pytest.raises(KafkaException):
        zombie.commit_transaction(10)
    committed = TopicReader(kafka.bootstrap_servers, topic)
    uncommitted = TopicReader(kafka.bootstrap_servers, topic, isolation="read_uncommitted")
    try:
        committed.wait_for(20, timeout=30)
        committed.poll(1.0)
        assert ids_of(committed.values) == Counter(range(20))
        # The aborted records are in the log (a read_uncommitted consumer sees them), just never committed.
        uncommitted.wait_for(21, timeout=30)
        assert 2000 in ids_of(uncommitted.values)
    finally:
        committed.close()
        uncommitted.close()


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_a_commit_run_by_another_driver_worker_does_not_fail_the_next_one(kafka, topic, parallelism):
    """Spark runs each commit in one of the driver's Python workers, not always the same one: a worker that
    initialises the transactional id fences the producers another worker keeps, whose next commit must
    start afresh rather than fail the job with 'fenced by a newer instance'."""
    prefix = f"eo-{uuid.uuid4().hex[:8]}"
    sink = writer(kafka, topic, prefix, **{"sink.parallelism": parallelism})
    assert transactions.publish_batch(sink.config, encoded(sink, range(0, 10)), 0) is True
    first_worker = dict(transactions._producers), publishers._pool
    transactions._producers.clear()
    publishers._pool = None  # the second worker: its own producers (and publisher processes)
    assert transactions.publish_batch(sink.config, encoded(sink, range(10, 20)), 1) is True
    second_pool = publishers._pool
    if parallelism == "1":
        transactions._producers.clear()
        transactions._producers.update(first_worker[0])  # back in the first worker, whose producer is fenced
    else:
        publishers._pool = first_worker[1]  # only the first worker's publisher process is fenced now
    reader = TopicReader(kafka.bootstrap_servers, topic)
    try:
        assert transactions.publish_batch(sink.config, encoded(sink, range(20, 30)), 2) is True
        assert last_committed_batch(sink.config) == 2
        reader.settles_on(range(30))
    finally:
        reader.close()
        if second_pool is not None:
            second_pool.close()


def test_the_committed_output_is_cut_at_the_last_complete_batch(kafka, topic):
    """What reconciliation reads of a running job: the end offsets below which lie exactly the complete batches."""
    prefix = f"eo-{uuid.uuid4().hex[:8]}"
    sink = writer(kafka, topic, prefix, **{"sink.parallelism": "2"})
    assert transactions.committed_cut(sink.config) == OutputCut(None, {0: 0, 1: 0, 2: 0, 3: 0})
    assert transactions.publish_batch(sink.config, encoded(sink, range(0, 100)), 0) is True
    cut = transactions.committed_cut(sink.config)
    assert cut.batch_id == 0 and sum(cut.ends.values()) >= 100
    # Publisher 1 committed its share of batch 1, publisher 0 not yet: a commit is under way, there is no cut.
    batch1 = encoded(sink, range(100, 200))
    assert transactions.publish_shard(sink.config, 1, [batch1[1]], 1, 2) is True
    assert transactions.committed_cut(sink.config) is None
    assert transactions.publish_batch(sink.config, batch1, 1) is True
    # Another producer's open transaction lies beyond the end offsets (read_committed stops before it).
    other = Producer({"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": f"{prefix}-other"})
    other.init_transactions(30)
    other.begin_transaction()
    for i in range(5):
        other.produce(topic, b'{"id": 5000}', partition=i % 4)
    assert other.flush(30) == 0
    cut = transactions.committed_cut(sink.config)
    assert cut.batch_id == 1
    reader = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": f"{prefix}-reader",
                       "isolation.level": "read_committed", "enable.partition.eof": True})
    try:
        reader.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p, end in cut.ends.items() if end])
        ids, done = [], set()
        while len(done) < sum(1 for end in cut.ends.values() if end):
            message = reader.poll(10)
            assert message is not None
            if message.error() is not None:
                done.add(message.partition())
            elif message.offset() < cut.ends[message.partition()]:
                ids.append(json.loads(message.value())["id"])
        assert sorted(ids) == list(range(200))
    finally:
        reader.close()
        other.abort_transaction(30)


def test_keys_and_fixed_partitions_are_encoded_on_executors(kafka, topic):
    sink = writer(kafka, topic, f"eo-{uuid.uuid4().hex[:8]}", **{"key.format": "json", "key.fields": "id",
                                                                  "sink.partitioner": "fixed"})
    [first, second] = encoded(sink, range(6))
    assert first.partitions.to_pylist() == [0, 0, 0]  # no TaskContext: task 0 -> partition 0
    assert [json.loads(k) for k in first.keys.to_pylist()] == [{"id": 0}, {"id": 1}, {"id": 2}]
    sink.commit([first], 0)
    reader = TopicReader(kafka.bootstrap_servers, topic)
    try:
        reader.wait_for(3, timeout=30)
        assert ids_of(reader.values) == Counter(range(3))
    finally:
        reader.close()


# ------------------------------------------------------------------------------------------------
# Kill and restart a running job
# ------------------------------------------------------------------------------------------------

RECORDS = 60_000  # an upper bound: the producer stops once the job was killed and restarted three times
RATE = 300  # records/s: the input keeps arriving across every kill


class InputProducer(threading.Thread):
    def __init__(self, servers: str, topic: str, count: int, rate: float) -> None:
        super().__init__(daemon=True)
        self.servers, self.topic, self.count, self.rate = servers, topic, count, rate
        self.sent = 0
        self.error = None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            producer = Producer({"bootstrap.servers": self.servers, "linger.ms": 5})
            start = time.monotonic()
            for i in range(self.count):
                if self._halt.is_set():
                    break
                lag = start + i / self.rate - time.monotonic()
                if lag > 0:
                    self._halt.wait(lag)
                producer.produce(self.topic, json.dumps({"id": i, "payload": f"record {i}"}).encode(), partition=i % 4)
                producer.poll(0)
                self.sent += 1
            assert producer.flush(30) == 0
        except BaseException as exc:  # reported by the test
            self.error = exc

    def stop(self) -> None:
        self._halt.set()
        self.join(30)


def _start_copy(kafka, source: str, sink: str, checkpoints: Path, prefix: str, log: Path) -> subprocess.Popen:
    command = [sys.executable, str(ROOT / "examples" / "kafka_copy.py"),
               "--bootstrap-servers", kafka.bootstrap_servers, "--input-topic", source, "--output-topic", sink,
               "--checkpoint-dir", str(checkpoints), "--transactional-id-prefix", prefix,
               "--sink-parallelism", "2"]  # two publishers: one in the driver's worker, one a child process
    # Its own process group: SIGKILL takes the whole driver (Python and its JVM) down at once.
    return subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def test_killed_job_writes_every_record_exactly_once(kafka, tmp_path):
    suffix = uuid.uuid4().hex[:8]
    source, sink = f"copy-in-{suffix}", f"copy-out-{suffix}"
    kafka.create_topic(source, partitions=4)
    kafka.create_topic(sink, partitions=2)
    log = tmp_path / "job.log"
    checkpoints = tmp_path / "checkpoints"
    prefix = f"copy-{suffix}"
    producer = InputProducer(kafka.bootstrap_servers, source, RECORDS, RATE)
    producer.start()
    reader = TopicReader(kafka.bootstrap_servers, sink)
    process = _start_copy(kafka, source, sink, checkpoints, prefix, log)

    def alive():
        assert process.poll() is None, f"the job ended (exit {process.returncode}):\n{log.read_text()[-3000:]}"

    kills = 0
    try:
        for _ in range(3):
            # Kill only after this run has committed something, while more input keeps arriving.
            reader.wait_for(len(reader.values) + 1, timeout=120, alive=alive)
            _kill(process)
            kills += 1
            process = _start_copy(kafka, source, sink, checkpoints, prefix, log)
        producer.stop()
        assert producer.error is None and 0 < producer.sent < RECORDS
        reader.wait_for(producer.sent, timeout=150, alive=alive)
        reader.poll(2.0)  # anything beyond what was sent would be a duplicate: give it a chance to show up
    finally:
        if process.poll() is None:
            _kill(process)
        producer.stop()
        reader.close()
    assert kills == 3
    sent = producer.sent
    counts = ids_of(reader.values)
    duplicates = {i: c for i, c in counts.items() if c > 1}
    missing = set(range(sent)) - set(counts)
    assert not duplicates and not missing, (len(duplicates), len(missing), log.read_text()[-3000:])
    assert len(reader.values) == sent


@pytest.fixture(autouse=True)
def _fresh_driver_producers():
    """Each test starts (and ends) without the transactional producers and publisher processes a driver keeps."""
    transactions._producers.clear()
    publishers.pool().close()
    yield
    transactions._producers.clear()
    publishers.pool().close()
