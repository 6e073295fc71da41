"""Exactly-once publishing for the Kafka sink: one Kafka transaction per micro-batch, fenced by batch id.

Executors cannot keep a Kafka transaction open until the driver decides, and librdkafka cannot resume
another process's transaction, so in ``exactly-once`` mode the executors only *encode* their rows
(``write()`` returns the (key, value, partition) columns in its commit message) and the driver's
``commit(messages, batch_id)`` publishes them:

1. a transactional producer with ``transactional.id = <sink.transactional-id-prefix>-<topic>``
   (stable across restarts) runs ``init_transactions``: the producer of a killed driver is fenced
   and its open transaction aborted (or, if it was already committing, completed);
2. the fence: the sink-owned consumer group ``<prefix>-commits`` has a committed offset on
   (output topic, partition 0) -- the *marker* -- equal to ``last committed batch id + 1`` (its
   metadata string says ``kindling-batch=<id>`` for people reading it). Kafka does not check that a
   committed offset exists in the log, so the marker costs no records. If ``batch_id`` is already
   committed, the commit is a replay of a batch whose driver crashed after publishing it: skip;
3. ``begin_transaction``, produce every record, ``send_offsets_to_transaction`` with the marker for
   ``batch_id``, ``commit_transaction``: records and marker become visible together or not at all.
   Any failure aborts the transaction and raises (Spark fails the batch; on restart it is replayed).

A batch id *below* the marker cannot be a replay (Spark commits batches in order and replays at most
the last one), so it means that the prefix was used by another job or an older checkpoint: the
commit fails with an error naming the option rather than silently dropping the batch. (A new
checkpoint whose first batch id equals the old marker cannot be told apart: give every job, and a
job restarted from scratch, its own prefix -- Flink asks the same.)

Batches without records publish nothing (no transaction, marker unchanged).
"""

from __future__ import annotations

import threading
from typing import Optional, Sequence

from kindling.connectors.kafka.options import SinkConfig

MARKER_PARTITION = 0
INIT_TIMEOUT_S = 60.0
COMMIT_TIMEOUT_S = 300.0
METADATA_PREFIX = "kindling-batch="

# Producers kept per transactional id while the driver's Python worker lives (init_transactions once).
_producers: dict[tuple[str, str], object] = {}
_lock = threading.Lock()


class CommitFenceError(RuntimeError):
    """The marker is ahead of this batch: the transactional id prefix belongs to another job/checkpoint."""


def last_committed_batch(config: SinkConfig, timeout: float = 30.0) -> Optional[int]:
    """The last batch id committed by this sink (marker offset - 1), or None if none yet."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": config.bootstrap_servers, "group.id": config.commit_group,
                         "enable.auto.commit": "false", "isolation.level": "read_committed"})
    try:
        [marker] = consumer.committed([TopicPartition(config.topic, MARKER_PARTITION)], timeout=timeout)
        if marker.error is not None:
            raise RuntimeError(f"kafka sink: cannot read the batch marker of group {config.commit_group!r}: {marker.error}")
        return marker.offset - 1 if marker.offset >= 1 else None
    finally:
        consumer.close()


def _producer(config: SinkConfig):
    from confluent_kafka import Producer

    key = (config.bootstrap_servers, config.transactional_id)
    with _lock:
        producer = _producers.get(key)
        if producer is None:
            producer = Producer(config.transactional_producer_config())
            producer.init_transactions(INIT_TIMEOUT_S)
            _producers[key] = producer
        return producer


def _forget(config: SinkConfig) -> None:
    with _lock:
        _producers.pop((config.bootstrap_servers, config.transactional_id), None)


def publish_batch(config: SinkConfig, messages: Sequence, batch_id: int) -> bool:
    """Publish the encoded records of ``messages`` for ``batch_id`` in one transaction.

    Returns False if the batch was already committed (skipped), True if it was published now.
    """
    from confluent_kafka import Consumer, TopicPartition

    columns = [m for m in messages if m is not None and getattr(m, "values", None) is not None and len(m.values)]
    if not columns:
        return False
    producer = _producer(config)  # fences (and finishes) the transaction of a previous driver first
    try:
        last = last_committed_batch(config)
        if last is not None and batch_id <= last:
            if batch_id < last:
                raise CommitFenceError(
                    f"kafka sink: micro-batch {batch_id} of topic {config.topic!r} is older than batch {last}, "
                    f"already committed with sink.transactional-id-prefix {config.transactional_id_prefix!r}: "
                    "that prefix was used by another job or an earlier checkpoint. Give this job its own "
                    "'sink.transactional-id-prefix'."
                )
            return False  # a replay of the last batch after the driver crashed while committing it
        producer.begin_transaction()
        topic = config.topic
        for message in columns:
            _produce_all(producer, topic, message)
        group = Consumer({"bootstrap.servers": config.bootstrap_servers, "group.id": config.commit_group,
                          "enable.auto.commit": "false"})
        try:
            marker = TopicPartition(topic, MARKER_PARTITION, batch_id + 1, metadata=f"{METADATA_PREFIX}{batch_id}")
            producer.send_offsets_to_transaction([marker], group.consumer_group_metadata(), COMMIT_TIMEOUT_S)
        finally:
            group.close()
        producer.commit_transaction(COMMIT_TIMEOUT_S)
        return True
    except BaseException:
        try:
            producer.abort_transaction(INIT_TIMEOUT_S)
        except Exception:  # not in a transaction, or fenced: the broker aborts it anyway
            pass
        _forget(config)
        raise


def _produce_all(producer, topic: str, message) -> None:
    """Produce one task's encoded records (the hot loop of a commit: no per-record allocations)."""
    produce, poll = producer.produce, producer.poll
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
