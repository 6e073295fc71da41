"""Exactly-once publishing for the Kafka sink: Kafka transactions per micro-batch, fenced by batch id.

Executors cannot keep a Kafka transaction open until the driver decides, and librdkafka cannot resume
another process's transaction, so in ``exactly-once`` mode the executors only *encode* their rows
(``write()`` returns the (key, value, partition) columns in its commit message) and the driver's
``commit(messages, batch_id)`` publishes them.

With ``sink.parallelism`` = 1 (the default) one publisher does it all:

1. a transactional producer with ``transactional.id = <sink.transactional-id-prefix>-<topic>``
   (stable across restarts) runs ``init_transactions``: the producer of a killed driver is fenced
   and its open transaction aborted (or, if it was already committing, completed);
2. the fence: the sink-owned consumer group ``<prefix>-commits`` has a committed offset on
   (output topic, partition 0) -- the *marker* -- equal to ``last committed batch id + 1`` (its
   metadata says ``kindling-batch=<id>;publishers=<n>`` for people reading it). Kafka does not check
   that a committed offset exists in the log, so the marker costs no records. If ``batch_id`` is
   already committed, the commit is a replay of a batch whose driver crashed after publishing it: skip;
3. ``begin_transaction``, produce every record, ``send_offsets_to_transaction`` with the marker for
   ``batch_id``, ``commit_transaction``: records and marker become visible together or not at all.
   Any failure aborts the transaction and raises (Spark fails the batch; on restart it is replayed).

With ``sink.parallelism`` = n > 1, Flink's one-transactional-producer-per-subtask: the tasks' messages
are dealt to n publishers by Spark partition (``partition % n``; a replayed batch has the same
partitions, so each publisher gets the same records again). Publisher 0 runs in the driver's worker,
publishers 1..n-1 in child processes (:mod:`kindling.connectors.kafka.publishers`); publisher ``k``
has its own transactional id (``<prefix>-<topic>#k``) and marker group (``<prefix>-commits#k``) and
skips a batch its marker already holds. Publisher 0 commits *last*, after every other publisher
committed, so its marker at ``batch_id + 1`` means the whole batch is published. A batch's records
become visible publisher by publisher within the commit rather than all at once; a crash between two
publishers' commits is completed by the replay without duplicates. The number of publishers is fixed
for a prefix by its first commit (publisher 0's marker records it): a different ``sink.parallelism``
later is ignored with a warning, since dealing a replayed batch differently could publish records twice.

A batch id *below* the marker cannot be a replay (Spark commits batches in order and replays at most
the last one), so it means that the prefix was used by another job or an older checkpoint: the
commit fails with an error naming the option rather than silently dropping the batch. (A new
checkpoint whose first batch id equals the old marker cannot be told apart: give every job, and a
job restarted from scratch, its own prefix -- Flink asks the same.)

Batches without records publish nothing (no transaction, marker unchanged).
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from kindling.connectors.kafka.options import SinkConfig

MARKER_PARTITION = 0
INIT_TIMEOUT_S = 60.0
COMMIT_TIMEOUT_S = 300.0
METADATA_PREFIX = "kindling-batch="
_PUBLISHERS = re.compile(r";publishers=(\d+)")

log = logging.getLogger(__name__)

# Producers kept per transactional id while the process lives (init_transactions once).
_producers: dict[tuple[str, str], object] = {}
_lock = threading.Lock()


class CommitFenceError(RuntimeError):
    """The marker is ahead of this batch: the transactional id prefix belongs to another job/checkpoint."""


class ProducerFencedError(RuntimeError):
    """A producer initialised later with the same transactional id fenced this one (raised for child publishers)."""


def is_fenced(error: BaseException) -> bool:
    """True if ``error`` says that a newer producer with the same transactional id fenced the one that raised it."""
    from confluent_kafka import KafkaError, KafkaException

    if isinstance(error, ProducerFencedError):
        return True
    if not isinstance(error, KafkaException) or not error.args or not isinstance(error.args[0], KafkaError):
        return False
    return error.args[0].code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH)


def read_marker(config: SinkConfig, shard: int = 0, timeout: float = 30.0) -> tuple[Optional[int], Optional[int]]:
    """(last batch id committed by publisher ``shard``, the publisher count recorded with it), or (None, None)."""
    from confluent_kafka import Consumer, TopicPartition

    group = config.publisher_ids(shard)[1]
    consumer = Consumer(_reader_config(config, group))
    try:
        [marker] = consumer.committed([TopicPartition(config.topic, MARKER_PARTITION)], timeout=timeout)
        if marker.error is not None:
            raise RuntimeError(f"kafka sink: cannot read the batch marker of group {group!r}: {marker.error}")
        if marker.offset < 1:
            return None, None
        recorded = _PUBLISHERS.search(marker.metadata or "")
        return marker.offset - 1, int(recorded.group(1)) if recorded else 1
    finally:
        consumer.close()


def _reader_config(config: SinkConfig, group: str) -> dict[str, str]:
    """A consumer of the sink's markers and end offsets: the connection's security settings, read_committed."""
    conf = {k: v for k, v in config.client_properties.items() if k.startswith(("security.", "sasl.", "ssl."))}
    conf.update({"bootstrap.servers": config.bootstrap_servers, "group.id": group, "enable.auto.commit": "false",
                 "isolation.level": "read_committed"})
    return conf


def last_committed_batch(config: SinkConfig, timeout: float = 30.0) -> Optional[int]:
    """The last batch id this sink committed completely (publisher 0's marker - 1), or None if none yet."""
    return read_marker(config, 0, timeout)[0]


@dataclass(frozen=True)
class OutputCut:
    """The sink's committed output at one moment: the last micro-batch it committed completely (None: none yet) and
    the topic's ``read_committed`` end offset per partition, below which lie exactly that batch and the ones before."""

    batch_id: Optional[int]
    ends: dict[int, int]


def committed_cut(config: SinkConfig, timeout: float = 30.0) -> Optional[OutputCut]:
    """The sink's output cut at its last complete commit while the job may keep committing; None if a commit ran meanwhile.

    The end offsets are read between two readings of every publisher's marker: if no marker moved, no transaction
    committed in between (markers and records commit together), so what lies below the ends is the output of the
    batches up to publisher 0's marker, and open transactions lie beyond them (a ``read_committed`` end offset stops at
    the first open one). A publisher ahead of publisher 0 is in the middle of a batch's commit: None as well.
    """
    before = _markers(config, timeout)
    if before is None:
        return None
    ends = _end_offsets(config, timeout)
    if _markers(config, timeout) != before:
        return None
    return OutputCut(before[0], ends)


def _markers(config: SinkConfig, timeout: float) -> Optional[tuple[Optional[int], ...]]:
    """Every publisher's last committed batch id (publisher 0 first), or None if one is ahead of publisher 0."""
    first, recorded = read_marker(config, 0, timeout)
    markers = (first,) + tuple(read_marker(config, k, timeout)[0] for k in range(1, recorded or config.publishers))
    # A publisher whose share of a batch was empty did not commit it: it may lag, but never lead publisher 0.
    if any(m is not None and (first is None or m > first) for m in markers[1:]):
        return None
    return markers


def _end_offsets(config: SinkConfig, timeout: float) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(_reader_config(config, config.publisher_ids(0)[1]))
    try:
        partitions = consumer.list_topics(config.topic, timeout=timeout).topics[config.topic].partitions
        return {p: consumer.get_watermark_offsets(TopicPartition(config.topic, p), timeout=timeout, cached=False)[1]
                for p in sorted(partitions)}
    finally:
        consumer.close()


def _producer(config: SinkConfig, shard: int):
    from confluent_kafka import Producer

    key = (config.bootstrap_servers, config.publisher_ids(shard)[0])
    with _lock:
        producer = _producers.get(key)
        if producer is None:
            producer = Producer(config.transactional_producer_config(shard))
            producer.init_transactions(INIT_TIMEOUT_S)
            _producers[key] = producer
        return producer


def _forget(config: SinkConfig, shard: int) -> None:
    with _lock:
        _producers.pop((config.bootstrap_servers, config.publisher_ids(shard)[0]), None)


def _check_fence(config: SinkConfig, batch_id: int, last: Optional[int]) -> bool:
    """True if ``batch_id`` is already committed (a replay: skip); raises if the marker is past it."""
    if last is None or batch_id > last:
        return False
    if batch_id < last:
        raise CommitFenceError(
            f"kafka sink: micro-batch {batch_id} of topic {config.topic!r} is older than batch {last}, "
            f"already committed with sink.transactional-id-prefix {config.transactional_id_prefix!r}: "
            "that prefix was used by another job or an earlier checkpoint. Give this job its own "
            "'sink.transactional-id-prefix'."
        )
    return True


def publish_shard(config: SinkConfig, shard: int, messages: Sequence, batch_id: int, publishers: int,
                  before_commit: Optional[Callable[[], None]] = None, fenced: bool = False) -> bool:
    """Publish one publisher's share of ``batch_id`` in its own transaction, fenced by its own marker.

    ``before_commit`` runs inside the open transaction just before it commits (publisher 0 waits there for
    the others); ``fenced``: the caller already checked the marker after creating the producer. Returns
    False if this share was already committed (skipped), True if published now.
    """
    from confluent_kafka import Consumer, TopicPartition

    producer = _producer(config, shard)  # fences (and finishes) the transaction of a previous driver first
    try:
        if not fenced and _check_fence(config, batch_id, read_marker(config, shard)[0]):
            return False  # a replay of the last batch after the driver crashed while committing it
        producer.begin_transaction()
        for message in messages:
            _produce_all(producer, config.topic, message)
        group = Consumer({"bootstrap.servers": config.bootstrap_servers, "group.id": config.publisher_ids(shard)[1],
                          "enable.auto.commit": "false"})
        try:
            marker = TopicPartition(config.topic, MARKER_PARTITION, batch_id + 1,
                                    metadata=f"{METADATA_PREFIX}{batch_id};publishers={publishers}")
            producer.send_offsets_to_transaction([marker], group.consumer_group_metadata(), COMMIT_TIMEOUT_S)
        finally:
            group.close()
        if before_commit is not None:
            before_commit()
        producer.commit_transaction(COMMIT_TIMEOUT_S)
        return True
    except BaseException:
        try:
            producer.abort_transaction(INIT_TIMEOUT_S)
        except Exception:  # not in a transaction, or fenced: the broker aborts it anyway
            pass
        _forget(config, shard)
        raise


def publish_batch(config: SinkConfig, messages: Sequence, batch_id: int) -> bool:
    """Publish the encoded records of ``messages`` (one per Spark partition, in partition order) for ``batch_id``.

    Returns False if the batch was already committed (skipped), True if it was published now.

    Spark runs each commit in one of the driver's Python workers, not always the same one, and each worker
    keeps its producers: a worker that initialised the transactional ids fenced the producers of the others.
    A commit whose kept producer turns out fenced is therefore retried once with new producers, which fence
    the other worker's in turn and re-read the marker (so a batch committed meanwhile is skipped, not repeated).
    """
    try:
        return _publish_batch(config, messages, batch_id)
    except Exception as error:
        if not is_fenced(error):
            raise
        log.info("kafka sink: the producers kept for topic %r were fenced by another process with the same "
                 "transactional ids; publishing batch %d with new ones", config.topic, batch_id)
    return _publish_batch(config, messages, batch_id)


def _publish_batch(config: SinkConfig, messages: Sequence, batch_id: int) -> bool:
    shares = [(i, m) for i, m in enumerate(messages)
              if m is not None and getattr(m, "values", None) is not None and len(m.values)]
    if not shares:
        return False
    _producer(config, 0)  # fence a previous driver's producer first: a commit it had begun completes now
    last, recorded = read_marker(config, 0)
    if _check_fence(config, batch_id, last):
        return False
    publishers = recorded or config.publishers
    if recorded and recorded != config.publishers:
        log.warning("kafka sink: 'sink.parallelism' = %d is ignored for topic %r: transactional-id prefix %r publishes "
                    "with %d publishers since its first commit (use a new prefix to change it)",
                    config.publishers, config.topic, config.transactional_id_prefix, recorded)
    dealt = [[m for i, m in shares if i % publishers == k] for k in range(publishers)]
    if publishers == 1:
        return publish_shard(config, 0, dealt[0], batch_id, 1, fenced=True)
    from kindling.connectors.kafka.publishers import pool

    pending = pool().submit(config, {k: dealt[k] for k in range(1, publishers) if dealt[k]}, batch_id, publishers)
    try:
        # Publisher 0 commits last: its marker then says that every share of the batch is published.
        return publish_shard(config, 0, dealt[0], batch_id, publishers, before_commit=pending.wait, fenced=True)
    finally:
        pending.wait(raise_errors=False)


def _produce_all(producer, topic: str, message) -> None:
    """Produce one task's encoded records (the hot loop of a commit: no per-record allocations)."""
    produce = producer.produce
    values = message.values.to_pylist()
    keys = message.keys.to_pylist() if message.keys is not None else None
    partitions = message.partitions.to_pylist() if message.partitions is not None else None
    if keys is None and partitions is None:
        for value in values:
            try:
                produce(topic, value)
            except BufferError:  # the local queue is full: let the client send, then retry
                _retry(producer, topic, value, {})
        return
    for i, value in enumerate(values):
        kwargs = {}
        if keys is not None:
            kwargs["key"] = keys[i]
        if partitions is not None:
            kwargs["partition"] = partitions[i]
        try:
            produce(topic, value, **kwargs)
        except BufferError:
            _retry(producer, topic, value, kwargs)


def _retry(producer, topic: str, value, kwargs: dict) -> None:
    while True:
        producer.poll(0.05)
        try:
            producer.produce(topic, value, **kwargs)
            return
        except BufferError:
            continue
